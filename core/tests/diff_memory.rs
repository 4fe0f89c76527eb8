//! `diff` streams: its counts and flows need no per-key storage, so three million keys
//! run in memory bounded by the node pairs. A counting allocator (this test binary's
//! own) measures the peak of live heap bytes during the call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use shardroute::diff::{diff, Tally};
use shardroute::{Key, Router};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; the counters only watch.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn modulo(nodes: usize) -> Router {
    let ids: Vec<String> = (0..nodes).map(|i| format!(r#"{{"id": "s{i}"}}"#)).collect();
    Router::from_json(&format!(
        r#"{{"format": "shardroute/1", "epoch": 1, "nodes": [{}], "strategy": {{"type": "modulo"}}, "hashing": {{"integers": "identity"}}}}"#,
        ids.join(",")
    ))
    .unwrap()
}

#[test]
fn three_million_keys_in_bounded_memory() {
    let (five, ten) = (modulo(5), modulo(10));
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let report = diff(&five, &ten, (0..3_000_000u64).map(Key::U64), false).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert_eq!((report.total, report.moved, report.keys), (3_000_000, 1_500_000, None));
    assert_eq!(report.flows.len(), 5);
    // The routers are built; what the call holds is its counters: a few KB, where one
    // entry per key would be over 100 MB.
    assert!(peak < 64 * 1024, "diff held {peak} bytes at its peak");

    // (One test function: the allocator's counters are the whole process's.)
    let cap = u64::from(shardroute::limits::MAX_DIFF_LISTED_KEYS);
    let listed = diff(&five, &ten, (0..cap).map(Key::U64), true).unwrap();
    assert_eq!(listed.keys.map(|keys| keys.len() as u64), Some(cap));
    let err = diff(&five, &ten, (0..cap + 1).map(Key::U64), true).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    assert!(err.message().starts_with("keys: "), "{}", err.message());
    // Counts alone take the same keys.
    let mut tally = Tally::new(&five, &ten, false);
    for id in 0..cap + 1 {
        tally.add(Key::U64(id)).unwrap();
    }
    assert_eq!(tally.finish().total, cap + 1);
}
