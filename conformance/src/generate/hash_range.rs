//! `hash_range.json`: hash-range sharding. Routing cases for the default table (one
//! equal slice of the hash space per node), explicit boundaries above 2^53 written as
//! strings, ranges-only tables over CRC32 with Redis hash tags; routes stated by hand
//! under identity integer hashing (an integer key is its own hash, so its range is read
//! off the boundaries); rejected documents;
//! `shards_for_range` (every shard) and `apply` cases of the range operations.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{applied, apply_refused, routed, stated_replicas, stated_route, On, Refusals};
use super::keys::{owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

/// Four equal ranges, `[0, 2^62)`, `[2^62, 2^63)`, `[2^63, 3 * 2^62)`, `[3 * 2^62, 2^64)`,
/// over integer keys that are their own hash.
fn identity_doc() -> Value {
    doc(&["a", "b", "c", "d"], json!({"type": "hash_range"})).epoch(5).hashing(identity())
}

/// Explicit boundaries, numbers and decimal strings, owners repeating.
fn explicit_doc() -> Value {
    let strategy = json!({"type": "hash_range",
        "boundaries": [1000, "9007199254740993", "9223372036854775808", "18446744073709551615"],
        "ranges": ["e2", "e0", "e2", "e1", "e0"]});
    doc(&["e0", "e1", "e2"], strategy).epoch(6)
}

/// Route cases `<id>/stated/<what>` of integer keys whose shard and node are stated by hand.
fn stated(file: &mut VectorFile, id: &str, router: &Router, routes: &[(&str, u64, u32, &str)]) {
    for &(what, key, shard, node) in routes {
        stated_route(file, id, router, &format!("stated/{what}"), u64_key(key), (shard, node));
    }
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "hash_range",
        "Hash-range sharding: sorted boundaries over the 64-bit hash space, one owner per range; the default equal-width table, explicit boundaries, hash tags, rejected documents.",
        "stated cases: expectations written by hand (identity integer hashing; equal widths floor(i * 2^64 / n)) and checked against the core; all other cases: generator",
    );
    routed(&mut file, "hash-range-4", doc(&["h0", "h1", "h2", "h3"], json!({"type": "hash_range"})));
    let router = routed(&mut file, "hash-range-identity-4", identity_doc());
    let quarter = 1u64 << 62;
    let routes = [
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
    stated(&mut file, "hash-range-identity-4", &router, &routes);
    routed(&mut file, "hash-range-explicit", explicit_doc());
    let id = "hash-range-explicit-identity";
    let router = file.topology(id, explicit_doc().hashing(identity()));
    let routes = [
        ("999", 999, 0, "e2"),
        ("1000", 1000, 1, "e0"),
        ("2p53+1-below", 9_007_199_254_740_992, 1, "e0"),
        ("2p53+1", 9_007_199_254_740_993, 2, "e2"),
        ("below-2p63", (1 << 63) - 1, 2, "e2"),
        ("2p63", 1 << 63, 3, "e1"),
        ("max-minus-1", u64::MAX - 1, 3, "e1"),
        ("max", u64::MAX, 4, "e0"),
    ];
    stated(&mut file, id, &router, &routes);
    stated_replicas(&mut file, id, &router, "replicas-all/max", u64_key(u64::MAX), &["e0", "e1", "e2"]);
    let tagged = doc(&["t0", "t1", "t2"], json!({"type": "hash_range", "ranges": ["t0", "t1", "t2", "t0", "t1"]}));
    routed(
        &mut file,
        "hash-range-crc32-tag",
        tagged.epoch(7).hashing(json!({"function": "crc32", "hash_tag": "redis"})),
    );
    let mut bad = Refusals::of(doc(
        &["a", "b"],
        json!({"type": "hash_range", "boundaries": [100, 200], "ranges": ["a", "b", "a"]}),
    ));
    for (label, boundaries) in [
        ("zero-boundary", json!([0, 200])),
        ("equal", json!([100, "100"])),
        ("decreasing", json!([200, 100])),
        ("2p64", json!([100, "18446744073709551616"])),
        ("negative", json!([-100, 200])),
        ("fraction", json!([100.5, 200])),
        ("key-object", json!([utf8("g"), 200])),
    ] {
        bad.edit(label, "invalid_topology", |d| d["strategy"]["boundaries"] = boundaries);
    }
    bad.edit("ranges-long", "invalid_topology", |d| d["strategy"]["ranges"] = json!(["a", "b", "a", "b"]));
    bad.strategy("ranges-empty", "invalid_topology", json!({"type": "hash_range", "ranges": []}));
    bad.edit("ranges-unknown-node", "invalid_topology", |d| d["strategy"]["ranges"] = json!(["a", "b", "c"]));
    bad.edit("weighted", "invalid_topology", |d| d["nodes"][1]["weight"] = json!(0.5));
    bad.write(&mut file, "load/");
    call_cases(&mut file);
    file
}

/// `shards_for_range` and `apply` cases.
fn call_cases(file: &mut VectorFile) {
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
    let sample: Vec<Value> =
        [1u64 << 63, (1 << 63) + 10, (1 << 63) + 20, (1 << 63) + 30, 7].iter().map(|&k| u64_key(k)).collect();
    let thousands: Vec<Value> = (1..=8u64).map(|k| u64_key(k * 1000)).collect();
    let users: Vec<Value> = (0..20).map(|i| utf8(&format!("user:{i}"))).collect();
    for (what, topology, operation) in [
        (
            "split-to-new-node",
            id,
            json!({"op": "range_split", "at": "11529215046068469760", "shard": 2, "node": {"id": "e"}}),
        ),
        ("split-in-place", id, json!({"op": "range_split", "at": 12345})),
        ("split-median", id, json!({"op": "range_split_median", "shard": 2, "sample": sample, "node": "a"})),
        ("merge", id, json!({"op": "range_merge", "shard": 2})),
        ("move", id, json!({"op": "range_move", "shard": 0, "node": "d"})),
        ("presplit-uniform", id, json!({"op": "range_presplit", "ranges": 3, "nodes": ["d", "c"]})),
        ("presplit-sample", id, json!({"op": "range_presplit", "ranges": 4, "sample": thousands})),
        ("presplit-hashed-sample", "hash-range-4", json!({"op": "range_presplit", "ranges": 5, "sample": users})),
    ] {
        applied(file, &format!("{topology}/apply/{what}"), On::Topology(topology), operation);
    }
    for (what, operation, code) in [
        ("split-at-zero", json!({"op": "range_split", "at": 0}), "invalid_argument"),
        ("split-at-boundary", json!({"op": "range_split", "at": "9223372036854775808"}), "invalid_argument"),
        ("split-key-object", json!({"op": "range_split", "at": utf8("k")}), "invalid_argument"),
        ("merge-out-of-range", json!({"op": "range_merge", "shard": 4}), "invalid_argument"),
        (
            "median-no-keys-in-range",
            json!({"op": "range_split_median", "shard": 1, "sample": [u64_key(1), u64_key(2)]}),
            "invalid_argument",
        ),
        ("presplit-over-limit", json!({"op": "range_presplit", "ranges": 1_048_577}), "limit_exceeded"),
    ] {
        apply_refused(file, &format!("{id}/apply/reject-{what}"), On::Topology(id), operation, code);
    }
}
