//! `couchbase.json`: the `couchbase` profile. A topology imported from a bucket config
//! (`reference/couchbase-bucket-config-rebalance.json`: 64 vbuckets, 2 replicas,
//! `vBucketMapForward`, `-1` entries) routed over the standard keys (keys whose vbucket
//! has no active node expect `no_nodes`); the published vbuckets of Couchbase's own
//! code; the import as an `apply` case; rejected documents and configs.

use serde_json::{json, Value};
use shardroute::{ops, Topology};

use super::cases::{
    applied, apply_refused, expect_error, load_case, replicas_case, route_case, stated_route, On, Refusals,
};
use super::keys::{standard_keys, utf8};
use super::reference::reference_json;
use super::vector_file::VectorFile;
use crate::documents::{doc, nodes, Document};

fn bootstrap() -> Value {
    doc(&["bootstrap"], json!({"type": "jump"})).epoch(0)
}

/// A one-node map of `count` vbuckets, for the published vbucket numbers.
fn single_node(count: usize) -> Value {
    doc(&["a:11210"], json!({"type": "couchbase", "map": vec![json!(["a:11210"]); count]}))
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "couchbase",
        "Couchbase profile: vbucket = ((crc32(key) >> 16) & 0x7fff) % len(vBucketMap), node = serverList[vBucketMap[v][0]]; a topology imported from a bucket config with -1 entries and vBucketMapForward; published vbuckets; rejected documents and configs.",
        "published cases: couchbaselabs/cbgb vbucket_test.go (\"hello\" -> 528 of 1024) and couchbase/go-couchbase vbmap_test.go TestVBHash (k0..k5 of 256); rebalance cases: topology imported from reference/couchbase-bucket-config-rebalance.json, vbuckets and nodes generator, the same rule checked against zlib.crc32 and the config's vBucketServerMap over >= 10,000 keys by conformance/oracles/test_couchbase.py; errors: generator",
    );
    let config = reference_json("couchbase-bucket-config-rebalance.json");
    let import = json!({"op": "import_couchbase_config", "config": config});
    let imported = ops::apply(&Topology::from_value(&bootstrap()).expect("bootstrap"), &import).expect("imports");
    let id = "couchbase-rebalance";
    let router = file.topology(id, imported["topology"].clone());
    for (label, key) in &standard_keys() {
        route_case(&mut file, id, &router, label, key);
        replicas_case(&mut file, id, &router, label, key, 1);
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
    load_case(&mut file, id, &router);
    file.topology("couchbase-bootstrap", bootstrap());
    applied(&mut file, "import/rebalance-config", On::Topology("couchbase-bootstrap"), import);
    let edited = |edit: fn(&mut Value)| {
        let mut bad = config.clone();
        edit(&mut bad);
        bad
    };
    for (what, bad) in [
        ("memcached-bucket", edited(|c| c["nodeLocator"] = json!("ketama"))),
        ("server-index-out-of-range", edited(|c| c["vBucketServerMap"]["vBucketMap"][0][0] = json!(3))),
        ("rev-missing", edited(|c| drop(c.as_object_mut().map(|o| o.remove("rev"))))),
        ("num-replicas-disagrees", edited(|c| c["vBucketServerMap"]["numReplicas"] = json!(1))),
    ] {
        let operation = json!({"op": "import_couchbase_config", "config": bad});
        let name = format!("import/reject-{what}");
        apply_refused(&mut file, &name, On::Topology("couchbase-bootstrap"), operation, "invalid_argument");
    }
    let cbgb = file.topology("couchbase-1024", single_node(1024));
    stated_route(&mut file, "couchbase-1024", &cbgb, "published/cbgb-hello", utf8("hello"), (528, "a:11210"));
    let go = file.topology("couchbase-256", single_node(256));
    for (key, vbucket) in [("k0", 9u32), ("k1", 14), ("k2", 7), ("k3", 0), ("k4", 100), ("k5", 99)] {
        let what = format!("published/go-couchbase-{key}");
        stated_route(&mut file, "couchbase-256", &go, &what, utf8(key), (vbucket, "a:11210"));
    }
    let mut bad = Refusals::of(doc(&["a", "b"], json!({"type": "couchbase", "map": [["a", "b"], ["b", null]]})));
    bad.edit("hashing-crc32", "invalid_topology", |d| d["hashing"] = json!({"function": "crc32"}));
    bad.edit("hashing-tag", "invalid_topology", |d| d["hashing"] = json!({"hash_tag": "redis"}));
    bad.edit("map-missing", "invalid_topology", |d| d["strategy"] = json!({"type": "couchbase"}));
    bad.edit("map-empty", "invalid_topology", |d| d["strategy"]["map"] = json!([]));
    bad.edit("row-uneven", "invalid_topology", |d| d["strategy"]["map"] = json!([["a", "b"], ["b"]]));
    bad.edit("row-empty", "invalid_topology", |d| d["strategy"]["map"] = json!([[]]));
    bad.edit("row-repeated", "invalid_topology", |d| d["strategy"]["map"] = json!([["a", "a"]]));
    bad.edit("row-index", "invalid_topology", |d| d["strategy"]["map"] = json!([[0, 1]]));
    bad.edit("row-minus-one", "invalid_topology", |d| d["strategy"]["map"] = json!([[-1, "a"]]));
    bad.edit("unknown-node", "invalid_topology", |d| d["strategy"]["map"] = json!([["z", "a"]]));
    bad.edit("forward-short", "invalid_topology", |d| d["strategy"]["forward_map"] = json!([["a", "b"]]));
    bad.edit("weighted", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(2));
    bad.edit("row-too-long", "limit_exceeded", |d| {
        d["nodes"] = nodes(17);
        d["strategy"]["map"] = json!([(0..17).map(|i| format!("n{i}")).collect::<Vec<_>>()]);
    });
    bad.write(&mut file, "load/");
    file
}
