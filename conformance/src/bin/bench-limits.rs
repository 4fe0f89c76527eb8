//! The worst documents the limits still allow, and the planner at growing sizes: the
//! Rust side of `bench/limits/bench.py` (`make bench`, section "Limits: the worst allowed
//! document"), which runs each measurement in a fresh process and reads its peak RSS.
//!
//! ```text
//! bench-limits documents DIR          write DIR/<family>.json, the worst allowed document of each family
//! bench-limits build FILE             load FILE and build its router; prints {"ms": build time}
//! bench-limits plan V N REMOVE R      plan_rebalance removing REMOVE of N nodes from V vbuckets
//!                                     with R replicas; prints {"ms", "moves"}
//! ```

use std::time::Instant;

use serde_json::{json, Value};
use shardroute::{limits, ops, Router, Topology};

/// `count` nodes `n0`, `n1`, ... in three zones, each with an address.
fn nodes(count: u32) -> Value {
    Value::Array(
        (0..count)
            .map(|i| json!({"id": format!("n{i}"), "address": format!("10.{}.{}.{}:11211", i >> 16, (i >> 8) & 255, i & 255), "zone": format!("z{}", i % 3)}))
            .collect(),
    )
}

fn document(nodes: Value, strategy: Value) -> Value {
    json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes, "strategy": strategy})
}

/// The worst allowed document of each strategy family whose build cost the document
/// does not spell out entry by entry: the largest build the budgets let through
/// (`docs/security-and-limits.md` lists them).
fn worst_documents() -> Vec<(&'static str, Value)> {
    let most = limits::MAX_NODES;
    let per_node = (limits::MAX_RING_POINTS / u64::from(most)) as u32;
    let replicas = (limits::MAX_TABLE_CELLS / u64::from(limits::MAX_VBUCKETS)) as u32 - 1;
    let group_size = (limits::MAX_PARTITION_PLACEMENTS / u64::from(limits::MAX_PARTITIONS)) as u32;
    let group: Vec<String> = (0..group_size).map(|i| format!("n{i}")).collect();
    vec![
        ("ring", document(nodes(most), json!({"type": "ring", "points_per_node": per_node}))),
        ("token_ring", document(nodes(most), json!({"type": "token_ring", "tokens_per_node": per_node}))),
        ("ketama", document(nodes(most), json!({"type": "ketama", "points_per_server": per_node}))),
        ("maglev", document(nodes(most), json!({"type": "maglev", "table_size": limits::MAX_MAGLEV_TABLE_SIZE}))),
        ("rendezvous", document(nodes(most), json!({"type": "rendezvous"}))),
        (
            "vbucket",
            document(nodes(most), json!({"type": "vbucket", "vbuckets": limits::MAX_VBUCKETS, "replicas": replicas})),
        ),
        (
            "multilevel",
            document(
                nodes(group_size),
                json!({"type": "multilevel", "partitions": limits::MAX_PARTITIONS, "groups": [{"id": "g0", "nodes": group}]}),
            ),
        ),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("documents") => {
            let dir = std::path::Path::new(&args[1]);
            std::fs::create_dir_all(dir).expect("create the directory");
            for (family, document) in worst_documents() {
                let text = document.to_string();
                std::fs::write(dir.join(format!("{family}.json")), text).expect("write");
            }
        }
        Some("build") => {
            let text = std::fs::read_to_string(&args[1]).expect("read the document");
            let start = Instant::now();
            let router = Router::from_json(&text);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            match router {
                Ok(_) => println!("{}", json!({"ms": ms})),
                Err(err) => println!("{}", json!({"ms": ms, "error": err.code(), "message": err.message()})),
            }
        }
        Some("plan") => {
            let number = |i: usize| args[i].parse::<u32>().expect("a number");
            let (vbuckets, count, remove, replicas) = (number(1), number(2), number(3), number(4));
            let topology = Topology::from_value(&document(
                nodes(count),
                json!({"type": "vbucket", "vbuckets": vbuckets, "replicas": replicas}),
            ))
            .expect("the document");
            let removed: Vec<String> = (0..remove).map(|i| format!("n{i}")).collect();
            let operation = json!({"op": "plan_rebalance", "remove": removed});
            let start = Instant::now();
            let result = ops::apply(&topology, &operation);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            match result {
                Ok(report) => {
                    println!("{}", json!({"ms": ms, "moves": report["moves"].as_array().map_or(0, Vec::len)}))
                }
                Err(err) => println!("{}", json!({"ms": ms, "error": err.code(), "message": err.message()})),
            }
        }
        _ => {
            eprintln!("usage: bench-limits documents DIR | build FILE | plan V N REMOVE R");
            std::process::exit(2);
        }
    }
}
