//! Naive, obviously-correct versions of the fast paths, and the core checked against them.

mod common;

use common::doc;
use proptest::prelude::*;
use serde_json::json;
use shardroute::Router;

/// The ring by linear scan: rebuild every point, pick the smallest position >= hash
/// (ties: lowest node index, then point number), else the smallest position overall.
fn naive_ring_owner(router: &Router, points_per_node: u32, hash: u64) -> usize {
    let mut best_at_or_after: Option<(u64, usize, u32)> = None;
    let mut lowest: Option<(u64, usize, u32)> = None;
    for (index, node) in router.nodes().iter().enumerate() {
        let count = ((f64::from(points_per_node) * node.weight).round() as u32).max(1);
        for point in 0..count {
            let position = router.hashing().hash_bytes(format!("{}#{}", node.id, point).as_bytes());
            let candidate = (position, index, point);
            if lowest.is_none_or(|l| candidate < l) {
                lowest = Some(candidate);
            }
            if position >= hash && best_at_or_after.is_none_or(|b| candidate < b) {
                best_at_or_after = Some(candidate);
            }
        }
    }
    best_at_or_after.or(lowest).unwrap().1
}

/// MurmurHash3 fmix64, written out again for the oracle.
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

/// Rendezvous by sorting every node's score (the documented formula, written plainly).
fn naive_rendezvous(router: &Router, hash: u64) -> Vec<usize> {
    let nodes = router.nodes();
    let uniform = nodes.iter().all(|n| n.weight == nodes[0].weight);
    let mut scored: Vec<(f64, u64, usize)> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let bits = fmix64(hash ^ router.hashing().hash_bytes(node.id.as_bytes())) >> 11;
            let unit = (bits as f64 + 0.5) / 9_007_199_254_740_992.0;
            let weighted = if uniform { 0.0 } else { -node.weight / libm::log(unit) };
            (weighted, bits, i)
        })
        .collect();
    scored.sort_by(|a, b| {
        let primary = if uniform { b.1.cmp(&a.1) } else { b.0.partial_cmp(&a.0).unwrap() };
        primary.then(a.2.cmp(&b.2))
    });
    scored.into_iter().map(|s| s.2).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn ring_matches_linear_scan(n in 1usize..8, points in 1u32..30, keys in proptest::collection::vec(any::<Vec<u8>>(), 1..30)) {
        let router = doc(n).strategy(json!({"type": "ring", "points_per_node": points})).router();
        for key in &keys {
            let hash = router.hash(key.as_slice());
            prop_assert_eq!(router.node_index(key.as_slice()).unwrap() as usize, naive_ring_owner(&router, points, hash));
        }
    }

    #[test]
    fn ring_with_identity_keys_matches_linear_scan_at_exact_points(n in 1usize..6, points in 1u32..10) {
        // With identity integer hashing a u64 key is its own hash, so keys can sit exactly
        // on a point, one below it, and at the ends of the circle.
        let router = doc(n).strategy(json!({"type": "ring", "points_per_node": points})).hashing(json!({"integers": "identity"})).router();
        let mut probes = vec![0u64, 1, u64::MAX];
        for node in router.nodes() {
            let position = router.hashing().hash_bytes(format!("{}#0", node.id).as_bytes());
            probes.extend([position, position.wrapping_sub(1), position.wrapping_add(1)]);
        }
        for hash in probes {
            prop_assert_eq!(router.node_index(hash).unwrap() as usize, naive_ring_owner(&router, points, hash));
        }
    }

    #[test]
    fn rendezvous_matches_sorting(n in 1usize..10, weighted in any::<bool>(), keys in proptest::collection::vec(any::<u64>(), 1..30)) {
        let nodes: Vec<_> = (0..n).map(|i| {
            let mut node = json!({"id": format!("r{i}")});
            if weighted { node["weight"] = json!(0.5 + (i % 4) as f64); }
            node
        }).collect();
        let router = doc(json!(nodes)).strategy(json!({"type": "rendezvous"})).router();
        for &key in &keys {
            let order = naive_rendezvous(&router, router.hash(key));
            prop_assert_eq!(router.node_index(key).unwrap() as usize, order[0]);
            let replicas: Vec<String> = router.replicas(key, n as u32).unwrap().into_iter().map(String::from).collect();
            let expected: Vec<String> = order.iter().map(|&i| router.nodes()[i].id.clone()).collect();
            prop_assert_eq!(replicas, expected);
        }
    }

    #[test]
    fn modulo_is_remainder(n in 1usize..50, ints in proptest::collection::vec(any::<u64>(), 1..50)) {
        let identity = json!({"integers": "identity"});
        let plain = doc(n).strategy(json!({"type": "modulo"})).hashing(identity.clone()).router();
        let one_based = doc(n).strategy(json!({"type": "modulo", "one_based": true})).hashing(identity).router();
        for &id in &ints {
            prop_assert_eq!(u64::from(plain.route(id).unwrap()), id % n as u64);
            let expected = if id % n as u64 == 0 { n as u64 } else { id % n as u64 };
            prop_assert_eq!(u64::from(one_based.route(id).unwrap()), expected);
            prop_assert_eq!(one_based.node(id).unwrap(), format!("n{}", expected - 1));
        }
    }

    #[test]
    fn modulo_moves_say_where_every_key_goes(hash in any::<u64>(), old in 1u32..64, factor in 1u32..9) {
        let new = old * factor;
        let grow = shardroute::strategy::hashed::modulo::moves(old, new).unwrap();
        let (before, after) = ((hash % u64::from(old)) as u32, (hash % u64::from(new)) as u32);
        prop_assert!(grow[before as usize].contains(&after));
        prop_assert_eq!(grow[before as usize][0], before);
        let shrink = shardroute::strategy::hashed::modulo::moves(new, old).unwrap();
        prop_assert_eq!(&shrink[after as usize], &vec![before]);
    }

    #[test]
    fn jump_stays_in_range_and_only_moves_to_the_new_bucket(hash in any::<u64>(), n in 1u32..100_000) {
        let a = shardroute::jump(hash, n).unwrap();
        let b = shardroute::jump(hash, n + 1).unwrap();
        prop_assert!(a < n && b <= n);
        prop_assert!(a == b || b == n);
    }
}
