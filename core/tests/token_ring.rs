//! Token ring: a naive oracle of ownership and replicas, the `(previous, token]` rule
//! at its edges, generated tokens, movement on add and remove measured exactly (with
//! the donors of a new node counted), ownership, the document, and the operations.

mod common;

use common::doc;
use proptest::prelude::*;
use serde_json::json;
use shardroute::disruption::{self, Method};
use shardroute::strategy::partitioned::token_ring::{fnv1a64, generated_tokens, TokenRing, TokenRingSpec};
use shardroute::{ops, Node, Router, Topology};

fn node(id: &str) -> Node {
    Node { id: id.to_string(), address: None, weight: 1.0, zone: None, state: Default::default() }
}

fn nodes(count: usize) -> Vec<Node> {
    (0..count).map(|i| node(&format!("n{i}"))).collect()
}

fn spec(tokens_per_node: u32, token_seed: u64) -> TokenRingSpec {
    TokenRingSpec { tokens_per_node, token_seed, tokens: Vec::new() }
}

/// Naive ownership: every `(token, node)` pair, the smallest token `>= key` (ties to
/// the smaller id), else the smallest token overall.
fn naive_owner(pairs: &[(i64, u32)], nodes: &[Node], hash: u64) -> u32 {
    let key = hash as i64;
    let rank = |p: &(i64, u32)| (p.0, nodes[p.1 as usize].id.clone());
    let at_or_after = pairs.iter().filter(|p| p.0 >= key).min_by_key(|p| rank(p));
    at_or_after.or_else(|| pairs.iter().min_by_key(|p| rank(p))).expect("tokens").1
}

fn pairs(spec: &TokenRingSpec, nodes: &[Node]) -> Vec<(i64, u32)> {
    (0..nodes.len() as u32).flat_map(|i| spec.tokens_of(i, nodes).unwrap().into_iter().map(move |t| (t, i))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn owner_and_replicas_match_the_naive_ring(
        count in 1usize..8,
        per_node in 1u32..6,
        seed in any::<u64>(),
        explicit in proptest::collection::vec(proptest::collection::btree_set(any::<i64>(), 1..4), 0..3),
        hashes in proptest::collection::vec(any::<u64>(), 1..40),
    ) {
        let nodes = nodes(count);
        let mut spec = spec(per_node, seed);
        let mut used = std::collections::BTreeSet::new();
        for (index, tokens) in explicit.into_iter().enumerate().take(count) {
            let tokens: Vec<i64> = tokens.into_iter().filter(|t| used.insert(*t)).collect();
            if !tokens.is_empty() {
                spec.tokens.push((index as u32, tokens));
            }
        }
        let ring = TokenRing::new(&spec, &nodes).unwrap();
        let all = pairs(&spec, &nodes);
        // Probe the tokens themselves and their neighbours: the edges of every range.
        let mut probes: Vec<u64> = hashes;
        for &(token, _) in &all {
            probes.extend([token as u64, (token as u64).wrapping_add(1), (token as u64).wrapping_sub(1)]);
        }
        let mut out = Vec::new();
        for hash in probes {
            let owner = naive_owner(&all, &nodes, hash);
            prop_assert_eq!(ring.node_of(hash), owner);
            ring.replicas_of(hash, count as u32, &mut out);
            prop_assert_eq!(out[0], owner);
            // Naive replicas: walk the sorted pairs from the owner's token.
            let mut sorted = all.clone();
            sorted.sort_by_key(|p| (p.0, nodes[p.1 as usize].id.clone()));
            let start = sorted.iter().position(|p| p.0 >= hash as i64).unwrap_or(0);
            let mut expected: Vec<u32> = Vec::new();
            for step in 0..sorted.len() {
                let owner = sorted[(start + step) % sorted.len()].1;
                if !expected.contains(&owner) {
                    expected.push(owner);
                }
            }
            prop_assert_eq!(&out, &expected);
        }
        let total: u128 = ring.ownership().iter().sum();
        prop_assert_eq!(total, 1u128 << 64);
    }
}

/// A node owns `(previous token, token]`: the token itself is inside, the one after it
/// is not, and the ring wraps from `2^63 - 1` to `-2^63`.
#[test]
fn ranges_are_open_below_and_closed_above() {
    // Cassandra's evenly spaced tokens for three nodes (Murmur3Partitioner).
    let ring = doc(&["a", "b", "c"])
        .strategy(json!({"type": "token_ring", "tokens": {
            "a": ["-9223372036854775808"], "b": ["-3074457345618258603"], "c": [3074457345618258602i64]}}))
        .hashing(json!({"integers": "identity"}))
        .router();
    let at = |token: i64| ring.node(token as u64).unwrap().to_string();
    assert_eq!(at(i64::MIN), "a");
    assert_eq!(at(i64::MIN + 1), "b");
    assert_eq!(at(-3074457345618258603), "b");
    assert_eq!(at(-3074457345618258602), "c");
    assert_eq!(at(-1), "c");
    assert_eq!(at(0), "c");
    assert_eq!(at(3074457345618258602), "c");
    assert_eq!(at(3074457345618258603), "a");
    assert_eq!(at(i64::MAX), "a");
    assert_eq!(ring.replicas(u64::MAX, 3).unwrap(), ["c", "a", "b"]);
}

#[test]
fn generated_tokens_are_a_seeded_stream() {
    let long = generated_tokens(7, "db-1", 16);
    assert_eq!(generated_tokens(7, "db-1", 4), long[..4]);
    assert_ne!(generated_tokens(8, "db-1", 4), long[..4]);
    assert_ne!(generated_tokens(7, "db-2", 4), long[..4]);
    // The stream is SplitMix64 from `seed ^ fnv1a64(id)`: cancelling the id gives the
    // generator's reference outputs for seed 1234567.
    assert_eq!(generated_tokens(1234567 ^ fnv1a64(b"x"), "x", 2), [6457827717110365317, 3203168211198807973]);
    // Weights scale the count: round(T * w).
    let weighted = [Node { weight: 2.5, ..node("heavy") }, node("light")];
    let spec = spec(8, 0);
    assert_eq!(spec.tokens_of(0, &weighted).unwrap().len(), 20);
    assert_eq!(spec.tokens_of(1, &weighted).unwrap().len(), 8);
}

#[test]
fn ownership_follows_tokens_and_weights() {
    let nodes = nodes(10);
    let ring = TokenRing::new(&spec(256, 0), &nodes).unwrap();
    let fair = (1u128 << 64) / 10;
    for share in ring.ownership() {
        let ratio = share as f64 / fair as f64;
        assert!((0.75..1.30).contains(&ratio), "share {ratio:.3} of fair");
    }
    // Keys follow the exact shares.
    let router = doc(3).strategy(json!({"type": "token_ring", "tokens_per_node": 8, "token_seed": 99})).router();
    let ring = TokenRing::new(&spec(8, 99), &nodes[..3]).unwrap();
    let shares = ring.ownership();
    let mut counts = [0u32; 3];
    for i in 0..60_000 {
        counts[router.route(format!("key:{i}").as_str()).unwrap() as usize] += 1;
    }
    for (count, share) in counts.iter().zip(shares) {
        let expected = 60_000.0 * share as f64 / 2f64.powi(64);
        assert!((f64::from(*count) - expected).abs() < 5.0 * expected.sqrt() + 10.0, "{count} vs {expected:.0}");
    }
    // A weight-2 node holds twice the tokens and, over many nodes, about twice the share.
    let mut weighted = nodes.clone();
    weighted[0].weight = 2.0;
    let ring = TokenRing::new(&spec(256, 0), &weighted).unwrap();
    let shares = ring.ownership();
    let ratio = shares[0] as f64 / (shares[1..].iter().sum::<u128>() as f64 / 9.0);
    assert!((1.6..2.4).contains(&ratio), "weight 2 owns {ratio:.2} times the average");
}

/// Adding a node: only keys that land on its tokens move, all to it; the measure moved
/// is exactly its ownership; its donors are the owners of the ranges its tokens fall
/// in, several of them.
#[test]
fn adding_a_node_takes_slices_from_several_nodes() {
    let mut donor_counts = Vec::new();
    for (count, per_node, seed) in [(10usize, 8u32, 0u64), (10, 8, 1), (20, 8, 2), (5, 16, 3), (50, 8, 4)] {
        let all = nodes(count + 1);
        let spec = spec(per_node, seed);
        let before = TokenRing::new(&spec, &all[..count]).unwrap();
        let after = TokenRing::new(&spec, &all).unwrap();
        let report = disruption::token_rings(&before, &all[..count], &after, &all);
        assert_eq!(report.method, Method::Ring);
        assert!(report.moves.iter().all(|m| m.to == all[count].id), "{:?}", report.moves);
        assert_eq!(report.changed, after.ownership()[count]);
        // Donors, naively: the owner before of each new token's position.
        let mut donors: Vec<u32> =
            spec.tokens_of(count as u32, &all).unwrap().iter().map(|&t| before.node_of(t as u64)).collect();
        donors.sort_unstable();
        donors.dedup();
        let reported: Vec<&str> = report.moves.iter().map(|m| m.from.as_str()).collect();
        let naive: Vec<&str> = donors.iter().map(|&d| all[d as usize].id.as_str()).collect();
        let mut reported_sorted = reported.clone();
        reported_sorted.sort_unstable();
        let mut naive_sorted = naive.clone();
        naive_sorted.sort_unstable();
        assert_eq!(reported_sorted, naive_sorted);
        assert!(donors.len() >= 4, "{count} nodes, {per_node} tokens: only {} donors", donors.len());
        donor_counts.push(donors.len());
        // Keys agree with the exact measure.
        let mut moved = 0u32;
        for i in 0..20_000u64 {
            let hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (a, b) = (before.node_of(hash), after.node_of(hash));
            if a != b {
                assert_eq!(b as usize, count);
                moved += 1;
            }
        }
        let expected = 20_000.0 * report.fraction();
        assert!((f64::from(moved) - expected).abs() < 5.0 * expected.sqrt() + 10.0, "{moved} vs {expected:.0}");
    }
    assert!(donor_counts.iter().sum::<usize>() >= 5 * 5, "{donor_counts:?}");
}

#[test]
fn removing_a_node_moves_only_its_ranges_to_the_next_token() {
    let all = nodes(12);
    let spec = spec(8, 42);
    let before = TokenRing::new(&spec, &all).unwrap();
    let gone = 5usize;
    let kept: Vec<Node> = all.iter().enumerate().filter(|(i, _)| *i != gone).map(|(_, n)| n.clone()).collect();
    let after = TokenRing::new(&spec, &kept).unwrap();
    let report = disruption::token_rings(&before, &all, &after, &kept);
    assert!(report.moves.iter().all(|m| m.from == all[gone].id));
    assert_eq!(report.changed, before.ownership()[gone]);
    let mut out = Vec::new();
    for i in 0..20_000u64 {
        let hash = i.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let a = before.node_of(hash);
        let b = kept[after.node_of(hash) as usize].id.as_str();
        if a as usize == gone {
            // To its second replica: the next token of another node.
            before.replicas_of(hash, 2, &mut out);
            assert_eq!(b, all[out[1] as usize].id);
        } else {
            assert_eq!(b, all[a as usize].id);
        }
    }
}

#[test]
fn node_order_does_not_matter() {
    let ids = ["a", "b", "c", "d", "e"];
    let reversed = ["e", "d", "c", "b", "a"];
    let strategy = json!({"type": "token_ring", "token_seed": "18446744073709551615", "tokens": {"c": [5, "-5"]}});
    let x = doc(&ids).strategy(strategy.clone()).router();
    let y = doc(&reversed).strategy(strategy).router();
    for i in 0..3_000 {
        let key = format!("user:{i}");
        assert_eq!(x.node(key.as_str()).unwrap(), y.node(key.as_str()).unwrap());
        assert_eq!(x.replicas(key.as_str(), 3).unwrap(), y.replicas(key.as_str(), 3).unwrap());
    }
}

#[test]
fn canonical_form_round_trips() {
    let strategy = json!({"type": "token_ring", "tokens_per_node": 3, "token_seed": 9007199254740993u64,
        "tokens": {"b": [3, "-9223372036854775808", "9223372036854775807"]}});
    let router = doc(&["a", "b", "c"]).strategy(strategy).router();
    let canonical = router.to_json();
    assert!(canonical.contains(r#""token_seed":"9007199254740993""#), "{canonical}");
    assert!(canonical.contains(r#""tokens":{"b":["-9223372036854775808","3","9223372036854775807"]}"#), "{canonical}");
    assert!(canonical.contains(r#""tokens_per_node":3"#));
    let again = Router::from_json(&canonical).unwrap();
    assert_eq!(again.topology(), router.topology());
    assert_eq!(again.to_json(), canonical);
    let defaults = doc(&["a"]).strategy(json!({"type": "token_ring"})).router();
    assert!(defaults.to_json().contains(r#""strategy":{"token_seed":0,"tokens_per_node":8,"type":"token_ring"}"#));
}

#[test]
fn bad_documents_are_refused_with_the_field() {
    let cases = [
        (json!({"type": "token_ring", "tokens_per_node": 0}), "invalid_topology", "strategy.tokens_per_node"),
        (json!({"type": "token_ring", "tokens_per_node": 65537}), "limit_exceeded", "strategy.tokens_per_node"),
        (json!({"type": "token_ring", "token_seed": -1}), "invalid_topology", "strategy.token_seed"),
        (json!({"type": "token_ring", "token_seed": 1.5}), "invalid_topology", "strategy.token_seed"),
        (json!({"type": "token_ring", "tokens": []}), "invalid_topology", "strategy.tokens"),
        (json!({"type": "token_ring", "tokens": {"z": [1]}}), "invalid_topology", "strategy.tokens[\"z\"]"),
        (json!({"type": "token_ring", "tokens": {"a": []}}), "invalid_topology", "strategy.tokens[\"a\"]"),
        (json!({"type": "token_ring", "tokens": {"a": [1, 1]}}), "invalid_topology", "strategy.tokens[\"a\"][1]"),
        (
            json!({"type": "token_ring", "tokens": {"a": [1], "b": ["1"]}}),
            "invalid_topology",
            "strategy.tokens[\"b\"][0]",
        ),
        (
            json!({"type": "token_ring", "tokens": {"a": ["9223372036854775808"]}}),
            "invalid_topology",
            "strategy.tokens[\"a\"][0]",
        ),
        (
            json!({"type": "token_ring", "tokens": {"a": ["-9223372036854775809"]}}),
            "invalid_topology",
            "strategy.tokens[\"a\"][0]",
        ),
        (json!({"type": "token_ring", "tokens": {"a": [1.5]}}), "invalid_topology", "strategy.tokens[\"a\"][0]"),
        (json!({"type": "token_ring", "tokens": {"a": ["+1"]}}), "invalid_topology", "strategy.tokens[\"a\"][0]"),
        (json!({"type": "token_ring", "tokens": {"a": ["- 1"]}}), "invalid_topology", "strategy.tokens[\"a\"][0]"),
        (json!({"type": "token_ring", "points_per_node": 8}), "invalid_topology", "strategy.points_per_node"),
    ];
    for (strategy, code, path) in cases {
        let err = doc(&["a", "b"]).strategy(strategy.clone()).load().unwrap_err();
        assert_eq!(err.code(), code, "{strategy}: {err}");
        assert!(err.message().starts_with(path), "{strategy}: {err}");
    }
    // Explicit tokens fix a node's share: a weight on it is refused.
    let weighted = doc(&["a", "b"]).strategy(json!({"type": "token_ring", "tokens": {"a": [1]}})).node_field(
        0,
        "weight",
        json!(2),
    );
    let err = weighted.load().unwrap_err();
    assert!(err.message().starts_with("nodes[0].weight"), "{err}");
    // 32-bit key hashes cannot spread over a 64-bit ring.
    let crc = doc(&["a", "b"]).strategy(json!({"type": "token_ring"})).hashing(json!({"function": "crc32"}));
    let err = crc.load().unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("hashing.function"), "{err}");
    // Too many tokens in all.
    let err = doc(300).strategy(json!({"type": "token_ring", "tokens_per_node": 65536})).load().unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
}

#[test]
fn operations_keep_explicit_tokens_consistent() {
    let topology =
        doc(&["a", "b", "c"]).strategy(json!({"type": "token_ring", "tokens": {"b": ["-5", "7"]}})).topology();
    let added = ops::apply(&topology, &json!({"op": "add_node", "node": {"id": "d"}})).unwrap();
    assert_eq!(added["added"], "d");
    let report = &added["disruption"];
    assert_eq!(report["method"], "ring");
    assert_eq!(report["total"], "18446744073709551616");
    assert!(report["moves"].as_array().unwrap().iter().all(|m| m["to"] == "d"));
    let next = Topology::from_value(&added["topology"]).unwrap();
    assert_eq!(next.epoch, 2);
    let expected = disruption::between(&topology, &next).unwrap();
    assert_eq!(report, &expected.to_value());

    // Removing the node with explicit tokens drops them from the document.
    let removed = ops::apply(&next, &json!({"op": "remove_node", "id": "b"})).unwrap();
    let strategy = &removed["topology"]["strategy"];
    assert!(strategy.get("tokens").is_none() || strategy["tokens"].get("b").is_none(), "{strategy}");
    assert!(removed["disruption"]["moves"].as_array().unwrap().iter().all(|m| m["from"] == "b"));
    Topology::from_value(&removed["topology"]).unwrap();

    // The disruption operation compares with any document, here a modulo one (sampled).
    let to = doc(&["a", "b", "c"]).strategy(json!({"type": "modulo"})).value();
    let compared = ops::apply(&topology, &json!({"op": "disruption", "to": to})).unwrap();
    assert_eq!(compared["disruption"]["method"], "sample");
    assert_eq!(compared["disruption"]["total"], 16_384);
    assert_eq!(compared["topology"]["epoch"], 2);
    assert_eq!(compared["topology"]["strategy"]["type"], "modulo");
    // Bad arguments.
    for (operation, code) in [
        (json!({"op": "disruption"}), "invalid_argument"),
        (json!({"op": "disruption", "to": "{}"}), "invalid_argument"),
        (json!({"op": "disruption", "to": {}, "extra": 1}), "invalid_argument"),
        (json!({"op": "disruption", "to": {"format": "shardroute/1"}}), "invalid_topology"),
        (json!({"op": "disruption", "to": doc(0).strategy(json!({"type": "jump"})).value()}), "no_nodes"),
    ] {
        let err = ops::apply(&topology, &operation).unwrap_err();
        assert_eq!(err.code(), code, "{operation}: {err}");
    }
}

/// Equal tokens: the node whose id sorts first owns the range, whatever the list order;
/// the other owns an empty range but still serves as a replica.
#[test]
fn equal_tokens_go_to_the_smaller_id() {
    let generated = generated_tokens(0, "a", 1)[0];
    for ids in [["a", "b"], ["b", "a"]] {
        let strategy = json!({"type": "token_ring", "tokens_per_node": 1, "tokens": {"b": [generated.to_string()]}});
        let router = doc(&ids).strategy(strategy).hashing(json!({"integers": "identity"})).router();
        assert_eq!(router.node(generated as u64).unwrap(), "a");
        assert_eq!(router.replicas(generated as u64, 2).unwrap(), ["a", "b"]);
        let ring = TokenRing::new(
            &TokenRingSpec {
                tokens_per_node: 1,
                token_seed: 0,
                tokens: vec![(ids.iter().position(|&i| i == "b").unwrap() as u32, vec![generated])],
            },
            &ids.iter().map(|id| node(id)).collect::<Vec<_>>(),
        )
        .unwrap();
        let a = ids.iter().position(|&i| i == "a").unwrap() as u32;
        let b = 1 - a;
        assert_eq!(ring.node_of(generated as u64), a);
        assert_eq!(ring.node_of((generated as u64).wrapping_add(1)), a);
        let shares = ring.ownership();
        assert_eq!(shares[a as usize], 1 << 64);
        assert_eq!(shares[b as usize], 0);
        let mut out = Vec::new();
        ring.replicas_of(12345, 2, &mut out);
        assert_eq!(out, [a, b]);
    }
}

#[test]
fn sampled_disruption_of_other_strategies() {
    let three = doc(&["a", "b", "c"]).strategy(json!({"type": "jump"})).topology();
    let four = doc(&["a", "b", "c", "d"]).strategy(json!({"type": "jump"})).topology();
    let report = disruption::between(&three, &four).unwrap();
    assert_eq!(report.method, Method::Sample);
    assert!((0.23..0.27).contains(&report.fraction()), "{}", report.fraction());
    assert!(report.moves.iter().all(|m| m.to == "d"));
    // A topology compared with itself: nothing moves.
    let same = disruption::between(&four, &four).unwrap();
    assert_eq!((same.changed, same.moves.len()), (0, 0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Specs and nodes built by hand (not from a document) give errors, never panics.
    #[test]
    fn hand_built_inputs_never_panic(
        tokens_per_node in prop_oneof![0u32..4, Just(65_537u32), Just(u32::MAX)],
        weights in proptest::collection::vec(prop_oneof![Just(1.0), Just(f64::NAN), Just(-1.0), Just(0.0), Just(1e300), Just(5e-324)], 0..4),
        explicit in proptest::collection::vec((0u32..6, proptest::collection::vec(any::<i64>(), 0..3)), 0..3),
        hash in any::<u64>(),
    ) {
        let nodes: Vec<Node> = weights.iter().enumerate().map(|(i, &w)| Node { weight: w, ..node(&format!("n{i}")) }).collect();
        let mut explicit = explicit;
        explicit.sort_by_key(|(index, _)| *index);
        explicit.dedup_by_key(|(index, _)| *index);
        let spec = TokenRingSpec { tokens_per_node, token_seed: 0, tokens: explicit };
        match TokenRing::new(&spec, &nodes) {
            Ok(ring) => {
                prop_assert!((ring.node_of(hash) as usize) < nodes.len());
                prop_assert_eq!(ring.ownership().iter().sum::<u128>(), 1u128 << 64);
            }
            Err(err) => prop_assert!(["no_nodes", "invalid_topology", "limit_exceeded"].contains(&err.code()), "{err}"),
        }
        for index in 0..6 {
            let _ = spec.tokens_of(index, &nodes);
        }
    }
}
