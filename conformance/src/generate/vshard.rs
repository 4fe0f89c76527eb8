//! `vshard.json`: the `vshard` profile. The default even split of 3000 buckets over
//! three replicasets and an explicit range table, routed over the standard keys; bucket
//! ids checked with the real Tarantool; rejected documents.

use serde_json::{json, Value};

use super::cases::{routed, stated_route, Refusals};
use super::keys::{u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "vshard",
        "Tarantool vshard profile: bucket_id = crc32c_raw(key) % bucket_count + 1 (CRC-32C, init 0xFFFFFFFF, no final xor; 1-based), buckets to replicasets by contiguous ranges; integers as decimal strings; rejected documents.",
        "tarantool cases: bucket ids computed by Tarantool 2.6.0 (Debian) as vshard's bucket_id_strcrc32, digest.crc32(tostring(key)) % bucket_count + 1; other cases: generator, the same rule checked against Tarantool and the PyPI crc32c package over >= 10,000 keys by conformance/oracles/test_vshard.py",
    );
    let router = routed(&mut file, "vshard-3", doc(&["rs-1", "rs-2", "rs-3"], json!({"type": "vshard"})));
    // Tarantool 2.6.0: digest.crc32('123456789') == 486108540, digest.crc32('') ==
    // 4294967295, and tostring(42) == "42".
    let stated: [(&str, Value, u32, &str); 4] = [
        ("check-123456789", utf8("123456789"), 486_108_540 % 3000 + 1, "rs-1"),
        ("empty", utf8(""), 4_294_967_295u32 % 3000 + 1, "rs-3"),
        ("u64-42", u64_key(42), 0, ""),
        ("utf8-42", utf8("42"), 0, ""),
    ];
    let forty_two = router.route("42").expect("route");
    for (label, key, bucket, node) in stated {
        let (bucket, node) = if node.is_empty() {
            (forty_two, router.node("42").expect("node").to_string())
        } else {
            (bucket, node.to_string())
        };
        stated_route(&mut file, "vshard-3", &router, &format!("tarantool/{label}"), key, (bucket, &node));
    }
    let ranges = json!({"type": "vshard", "bucket_count": 16, "ranges": [
        {"node": "rs-b", "first": 1, "last": 3},
        {"node": "rs-a", "first": 4, "last": 12},
        {"node": "rs-b", "first": 13, "last": 16}]});
    routed(&mut file, "vshard-ranges-16", doc(&["rs-a", "rs-b"], ranges).epoch(2));
    let mut bad = Refusals::of(doc(&["a", "b"], json!({"type": "vshard", "bucket_count": 10})));
    bad.edit("hashing-crc32", "invalid_topology", |d| d["hashing"] = json!({"function": "crc32"}));
    bad.edit("hashing-identity", "invalid_topology", |d| d["hashing"] = json!({"integers": "identity"}));
    for (label, code, count) in [
        ("bucket-count-zero", "invalid_topology", 0),
        ("bucket-count-over-limit", "limit_exceeded", 2_000_000),
        ("fewer-buckets-than-nodes", "invalid_topology", 1),
    ] {
        bad.edit(label, code, |d| d["strategy"]["bucket_count"] = json!(count));
    }
    let range = |node: &str, first: u32, last: u32| json!({"node": node, "first": first, "last": last});
    for (label, ranges) in [
        ("ranges-gap", vec![range("a", 1, 4), range("b", 6, 10)]),
        ("ranges-overlap", vec![range("a", 1, 5), range("b", 5, 10)]),
        ("ranges-short", vec![range("a", 1, 9)]),
        ("ranges-from-0", vec![range("a", 0, 10)]),
        ("ranges-unknown-node", vec![range("z", 1, 10)]),
        ("ranges-empty", vec![]),
    ] {
        bad.edit(label, "invalid_topology", |d| d["strategy"]["ranges"] = Value::Array(ranges));
    }
    bad.edit("weighted", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(2));
    bad.write(&mut file, "load/");
    file
}
