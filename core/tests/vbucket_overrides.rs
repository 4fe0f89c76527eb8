//! Vbucket per-key overrides: listed keys go to their vbucket, nothing else moves, and
//! documents without overrides keep their exact canonical form.

mod common;

use common::{doc, key_object, Doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::{ops, OwnedKey, Router, Topology};

/// `count` vbuckets over a, b, c and d: the round-robin map with one replica, or `map`.
fn vbucket_doc(count: u32, map: Option<Value>) -> Doc {
    let strategy = match map {
        Some(map) => json!({"type": "vbucket", "vbuckets": count, "map": map}),
        None => json!({"type": "vbucket", "vbuckets": count, "replicas": 1}),
    };
    doc(&["a", "b", "c", "d"]).strategy(strategy)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Exactly the listed keys move: each to its override vbucket (route, node and the
    /// vbucket's chain as replicas); every other key keeps `hash % V`.
    #[test]
    fn overrides_move_exactly_the_listed_keys(
        vbuckets in 1u32..40,
        listed in proptest::collection::hash_map(
            prop_oneof![proptest::collection::vec(any::<u8>(), 0..4).prop_map(OwnedKey::Bytes), (0u64..30).prop_map(OwnedKey::U64)],
            any::<u32>(),
            0..20,
        ),
        probes in proptest::collection::vec(prop_oneof![proptest::collection::vec(any::<u8>(), 0..4).prop_map(OwnedKey::Bytes), (0u64..30).prop_map(OwnedKey::U64)], 1..60),
    ) {
        let listed: Vec<(OwnedKey, u32)> = listed.into_iter().map(|(key, v)| (key, v % vbuckets)).collect();
        let rows: Vec<Value> = listed.iter().map(|(key, v)| json!({"key": key_object(key), "vbucket": v})).collect();
        let plain = vbucket_doc(vbuckets, None).router();
        let with = vbucket_doc(vbuckets, None).strategy_field("overrides", json!(rows)).router();
        for key in listed.iter().map(|(key, _)| key.clone()).chain(probes) {
            let key = key.as_key();
            match listed.iter().find(|(other, _)| other.as_key() == key) {
                Some((_, vbucket)) => {
                    prop_assert_eq!(with.route(key).unwrap(), *vbucket);
                    // The replicas are the chain of the override vbucket (round-robin, 1 replica).
                    let chain = [["a", "b", "c", "d"][(*vbucket % 4) as usize], ["a", "b", "c", "d"][((*vbucket + 1) % 4) as usize]];
                    prop_assert_eq!(with.replicas(key, 2).unwrap(), chain.to_vec());
                    prop_assert_eq!(with.node(key).unwrap(), chain[0]);
                }
                None => {
                    prop_assert_eq!(with.route(key).unwrap(), plain.route(key).unwrap());
                    prop_assert_eq!(with.replicas(key, 2).unwrap(), plain.replicas(key, 2).unwrap());
                }
            }
        }
        let topology = with.topology();
        prop_assert_eq!(&Topology::from_value(&topology.to_value()).unwrap(), topology);
    }
}

#[test]
fn documents_without_overrides_keep_their_form() {
    let map = json!([["b", "a"], ["c"]]);
    for document in [
        vbucket_doc(1024, None),
        vbucket_doc(2, Some(map.clone())),
        vbucket_doc(2, Some(map)).strategy_field("overrides", json!([])),
    ] {
        let router = document.router();
        assert!(!router.to_json().contains("overrides"), "{}", router.to_json());
    }
    let overrides = json!([{"key": {"u64": 5}, "vbucket": 1}, {"key": {"utf8": "z"}, "vbucket": 7}, {"key": {"hex": "00"}, "vbucket": 0}]);
    let router = vbucket_doc(8, None).strategy_field("overrides", overrides).router();
    let written: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(
        written["strategy"]["overrides"],
        json!([{"key": {"hex": "00"}, "vbucket": 0}, {"key": {"utf8": "z"}, "vbucket": 7}, {"key": {"u64": "5"}, "vbucket": 1}])
    );
}

#[test]
fn overrides_follow_the_hash_tag() {
    let tagged = |key: &str| {
        let overrides = json!([{"key": {"utf8": key}, "vbucket": 9}]);
        vbucket_doc(16, None).strategy_field("overrides", overrides).hashing(json!({"hash_tag": "redis"}))
    };
    let router = tagged("user:1").router();
    for key in ["user:1", "{user:1}.a", "{user:1}.b"] {
        assert_eq!(router.route(key).unwrap(), 9, "{key}");
    }
    let err = tagged("{user:1}.a").load().unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("strategy.overrides: the entry for"), "{err}");
}

#[test]
fn bad_overrides_name_the_field() {
    let check = |overrides: Value, start: &str| {
        let err = vbucket_doc(4, None).strategy_field("overrides", overrides.clone()).load().unwrap_err();
        assert_eq!(err.code(), "invalid_topology", "{overrides}");
        assert!(err.message().starts_with(start), "{overrides}: {err}");
    };
    check(
        json!([{"key": {"utf8": "a"}, "vbucket": 4}]),
        "strategy.overrides[0].vbucket: expected an integer in 0..=3, found 4",
    );
    check(
        json!([{"key": {"utf8": "a"}, "vbucket": -1}]),
        "strategy.overrides[0].vbucket: expected an integer in 0..=3",
    );
    check(json!([{"key": {"utf8": "a"}}]), "strategy.overrides[0].vbucket: missing required field");
    check(json!([{"key": {"utf8": "a"}, "vbucket": 1, "node": "a"}]), "strategy.overrides[0].node: unknown field");
    check(
        json!([{"key": {"utf8": "a"}, "vbucket": 1}, {"key": {"utf8": "a"}, "vbucket": 2}]),
        "strategy.overrides[1].key: duplicate key {\"utf8\":\"a\"} (also strategy.overrides[0])",
    );
    check(json!({"a": 1}), "strategy.overrides: expected an array");
}

#[test]
fn override_operations_move_one_key_and_report_it() {
    let start = vbucket_doc(64, None).topology();
    let before = Router::new(start.clone()).unwrap();
    let natural = before.route("user:9").unwrap();
    let target = (natural + 1) % 64;
    let result =
        ops::apply(&start, &json!({"op": "vbucket_override", "key": {"utf8": "user:9"}, "vbucket": target})).unwrap();
    let node = |v: u32| ["a", "b", "c", "d"][(v % 4) as usize];
    assert_eq!(result["from_vbucket"], json!(natural));
    assert_eq!(result["to_vbucket"], json!(target));
    assert_eq!(result["from"], json!(node(natural)));
    assert_eq!(result["to"], json!(node(target)));
    assert_eq!(result["replaced"], json!(false));
    let after = Router::from_value(&result["topology"]).unwrap();
    assert_eq!(after.epoch(), 2);
    for i in 0..4000 {
        let key = format!("user:{i}");
        let expected = if i == 9 { target } else { before.route(key.as_str()).unwrap() };
        assert_eq!(after.route(key.as_str()).unwrap(), expected, "{key}");
    }
    let again =
        ops::apply(after.topology(), &json!({"op": "vbucket_override", "key": {"utf8": "user:9"}, "vbucket": 0}))
            .unwrap();
    assert_eq!((&again["from_vbucket"], &again["replaced"]), (&json!(target), &json!(true)));
    let removed =
        ops::apply(after.topology(), &json!({"op": "vbucket_override_remove", "key": {"utf8": "user:9"}})).unwrap();
    assert_eq!((&removed["from_vbucket"], &removed["to_vbucket"]), (&json!(target), &json!(natural)));
    assert_eq!(
        Router::from_value(&removed["topology"]).unwrap().to_json().replace("\"epoch\":3", "\"epoch\":1"),
        before.to_json()
    );

    let code = |topology: &Topology, op: Value| ops::apply(topology, &op).unwrap_err().code();
    assert_eq!(
        code(&start, json!({"op": "vbucket_override", "key": {"utf8": "k"}, "vbucket": 64})),
        "invalid_argument"
    );
    assert_eq!(code(&start, json!({"op": "vbucket_override", "key": {"utf8": "k"}})), "invalid_argument");
    assert_eq!(code(&start, json!({"op": "vbucket_override", "key": 7, "vbucket": 1})), "invalid_argument");
    assert_eq!(code(&start, json!({"op": "vbucket_override_remove", "key": {"utf8": "k"}})), "invalid_argument");
    let jump = doc(&["a"]).strategy(json!({"type": "jump"})).topology();
    assert_eq!(code(&jump, json!({"op": "vbucket_override", "key": {"utf8": "k"}, "vbucket": 0})), "invalid_argument");
}
