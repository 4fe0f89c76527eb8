//! Maglev: Envoy's published tables, a naive oracle of the fill (Envoy's nested loops,
//! verbatim), balance, disruption on add and remove, replicas.

mod common;

use common::{doc, Doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::disruption::{self, Method};
use shardroute::hash::xxh64;
use shardroute::strategy::hashed::maglev::{is_prime, Maglev, MaglevSpec};
use shardroute::{Node, Router};

fn node(id: &str, weight: f64) -> Node {
    Node { id: id.to_string(), address: None, weight, zone: None, state: Default::default() }
}

fn unweighted(ids: &[String]) -> Vec<Node> {
    ids.iter().map(|id| node(id, 1.0)).collect()
}

fn ids(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("backend-{i}")).collect()
}

fn build(nodes: &[Node], table_size: u32) -> Maglev {
    Maglev::new(&MaglevSpec { table_size }, nodes).expect("build")
}

/// Envoy's `OriginalMaglevTable` build, transcribed loop for loop: hosts sorted by
/// name, weights normalised by their sum, `iteration * weight < target` skips a turn.
fn naive(nodes: &[Node], size: u64) -> Vec<u32> {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| nodes[a].id.as_bytes().cmp(nodes[b].id.as_bytes()));
    let sum: f64 = nodes.iter().map(|n| n.weight).sum();
    struct Entry {
        node: u32,
        offset: u64,
        skip: u64,
        weight: f64,
        target: f64,
        next: u64,
    }
    let mut entries: Vec<Entry> = order
        .iter()
        .map(|&i| Entry {
            node: i as u32,
            offset: xxh64(nodes[i].id.as_bytes(), 0) % size,
            skip: xxh64(nodes[i].id.as_bytes(), 1) % (size - 1) + 1,
            weight: nodes[i].weight * 1.0 / sum,
            target: 0.0,
            next: 0,
        })
        .collect();
    let max = entries.iter().map(|e| e.weight).fold(0.0, f64::max);
    let mut table: Vec<Option<u32>> = vec![None; size as usize];
    let mut index = 0u64;
    let mut iteration: u64 = 1;
    while index < size {
        for entry in entries.iter_mut() {
            if index == size {
                break;
            }
            if (iteration as f64) * entry.weight < entry.target {
                continue;
            }
            entry.target += max;
            let mut c = (entry.offset + entry.skip * entry.next) % size;
            while table[c as usize].is_some() {
                entry.next += 1;
                c = (entry.offset + entry.skip * entry.next) % size;
            }
            table[c as usize] = Some(entry.node);
            entry.next += 1;
            index += 1;
        }
        iteration += 1;
    }
    table.into_iter().map(|entry| entry.expect("full")).collect()
}

#[test]
fn envoy_reference_tables() {
    // envoyproxy/envoy test/extensions/load_balancing_policies/maglev/maglev_lb_test.cc:
    // Basic (hosts named by address), BasicWithHostName, Weighted (weights 1 and 2).
    let basic: Vec<Node> = (90..96).map(|port| node(&format!("127.0.0.1:{port}"), 1.0)).collect();
    assert_eq!(build(&basic, 7).table(), [2, 4, 0, 1, 5, 0, 3]);
    let named: Vec<Node> = (90..96).map(|port| node(&format!("{port}"), 1.0)).collect();
    assert_eq!(build(&named, 7).table(), [2, 5, 0, 3, 4, 1, 0]);
    let weighted = [node("127.0.0.1:90", 1.0), node("127.0.0.1:91", 2.0)];
    let table = build(&weighted, 17);
    assert_eq!(table.table(), [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]);
    assert_eq!(table.entries_per_node(), [6, 11]);
}

/// A Maglev document over `ids` with the given table size.
fn maglev(ids: &[String], table_size: Value) -> Doc {
    doc(ids).strategy(json!({"type": "maglev", "table_size": table_size}))
}

const PRIMES: [u32; 10] = [2, 3, 5, 7, 13, 17, 101, 257, 1009, 4099];
const WEIGHTS: [f64; 7] = [1.0, 2.0, 3.0, 0.5, 7.25, 1e-3, 100.0];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The heap-ordered build equals Envoy's nested loops, weights included.
    #[test]
    fn build_equals_envoy_loops(
        prime in 0usize..PRIMES.len(),
        picks in proptest::collection::vec((0usize..WEIGHTS.len(), "[a-z0-9:.]{1,12}"), 1..12),
        weighted in any::<bool>(),
    ) {
        let size = PRIMES[prime];
        let mut nodes: Vec<Node> = Vec::new();
        for (weight, id) in picks {
            if !nodes.iter().any(|n| n.id == id) {
                nodes.push(node(&id, if weighted { WEIGHTS[weight] } else { 1.0 }));
            }
        }
        prop_assume!(nodes.len() as u32 <= size);
        let maglev = build(&nodes, size);
        let expected = naive(&nodes, u64::from(size));
        prop_assert_eq!(maglev.table(), expected.as_slice());
        // Every node owns at least one entry, so any replica count is satisfiable.
        prop_assert!(maglev.entries_per_node().iter().all(|&count| count >= 1));
    }
}

#[test]
fn unweighted_tables_are_balanced_to_one_entry() {
    for n in [1usize, 3, 10, 100, 1000] {
        let counts = build(&unweighted(&ids(n)), 65_537).entries_per_node();
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(max - min <= 1, "n={n}: entries from {min} to {max}");
    }
}

#[test]
fn weighted_tables_follow_the_weights() {
    let weights = [1.0, 2.0, 3.0, 4.0, 0.5, 10.0];
    let nodes: Vec<Node> = weights.iter().enumerate().map(|(i, &w)| node(&format!("w{i}"), w)).collect();
    let counts = build(&nodes, 65_537).entries_per_node();
    let sum: f64 = weights.iter().sum();
    for (count, weight) in counts.iter().zip(weights) {
        let ideal = 65_537.0 * weight / sum;
        assert!((f64::from(*count) - ideal).abs() <= 2.0, "weight {weight}: {count} entries, ideal {ideal:.1}");
    }
}

#[test]
fn keys_spread_with_the_table() {
    let router = doc(&ids(10)).strategy(json!({"type": "maglev"})).router();
    let mut counts = [0u32; 10];
    for i in 0..50_000 {
        counts[router.route(format!("key:{i}").as_str()).unwrap() as usize] += 1;
    }
    for count in counts {
        assert!((4_750..=5_250).contains(&count), "{counts:?}");
    }
}

/// Adding or removing a node changes the entries that must change, and under 1% of
/// the table besides (the paper's near-minimal disruption).
#[test]
fn disruption_is_near_minimal() {
    let size = 65_537u32;
    for n in [5usize, 10, 100, 1000] {
        let all = unweighted(&ids(n + 1));
        let before = build(&all[..n], size);
        let after = build(&all, size);
        let added = disruption::maglev_tables(&before, &all[..n], &after, &all).unwrap();
        assert_eq!(added.method, Method::Table);
        let new_entries = after.entries_per_node()[n];
        let to_new: u128 = added.moves.iter().filter(|m| m.to == all[n].id).map(|m| m.changed).sum();
        assert_eq!(to_new, u128::from(new_entries), "every entry of the new node changed owner");
        let extra = added.changed - to_new;
        assert!(extra * 100 < u128::from(size), "n={n}: {extra} entries moved between old nodes");

        let gone = n / 2;
        let kept: Vec<Node> = all[..n].iter().enumerate().filter(|(i, _)| *i != gone).map(|(_, x)| x.clone()).collect();
        let shrunk = build(&kept, size);
        let removed = disruption::maglev_tables(&before, &all[..n], &shrunk, &kept).unwrap();
        let from_gone: u128 = removed.moves.iter().filter(|m| m.from == all[gone].id).map(|m| m.changed).sum();
        assert_eq!(from_gone, u128::from(before.entries_per_node()[gone]));
        let extra = removed.changed - from_gone;
        assert!(extra * 100 < u128::from(size), "n={n}: {extra} entries moved between remaining nodes");
        // Entry-level count equals what keys see: every key of the removed node moves.
        for (entry, (&a, &b)) in before.table().iter().zip(shrunk.table()).enumerate().take(5_000) {
            if a as usize == gone {
                assert_ne!(kept[b as usize].id, all[gone].id, "entry {entry}");
            }
        }
    }
}

#[test]
fn routing_reads_the_table() {
    let ids = ids(7);
    let router = maglev(&ids, json!(101)).hashing(json!({"integers": "identity"})).router();
    let table = build(&unweighted(&ids), 101);
    for key in [0u64, 1, 100, 101, 102, 1 << 40, u64::MAX] {
        let entry = (key % 101) as usize;
        assert_eq!(router.route(key).unwrap(), table.table()[entry]);
        assert_eq!(router.node(key).unwrap(), ids[table.table()[entry] as usize]);
    }
}

#[test]
fn replicas_walk_the_table() {
    let ids = ids(6);
    let router = maglev(&ids, json!(13)).router();
    let table = build(&unweighted(&ids), 13);
    for i in 0..500 {
        let key = format!("k{i}");
        let all = router.replicas(key.as_str(), 6).unwrap();
        assert_eq!(all[0], router.node(key.as_str()).unwrap());
        let mut distinct = all.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 6);
        // Naive: walk from the key's entry, keeping first sightings.
        let start = (router.hash(key.as_str()) % 13) as usize;
        let mut expected: Vec<&str> = Vec::new();
        for step in 0..13 {
            let id = ids[table.table()[(start + step) % 13] as usize].as_str();
            if !expected.contains(&id) {
                expected.push(id);
            }
        }
        assert_eq!(all, expected);
        assert_eq!(router.replicas(key.as_str(), 2).unwrap(), expected[..2]);
    }
}

#[test]
fn node_order_does_not_matter() {
    let forward = ids(20);
    let backward: Vec<String> = forward.iter().rev().cloned().collect();
    let a = maglev(&forward, json!(1009)).router();
    let b = maglev(&backward, json!(1009)).router();
    for i in 0..2_000 {
        let key = format!("user:{i}");
        assert_eq!(a.node(key.as_str()).unwrap(), b.node(key.as_str()).unwrap());
    }
}

#[test]
fn table_size_is_validated() {
    let five = ids(5);
    for (size, code) in [
        (json!(0), "invalid_topology"),
        (json!(1), "invalid_topology"),
        (json!(4), "invalid_topology"),
        (json!(65536), "invalid_topology"),
        (json!(3), "invalid_topology"),
        (json!("65537"), "invalid_topology"),
        (json!(65537.5), "invalid_topology"),
        (json!(-7), "invalid_topology"),
        (json!(1048583), "limit_exceeded"),
        (json!(4294967311u64), "limit_exceeded"),
    ] {
        let err = Router::from_json(&maglev(&five, size.clone()).text()).unwrap_err();
        assert_eq!(err.code(), code, "table_size {size}: {err}");
        assert!(err.message().starts_with("strategy.table_size"), "{err}");
    }
    let err = Router::from_json(&maglev(&five, json!(65536)).text()).unwrap_err();
    assert!(err.message().contains("next prime is 65537"), "{err}");
    assert!(is_prime(1_048_573) && is_prime(65_537));
    // Five nodes fit a table of five; the canonical form spells the default out.
    assert!(Router::from_json(&maglev(&five, json!(5)).text()).is_ok());
    let default = doc(&five).strategy(json!({"type": "maglev"})).router();
    assert!(default.to_json().contains(r#""table_size":65537"#));
    let again = Router::from_json(&default.to_json()).unwrap();
    assert_eq!(again.topology(), default.topology());
}

#[test]
fn node_operations_report_disruption() {
    let five = ids(5);
    let topology = maglev(&five, json!(1009)).router().topology().clone();
    let added =
        shardroute::ops::apply(&topology, &serde_json::json!({"op": "add_node", "node": {"id": "new"}})).unwrap();
    let report = &added["disruption"];
    assert_eq!(report["method"], "table");
    assert_eq!(report["total"], 1009);
    let next = shardroute::Topology::from_value(&added["topology"]).unwrap();
    let expected = disruption::between(&topology, &next).unwrap();
    assert_eq!(report, &expected.to_value());
    let to_new: u64 = report["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["to"] == "new")
        .map(|m| m["changed"].as_u64().unwrap())
        .sum();
    assert!(to_new >= 168, "{report}");

    let removed = shardroute::ops::apply(&next, &serde_json::json!({"op": "remove_node", "id": "new"})).unwrap();
    // Removing the node just added restores the table exactly: the same entries move back.
    assert_eq!(removed["disruption"]["changed"], report["changed"]);
    let back = shardroute::Topology::from_value(&removed["topology"]).unwrap();
    assert_eq!(back.nodes, topology.nodes);
    // A table too small for one more node is refused by the document check.
    let tight = maglev(&five, json!(5)).router().topology().clone();
    let err =
        shardroute::ops::apply(&tight, &serde_json::json!({"op": "add_node", "node": {"id": "new"}})).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Specs and nodes built by hand (not from a document) give errors, never panics
    /// or endless loops: any table size, any weights, empty lists.
    #[test]
    fn hand_built_inputs_never_panic(
        table_size in prop_oneof![0u32..50, Just(65_537u32), Just(u32::MAX), Just(1_048_583u32)],
        weights in proptest::collection::vec(prop_oneof![any::<f64>(), Just(f64::NAN), Just(-1.0), Just(0.0), Just(1e-300), Just(5e-324)], 0..6),
    ) {
        let nodes: Vec<Node> = weights.iter().enumerate().map(|(i, &w)| node(&format!("n{i}"), w)).collect();
        match Maglev::new(&MaglevSpec { table_size }, &nodes) {
            Ok(maglev) => {
                prop_assert!(is_prime(table_size) && nodes.len() as u32 <= table_size && !nodes.is_empty());
                prop_assert!(maglev.entries_per_node().iter().all(|&count| count >= 1));
            }
            Err(err) => prop_assert!(["no_nodes", "invalid_topology", "limit_exceeded"].contains(&err.code()), "{err}"),
        }
    }
}
