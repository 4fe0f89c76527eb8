//! `vbucket.json`: vbuckets with a dictionary. The derived round-robin map, and an
//! explicit map with chains of different lengths.

use serde_json::json;

use super::cases::{routed, stated_replicas, stated_route};
use super::keys::u64_key;
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "vbucket",
        "Vbuckets with a dictionary: the derived round-robin map, an explicit map with chains of different lengths.",
        "generator",
    );
    routed(&mut file, "vbucket-1024-r2", doc(&["v0", "v1", "v2", "v3"], json!({"type": "vbucket", "replicas": 2})));
    let chains: [&[&str]; 8] =
        [&["b", "a"], &["c"], &["a", "c", "b"], &["a", "b"], &["b"], &["c", "a"], &["a"], &["b", "c"]];
    let explicit = doc(&["a", "b", "c"], json!({"type": "vbucket", "vbuckets": 8, "map": chains}));
    routed(&mut file, "vbucket-map-8", explicit.clone().epoch((u64::MAX - 1).to_string()));
    // A u64 key with identity hashing lands in vbucket `key % 8`: routing is the table, exactly.
    let id = "vbucket-map-8-identity";
    let router = file.topology(id, explicit.epoch(5).hashing(identity()));
    for key in 0u64..16 {
        let chain = chains[(key % 8) as usize];
        stated_route(&mut file, id, &router, &format!("table/{key}"), u64_key(key), ((key % 8) as u32, chain[0]));
        stated_replicas(&mut file, id, &router, &format!("chain/{key}"), u64_key(key), chain);
    }
    file
}
