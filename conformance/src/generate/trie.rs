//! `trie.json`: the bit trie. Routing cases for the one-leaf root, a three-leaf trie,
//! the default balanced trie and a trie 64 levels deep; hand-stated routes of integer
//! keys under identity hashing (the key is the hash, so its leaf is read off its bits);
//! rejected documents; and `apply` cases of `trie_split` and
//! `trie_remove`.

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use super::{doc, expect_error, nodes, routing_cases, u64_key, utf8, VectorFile};

/// A `trie` strategy object from `(prefix, node)` pairs.
fn trie(leaves: &[(&str, &str)]) -> Value {
    json!({"type": "trie", "leaves": leaves.iter().map(|(p, n)| json!({"prefix": p, "node": n})).collect::<Vec<_>>()})
}

/// The three-leaf trie `0 -> a`, `10 -> b`, `11 -> c`, with integer keys as their own hash.
fn trie_3() -> Value {
    let mut document = doc(2, nodes(&["a", "b", "c"]), trie(&[("0", "a"), ("10", "b"), ("11", "c")]));
    document["hashing"] = json!({"integers": "identity"});
    document
}

/// Leaves `0^64 -> d0`, then `0^(63-j) 1 -> d{j+1}` for `j` in `0..64`: every depth
/// from 1 to 64, with integer keys as their own hash, so the key `2^j` is in leaf `j + 1`.
fn deep_doc() -> Value {
    let mut prefixes = vec![("0".repeat(64), "d0".to_string())];
    for j in 0..64 {
        prefixes.push((format!("{}1", "0".repeat(63 - j)), format!("d{}", j + 1)));
    }
    let ids: Vec<&str> = prefixes.iter().map(|(_, id)| id.as_str()).collect();
    let leaves: Vec<(&str, &str)> = prefixes.iter().map(|(p, id)| (p.as_str(), id.as_str())).collect();
    let mut document = doc(7, nodes(&ids), trie(&leaves));
    document["hashing"] = json!({"integers": "identity"});
    document
}

/// A route case whose expected value is stated by hand; the core is checked to agree.
fn stated_route(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: u64, shard: u32, node: &str) {
    assert_eq!(router.route(key).expect("route"), shard, "{id}/{what}: core disagrees with the stated shard");
    assert_eq!(router.node(key).expect("node"), node, "{id}/{what}: core disagrees with the stated node");
    file.case(
        &format!("{id}/stated/{what}"),
        json!({"op": "route", "topology": id, "key": u64_key(key), "expect": {"shard": shard, "node": node}}),
    );
}

/// A replicas case whose expected value is stated by hand; the core is checked to agree.
fn stated_replicas(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: u64, expected: &[&str]) {
    let count = expected.len() as u32;
    assert_eq!(router.replicas(key, count).expect("replicas"), expected, "{id}/{what}: core disagrees");
    file.case(
        &format!("{id}/stated/{what}"),
        json!({"op": "replicas", "topology": id, "key": u64_key(key), "count": count, "expect": {"nodes": expected}}),
    );
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "trie",
        "Bit trie over the hash bits: the one-leaf root, three leaves, the default balanced trie, a trie 64 levels deep, hand-stated integer routes and XOR-ordered replicas, rejected tries, trie_split and trie_remove.",
        "generator; the `stated` cases are worked out by hand from the definition (identity hashing: the key's bits, most significant first, pick the leaf) and checked against the core",
    );
    let router = file.topology("trie-root", doc(1, nodes(&["solo"]), trie(&[("", "solo")])));
    routing_cases(&mut file, "trie-root", &router);

    let router = file.topology("trie-3", trie_3());
    routing_cases(&mut file, "trie-3", &router);
    for (what, key, shard, node) in [
        ("0", 0u64, 0u32, "a"),
        ("2p63-1", (1 << 63) - 1, 0, "a"),
        ("2p63", 1 << 63, 1, "b"),
        ("0xbfff-ffff-ffff-ffff", 0xBFFF_FFFF_FFFF_FFFF, 1, "b"),
        ("0xc000-0000-0000-0000", 0xC000_0000_0000_0000, 2, "c"),
        ("max", u64::MAX, 2, "c"),
    ] {
        stated_route(&mut file, &router, "trie-3", &format!("route-{what}"), key, shard, node);
    }
    // XOR order: after the owner, the leaf sharing the most leading bits with the key.
    stated_replicas(&mut file, &router, "trie-3", "replicas-0", 0, &["a", "b", "c"]);
    stated_replicas(&mut file, &router, "trie-3", "replicas-2p63", 1 << 63, &["b", "c", "a"]);
    stated_replicas(&mut file, &router, "trie-3", "replicas-max", u64::MAX, &["c", "b", "a"]);

    let router =
        file.topology("trie-default-5", doc(3, nodes(&["p0", "p1", "p2", "p3", "p4"]), json!({"type": "trie"})));
    routing_cases(&mut file, "trie-default-5", &router);

    let router = file.topology("trie-deep-65", deep_doc());
    routing_cases(&mut file, "trie-deep-65", &router);
    stated_route(&mut file, &router, "trie-deep-65", "route-0", 0, 0, "d0");
    for j in 0..64u32 {
        let low = 1u64 << j;
        let high = low | (low - 1);
        let node = format!("d{}", j + 1);
        stated_route(&mut file, &router, "trie-deep-65", &format!("route-2p{j}"), low, j + 1, &node);
        stated_route(&mut file, &router, "trie-deep-65", &format!("route-2p{}-1", j + 1), high, j + 1, &node);
    }
    // Key 0: its sibling leaf (depth 64) first, then up the chain. Key 2^63 (leaf "1"):
    // then the subtree "0", entered along the key's next bits (all zeros) down to
    // 0^64, then back up: XOR distances 2^63, 2^63 + 1, 2^63 + 2, ...
    stated_replicas(&mut file, &router, "trie-deep-65", "replicas-0", 0, &["d0", "d1", "d2", "d3"]);
    stated_replicas(&mut file, &router, "trie-deep-65", "replicas-2p63", 1 << 63, &["d64", "d0", "d1", "d2"]);
    stated_replicas(&mut file, &router, "trie-deep-65", "replicas-1", 1, &["d1", "d0", "d2"]);

    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let deep = "0".repeat(65);
    let base = |strategy: Value| doc(1, nodes(&["a", "b", "c"]), strategy);
    let mut bad: Vec<(&str, Value, &str)> = vec![
        ("overlap", base(trie(&[("0", "a"), ("01", "b"), ("1", "c")])), "invalid_topology"),
        ("repeated-prefix", base(trie(&[("0", "a"), ("0", "b"), ("1", "c")])), "invalid_topology"),
        ("gap", base(trie(&[("0", "a"), ("10", "b"), ("110", "c")])), "invalid_topology"),
        ("gap-first", base(trie(&[("00", "a"), ("10", "b"), ("11", "c")])), "invalid_topology"),
        ("bad-bit-char", base(trie(&[("0", "a"), ("12", "b"), ("11", "c")])), "invalid_topology"),
        ("bit-as-letter", base(trie(&[("0", "a"), ("1O", "b"), ("11", "c")])), "invalid_topology"),
        ("depth-65", base(trie(&[(&deep, "a"), ("1", "b"), ("01", "c")])), "limit_exceeded"),
        ("missing-node", base(trie(&[("0", "a"), ("10", "z"), ("11", "c")])), "invalid_topology"),
        ("node-owns-two-leaves", base(trie(&[("0", "a"), ("10", "a"), ("11", "c")])), "invalid_topology"),
        ("node-owns-no-leaf", base(trie(&[("0", "a"), ("1", "b")])), "invalid_topology"),
        ("out-of-order", base(trie(&[("10", "b"), ("0", "a"), ("11", "c")])), "invalid_topology"),
        ("no-leaves", base(trie(&[])), "invalid_topology"),
        ("leaves-not-array", base(json!({"type": "trie", "leaves": {"0": "a"}})), "invalid_topology"),
        ("prefix-number", base(json!({"type": "trie", "leaves": [{"prefix": 0, "node": "a"}]})), "invalid_topology"),
        ("prefix-missing", base(json!({"type": "trie", "leaves": [{"node": "a"}]})), "invalid_topology"),
        (
            "leaf-unknown-field",
            base(json!({"type": "trie", "leaves": [{"prefix": "", "node": "a", "weight": 2}]})),
            "invalid_topology",
        ),
        ("unknown-field", base(json!({"type": "trie", "depth": 2})), "invalid_topology"),
    ];
    let mut weighted = base(json!({"type": "trie"}));
    weighted["nodes"][1]["weight"] = json!(2);
    bad.push(("weighted-node", weighted, "invalid_topology"));
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(file, &format!("load/reject-{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
}

/// `apply` cases of `trie_split` and `trie_remove`, and `shards_for_range` (every shard:
/// keys are hashed).
pub(crate) fn call_cases(file: &mut VectorFile) {
    let documents = [
        ("trie-root", doc(1, nodes(&["solo"]), trie(&[("", "solo")]))),
        ("trie-3", trie_3()),
        ("trie-deep-65", deep_doc()),
    ];
    let applied = [
        ("split-middle", "trie-3", json!({"op": "trie_split", "leaf": "10", "node": {"id": "d", "zone": "z2"}})),
        ("split-shallow", "trie-3", json!({"op": "trie_split", "leaf": "0", "node": {"id": "d"}})),
        ("split-root", "trie-root", json!({"op": "trie_split", "leaf": "", "node": {"id": "second"}})),
        (
            "split-depth-63",
            "trie-deep-65",
            json!({"op": "trie_split", "leaf": format!("{}1", "0".repeat(62)), "node": {"id": "d65"}}),
        ),
        ("remove-merge", "trie-3", json!({"op": "trie_remove", "node": "b"})),
        ("remove-collapse", "trie-3", json!({"op": "trie_remove", "node": "a"})),
        ("remove-merge-depth-64", "trie-deep-65", json!({"op": "trie_remove", "node": "d0"})),
        ("remove-collapse-deep", "trie-deep-65", json!({"op": "trie_remove", "node": "d64"})),
    ];
    for (label, id, operation) in applied {
        let document = documents.iter().find(|(name, _)| *name == id).map(|(_, d)| d.clone()).expect("document");
        let topology = Topology::from_value(&document).expect("topology");
        let result = ops::apply(&topology, &operation).expect("apply");
        file.case(
            &format!("apply/{label}"),
            json!({"op": "apply", "topology": id, "operation": operation, "expect": {"result": result}}),
        );
    }
    // Two removals in a row: the second runs on the first's result, given as text.
    let merged =
        ops::apply(&Topology::from_value(&trie_3()).expect("trie-3"), &json!({"op": "trie_remove", "node": "b"}))
            .expect("apply");
    let raw = merged["topology"].to_string();
    let operation = json!({"op": "trie_remove", "node": "c"});
    let result = ops::apply(&Topology::from_json(&raw).expect("merged"), &operation).expect("apply");
    file.case(
        "apply/remove-merge-to-root",
        json!({"op": "apply", "topology_json": raw, "operation": operation, "expect": {"result": result}}),
    );
    let ring = file.topology("ring-2", doc(1, nodes(&["a", "b"]), json!({"type": "ring"})));
    let rejected = [
        (
            "split-depth-64",
            "trie-deep-65",
            json!({"op": "trie_split", "leaf": "0".repeat(64), "node": {"id": "x"}}),
            "limit_exceeded",
        ),
        (
            "split-inner-node",
            "trie-3",
            json!({"op": "trie_split", "leaf": "1", "node": {"id": "x"}}),
            "invalid_argument",
        ),
        (
            "split-not-a-leaf",
            "trie-3",
            json!({"op": "trie_split", "leaf": "111", "node": {"id": "x"}}),
            "invalid_argument",
        ),
        ("split-bad-bit", "trie-3", json!({"op": "trie_split", "leaf": "1x", "node": {"id": "x"}}), "invalid_argument"),
        ("split-no-node", "trie-3", json!({"op": "trie_split", "leaf": "10"}), "invalid_argument"),
        (
            "split-duplicate-id",
            "trie-3",
            json!({"op": "trie_split", "leaf": "10", "node": {"id": "a"}}),
            "invalid_topology",
        ),
        (
            "split-weighted",
            "trie-3",
            json!({"op": "trie_split", "leaf": "10", "node": {"id": "x", "weight": 2}}),
            "invalid_topology",
        ),
        ("remove-last-node", "trie-root", json!({"op": "trie_remove", "node": "solo"}), "no_nodes"),
        ("remove-unknown", "trie-3", json!({"op": "trie_remove", "node": "zz"}), "invalid_argument"),
        ("remove-extra-field", "trie-3", json!({"op": "trie_remove", "node": "a", "leaf": "0"}), "invalid_argument"),
        ("generic-remove-node", "trie-3", json!({"op": "remove_node", "id": "a"}), "invalid_argument"),
        ("split-on-ring", "ring-2", json!({"op": "trie_split", "leaf": "", "node": {"id": "x"}}), "invalid_argument"),
        ("remove-on-ring", "ring-2", json!({"op": "trie_remove", "node": "a"}), "invalid_argument"),
    ];
    for (label, id, operation, code) in rejected {
        let topology = if id == "ring-2" {
            ring.topology().clone()
        } else {
            let document = documents.iter().find(|(name, _)| *name == id).map(|(_, d)| d.clone()).expect("document");
            Topology::from_value(&document).expect("topology")
        };
        let outcome = ops::apply(&topology, &operation).map(drop);
        expect_error(
            file,
            &format!("apply/reject-{label}"),
            json!({"op": "apply", "topology": id, "operation": operation}),
            code,
            outcome,
        );
    }
    let router = Router::from_value(&trie_3()).expect("trie-3");
    let shards = router.shards_for_range("a", None).expect("range");
    assert_eq!(shards, [0, 1, 2], "hashed keys: every range visits every shard");
    file.case("shards_for_range/trie-3/all", json!({"op": "shards_for_range", "topology": "trie-3", "start": utf8("a"), "end": Value::Null, "expect": {"shards": shards}}));
}
