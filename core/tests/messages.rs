//! Error messages name the offending field, so a user can fix a document without
//! guessing. (The vectors pin the codes; these tests pin the paths in the messages.)

mod common;

use common::{doc, Doc};
use serde_json::{json, Value};
use shardroute::Router;

/// The message of a document that must be rejected, loaded from its text.
fn message(document: Doc) -> String {
    let err = Router::from_json(&document.text()).expect_err("document must be rejected");
    err.to_string()
}

#[test]
fn weight_errors_name_the_node() {
    for weight in [json!(0), json!(-1), json!("2"), json!(1e7), Value::Null] {
        let document =
            doc(&["a", "b", "c", "d"]).strategy(json!({"type": "ring"})).node_field(3, "weight", weight.clone());
        if weight.is_null() {
            assert!(Router::from_json(&document.text()).is_ok(), "null means the default weight");
            continue;
        }
        let text = message(document);
        assert!(text.starts_with("invalid_topology: nodes[3].weight: must be a finite number > 0"), "{text}");
    }
}

#[test]
fn unknown_fields_are_named_with_their_path() {
    let text = message(doc(json!([{"id": "a", "wieght": 2}])).strategy(json!({"type": "jump"})));
    assert!(
        text.starts_with(
            "invalid_topology: nodes[0].wieght: unknown field; expected one of: id, address, weight, zone, state"
        ),
        "{text}"
    );
    let text = message(doc(&["a"]).strategy(json!({"type": "ring", "points": 3})));
    assert!(text.starts_with("invalid_topology: strategy.points: unknown field"), "{text}");
    assert!(!text.contains("did you mean"), "too far from points_per_node for a hint: {text}");
}

#[test]
fn close_names_get_a_hint() {
    let text = message(doc(json!([{"id": "a", "wieght": 2}])).strategy(json!({"type": "jump"})));
    assert!(text.ends_with("state; did you mean `weight`?"), "{text}");
    let text = message(doc(&["a"]).strategy(json!({"type": "ring", "point_per_node": 3})));
    assert!(text.starts_with("invalid_topology: strategy.point_per_node: unknown field; expected one of:"), "{text}");
    assert!(text.ends_with("; did you mean `points_per_node`?"), "{text}");
    let text = message(doc(&["a"]).strategy(json!({"type": "rendevous"})));
    assert!(
        text.starts_with(r#"invalid_topology: strategy.type: unknown strategy "rendevous"; expected one of modulo"#),
        "{text}"
    );
    assert!(text.ends_with("; did you mean `rendezvous`?"), "{text}");
    let text = message(doc(&["a"]).strategy(json!({"type": "consistent"})));
    assert!(!text.contains("did you mean"), "{text}");
    let text = message(doc(&["a"]).strategy(json!({"type": "jump"})).with("hashng", json!({})));
    assert!(text.ends_with("; did you mean `hashing`?"), "{text}");
}

#[test]
fn duplicate_ids_name_both_entries() {
    let text = message(doc(&["a", "b", "a"]).strategy(json!({"type": "jump"})));
    assert_eq!(text, r#"invalid_topology: nodes[2].id: duplicate node id "a" (also nodes[0])"#);
}

#[test]
fn tables_naming_missing_nodes_say_where() {
    let text = message(doc(&["a"]).strategy(json!({"type": "vbucket", "vbuckets": 2, "map": [["a"], ["a", "ghost"]]})));
    assert_eq!(text, r#"invalid_topology: strategy.map[1][1]: names node "ghost", which is not in nodes"#);
}

#[test]
fn codes_for_empty_and_oversized() {
    let err = Router::from_json(&doc(0).strategy(json!({"type": "jump"})).text()).unwrap_err();
    assert_eq!(err.code(), "no_nodes");
    let err =
        Router::from_json(&doc(&["a"]).strategy(json!({"type": "vbucket", "vbuckets": 2000000})).text()).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    assert!(err.message().starts_with("strategy.vbuckets: 2000000 exceeds the limit of 1048576"), "{err}");
    let huge = " ".repeat(shardroute::limits::MAX_DOCUMENT_BYTES as usize + 1);
    assert_eq!(Router::from_json(&huge).unwrap_err().code(), "limit_exceeded");
}

#[test]
fn epoch_accepts_numbers_and_decimal_strings_and_writes_big_ones_as_strings() {
    let load = |epoch: Value| Router::from_json(&doc(&["a"]).strategy(json!({"type": "jump"})).epoch(epoch).text());
    assert_eq!(load(json!(7)).unwrap().epoch(), 7);
    assert_eq!(load(json!("7")).unwrap().epoch(), 7);
    let max = load(json!(18446744073709551615u64)).unwrap();
    assert_eq!(max.epoch(), u64::MAX);
    assert!(max.to_json().contains(r#""epoch":"18446744073709551615""#), "{}", max.to_json());
    let safe = load(json!(9007199254740991u64)).unwrap();
    assert!(safe.to_json().contains(r#""epoch":9007199254740991"#));
    let text = load(json!("0x10")).unwrap_err().to_string();
    assert!(text.starts_with("invalid_topology: epoch: expected an integer"), "{text}");
}

#[test]
fn overlapping_slot_ranges_with_one_start_name_the_later_range() {
    // Two ranges starting at the same slot: the message names the later one in document
    // order whatever sort algorithm std uses (the WASM build's std sorts differently).
    let slots = json!([{"start": 0, "end": 100, "nodes": ["a"]}, {"start": 0, "end": 16383, "nodes": ["b"]}]);
    assert_eq!(
        message(doc(&["a", "b"]).strategy(json!({"type": "redis_cluster", "slots": slots}))),
        "invalid_topology: strategy.slots[1]: slots 0..=16383 overlap another range (slot 0 is listed twice)"
    );
}
