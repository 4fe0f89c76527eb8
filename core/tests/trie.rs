//! The bit trie: routing against a naive bit walk, replicas against a naive XOR sort,
//! the movement bounds of `trie_split` / `trie_remove`, coverage after any sequence of
//! operations, and rejection of malformed tries.

use std::collections::HashMap;

mod common;

use common::{doc, Doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::strategy::partitioned::trie::{Prefix, TrieSpec};
use shardroute::{ops, Key, Router, Strategy, Topology};

/// A trie document, with identity integer hashing (a `u64` key is its own hash) when
/// `identity`, leaves given as `(prefix, node id)` in trie order, nodes in the given order.
fn trie_doc(node_ids: &[String], leaves: &[(String, String)], identity: bool) -> Doc {
    let leaves: Vec<Value> = leaves.iter().map(|(p, n)| json!({"prefix": p, "node": n})).collect();
    let trie = doc(node_ids).strategy(json!({"type": "trie", "leaves": leaves}));
    if identity {
        trie.hashing(json!({"integers": "identity"}))
    } else {
        trie
    }
}

/// The leaves of a topology as `(prefix string, node id)`, in document order.
fn leaves_of(topology: &Topology) -> Vec<(String, String)> {
    match &topology.strategy {
        Strategy::Trie(spec) => spec
            .leaves
            .iter()
            .map(|leaf| (leaf.prefix.to_string(), topology.nodes[leaf.node as usize].id.clone()))
            .collect(),
        other => panic!("not a trie: {}", other.type_name()),
    }
}

/// The first `depth` bits of `hash` as a string of '0' and '1'.
fn bits(hash: u64, depth: u32) -> String {
    (0..depth).map(|i| if hash >> (63 - i) & 1 == 1 { '1' } else { '0' }).collect()
}

/// Routing by the definition: read the hash one bit at a time from the top until the
/// bits read so far name a leaf.
fn naive_walk(leaves: &[(String, String)], hash: u64) -> usize {
    let index: HashMap<&str, usize> = leaves.iter().enumerate().map(|(i, (p, _))| (p.as_str(), i)).collect();
    (0..=64).find_map(|depth| index.get(bits(hash, depth).as_str()).copied()).expect("the trie covers every hash")
}

/// Replicas by the definition: every leaf sorted by XOR distance between the hash and
/// the leaf's prefix (the prefix bits XOR the hash's first bits, left-aligned).
fn naive_xor_order(leaves: &[(String, String)], hash: u64) -> Vec<String> {
    let mut scored: Vec<(u64, &str)> = leaves
        .iter()
        .map(|(prefix, node)| {
            let p: Prefix = prefix.parse().unwrap();
            let mask = if p.depth() == 0 { 0 } else { u64::MAX << (64 - p.depth()) };
            ((hash ^ p.start()) & mask, node.as_str())
        })
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, node)| node.to_string()).collect()
}

/// Kraft's sum of the leaves, exactly, and whether no prefix starts another.
fn kraft_and_prefix_free(leaves: &[(String, String)]) -> (u128, bool) {
    let sum = leaves.iter().map(|(p, _)| if p.len() <= 64 { 1u128 << (64 - p.len()) } else { 0 }).sum();
    let free = leaves
        .iter()
        .enumerate()
        .all(|(i, (a, _))| leaves.iter().enumerate().all(|(j, (b, _))| i == j || !b.starts_with(a.as_str())));
    (sum, free)
}

fn apply(topology: &Topology, op: Value) -> (Topology, Value) {
    let result = ops::apply(topology, &op).unwrap_or_else(|err| panic!("{op}: {err}"));
    (Topology::from_value(&result["topology"]).unwrap(), result)
}

/// A trie grown from the root by `splits`: each picks a leaf by `selector % leaves`
/// (`chain`: the leaf created last, to reach deep leaves), new node `n{i}`.
fn grown(splits: &[(u16, bool)], identity: bool) -> Topology {
    let mut topology = trie_doc(&["n0".into()], &[(String::new(), "n0".into())], identity).topology();
    let mut last = String::new();
    for (i, &(selector, chain)) in splits.iter().enumerate() {
        let leaves = leaves_of(&topology);
        let target =
            if chain && last.len() < 64 { last.clone() } else { leaves[selector as usize % leaves.len()].0.clone() };
        if target.len() == 64 {
            continue;
        }
        let id = format!("n{}", i + 1);
        (topology, _) = apply(&topology, json!({"op": "trie_split", "leaf": target, "node": {"id": id}}));
        last = format!("{target}1");
    }
    topology
}

/// Hashes to route: some anywhere, and for every leaf its first and last hash and one inside.
fn probe_hashes(leaves: &[(String, String)], random: &[u64]) -> Vec<u64> {
    let mut hashes = random.to_vec();
    for (i, (prefix, _)) in leaves.iter().enumerate() {
        let p: Prefix = prefix.parse().unwrap();
        let low = if p.depth() == 64 { 0 } else { u64::MAX >> p.depth() };
        hashes.push(p.start());
        hashes.push(p.start() | low);
        hashes.push(p.start() | (random.get(i).copied().unwrap_or(0x9e37_79b9_7f4a_7c15) & low));
    }
    hashes
}

fn split_plan() -> impl proptest::strategy::Strategy<Value = Vec<(u16, bool)>> {
    proptest::collection::vec((any::<u16>(), prop::bool::weighted(0.3)), 0..40)
}

/// A grown trie's plan, a leaf selector and random hashes to probe.
fn leaf_change() -> impl proptest::strategy::Strategy<Value = (Vec<(u16, bool)>, u16, Vec<u64>)> {
    (split_plan(), any::<u16>(), proptest::collection::vec(any::<u64>(), 32))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn route_and_replicas_equal_the_naive_definitions(plan in split_plan(), random in proptest::collection::vec(any::<u64>(), 8)) {
        let topology = grown(&plan, true);
        let leaves = leaves_of(&topology);
        let router = Router::new(topology).unwrap();
        let n = router.nodes().len() as u32;
        for hash in probe_hashes(&leaves, &random) {
            let expected = naive_walk(&leaves, hash);
            prop_assert_eq!(router.route(hash).unwrap() as usize, expected, "hash {:#x}", hash);
            prop_assert_eq!(router.node(hash).unwrap(), leaves[expected].1.as_str());
            let all = router.replicas(hash, n).unwrap();
            prop_assert_eq!(&all, &naive_xor_order(&leaves, hash));
            prop_assert_eq!(all[0], leaves[expected].1.as_str());
            let count = 1 + (hash % u64::from(n)) as u32;
            prop_assert_eq!(router.replicas(hash, count).unwrap(), &all[..count as usize]);
        }
    }

    #[test]
    fn operations_keep_the_trie_covering_and_round_tripping(
        plan in split_plan(),
        removals in proptest::collection::vec(any::<u16>(), 0..12),
    ) {
        let mut topology = grown(&plan, false);
        let check = |topology: &Topology| -> Result<(), TestCaseError> {
            let leaves = leaves_of(topology);
            let (sum, free) = kraft_and_prefix_free(&leaves);
            prop_assert_eq!(sum, 1u128 << 64);
            prop_assert!(free);
            prop_assert_eq!(leaves.len(), topology.nodes.len());
            let mut sorted = leaves.clone();
            sorted.sort_by_key(|(p, _)| p.parse::<Prefix>().unwrap());
            prop_assert_eq!(&sorted, &leaves);
            prop_assert_eq!(&Topology::from_value(&topology.to_value()).unwrap(), topology);
            Ok(())
        };
        check(&topology)?;
        for selector in removals {
            if topology.nodes.len() == 1 {
                break;
            }
            let epoch = topology.epoch;
            let id = topology.nodes[selector as usize % topology.nodes.len()].id.clone();
            let (next, report) = apply(&topology, json!({"op": "trie_remove", "node": id}));
            prop_assert_eq!(next.epoch, epoch + 1);
            let removed: Vec<&str> = report["removed_nodes"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            prop_assert!(removed.contains(&id.as_str()));
            prop_assert_eq!(next.nodes.len() + removed.len(), topology.nodes.len());
            check(&next)?;
            topology = next;
        }
    }

    #[test]
    fn split_moves_exactly_the_upper_half_of_the_leaf_to_the_new_node((plan, selector, random) in leaf_change()) {
        let before = grown(&plan, true);
        let leaves = leaves_of(&before);
        let (prefix, owner) = leaves[selector as usize % leaves.len()].clone();
        prop_assume!(prefix.len() < 64);
        let (after, report) = apply(&before, json!({"op": "trie_split", "leaf": prefix, "node": {"id": "fresh"}}));
        prop_assert_eq!(&report["moves"], &json!([{"prefix": format!("{prefix}1"), "from": owner, "to": "fresh"}]));
        let old = Router::new(before).unwrap();
        let new = Router::new(after).unwrap();
        let upper: Prefix = format!("{prefix}1").parse().unwrap();
        for hash in probe_hashes(&leaves, &random) {
            let moved = old.node(hash).unwrap() != new.node(hash).unwrap();
            prop_assert_eq!(moved, upper.contains(hash), "hash {:#x}", hash);
            if moved {
                prop_assert_eq!(new.node(hash).unwrap(), "fresh");
            }
        }
    }

    #[test]
    fn remove_moves_only_the_keys_under_the_parent_to_the_survivor((plan, selector, random) in leaf_change()) {
        let before = grown(&plan, true);
        prop_assume!(before.nodes.len() > 1);
        let leaves = leaves_of(&before);
        let (prefix, id) = leaves[selector as usize % leaves.len()].clone();
        let (after, report) = apply(&before, json!({"op": "trie_remove", "node": id}));
        let parent = &prefix[..prefix.len() - 1];
        let sibling = format!("{parent}{}", if prefix.ends_with('0') { '1' } else { '0' });
        let merge = leaves.iter().any(|(p, _)| *p == sibling);
        // The survivor: the shallowest leaf under the sibling, the first on a tie.
        let survivor = leaves
            .iter()
            .filter(|(p, _)| p.starts_with(sibling.as_str()))
            .min_by_key(|(p, _)| p.len())
            .unwrap()
            .1
            .clone();
        prop_assert_eq!(&report["leaf"], &json!({"prefix": parent, "node": survivor}));
        let under_parent: Vec<&str> =
            leaves.iter().filter(|(p, _)| p.starts_with(parent)).map(|(_, n)| n.as_str()).filter(|n| *n != survivor).collect();
        prop_assert_eq!(report["removed_nodes"].as_array().unwrap().len(), under_parent.len());
        if merge {
            prop_assert_eq!(&report["removed_nodes"], &json!([id]));
        }
        let old = Router::new(before).unwrap();
        let new = Router::new(after).unwrap();
        let leaf: Prefix = prefix.parse().unwrap();
        let parent_prefix: Prefix = parent.parse().unwrap();
        let survivor_leaf: Prefix = leaves.iter().find(|(_, n)| *n == survivor).unwrap().0.parse().unwrap();
        for hash in probe_hashes(&leaves, &random) {
            let moved = old.node(hash).unwrap() != new.node(hash).unwrap();
            let should_move = if merge { leaf.contains(hash) } else { parent_prefix.contains(hash) && !survivor_leaf.contains(hash) };
            prop_assert_eq!(moved, should_move, "hash {:#x}", hash);
            if moved {
                prop_assert_eq!(new.node(hash).unwrap(), survivor.as_str());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_leaf_lists_never_panic_and_are_accepted_only_when_they_tile(
        leaves in proptest::collection::vec(("[01]{0,2}|[01]{1,3}|1x|0{64,65}", 0u8..4), 0..6),
    ) {
        let ids: Vec<String> = (0..4).map(|i| format!("n{i}")).collect();
        let leaves: Vec<(String, String)> = leaves.into_iter().map(|(p, n)| (p, format!("n{n}"))).collect();
        for identity in [false, true] {
            let outcome = trie_doc(&ids, &leaves, identity).load();
            let (sum, free) = kraft_and_prefix_free(&leaves);
            let mut sorted = leaves.clone();
            sorted.sort();
            let mut nodes: Vec<&String> = leaves.iter().map(|(_, n)| n).collect();
            nodes.sort();
            nodes.dedup();
            let valid = leaves.iter().all(|(p, _)| p.len() <= 64 && !p.contains('x'))
                && sum == 1u128 << 64 && free && sorted == leaves && nodes.len() == 4 && leaves.len() == 4;
            match outcome {
                Ok(router) => {
                    prop_assert!(valid, "{:?} accepted", leaves);
                    prop_assert_eq!(router.route(0u64).unwrap(), 0);
                }
                Err(err) => {
                    prop_assert!(!valid, "{:?} rejected: {}", leaves, err);
                    prop_assert!(err.message().starts_with("strategy.leaves"), "{}", err);
                }
            }
        }
    }
}

#[test]
fn a_split_moves_about_half_of_the_leafs_keys() {
    // SipHash string keys: the share of a leaf's keys that a split moves is 1/2 up to
    // binomial noise (sd 1/sqrt(4 * 3000) < 1%; the bound is 6 sd).
    let ids: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let leaves = [("0", "a"), ("10", "b"), ("11", "c")].map(|(p, n)| (p.to_string(), n.to_string()));
    let before = trie_doc(&ids, &leaves, false).topology();
    for (prefix, owner) in &leaves {
        let (after, _) = apply(&before, json!({"op": "trie_split", "leaf": prefix, "node": {"id": "new"}}));
        let (old, new) = (Router::new(before.clone()).unwrap(), Router::new(after).unwrap());
        let (mut in_leaf, mut moved) = (0u32, 0u32);
        for i in 0..24_000 {
            let key = format!("user:{i}");
            let was = old.node(key.as_str()).unwrap();
            let now = new.node(key.as_str()).unwrap();
            if was == owner {
                in_leaf += 1;
                moved += u32::from(now == "new");
            } else {
                assert_eq!(was, now, "{key} moved but was not in leaf {prefix}");
            }
        }
        assert!(in_leaf >= 3000, "{in_leaf}");
        let share = f64::from(moved) / f64::from(in_leaf);
        assert!((share - 0.5).abs() < 0.06, "leaf {prefix}: {moved} of {in_leaf} moved");
    }
}

#[test]
fn default_trie_is_balanced_in_node_order() {
    for count in 1..=70u32 {
        let spec = TrieSpec::balanced(count);
        let leaves: Vec<(String, String)> =
            spec.leaves.iter().map(|leaf| (leaf.prefix.to_string(), format!("n{}", leaf.node))).collect();
        assert_eq!(kraft_and_prefix_free(&leaves), (1u128 << 64, true), "{count}");
        let depths: Vec<usize> = leaves.iter().map(|(p, _)| p.len()).collect();
        assert!(depths.iter().max().unwrap() - depths.iter().min().unwrap() <= 1, "{count}: {depths:?}");
        assert!(spec.leaves.iter().enumerate().all(|(i, leaf)| leaf.node == i as u32));
    }
    // Key shares match 2^-depth: 5 nodes get 1/4, 1/4, 1/4, 1/8, 1/8.
    let router = doc(5).strategy(json!({"type": "trie"})).router();
    assert_eq!(
        leaves_of(router.topology()).iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["00", "01", "10", "110", "111"]
    );
    let mut counts = [0u32; 5];
    let total = 40_000;
    for i in 0..total {
        counts[router.route(format!("key:{i}").as_str()).unwrap() as usize] += 1;
    }
    for (count, expected) in counts.iter().zip([0.25, 0.25, 0.25, 0.125, 0.125]) {
        let share = f64::from(*count) / f64::from(total);
        assert!((share - expected).abs() < 0.015, "{counts:?}");
    }
}

#[test]
fn deep_trie_routes_every_power_of_two_to_its_own_leaf() {
    // Leaves 0^64, 0^63 1, 0^62 1, ..., 1: the hash 2^j lands in leaf j + 1.
    let mut leaves: Vec<(String, String)> = vec![("0".repeat(64), "d0".into())];
    for j in 0..64 {
        leaves.push((format!("{}1", "0".repeat(63 - j)), format!("d{}", j + 1)));
    }
    let ids: Vec<String> = leaves.iter().map(|(_, n)| n.clone()).collect();
    let router = trie_doc(&ids, &leaves, true).router();
    assert_eq!(router.route(0u64).unwrap(), 0);
    for j in 0..64u32 {
        let hash = 1u64 << j;
        assert_eq!(router.route(hash).unwrap(), j + 1);
        assert_eq!(router.route(hash | (hash - 1)).unwrap(), j + 1);
        assert_eq!(router.replicas(hash, 65).unwrap(), naive_xor_order(&leaves, hash));
    }
    // Leaves at depth 64 cannot split.
    let err = ops::apply(router.topology(), &json!({"op": "trie_split", "leaf": "0".repeat(64), "node": {"id": "x"}}))
        .unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
}

#[test]
fn malformed_tries_are_rejected_naming_the_field() {
    let ids: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let case = |leaves: &[(&str, &str)]| -> (String, String) {
        let leaves: Vec<(String, String)> = leaves.iter().map(|(p, n)| (p.to_string(), n.to_string())).collect();
        let err = trie_doc(&ids, &leaves, false).load().unwrap_err();
        (err.code().to_string(), err.message().to_string())
    };
    let expect = |leaves: &[(&str, &str)], code: &str, text: &str| {
        let (got, message) = case(leaves);
        assert_eq!(got, code, "{leaves:?}: {message}");
        assert!(message.contains(text), "{leaves:?}: {message:?} lacks {text:?}");
    };
    expect(&[("0", "a"), ("01", "b"), ("1", "c")], "invalid_topology", "strategy.leaves[1].prefix: overlap");
    expect(&[("0", "a"), ("0", "b"), ("1", "c")], "invalid_topology", "repeats leaves[0]");
    expect(&[("0", "a"), ("10", "b"), ("110", "c")], "invalid_topology", "gap: no leaf covers prefix \"111\"");
    expect(&[("00", "a"), ("10", "b"), ("11", "c")], "invalid_topology", "no leaf covers prefix \"01\"");
    expect(&[("0", "a"), ("12", "b"), ("11", "c")], "invalid_topology", "strategy.leaves[1].prefix: bit 1 is '2'");
    let deep = "0".repeat(65);
    expect(&[(deep.as_str(), "a"), ("1", "b"), ("01", "c")], "limit_exceeded", "strategy.leaves[0].prefix: 65 bits");
    expect(&[("0", "a"), ("10", "z"), ("11", "c")], "invalid_topology", "strategy.leaves[1].node: names node \"z\"");
    expect(
        &[("0", "a"), ("10", "a"), ("11", "c")],
        "invalid_topology",
        "strategy.leaves[1].node: node \"a\" already owns leaves[0]",
    );
    expect(&[("0", "a"), ("1", "b")], "invalid_topology", "node \"c\" (nodes[2]) owns no leaf");
    expect(
        &[("10", "b"), ("0", "a"), ("11", "c")],
        "invalid_topology",
        "strategy.leaves[0].prefix: leaves must be listed in trie order",
    );
    expect(&[], "invalid_topology", "at least one leaf");
    let one = |strategy: Value| doc(&["a"]).strategy(strategy);
    for (strategy, text) in [
        (
            json!({"type": "trie", "leaves": [{"prefix": 0, "node": "a"}]}),
            "strategy.leaves[0].prefix: expected a string",
        ),
        (json!({"type": "trie", "leaves": [{"node": "a"}]}), "strategy.leaves[0].prefix: missing"),
        (
            json!({"type": "trie", "leaves": [{"prefix": "", "node": "a", "weight": 1}]}),
            "strategy.leaves[0].weight: unknown field",
        ),
        (json!({"type": "trie", "leaves": {"": "a"}}), "strategy.leaves: expected an array"),
    ] {
        let err = one(strategy).load().unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
        assert!(err.message().contains(text), "{err}");
    }
    let weighted = one(json!({"type": "trie"})).node_field(0, "weight", json!(2));
    assert_eq!(weighted.load().unwrap_err().code(), "invalid_topology");
    // A spec built in code is checked when compiled, never trusted.
    let mut topology = one(json!({"type": "trie"})).topology();
    topology.strategy = Strategy::Trie(TrieSpec { leaves: Vec::new() });
    assert_eq!(Router::new(topology).unwrap_err().code(), "invalid_topology");
}

#[test]
fn operations_report_and_reject() {
    let ids: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let leaves = [("0", "a"), ("10", "b"), ("11", "c")].map(|(p, n)| (p.to_string(), n.to_string()));
    let trie = trie_doc(&ids, &leaves, false).topology();
    let (split, report) = apply(&trie, json!({"op": "trie_split", "leaf": "10", "node": {"id": "d", "zone": "z"}}));
    assert_eq!(report["added"], "d");
    assert_eq!(report["split"], "10");
    assert_eq!(
        leaves_of(&split),
        [("0", "a"), ("100", "b"), ("101", "d"), ("11", "c")].map(|(p, n)| (p.to_string(), n.to_string()))
    );
    assert_eq!(split.nodes[3].zone.as_deref(), Some("z"));
    // Merge: b's sibling "11" is a leaf.
    let (merged, report) = apply(&trie, json!({"op": "trie_remove", "node": "b"}));
    assert_eq!(report["removed_nodes"], json!(["b"]));
    assert_eq!(report["moves"], json!([{"prefix": "10", "from": "b", "to": "c"}]));
    assert_eq!(leaves_of(&merged), [("0", "a"), ("1", "c")].map(|(p, n)| (p.to_string(), n.to_string())));
    // Collapse: a's sibling "1" is a subtree; b ("10", first of the shallowest) survives.
    let (collapsed, report) = apply(&trie, json!({"op": "trie_remove", "node": "a"}));
    assert_eq!(report["removed_nodes"], json!(["a", "c"]));
    assert_eq!(report["leaf"], json!({"prefix": "", "node": "b"}));
    assert_eq!(leaves_of(&collapsed), [(String::new(), "b".to_string())]);
    let code = |topology: &Topology, op: Value| ops::apply(topology, &op).unwrap_err().code();
    assert_eq!(code(&collapsed, json!({"op": "trie_remove", "node": "b"})), "no_nodes");
    assert_eq!(code(&trie, json!({"op": "trie_remove", "node": "zz"})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_remove"})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_remove", "node": 1})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "1", "node": {"id": "d"}})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "111", "node": {"id": "d"}})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "1x", "node": {"id": "d"}})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "10"})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "10", "node": {"id": "d"}, "x": 1})), "invalid_argument");
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "10", "node": {"id": "a"}})), "invalid_topology");
    assert_eq!(
        code(&trie, json!({"op": "trie_split", "leaf": "10", "node": {"id": "d", "weight": 2}})),
        "invalid_topology"
    );
    assert_eq!(code(&trie, json!({"op": "trie_split", "leaf": "10", "node": {"name": "d"}})), "invalid_topology");
    assert_eq!(code(&trie, json!({"op": "remove_node", "id": "a"})), "invalid_argument");
    let ring = doc(&["a"]).strategy(json!({"type": "ring"})).topology();
    assert_eq!(code(&ring, json!({"op": "trie_split", "leaf": "", "node": {"id": "d"}})), "invalid_argument");
}

#[test]
fn integer_keys_route_as_their_own_hash_under_identity() {
    let ids: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let leaves = [("0", "a"), ("10", "b"), ("11", "c")].map(|(p, n)| (p.to_string(), n.to_string()));
    let router = trie_doc(&ids, &leaves, true).router();
    for (hash, shard) in [
        (0u64, 0u32),
        (u64::MAX >> 1, 0),
        (1 << 63, 1),
        (0xBFFF_FFFF_FFFF_FFFF, 1),
        (0xC000_0000_0000_0000, 2),
        (u64::MAX, 2),
    ] {
        assert_eq!(router.route(Key::U64(hash)).unwrap(), shard, "{hash:#x}");
    }
    assert_eq!(router.replicas(0u64, 3).unwrap(), ["a", "b", "c"]);
    assert_eq!(router.replicas(u64::MAX, 3).unwrap(), ["c", "b", "a"]);
}
