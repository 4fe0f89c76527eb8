//! Movement and balance guarantees stated in the strategy docs, checked over many keys.

mod common;

use common::{doc, ids, keys};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::Router;

fn owners(router: &Router, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| router.node(key.as_str()).expect("node").to_string()).collect()
}

/// The keys whose owner changes from `before` to `after`, with both owners.
fn moved<'k>(before: &Router, after: &Router, keys: &'k [String]) -> Vec<(&'k String, String, String)> {
    let pairs = owners(before, keys).into_iter().zip(owners(after, keys));
    keys.iter().zip(pairs).filter(|(_, (a, b))| a != b).map(|(key, (a, b))| (key, a, b)).collect()
}

/// Checks that growing from `before` to `after` (one node more) moves only keys onto
/// the new node, and about `1/(n+1)` of them.
fn check_add_moves_only_to_new(before: &Router, after: &Router, new_id: &str, keys: &[String]) {
    let moved = moved(before, after, keys);
    for (key, a, b) in &moved {
        assert_eq!(b, new_id, "key {key} moved from {a} to {b}, not to the new node");
    }
    let expected = keys.len() as f64 / after.nodes().len() as f64;
    let ratio = moved.len() as f64 / expected;
    assert!((0.8..1.2).contains(&ratio), "moved {} keys, expected about {expected:.0}", moved.len());
}

/// Checks that removing `removed_id` moves only the keys it owned.
fn check_remove_moves_only_its_keys(before: &Router, after: &Router, removed_id: &str, keys: &[String]) {
    let moved = moved(before, after, keys);
    for (key, a, b) in &moved {
        assert_eq!(a, removed_id, "key {key} moved from {a} to {b} though {a} stayed");
    }
    assert!(owners(after, keys).iter().all(|b| b != removed_id), "no key stays on the removed node");
    let owned = owners(before, keys).iter().filter(|owner| *owner == removed_id).count();
    assert_eq!(moved.len(), owned, "exactly the removed node's keys move");
}

#[test]
fn jump_adding_a_node_moves_only_keys_to_it() {
    let keys = keys(0, 20_000);
    for n in [1usize, 5, 10, 33] {
        let before = doc(n).strategy(json!({"type": "jump"})).router();
        let after = doc(n + 1).strategy(json!({"type": "jump"})).router();
        check_add_moves_only_to_new(&before, &after, &format!("n{n}"), &keys);
        // Removing the last node is the inverse: only its keys move.
        check_remove_moves_only_its_keys(&after, &before, &format!("n{n}"), &keys);
    }
}

#[test]
fn rendezvous_moves_only_the_changed_nodes_keys() {
    let keys = keys(0, 20_000);
    for n in [2usize, 5, 10] {
        let all = ids(n + 1);
        let before = doc(&all[..n]).strategy(json!({"type": "rendezvous"})).router();
        let after = doc(&all).strategy(json!({"type": "rendezvous"})).router();
        check_add_moves_only_to_new(&before, &after, &all[n], &keys);
        // Remove a node from the middle: only its keys move, to their second choice.
        let middle = n / 2;
        let without: Vec<String> =
            all.iter().enumerate().filter(|(i, _)| *i != middle).map(|(_, id)| id.clone()).collect();
        let shrunk = doc(&without).strategy(json!({"type": "rendezvous"})).router();
        check_remove_moves_only_its_keys(&after, &shrunk, &all[middle], &keys);
        for key in keys.iter().take(2_000) {
            if after.node(key.as_str()).unwrap() == all[middle] {
                assert_eq!(shrunk.node(key.as_str()).unwrap(), after.replicas(key.as_str(), 2).unwrap()[1]);
            }
        }
    }
}

#[test]
fn weighted_rendezvous_moves_only_the_changed_nodes_keys() {
    let keys = keys(0, 20_000);
    let weighted = |count: usize| {
        let nodes: Vec<Value> = (0..count).map(|i| json!({"id": format!("w{i}"), "weight": 1 + i % 3})).collect();
        doc(json!(nodes)).strategy(json!({"type": "rendezvous"})).router()
    };
    let moved = moved(&weighted(6), &weighted(7), &keys);
    assert!(moved.iter().all(|(_, _, b)| b == "w6"));
    // w6 has weight 1 of a total 1+2+3+1+2+3+1 = 13.
    let expected = keys.len() as f64 / 13.0;
    let count = moved.len();
    assert!((count as f64 / expected - 1.0).abs() < 0.2, "moved {count}, expected about {expected:.0}");
}

#[test]
fn ring_adding_a_node_moves_only_keys_to_it() {
    let keys = keys(0, 20_000);
    let all = ids(9);
    let before = doc(&all[..8]).strategy(json!({"type": "ring", "points_per_node": 160})).router();
    let after = doc(&all).strategy(json!({"type": "ring", "points_per_node": 160})).router();
    let moved = moved(&before, &after, &keys);
    assert!(moved.iter().all(|(_, _, b)| b == "n8"), "ring keys move only to the new node");
    let count = moved.len();
    assert!((count as f64 / (keys.len() as f64 / 9.0) - 1.0).abs() < 0.3, "moved {count}");
    check_remove_moves_only_its_keys(&after, &before, "n8", &keys);
}

#[test]
fn ring_with_160_points_keeps_max_over_mean_at_most_1_25() {
    let router = doc(10).strategy(json!({"type": "ring", "points_per_node": 160})).router();
    let mut load = [0u32; 10];
    for key in keys(0, 100_000) {
        load[router.node_index(key.as_str()).unwrap() as usize] += 1;
    }
    let max = *load.iter().max().unwrap() as f64;
    let ratio = max / 10_000.0;
    assert!(ratio <= 1.25, "max/mean = {ratio:.3} with loads {load:?}");
}

#[test]
fn ring_weights_scale_load() {
    let router = doc(json!([{"id": "one"}, {"id": "three", "weight": 3}]))
        .strategy(json!({"type": "ring", "points_per_node": 200}))
        .router();
    let heavy = keys(0, 40_000).iter().filter(|key| router.node(key.as_str()).unwrap() == "three").count();
    let share = heavy as f64 / 40_000.0;
    assert!((0.70..0.80).contains(&share), "weight 3 of 4 got {share:.3}");
}

#[test]
fn jump_and_rendezvous_balance() {
    for strategy in [json!({"type": "jump"}), json!({"type": "rendezvous"}), json!({"type": "modulo"})] {
        let router = doc(10).strategy(strategy.clone()).router();
        let mut load = [0u32; 10];
        for key in keys(0, 100_000) {
            load[router.node_index(key.as_str()).unwrap() as usize] += 1;
        }
        let max = *load.iter().max().unwrap() as f64 / 10_000.0;
        assert!(max < 1.05, "{strategy}: max/mean {max:.3}, loads {load:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Vbucket routing equals its table: node(key) is the head of the chain of
    /// vbucket `hash(key) % V`, and replicas are the chain.
    #[test]
    fn vbucket_routing_equals_its_table(
        vbuckets in 1u32..64,
        seed_map in proptest::collection::vec(proptest::collection::vec(0usize..5, 1..4), 64),
        key_list in proptest::collection::vec(any::<Vec<u8>>(), 1..40),
        ints in proptest::collection::vec(any::<u64>(), 1..40),
    ) {
        let node_ids = ids(5);
        let chains: Vec<Vec<String>> = (0..vbuckets as usize).map(|v| {
            let mut chain: Vec<String> = Vec::new();
            for &n in &seed_map[v] {
                if !chain.contains(&node_ids[n]) { chain.push(node_ids[n].clone()); }
            }
            chain
        }).collect();
        let router = doc(&node_ids).strategy(json!({"type": "vbucket", "vbuckets": vbuckets, "map": chains})).router();
        for key in &key_list {
            let hash = router.hash(key.as_slice());
            let vbucket = (hash % u64::from(vbuckets)) as u32;
            prop_assert_eq!(router.route(key.as_slice()).unwrap(), vbucket);
            let chain = &chains[vbucket as usize];
            prop_assert_eq!(router.node(key.as_slice()).unwrap(), chain[0].as_str());
            let replicas = router.replicas(key.as_slice(), chain.len() as u32).unwrap();
            prop_assert_eq!(replicas, chain.iter().map(String::as_str).collect::<Vec<_>>());
        }
        for &value in &ints {
            let vbucket = (router.hash(value) % u64::from(vbuckets)) as u32;
            prop_assert_eq!(router.node(value).unwrap(), chains[vbucket as usize][0].as_str());
        }
    }

    /// Replicas are distinct, start with the owner, and are a prefix of longer lists.
    #[test]
    fn replicas_are_distinct_prefixes(key in any::<Vec<u8>>(), n in 1usize..12, kind in 0usize..4) {
        let strategy = [json!({"type": "ring", "points_per_node": 20}), json!({"type": "rendezvous"}), json!({"type": "jump"}), json!({"type": "modulo"})];
        let router = doc(n).strategy(strategy[kind].clone()).router();
        let all = router.replicas(key.as_slice(), n as u32).unwrap();
        prop_assert_eq!(all[0], router.node(key.as_slice()).unwrap());
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        prop_assert_eq!(sorted.len(), n);
        for count in 1..=n as u32 {
            prop_assert_eq!(&router.replicas(key.as_slice(), count).unwrap()[..], &all[..count as usize]);
        }
    }
}
