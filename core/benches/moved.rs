//! What one `MOVED` costs: through the Redis Cluster session (the path both bindings
//! take) and through [`Router::moved`], on a table of 16,384 slots over 3 and 100
//! masters.
//!
//! ```text
//! cargo bench -p shardroute --bench moved
//! ```
//!
//! Each MOVED moves a slot to another master and the next one moves it back, so the
//! table stays the same size over the run. The session rows time `command` + `poll` +
//! `failed(MOVED)` (which answers the resend) and, beside them, `command` + `poll` +
//! `succeeded` on the same keys: the difference is what the MOVED itself costs. Medians of
//! ns per MOVED over the passes (min-max), and heap allocations per MOVED, counted by a
//! wrapping global allocator.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `SHARDROUTE_BENCH_MOVES` | 20000 | MOVEDs per pass |
//! | `SHARDROUTE_BENCH_PASSES` | 15 | timed passes per row (after one warm-up pass) |
//!
//! Without `--bench` (as `cargo test --benches` runs it) every row runs one short pass.

use std::hint::black_box;

use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
use shardroute::strategy::compat::redis_cluster::key_slot;
use shardroute::Key;

mod session_support;
use session_support::{env_count, shards, time};

fn print(name: &str, row: &session_support::Row) {
    session_support::print(name, row, 1);
}

/// One key per slot for the first `count` slots that some `k<i>` reaches, spread over
/// the table: `(key, slot)`.
fn keys(count: usize) -> Vec<(String, u32)> {
    let mut first: Vec<Option<String>> = vec![None; 16384];
    for i in 0..400_000u32 {
        let key = format!("k{i}");
        let slot = key_slot(Key::Bytes(key.as_bytes())) as usize;
        first[slot].get_or_insert(key);
    }
    let step = 16384 / count;
    (0..count)
        .filter_map(|n| {
            let slot = (n * step) as u32;
            first[slot as usize].clone().map(|key| (key, slot))
        })
        .collect()
}

/// The master port of `slot` and the one a MOVED sends it to (the next master).
fn ports(masters: u32, slot: u32) -> (u32, u32) {
    let per = 16384 / masters;
    let owner = (slot / per).min(masters - 1);
    (7000 + owner, 7000 + (owner + 1) % masters)
}

fn main() {
    let bench = std::env::args().any(|arg| arg == "--bench");
    let moves = if bench { env_count("SHARDROUTE_BENCH_MOVES", 20_000) } else { 200 };
    let passes = if bench { env_count("SHARDROUTE_BENCH_PASSES", 15) } else { 1 };
    println!("| row (16,384 slots) | ns per MOVED, median (min-max) | allocations per MOVED |");
    println!("|---|---|---|");
    for masters in [3u32, 100] {
        let keys = keys(1000);
        // Each key's MOVED there and back: (key, slot, there, back).
        let redirects: Vec<(&str, u32, String, String)> = keys
            .iter()
            .map(|(key, slot)| {
                let (owner, next) = ports(masters, *slot);
                (
                    key.as_str(),
                    *slot,
                    format!("MOVED {slot} 127.0.0.1:{next}"),
                    format!("MOVED {slot} 127.0.0.1:{owner}"),
                )
            })
            .collect();

        let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
        session.refreshed(&shards(masters), 0).unwrap();
        let mut turn = 0usize;
        let moved = time(passes, moves, || {
            for _ in 0..moves {
                let (key, _, there, back) = &redirects[(turn / 2) % redirects.len()];
                let reply = if turn.is_multiple_of(2) { there } else { back };
                turn += 1;
                let keys = [Key::from(*key)];
                let mut command = session.command(&keys, Access::Write, 0).unwrap();
                let Action::Send(_) = session.poll(&mut command, 0) else { panic!("no send") };
                let Action::Send(_) = session.failed(&mut command, reply, &["MovedError"], 0) else {
                    panic!("no resend")
                };
                black_box(session.succeeded(&mut command, 0));
            }
        });
        assert_eq!(session.stats().refreshes, 1, "no refresh during the run (time stands still)");
        let plain = time(passes, moves, || {
            for _ in 0..moves {
                let (key, _, _, _) = &redirects[(turn / 2) % redirects.len()];
                turn += 1;
                let keys = [Key::from(*key)];
                let mut command = session.command(&keys, Access::Write, 0).unwrap();
                let Action::Send(_) = session.poll(&mut command, 0) else { panic!("no send") };
                black_box(session.succeeded(&mut command, 0));
            }
        });
        print(&format!("session, {masters} masters: command + MOVED + resend + reply"), &moved);
        print(&format!("session, {masters} masters: command + reply (no MOVED)"), &plain);
        println!(
            "| session, {masters} masters: the MOVED alone (difference) | {:.0} ns | {:.1} |",
            moved.median - plain.median,
            moved.allocations - plain.allocations
        );

        let mut router = session.router().unwrap().clone();
        let addresses: Vec<(u32, String, String)> = keys
            .iter()
            .map(|(_, slot)| {
                let (owner, next) = ports(masters, *slot);
                (*slot, format!("127.0.0.1:{next}"), format!("127.0.0.1:{owner}"))
            })
            .collect();
        let mut turn = 0usize;
        let row = time(passes, moves, || {
            for _ in 0..moves {
                let (slot, there, back) = &addresses[(turn / 2) % addresses.len()];
                let address = if turn.is_multiple_of(2) { there } else { back };
                turn += 1;
                router = router.moved(*slot, address).unwrap();
            }
        });
        black_box(&router);
        print(&format!("Router::moved, {masters} masters"), &row);
    }
}
