//! Key-range sharding: routing and scans against naive versions written from the
//! definition, the document's canonical form, and every rejection with its field path.

mod common;

use common::{doc, key_range_doc};
use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};
use shardroute::strategy::partitioned::key_range::KeyRangeSpec;
use shardroute::{Key, OwnedKey, Router, Strategy, Topology};

/// The range of `key` by the definition: the `i` with `lo_i <= key < hi_i`, where range
/// 0 starts at the empty key and the last range has no end.
fn naive_range(boundaries: &[Vec<u8>], key: &[u8]) -> usize {
    (0..=boundaries.len())
        .find(|&i| {
            let above_start = i == 0 || boundaries[i - 1].as_slice() <= key;
            let below_end = i == boundaries.len() || key < boundaries[i].as_slice();
            above_start && below_end
        })
        .expect("the ranges cover every key")
}

/// A table over a small alphabet, so keys often equal or extend boundaries.
fn table() -> impl proptest::strategy::Strategy<Value = (Vec<Vec<u8>>, Vec<usize>, usize)> {
    (1usize..5, proptest::collection::btree_set(proptest::collection::vec(0u8..4, 1..4), 0..8)).prop_flat_map(
        |(nodes, boundaries)| {
            let boundaries: Vec<Vec<u8>> = boundaries.into_iter().collect();
            let count = boundaries.len() + 1;
            (Just(boundaries), proptest::collection::vec(0..nodes, count), Just(nodes))
        },
    )
}

fn small_key() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    proptest::collection::vec(0u8..4, 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn routing_matches_the_definition((boundaries, owners, nodes) in table(), keys in proptest::collection::vec(small_key(), 1..20)) {
        let router = key_range_doc(&boundaries, &owners, nodes).router();
        prop_assert_eq!(router.shard_range(), 0..boundaries.len() as u32 + 1);
        let probes = keys.iter().chain(boundaries.iter());
        for key in probes {
            let range = naive_range(&boundaries, key);
            prop_assert_eq!(router.route(key.as_slice()).unwrap(), range as u32);
            prop_assert_eq!(router.node(key.as_slice()).unwrap(), format!("n{}", owners[range]));
            let replicas = router.replicas(key.as_slice(), nodes as u32).unwrap();
            let expected: Vec<String> = (0..nodes).map(|step| format!("n{}", (owners[range] + step) % nodes)).collect();
            prop_assert_eq!(replicas, expected);
        }
    }

    #[test]
    fn integer_keys_route_as_their_big_endian_bytes(value in any::<u64>(), cut in any::<u64>()) {
        let boundaries = vec![cut.to_be_bytes().to_vec(), vec![0xff; 9]];
        prop_assume!(cut != 0);
        let router = key_range_doc(&boundaries, &[0, 1, 2], 3).router();
        prop_assert_eq!(router.route(value).unwrap(), router.route(&value.to_be_bytes()).unwrap());
        prop_assert_eq!(router.route(value).unwrap(), u32::from(value >= cut));
    }

    #[test]
    fn shards_for_range_is_exactly_the_overlapping_ranges((boundaries, owners, nodes) in table(), start in small_key(), end in proptest::option::of(small_key()), probes in proptest::collection::vec(small_key(), 0..30)) {
        let router = key_range_doc(&boundaries, &owners, nodes).router();
        let end_key = end.as_ref().map(|e| Key::Bytes(e));
        if end.as_ref().is_some_and(|e| e <= &start) {
            prop_assert_eq!(router.shards_for_range(start.as_slice(), end_key).unwrap_err().code(), "invalid_argument");
            return Ok(());
        }
        let shards = router.shards_for_range(start.as_slice(), end_key).unwrap();
        // Every key of [start, end) lies in a listed shard ...
        let inside = |key: &Vec<u8>| key >= &start && end.as_ref().is_none_or(|e| key < e);
        for key in probes.iter().filter(|k| inside(k)) {
            prop_assert!(shards.contains(&router.route(key.as_slice()).unwrap()));
        }
        // ... and every listed shard holds one: start, or the boundary that opens it.
        // The witnesses' shards, in key order, are the answer exactly.
        let mut witnesses: Vec<&Vec<u8>> = boundaries.iter().filter(|b| inside(b)).collect();
        witnesses.insert(0, &start);
        let mut expected: Vec<u32> = witnesses.iter().map(|k| naive_range(&boundaries, k) as u32).collect();
        expected.dedup();
        prop_assert_eq!(shards, expected);
    }
}

/// The seed of the mutation test, written as text: it cuts it at byte positions.
const VALID: &str = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "key_range", "boundaries": [{"u64": "8"}, {"utf8": "g"}, {"hex": "70"}], "ranges": ["a", "b", "a", "b"]}}"#;

/// The same document as a hash_range table.
fn hashed(text: &str) -> String {
    text.replace("key_range", "hash_range")
        .replace(r#"{"u64": "8"}"#, "1")
        .replace(r#"{"utf8": "g"}"#, "2")
        .replace(r#"{"hex": "70"}"#, "3")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_documents_and_arbitrary_keys_never_panic(cut in 0usize..VALID.len(), insert in ".{0,6}", key in any::<Vec<u8>>(), int in any::<u64>(), end in any::<Vec<u8>>()) {
        prop_assert!(Router::from_json(VALID).is_ok() && Router::from_json(&hashed(VALID)).is_ok());
        let mut text = String::from(&VALID[..cut]);
        text.push_str(&insert);
        text.push_str(&VALID[cut..]);
        for doc in [text.clone(), hashed(&text)] {
            if let Ok(router) = Router::from_json(&doc) {
                for probe in [Key::Bytes(&key), Key::U64(int)] {
                    let shard = router.route(probe).unwrap();
                    prop_assert!(router.shard_range().contains(&shard));
                    prop_assert!(router.node(probe).is_ok());
                    prop_assert!(router.replicas(probe, router.max_replica_count()).is_ok());
                    let _ = router.shards_for_range(probe, Some(Key::Bytes(&end)));
                }
                let again = Router::from_json(&router.to_json()).expect("canonical form reloads");
                prop_assert_eq!(again.to_json(), router.to_json());
            }
        }
    }
}

fn load(strategy: Value) -> Result<Router, shardroute::Error> {
    doc(&["a", "b", "c"]).strategy(strategy).load()
}

#[test]
fn published_order_examples() {
    // Hand-checked: memcmp order, a boundary starts its range, a prefix sorts first.
    let router =
        load(json!({"type": "key_range", "boundaries": [{"utf8": "g"}, {"utf8": "p"}], "ranges": ["a", "b", "c"]}))
            .unwrap();
    for (key, shard) in [("", 0), ("apple", 0), ("fzzz", 0), ("g", 1), ("g\0", 1), ("oz", 1), ("p", 2), ("zebra", 2)] {
        assert_eq!(router.route(key).unwrap(), shard, "{key:?}");
    }
    assert_eq!(router.route(&[0xffu8][..]).unwrap(), 2);
    assert_eq!(router.route(u64::MAX).unwrap(), 2); // 0xff.. sorts after "p"
    assert_eq!(router.route(7u64).unwrap(), 0); // 0x00.. sorts first
    assert_eq!(router.shards_for_range("a", Some(Key::from("g"))).unwrap(), [0]);
    assert_eq!(router.shards_for_range("a", Some(Key::from("g\0"))).unwrap(), [0, 1]);
    assert_eq!(router.shards_for_range("h", None).unwrap(), [1, 2]);
    assert_eq!(router.shards_for_range("", None).unwrap(), [0, 1, 2]);
}

#[test]
fn canonical_form_spells_out_every_boundary_and_owner() {
    let router = load(json!({"type": "key_range", "boundaries": [{"hex": "41"}, {"u64": 7_000_000_000_000_000_000u64}, {"utf8": "tab\there"}, {"hex": "C3A9"}, {"hex": "ff00"}]}))
        .unwrap();
    let canonical: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(
        canonical["strategy"],
        json!({"type": "key_range",
            "boundaries": [{"utf8": "A"}, {"u64": "7000000000000000000"}, {"hex": "7461620968657265"}, {"utf8": "é"}, {"hex": "ff00"}],
            "ranges": ["a", "b", "c", "a", "b", "c"]})
    );
    let again = Topology::from_value(&canonical).unwrap();
    assert_eq!(&again, router.topology());
    let Strategy::KeyRange(KeyRangeSpec { boundaries, .. }) = &again.strategy else { panic!("strategy") };
    assert_eq!(boundaries[1], OwnedKey::U64(7_000_000_000_000_000_000));
    // Defaults: no boundaries is one range on the first node.
    let single = load(json!({"type": "key_range"})).unwrap();
    assert_eq!(single.shard_range(), 0..1);
    assert_eq!(single.node("anything").unwrap(), "a");
    assert_eq!(single.replicas("anything", 3).unwrap(), ["a", "b", "c"]);
    assert!(single.to_json().contains(r#""strategy":{"boundaries":[],"ranges":["a"],"type":"key_range"}"#));
}

#[test]
fn rejected_documents_name_the_field() {
    let cases: &[(Value, &str, &str)] = &[
        (
            json!({"type": "key_range", "boundaries": [{"utf8": "b"}, {"utf8": "a"}]}),
            "invalid_topology",
            "strategy.boundaries[1]: must be greater than boundaries[0]",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"utf8": "a"}, {"hex": "61"}]}),
            "invalid_topology",
            "strategy.boundaries[1]: must be greater",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"u64": "1"}, {"hex": "0000000000000001"}]}),
            "invalid_topology",
            "strategy.boundaries[1]: must be greater",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"utf8": ""}]}),
            "invalid_topology",
            "strategy.boundaries[0]: the lowest position",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"utf8": "m"}], "ranges": ["a"]}),
            "invalid_topology",
            "strategy.ranges: expected 2 entries",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"utf8": "m"}], "ranges": ["a", "z"]}),
            "invalid_topology",
            "strategy.ranges[1]: names node \"z\"",
        ),
        (
            json!({"type": "key_range", "ranges": []}),
            "invalid_topology",
            "strategy.ranges: a table needs at least one range",
        ),
        (json!({"type": "key_range", "ranges": [1]}), "invalid_topology", "strategy.ranges[0]: expected a string"),
        (
            json!({"type": "key_range", "boundaries": [{"hex": "abc"}]}),
            "invalid_topology",
            "strategy.boundaries[0].hex: expected an even number",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"hex": "zz"}]}),
            "invalid_topology",
            "strategy.boundaries[0].hex: 'z' is not a hex digit",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"utf8": "a", "hex": "61"}]}),
            "invalid_topology",
            "strategy.boundaries[0]: a key object has exactly one",
        ),
        (
            json!({"type": "key_range", "boundaries": [{}]}),
            "invalid_topology",
            "strategy.boundaries[0]: a key object has exactly one",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"text": "a"}]}),
            "invalid_topology",
            "strategy.boundaries[0].text: unknown field",
        ),
        (
            json!({"type": "key_range", "boundaries": ["a"]}),
            "invalid_topology",
            "strategy.boundaries[0]: expected an object",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"u64": "-1"}]}),
            "invalid_topology",
            "strategy.boundaries[0].u64: expected an integer",
        ),
        (
            json!({"type": "key_range", "boundaries": {"utf8": "a"}}),
            "invalid_topology",
            "strategy.boundaries: expected an array",
        ),
        (
            json!({"type": "key_range", "boundaries": [{"hex": "61".repeat(4097)}]}),
            "limit_exceeded",
            "strategy.boundaries[0]: 4097 bytes",
        ),
        (
            json!({"type": "key_range", "boundaries": vec![Value::Null; 1 << 20]}),
            "limit_exceeded",
            "strategy.boundaries: 1048576 boundaries",
        ),
        (
            json!({"type": "key_range", "ranges": vec!["a"; (1 << 20) + 1]}),
            "limit_exceeded",
            "strategy.ranges: 1048577 ranges",
        ),
        (json!({"type": "key_range", "points": 3}), "invalid_topology", "strategy.points: unknown field"),
    ];
    for (strategy, code, message) in cases {
        let err = load(strategy.clone()).unwrap_err();
        assert_eq!(err.code(), *code, "{strategy}: {err}");
        assert!(err.message().starts_with(message), "{strategy}: {err}");
    }
    let tagged =
        doc(&["a"]).strategy(json!({"type": "key_range"})).hashing(json!({"hash_tag": "redis"})).load().unwrap_err();
    assert_eq!(tagged.code(), "invalid_topology");
    assert!(tagged.message().starts_with("hashing.hash_tag: "), "{tagged}");
    let weighted = doc(json!([{"id": "a", "weight": 2}])).strategy(json!({"type": "key_range"})).load().unwrap_err();
    assert!(weighted.message().starts_with("nodes[0].weight: "), "{weighted}");
}

#[test]
fn limits_are_inclusive() {
    let longest = load(json!({"type": "key_range", "boundaries": [{"hex": "61".repeat(4096)}]})).unwrap();
    assert_eq!(longest.route("b").unwrap(), 1);
    let boundaries: Vec<Value> = (1..(1u64 << 16)).map(|i| json!({"u64": i.to_string()})).collect();
    let router = load(json!({"type": "key_range", "boundaries": boundaries})).unwrap();
    assert_eq!(router.shard_range(), 0..1 << 16);
    assert_eq!(router.route(12345u64).unwrap(), 12345);
    assert_eq!(router.node(12345u64).unwrap(), ["a", "b", "c"][12345 % 3]);
}

#[test]
fn a_spec_built_in_code_is_checked_not_trusted() {
    let base = load(json!({"type": "key_range"})).unwrap().topology().clone();
    let with = |boundaries: Vec<OwnedKey>, ranges: Vec<u32>| {
        let mut topology = base.clone();
        topology.strategy = Strategy::KeyRange(KeyRangeSpec { boundaries, ranges });
        Router::new(topology).map(drop).unwrap_err()
    };
    assert!(with(vec![], vec![7]).message().starts_with("strategy.ranges[0]: node index 7"));
    assert!(with(vec![OwnedKey::Bytes(b"b".to_vec()), OwnedKey::Bytes(b"a".to_vec())], vec![0, 0, 0])
        .message()
        .starts_with("strategy.boundaries[1]"));
    assert!(with(vec![], vec![]).message().starts_with("strategy.ranges: expected 1 entries"));
}

#[test]
fn empty_scans_are_rejected() {
    let router = load(json!({"type": "key_range", "boundaries": [{"utf8": "m"}]})).unwrap();
    for (start, end) in [(Key::from("b"), Key::from("b")), (Key::from("b"), Key::from("a")), (Key::U64(1), Key::U64(0))]
    {
        let err = router.shards_for_range(start, Some(end)).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.message().starts_with("shards_for_range: end"), "{err}");
    }
    assert_eq!(router.shards_for_range(Key::U64(0), Some(Key::from("n"))).unwrap(), [0, 1]);
}
