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

use std::hint::black_box;

use shardroute::session::redis::PipelineQueued;
use shardroute::session::{Access, ClusterConfig, ClusterSession};
use shardroute::Key;

mod session_support;
use session_support::{env_count, time};

fn print(name: &str, row: &session_support::Row) {
    session_support::print(name, row, 2);
}

fn shards() -> serde_json::Value {
    session_support::shards(MASTERS)
}

const MASTERS: u32 = 6;
const IN_FLIGHT: usize = 50;

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
