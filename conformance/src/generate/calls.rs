//! `calls.json`: the calls beyond routing that every strategy shares: `locate` with
//! placement templates, hot-key salting, `apply` with the generic node operations,
//! `shards_for_range` on hash strategies, `decode_id` refused by non-id strategies, and
//! `modulo_moves`.

use serde_json::{json, Value};

use super::cases::{applied, apply_refused, expect_error, On};
use super::keys::{hex, owned_key, standard_keys, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

fn hot_doc() -> Value {
    let nodes = json!([{"id": "cache-a", "address": "10.0.0.1:11211", "zone": "z1"}, {"id": "cache-b", "address": "10.0.0.2:11211"}, {"id": "cache-c"}]);
    doc(nodes, json!({"type": "rendezvous"}))
        .epoch(9)
        .with("placement", json!({"database": "db_{shard}", "table": "posts_{shard:02}", "dsn": "{node}/main"}))
        .with("hot_keys", json!({"separator": "#", "keys": {"celebrity:1": 8, "trend": 3}}))
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "calls",
        "Calls shared by all strategies: locate with placement names, hot-key salting, apply (add_node, remove_node), shards_for_range and decode_id on hash strategies, modulo_moves.",
        "generator; modulo_moves cases are plain arithmetic (k -> k + i*n), checked by the core's property tests",
    );
    let router = file.topology("hot-3", hot_doc());
    for (label, key) in standard_keys().into_iter().take(24) {
        let location = router.locate(owned_key(&key).as_key()).expect("locate").to_value();
        file.case(
            &format!("locate/{label}"),
            json!({"op": "locate", "topology": "hot-3", "key": key, "expect": location}),
        );
    }
    let salting_keys = [
        ("hot-celebrity", utf8("celebrity:1")),
        ("hot-trend", utf8("trend")),
        ("hot-trend-as-bytes", hex(b"trend")),
        ("cold-text", utf8("user:1")),
        ("cold-bytes", hex(&[0, 255])),
        ("integer", u64_key(42)),
        ("hot-utf16", json!({"utf16": [116, 114, 101, 110, 100]})),
    ];
    for (label, key) in &salting_keys {
        let owned = owned_key(key);
        let pairs = router.salted_keys(owned.as_key()).expect("salted_keys");
        let expected: Vec<Value> =
            pairs.iter().map(|(salted, shard)| json!([crate::run::key_form(key, salted), shard])).collect();
        file.case(
            &format!("salted_keys/{label}"),
            json!({"op": "salted_keys", "topology": "hot-3", "key": key, "expect": {"keys": expected}}),
        );
        for salt in [0u32, 2, 7, 4_294_967_295] {
            let salted = router.salted_key(owned.as_key(), salt);
            file.case(
                &format!("salted_key/{label}/{salt}"),
                json!({"op": "salted_key", "topology": "hot-3", "key": key, "salt": salt, "expect": {"key": crate::run::key_form(key, &salted)}}),
            );
        }
    }
    let invalid = json!({"utf16": [0xD800]});
    expect_error(
        &mut file,
        "salted_keys/reject-lone-surrogate",
        json!({"op": "salted_keys", "topology": "hot-3", "key": invalid}),
        "invalid_key",
        Err(shardroute::key::utf8_from_utf16(&[0xD800]).unwrap_err()),
    );
    // Hash strategies scatter every range over every shard.
    let jump = file.topology("jump-4", doc(&["a", "b", "c", "d"], json!({"type": "jump"})));
    let one_based =
        file.topology("modulo-one-based-3", doc(&["s1", "s2", "s3"], json!({"type": "modulo", "one_based": true})));
    for (id, router) in [("jump-4", &jump), ("modulo-one-based-3", &one_based)] {
        for (label, start, end) in [("all", utf8(""), Value::Null), ("a-to-m", utf8("a"), utf8("m"))] {
            let shards = router.shards_for_range(owned_key(&start).as_key(), None).expect("range");
            file.case(&format!("shards_for_range/{id}/{label}"), json!({"op": "shards_for_range", "topology": id, "start": start, "end": end, "expect": {"shards": shards}}));
        }
        expect_error(
            &mut file,
            &format!("decode_id/{id}/not-an-id-strategy"),
            json!({"op": "decode_id", "topology": id, "id": "7"}),
            "invalid_argument",
            router.decode_id(7).map(drop),
        );
    }
    // The generic node operations.
    for (id, operation) in [
        ("jump-4", json!({"op": "add_node", "node": {"id": "e"}})),
        ("jump-4", json!({"op": "remove_node", "id": "d"})),
        ("hot-3", json!({"op": "add_node", "node": {"id": "cache-d", "weight": 2, "zone": "z2"}})),
        ("hot-3", json!({"op": "remove_node", "id": "cache-a"})),
    ] {
        let what = format!("apply/{id}/{}", operation["op"].as_str().unwrap_or("?"));
        applied(&mut file, &what, On::Topology(id), operation);
    }
    for (label, operation, code) in [
        ("unknown-op", json!({"op": "teleport"}), "invalid_argument"),
        ("missing-node", json!({"op": "remove_node", "id": "zz"}), "invalid_argument"),
        ("duplicate-id", json!({"op": "add_node", "node": {"id": "a"}}), "invalid_topology"),
        ("jump-weight", json!({"op": "add_node", "node": {"id": "e", "weight": 3}}), "invalid_topology"),
    ] {
        apply_refused(&mut file, &format!("apply/reject-{label}"), On::Topology("jump-4"), operation, code);
    }
    let raw = doc(&["x"], json!({"type": "rendezvous"})).epoch(3).to_string();
    applied(&mut file, "apply/from-json-text", On::Text(&raw), json!({"op": "add_node", "node": {"id": "y"}}));
    for (old, new) in [(1u32, 3u32), (2, 4), (4, 2), (3, 6), (6, 3), (5, 5), (4, 12)] {
        let moves = shardroute::strategy::hashed::modulo::moves(old, new).expect("moves");
        file.case(
            &format!("modulo_moves/{old}-to-{new}"),
            json!({"op": "modulo_moves", "old": old, "new": new, "expect": {"moves": moves}}),
        );
    }
    // Spelled out: doubling 2 -> 4 sends shard 0's keys to 0 or 2, shard 1's to 1 or 3.
    file.case(
        "modulo_moves/2-to-4-by-hand",
        json!({"op": "modulo_moves", "old": 2, "new": 4, "expect": {"moves": [[0, 2], [1, 3]]}}),
    );
    for (old, new, code) in
        [(3u32, 4u32, "invalid_argument"), (0, 4, "no_nodes"), (4, 0, "no_nodes"), (2, 4_194_304, "limit_exceeded")]
    {
        let outcome = shardroute::strategy::hashed::modulo::moves(old, new).map(drop);
        expect_error(
            &mut file,
            &format!("modulo_moves/reject-{old}-to-{new}"),
            json!({"op": "modulo_moves", "old": old, "new": new}),
            code,
            outcome,
        );
    }
    file
}
