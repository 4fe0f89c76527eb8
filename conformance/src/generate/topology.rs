//! `topology.json`: loading documents. Canonical `to_json`, defaults spelled out, u64
//! epochs above 2^53 as strings, integer-or-string epochs.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::loaded;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new("topology", "Loading documents: canonical to_json, defaults spelled out, u64 epochs above 2^53 as strings, integer-or-string epochs.", "generator");
    let a = &["a"];
    let docs = [
        ("minimal", doc(a, json!({"type": "jump"})).epoch(0)),
        ("epoch-string", doc(a, json!({"type": "modulo"})).epoch("77")),
        ("epoch-2p53", doc(a, json!({"type": "modulo"})).epoch(9_007_199_254_740_992u64)),
        ("epoch-max", doc(a, json!({"type": "rendezvous"})).epoch("18446744073709551615")),
        (
            "all-fields",
            doc(
                json!([{"id": "a", "address": "10.0.0.1:6379", "weight": 2.5, "zone": "z1"}, {"id": "b"}]),
                json!({"type": "ring", "points_per_node": 7}),
            )
            .epoch(3)
            .hashing(json!({"function": "crc32", "hash_tag": "redis", "integers": "identity"})),
        ),
        ("unicode-ids", doc(&["узел-1", "节点-2", "🔑"], json!({"type": "rendezvous"}))),
        (
            "null-optional-fields",
            doc(
                json!([{"id": "a", "address": null, "zone": null, "weight": null}]),
                json!({"type": "ring", "points_per_node": null}),
            )
            .hashing(Value::Null),
        ),
        ("vbucket-map", doc(&["a", "b"], json!({"type": "vbucket", "vbuckets": 2, "map": [["b", "a"], ["a"]]}))),
    ];
    for (id, doc) in docs {
        let router = file.topology(id, doc);
        file.case(&format!("load/{id}"), json!({"op": "load", "topology": id, "expect": loaded(&router)}));
        let again = Router::from_json(&router.to_json()).expect("canonical form loads");
        assert_eq!(again.to_json(), router.to_json(), "{id}: to_json is not a fixed point");
        file.case(
            &format!("reload/{id}"),
            json!({"op": "load", "topology_json": router.to_json(), "expect": loaded(&router)}),
        );
    }
    file
}
