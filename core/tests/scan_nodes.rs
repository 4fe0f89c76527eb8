//! `Migration::scan_nodes`: the order a query over every key reads the nodes in while data
//! moves. The property that makes it safe: for every key that changes node, some read of
//! its old node comes before some read of its new one (a row copied, then deleted from
//! the old node, is then found by one of the two reads whenever they happen), and every
//! node that owns a shard on either side is read.

use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::migration::Migration;
use shardroute::{Key, Router};

/// Whether `order` reads `from` before it reads `to` at least once.
fn read_before(order: &[&str], from: &str, to: &str) -> bool {
    let Some(first) = order.iter().position(|&id| id == from) else { return false };
    order.iter().rposition(|&id| id == to).is_some_and(|last| first < last)
}

fn nodes(ids: &[String]) -> Vec<Value> {
    ids.iter().map(|id| json!({"id": id})).collect()
}

/// A vbucket dictionary over `ids`, each vbucket's active node by `map`.
fn dictionary(ids: &[String], map: &[usize], epoch: u64) -> Router {
    let map: Vec<Value> = map.iter().map(|&node| json!([ids[node]])).collect();
    Router::from_value(&json!({"format": "shardroute/1", "epoch": epoch, "nodes": nodes(ids),
        "strategy": {"type": "vbucket", "vbuckets": map.len(), "map": map}}))
    .unwrap()
}

fn hashed(kind: &str, ids: &[String], epoch: u64) -> Router {
    Router::from_value(&json!({"format": "shardroute/1", "epoch": epoch, "nodes": nodes(ids),
        "strategy": {"type": kind}}))
    .unwrap()
}

fn ids(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}{i}")).collect()
}

/// Every owner of a shard on either side is in the order, and every moving shard's
/// source is read before its target.
fn check_fixed(migration: &Migration) {
    let order = migration.scan_nodes();
    for side in [migration.before(), migration.after()] {
        for shard in side.shard_range() {
            let owner = side.shard_owner(shard).unwrap();
            assert!(order.contains(&owner), "{owner} owns shard {shard} and is not read: {order:?}");
        }
    }
    for moving in migration.moving_shards().unwrap() {
        assert!(read_before(&order, moving.from, moving.to), "{moving:?} is not safe in {order:?}");
    }
}

/// Whether the moves, as edges between nodes, have no cycle (nodes removed while one
/// has no incoming edge).
fn acyclic(moves: &[(&str, &str)]) -> bool {
    let mut left: Vec<(&str, &str)> = moves.to_vec();
    loop {
        let sources: Vec<&str> =
            left.iter().map(|&(from, _)| from).filter(|from| !left.iter().any(|&(_, to)| to == *from)).collect();
        if sources.is_empty() {
            return left.is_empty();
        }
        left.retain(|(from, _)| !sources.contains(from));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random dictionaries on both sides, cycles included: safe, and each node read once
    /// when nothing moves both ways.
    #[test]
    fn dictionaries(before in prop::collection::vec(0usize..6, 1..40), seed in any::<u64>(), count in 1usize..7) {
        let names = ids("n", 6);
        let after: Vec<usize> = before.iter().enumerate()
            .map(|(i, &node)| if (seed >> (i % 64)) & 1 == 1 { (seed as usize / (i + 1)) % count } else { node })
            .collect();
        let migration = Migration::new(dictionary(&names, &before, 1), dictionary(&names, &after, 2)).unwrap();
        check_fixed(&migration);
        let order = migration.scan_nodes();
        let moves: Vec<(&str, &str)> = migration.moving_shards().unwrap().iter().map(|m| (m.from, m.to)).collect();
        let mut unique = order.clone();
        unique.sort_unstable();
        unique.dedup();
        if acyclic(&moves) {
            prop_assert_eq!(unique.len(), order.len(), "read twice without a cycle: {:?}", order);
        } else {
            prop_assert!(unique.len() < order.len() && order.len() <= 2 * unique.len(), "a cycle: {:?}", order);
        }
    }

    /// Hashed strategies: the keys that move, checked one by one.
    #[test]
    fn hashed_strategies(kind in prop::sample::select(vec!["modulo", "jump", "ring", "rendezvous", "maglev", "hash_range"]),
                         from in 1usize..6, to in 1usize..8) {
        let (before, after) = (hashed(kind, &ids("h", from), 1), hashed(kind, &ids("h", to), 2));
        let migration = Migration::new(before, after).unwrap();
        let order = migration.scan_nodes();
        for key in 0u64..2000 {
            if let Some((old, new)) = migration.moves(Key::U64(key)).unwrap() {
                prop_assert!(read_before(&order, old, new), "key {key}: {old} -> {new} in {order:?}");
            }
        }
        // Jump's moves go one way (into new buckets, or out of removed ones), and so do
        // modulo's when one count divides the other (5 -> 10: k -> k + 5): each node once.
        // Other modulo changes may trade keys both ways; the moves of the rest are not
        // known: before's nodes, then after's, a node on both sides twice.
        let one_way = kind == "jump" || (kind == "modulo" && (from % to == 0 || to % from == 0));
        if one_way {
            prop_assert_eq!(order.len(), from.max(to), "{:?}", order);
        } else if kind == "modulo" {
            prop_assert!(order.len() <= from + to, "{:?}", order);
        } else {
            prop_assert_eq!(order.len(), from + to);
        }
    }
}

#[test]
fn growing_a_dictionary_reads_each_node_once_old_first() {
    let names = ids("shard_", 4);
    let before: Vec<usize> = (0..16).map(|v| v % 2).collect();
    let after: Vec<usize> = (0..16).map(|v| v % 4).collect();
    let migration = Migration::new(dictionary(&names, &before, 1), dictionary(&names, &after, 2)).unwrap();
    assert_eq!(migration.scan_nodes(), ["shard_0", "shard_1", "shard_2", "shard_3"]);
    check_fixed(&migration);
}

#[test]
fn a_swap_reads_every_node_then_the_targets_again() {
    let names = ids("s", 3);
    // Vbucket 0 moves s0 -> s1, vbucket 1 s1 -> s0; s2 keeps vbucket 2.
    let migration = Migration::new(dictionary(&names, &[0, 1, 2], 1), dictionary(&names, &[1, 0, 2], 2)).unwrap();
    assert_eq!(migration.scan_nodes(), ["s0", "s1", "s2", "s0", "s1"]);
    check_fixed(&migration);
}

#[test]
fn nothing_moving_reads_each_owner_once() {
    let names = ids("s", 3);
    let migration = Migration::new(dictionary(&names, &[0, 2], 1), dictionary(&names, &[0, 2], 2)).unwrap();
    // s1 owns nothing on either side: not read.
    assert_eq!(migration.scan_nodes(), ["s0", "s2"]);
}

#[test]
fn a_dictionary_in_motion_reads_old_owners_first() {
    let names = ids("shard_", 4);
    let map: Vec<Value> = (0..8).map(|v| json!([names[v % 2]])).collect();
    let forward: Vec<Value> = (0..8).map(|v| json!([names[v % 4]])).collect();
    let router = Router::from_value(&json!({"format": "shardroute/1", "epoch": 7, "nodes": nodes(&names),
        "strategy": {"type": "vbucket", "vbuckets": 8, "map": map, "forward_map": forward}}))
    .unwrap();
    let migration = Migration::of_dictionary(&router).unwrap();
    assert_eq!(migration.scan_nodes(), ["shard_0", "shard_1", "shard_2", "shard_3"]);
    check_fixed(&migration);
}

/// A vbucket override sends a key to another vbucket while no shard changes owner: the
/// key moves all the same, and its old node is read first (found by fuzz/apply).
#[test]
fn a_key_an_override_moves_is_a_move() {
    let names = ids("s", 3);
    let before = dictionary(&names, &[0, 1, 2, 0], 1);
    let key = (0u64..).find(|&key| before.node(key).unwrap() == "s2").unwrap();
    let mut document: Value = serde_json::from_str(&dictionary(&names, &[0, 1, 2, 0], 2).to_json()).unwrap();
    document["strategy"]["overrides"] = json!([{"key": {"u64": key.to_string()}, "vbucket": 0}]);
    let migration = Migration::new(before, Router::from_value(&document).unwrap()).unwrap();
    assert_eq!(migration.moves(key).unwrap(), Some(("s2", "s0")));
    assert!(migration.moving_shards().unwrap().is_empty());
    assert_eq!(migration.scan_nodes(), ["s1", "s2", "s0"]);
}

/// The same shards hashed another way: every key may change shard, so the moves are not
/// known per shard and every node of both sides is read.
#[test]
fn a_change_of_hashing_reads_both_sides_whole() {
    let names = ids("s", 3);
    let map: Vec<Value> = [0usize, 1, 2, 0].iter().map(|&node| json!([names[node]])).collect();
    let document = |epoch: u64, seed: &str| {
        Router::from_value(&json!({"format": "shardroute/1", "epoch": epoch, "nodes": nodes(&names),
            "hashing": {"seed": seed}, "strategy": {"type": "vbucket", "vbuckets": 4, "map": map}}))
        .unwrap()
    };
    let migration = Migration::new(
        document(1, "000102030405060708090a0b0c0d0e0f"),
        document(2, "0f0e0d0c0b0a09080706050403020100"),
    )
    .unwrap();
    assert!(migration.moving_shards().unwrap().is_empty());
    let order = migration.scan_nodes();
    assert_eq!(order, ["s0", "s1", "s2", "s0", "s1", "s2"]);
    for key in 0u64..2000 {
        if let Some((old, new)) = migration.moves(key).unwrap() {
            assert!(read_before(&order, old, new), "key {key}: {old} -> {new} in {order:?}");
        }
    }
}
