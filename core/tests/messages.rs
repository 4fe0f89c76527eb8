//! Error messages name the offending field, so a user can fix a document without
//! guessing. (The vectors pin the codes; these tests pin the paths in the messages.)

use shardroute::Router;

fn message(doc: &str) -> String {
    let err = Router::from_json(doc).expect_err("document must be rejected");
    err.to_string()
}

const NODES: &str = r#"[{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d", "weight": WEIGHT}]"#;

fn with_weight(weight: &str) -> String {
    format!(
        r#"{{"format": "shardroute/1", "epoch": 1, "nodes": {}, "strategy": {{"type": "ring"}}}}"#,
        NODES.replace("WEIGHT", weight)
    )
}

#[test]
fn weight_errors_name_the_node() {
    for weight in ["0", "-1", "\"2\"", "1e7", "null"] {
        let doc = with_weight(weight);
        if weight == "null" {
            assert!(Router::from_json(&doc).is_ok(), "null means the default weight");
            continue;
        }
        let text = message(&doc);
        assert!(text.starts_with("invalid_topology: nodes[3].weight: must be a finite number > 0"), "{text}");
    }
}

#[test]
fn unknown_fields_are_named_with_their_path() {
    let text = message(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a", "wieght": 2}], "strategy": {"type": "jump"}}"#,
    );
    assert!(
        text.starts_with(
            "invalid_topology: nodes[0].wieght: unknown field; expected one of: id, address, weight, zone, state"
        ),
        "{text}"
    );
    let text = message(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "ring", "points": 3}}"#,
    );
    assert!(text.starts_with("invalid_topology: strategy.points: unknown field"), "{text}");
}

#[test]
fn duplicate_ids_name_both_entries() {
    let text = message(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "a"}], "strategy": {"type": "jump"}}"#,
    );
    assert_eq!(text, r#"invalid_topology: nodes[2].id: duplicate node id "a" (also nodes[0])"#);
}

#[test]
fn tables_naming_missing_nodes_say_where() {
    let text = message(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}],
            "strategy": {"type": "vbucket", "vbuckets": 2, "map": [["a"], ["a", "ghost"]]}}"#,
    );
    assert_eq!(text, r#"invalid_topology: strategy.map[1][1]: names node "ghost", which is not in nodes"#);
}

#[test]
fn codes_for_empty_and_oversized() {
    let err = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1, "nodes": [], "strategy": {"type": "jump"}}"#)
        .unwrap_err();
    assert_eq!(err.code(), "no_nodes");
    let err = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "vbucket", "vbuckets": 2000000}}"#).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    assert!(err.message().starts_with("strategy.vbuckets: 2000000 exceeds the limit of 1048576"), "{err}");
    let huge = " ".repeat(shardroute::limits::MAX_DOCUMENT_BYTES as usize + 1);
    assert_eq!(Router::from_json(&huge).unwrap_err().code(), "limit_exceeded");
}

#[test]
fn epoch_accepts_numbers_and_decimal_strings_and_writes_big_ones_as_strings() {
    let doc = |epoch: &str| {
        format!(
            r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{{"id": "a"}}], "strategy": {{"type": "jump"}}}}"#
        )
    };
    assert_eq!(Router::from_json(&doc("7")).unwrap().epoch(), 7);
    assert_eq!(Router::from_json(&doc("\"7\"")).unwrap().epoch(), 7);
    let max = Router::from_json(&doc("18446744073709551615")).unwrap();
    assert_eq!(max.epoch(), u64::MAX);
    assert!(max.to_json().contains(r#""epoch":"18446744073709551615""#), "{}", max.to_json());
    let safe = Router::from_json(&doc("9007199254740991")).unwrap();
    assert!(safe.to_json().contains(r#""epoch":9007199254740991"#));
    let text = Router::from_json(&doc("\"0x10\"")).unwrap_err().to_string();
    assert!(text.starts_with("invalid_topology: epoch: expected an integer"), "{text}");
}

#[test]
fn overlapping_slot_ranges_with_one_start_name_the_later_range() {
    // Two ranges starting at the same slot: the message names the later one in document
    // order whatever sort algorithm std uses (the WASM build's std sorts differently).
    let doc = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}],
        "strategy": {"type": "redis_cluster", "slots": [
            {"start": 0, "end": 100, "nodes": ["a"]}, {"start": 0, "end": 16383, "nodes": ["b"]}]}}"#;
    assert_eq!(
        message(doc),
        "invalid_topology: strategy.slots[1]: slots 0..=16383 overlap another range (slot 0 is listed twice)"
    );
}
