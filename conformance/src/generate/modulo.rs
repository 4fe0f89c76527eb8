//! `modulo.json`: modulo sharding. `hash % n`, `user_id % n` with identity hashing, the
//! 1-based variant, CRC32.

use serde_json::json;

use super::cases::{routed, stated_route};
use super::keys::{u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "modulo",
        "Modulo sharding: hash % n, user_id % n with identity hashing, the 1-based variant, CRC32.",
        "generator",
    );
    let five = ["m0", "m1", "m2", "m3", "m4"];
    routed(&mut file, "modulo-5", doc(&five, json!({"type": "modulo"})));
    routed(&mut file, "modulo-identity-5", doc(&five, json!({"type": "modulo"})).hashing(identity()));
    let one_based = doc(&["s1", "s2", "s3", "s4"], json!({"type": "modulo", "one_based": true})).hashing(identity());
    let router = routed(&mut file, "modulo-one-based-4", one_based);
    // user_id % n written out: ids 0..12 over 4 shards, 1-based, are plain arithmetic.
    for id in 0u64..12 {
        let shard = match id % 4 {
            0 => 4,
            other => other as u32,
        };
        let what = format!("arithmetic/{id}");
        stated_route(&mut file, "modulo-one-based-4", &router, &what, u64_key(id), (shard, &format!("s{shard}")));
    }
    let crc = doc(&["c0", "c1", "c2", "c3", "c4", "c5", "c6"], json!({"type": "modulo"}));
    let router = routed(&mut file, "modulo-crc32-7", crc.hashing(json!({"function": "crc32"})));
    // crc32("123456789") = 0xCBF43926 = 3421780262 = 7 * 488825751 + 5.
    stated_route(&mut file, "modulo-crc32-7", &router, "arithmetic/check-value", utf8("123456789"), (5, "c5"));
    file
}
