//! The directory strategy: entries always win, every other key routes exactly as the
//! fallback alone, replicas are the owner then the fallback's order, and the
//! directory operations move exactly the key they name.

mod common;

use common::{doc, ids, key_object};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::{ops, Key, OwnedKey, Router, Topology};

const FALLBACKS: [&str; 5] = [
    r#"{"type": "jump"}"#,
    r#"{"type": "ring", "points_per_node": 16}"#,
    r#"{"type": "rendezvous"}"#,
    r#"{"type": "modulo"}"#,
    r#"{"type": "modulo", "one_based": false}"#,
];

/// The naive oracle: a linear scan over the entries as written.
fn naive_entry(entries: &[(OwnedKey, usize)], key: Key<'_>) -> Option<usize> {
    entries.iter().rev().find(|(listed, _)| listed.as_key() == key).map(|(_, node)| *node)
}

fn arbitrary_key() -> impl Strategy<Value = OwnedKey> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..6).prop_map(OwnedKey::Bytes),
        (0u64..40).prop_map(OwnedKey::U64),
        any::<u64>().prop_map(OwnedKey::U64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Entries always win; every other key (short byte strings and small integers, so
    /// that many probes are near or equal to entries) routes as the fallback alone,
    /// with the same replicas; a listed key's replicas are its node, then the fallback's
    /// order without it.
    #[test]
    fn entries_win_and_the_rest_is_the_fallback(
        n in 1usize..7,
        kind in 0usize..FALLBACKS.len(),
        raw_entries in proptest::collection::vec((arbitrary_key(), 0usize..7), 0..24),
        probes in proptest::collection::vec(arbitrary_key(), 1..48),
    ) {
        let ids = ids(n);
        // Later duplicates are dropped (the document may list a key once).
        let mut entries: Vec<(OwnedKey, usize)> = Vec::new();
        for (key, node) in raw_entries {
            if !entries.iter().any(|(listed, _)| *listed == key) {
                entries.push((key, node % n));
            }
        }
        let fallback: Value = serde_json::from_str(FALLBACKS[kind]).unwrap();
        let rows: Vec<Value> =
            entries.iter().map(|(key, node)| json!({"key": key_object(key), "node": ids[*node]})).collect();
        let directory = doc(&ids).strategy(json!({"type": "directory", "entries": rows, "fallback": fallback})).router();
        let alone = doc(&ids).strategy(fallback).router();
        let listed = entries.iter().map(|(key, _)| key.clone());
        for key in listed.chain(probes) {
            let key = key.as_key();
            let all = directory.replicas(key, n as u32).unwrap();
            let fallback_order = alone.replicas(key, n as u32).unwrap();
            match naive_entry(&entries, key) {
                Some(node) => {
                    prop_assert_eq!(directory.node(key).unwrap(), ids[node].as_str());
                    prop_assert_eq!(directory.route(key).unwrap(), node as u32);
                    let mut expected = vec![ids[node].as_str()];
                    expected.extend(fallback_order.iter().copied().filter(|id| *id != ids[node]));
                    prop_assert_eq!(&all, &expected);
                }
                None => {
                    prop_assert_eq!(directory.node(key).unwrap(), alone.node(key).unwrap());
                    prop_assert_eq!(directory.route(key).unwrap(), alone.node_index(key).unwrap());
                    prop_assert_eq!(&all, &fallback_order);
                }
            }
            for count in 1..=n as u32 {
                prop_assert_eq!(&directory.replicas(key, count).unwrap()[..], &all[..count as usize]);
            }
        }
        let again = Router::from_json(&directory.to_json()).unwrap();
        prop_assert_eq!(again.to_json(), directory.to_json());
        let topology = directory.topology();
        prop_assert_eq!(&Topology::from_value(&topology.to_value()).unwrap(), topology);
    }
}

#[test]
fn byte_and_integer_keys_are_distinct_kinds() {
    let ids = ids(3);
    let strategy = json!({"type": "directory", "entries": [
        {"key": {"u64": 42}, "node": "n2"},
        {"key": {"utf8": "7"}, "node": "n1"},
    ], "fallback": {"type": "modulo"}});
    let mut document = doc(&ids).strategy(strategy).hashing(json!({"integers": "identity"})).value();
    let router = Router::from_value(&document).unwrap();
    assert_eq!(router.node(42u64).unwrap(), "n2");
    // 42 % 3 == 0: the text "42" and the bytes of 42 are not the entry.
    assert_eq!(router.node(7u64).unwrap(), "n1"); // 7 % 3 == 1 by the fallback, not by the "7" entry
    assert_eq!(router.node("7").unwrap(), "n1");
    document["strategy"]["entries"][1]["node"] = json!("n0");
    let router = Router::from_value(&document).unwrap();
    assert_eq!(router.node("7").unwrap(), "n0");
    assert_eq!(router.node(7u64).unwrap(), "n1");
    assert_eq!(
        router.node(&42u64.to_le_bytes()).unwrap(),
        doc(&ids)
            .strategy(json!({"type": "modulo"}))
            .hashing(json!({"integers": "identity"}))
            .router()
            .node(&42u64.to_le_bytes())
            .unwrap()
    );
}

#[test]
fn entries_match_the_hash_tag_so_tagged_keys_stay_together() {
    let ids = ids(5);
    let strategy = json!({"type": "directory", "entries": [{"key": {"utf8": "user:1"}, "node": "n3"}], "fallback": {"type": "jump"}});
    let tagged = doc(&ids).strategy(strategy.clone()).hashing(json!({"hash_tag": "redis"})).router();
    for key in ["user:1", "{user:1}.profile", "{user:1}.posts", "x{user:1}"] {
        assert_eq!(tagged.node(key).unwrap(), "n3", "{key}");
    }
    let plain = doc(&ids).strategy(strategy).router();
    assert_eq!(plain.node("user:1").unwrap(), "n3");
    let alone = doc(&ids).strategy(json!({"type": "jump"})).router();
    assert_eq!(plain.node("{user:1}.profile").unwrap(), alone.node("{user:1}.profile").unwrap());

    // An entry with a tag can never match under tags: the document parses, the router refuses.
    let dead = doc(&ids)
        .strategy(json!({"type": "directory", "entries": [{"key": {"utf8": "{user:1}.profile"}, "node": "n3"}], "fallback": {"type": "jump"}}))
        .hashing(json!({"hash_tag": "redis"}))
        .value();
    assert!(Topology::from_value(&dead).is_ok());
    let err = Router::from_value(&dead).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(
        err.message().starts_with("strategy.entries: the entry for {\"utf8\":\"{user:1}.profile\"} can never match"),
        "{err}"
    );
}

#[test]
fn canonical_form_sorts_entries_and_spells_keys_out() {
    let ids = ids(2);
    let strategy = json!({"type": "directory", "entries": [
        {"key": {"u64": "18446744073709551615"}, "node": "n1"},
        {"key": {"u64": 3}, "node": "n0"},
        {"key": {"hex": "FF00"}, "node": "n1"},
        {"key": {"hex": "6162"}, "node": "n0"},
        {"key": {"utf8": ""}, "node": "n1"},
    ], "fallback": {"type": "rendezvous"}});
    let router = doc(&ids).strategy(strategy).router();
    let written: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(
        written["strategy"],
        json!({"type": "directory", "entries": [
            {"key": {"utf8": ""}, "node": "n1"},
            {"key": {"utf8": "ab"}, "node": "n0"},
            {"key": {"hex": "ff00"}, "node": "n1"},
            {"key": {"u64": "3"}, "node": "n0"},
            {"key": {"u64": "18446744073709551615"}, "node": "n1"},
        ], "fallback": {"type": "rendezvous"}})
    );
    assert_eq!(router.node("").unwrap(), "n1");
    assert_eq!(router.node(u64::MAX).unwrap(), "n1");
    // Without entries the field is still written (every parameter is spelled out).
    let empty = doc(&ids).strategy(json!({"type": "directory", "fallback": {"type": "jump"}})).router();
    assert!(empty.to_json().contains(r#""strategy":{"entries":[],"fallback":{"type":"jump"},"type":"directory"}"#));
}

#[test]
fn bad_documents_name_the_field() {
    let ids = ids(3);
    let check = |strategy: Value, code: &str, start: &str| {
        let err = doc(&ids).strategy(strategy.clone()).load().unwrap_err();
        assert_eq!(err.code(), code, "{strategy}: {err}");
        assert!(err.message().starts_with(start), "{strategy}: {err}");
    };
    let entry = |key: Value, node: &str| json!({"key": key, "node": node});
    let with = |entries: Vec<Value>| json!({"type": "directory", "entries": entries, "fallback": {"type": "jump"}});
    check(json!({"type": "directory"}), "invalid_topology", "strategy.fallback: missing required field");
    check(
        with(vec![entry(json!({"utf8": "a"}), "zz")]),
        "invalid_topology",
        "strategy.entries[0].node: names node \"zz\"",
    );
    check(
        with(vec![
            entry(json!({"utf8": "a"}), "n0"),
            entry(json!({"u64": 1}), "n0"),
            entry(json!({"hex": "61"}), "n1"),
        ]),
        "invalid_topology",
        "strategy.entries[2].key: duplicate key {\"utf8\":\"a\"} (also strategy.entries[0])",
    );
    check(
        with(vec![entry(json!({"utf8": "a", "u64": 1}), "n0")]),
        "invalid_topology",
        "strategy.entries[0].key: a key object has exactly one",
    );
    check(
        with(vec![entry(json!({}), "n0")]),
        "invalid_topology",
        "strategy.entries[0].key: a key object has exactly one",
    );
    check(with(vec![entry(json!({"hex": "abc"}), "n0")]), "invalid_topology", "strategy.entries[0].key.hex");
    check(with(vec![entry(json!({"u64": -1}), "n0")]), "invalid_topology", "strategy.entries[0].key.u64");
    check(with(vec![entry(json!("a"), "n0")]), "invalid_topology", "strategy.entries[0].key: expected an object");
    check(
        with(vec![json!({"key": {"utf8": "a"}, "node": "n0", "shard": 1})]),
        "invalid_topology",
        "strategy.entries[0].shard: unknown field",
    );
    check(
        json!({"type": "directory", "entries": {}, "fallback": {"type": "jump"}}),
        "invalid_topology",
        "strategy.entries: expected an array",
    );
    for fallback in [
        json!({"type": "vbucket"}),
        json!({"type": "modulo", "one_based": true}),
        json!({"type": "multilevel", "groups": [{"id": "g", "nodes": ["n0"]}]}),
    ] {
        check(json!({"type": "directory", "fallback": fallback}), "invalid_topology", "strategy.fallback: the ");
    }
    check(
        json!({"type": "directory", "fallback": {"type": "directory", "fallback": {"type": "jump"}}}),
        "invalid_topology",
        "strategy.fallback.type: a directory cannot fall back to another directory",
    );
    check(
        json!({"type": "directory", "fallback": {"type": "ring", "points": 2}}),
        "invalid_topology",
        "strategy.fallback.points: unknown field",
    );
    // The fallback checks weights: jump has none, ring has them.
    let mut weighted = doc(&ids)
        .strategy(json!({"type": "directory", "fallback": {"type": "jump"}}))
        .node_field(1, "weight", json!(2))
        .value();
    let err = Router::from_value(&weighted).unwrap_err();
    assert!(err.message().starts_with("nodes[1].weight: the jump strategy does not support weights"), "{err}");
    weighted["strategy"]["fallback"] = json!({"type": "ring"});
    assert!(Router::from_value(&weighted).is_ok());
}

#[test]
fn more_entries_than_the_limit_are_refused_before_reading_them() {
    let limit = shardroute::limits::MAX_KEY_TABLE_ENTRIES as usize;
    let rows = vec![Value::Null; limit + 1];
    let text = doc(&["a"]).strategy(json!({"type": "directory", "entries": rows, "fallback": {"type": "jump"}})).text();
    let err = Router::from_json(&text).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    assert!(err.message().starts_with("strategy.entries: 1048577 entries; the limit is 1048576"), "{err}");
}

fn owners(router: &Router, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| router.node(key.as_str()).unwrap().to_string()).collect()
}

#[test]
fn directory_set_and_remove_move_exactly_the_named_key() {
    let ids = ids(6);
    let keys: Vec<String> = (0..3000).map(|i| format!("user:{i}")).collect();
    let start = doc(&ids)
        .strategy(json!({"type": "directory", "entries": [{"key": {"utf8": "user:7"}, "node": "n5"}], "fallback": {"type": "ring"}}))
        .topology();
    let before = Router::new(start.clone()).unwrap();
    let alone = doc(&ids).strategy(json!({"type": "ring"})).router();
    // Pin user:11 to a node other than its fallback node.
    let natural = alone.node("user:11").unwrap().to_string();
    let target = ids.iter().find(|id| **id != natural).unwrap().clone();
    let result =
        ops::apply(&start, &json!({"op": "directory_set", "key": {"utf8": "user:11"}, "node": target})).unwrap();
    assert_eq!(result["key"], json!({"utf8": "user:11"}));
    assert_eq!(result["from"], json!(natural));
    assert_eq!(result["to"], json!(target));
    assert_eq!(result["replaced"], json!(false));
    let after = Router::from_value(&result["topology"]).unwrap();
    assert_eq!(after.epoch(), 2);
    let (old, new) = (owners(&before, &keys), owners(&after, &keys));
    let moved: Vec<&String> =
        keys.iter().zip(old.iter().zip(&new)).filter(|(_, (a, b))| a != b).map(|(k, _)| k).collect();
    assert_eq!(moved, ["user:11"]);

    // Replacing an entry reports the old entry's node.
    let again =
        ops::apply(after.topology(), &json!({"op": "directory_set", "key": {"utf8": "user:7"}, "node": "n0"})).unwrap();
    assert_eq!((&again["from"], &again["to"], &again["replaced"]), (&json!("n5"), &json!("n0"), &json!(true)));

    // Removing sends the key back to the fallback, and nothing else moves.
    let removed = ops::apply(after.topology(), &json!({"op": "directory_remove", "key": {"utf8": "user:7"}})).unwrap();
    assert_eq!(removed["from"], json!("n5"));
    assert_eq!(removed["to"], json!(alone.node("user:7").unwrap()));
    let back = Router::from_value(&removed["topology"]).unwrap();
    for (key, owner) in keys.iter().zip(owners(&back, &keys)) {
        if key == "user:11" {
            assert_eq!(owner, target);
        } else {
            assert_eq!(owner, alone.node(key.as_str()).unwrap(), "{key}");
        }
    }
}

#[test]
fn node_edits_move_only_fallback_keys() {
    let ids = ids(4);
    let start = doc(&ids)
        .strategy(json!({"type": "directory", "entries": [{"key": {"utf8": "pinned"}, "node": "n3"}], "fallback": {"type": "jump"}}))
        .topology();
    let grown = ops::apply(&start, &json!({"op": "add_node", "node": {"id": "n4"}})).unwrap();
    let grown = Router::from_value(&grown["topology"]).unwrap();
    let before = Router::new(start.clone()).unwrap();
    assert_eq!(grown.node("pinned").unwrap(), "n3");
    let keys: Vec<String> = (0..5000).map(|i| format!("k{i}")).collect();
    for (old, new) in owners(&before, &keys).iter().zip(owners(&grown, &keys)) {
        assert!(*old == new || new == "n4", "jump moves keys only to the new node");
    }
    // Removing a node an entry names is refused with the entry's path.
    let err = ops::apply(&start, &json!({"op": "remove_node", "id": "n3"})).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("strategy.entries[0].node: names node \"n3\""), "{err}");
}

#[test]
fn directory_operations_reject_what_does_not_fit() {
    let ids = ids(3);
    let directory = doc(&ids)
        .strategy(
            json!({"type": "directory", "entries": [{"key": {"u64": 1}, "node": "n0"}], "fallback": {"type": "jump"}}),
        )
        .hashing(json!({"hash_tag": "redis"}))
        .topology();
    let code = |topology: &Topology, op: Value| ops::apply(topology, &op).unwrap_err().code();
    assert_eq!(
        code(&directory, json!({"op": "directory_set", "key": {"utf8": "a"}, "node": "zz"})),
        "invalid_argument"
    );
    assert_eq!(code(&directory, json!({"op": "directory_set", "key": {"utf8": "a"}})), "invalid_argument");
    assert_eq!(
        code(&directory, json!({"op": "directory_set", "key": {"bytes": "a"}, "node": "n1"})),
        "invalid_argument"
    );
    assert_eq!(
        code(&directory, json!({"op": "directory_set", "key": {"utf8": "{t}x"}, "node": "n1"})),
        "invalid_argument"
    );
    assert_eq!(
        code(&directory, json!({"op": "directory_set", "key": {"utf8": "a"}, "node": "n1", "x": 1})),
        "invalid_argument"
    );
    assert_eq!(code(&directory, json!({"op": "directory_remove", "key": {"u64": "2"}})), "invalid_argument");
    assert_eq!(code(&directory, json!({"op": "directory_remove", "key": {"utf8": "1"}})), "invalid_argument");
    let jump = doc(&ids).strategy(json!({"type": "jump"})).topology();
    assert_eq!(code(&jump, json!({"op": "directory_set", "key": {"utf8": "a"}, "node": "n1"})), "invalid_argument");
    assert_eq!(code(&jump, json!({"op": "directory_remove", "key": {"utf8": "a"}})), "invalid_argument");
    let removed = ops::apply(&directory, &json!({"op": "directory_remove", "key": {"u64": 1}})).unwrap();
    assert_eq!(removed["topology"]["strategy"]["entries"], json!([]));
}

/// Seeds of the mutation test, written as text: it cuts them at byte positions.
const VALID: &str = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "hashing": {"hash_tag": "redis"}, "strategy": {"type": "directory", "entries": [{"key": {"utf8": "k"}, "node": "b"}, {"key": {"u64": 9}, "node": "a"}], "fallback": {"type": "ring", "points_per_node": 4}}}"#;
const VBUCKET: &str = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "vbucket", "vbuckets": 4, "replicas": 1, "overrides": [{"key": {"hex": "00"}, "vbucket": 3}]}}"#;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Mutated documents, arbitrary keys and arbitrary operations never panic, and what
    /// loads round-trips through its canonical form.
    #[test]
    fn mutated_documents_and_operations_never_panic(
        which in any::<bool>(),
        cut in 0usize..400,
        insert in ".{0,8}",
        key in any::<Vec<u8>>(),
        int in any::<u64>(),
        op in 0usize..4,
        field in prop_oneof![Just(json!(null)), Just(json!(-1)), Just(json!(3)), Just(json!("a")), Just(json!({"utf8": "k"})), Just(json!({"u64": "9"})), Just(json!({"hex": "0"})), Just(json!([]))],
        other in prop_oneof![Just(json!("b")), Just(json!(0)), Just(json!(4)), Just(json!(u64::MAX)), Just(json!({}))],
    ) {
        let valid = if which { VALID } else { VBUCKET };
        let cut = cut.min(valid.len());
        let mut doc = String::from(valid.get(..cut).unwrap_or(valid));
        doc.push_str(&insert);
        doc.push_str(valid.get(cut..).unwrap_or(""));
        for text in [doc.as_str(), valid] {
            if let Ok(router) = Router::from_json(text) {
                for probe in [Key::Bytes(&key), Key::U64(int)] {
                    let _ = router.node(probe).unwrap();
                    for count in 0..=3 {
                        let _ = router.replicas(probe, count);
                    }
                }
                let again = Router::from_json(&router.to_json()).expect("canonical form reloads");
                prop_assert_eq!(again.to_json(), router.to_json());
                let name = ["directory_set", "directory_remove", "vbucket_override", "vbucket_override_remove"][op];
                let operation = json!({"op": name, "key": field, "node": other, "vbucket": other});
                let _ = ops::apply(router.topology(), &operation);
                let operation = json!({"op": name, "key": field});
                if let Ok(result) = ops::apply(router.topology(), &operation) {
                    prop_assert!(Router::from_value(&result["topology"]).is_ok());
                }
            }
        }
    }
}
