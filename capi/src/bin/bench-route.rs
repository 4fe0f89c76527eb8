//! The Rust side of the C ABI's bench (docs/c.md, "Performance"): single-key `route` of
//! the core called from Rust, the same call through the ABI's entry point
//! (`sr_router_route`: argument checks, `catch_unwind`, status), and the batch forms, on
//! the topology and keys conformance/c/bench.c uses. Prints one line per row, ns per key.
//! `cargo run --release -p shardroute-c --bin bench-route`.

use std::hint::black_box;
use std::time::Instant;

use sr::{Key, Router};

/// The bench's topology: jump over 16 nodes (as conformance/c/bench.c).
const TOPOLOGY: &str = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "n0"}, {"id": "n1"}, {"id": "n2"},
  {"id": "n3"}, {"id": "n4"}, {"id": "n5"}, {"id": "n6"}, {"id": "n7"}, {"id": "n8"}, {"id": "n9"}, {"id": "n10"},
  {"id": "n11"}, {"id": "n12"}, {"id": "n13"}, {"id": "n14"}, {"id": "n15"}], "strategy": {"type": "jump"}}"#;
const KEYS: usize = 1024;
const ROUNDS: usize = 4000;

fn time(name: &str, per_round: usize, mut body: impl FnMut() -> u64) {
    let mut sum = 0u64;
    for _ in 0..ROUNDS / 10 {
        sum = sum.wrapping_add(body());
    }
    let start = Instant::now();
    for _ in 0..ROUNDS {
        sum = sum.wrapping_add(body());
    }
    let ns = start.elapsed().as_nanos() as f64 / (ROUNDS * per_round) as f64;
    println!("rust  {name:<34} {ns:7.2} ns/key  (checksum {})", black_box(sum) % 1000);
}

fn main() {
    let router = Router::from_json(TOPOLOGY).expect("the bench topology");
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}")).collect();
    let ints: Vec<u64> = (0..KEYS as u64).collect();
    time("core route(bytes)", KEYS, || {
        keys.iter().map(|k| u64::from(router.route(Key::Bytes(black_box(k.as_bytes()))).unwrap())).sum()
    });
    time("core route(u64)", KEYS, || {
        ints.iter().map(|&k| u64::from(router.route(Key::U64(black_box(k))).unwrap())).sum()
    });
    let handle = {
        let mut out = std::ptr::null_mut();
        // SAFETY: a valid text and out-parameter.
        let error = unsafe { shardroute::sr_router_new(TOPOLOGY.as_ptr().cast(), TOPOLOGY.len(), &mut out) };
        assert!(error.is_null());
        out
    };
    time("abi sr_router_route(bytes)", KEYS, || {
        let mut sum = 0u64;
        for key in &keys {
            let mut shard = 0u32;
            // SAFETY: a live router, a borrowed key, a valid out-parameter.
            let error = unsafe { shardroute::sr_router_route(handle, black_box(key.as_ptr()), key.len(), &mut shard) };
            debug_assert!(error.is_null());
            sum += u64::from(shard);
        }
        sum
    });
    let mut data = Vec::new();
    let mut offsets = vec![0u32];
    for key in &keys {
        data.extend_from_slice(key.as_bytes());
        offsets.push(data.len() as u32);
    }
    let mut out = Vec::new();
    time("core route_packed_into (1024 keys)", KEYS, || {
        router.route_packed_into(black_box(&data), &offsets, &mut out).unwrap();
        out.iter().map(|&s| u64::from(s)).sum()
    });
    let mut shards = vec![0u32; KEYS];
    time("abi sr_router_route_packed (1024)", KEYS, || {
        // SAFETY: live router, borrowed buffers, an out array of KEYS entries.
        let error = unsafe {
            shardroute::sr_router_route_packed(
                handle,
                black_box(data.as_ptr()),
                data.len(),
                offsets.as_ptr(),
                offsets.len(),
                shards.as_mut_ptr(),
                shards.len(),
            )
        };
        debug_assert!(error.is_null());
        shards.iter().map(|&s| u64::from(s)).sum()
    });
    // SAFETY: the router made above, freed once.
    unsafe { shardroute::sr_router_free(handle) };
}
