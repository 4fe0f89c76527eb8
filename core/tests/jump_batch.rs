//! The interleaved batch jump (`jump_many` and the router's batch functions on a `jump`
//! topology) against the scalar `jump`, key by key: it must give the same bucket for
//! every key and bucket count, including the edges of both ranges and batch lengths
//! around the lane count and the hashing chunk.

mod common;

use common::doc;
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::strategy::hashed::jump::{jump_many, jump_many_each_isa};
use shardroute::{jump, Key, Router};

/// The scalar jump of every key: the oracle.
fn scalar(keys: &[u64], buckets: u32) -> Vec<u32> {
    keys.iter().map(|&key| jump(key, buckets).unwrap()).collect()
}

/// `jump_many`, after checking that the pass compiled for every instruction set this
/// processor has (baseline SSE2, AVX2, AVX-512) gives the same buckets as the one
/// `jump_many` picked.
fn batch(keys: &[u64], buckets: u32) -> Vec<u32> {
    let mut out = vec![7; 3]; // stale content the call must clear
    jump_many(keys, buckets, &mut out).unwrap();
    for (isa, buckets_at_isa) in jump_many_each_isa(keys, buckets) {
        assert_eq!(buckets_at_isa, out, "{isa} passes, {} keys, {buckets} buckets", keys.len());
    }
    out
}

#[test]
fn every_instruction_set_of_this_machine_is_exercised() {
    let levels: Vec<&str> = jump_many_each_isa(&[1], 100).into_iter().map(|(isa, _)| isa).collect();
    assert_eq!(levels[0], "baseline");
    // Print what ran, so the test log says which variants this machine covered.
    println!("jump batch variants checked here: {levels:?}");
    for (isa, buckets) in jump_many_each_isa(&[0, 1], 100) {
        assert_eq!(buckets, [0, 55], "{isa}: Guava's golden value jump(1, 100) = 55");
    }
}

/// Keys that stress the arithmetic: 0, the top of the range, and neighbours of both.
const EDGE_KEYS: [u64; 8] = [0, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 0x5555_5555_5555_5555];

/// Bucket counts at the edges: one bucket, two, around 2^31 (where `bucket + 1` no
/// longer fits an `i32`) and `u32::MAX`.
const EDGE_BUCKETS: [u32; 8] = [1, 2, 3, 1 << 31, (1 << 31) - 1, (1 << 31) + 1, u32::MAX - 1, u32::MAX];

/// Batch lengths around the lane count (64), the hashing chunk (256) and vector widths.
const LENGTHS: [usize; 15] = [0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 511, 512, 513, 1500];

#[test]
fn edge_keys_and_bucket_counts_match_the_scalar_jump() {
    // Each edge key alone, and all of them in one batch among ordinary keys (so that
    // they run in lanes next to other keys, not only in the start or the drain).
    let mut mixed: Vec<u64> = (0..100).collect();
    for (index, &key) in EDGE_KEYS.iter().enumerate() {
        mixed.insert(index * 11, key);
    }
    for buckets in EDGE_BUCKETS.into_iter().chain([10, 1000, 65_536]) {
        for key in EDGE_KEYS {
            assert_eq!(batch(&[key], buckets), scalar(&[key], buckets), "key {key}, {buckets} buckets");
        }
        assert_eq!(batch(&mixed, buckets), scalar(&mixed, buckets), "{buckets} buckets");
    }
    // Published values (Guava's golden tests, as in the scalar doctest) through the batch.
    assert_eq!(batch(&[0, 1], 100)[1], 55);
}

#[test]
fn every_batch_length_matches_the_scalar_jump() {
    for length in LENGTHS {
        let keys: Vec<u64> = (0..length as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        for buckets in [1, 2, 10, 1000, u32::MAX] {
            assert_eq!(batch(&keys, buckets), scalar(&keys, buckets), "{length} keys, {buckets} buckets");
        }
    }
}

#[test]
fn zero_buckets_is_an_error_and_leaves_out_empty() {
    let mut out = vec![1, 2, 3];
    assert_eq!(jump_many(&[1, 2], 0, &mut out).unwrap_err().code(), "no_nodes");
    assert!(out.is_empty());
}

fn jump_router(nodes: usize, hashing: Value) -> Router {
    doc(nodes).strategy(json!({"type": "jump"})).hashing(hashing).router()
}

#[test]
fn router_batches_on_jump_equal_route_per_key() {
    for nodes in [1, 3, 10, 1000] {
        for hashing in [json!({"integers": "identity"}), json!({"hash_tag": "redis"}), json!({"function": "crc32"})] {
            let router = jump_router(nodes, hashing.clone());
            for length in LENGTHS {
                let ints: Vec<u64> = (0..length as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
                let text: Vec<String> = (0..length).map(|i| format!("{{user:{}}}:{i}", i % 7)).collect();
                let context = format!("{nodes} nodes, {hashing}, {length} keys");

                let mut out = vec![9; 2];
                router.route_u64s_into(&ints, &mut out).unwrap();
                let expected: Vec<u32> = ints.iter().map(|&key| router.route(key).unwrap()).collect();
                assert_eq!(out, expected, "route_u64s_into, {context}");

                router.route_many_into(text.iter().map(String::as_str), &mut out).unwrap();
                let expected: Vec<u32> = text.iter().map(|key| router.route(key.as_str()).unwrap()).collect();
                assert_eq!(out, expected, "route_many_into, {context}");
                router.node_index_many_into(text.iter().map(String::as_str), &mut out).unwrap();
                let nodes: Vec<u32> = text.iter().map(|key| router.node_index(key.as_str()).unwrap()).collect();
                assert_eq!(out, nodes, "node_index_many_into, {context}");

                let mut data = Vec::new();
                let mut offsets = vec![0u32];
                for key in &text {
                    data.extend_from_slice(key.as_bytes());
                    offsets.push(data.len() as u32);
                }
                router.route_packed_into(&data, &offsets, &mut out).unwrap();
                assert_eq!(out, expected, "route_packed_into, {context}");
            }
        }
    }
}

#[test]
fn packed_batch_with_bad_offsets_keeps_the_shards_before_the_bad_key() {
    let router = jump_router(10, json!({}));
    let text: Vec<String> = (0..600).map(|i| format!("user:{i}")).collect();
    let mut data = Vec::new();
    let mut offsets = vec![0u32];
    for key in &text {
        data.extend_from_slice(key.as_bytes());
        offsets.push(data.len() as u32);
    }
    let expected: Vec<u32> = text.iter().map(|key| router.route(key.as_str()).unwrap()).collect();
    // A decreasing pair at key 530 (past the first hashing chunk), then one past the data.
    for (bad, offset) in [(530, 3), (599, data.len() as u32 + 1)] {
        let mut broken = offsets.clone();
        broken[bad + 1] = offset;
        let mut out = Vec::new();
        let err = router.route_packed_into(&data, &broken, &mut out).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.to_string().contains(&format!("offsets[{bad}..={}]", bad + 1)), "{err}");
        assert_eq!(out, expected[..bad], "key {bad}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random keys over random bucket counts, small and large, and `u32::MAX`.
    #[test]
    fn random_keys_match_the_scalar_jump(
        keys in proptest::collection::vec(any::<u64>(), 0..300),
        buckets in prop_oneof![1u32..=16, 1u32..=(1 << 20), Just(u32::MAX), any::<u32>().prop_map(|b| b.max(1))],
    ) {
        prop_assert_eq!(batch(&keys, buckets), scalar(&keys, buckets));
    }

    /// The router's integer batch on `jump` (identity hashing: the keys are the hashes)
    /// is the scalar jump over the node count.
    #[test]
    fn router_integer_batch_is_the_scalar_jump(
        keys in proptest::collection::vec(any::<u64>(), 0..1100),
        nodes in 1usize..=64,
    ) {
        let router = jump_router(nodes, json!({"integers": "identity"}));
        let mut out = Vec::new();
        router.route_u64s_into(&keys, &mut out).unwrap();
        prop_assert_eq!(&out, &scalar(&keys, nodes as u32));
        router.route_many_into(keys.iter().map(|&key| Key::U64(key)), &mut out).unwrap();
        prop_assert_eq!(out, scalar(&keys, nodes as u32));
    }
}
