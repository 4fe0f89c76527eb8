//! `ketama.json`: the `ketama` profile (memcached clients' continuum) in its three
//! variants: routing cases over the standard keys for libmemcached (default port elided
//! and not, integer weights, the 25-server float rounding), libketama (float32 weight
//! maths, memory in MB) and Couchbase (servers sorted by address); and the documents it
//! refuses (a non-default `hashing`, a missing or malformed address, fractional weights,
//! weights under `couchbase`, duplicate addresses, a bad variant or point count).
//!
//! Every `route` case of the `libmemcached-*` and `libketama-*` topologies is checked
//! against the real implementation by `conformance/oracles/test_ketama.py` (Debian's
//! libmemcached 1.1.4, PyPI `ketama` 0.1.1).

use serde_json::{json, Value};

use super::cases::{refused_documents, routed};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

fn servers(list: &[(&str, u64)]) -> Value {
    Value::Array(
        list.iter()
            .enumerate()
            .map(|(index, (address, weight))| {
                if *weight == 1 {
                    json!({"id": format!("mc{index}"), "address": address})
                } else {
                    json!({"id": format!("mc{index}"), "address": address, "weight": weight})
                }
            })
            .collect(),
    )
}

fn ketama(variant: &str) -> Value {
    json!({"type": "ketama", "variant": variant})
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "ketama",
        "The ketama profile: libmemcached (KETAMA_WEIGHTED), libketama and Couchbase continuums over the standard keys, and the documents the profile refuses.",
        "generator; the route cases of the libmemcached-* and libketama-* topologies are checked against Debian libmemcached 1.1.4 and PyPI ketama 0.1.1 (last.fm ketama.c) by conformance/oracles/test_ketama.py",
    );
    let three = servers(&[("10.0.0.1:11211", 1), ("10.0.0.2:11211", 1), ("10.0.0.3:11211", 1)]);
    routed(&mut file, "libmemcached-default-port", doc(three, json!({"type": "ketama"})));
    let weighted = servers(&[("cache-a:11211", 100), ("cache-b:11212", 300), ("10.1.2.3:22122", 7), ("cache-c:1", 1)]);
    routed(&mut file, "libmemcached-weighted", doc(weighted, ketama("libmemcached")));
    let twenty_five: Vec<String> = (0..25).map(|i| format!("10.0.0.{i}:11211")).collect();
    let list: Vec<(&str, u64)> = twenty_five.iter().map(|a| (a.as_str(), 1)).collect();
    routed(&mut file, "libmemcached-25-servers", doc(servers(&list), ketama("libmemcached")));
    let megabytes =
        servers(&[("10.0.1.1:11211", 900), ("10.0.1.2:11211", 300), ("10.0.1.3:11211", 1500), ("cache:1", 64)]);
    routed(&mut file, "libketama-weighted-mb", doc(megabytes, ketama("libketama")));
    let unsorted = servers(&[("192.168.0.3:11210", 1), ("192.168.0.1:11210", 1), ("192.168.0.2:11210", 1)]);
    routed(&mut file, "couchbase-sorted", doc(unsorted, ketama("couchbase")));

    let good = || servers(&[("a:11211", 1), ("b:11211", 1)]);
    let one = |node: Value, variant: &str| doc(json!([node]), ketama(variant));
    let seeded = json!({"function": "siphash-2-4", "seed": "0f0e0d0c0b0a09080706050403020100"});
    let bad = [
        ("hashing-not-default", doc(good(), ketama("libmemcached")).hashing(seeded)),
        ("hash-tag", doc(good(), ketama("libketama")).hashing(json!({"hash_tag": "redis"}))),
        ("no-address", one(json!({"id": "a"}), "libmemcached")),
        ("no-port", one(json!({"id": "a", "address": "cache-a"}), "libmemcached")),
        ("port-zero", one(json!({"id": "a", "address": "cache-a:0"}), "libmemcached")),
        ("fractional-weight", one(json!({"id": "a", "address": "a:1", "weight": 1.5}), "libmemcached")),
        ("couchbase-weight", one(json!({"id": "a", "address": "a:1", "weight": 2}), "couchbase")),
        (
            "duplicate-address",
            doc(json!([{"id": "a", "address": "a:1"}, {"id": "b", "address": "a:1"}]), ketama("couchbase")),
        ),
        (
            "libketama-address-too-long",
            one(json!({"id": "a", "address": "memcached-01.example.com:11211"}), "libketama"),
        ),
        ("unknown-variant", doc(good(), ketama("spymemcached"))),
        ("points-not-multiple-of-4", doc(good(), json!({"type": "ketama", "points_per_server": 162}))),
        ("points-zero", doc(good(), json!({"type": "ketama", "points_per_server": 0}))),
    ];
    refused_documents(&mut file, "reject/", bad.map(|(label, document)| (label, document, "invalid_topology")));
    file
}
