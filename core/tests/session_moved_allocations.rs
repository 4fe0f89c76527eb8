//! A `MOVED` to a node the table has costs the session a table write, not a new table:
//! the heap allocations of `failed(MOVED)` are a few, the same over 3 masters as over
//! 100 (a rebuild allocated every node, range and slot table again: 55 allocations a
//! MOVED over 3 masters and 1,023 over 100 before the slot table was edited in place).
//! Counted per thread by a wrapping global allocator, so other tests running at the same
//! time do not count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use serde_json::{json, Value};
use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
use shardroute::strategy::compat::redis_cluster::key_slot;
use shardroute::Key;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// `CLUSTER SHARDS` of `masters` masters on ports 7000.., equal ranges.
fn shards(masters: u32) -> Value {
    let per = 16384 / masters;
    Value::Array(
        (0..masters)
            .map(|i| {
                let end = if i == masters - 1 { 16383 } else { (i + 1) * per - 1 };
                json!({"slots": [i * per, end],
                       "nodes": [{"id": format!("{:040}", 7000 + i), "endpoint": "127.0.0.1", "port": 7000 + i,
                                  "role": "master", "health": "online"}]})
            })
            .collect(),
    )
}

/// The most allocations one `failed(MOVED)` took over 200 MOVEDs (slots moved to the next
/// master and back, spread over the table).
fn most_per_moved(masters: u32) -> u64 {
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    session.refreshed(&shards(masters), 0).unwrap();
    let per = 16384 / masters;
    let mut most = 0;
    let mut moved = 0;
    for i in 0..4_000u32 {
        let key = format!("key:{i}");
        let slot = key_slot(Key::Bytes(key.as_bytes()));
        if !slot.is_multiple_of(7) {
            continue;
        }
        let owner = (slot / per).min(masters - 1);
        for port in [7000 + (owner + 1) % masters, 7000 + owner] {
            let keys = [Key::from(key.as_str())];
            let mut command = session.command(&keys, Access::Write, 0).unwrap();
            assert!(matches!(session.poll(&mut command, 0), Action::Send(_)));
            let reply = format!("MOVED {slot} 127.0.0.1:{port}");
            let before = allocations();
            let action = session.failed(&mut command, &reply, &["MovedError"], 0);
            most = most.max(allocations() - before);
            let Action::Send(target) = action else { panic!("{action:?}") };
            assert_eq!(target.endpoint.port() as u32, port);
            moved += 1;
        }
    }
    assert!(moved >= 200, "{moved} MOVEDs");
    assert_eq!(session.stats().moved, moved);
    assert_eq!(session.endpoints().len(), masters as usize);
    most
}

#[test]
fn a_moved_allocates_a_few_times_whatever_the_node_count() {
    let (three, hundred) = (most_per_moved(3), most_per_moved(100));
    assert!(three <= 12, "{three} allocations for a MOVED over 3 masters");
    assert!(hundred <= 12, "{hundred} allocations for a MOVED over 100 masters");
}
