//! `couchbase.json`: the `couchbase` profile. A topology imported from a bucket config
//! (`reference/couchbase-bucket-config-rebalance.json`: 64 vbuckets, 2 replicas,
//! `vBucketMapForward`, `-1` entries) routed over the standard keys (keys whose vbucket
//! has no active node expect `no_nodes`); the published vbuckets of Couchbase's own
//! code; the import as an `apply` case; rejected documents and configs.

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use super::{doc, expect_error, nodes, owned_key, standard_keys, utf8, VectorFile};

fn reference(name: &str) -> Value {
    let path = crate::root().join("reference").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display())))
        .expect("fixture JSON")
}

fn bootstrap() -> Value {
    doc(0, nodes(&["bootstrap"]), json!({"type": "jump"}))
}

/// A one-node map of `count` vbuckets, for the published vbucket numbers.
fn single_node(count: usize) -> Value {
    doc(1, nodes(&["a:11210"]), json!({"type": "couchbase", "map": vec![json!(["a:11210"]); count]}))
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "couchbase",
        "Couchbase profile: vbucket = ((crc32(key) >> 16) & 0x7fff) % len(vBucketMap), node = serverList[vBucketMap[v][0]]; a topology imported from a bucket config with -1 entries and vBucketMapForward; published vbuckets; rejected documents and configs.",
        "published cases: couchbaselabs/cbgb vbucket_test.go (\"hello\" -> 528 of 1024) and couchbase/go-couchbase vbmap_test.go TestVBHash (k0..k5 of 256); rebalance cases: topology imported from reference/couchbase-bucket-config-rebalance.json, vbuckets and nodes generator, the same rule checked against zlib.crc32 and the config's vBucketServerMap over >= 10,000 keys by conformance/oracles/test_couchbase.py; errors: generator",
    );
    let config = reference("couchbase-bucket-config-rebalance.json");
    let base = Topology::from_value(&bootstrap()).expect("bootstrap");
    let imported =
        ops::apply(&base, &json!({"op": "import_couchbase_config", "config": config})).expect("fixture imports");
    let id = "couchbase-rebalance";
    let router = file.topology(id, imported["topology"].clone());
    for (label, key) in standard_keys() {
        let owned = owned_key(&key);
        let expect = match (router.route(owned.as_key()), router.node(owned.as_key())) {
            (Ok(shard), Ok(node)) => json!({"shard": shard, "node": node}),
            (Err(err), _) | (_, Err(err)) => json!({"error": err.code()}),
        };
        file.case(&format!("{id}/route/{label}"), json!({"op": "route", "topology": id, "key": key, "expect": expect}));
        let expect = match router.replicas(owned.as_key(), 1) {
            Ok(nodes) => json!({ "nodes": nodes }),
            Err(err) => json!({ "error": err.code() }),
        };
        file.case(
            &format!("{id}/replicas-1/{label}"),
            json!({"op": "replicas", "topology": id, "key": key, "count": 1, "expect": expect}),
        );
    }
    // Keys of the unserved vbuckets 5 ([-1, -1, -1]) and 40 ([-1, 2, -1]).
    let mut found = [0u32; 2];
    for i in 0..20_000 {
        let key = format!("user:{i}");
        let vbucket = shardroute::strategy::compat::couchbase::vbucket_of(key.as_bytes(), 64);
        let slot = match vbucket {
            5 => 0,
            40 => 1,
            _ => continue,
        };
        if found[slot] == 2 {
            continue;
        }
        found[slot] += 1;
        let outcome = router.route(key.as_str()).map(drop);
        expect_error(
            &mut file,
            &format!("{id}/no-active/vbucket-{vbucket}/{key}"),
            json!({"op": "route", "topology": id, "key": utf8(&key)}),
            "no_nodes",
            outcome,
        );
    }
    assert_eq!(found, [2, 2], "keys of both unserved vbuckets");
    file.case(&format!("{id}/load"), json!({"op": "load", "topology": id, "expect": {"epoch": router.epoch().to_string(), "to_json": router.to_json()}}));
    file.topology("couchbase-bootstrap", bootstrap());
    file.case(
        "import/rebalance-config",
        json!({"op": "apply", "topology": "couchbase-bootstrap", "operation": {"op": "import_couchbase_config", "config": config}, "expect": {"result": imported}}),
    );
    let reject = |what: &str, edit: &dyn Fn(&mut Value)| {
        let mut bad = config.clone();
        edit(&mut bad);
        let operation = json!({"op": "import_couchbase_config", "config": bad});
        (what.to_string(), operation)
    };
    for (what, operation) in [
        reject("memcached-bucket", &|c| c["nodeLocator"] = json!("ketama")),
        reject("server-index-out-of-range", &|c| c["vBucketServerMap"]["vBucketMap"][0][0] = json!(3)),
        reject("rev-missing", &|c| drop(c.as_object_mut().map(|o| o.remove("rev")))),
        reject("num-replicas-disagrees", &|c| c["vBucketServerMap"]["numReplicas"] = json!(1)),
    ] {
        let outcome = ops::apply(&base, &operation).map(drop);
        expect_error(
            &mut file,
            &format!("import/reject-{what}"),
            json!({"op": "apply", "topology": "couchbase-bootstrap", "operation": operation}),
            "invalid_argument",
            outcome,
        );
    }
    let cbgb = file.topology("couchbase-1024", single_node(1024));
    assert_eq!(cbgb.route("hello").expect("route"), 528, "cbgb's published vbucket");
    file.case("couchbase-1024/published/cbgb-hello", json!({"op": "route", "topology": "couchbase-1024", "key": utf8("hello"), "expect": {"shard": 528, "node": "a:11210"}}));
    let go = file.topology("couchbase-256", single_node(256));
    for (key, vbucket) in [("k0", 9u32), ("k1", 14), ("k2", 7), ("k3", 0), ("k4", 100), ("k5", 99)] {
        assert_eq!(go.route(key).expect("route"), vbucket, "go-couchbase's published vbucket");
        file.case(&format!("couchbase-256/published/go-couchbase-{key}"), json!({"op": "route", "topology": "couchbase-256", "key": utf8(key), "expect": {"shard": vbucket, "node": "a:11210"}}));
    }
    let bad_base = || doc(1, nodes(&["a", "b"]), json!({"type": "couchbase", "map": [["a", "b"], ["b", null]]}));
    let mut bad: Vec<(&str, Value, &str)> = Vec::new();
    let mut edit = |label: &'static str, code: &'static str, change: &dyn Fn(&mut Value)| {
        let mut document = bad_base();
        change(&mut document);
        bad.push((label, document, code));
    };
    edit("hashing-crc32", "invalid_topology", &|d| d["hashing"] = json!({"function": "crc32"}));
    edit("hashing-tag", "invalid_topology", &|d| d["hashing"] = json!({"hash_tag": "redis"}));
    edit("map-missing", "invalid_topology", &|d| d["strategy"] = json!({"type": "couchbase"}));
    edit("map-empty", "invalid_topology", &|d| d["strategy"]["map"] = json!([]));
    edit("row-uneven", "invalid_topology", &|d| d["strategy"]["map"] = json!([["a", "b"], ["b"]]));
    edit("row-empty", "invalid_topology", &|d| d["strategy"]["map"] = json!([[]]));
    edit("row-repeated", "invalid_topology", &|d| d["strategy"]["map"] = json!([["a", "a"]]));
    edit("row-index", "invalid_topology", &|d| d["strategy"]["map"] = json!([[0, 1]]));
    edit("row-minus-one", "invalid_topology", &|d| d["strategy"]["map"] = json!([[-1, "a"]]));
    edit("unknown-node", "invalid_topology", &|d| d["strategy"]["map"] = json!([["z", "a"]]));
    edit("forward-short", "invalid_topology", &|d| d["strategy"]["forward_map"] = json!([["a", "b"]]));
    edit("weighted", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!(2));
    edit("row-too-long", "limit_exceeded", &|d| {
        d["nodes"] = Value::Array((0..17).map(|i| json!({"id": format!("n{i}")})).collect());
        d["strategy"]["map"] = json!([(0..17).map(|i| format!("n{i}")).collect::<Vec<_>>()]);
    });
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(&mut file, &format!("load/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
    file
}
