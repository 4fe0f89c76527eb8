//! `ring.json`: the consistent-hash ring with virtual nodes. Default points, weights,
//! CRC32 points with Redis hash tags, one node.

use serde_json::json;

use super::cases::routed;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "ring",
        "Consistent-hash ring with virtual nodes: default points, weights, CRC32 points with Redis hash tags.",
        "generator",
    );
    routed(&mut file, "ring-5", doc(&["r0", "r1", "r2", "r3", "r4"], json!({"type": "ring"})));
    let weighted = json!([{"id": "small", "weight": 0.5}, {"id": "base"}, {"id": "double", "weight": 2}, {"id": "x1.5", "weight": 1.5, "zone": "z2", "address": "10.1.0.4:11211"}]);
    routed(&mut file, "ring-weighted-4", doc(weighted, json!({"type": "ring", "points_per_node": 40})).epoch(2));
    let tagged = doc(&["t0", "t1", "t2"], json!({"type": "ring", "points_per_node": 100}));
    routed(&mut file, "ring-crc32-tag-3", tagged.epoch(3).hashing(json!({"function": "crc32", "hash_tag": "redis"})));
    routed(&mut file, "ring-single", doc(&["only"], json!({"type": "ring", "points_per_node": 1})).epoch(4));
    file
}
