//! `key_type.json`: the hashing section's declared key type. Under `"keys": "u64"` the
//! canonical decimal text of an integer routes exactly as the integer, in `route`,
//! `replicas` and `route_many`, and any other text is refused with `invalid_key`.
//!
//! Every expected answer is stated by a relation: a text key's shard and node are what
//! the same document answers for the integer, and an integer's are what the document
//! without the declaration answers (the declaration changes nothing for integers).

use serde_json::{json, Value};

use shardroute::{Key, Router};

use super::cases::{load_case, refused_key};
use super::keys::{hex, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

/// The documents the rule is checked under: hashed with the integer as its own hash
/// (`7 % 5`), hashed over the integer's bytes, and vbuckets.
/// With the replica count each is asked for (a vbucket's chain is its one owner here).
fn documents() -> Vec<(&'static str, Value, Value, u32)> {
    let five = ["k0", "k1", "k2", "k3", "k4"];
    vec![
        ("modulo-identity", doc(&five, json!({"type": "modulo"})), json!({"integers": "identity"}), 2),
        ("jump", doc(&five, json!({"type": "jump"})), json!({}), 2),
        ("vbucket", doc(&five, json!({"type": "vbucket", "vbuckets": 64})), json!({}), 1),
    ]
}

/// Integers routed from their decimal text and as integers.
const VALUES: [(&str, u64); 6] = [
    ("zero", 0),
    ("seven", 7),
    ("forty-two", 42),
    ("2-pow-32", 1 << 32),
    ("2-pow-53-plus-1", (1 << 53) + 1),
    ("u64-max", u64::MAX),
];

/// Text that is not the canonical decimal text of a u64, each refused.
const REFUSED: [(&str, &str); 12] = [
    ("leading-zero", "07"),
    ("zeros", "00"),
    ("minus", "-1"),
    ("plus", "+7"),
    ("exponent", "1e3"),
    ("fraction", "7.0"),
    ("leading-space", " 7"),
    ("trailing-space", "7 "),
    ("empty", ""),
    ("letters", "abc"),
    ("u64-max-plus-1", "18446744073709551616"),
    ("arabic-indic-digit", "\u{663}"),
];

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "key_type",
        "The hashing section's declared key type: under \"keys\": \"u64\" the decimal text of an integer routes exactly as the integer (route, replicas, route_many) and any other text is refused with invalid_key.",
        "route cases stated by a relation: a text key answers what the same document answers for its integer, an integer what the document without the declaration answers; refusals by the rule (canonical decimal, no sign, space or leading zero, at most 18446744073709551615)",
    );
    for (kind, document, hashing, count) in documents() {
        let plain = Router::from_value(&document.clone().hashing(hashing.clone())).expect("the plain document");
        let mut declared = hashing.clone();
        declared["keys"] = json!("u64");
        let id = format!("keys-u64-{kind}");
        let router = file.topology(&id, document.hashing(declared));
        load_case(&mut file, &id, &router);
        let mut shards = Vec::new();
        let mut keys = Vec::new();
        for (label, value) in VALUES {
            let shard = plain.route(value).expect("route the integer");
            let node = plain.node(value).expect("node of the integer");
            let text = value.to_string();
            assert_eq!(router.route(value).expect("integer"), shard, "{id}/{label}: integer");
            assert_eq!(router.route(text.as_str()).expect("text"), shard, "{id}/{label}: text");
            assert_eq!(router.node(text.as_str()).expect("text"), node, "{id}/{label}: text node");
            let replicas = plain.replicas(value, count).expect("replicas");
            assert_eq!(router.replicas(text.as_str(), count).expect("replicas"), replicas, "{id}/{label}: replicas");
            for (form, key) in [("u64", u64_key(value)), ("text", utf8(&text)), ("bytes", hex(text.as_bytes()))] {
                file.case(
                    &format!("{id}/route/{label}-{form}"),
                    json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
                );
            }
            file.case(
                &format!("{id}/replicas-{count}/{label}-text"),
                json!({"op": "replicas", "topology": id, "key": utf8(&text), "count": count, "expect": {"nodes": replicas}}),
            );
            keys.push(utf8(&text));
            keys.push(u64_key(value));
            shards.push(shard);
            shards.push(shard);
        }
        // The batch call, text and integers mixed: each the shard of its integer.
        let owned: Vec<Key> = VALUES.iter().flat_map(|&(_, value)| [Key::U64(value), Key::U64(value)]).collect();
        assert_eq!(router.route_many(owned).expect("route_many"), shards, "{id}: route_many");
        file.case(
            &format!("{id}/route_many/text-and-integers"),
            json!({"op": "route_many", "topology": id, "keys": keys, "expect": {"shards": shards}}),
        );
        for (label, text) in REFUSED {
            let outcome = router.route(text).map(|_| ());
            refused_key(&mut file, &id, &utf8(text), Some(u64_key(7)), outcome, |op| {
                format!("{id}/refused/{op}/{label}")
            });
        }
        let outcome = router.route(&[0xffu8, b'7'][..]).map(|_| ());
        refused_key(&mut file, &id, &hex(&[0xff, b'7']), None, outcome, |op| format!("{id}/refused/{op}/non-utf8"));
    }
    hash_cases(&mut file);
    file
}

/// `hash_key` under a spec that declares u64 keys: the decimal text hashes as the integer
/// (stated by the hash of the integer under the spec without the declaration).
fn hash_cases(file: &mut VectorFile) {
    for (kind, spec) in [("le-bytes", json!({})), ("identity", json!({"integers": "identity"}))] {
        let plain = shardroute::KeyHashing::from_json(&spec.to_string()).expect("spec");
        let mut declared = spec.clone();
        declared["keys"] = json!("u64");
        let typed = shardroute::KeyHashing::from_json(&declared.to_string()).expect("spec");
        for (label, value) in [("seven", 7u64), ("u64-max", u64::MAX)] {
            let hash = plain.hash(Key::U64(value));
            let text = value.to_string();
            assert_eq!(typed.hash(Key::Bytes(text.as_bytes())), hash, "{kind}/{label}");
            for (form, key) in [("u64", u64_key(value)), ("text", utf8(&text))] {
                file.case(
                    &format!("keys-u64/hash_key/{kind}/{label}-{form}"),
                    json!({"op": "hash_key", "key": key, "hashing": declared, "expect": {"hash": hash.to_string()}}),
                );
            }
        }
    }
}
