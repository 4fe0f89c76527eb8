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

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use serde_json::{json, Value};
use shardroute::{operations, Router};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One row: a topology over 10 nodes, and the operations that add and remove a node.
struct Scenario {
    name: &'static str,
    range_scans: &'static str,
    document: Value,
    add: Option<Value>,
    remove: Option<Value>,
}

fn nodes(count: usize) -> Value {
    Value::Array((0..count).map(|i| json!({"id": format!("n{i}")})).collect())
}

fn doc(strategy: Value) -> Value {
    json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes(10), "strategy": strategy})
}

fn scenarios() -> Vec<Scenario> {
    let add = || Some(json!({"op": "add_node", "node": {"id": "n10"}}));
    let remove = || Some(json!({"op": "remove_node", "id": "n3"}));
    vec![
        Scenario {
            name: "modulo",
            range_scans: "no (every shard)",
            document: doc(json!({"type": "modulo"})),
            add: add(),
            remove: remove(),
        },
        Scenario {
            name: "jump",
            range_scans: "no (every shard)",
            document: doc(json!({"type": "jump"})),
            add: add(),
            remove: remove(),
        },
        Scenario {
            name: "ring (160 points)",
            range_scans: "no (every shard)",
            document: doc(json!({"type": "ring", "points_per_node": 160})),
            add: add(),
            remove: remove(),
        },
        Scenario {
            name: "rendezvous",
            range_scans: "no (every shard)",
            document: doc(json!({"type": "rendezvous"})),
            add: add(),
            remove: remove(),
        },
        Scenario {
            name: "vbucket (1024, derived map)",
            range_scans: "no (every vbucket)",
            document: doc(json!({"type": "vbucket", "vbuckets": 1024})),
            add: add(),
            remove: remove(),
        },
    ]
}

fn owners(router: &Router, keys: &[String]) -> Vec<String> {
    keys.iter().map(|key| router.node(key.as_str()).expect("node").to_string()).collect()
}

fn moved(before: &Router, operation: &Option<Value>, keys: &[String], old: &[String]) -> String {
    let Some(operation) = operation else { return "n/a".into() };
    let result = match operations::apply(before.topology(), operation) {
        Ok(result) => result,
        Err(err) => return format!("n/a ({})", err.code()),
    };
    let after = Router::from_value(&result["topology"]).expect("operation result loads");
    let new = owners(&after, keys);
    let count = old.iter().zip(&new).filter(|(a, b)| a != b).count();
    format!("{:.1}%", 100.0 * count as f64 / keys.len() as f64)
}

fn main() {
    let count: u64 =
        std::env::args().nth(1).map(|arg| arg.parse().expect("KEYS must be a number")).unwrap_or(1_000_000);
    let keys: Vec<String> = (0..count).map(|i| format!("user:{i}")).collect();
    println!("| strategy | max/mean load | moved on add (10→11; ideal 9.1%) | moved on remove (1 of 10; ideal 10.0%) | ns/key (median of 5) | heap bytes | range scans |");
    println!("|---|---|---|---|---|---|---|");
    for scenario in scenarios() {
        let text = scenario.document.to_string();
        let before_heap = LIVE.load(Ordering::Relaxed);
        let router = Router::from_json(&text).expect("scenario loads");
        let heap = LIVE.load(Ordering::Relaxed) - before_heap;
        let old = owners(&router, &keys);
        let mut load = std::collections::HashMap::<&str, u64>::new();
        for owner in &old {
            *load.entry(owner.as_str()).or_default() += 1;
        }
        let mean = count as f64 / router.nodes().len() as f64;
        let max = *load.values().max().unwrap_or(&0) as f64;
        let mut timings: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let mut sink = 0u64;
                for key in &keys {
                    sink = sink.wrapping_add(u64::from(router.route(key.as_str()).expect("route")));
                }
                std::hint::black_box(sink);
                start.elapsed().as_nanos() as f64 / count as f64
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
