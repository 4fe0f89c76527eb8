//! Measures the shard functions side by side for `docs/choosing.md`: balance, keys moved
//! when a node is added or removed, lookup cost, and memory of the compiled router.
//!
//! ```text
//! cargo run --release -p shardroute-conformance --bin compare-strategies [-- KEYS]
//! ```
//!
//! Keys are `user:<i>` for `i < KEYS` (default 1,000,000) over 10 nodes. Adding and
//! removing use the core's own topology operations, so "moved" is what a user of the
//! library would see. Memory is the heap the compiled router holds, counted by a
//! wrapping global allocator. Timing is the median of 5 passes; the machine is shared,
//! so treat ns/key as a ratio between rows of one run, not an absolute.

use std::time::Instant;

use serde_json::{json, Value};
use shardroute::{ops, Router};
use shardroute_conformance::documents::{doc, nodes, Document};

/// The counting allocator of the core's benchmark, so both count memory alike.
#[path = "../../../core/benches/heap/mod.rs"]
mod heap;

/// What keys a row routes: text keys `user:<i>`, or integer ids for id strategies.
#[derive(Clone, Copy, PartialEq)]
enum Keys {
    Text,
    /// `shard_high` ids: the shard in the top byte, spread over 10 shards.
    ShardHighIds,
    /// Plain integers `0..KEYS`, for id-interval groups.
    Integers,
}

/// One row: a topology over 10 nodes, and the operations that add and remove a node.
struct Scenario {
    name: &'static str,
    range_scans: &'static str,
    keys: Keys,
    document: Value,
    add: Option<Change>,
    remove: Option<Change>,
}

/// How a row adds or removes a node: core operations applied in order, or (for
/// strategies whose change is an edit of a table no operation covers yet) the
/// document after the change.
enum Change {
    Operations(Vec<Value>),
    Document(Value),
}

fn op(operation: Value) -> Option<Change> {
    Some(Change::Operations(vec![operation]))
}

/// A document over `n0..n9`.
fn ten(strategy: Value) -> Value {
    doc(10, strategy)
}

/// The topology an operation produces from `document`.
fn applied(document: Value, operation: Value) -> Value {
    let topology = shardroute::Topology::from_value(&document).expect("scenario base loads");
    ops::apply(&topology, &operation).expect("scenario operation applies")["topology"].clone()
}

impl Scenario {
    /// A row over text keys that adds node `n10` and removes `n3` with the generic node
    /// operations.
    fn text(name: &'static str, range_scans: &'static str, strategy: Value) -> Scenario {
        Scenario {
            name,
            range_scans,
            keys: Keys::Text,
            document: ten(strategy),
            add: op(json!({"op": "add_node", "node": {"id": "n10"}})),
            remove: op(json!({"op": "remove_node", "id": "n3"})),
        }
    }

    /// The same row, adding and removing a node by other means.
    fn changed_by(self, add: Option<Change>, remove: Option<Change>) -> Scenario {
        Scenario { add, remove, ..self }
    }
}

fn scenarios(count: u64) -> Vec<Scenario> {
    // A key-range table pre-split from a 1% sample of the keys into 10 equal ranges.
    let sample: Vec<Value> = (0..count).step_by(100).map(|i| json!({"utf8": format!("user:{i}")})).collect();
    let node_ids: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    let key_range = applied(
        ten(json!({"type": "key_range"})),
        json!({"op": "range_presplit", "ranges": 10, "sample": sample, "nodes": node_ids}),
    );
    let groups: Vec<Value> = (0..5)
        .map(|g| json!({"id": format!("g{g}"), "nodes": [format!("n{}", 2 * g), format!("n{}", 2 * g + 1)]}))
        .collect();
    let id_groups =
        ten(json!({"type": "id_groups", "groups": [{"id": "g1", "intervals": [[0, count.max(1)]], "writable": true,
        "shards": (0..10).map(|i| json!({"node": format!("n{i}")})).collect::<Vec<_>>()}]}));
    let mut id_groups_after = id_groups.clone().epoch(2);
    id_groups_after["strategy"]["groups"][0]["writable"] = json!(false);
    let new_group = json!({"id": "g2", "intervals": [[count.max(1), 2 * count.max(1)]], "writable": true, "shards": [{"node": "n10"}]});
    id_groups_after["strategy"]["groups"].as_array_mut().expect("groups").push(new_group);
    let shard_high = json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 8});
    let every_shard = "no (every shard)";
    vec![
        Scenario::text("modulo", every_shard, json!({"type": "modulo"})),
        Scenario::text("jump", every_shard, json!({"type": "jump"})),
        Scenario::text("ring (160 points per node)", every_shard, json!({"type": "ring", "points_per_node": 160})),
        Scenario::text("rendezvous", every_shard, json!({"type": "rendezvous"})),
        Scenario::text("maglev (M = 65537)", every_shard, json!({"type": "maglev"})),
        Scenario::text("token ring (8 tokens per node)", every_shard, json!({"type": "token_ring"})),
        Scenario::text(
            "vbucket (1024, round-robin map)",
            "no (every vbucket)",
            json!({"type": "vbucket", "vbuckets": 1024}),
        ),
        Scenario::text(
            "multilevel (4096 partitions, 5 groups of 2, rendezvous)",
            "no (every partition)",
            json!({"type": "multilevel", "partitions": 4096, "groups": groups}),
        )
        .changed_by(
            Some(Change::Operations(vec![
                json!({"op": "add_node", "node": {"id": "n10"}}),
                json!({"op": "multilevel_group_set", "group": "g1", "nodes": ["n2", "n3", "n10"]}),
            ])),
            op(json!({"op": "multilevel_group_set", "group": "g1", "nodes": ["n2"]})),
        ),
        Scenario::text(
            "directory (empty table, jump fallback)",
            every_shard,
            json!({"type": "directory", "fallback": {"type": "jump"}}),
        ),
        Scenario::text("bit trie (balanced, 10 leaves)", "no (every leaf)", json!({"type": "trie"})).changed_by(
            op(json!({"op": "trie_split", "leaf": "000", "node": {"id": "n10"}})),
            op(json!({"op": "trie_remove", "node": "n3"})),
        ),
        Scenario::text("hash range (10 equal ranges)", "no (every range)", json!({"type": "hash_range"})).changed_by(
            op(json!({"op": "range_split", "shard": 0, "at": "922337203685477580", "node": {"id": "n10"}})),
            op(json!({"op": "range_merge", "shard": 2})),
        ),
        Scenario {
            name: "key range (pre-split from a 1% sample)",
            range_scans: "yes (only overlapping ranges, in order)",
            keys: Keys::Text,
            document: key_range,
            add: op(json!({"op": "range_split_median", "shard": 0, "node": {"id": "n10"},
                "sample": (0..count).step_by(100).map(|i| json!({"utf8": format!("user:{i}")})).collect::<Vec<_>>()})),
            remove: op(json!({"op": "range_merge", "shard": 2})),
        },
        Scenario {
            name: "id_bits shard_high (ids carry their shard)",
            range_scans: "by shard field",
            keys: Keys::ShardHighIds,
            document: ten(shard_high.clone()),
            // A new node serves a new shard number; ids already minted keep theirs.
            add: Some(Change::Document(doc(11, shard_high).epoch(2))),
            remove: None,
        },
        Scenario {
            name: "id_groups (one group, 10 equal shards)",
            range_scans: "by id interval",
            keys: Keys::Integers,
            document: id_groups,
            // Expansion: a new writable group for new ids on the new node (the document
            // after `id_groups_add_group`, with the node added to the node list).
            add: Some(Change::Document(id_groups_after.with("nodes", nodes(11)))),
            remove: None,
        },
    ]
}

/// A key of the run, borrowed as the core takes it.
enum OwnedKeys {
    Text(Vec<String>),
    Ids(Vec<u64>),
}

impl OwnedKeys {
    fn build(kind: Keys, count: u64) -> OwnedKeys {
        match kind {
            Keys::Text => OwnedKeys::Text((0..count).map(|i| format!("user:{i}")).collect()),
            Keys::ShardHighIds => OwnedKeys::Ids((0..count).map(|i| ((i % 10) << 56) | i).collect()),
            Keys::Integers => OwnedKeys::Ids((0..count).collect()),
        }
    }

    fn len(&self) -> usize {
        match self {
            OwnedKeys::Text(keys) => keys.len(),
            OwnedKeys::Ids(keys) => keys.len(),
        }
    }

    fn key(&self, index: usize) -> shardroute::Key<'_> {
        match self {
            OwnedKeys::Text(keys) => shardroute::Key::Bytes(keys[index].as_bytes()),
            OwnedKeys::Ids(keys) => shardroute::Key::U64(keys[index]),
        }
    }
}

fn owners(router: &Router, keys: &OwnedKeys) -> Vec<String> {
    (0..keys.len()).map(|i| router.node(keys.key(i)).expect("node").to_string()).collect()
}

fn moved(before: &Router, change: &Option<Change>, keys: &OwnedKeys, old: &[String]) -> String {
    let after = match change {
        None => return "n/a".into(),
        Some(Change::Document(document)) => Router::from_value(document).expect("changed document loads"),
        Some(Change::Operations(operations)) => {
            let mut topology = before.topology().clone();
            for operation in operations {
                match ops::apply(&topology, operation) {
                    Ok(result) => {
                        topology = shardroute::Topology::from_value(&result["topology"]).expect("result loads")
                    }
                    Err(err) => return format!("n/a ({err})"),
                }
            }
            Router::new(topology).expect("operation result compiles")
        }
    };
    let new = owners(&after, keys);
    let count = old.iter().zip(&new).filter(|(a, b)| a != b).count();
    format!("{:.1}%", 100.0 * count as f64 / keys.len() as f64)
}

fn main() {
    let count: u64 =
        std::env::args().nth(1).map(|arg| arg.parse().expect("KEYS must be a number")).unwrap_or(1_000_000);
    println!("| strategy | max/mean load | moved on add (10→11; ideal 9.1%) | moved on remove (1 of 10; ideal 10.0%) | ns/key (median of 5) | heap bytes | range scans |");
    println!("|---|---|---|---|---|---|---|");
    for scenario in scenarios(count) {
        let keys = OwnedKeys::build(scenario.keys, count);
        let text = scenario.document.to_string();
        let (heap, router) = heap::heap_of(|| Router::from_json(&text).expect("scenario loads"));
        let old = owners(&router, &keys);
        let mut load = std::collections::HashMap::<&str, u64>::new();
        for owner in &old {
            *load.entry(owner.as_str()).or_default() += 1;
        }
        let mean = keys.len() as f64 / router.nodes().len() as f64;
        let max = *load.values().max().unwrap_or(&0) as f64;
        let mut timings: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let mut sink = 0u64;
                for index in 0..keys.len() {
                    sink = sink.wrapping_add(u64::from(router.route(keys.key(index)).expect("route")));
                }
                std::hint::black_box(sink);
                start.elapsed().as_nanos() as f64 / keys.len() as f64
            })
            .collect();
        timings.sort_by(|a, b| a.total_cmp(b));
        println!(
            "| {} | {:.3} | {} | {} | {:.1} | {} | {} |",
            scenario.name,
            max / mean,
            moved(&router, &scenario.add, &keys, &old),
            moved(&router, &scenario.remove, &keys, &old),
            timings[2],
            heap,
            scenario.range_scans
        );
    }
}
