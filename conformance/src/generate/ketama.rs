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
use shardroute::Router;

use super::{doc, expect_error, routing_cases, VectorFile};

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
    let add = |file: &mut VectorFile, id: &str, document: Value| {
        let router: Router = file.topology(id, document);
        routing_cases(file, id, &router);
    };
    add(
        &mut file,
        "libmemcached-default-port",
        doc(
            1,
            servers(&[("10.0.0.1:11211", 1), ("10.0.0.2:11211", 1), ("10.0.0.3:11211", 1)]),
            json!({"type": "ketama"}),
        ),
    );
    add(
        &mut file,
        "libmemcached-weighted",
        doc(
            1,
            servers(&[("cache-a:11211", 100), ("cache-b:11212", 300), ("10.1.2.3:22122", 7), ("cache-c:1", 1)]),
            ketama("libmemcached"),
        ),
    );
    let twenty_five: Vec<String> = (0..25).map(|i| format!("10.0.0.{i}:11211")).collect();
    let list: Vec<(&str, u64)> = twenty_five.iter().map(|a| (a.as_str(), 1)).collect();
    add(&mut file, "libmemcached-25-servers", doc(1, servers(&list), ketama("libmemcached")));
    add(
        &mut file,
        "libketama-weighted-mb",
        doc(
            1,
            servers(&[("10.0.1.1:11211", 900), ("10.0.1.2:11211", 300), ("10.0.1.3:11211", 1500), ("cache:1", 64)]),
            ketama("libketama"),
        ),
    );
    add(
        &mut file,
        "couchbase-sorted",
        doc(
            1,
            servers(&[("192.168.0.3:11210", 1), ("192.168.0.1:11210", 1), ("192.168.0.2:11210", 1)]),
            ketama("couchbase"),
        ),
    );

    let good = servers(&[("a:11211", 1), ("b:11211", 1)]);
    let reject = |file: &mut VectorFile, what: &str, document: Value, code: &str| {
        let outcome = Router::from_value(&document).map(drop);
        expect_error(
            file,
            &format!("reject/{what}"),
            json!({"op": "load", "topology_json": document.to_string()}),
            code,
            outcome,
        );
    };
    let mut siphash = doc(1, good.clone(), ketama("libmemcached"));
    siphash["hashing"] = json!({"function": "siphash-2-4", "seed": "0f0e0d0c0b0a09080706050403020100"});
    reject(&mut file, "hashing-not-default", siphash, "invalid_topology");
    let mut tagged = doc(1, good.clone(), ketama("libketama"));
    tagged["hashing"] = json!({"hash_tag": "redis"});
    reject(&mut file, "hash-tag", tagged, "invalid_topology");
    reject(&mut file, "no-address", doc(1, json!([{"id": "a"}]), ketama("libmemcached")), "invalid_topology");
    reject(
        &mut file,
        "no-port",
        doc(1, json!([{"id": "a", "address": "cache-a"}]), ketama("libmemcached")),
        "invalid_topology",
    );
    reject(
        &mut file,
        "port-zero",
        doc(1, json!([{"id": "a", "address": "cache-a:0"}]), ketama("libmemcached")),
        "invalid_topology",
    );
    reject(
        &mut file,
        "fractional-weight",
        doc(1, json!([{"id": "a", "address": "a:1", "weight": 1.5}]), ketama("libmemcached")),
        "invalid_topology",
    );
    reject(
        &mut file,
        "couchbase-weight",
        doc(1, json!([{"id": "a", "address": "a:1", "weight": 2}]), ketama("couchbase")),
        "invalid_topology",
    );
    reject(
        &mut file,
        "duplicate-address",
        doc(1, json!([{"id": "a", "address": "a:1"}, {"id": "b", "address": "a:1"}]), ketama("couchbase")),
        "invalid_topology",
    );
    reject(
        &mut file,
        "libketama-address-too-long",
        doc(1, json!([{"id": "a", "address": "memcached-01.example.com:11211"}]), ketama("libketama")),
        "invalid_topology",
    );
    reject(&mut file, "unknown-variant", doc(1, good.clone(), ketama("spymemcached")), "invalid_topology");
    reject(
        &mut file,
        "points-not-multiple-of-4",
        doc(1, good.clone(), json!({"type": "ketama", "points_per_server": 162})),
        "invalid_topology",
    );
    reject(
        &mut file,
        "points-zero",
        doc(1, good, json!({"type": "ketama", "points_per_server": 0})),
        "invalid_topology",
    );
    file
}
