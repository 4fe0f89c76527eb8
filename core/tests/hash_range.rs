//! Hash-range sharding: routing against a scan written from the definition, the equal
//! widths of the default table, balance, the document's defaults and rejections.

mod common;

use common::{doc, range_doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::strategy::partitioned::hash_range::uniform_boundaries;
use shardroute::{Key, Router};

/// A table with `boundaries` written as decimal strings.
fn table(boundaries: &[u64], owners: &[usize], nodes: usize, hashing: Value) -> Router {
    range_doc("hash_range", boundaries.iter().map(|b| json!(b.to_string())), owners, nodes).hashing(hashing).router()
}

/// The range of `hash` by the definition: `lo_i <= hash < hi_i`.
fn naive_range(boundaries: &[u64], hash: u64) -> usize {
    (0..=boundaries.len())
        .find(|&i| (i == 0 || boundaries[i - 1] <= hash) && (i == boundaries.len() || hash < boundaries[i]))
        .expect("the ranges cover the hash space")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn routing_matches_the_definition(nodes in 1usize..6, cuts in proptest::collection::btree_set(1u64.., 0..10), owner_seed in any::<u64>(), keys in proptest::collection::vec(any::<Vec<u8>>(), 1..20), ints in proptest::collection::vec(any::<u64>(), 1..20)) {
        let boundaries: Vec<u64> = cuts.into_iter().collect();
        let owners: Vec<usize> = (0..=boundaries.len()).map(|i| (owner_seed.rotate_left(i as u32 * 7) % nodes as u64) as usize).collect();
        let router = table(&boundaries, &owners, nodes, json!({}));
        for key in &keys {
            let range = naive_range(&boundaries, router.hash(key.as_slice()));
            prop_assert_eq!(router.route(key.as_slice()).unwrap(), range as u32);
            prop_assert_eq!(router.node(key.as_slice()).unwrap(), format!("n{}", owners[range]));
            let replicas = router.replicas(key.as_slice(), nodes as u32).unwrap();
            let expected: Vec<String> = (0..nodes).map(|step| format!("n{}", (owners[range] + step) % nodes)).collect();
            prop_assert_eq!(replicas, expected);
        }
        // Identity hashing: integer keys are positions, so boundaries themselves and their
        // neighbours are probed exactly.
        let identity = table(&boundaries, &owners, nodes, json!({"integers": "identity"}));
        let probes = ints.iter().copied().chain(boundaries.iter().flat_map(|&b| [b - 1, b, b.saturating_add(1)])).chain([0, u64::MAX]);
        for value in probes {
            prop_assert_eq!(identity.route(value).unwrap(), naive_range(&boundaries, value) as u32);
        }
    }

    #[test]
    fn uniform_widths_differ_by_at_most_one(ranges in 1u32..5000) {
        let boundaries = uniform_boundaries(ranges);
        prop_assert_eq!(boundaries.len() as u32, ranges - 1);
        let mut edges: Vec<u128> = vec![0];
        edges.extend(boundaries.iter().map(|&b| u128::from(b)));
        edges.push(1 << 64);
        let floor = (1u128 << 64) / u128::from(ranges);
        for pair in edges.windows(2) {
            let width = pair[1] - pair[0];
            prop_assert!(width == floor || width == floor + 1, "width {width} vs {floor}");
        }
    }

    #[test]
    fn a_scan_visits_every_shard(nodes in 1usize..6, start in any::<Vec<u8>>(), end in any::<Vec<u8>>()) {
        let router = doc(nodes).strategy(json!({"type": "hash_range"})).router();
        let result = router.shards_for_range(start.as_slice(), Some(Key::Bytes(&end)));
        prop_assert_eq!(result.unwrap(), (0..nodes as u32).collect::<Vec<_>>());
        prop_assert_eq!(router.shards_for_range(start.as_slice(), None).unwrap().len(), nodes);
    }
}

fn load(strategy: Value) -> Result<Router, shardroute::Error> {
    doc(&["a", "b", "c", "d"]).strategy(strategy).load()
}

fn strategy_of(router: &Router) -> Value {
    serde_json::from_str::<Value>(&router.to_json()).unwrap()["strategy"].clone()
}

#[test]
fn defaults_and_canonical_form() {
    let quarter = [json!("4611686018427387904"), json!("9223372036854775808"), json!("13835058055282163712")];
    let all = load(json!({"type": "hash_range"})).unwrap();
    assert_eq!(strategy_of(&all), json!({"type": "hash_range", "boundaries": quarter, "ranges": ["a", "b", "c", "d"]}));
    let from_ranges = load(json!({"type": "hash_range", "ranges": ["d", "d"]})).unwrap();
    assert_eq!(
        strategy_of(&from_ranges),
        json!({"type": "hash_range", "boundaries": ["9223372036854775808"], "ranges": ["d", "d"]})
    );
    let from_boundaries = load(json!({"type": "hash_range", "boundaries": [10, "20", 30, 40, 50]})).unwrap();
    assert_eq!(
        strategy_of(&from_boundaries),
        json!({"type": "hash_range", "boundaries": [10, 20, 30, 40, 50], "ranges": ["a", "b", "c", "d", "a", "b"]})
    );
    for router in [all, from_ranges, from_boundaries] {
        let again = Router::from_json(&router.to_json()).unwrap();
        assert_eq!(again.topology(), router.topology());
    }
}

#[test]
fn equal_ranges_balance_keys() {
    let router = doc(8).strategy(json!({"type": "hash_range"})).router();
    let mut counts = [0u32; 8];
    let keys = 80_000;
    for i in 0..keys {
        counts[router.route(format!("key:{i}").as_str()).unwrap() as usize] += 1;
    }
    // Sequential keys too: hashing spreads them. Mean 10 000, sd ~95: 5% is > 5 sd.
    for count in counts {
        assert!((9_500..=10_500).contains(&count), "{counts:?}");
    }
}

#[test]
fn hash_tags_co_locate() {
    let router = doc(16).strategy(json!({"type": "hash_range"})).hashing(json!({"hash_tag": "redis"})).router();
    for user in 0..50 {
        let shard = router.route(format!("{{user{user}}}.following").as_str()).unwrap();
        assert_eq!(router.route(format!("{{user{user}}}.followers").as_str()).unwrap(), shard);
    }
}

#[test]
fn rejected_documents_name_the_field() {
    let cases: &[(Value, &str, &str)] = &[
        (
            json!({"type": "hash_range", "boundaries": [0, 5]}),
            "invalid_topology",
            "strategy.boundaries[0]: the lowest position",
        ),
        (
            json!({"type": "hash_range", "boundaries": [5, 5]}),
            "invalid_topology",
            "strategy.boundaries[1]: must be greater than boundaries[0]",
        ),
        (
            json!({"type": "hash_range", "boundaries": ["9", 8]}),
            "invalid_topology",
            "strategy.boundaries[1]: must be greater",
        ),
        (
            json!({"type": "hash_range", "boundaries": ["18446744073709551616"]}),
            "invalid_topology",
            "strategy.boundaries[0]: expected an integer",
        ),
        (
            json!({"type": "hash_range", "boundaries": [-1]}),
            "invalid_topology",
            "strategy.boundaries[0]: expected an integer",
        ),
        (
            json!({"type": "hash_range", "boundaries": [1.5]}),
            "invalid_topology",
            "strategy.boundaries[0]: expected an integer",
        ),
        (
            json!({"type": "hash_range", "boundaries": [1], "ranges": ["a", "b", "c"]}),
            "invalid_topology",
            "strategy.ranges: expected 2 entries",
        ),
        (
            json!({"type": "hash_range", "ranges": ["a", "x"]}),
            "invalid_topology",
            "strategy.ranges[1]: names node \"x\"",
        ),
        (
            json!({"type": "hash_range", "ranges": []}),
            "invalid_topology",
            "strategy.ranges: a table needs at least one range",
        ),
        (json!({"type": "hash_range", "ranges": "a"}), "invalid_topology", "strategy.ranges: expected an array"),
        (
            json!({"type": "hash_range", "ranges": vec!["a"; (1 << 20) + 1]}),
            "limit_exceeded",
            "strategy.ranges: 1048577 ranges",
        ),
        (
            json!({"type": "hash_range", "boundaries": vec![1; 1 << 20]}),
            "limit_exceeded",
            "strategy.boundaries: 1048576 boundaries",
        ),
    ];
    for (strategy, code, message) in cases {
        let err = load(strategy.clone()).unwrap_err();
        assert_eq!(err.code(), *code, "{strategy}: {err}");
        assert!(err.message().starts_with(message), "{strategy}: {err}");
    }
}

#[test]
fn the_maximum_table_loads() {
    let router = load(json!({"type": "hash_range", "ranges": vec!["b"; 1 << 20]})).unwrap();
    assert_eq!(router.shard_range(), 0..1 << 20);
    assert_eq!(router.node("anything").unwrap(), "b");
}
