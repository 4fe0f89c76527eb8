//! `hash_range.json`: hash-range sharding. Routing cases for the default table (one
//! equal slice of the hash space per node), explicit boundaries above 2^53 written as
//! strings, ranges-only tables over CRC32 with Redis hash tags; routes stated by hand
//! under identity integer hashing (an integer key is its own hash, so its range is read
//! off the boundaries); rejected documents;
//! `shards_for_range` (every shard) and `apply` cases of the range operations.

use serde_json::{json, Value};
use shardroute::Router;

use super::{apply_case, apply_error, doc, expect_error, nodes, owned_key, routing_cases, u64_key, utf8, VectorFile};

/// Four equal ranges, `[0, 2^62)`, `[2^62, 2^63)`, `[2^63, 3 * 2^62)`, `[3 * 2^62, 2^64)`,
/// over integer keys that are their own hash.
fn identity_doc() -> Value {
    let mut document = doc(5, nodes(&["a", "b", "c", "d"]), json!({"type": "hash_range"}));
    document["hashing"] = json!({"integers": "identity"});
    document
}

/// Explicit boundaries, numbers and decimal strings, owners repeating.
fn explicit_doc() -> Value {
    doc(
        6,
        nodes(&["e0", "e1", "e2"]),
        json!({"type": "hash_range",
            "boundaries": [1000, "9007199254740993", "9223372036854775808", "18446744073709551615"],
            "ranges": ["e2", "e0", "e2", "e1", "e0"]}),
    )
}

/// A route case whose expectation is stated by hand; the core is checked to agree.
fn stated_route(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: u64, shard: u32, node: &str) {
    assert_eq!(router.route(key).expect("route"), shard, "{id}/{what}: core disagrees with the stated shard");
    assert_eq!(router.node(key).expect("node"), node, "{id}/{what}: core disagrees with the stated node");
    file.case(
        &format!("{id}/stated/{what}"),
        json!({"op": "route", "topology": id, "key": u64_key(key), "expect": {"shard": shard, "node": node}}),
    );
}

pub(crate) fn file() -> VectorFile {
    let mut file = routing_file();
    call_cases(&mut file);
    file
}

fn routing_file() -> VectorFile {
    let mut file = VectorFile::new(
        "hash_range",
        "Hash-range sharding: sorted boundaries over the 64-bit hash space, one owner per range; the default equal-width table, explicit boundaries, hash tags, rejected documents.",
        "stated cases: expectations written by hand (identity integer hashing; equal widths floor(i * 2^64 / n)) and checked against the core; all other cases: generator",
    );
    let router = file.topology("hash-range-4", doc(1, nodes(&["h0", "h1", "h2", "h3"]), json!({"type": "hash_range"})));
    routing_cases(&mut file, "hash-range-4", &router);
    let router = file.topology("hash-range-identity-4", identity_doc());
    routing_cases(&mut file, "hash-range-identity-4", &router);
    let quarter = 1u64 << 62;
    let stated: [(&str, u64, u32, &str); 9] = [
        ("zero", 0, 0, "a"),
        ("below-2p62", quarter - 1, 0, "a"),
        ("at-2p62", quarter, 1, "b"),
        ("below-2p63", 2 * quarter - 1, 1, "b"),
        ("at-2p63", 2 * quarter, 2, "c"),
        ("below-3x2p62", 3 * quarter - 1, 2, "c"),
        ("at-3x2p62", 3 * quarter, 3, "d"),
        ("max", u64::MAX, 3, "d"),
        ("2p53", 1 << 53, 0, "a"),
    ];
    for (what, key, shard, node) in stated {
        stated_route(&mut file, &router, "hash-range-identity-4", what, key, shard, node);
    }
    let mut explicit = explicit_doc();
    let router = file.topology("hash-range-explicit", explicit.clone());
    routing_cases(&mut file, "hash-range-explicit", &router);
    explicit["hashing"] = json!({"integers": "identity"});
    let router = file.topology("hash-range-explicit-identity", explicit);
    let stated: [(&str, u64, u32, &str); 8] = [
        ("999", 999, 0, "e2"),
        ("1000", 1000, 1, "e0"),
        ("2p53+1-below", 9_007_199_254_740_992, 1, "e0"),
        ("2p53+1", 9_007_199_254_740_993, 2, "e2"),
        ("below-2p63", (1 << 63) - 1, 2, "e2"),
        ("2p63", 1 << 63, 3, "e1"),
        ("max-minus-1", u64::MAX - 1, 3, "e1"),
        ("max", u64::MAX, 4, "e0"),
    ];
    for (what, key, shard, node) in stated {
        stated_route(&mut file, &router, "hash-range-explicit-identity", what, key, shard, node);
    }
    file.case(
        "hash-range-explicit-identity/replicas-all/max",
        json!({"op": "replicas", "topology": "hash-range-explicit-identity", "key": u64_key(u64::MAX), "count": 3, "expect": {"nodes": ["e0", "e1", "e2"]}}),
    );
    let mut tagged =
        doc(7, nodes(&["t0", "t1", "t2"]), json!({"type": "hash_range", "ranges": ["t0", "t1", "t2", "t0", "t1"]}));
    tagged["hashing"] = json!({"function": "crc32", "hash_tag": "redis"});
    let router = file.topology("hash-range-crc32-tag", tagged);
    routing_cases(&mut file, "hash-range-crc32-tag", &router);
    let base = || {
        doc(1, nodes(&["a", "b"]), json!({"type": "hash_range", "boundaries": [100, 200], "ranges": ["a", "b", "a"]}))
    };
    let mut bad: Vec<(&str, Value, &str)> = Vec::new();
    let mut edit = |label: &'static str, code: &'static str, change: &dyn Fn(&mut Value)| {
        let mut document = base();
        change(&mut document);
        bad.push((label, document, code));
    };
    edit("zero-boundary", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([0, 200]));
    edit("equal", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([100, "100"]));
    edit("decreasing", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([200, 100]));
    edit("2p64", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([100, "18446744073709551616"]));
    edit("negative", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([-100, 200]));
    edit("fraction", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([100.5, 200]));
    edit("key-object", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([utf8("g"), 200]));
    edit("ranges-long", "invalid_topology", &|d| d["strategy"]["ranges"] = json!(["a", "b", "a", "b"]));
    edit("ranges-empty", "invalid_topology", &|d| d["strategy"] = json!({"type": "hash_range", "ranges": []}));
    edit("ranges-unknown-node", "invalid_topology", &|d| d["strategy"]["ranges"] = json!(["a", "b", "c"]));
    edit("weighted", "invalid_topology", &|d| d["nodes"][1]["weight"] = json!(0.5));
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(&mut file, &format!("load/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
    file
}

/// `shards_for_range` and `apply` cases (calls the bindings are still learning).
pub(crate) fn call_cases(file: &mut VectorFile) {
    let explicit = Router::from_value(&explicit_doc()).expect("explicit");
    for (what, start, end) in [("a-to-b", utf8("a"), utf8("b")), ("everything", utf8(""), Value::Null)] {
        let end_key = (!end.is_null()).then(|| owned_key(&end));
        let shards = explicit
            .shards_for_range(owned_key(&start).as_key(), end_key.as_ref().map(|k| k.as_key()))
            .expect("shards_for_range");
        assert_eq!(shards, [0, 1, 2, 3, 4], "hashing scatters every scan");
        file.case(
            &format!("hash-range-explicit/shards_for_range/{what}"),
            json!({"op": "shards_for_range", "topology": "hash-range-explicit", "start": start, "end": end, "expect": {"shards": shards}}),
        );
    }
    let id = "hash-range-identity-4";
    let document = identity_doc();
    apply_case(
        file,
        id,
        &document,
        "split-to-new-node",
        json!({"op": "range_split", "at": "11529215046068469760", "shard": 2, "node": {"id": "e"}}),
    );
    apply_case(file, id, &document, "split-in-place", json!({"op": "range_split", "at": 12345}));
    let sample: Vec<Value> =
        [1u64 << 63, (1 << 63) + 10, (1 << 63) + 20, (1 << 63) + 30, 7].iter().map(|&k| u64_key(k)).collect();
    apply_case(
        file,
        id,
        &document,
        "split-median",
        json!({"op": "range_split_median", "shard": 2, "sample": sample, "node": "a"}),
    );
    apply_case(file, id, &document, "merge", json!({"op": "range_merge", "shard": 2}));
    apply_case(file, id, &document, "move", json!({"op": "range_move", "shard": 0, "node": "d"}));
    apply_case(
        file,
        id,
        &document,
        "presplit-uniform",
        json!({"op": "range_presplit", "ranges": 3, "nodes": ["d", "c"]}),
    );
    let sample: Vec<Value> = (1..=8u64).map(|k| u64_key(k * 1000)).collect();
    apply_case(file, id, &document, "presplit-sample", json!({"op": "range_presplit", "ranges": 4, "sample": sample}));
    let hashed = "hash-range-4";
    let hashed_doc = doc(1, nodes(&["h0", "h1", "h2", "h3"]), json!({"type": "hash_range"}));
    let sample: Vec<Value> = (0..20).map(|i| utf8(&format!("user:{i}"))).collect();
    apply_case(
        file,
        hashed,
        &hashed_doc,
        "presplit-hashed-sample",
        json!({"op": "range_presplit", "ranges": 5, "sample": sample}),
    );
    apply_error(file, id, &document, "split-at-zero", json!({"op": "range_split", "at": 0}), "invalid_argument");
    apply_error(
        file,
        id,
        &document,
        "split-at-boundary",
        json!({"op": "range_split", "at": "9223372036854775808"}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "split-key-object",
        json!({"op": "range_split", "at": utf8("k")}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "merge-out-of-range",
        json!({"op": "range_merge", "shard": 4}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "median-no-keys-in-range",
        json!({"op": "range_split_median", "shard": 1, "sample": [u64_key(1), u64_key(2)]}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "presplit-over-limit",
        json!({"op": "range_presplit", "ranges": 1_048_577}),
        "limit_exceeded",
    );
}
