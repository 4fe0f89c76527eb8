//! What the session benches (`moved.rs`, `pipeline.rs`) share: a global allocator that
//! counts allocations, a `CLUSTER SHARDS` reply of N masters, and the timing loop (medians
//! over passes, allocations per operation).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{json, Value};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `name`'s value from the environment as a count, or `default`.
pub fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}

/// A `CLUSTER SHARDS` reply: `masters` masters on ports 7000.., redis-cli's split.
pub fn shards(masters: u32) -> Value {
    let per = 16384 / masters;
    Value::Array(
        (0..masters)
            .map(|i| {
                let end = if i == masters - 1 { 16383 } else { (i + 1) * per - 1 };
                json!({"slots": [i * per, end],
                       "nodes": [{"id": format!("{:040}", 7000 + i), "endpoint": "127.0.0.1", "ip": "127.0.0.1",
                                  "port": 7000 + i, "role": "master", "health": "online",
                                  "replication-offset": 0}]})
            })
            .collect(),
    )
}

/// One row: ns per operation, median (min, max) over the passes, and allocations per operation.
pub struct Row {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub allocations: f64,
}

/// Runs `pass` (which does `operations` operations) `passes` times after one warm-up.
pub fn time(passes: usize, operations: usize, mut pass: impl FnMut()) -> Row {
    pass();
    let mut samples = Vec::with_capacity(passes);
    let mut allocations = Vec::with_capacity(passes);
    for _ in 0..passes {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let start = Instant::now();
        pass();
        samples.push(start.elapsed().as_nanos() as f64 / operations as f64);
        allocations.push((ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / operations as f64);
    }
    samples.sort_by(f64::total_cmp);
    allocations.sort_by(f64::total_cmp);
    Row {
        median: samples[samples.len() / 2],
        min: samples[0],
        max: samples[samples.len() - 1],
        allocations: allocations[allocations.len() / 2],
    }
}

/// A table row: `name`, the median (min-max) ns and the allocations with `decimals` digits.
pub fn print(name: &str, row: &Row, decimals: usize) {
    println!("| {name} | {:.0} ns ({:.0}-{:.0}) | {:.decimals$} |", row.median, row.min, row.max, row.allocations);
}
