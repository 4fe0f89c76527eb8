//! Movement and balance guarantees stated in the strategy docs, checked over many keys.

mod common;

use common::{ids, keys, router};
use proptest::prelude::*;
use shardroute::Router;

fn owners(router: &Router, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| router.node(key.as_str()).expect("node").to_string()).collect()
}

/// Checks that growing from `before` to `after` (one node more) moves only keys onto
/// the new node, and about `1/(n+1)` of them.
fn check_add_moves_only_to_new(before: &Router, after: &Router, new_id: &str, keys: &[String]) {
    let old = owners(before, keys);
    let new = owners(after, keys);
    let mut moved = 0usize;
    for ((key, a), b) in keys.iter().zip(&old).zip(&new) {
        if a != b {
            assert_eq!(b, new_id, "key {key} moved from {a} to {b}, not to the new node");
            moved += 1;
        }
    }
    let expected = keys.len() as f64 / after.nodes().len() as f64;
    let ratio = moved as f64 / expected;
    assert!((0.8..1.2).contains(&ratio), "moved {moved} keys, expected about {expected:.0}");
}

/// Checks that removing `removed_id` moves only the keys it owned.
fn check_remove_moves_only_its_keys(before: &Router, after: &Router, removed_id: &str, keys: &[String]) {
    let old = owners(before, keys);
    let new = owners(after, keys);
    let mut moved = 0usize;
    for ((key, a), b) in keys.iter().zip(&old).zip(&new) {
        if a != b {
            assert_eq!(a, removed_id, "key {key} moved from {a} to {b} though {a} stayed");
            moved += 1;
        }
        assert_ne!(b, removed_id);
    }
    let owned = old.iter().filter(|owner| *owner == removed_id).count();
    assert_eq!(moved, owned, "exactly the removed node's keys move");
}

#[test]
fn jump_adding_a_node_moves_only_keys_to_it() {
    let keys = keys(0, 20_000);
    for n in [1usize, 5, 10, 33] {
        let before = router(&ids(n), r#"{"type": "jump"}"#, None);
        let after = router(&ids(n + 1), r#"{"type": "jump"}"#, None);
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
        let before = router(&all[..n], r#"{"type": "rendezvous"}"#, None);
        let after = router(&all, r#"{"type": "rendezvous"}"#, None);
        check_add_moves_only_to_new(&before, &after, &all[n], &keys);
        // Remove a node from the middle: only its keys move, to their second choice.
        let middle = n / 2;
        let without: Vec<String> =
            all.iter().enumerate().filter(|(i, _)| *i != middle).map(|(_, id)| id.clone()).collect();
        let shrunk = router(&without, r#"{"type": "rendezvous"}"#, None);
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
    let doc = |count: usize| {
        let nodes: Vec<String> =
            (0..count).map(|i| format!("{{\"id\": \"w{i}\", \"weight\": {}}}", 1 + i % 3)).collect();
        Router::from_json(&format!(
            "{{\"format\": \"shardroute/1\", \"epoch\": 1, \"nodes\": [{}], \"strategy\": {{\"type\": \"rendezvous\"}}}}",
            nodes.join(",")
        ))
        .unwrap()
    };
    let (before, after) = (doc(6), doc(7));
    let old = owners(&before, &keys);
    let new = owners(&after, &keys);
    let moved = old.iter().zip(&new).filter(|(a, b)| a != b).count();
    assert!(old.iter().zip(&new).all(|(a, b)| a == b || b == "w6"));
    // w6 has weight 1 of a total 1+2+3+1+2+3+1 = 13.
    let expected = keys.len() as f64 / 13.0;
    assert!((moved as f64 / expected - 1.0).abs() < 0.2, "moved {moved}, expected about {expected:.0}");
}

#[test]
fn ring_adding_a_node_moves_only_keys_to_it() {
    let keys = keys(0, 20_000);
    let all = ids(9);
    let before = router(&all[..8], r#"{"type": "ring", "points_per_node": 160}"#, None);
    let after = router(&all, r#"{"type": "ring", "points_per_node": 160}"#, None);
    let old = owners(&before, &keys);
    let new = owners(&after, &keys);
    let moved = old.iter().zip(&new).filter(|(a, b)| a != b).count();
    assert!(old.iter().zip(&new).all(|(a, b)| a == b || b == "n8"), "ring keys move only to the new node");
    assert!((moved as f64 / (keys.len() as f64 / 9.0) - 1.0).abs() < 0.3, "moved {moved}");
    check_remove_moves_only_its_keys(&after, &before, "n8", &keys);
}

#[test]
fn ring_with_160_points_keeps_max_over_mean_at_most_1_25() {
    let router = router(&ids(10), r#"{"type": "ring", "points_per_node": 160}"#, None);
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
    let doc = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "one"}, {"id": "three", "weight": 3}],
                  "strategy": {"type": "ring", "points_per_node": 200}}"#;
    let router = Router::from_json(doc).unwrap();
    let heavy = keys(0, 40_000).iter().filter(|key| router.node(key.as_str()).unwrap() == "three").count();
    let share = heavy as f64 / 40_000.0;
    assert!((0.70..0.80).contains(&share), "weight 3 of 4 got {share:.3}");
}

#[test]
fn jump_and_rendezvous_balance() {
    for strategy in [r#"{"type": "jump"}"#, r#"{"type": "rendezvous"}"#, r#"{"type": "modulo"}"#] {
        let router = router(&ids(10), strategy, None);
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
        let map = serde_json::to_string(&chains).unwrap();
        let router = router(&node_ids, &format!(r#"{{"type": "vbucket", "vbuckets": {vbuckets}, "map": {map}}}"#), None);
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
        let strategy = [r#"{"type": "ring", "points_per_node": 20}"#, r#"{"type": "rendezvous"}"#, r#"{"type": "jump"}"#, r#"{"type": "modulo"}"#][kind];
        let router = router(&ids(n), strategy, None);
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
