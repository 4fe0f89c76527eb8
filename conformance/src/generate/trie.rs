//! `trie.json`: the bit trie. Routing cases for the one-leaf root, a three-leaf trie,
//! the default balanced trie and a trie 64 levels deep; hand-stated routes of integer
//! keys under identity hashing (the key is the hash, so its leaf is read off its bits);
//! rejected documents; and `apply` cases of `trie_split` and
//! `trie_remove`.

use serde_json::{json, Value};
use shardroute::{ops, Router};

use super::cases::{applied, apply_refused, routed, stated_replicas, stated_route, On, Refusals};
use super::keys::{u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

/// A `trie` strategy object from `(prefix, node)` pairs.
fn trie(leaves: &[(&str, &str)]) -> Value {
    json!({"type": "trie", "leaves": leaves.iter().map(|(p, n)| json!({"prefix": p, "node": n})).collect::<Vec<_>>()})
}

/// The three-leaf trie `0 -> a`, `10 -> b`, `11 -> c`, with integer keys as their own hash.
fn trie_3() -> Value {
    doc(&["a", "b", "c"], trie(&[("0", "a"), ("10", "b"), ("11", "c")])).epoch(2).hashing(identity())
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
    doc(&ids[..], trie(&leaves)).epoch(7).hashing(identity())
}

/// A route case `<id>/stated/<what>` of an integer key, stated by hand.
fn stated(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: u64, shard: u32, node: &str) {
    stated_route(file, id, router, &format!("stated/{what}"), u64_key(key), (shard, node));
}

/// A replicas case `<id>/stated/<what>` of an integer key, stated by hand.
fn replicas(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: u64, expected: &[&str]) {
    stated_replicas(file, id, router, &format!("stated/{what}"), u64_key(key), expected);
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "trie",
        "Bit trie over the hash bits: the one-leaf root, three leaves, the default balanced trie, a trie 64 levels deep, hand-stated integer routes and XOR-ordered replicas, rejected tries, trie_split and trie_remove.",
        "generator; the `stated` cases are worked out by hand from the definition (identity hashing: the key's bits, most significant first, pick the leaf) and checked against the core",
    );
    routed(&mut file, "trie-root", doc(&["solo"], trie(&[("", "solo")])));

    let router = routed(&mut file, "trie-3", trie_3());
    for (what, key, shard, node) in [
        ("0", 0u64, 0u32, "a"),
        ("2p63-1", (1 << 63) - 1, 0, "a"),
        ("2p63", 1 << 63, 1, "b"),
        ("0xbfff-ffff-ffff-ffff", 0xBFFF_FFFF_FFFF_FFFF, 1, "b"),
        ("0xc000-0000-0000-0000", 0xC000_0000_0000_0000, 2, "c"),
        ("max", u64::MAX, 2, "c"),
    ] {
        stated(&mut file, &router, "trie-3", &format!("route-{what}"), key, shard, node);
    }
    // XOR order: after the owner, the leaf sharing the most leading bits with the key.
    replicas(&mut file, &router, "trie-3", "replicas-0", 0, &["a", "b", "c"]);
    replicas(&mut file, &router, "trie-3", "replicas-2p63", 1 << 63, &["b", "c", "a"]);
    replicas(&mut file, &router, "trie-3", "replicas-max", u64::MAX, &["c", "b", "a"]);

    routed(&mut file, "trie-default-5", doc(&["p0", "p1", "p2", "p3", "p4"], json!({"type": "trie"})).epoch(3));

    let router = routed(&mut file, "trie-deep-65", deep_doc());
    stated(&mut file, &router, "trie-deep-65", "route-0", 0, 0, "d0");
    for j in 0..64u32 {
        let low = 1u64 << j;
        let high = low | (low - 1);
        let node = format!("d{}", j + 1);
        stated(&mut file, &router, "trie-deep-65", &format!("route-2p{j}"), low, j + 1, &node);
        stated(&mut file, &router, "trie-deep-65", &format!("route-2p{}-1", j + 1), high, j + 1, &node);
    }
    // Key 0: its sibling leaf (depth 64) first, then up the chain. Key 2^63 (leaf "1"):
    // then the subtree "0", entered along the key's next bits (all zeros) down to
    // 0^64, then back up: XOR distances 2^63, 2^63 + 1, 2^63 + 2, ...
    replicas(&mut file, &router, "trie-deep-65", "replicas-0", 0, &["d0", "d1", "d2", "d3"]);
    replicas(&mut file, &router, "trie-deep-65", "replicas-2p63", 1 << 63, &["d64", "d0", "d1", "d2"]);
    replicas(&mut file, &router, "trie-deep-65", "replicas-1", 1, &["d1", "d0", "d2"]);

    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let deep = "0".repeat(65);
    let mut bad = Refusals::of(doc(&["a", "b", "c"], json!({"type": "trie"})));
    for (label, strategy, code) in [
        ("overlap", trie(&[("0", "a"), ("01", "b"), ("1", "c")]), "invalid_topology"),
        ("repeated-prefix", trie(&[("0", "a"), ("0", "b"), ("1", "c")]), "invalid_topology"),
        ("gap", trie(&[("0", "a"), ("10", "b"), ("110", "c")]), "invalid_topology"),
        ("gap-first", trie(&[("00", "a"), ("10", "b"), ("11", "c")]), "invalid_topology"),
        ("bad-bit-char", trie(&[("0", "a"), ("12", "b"), ("11", "c")]), "invalid_topology"),
        ("bit-as-letter", trie(&[("0", "a"), ("1O", "b"), ("11", "c")]), "invalid_topology"),
        ("depth-65", trie(&[(&deep, "a"), ("1", "b"), ("01", "c")]), "limit_exceeded"),
        ("missing-node", trie(&[("0", "a"), ("10", "z"), ("11", "c")]), "invalid_topology"),
        ("node-owns-two-leaves", trie(&[("0", "a"), ("10", "a"), ("11", "c")]), "invalid_topology"),
        ("node-owns-no-leaf", trie(&[("0", "a"), ("1", "b")]), "invalid_topology"),
        ("out-of-order", trie(&[("10", "b"), ("0", "a"), ("11", "c")]), "invalid_topology"),
        ("no-leaves", trie(&[]), "invalid_topology"),
        ("leaves-not-array", json!({"type": "trie", "leaves": {"0": "a"}}), "invalid_topology"),
        ("prefix-number", json!({"type": "trie", "leaves": [{"prefix": 0, "node": "a"}]}), "invalid_topology"),
        ("prefix-missing", json!({"type": "trie", "leaves": [{"node": "a"}]}), "invalid_topology"),
        (
            "leaf-unknown-field",
            json!({"type": "trie", "leaves": [{"prefix": "", "node": "a", "weight": 2}]}),
            "invalid_topology",
        ),
        ("unknown-field", json!({"type": "trie", "depth": 2}), "invalid_topology"),
    ] {
        bad.strategy(label, code, strategy);
    }
    bad.edit("weighted-node", "invalid_topology", |d| d["nodes"][1]["weight"] = json!(2));
    bad.write(file, "load/reject-");
}

/// `apply` cases of `trie_split` and `trie_remove`, and `shards_for_range` (every shard:
/// keys are hashed).
fn call_cases(file: &mut VectorFile) {
    for (label, id, operation) in [
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
    ] {
        applied(file, &format!("apply/{label}"), On::Topology(id), operation);
    }
    // Two removals in a row: the second runs on the first's result, given as text.
    let merged = ops::apply(&file.parsed("trie-3"), &json!({"op": "trie_remove", "node": "b"})).expect("apply");
    let raw = merged["topology"].to_string();
    applied(file, "apply/remove-merge-to-root", On::Text(&raw), json!({"op": "trie_remove", "node": "c"}));
    file.topology("ring-2", doc(&["a", "b"], json!({"type": "ring"})));
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
        apply_refused(file, &format!("apply/reject-{label}"), On::Topology(id), operation, code);
    }
    let shards = file.router("trie-3").shards_for_range("a", None).expect("range");
    assert_eq!(shards, [0, 1, 2], "hashed keys: every range visits every shard");
    file.case("shards_for_range/trie-3/all", json!({"op": "shards_for_range", "topology": "trie-3", "start": utf8("a"), "end": Value::Null, "expect": {"shards": shards}}));
}
