//! The `kafka` and `elasticsearch` profiles from the outside: kafkajs' legacy murmur2
//! against a naive oracle that rounds exact products to 53 bits by hand (no floats),
//! Elasticsearch's routing against the formula written with `i64`, the canonical
//! documents, and the rejections. The real implementations are compared in
//! `conformance/oracles/`.

mod common;

use common::doc;
use proptest::prelude::*;
use serde_json::json;
use shardroute::strategy::compat::elasticsearch::{default_routing_shards, routing_hash};
use shardroute::strategy::compat::kafka::murmur2_kafkajs_legacy;
use shardroute::Router;

/// An exact integer product rounded to the nearest double (ties to even), as an integer.
fn round_to_double(x: i128) -> i128 {
    let magnitude = x.unsigned_abs();
    let bits = 128 - magnitude.leading_zeros();
    if bits <= 53 {
        return x;
    }
    let drop = bits - 53;
    let half = 1u128 << (drop - 1);
    let mut kept = magnitude >> drop;
    let rest = magnitude & ((1u128 << drop) - 1);
    if rest > half || (rest == half && kept & 1 == 1) {
        kept += 1;
    }
    let rounded = (kept << drop) as i128;
    if x < 0 {
        -rounded
    } else {
        rounded
    }
}

/// ECMAScript ToInt32 / ToUint32 of an integer.
fn int32(x: i128) -> i32 {
    x as u32 as i32
}

fn uint32(x: i128) -> u32 {
    x as u32
}

/// `legacy/murmur2.js` line by line, with every `*` a rounded double product.
fn naive_legacy(data: &[u8]) -> u32 {
    const M: i128 = 0x5bd1_e995;
    let length = data.len();
    let mut h: i128 = i128::from(0x9747_b28cu32 as i32 ^ length as i32);
    let blocks = length.div_ceil(4);
    for i in 0..blocks {
        let byte = |j: usize| i128::from(*data.get(i * 4 + j).unwrap_or(&0));
        let k = byte(0) + (byte(1) << 8) + (byte(2) << 16) + i128::from(int32(byte(3) << 24));
        let k = round_to_double(k * M);
        let k = i128::from(int32(k) ^ (uint32(k) >> 24) as i32);
        let k = round_to_double(k * M);
        h = round_to_double(h * M);
        h = i128::from(int32(h) ^ int32(k));
    }
    let tail = length & !3;
    let rem = length % 4;
    if rem >= 3 {
        h = i128::from(int32(h) ^ (i32::from(data[tail + 2]) << 16));
    }
    if rem >= 2 {
        h = i128::from(int32(h) ^ (i32::from(data[tail + 1]) << 8));
    }
    if rem >= 1 {
        h = i128::from(int32(h) ^ i32::from(data[tail]));
        h = round_to_double(h * M);
    }
    h = i128::from(int32(h) ^ (uint32(h) >> 13) as i32);
    h = round_to_double(h * M);
    (int32(h) ^ (uint32(h) >> 15) as i32) as u32
}

proptest! {
    #[test]
    fn legacy_murmur2_matches_the_naive_double_rounding(data in proptest::collection::vec(any::<u8>(), 0..80)) {
        prop_assert_eq!(murmur2_kafkajs_legacy(&data), naive_legacy(&data));
    }

    #[test]
    fn elasticsearch_shard_is_the_formula(text in "\\PC{0,24}", shards in 1u32..1100) {
        let router = doc(&["a", "b"]).strategy(json!({"type": "elasticsearch", "number_of_shards": shards})).router();
        let routing = i64::from(default_routing_shards(shards));
        let factor = routing / i64::from(shards);
        let expected = (i64::from(routing_hash(&text)).rem_euclid(routing) / factor) as u32;
        prop_assert_eq!(router.route(text.as_str()).unwrap(), expected);
    }
}

#[test]
fn legacy_murmur2_edges() {
    for length in [0usize, 1, 2, 3, 4, 5, 7, 8, 255, 1000] {
        for fill in [0u8, 0x7f, 0x80, 0xff] {
            let data = vec![fill; length];
            assert_eq!(murmur2_kafkajs_legacy(&data), naive_legacy(&data), "{length} x {fill:#x}");
        }
    }
}

#[test]
fn canonical_documents() {
    let kafka = doc(&["a", "b"]).strategy(json!({"type": "kafka", "partitions": 6})).router();
    assert!(
        kafka.to_json().contains(r#""strategy":{"partitioner":"java","partitions":6,"type":"kafka"}"#),
        "{}",
        kafka.to_json()
    );
    let es = doc(&["a", "b"]).strategy(json!({"type": "elasticsearch", "number_of_shards": 5})).router();
    assert!(es.to_json().contains(r#""number_of_routing_shards":640"#), "{}", es.to_json());
    assert_eq!(Router::from_json(&es.to_json()).unwrap().to_json(), es.to_json());
    assert_eq!(kafka.route(42u64).unwrap(), kafka.route("42").unwrap());
    assert_eq!(es.route(42u64).unwrap(), es.route("42").unwrap());
}

#[test]
fn profiles_refuse_a_hashing_section() {
    for strategy in [json!({"type": "kafka", "partitions": 6}), json!({"type": "elasticsearch", "number_of_shards": 2})]
    {
        let seeded = doc(&["a"]).strategy(strategy).hashing(json!({"seed": "ffffffffffffffffffffffffffffffff"}));
        let err = seeded.load().unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
        assert!(err.message().starts_with("hashing:"), "{}", err.message());
    }
}

#[test]
fn partitioned_index_keys() {
    let es = doc(&["a", "b"])
        .strategy(json!({"type": "elasticsearch", "number_of_shards": 12, "routing_partition_size": 3}))
        .router();
    let mut shards: Vec<u32> = (0..200).map(|i| es.route(format!("user-1\0doc-{i}").as_str()).unwrap()).collect();
    shards.sort_unstable();
    shards.dedup();
    // p consecutive routing slots (of 768, 64 per shard) fall in one or two adjacent shards.
    assert!(!shards.is_empty() && shards.len() <= 2, "{shards:?}");
    assert!(shards.len() == 1 || (shards[0] + 1) % 12 == shards[1] || (shards[1] + 1) % 12 == shards[0], "{shards:?}");
    assert_eq!(es.route("no-id").unwrap_err().code(), "invalid_key");
    assert_eq!(es.route(7u64).unwrap_err().code(), "invalid_key");
    assert_eq!(es.route(&b"\xff"[..]).unwrap_err().code(), "invalid_key");
}
