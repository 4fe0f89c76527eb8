//! `token_ring.json`: the Cassandra-style token ring. Routing cases for generated
//! tokens (default, weighted with a seed above 2^53, Redis hash tags, one node) and for
//! explicit tokens mixed with generated ones; hand-stated routes at the edges of the
//! `(previous token, token]` ranges of Cassandra's evenly spaced three-node ring, with
//! integer keys as their own hash; rejected documents; and
//! `apply` cases of `add_node`, `remove_node` and `disruption`.

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use super::{doc, expect_error, nodes, routing_cases, u64_key, VectorFile};

/// Cassandra's initial tokens for three nodes under Murmur3Partitioner: `-2^63 + k *
/// 2^64 / 3`, as its token generator prints them.
const CASSANDRA_3: [(&str, i64); 3] =
    [("a", -9_223_372_036_854_775_808), ("b", -3_074_457_345_618_258_603), ("c", 3_074_457_345_618_258_602)];

fn cassandra_doc() -> Value {
    let tokens: serde_json::Map<String, Value> =
        CASSANDRA_3.iter().map(|(id, token)| (id.to_string(), json!([token.to_string()]))).collect();
    let mut document = doc(3, nodes(&["a", "b", "c"]), json!({"type": "token_ring", "tokens": tokens}));
    document["hashing"] = json!({"integers": "identity"});
    document
}

fn weighted_doc() -> Value {
    let weighted = json!([{"id": "small", "weight": 0.5}, {"id": "base"}, {"id": "double", "weight": 2}, {"id": "x1.5", "weight": 1.5, "zone": "z2", "address": "10.1.0.4:9042"}]);
    doc(2, weighted, json!({"type": "token_ring", "tokens_per_node": 16, "token_seed": "18446744073709551557"}))
}

fn mixed_doc() -> Value {
    let strategy = json!({"type": "token_ring", "tokens_per_node": 4, "token_seed": 7,
        "tokens": {"imported-1": ["-6000000000000000000", "1", "6000000000000000000"], "imported-2": [-3, "9223372036854775807"]}});
    let mut document = doc(5, nodes(&["fresh-1", "imported-1", "fresh-2", "imported-2"]), strategy);
    document["hashing"] = json!({"hash_tag": "redis", "seed": "00112233445566778899aabbccddeeff"});
    document
}

/// A route case whose expected value is stated by hand; the core is checked to agree.
fn stated_route(file: &mut VectorFile, router: &Router, id: &str, what: &str, token: i64, node: &str) {
    let key = token as u64;
    let shard = ["a", "b", "c"].iter().position(|n| *n == node).expect("node") as u32;
    assert_eq!(router.node(key).expect("node"), node, "{id}/{what}: core disagrees with the stated node");
    assert_eq!(router.route(key).expect("route"), shard);
    file.case(
        &format!("{id}/stated/{what}"),
        json!({"op": "route", "topology": id, "key": u64_key(key), "expect": {"shard": shard, "node": node}}),
    );
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "token_ring",
        "Token ring (Cassandra style): generated tokens (SplitMix64 from token_seed ^ fnv1a64(id)), weights, a seed above 2^53, explicit tokens mixed with generated ones, the (previous, token] edges of Cassandra's evenly spaced three-node ring, one node, rejected documents, node operations with their exact disruption.",
        "generator; the `stated` cases are worked out by hand from the definition (a key whose hash read as i64 is t belongs to the first token >= t, wrapping) and checked against the core; the three tokens are Cassandra's evenly spaced Murmur3Partitioner tokens",
    );
    let router =
        file.topology("token-ring-5", doc(1, nodes(&["r0", "r1", "r2", "r3", "r4"]), json!({"type": "token_ring"})));
    routing_cases(&mut file, "token-ring-5", &router);
    let router = file.topology("token-ring-weighted-4", weighted_doc());
    routing_cases(&mut file, "token-ring-weighted-4", &router);
    let router = file.topology("token-ring-mixed-4", mixed_doc());
    routing_cases(&mut file, "token-ring-mixed-4", &router);
    let router = file
        .topology("token-ring-single", doc(4, nodes(&["only"]), json!({"type": "token_ring", "tokens_per_node": 1})));
    routing_cases(&mut file, "token-ring-single", &router);

    let id = "token-ring-cassandra-3";
    let router = file.topology(id, cassandra_doc());
    routing_cases(&mut file, id, &router);
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
        stated_route(&mut file, &router, id, what, token, node);
    }
    // SimpleStrategy: clockwise distinct nodes from the key's token.
    for (what, token, expected) in
        [("at-b", b, ["b", "c", "a"]), ("max", i64::MAX, ["a", "b", "c"]), ("zero", 0, ["c", "a", "b"])]
    {
        assert_eq!(router.replicas(token as u64, 3).expect("replicas"), expected, "{what}");
        file.case(
            &format!("{id}/stated/replicas-{what}"),
            json!({"op": "replicas", "topology": id, "key": u64_key(token as u64), "count": 3, "expect": {"nodes": expected}}),
        );
    }
    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let base = |strategy: Value| doc(1, nodes(&["a", "b", "c"]), strategy);
    let ring = |fields: Value| {
        let mut strategy = json!({"type": "token_ring"});
        for (name, value) in fields.as_object().expect("fields") {
            strategy[name] = value.clone();
        }
        base(strategy)
    };
    let mut bad: Vec<(&str, Value, &str)> = vec![
        ("tokens-per-node-zero", ring(json!({"tokens_per_node": 0})), "invalid_topology"),
        ("tokens-per-node-over-limit", ring(json!({"tokens_per_node": 65_537})), "limit_exceeded"),
        ("tokens-per-node-string", ring(json!({"tokens_per_node": "8"})), "invalid_topology"),
        ("seed-negative", ring(json!({"token_seed": -1})), "invalid_topology"),
        ("seed-fraction", ring(json!({"token_seed": 0.5})), "invalid_topology"),
        ("seed-2p64", ring(json!({"token_seed": "18446744073709551616"})), "invalid_topology"),
        ("seed-not-decimal", ring(json!({"token_seed": "0x10"})), "invalid_topology"),
        ("tokens-not-object", ring(json!({"tokens": [["a", "1"]]})), "invalid_topology"),
        ("tokens-unknown-node", ring(json!({"tokens": {"z": ["1"]}})), "invalid_topology"),
        ("tokens-empty-list", ring(json!({"tokens": {"a": []}})), "invalid_topology"),
        ("tokens-not-list", ring(json!({"tokens": {"a": "1"}})), "invalid_topology"),
        ("token-duplicate-in-node", ring(json!({"tokens": {"a": ["5", 5]}})), "invalid_topology"),
        ("token-duplicate-across-nodes", ring(json!({"tokens": {"a": ["5"], "c": ["7", "5"]}})), "invalid_topology"),
        ("token-above-i64", ring(json!({"tokens": {"a": ["9223372036854775808"]}})), "invalid_topology"),
        ("token-below-i64", ring(json!({"tokens": {"a": ["-9223372036854775809"]}})), "invalid_topology"),
        ("token-u64-number", ring(json!({"tokens": {"a": [18_446_744_073_709_551_615u64]}})), "invalid_topology"),
        ("token-fraction", ring(json!({"tokens": {"a": [1.5]}})), "invalid_topology"),
        ("token-plus-sign", ring(json!({"tokens": {"a": ["+1"]}})), "invalid_topology"),
        ("token-empty-string", ring(json!({"tokens": {"a": [""]}})), "invalid_topology"),
        ("token-minus-only", ring(json!({"tokens": {"a": ["-"]}})), "invalid_topology"),
        ("token-null", ring(json!({"tokens": {"a": [null]}})), "invalid_topology"),
        ("unknown-field", ring(json!({"points_per_node": 8})), "invalid_topology"),
    ];
    let mut too_many = ring(json!({"tokens_per_node": 65_536}));
    too_many["nodes"] = Value::Array((0..300).map(|i| json!({"id": format!("n{i}")})).collect());
    bad.push(("total-tokens-over-limit", too_many, "limit_exceeded"));
    let mut explicit_weighted = ring(json!({"tokens": {"a": ["1"]}}));
    explicit_weighted["nodes"][0]["weight"] = json!(2);
    bad.push(("weight-on-explicit-node", explicit_weighted, "invalid_topology"));
    let mut crc = ring(json!({}));
    crc["hashing"] = json!({"function": "crc32"});
    bad.push(("crc32-hashing", crc, "invalid_topology"));
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(file, &format!("load/reject-{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
}

/// `apply` cases: `add_node` and `remove_node` report the exact ring disruption (the
/// new node's donors; the removed node's heirs), removing a node with explicit tokens
/// drops them, `disruption` compares exactly with another token ring and by sampled
/// keys with another strategy.
pub(crate) fn call_cases(file: &mut VectorFile) {
    let five = Topology::from_value(&doc(1, nodes(&["r0", "r1", "r2", "r3", "r4"]), json!({"type": "token_ring"})))
        .expect("five");
    let mixed = Topology::from_value(&mixed_doc()).expect("mixed");
    let cassandra = Topology::from_value(&cassandra_doc()).expect("cassandra");
    let more_tokens =
        doc(1, nodes(&["r0", "r1", "r2", "r3", "r4"]), json!({"type": "token_ring", "tokens_per_node": 16}));
    let reseeded = doc(1, nodes(&["r0", "r1", "r2", "r3", "r4"]), json!({"type": "token_ring", "token_seed": 1}));
    let rendezvous = doc(1, nodes(&["r0", "r1", "r2", "r3", "r4"]), json!({"type": "rendezvous"}));
    let applied = [
        ("add-node", "token-ring-5", &five, json!({"op": "add_node", "node": {"id": "r5"}})),
        ("add-weighted-node", "token-ring-5", &five, json!({"op": "add_node", "node": {"id": "big", "weight": 4}})),
        ("remove-node", "token-ring-5", &five, json!({"op": "remove_node", "id": "r3"})),
        ("remove-explicit-node", "token-ring-mixed-4", &mixed, json!({"op": "remove_node", "id": "imported-1"})),
        ("add-node-to-explicit", "token-ring-cassandra-3", &cassandra, json!({"op": "add_node", "node": {"id": "d"}})),
        ("remove-from-explicit", "token-ring-cassandra-3", &cassandra, json!({"op": "remove_node", "id": "b"})),
        ("disruption-more-tokens", "token-ring-5", &five, json!({"op": "disruption", "to": more_tokens})),
        ("disruption-reseeded", "token-ring-5", &five, json!({"op": "disruption", "to": reseeded})),
        ("disruption-to-rendezvous", "token-ring-5", &five, json!({"op": "disruption", "to": rendezvous})),
    ];
    for (label, id, topology, operation) in applied {
        let result = ops::apply(topology, &operation).expect("apply");
        file.case(
            &format!("apply/{label}"),
            json!({"op": "apply", "topology": id, "operation": operation, "expect": {"result": result}}),
        );
    }
    let rejected = [
        ("add-node-duplicate-id", json!({"op": "add_node", "node": {"id": "r1"}}), "invalid_topology"),
        ("remove-unknown", json!({"op": "remove_node", "id": "zz"}), "invalid_argument"),
        ("disruption-extra-field", json!({"op": "disruption", "to": {}, "from": {}}), "invalid_argument"),
        (
            "disruption-to-crc32",
            json!({"op": "disruption", "to": {"format": "shardroute/1", "epoch": 1, "hashing": {"function": "crc32"}, "nodes": [{"id": "a"}], "strategy": {"type": "token_ring"}}}),
            "invalid_topology",
        ),
    ];
    for (label, operation, code) in rejected {
        let outcome = ops::apply(&five, &operation).map(drop);
        expect_error(
            file,
            &format!("apply/reject-{label}"),
            json!({"op": "apply", "topology": "token-ring-5", "operation": operation}),
            code,
            outcome,
        );
    }
}
