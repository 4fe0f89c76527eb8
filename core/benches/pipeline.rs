//! What auto-pipelining's calls cost the session per command (issue 37: "the session's
//! own cost stays under 1 µs per command"), on a table of 6 masters.
//!
//! ```text
//! cargo bench -p shardroute --bench pipeline
//! ```
//!
//! Rows, each per command, medians of ns over the passes (min-max), and heap allocations
//! per command, counted by a wrapping global allocator:
//!
//! * **calls, alone**: one command a turn on an idle connection: `pipeline_queued` (written
//!   at once, a write of one) + `pipeline_done` (the connection forgotten again: the worst
//!   case, one small allocation each time);
//! * **calls, 50 in flight**: 50 commands a turn over the 6 masters' connections:
//!   `pipeline_queued` each, then each connection's flush (`pipeline_take` until 0) and
//!   `pipeline_done`, divided by 50;
//! * **steady path with / without**: `send_now_timed` (the shells' steady path) +
//!   `pipeline_queued` + the flush and done shares, against `send_now_timed` alone: the
//!   difference is what auto-pipelining adds to a command.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `SHARDROUTE_BENCH_COMMANDS` | 50000 | commands per pass |
//! | `SHARDROUTE_BENCH_PASSES` | 15 | timed passes per row (after one warm-up pass) |
//!
//! Without `--bench` (as `cargo test --benches` runs it) every row runs one short pass.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{json, Value};
use shardroute::session::redis::PipelineQueued;
use shardroute::session::{Access, ClusterConfig, ClusterSession};
use shardroute::Key;

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

const MASTERS: u32 = 6;
const IN_FLIGHT: usize = 50;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}

/// A `CLUSTER SHARDS` reply: `MASTERS` masters on ports 7000.., redis-cli's split.
fn shards() -> Value {
    let per = 16384 / MASTERS;
    Value::Array(
        (0..MASTERS)
            .map(|i| {
                let end = if i == MASTERS - 1 { 16383 } else { (i + 1) * per - 1 };
                json!({"slots": [i * per, end],
                       "nodes": [{"id": format!("{:040}", 7000 + i), "endpoint": "127.0.0.1", "ip": "127.0.0.1",
                                  "port": 7000 + i, "role": "master", "health": "online",
                                  "replication-offset": 0}]})
            })
            .collect(),
    )
}

struct Row {
    median: f64,
    min: f64,
    max: f64,
    allocations: f64,
}

/// Runs `pass` (which handles `commands` commands) `passes` times after one warm-up.
fn time(passes: usize, commands: usize, mut pass: impl FnMut()) -> Row {
    pass();
    let mut samples = Vec::with_capacity(passes);
    let mut allocations = Vec::with_capacity(passes);
    for _ in 0..passes {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let start = Instant::now();
        pass();
        samples.push(start.elapsed().as_nanos() as f64 / commands as f64);
        allocations.push((ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / commands as f64);
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

fn print(name: &str, row: &Row) {
    println!("| {name} | {:.0} ns ({:.0}-{:.0}) | {:.2} |", row.median, row.min, row.max, row.allocations);
}

fn main() {
    let bench = std::env::args().any(|arg| arg == "--bench");
    let commands = if bench { env_count("SHARDROUTE_BENCH_COMMANDS", 50_000) } else { 500 };
    let commands = commands.div_ceil(IN_FLIGHT) * IN_FLIGHT;
    let passes = if bench { env_count("SHARDROUTE_BENCH_PASSES", 15) } else { 1 };
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    session.refreshed(&shards(), 0).unwrap();
    let addresses: Vec<String> = session.endpoints().iter().map(|endpoint| endpoint.address()).collect();
    let keys: Vec<String> = (0..1000).map(|n| format!("user:{n}")).collect();
    println!("| row ({MASTERS} masters, per command) | ns, median (min-max) | allocations |");
    println!("|---|---|---|");

    let mut turn = 0usize;
    let alone = time(passes, commands, || {
        for _ in 0..commands {
            let address = &addresses[turn % addresses.len()];
            turn += 1;
            assert_eq!(session.pipeline_queued(address, false), PipelineQueued::Write);
            assert_eq!(session.pipeline_done(address, false), 0);
        }
    });
    print("calls, alone: queued (written at once) + done", &alone);

    let mut nodes = vec![0usize; IN_FLIGHT];
    let in_flight = time(passes, commands, || {
        for _ in 0..commands / IN_FLIGHT {
            for node in nodes.iter_mut() {
                *node = turn % addresses.len();
                turn = turn.wrapping_mul(31).wrapping_add(7);
                black_box(session.pipeline_queued(&addresses[*node], false));
            }
            for address in &addresses {
                while black_box(session.pipeline_take(address, false)) > 0 {}
                // Each write ends (the idle connection's first command, written at once, the
                // flush's, and those the ends start), until the connection is idle.
                while session.pipeline_pending(address, false).1 > 0 {
                    black_box(session.pipeline_done(address, false));
                }
                assert_eq!(session.pipeline_pending(address, false), (0, 0));
            }
        }
    });
    print(&format!("calls, {IN_FLIGHT} in flight: queued, then each node's take + done"), &in_flight);

    let mut steady = |pipelined: bool| {
        let mut sent: Vec<(u32, bool)> = Vec::with_capacity(IN_FLIGHT);
        time(passes, commands, || {
            for _ in 0..commands / IN_FLIGHT {
                sent.clear();
                for _ in 0..IN_FLIGHT {
                    let key = [Key::from(keys[turn % keys.len()].as_str())];
                    turn += 1;
                    let (node, readonly, deadline) = session.send_now_timed(&key, Access::Write, 1).unwrap().unwrap();
                    black_box(deadline);
                    if pipelined {
                        black_box(session.pipeline_queued(&addresses[node as usize], readonly));
                    }
                    sent.push((node, readonly));
                }
                if pipelined {
                    for address in &addresses {
                        while black_box(session.pipeline_take(address, false)) > 0 {}
                        while session.pipeline_pending(address, false).1 > 0 {
                            black_box(session.pipeline_done(address, false));
                        }
                    }
                }
                black_box(&sent);
            }
        })
    };
    let with = steady(true);
    let without = steady(false);
    print("steady path with auto-pipelining: send_now_timed + queued + flush/done shares", &with);
    print("steady path without: send_now_timed", &without);
    println!(
        "| auto-pipelining's share of the steady path (difference) | {:.0} ns | {:.2} |",
        with.median - without.median,
        with.allocations - without.allocations
    );
}
