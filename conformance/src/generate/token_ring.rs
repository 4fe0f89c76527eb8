//! `token_ring.json`: the Cassandra-style token ring. Routing cases for generated
//! tokens (default, weighted with a seed above 2^53, Redis hash tags, one node) and for
//! explicit tokens mixed with generated ones; hand-stated routes at the edges of the
//! `(previous token, token]` ranges of Cassandra's evenly spaced three-node ring, with
//! integer keys as their own hash; rejected documents; and
//! `apply` cases of `add_node`, `remove_node` and `disruption`.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{applied, apply_refused, routed, stated_replicas, stated_route, On, Refusals};
use super::keys::u64_key;
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, nodes, strategy, Document};

const FIVE: [&str; 5] = ["r0", "r1", "r2", "r3", "r4"];

/// Cassandra's initial tokens for three nodes under Murmur3Partitioner: `-2^63 + k *
/// 2^64 / 3`, as its token generator prints them.
const CASSANDRA_3: [(&str, i64); 3] =
    [("a", -9_223_372_036_854_775_808), ("b", -3_074_457_345_618_258_603), ("c", 3_074_457_345_618_258_602)];

fn cassandra_doc() -> Value {
    let tokens: serde_json::Map<String, Value> =
        CASSANDRA_3.iter().map(|(id, token)| (id.to_string(), json!([token.to_string()]))).collect();
    doc(&["a", "b", "c"], json!({"type": "token_ring", "tokens": tokens})).epoch(3).hashing(identity())
}

fn weighted_doc() -> Value {
    let weighted = json!([{"id": "small", "weight": 0.5}, {"id": "base"}, {"id": "double", "weight": 2}, {"id": "x1.5", "weight": 1.5, "zone": "z2", "address": "10.1.0.4:9042"}]);
    doc(weighted, json!({"type": "token_ring", "tokens_per_node": 16, "token_seed": "18446744073709551557"})).epoch(2)
}

fn mixed_doc() -> Value {
    let strategy = json!({"type": "token_ring", "tokens_per_node": 4, "token_seed": 7,
        "tokens": {"imported-1": ["-6000000000000000000", "1", "6000000000000000000"], "imported-2": [-3, "9223372036854775807"]}});
    doc(&["fresh-1", "imported-1", "fresh-2", "imported-2"], strategy)
        .epoch(5)
        .hashing(json!({"hash_tag": "redis", "seed": "00112233445566778899aabbccddeeff"}))
}

/// A route case of the key whose hash is `token`, with its node stated by hand; the
/// core is checked to agree.
fn stated(file: &mut VectorFile, router: &Router, id: &str, what: &str, token: i64, node: &str) {
    let shard = ["a", "b", "c"].iter().position(|n| *n == node).expect("node") as u32;
    stated_route(file, id, router, &format!("stated/{what}"), u64_key(token as u64), (shard, node));
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "token_ring",
        "Token ring (Cassandra style): generated tokens (SplitMix64 from token_seed ^ fnv1a64(id)), weights, a seed above 2^53, explicit tokens mixed with generated ones, the (previous, token] edges of Cassandra's evenly spaced three-node ring, one node, rejected documents, node operations with their exact disruption.",
        "generator; the `stated` cases are worked out by hand from the definition (a key whose hash read as i64 is t belongs to the first token >= t, wrapping) and checked against the core; the three tokens are Cassandra's evenly spaced Murmur3Partitioner tokens",
    );
    routed(&mut file, "token-ring-5", doc(&FIVE, json!({"type": "token_ring"})));
    routed(&mut file, "token-ring-weighted-4", weighted_doc());
    routed(&mut file, "token-ring-mixed-4", mixed_doc());
    routed(
        &mut file,
        "token-ring-single",
        doc(&["only"], json!({"type": "token_ring", "tokens_per_node": 1})).epoch(4),
    );

    let id = "token-ring-cassandra-3";
    let router = routed(&mut file, id, cassandra_doc());
    let [(_, a), (_, b), (_, c)] = CASSANDRA_3;
    for (what, token, node) in [
        ("min-is-a-token", i64::MIN, "a"),
        ("after-a", a + 1, "b"),
        ("at-b", b, "b"),
        ("after-b", b + 1, "c"),
        ("minus-one", -1, "c"),
        ("zero", 0, "c"),
        ("at-c", c, "c"),
        ("after-c-wraps", c + 1, "a"),
        ("max-wraps", i64::MAX, "a"),
    ] {
        stated(&mut file, &router, id, what, token, node);
    }
    // SimpleStrategy: clockwise distinct nodes from the key's token.
    for (what, token, expected) in
        [("at-b", b, ["b", "c", "a"]), ("max", i64::MAX, ["a", "b", "c"]), ("zero", 0, ["c", "a", "b"])]
    {
        stated_replicas(&mut file, id, &router, &format!("stated/replicas-{what}"), u64_key(token as u64), &expected);
    }
    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let mut bad = Refusals::of(doc(&["a", "b", "c"], json!({"type": "token_ring"})));
    for (label, fields, code) in [
        ("tokens-per-node-zero", json!({"tokens_per_node": 0}), "invalid_topology"),
        ("tokens-per-node-over-limit", json!({"tokens_per_node": 65_537}), "limit_exceeded"),
        ("tokens-per-node-string", json!({"tokens_per_node": "8"}), "invalid_topology"),
        ("seed-negative", json!({"token_seed": -1}), "invalid_topology"),
        ("seed-fraction", json!({"token_seed": 0.5}), "invalid_topology"),
        ("seed-2p64", json!({"token_seed": "18446744073709551616"}), "invalid_topology"),
        ("seed-not-decimal", json!({"token_seed": "0x10"}), "invalid_topology"),
        ("tokens-not-object", json!({"tokens": [["a", "1"]]}), "invalid_topology"),
        ("tokens-unknown-node", json!({"tokens": {"z": ["1"]}}), "invalid_topology"),
        ("tokens-empty-list", json!({"tokens": {"a": []}}), "invalid_topology"),
        ("tokens-not-list", json!({"tokens": {"a": "1"}}), "invalid_topology"),
        ("token-duplicate-in-node", json!({"tokens": {"a": ["5", 5]}}), "invalid_topology"),
        ("token-duplicate-across-nodes", json!({"tokens": {"a": ["5"], "c": ["7", "5"]}}), "invalid_topology"),
        ("token-above-i64", json!({"tokens": {"a": ["9223372036854775808"]}}), "invalid_topology"),
        ("token-below-i64", json!({"tokens": {"a": ["-9223372036854775809"]}}), "invalid_topology"),
        ("token-u64-number", json!({"tokens": {"a": [18_446_744_073_709_551_615u64]}}), "invalid_topology"),
        ("token-fraction", json!({"tokens": {"a": [1.5]}}), "invalid_topology"),
        ("token-plus-sign", json!({"tokens": {"a": ["+1"]}}), "invalid_topology"),
        ("token-empty-string", json!({"tokens": {"a": [""]}}), "invalid_topology"),
        ("token-minus-only", json!({"tokens": {"a": ["-"]}}), "invalid_topology"),
        ("token-null", json!({"tokens": {"a": [null]}}), "invalid_topology"),
        ("unknown-field", json!({"points_per_node": 8}), "invalid_topology"),
    ] {
        bad.strategy(label, code, strategy("token_ring", fields));
    }
    bad.edit("total-tokens-over-limit", "limit_exceeded", |d| {
        d["strategy"]["tokens_per_node"] = json!(65_536);
        d["nodes"] = nodes(300);
    });
    bad.edit("weight-on-explicit-node", "invalid_topology", |d| {
        d["strategy"]["tokens"] = json!({"a": ["1"]});
        d["nodes"][0]["weight"] = json!(2);
    });
    bad.edit("crc32-hashing", "invalid_topology", |d| d["hashing"] = json!({"function": "crc32"}));
    bad.write(file, "load/reject-");
}

/// `apply` cases: `add_node` and `remove_node` report the exact ring disruption (the
/// new node's donors; the removed node's heirs), removing a node with explicit tokens
/// drops them, `disruption` compares exactly with another token ring and by sampled
/// keys with another strategy.
fn call_cases(file: &mut VectorFile) {
    let more_tokens = doc(&FIVE, json!({"type": "token_ring", "tokens_per_node": 16}));
    let reseeded = doc(&FIVE, json!({"type": "token_ring", "token_seed": 1}));
    let rendezvous = doc(&FIVE, json!({"type": "rendezvous"}));
    let (five, mixed, cassandra) = ("token-ring-5", "token-ring-mixed-4", "token-ring-cassandra-3");
    for (label, id, operation) in [
        ("add-node", five, json!({"op": "add_node", "node": {"id": "r5"}})),
        ("add-weighted-node", five, json!({"op": "add_node", "node": {"id": "big", "weight": 4}})),
        ("remove-node", five, json!({"op": "remove_node", "id": "r3"})),
        ("remove-explicit-node", mixed, json!({"op": "remove_node", "id": "imported-1"})),
        ("add-node-to-explicit", cassandra, json!({"op": "add_node", "node": {"id": "d"}})),
        ("remove-from-explicit", cassandra, json!({"op": "remove_node", "id": "b"})),
        ("disruption-more-tokens", five, json!({"op": "disruption", "to": more_tokens})),
        ("disruption-reseeded", five, json!({"op": "disruption", "to": reseeded})),
        ("disruption-to-rendezvous", five, json!({"op": "disruption", "to": rendezvous})),
    ] {
        applied(file, &format!("apply/{label}"), On::Topology(id), operation);
    }
    let crc32 = doc(&["a"], json!({"type": "token_ring"})).hashing(json!({"function": "crc32"}));
    for (label, operation, code) in [
        ("add-node-duplicate-id", json!({"op": "add_node", "node": {"id": "r1"}}), "invalid_topology"),
        ("remove-unknown", json!({"op": "remove_node", "id": "zz"}), "invalid_argument"),
        ("disruption-extra-field", json!({"op": "disruption", "to": {}, "from": {}}), "invalid_argument"),
        ("disruption-to-crc32", json!({"op": "disruption", "to": crc32}), "invalid_topology"),
    ] {
        apply_refused(file, &format!("apply/reject-{label}"), On::Topology(five), operation, code);
    }
}
