//! Measures the vbucket dictionary for `docs/dictionary-format.md`: rebalance planning
//! time, and JSON versus binary sizes.
//!
//! ```text
//! cargo run --release -p shardroute-conformance --bin bench-dictionary
//! ```
//!
//! Planning: a balanced dictionary of `V` vbuckets with 1 replica over `N` nodes (two
//! zones), then `plan_rebalance` adding 10% more nodes; median and range of 7 runs.

use std::time::Instant;

use serde_json::{json, Value};
use shardroute::{dictionary, ops, Topology};
use shardroute_conformance::documents::doc;

fn document(vbuckets: u32, nodes: usize, replicas: u32) -> Topology {
    let ids: Vec<Value> = (0..nodes)
        .map(|i| json!({"id": format!("node-{i:04}"), "address": format!("10.{}.{}.{}:11210", i / 65536, (i / 256) % 256, i % 256), "zone": format!("zone-{}", i % 2)}))
        .collect();
    let base = doc(Value::Array(ids), json!({"type": "vbucket", "vbuckets": vbuckets, "replicas": replicas}));
    let base = Topology::from_value(&base).expect("base");
    // Make the map explicit and balanced by planning once from the round-robin table.
    let planned = ops::apply(&base, &json!({"op": "plan_rebalance"})).expect("plan");
    let during = Topology::from_value(&planned["topology"]).expect("during");
    match ops::apply(&during, &json!({"op": "complete_moves"})) {
        Ok(done) => Topology::from_value(&done["topology"]).expect("done"),
        Err(_) => during,
    }
}

fn main() {
    println!("| dictionary | change | plan median (min–max) of 7 | moves | moved actives = lower bound |");
    println!("|---|---|---|---|---|");
    for (vbuckets, nodes) in [(1024u32, 100usize), (16384, 1000)] {
        let topology = document(vbuckets, nodes, 1);
        let added: Vec<Value> = (nodes..nodes + nodes / 10)
            .map(|i| json!({"id": format!("node-{i:04}"), "zone": format!("zone-{}", i % 2)}))
            .collect();
        let operation = json!({"op": "plan_rebalance", "add": added, "max_moves_per_node": 2});
        let mut times = Vec::new();
        let mut report = Value::Null;
        for _ in 0..7 {
            let start = Instant::now();
            report = ops::apply(&topology, &operation).expect("plan");
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        println!(
            "| {vbuckets} vbuckets × {nodes} nodes, 1 replica | add {} nodes | {:.2} ms ({:.2}–{:.2}) | {} | {} = {} |",
            nodes / 10,
            times[3],
            times[0],
            times[6],
            report["moves"].as_array().map_or(0, Vec::len),
            report["moved_actives"],
            report["lower_bound"]
        );
    }
    println!();
    println!("| dictionary | JSON bytes | binary bytes | binary / JSON |");
    println!("|---|---|---|---|");
    for (vbuckets, nodes, replicas) in [(1024u32, 4usize, 1u32), (1024, 100, 2), (16384, 100, 2), (16384, 1000, 2)] {
        let topology = document(vbuckets, nodes, replicas);
        let json_bytes = topology.to_json().len();
        let binary_bytes = dictionary::encode(&topology).expect("encode").len();
        println!(
            "| {vbuckets} vbuckets × {nodes} nodes, {replicas} replica(s) | {json_bytes} | {binary_bytes} | {:.2} |",
            binary_bytes as f64 / json_bytes as f64
        );
    }
}
