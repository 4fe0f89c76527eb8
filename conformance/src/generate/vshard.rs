//! `vshard.json`: the `vshard` profile. The default even split of 3000 buckets over
//! three replicasets and an explicit range table, routed over the standard keys; bucket
//! ids checked with the real Tarantool; rejected documents.

use serde_json::{json, Value};
use shardroute::Router;

use super::{doc, expect_error, nodes, routing_cases, u64_key, utf8, VectorFile};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "vshard",
        "Tarantool vshard profile: bucket_id = crc32c_raw(key) % bucket_count + 1 (CRC-32C, init 0xFFFFFFFF, no final xor; 1-based), buckets to replicasets by contiguous ranges; integers as decimal strings; rejected documents.",
        "tarantool cases: bucket ids computed by Tarantool 2.6.0 (Debian) as vshard's bucket_id_strcrc32, digest.crc32(tostring(key)) % bucket_count + 1; other cases: generator, the same rule checked against Tarantool and the PyPI crc32c package over >= 10,000 keys by conformance/oracles/test_vshard.py",
    );
    let router = file.topology("vshard-3", doc(1, nodes(&["rs-1", "rs-2", "rs-3"]), json!({"type": "vshard"})));
    routing_cases(&mut file, "vshard-3", &router);
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
        let owned = super::owned_key(&key);
        assert_eq!(router.route(owned.as_key()).expect("route"), bucket, "{label}");
        assert_eq!(router.node(owned.as_key()).expect("node"), node, "{label}");
        file.case(
            &format!("vshard-3/tarantool/{label}"),
            json!({"op": "route", "topology": "vshard-3", "key": key, "expect": {"shard": bucket, "node": node}}),
        );
    }
    let ranges = doc(
        2,
        nodes(&["rs-a", "rs-b"]),
        json!({"type": "vshard", "bucket_count": 16, "ranges": [
            {"node": "rs-b", "first": 1, "last": 3},
            {"node": "rs-a", "first": 4, "last": 12},
            {"node": "rs-b", "first": 13, "last": 16}]}),
    );
    let router = file.topology("vshard-ranges-16", ranges);
    routing_cases(&mut file, "vshard-ranges-16", &router);
    let base = || doc(1, nodes(&["a", "b"]), json!({"type": "vshard", "bucket_count": 10}));
    let mut bad: Vec<(&str, Value, &str)> = Vec::new();
    let mut edit = |label: &'static str, code: &'static str, change: &dyn Fn(&mut Value)| {
        let mut document = base();
        change(&mut document);
        bad.push((label, document, code));
    };
    let range = |node: &str, first: u32, last: u32| json!({"node": node, "first": first, "last": last});
    edit("hashing-crc32", "invalid_topology", &|d| d["hashing"] = json!({"function": "crc32"}));
    edit("hashing-identity", "invalid_topology", &|d| d["hashing"] = json!({"integers": "identity"}));
    edit("bucket-count-zero", "invalid_topology", &|d| d["strategy"]["bucket_count"] = json!(0));
    edit("bucket-count-over-limit", "limit_exceeded", &|d| d["strategy"]["bucket_count"] = json!(2_000_000));
    edit("fewer-buckets-than-nodes", "invalid_topology", &|d| d["strategy"]["bucket_count"] = json!(1));
    edit("ranges-gap", "invalid_topology", &|d| d["strategy"]["ranges"] = json!([range("a", 1, 4), range("b", 6, 10)]));
    edit("ranges-overlap", "invalid_topology", &|d| {
        d["strategy"]["ranges"] = json!([range("a", 1, 5), range("b", 5, 10)])
    });
    edit("ranges-short", "invalid_topology", &|d| d["strategy"]["ranges"] = json!([range("a", 1, 9)]));
    edit("ranges-from-0", "invalid_topology", &|d| d["strategy"]["ranges"] = json!([range("a", 0, 10)]));
    edit("ranges-unknown-node", "invalid_topology", &|d| d["strategy"]["ranges"] = json!([range("z", 1, 10)]));
    edit("ranges-empty", "invalid_topology", &|d| d["strategy"]["ranges"] = json!([]));
    edit("weighted", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!(2));
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(&mut file, &format!("load/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
    file
}
