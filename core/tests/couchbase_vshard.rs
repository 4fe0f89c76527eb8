//! The `couchbase` and `vshard` profiles: published values of the systems' own code,
//! the document rules (fixed hashing, `-1` entries, ranges), the import of a real-shaped
//! bucket config and the epoch packing of `(revEpoch, rev)`. The oracle comparisons
//! against the real implementations are in `conformance/oracles/`.

mod common;

use common::{doc, Doc};
use serde_json::{json, Value};
use shardroute::strategy::compat::{couchbase, vshard};
use shardroute::{ops, Key, Router, Topology};

fn reference(name: &str) -> Value {
    let path = format!("{}/../conformance/reference/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("fixture JSON")
}

fn import(config: Value) -> (Router, Value) {
    let base = doc(&["x"]).strategy(json!({"type": "jump"})).epoch(0).topology();
    let result = ops::apply(&base, &json!({"op": "import_couchbase_config", "config": config})).expect("import");
    (Router::from_value(&result["topology"]).expect("imported topology loads"), result)
}

fn cb_doc(map: Value) -> Doc {
    doc(&["a", "b", "c"]).strategy(json!({"type": "couchbase", "map": map}))
}

#[test]
fn couchbase_published_vbuckets() {
    // couchbaselabs/cbgb vbucket_test.go: VBucketIdForKey("hello", 1024) == 528.
    assert_eq!(couchbase::vbucket_of(b"hello", 1024), 528);
    // couchbase/go-couchbase vbmap_test.go TestVBHash (256 vbuckets).
    for (key, vbucket) in [("k0", 9), ("k1", 14), ("k2", 7), ("k3", 0), ("k4", 100), ("k5", 99)] {
        assert_eq!(couchbase::vbucket_of(key.as_bytes(), 256), vbucket, "{key}");
    }
    assert_eq!(couchbase::vbucket_of(b"k", 0), 0, "zero vbuckets never panics");
}

#[test]
fn couchbase_routes_by_the_map_and_integers_as_decimal() {
    let rows: Vec<Value> = (0..256)
        .map(|v| {
            let id = ["a", "b", "c"][v % 3];
            json!([id, null])
        })
        .collect();
    let router = cb_doc(Value::Array(rows)).router();
    for i in 0..6 {
        let key = format!("k{i}");
        let vbucket = couchbase::vbucket_of(key.as_bytes(), 256);
        assert_eq!(router.route(key.as_str()).unwrap(), vbucket);
        assert_eq!(router.node(key.as_str()).unwrap(), ["a", "b", "c"][vbucket as usize % 3]);
    }
    for value in [0u64, 42, 1 << 53, u64::MAX] {
        let text = value.to_string();
        assert_eq!(router.route(Key::U64(value)).unwrap(), router.route(text.as_str()).unwrap());
    }
    // Rows `[x, -1]`: one replica only.
    assert_eq!(router.max_replica_count(), 1);
    assert_eq!(router.replicas("k0", 2).unwrap_err().code(), "invalid_argument");
}

#[test]
fn couchbase_minus_one_entries() {
    let router = cb_doc(json!([[null, "b"], ["a", null]])).router();
    // Two vbuckets: keys in vbucket 0 have no active node.
    let mut seen = [false; 2];
    for i in 0..64 {
        let key = format!("key-{i}");
        let vbucket = couchbase::vbucket_of(key.as_bytes(), 2) as usize;
        seen[vbucket] = true;
        if vbucket == 0 {
            assert_eq!(router.route(key.as_str()).unwrap_err().code(), "no_nodes");
            assert_eq!(router.node(key.as_str()).unwrap_err().code(), "no_nodes");
            assert_eq!(router.replicas(key.as_str(), 1).unwrap_err().code(), "no_nodes");
        } else {
            assert_eq!(router.node(key.as_str()).unwrap(), "a");
            assert_eq!(router.replicas(key.as_str(), 1).unwrap(), ["a"]);
        }
    }
    assert_eq!(seen, [true, true]);
}

#[test]
fn couchbase_document_rules() {
    let bad = [
        ("hashing", cb_doc(json!([["a"]])).hashing(json!({"function": "crc32"}))),
        ("uneven rows", cb_doc(json!([["a", "b"], ["a"]]))),
        ("repeated node", cb_doc(json!([["a", "a"]]))),
        ("unknown node", cb_doc(json!([["z"]]))),
        ("number entry", cb_doc(json!([[0]]))),
        ("empty map", cb_doc(json!([]))),
        ("empty row", cb_doc(json!([[]]))),
        ("too many vbuckets", cb_doc(Value::Array(vec![json!(["a"]); 32769]))),
        ("forward length", cb_doc(json!([["a"], ["b"]])).strategy_field("forward_map", json!([["a"]]))),
        ("weights", cb_doc(json!([["a"]])).node_field(0, "weight", json!(2))),
    ];
    for (what, document) in bad {
        let err = document.load().expect_err(what);
        assert_eq!(err.code(), "invalid_topology", "{what}: {err}");
    }
    let err = cb_doc(json!([["a"]])).hashing(json!({"hash_tag": "redis"})).load().unwrap_err();
    assert!(err.message().starts_with("hashing:"), "{err}");
    // Default hashing spelled out is the default: accepted.
    let router = cb_doc(json!([["a", null]])).hashing(json!({"function": "siphash-2-4"})).router();
    assert_eq!(Router::from_json(&router.to_json()).unwrap().to_json(), router.to_json());
}

#[test]
fn couchbase_import_of_a_bucket_config() {
    let config = reference("couchbase-bucket-config.json");
    let (router, result) = import(config.clone());
    assert_eq!(result["bucket"], "travel-sample");
    assert_eq!(result["vbuckets"], 1024);
    assert_eq!(result["replicas"], 1);
    assert_eq!(result["newer"], true);
    assert_eq!(router.epoch(), (2 << 32) | 18234);
    let servers = config["vBucketServerMap"]["serverList"].as_array().unwrap();
    let map = config["vBucketServerMap"]["vBucketMap"].as_array().unwrap();
    for i in 0..2000 {
        let key = format!("airline_{i}");
        let vbucket = couchbase::vbucket_of(key.as_bytes(), 1024) as usize;
        let row = map[vbucket].as_array().unwrap();
        assert_eq!(router.route(key.as_str()).unwrap() as usize, vbucket);
        assert_eq!(router.node(key.as_str()).unwrap(), servers[row[0].as_u64().unwrap() as usize]);
        let chain: Vec<&str> = row
            .iter()
            .filter_map(Value::as_i64)
            .filter(|&i| i >= 0)
            .map(|i| servers[i as usize].as_str().unwrap())
            .collect();
        assert_eq!(router.replicas(key.as_str(), chain.len() as u32).unwrap(), chain);
    }
    // The same config as served text imports the same.
    let (again, _) = import(Value::String(config.to_string()));
    assert_eq!(again.to_json(), router.to_json());
    // A newer (revEpoch, rev) replaces it; an older rev, even with a larger rev number
    // under a smaller revEpoch, is stale.
    let mut newer = config.clone();
    newer["rev"] = json!(18235);
    let (newer, _) = import(newer);
    assert!(router.replace(newer.clone()).is_ok());
    let mut older = config.clone();
    older["revEpoch"] = json!(1);
    older["rev"] = json!(99999);
    let (older, report) = import(older);
    assert_eq!(report["rev_epoch"], 1);
    assert_eq!(router.replace(older).unwrap_err().code(), "stale_epoch");
    let topology = Topology::from_value(&serde_json::from_str::<Value>(&router.to_json()).unwrap()).unwrap();
    let same = ops::apply(&topology, &json!({"op": "import_couchbase_config", "config": config})).unwrap();
    assert_eq!(same["newer"], false);
}

#[test]
fn couchbase_import_keeps_forward_map_and_minus_one() {
    let config = reference("couchbase-bucket-config-rebalance.json");
    let (router, result) = import(config.clone());
    assert_eq!(result["replicas"], 2);
    assert_eq!(result["bucket"], "default");
    let document: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(document["strategy"]["map"][5], json!([null, null, null]));
    assert_eq!(document["strategy"]["map"][40], json!([null, "127.0.0.1:11214", null]));
    assert_eq!(document["strategy"]["forward_map"][40], json!(["127.0.0.1:11214", null, null]));
    assert_eq!(router.max_replica_count(), 1);
}

#[test]
fn couchbase_import_rejects() {
    let config = reference("couchbase-bucket-config-rebalance.json");
    type Edit<'a> = (&'a str, &'a dyn Fn(&mut Value));
    let edits: [Edit<'_>; 9] = [
        ("ketama", &|c| c["nodeLocator"] = json!("ketama")),
        ("hash", &|c| c["vBucketServerMap"]["hashAlgorithm"] = json!("MD5")),
        ("rev missing", &|c| drop(c.as_object_mut().unwrap().remove("rev"))),
        ("rev 2^32", &|c| c["rev"] = json!(1u64 << 32)),
        ("revEpoch negative", &|c| c["revEpoch"] = json!(-1)),
        ("index out of range", &|c| c["vBucketServerMap"]["vBucketMap"][0][0] = json!(3)),
        ("index -2", &|c| c["vBucketServerMap"]["vBucketMap"][0][0] = json!(-2)),
        ("numReplicas", &|c| c["vBucketServerMap"]["numReplicas"] = json!(1)),
        ("no server map", &|c| drop(c.as_object_mut().unwrap().remove("vBucketServerMap"))),
    ];
    let base = cb_doc(json!([["a"]])).topology();
    for (what, edit) in edits {
        let mut bad = config.clone();
        edit(&mut bad);
        let err = ops::apply(&base, &json!({"op": "import_couchbase_config", "config": bad})).expect_err(what);
        assert_eq!(err.code(), "invalid_argument", "{what}: {err}");
    }
    let err = ops::apply(&base, &json!({"op": "import_couchbase_config", "config": "{"})).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
}

#[test]
fn vshard_published_and_tarantool_values() {
    // Tarantool 2.6.0: digest.crc32("123456789") == 486108540 (CRC-32C without final xor).
    assert_eq!(shardroute::hash::crc32c_raw(b"123456789"), 486_108_540);
    assert_eq!(vshard::bucket_id(b"123456789", 3000), 486_108_540 % 3000 + 1);
    // The empty key: the register is still its init value 0xFFFFFFFF.
    assert_eq!(vshard::bucket_id(b"", 3000), (u32::MAX % 3000) + 1);
    assert_eq!(vshard::bucket_id(b"x", 0), 1, "zero buckets never panics");
}

#[test]
fn vshard_default_split_and_ranges() {
    let router = doc(&["rs1", "rs2", "rs3"]).strategy(json!({"type": "vshard"})).router();
    assert_eq!(router.shard_range(), 1..3001);
    for i in 0..3000u64 {
        let key = format!("user:{i}");
        let bucket = vshard::bucket_id(key.as_bytes(), 3000);
        assert_eq!(router.route(key.as_str()).unwrap(), bucket);
        assert_eq!(router.node(key.as_str()).unwrap(), ["rs1", "rs2", "rs3"][((bucket - 1) / 1000) as usize]);
        assert_eq!(router.route(Key::U64(i)).unwrap(), vshard::bucket_id(i.to_string().as_bytes(), 3000));
    }
    assert_eq!(router.replicas("k", 1).unwrap(), [router.node("k").unwrap()]);
    assert_eq!(router.replicas("k", 2).unwrap_err().code(), "invalid_argument");
    // 10 buckets over 3 nodes: 4, 3, 3.
    let small = doc(&["a", "b", "c"]).strategy(json!({"type": "vshard", "bucket_count": 10})).router();
    let owners: Vec<&str> = (0..200)
        .map(|i| format!("{i}"))
        .map(|key| (vshard::bucket_id(key.as_bytes(), 10), small.node(key.as_str()).unwrap()))
        .map(|(bucket, node)| {
            let expected = match bucket {
                1..=4 => "a",
                5..=7 => "b",
                _ => "c",
            };
            assert_eq!(node, expected, "bucket {bucket}");
            node
        })
        .collect();
    assert!(owners.contains(&"c"));
    let router = doc(&["a", "b"])
        .strategy(json!({"type": "vshard", "bucket_count": 10, "ranges": [
            {"node": "b", "first": 1, "last": 1}, {"node": "a", "first": 2, "last": 9}, {"node": "b", "first": 10, "last": 10}]}))
        .router();
    for i in 0..200 {
        let key = format!("{i}");
        let bucket = vshard::bucket_id(key.as_bytes(), 10);
        assert_eq!(router.node(key.as_str()).unwrap(), if bucket == 1 || bucket == 10 { "b" } else { "a" });
    }
    assert_eq!(Router::from_json(&router.to_json()).unwrap().to_json(), router.to_json());
}

#[test]
fn vshard_document_rules() {
    let ranges = |r: Value| doc(&["a", "b"]).strategy(json!({"type": "vshard", "bucket_count": 10, "ranges": r}));
    let bad = [
        ("gap", ranges(json!([{"node": "a", "first": 1, "last": 4}, {"node": "b", "first": 6, "last": 10}]))),
        ("overlap", ranges(json!([{"node": "a", "first": 1, "last": 5}, {"node": "b", "first": 5, "last": 10}]))),
        ("short", ranges(json!([{"node": "a", "first": 1, "last": 9}]))),
        ("not from 1", ranges(json!([{"node": "a", "first": 2, "last": 10}]))),
        ("zero", ranges(json!([{"node": "a", "first": 0, "last": 10}]))),
        ("past end", ranges(json!([{"node": "a", "first": 1, "last": 11}]))),
        ("reversed", ranges(json!([{"node": "a", "first": 1, "last": 0}]))),
        ("unknown node", ranges(json!([{"node": "z", "first": 1, "last": 10}]))),
        ("unknown field", ranges(json!([{"node": "a", "first": 1, "last": 10, "weight": 1}]))),
        ("empty", ranges(json!([]))),
        ("zero buckets", doc(&["a"]).strategy(json!({"type": "vshard", "bucket_count": 0}))),
        ("more nodes than buckets", doc(&["a", "b", "c"]).strategy(json!({"type": "vshard", "bucket_count": 2}))),
        ("hashing", doc(&["a"]).strategy(json!({"type": "vshard"})).hashing(json!({"function": "crc32"}))),
    ];
    for (what, document) in bad {
        let err = document.load().expect_err(what);
        assert_eq!(err.code(), "invalid_topology", "{what}: {err}");
    }
    let over = doc(&["a"]).strategy(json!({"type": "vshard", "bucket_count": 2_000_000}));
    assert_eq!(over.load().unwrap_err().code(), "limit_exceeded");
}
