//! `directory.json`: the directory strategy (an explicit key → node table over a
//! fallback) and vbucket per-key overrides. Routing cases; hand-stated routes of listed
//! keys; near misses (prefixes, the other key kind) checked against the fallback alone;
//! hash-tag matching; rejected documents; and `apply` cases
//! of `directory_set`, `directory_remove`, `vbucket_override` and
//! `vbucket_override_remove`.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{applied, apply_refused, routed, stated_replicas, stated_route, On, Refusals};
use super::keys::{hex, owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

const DIRECTORY: &str = "directory-jump-4";
const OVERRIDES: &str = "vbucket-overrides-16";

/// The entries of `directory-jump-4`, as `(key object, node)`.
fn jump_entries() -> Vec<(Value, &'static str)> {
    vec![
        (utf8("user:1"), "d2"),
        (utf8(""), "d3"),
        (utf8("ключ"), "d1"),
        (utf8("{user1000}.following"), "d3"),
        (hex(&[0xff, 0x00]), "d1"),
        (u64_key(42), "d0"),
        (u64_key(u64::MAX), "d3"),
        (u64_key(7), "d2"),
    ]
}

fn directory(entries: &[(Value, &str)], fallback: Value) -> Value {
    let rows: Vec<Value> = entries.iter().map(|(key, node)| json!({"key": key, "node": node})).collect();
    json!({"type": "directory", "entries": rows, "fallback": fallback})
}

/// A route case for a listed key, whose node is read off the table (shard = the node's
/// index); the core is checked to agree.
fn listed_route(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: &Value, node: &str) {
    let shard = router.nodes().iter().position(|n| n.id == node).expect("node in topology") as u32;
    stated_route(file, id, router, &format!("stated/{what}"), key.clone(), (shard, node));
}

/// A route case for a key the directory does not list: the expected answer is the
/// fallback strategy's alone (computed by a router over the fallback by itself).
fn fallback_route(file: &mut VectorFile, router: &Router, alone: &Router, id: &str, what: &str, key: &Value) {
    let owned = owned_key(key);
    let node = alone.node(owned.as_key()).expect("node");
    let shard = alone.node_index(owned.as_key()).expect("node index");
    stated_route(file, id, router, &format!("fallback/{what}"), key.clone(), (shard, node));
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "directory",
        "Directory sharding (an explicit key -> node table over a fallback strategy) and vbucket per-key overrides: listed keys, near misses, byte vs integer keys, hash-tag matching, replicas, rejected documents, directory and override operations.",
        "generator; `stated` cases are read off the table by hand (and checked against the core); `fallback` cases expect what the fallback strategy alone answers",
    );
    let ids = ["d0", "d1", "d2", "d3"];
    let entries = jump_entries();
    let router = routed(&mut file, DIRECTORY, doc(&ids, directory(&entries, json!({"type": "jump"}))));
    let alone = Router::from_value(&doc(&ids, json!({"type": "jump"}))).expect("jump alone");
    for (index, (key, node)) in entries.iter().enumerate() {
        listed_route(&mut file, &router, DIRECTORY, &format!("entry-{index}"), key, node);
    }
    // Near misses: prefixes and extensions of listed keys, neighbours of listed
    // integers, and the other key kind with the same spelling.
    for (what, key) in [
        ("user-1-prefix", utf8("user:")),
        ("user-1-extended", utf8("user:10")),
        ("user-1-upper", utf8("USER:1")),
        ("hex-ff", hex(&[0xff])),
        ("hex-ff0000", hex(&[0xff, 0, 0])),
        ("text-42", utf8("42")),
        ("bytes-of-42", hex(&42u64.to_le_bytes())),
        ("u64-41", u64_key(41)),
        ("u64-43", u64_key(43)),
        ("u64-max-1", u64_key(u64::MAX - 1)),
        ("text-7", utf8("7")),
        ("u64-0", u64_key(0)),
        ("tag-followers", utf8("{user1000}.followers")),
    ] {
        fallback_route(&mut file, &router, &alone, DIRECTORY, what, &key);
    }
    // A listed key's replicas: its node, then the fallback's order without it.
    for (what, key) in [("user-1", utf8("user:1")), ("u64-42", u64_key(42)), ("empty", utf8(""))] {
        let owned = owned_key(&key);
        let entry = router.node(owned.as_key()).expect("node");
        let mut expected = vec![entry];
        expected.extend(alone.replicas(owned.as_key(), 4).expect("replicas").into_iter().filter(|n| *n != entry));
        stated_replicas(&mut file, DIRECTORY, &router, &format!("stated/replicas-{what}"), key, &expected);
    }

    // Hash tags: an entry for the tag moves every key carrying it; weighted ring fallback.
    let weighted =
        json!([{"id": "r0"}, {"id": "r1", "weight": 2}, {"id": "r2"}, {"id": "r3", "weight": 0.5}, {"id": "r4"}]);
    let tagged_entries = [(utf8("user:1"), "r4"), (utf8("user1000"), "r0"), (u64_key(1), "r3")];
    let ring = json!({"type": "ring", "points_per_node": 40});
    let tagged = doc(weighted.clone(), directory(&tagged_entries, ring.clone())).epoch(2);
    let id = "directory-tagged-ring-5";
    let router = routed(&mut file, id, tagged.hashing(json!({"hash_tag": "redis"})));
    for (what, key, node) in [
        ("user-1", "user:1", "r4"),
        ("user-1-profile", "{user:1}.profile", "r4"),
        ("user-1-posts", "{user:1}.posts", "r4"),
        ("user-1-suffix-tag", "x{user:1}y", "r4"),
        ("user1000-following", "{user1000}.following", "r0"),
        ("user1000-followers", "{user1000}.followers", "r0"),
    ] {
        listed_route(&mut file, &router, id, what, &utf8(key), node);
    }
    let ring_alone = doc(weighted, ring).epoch(2).hashing(json!({"hash_tag": "redis"}));
    let ring_alone = Router::from_value(&ring_alone).expect("ring alone");
    for (what, key) in [("empty-tag", utf8("{}user:1")), ("other-tag", utf8("{user:2}.profile")), ("u64-2", u64_key(2))]
    {
        fallback_route(&mut file, &router, &ring_alone, id, what, &key);
    }

    // No entries: the fallback, exactly; rendezvous with weights.
    let weights = json!([{"id": "w0", "weight": 3}, {"id": "w1"}, {"id": "w2", "weight": 0.25}]);
    let empty = doc(weights, json!({"type": "directory", "fallback": {"type": "rendezvous"}}));
    routed(&mut file, "directory-empty-rendezvous-3", empty.epoch(3));

    overrides(&mut file);
    rejected(&mut file);
    call_cases(&mut file);
    file
}

/// The 16-vbucket map of the override topology: vbucket `v` on `o{v % 3}`, replica on
/// `o{(v + 1) % 3}`.
fn override_map() -> Value {
    Value::Array((0..16).map(|v| json!([format!("o{}", v % 3), format!("o{}", (v + 1) % 3)])).collect())
}

fn overrides(file: &mut VectorFile) {
    let overrides = json!([
        {"key": {"u64": 5}, "vbucket": 9},
        {"key": {"utf8": "user:1"}, "vbucket": 0},
        {"key": {"hex": "00ff"}, "vbucket": 15},
        {"key": {"u64": "18446744073709551615"}, "vbucket": 1},
    ]);
    let plain = doc(&["o0", "o1", "o2"], json!({"type": "vbucket", "vbuckets": 16, "map": override_map()})).epoch(4);
    let mut listed = plain.clone().hashing(identity());
    listed["strategy"]["overrides"] = overrides;
    let router = routed(file, OVERRIDES, listed);
    // Integer keys are their own hash: vbucket `k % 16` unless overridden. Only the
    // listed key 5 moves; 21 (also `% 16 == 5`) stays in vbucket 5.
    let chain = |v: u64| [format!("o{}", v % 3), format!("o{}", (v + 1) % 3)];
    for key in 0u64..24 {
        let vbucket = if key == 5 { 9 } else { key % 16 };
        let [owner, replica] = chain(vbucket);
        stated_route(file, OVERRIDES, &router, &format!("stated/route-{key}"), u64_key(key), (vbucket as u32, &owner));
        stated_replicas(file, OVERRIDES, &router, &format!("stated/chain-{key}"), u64_key(key), &[&owner, &replica]);
    }
    for (what, key, vbucket) in
        [("max", u64_key(u64::MAX), 1u64), ("user-1", utf8("user:1"), 0), ("hex-00ff", hex(&[0, 0xff]), 15)]
    {
        let [owner, _] = chain(vbucket);
        stated_route(file, OVERRIDES, &router, &format!("stated/route-{what}"), key, (vbucket as u32, &owner));
    }
    // The same bytes spelled as text route alike; the text "5" is not the integer 5.
    let plain = Router::from_value(&plain).expect("plain");
    for (what, key) in [("text-5", utf8("5")), ("user-10", utf8("user:10")), ("hex-00", hex(&[0]))] {
        let owned = owned_key(&key);
        let expected = (plain.route(owned.as_key()).expect("route"), plain.node(owned.as_key()).expect("node"));
        stated_route(file, OVERRIDES, &router, &format!("unlisted/{what}"), key, expected);
    }
}

fn rejected(file: &mut VectorFile) {
    let mut bad = Refusals::of(doc(&["a", "b", "c"], json!({"type": "directory", "fallback": {"type": "jump"}})));
    for (label, strategy) in [
        ("directory-no-fallback", json!({"type": "directory", "entries": []})),
        ("directory-fallback-vbucket", json!({"type": "directory", "fallback": {"type": "vbucket"}})),
        (
            "directory-fallback-directory",
            json!({"type": "directory", "fallback": {"type": "directory", "fallback": {"type": "jump"}}}),
        ),
        (
            "directory-fallback-one-based",
            json!({"type": "directory", "fallback": {"type": "modulo", "one_based": true}}),
        ),
        ("directory-fallback-unknown", json!({"type": "directory", "fallback": {"type": "random"}})),
    ] {
        bad.strategy(label, "invalid_topology", strategy);
    }
    bad.edit("directory-fallback-weights", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(2));
    for (label, entries) in [
        ("directory-entries-object", json!({"user:1": "a"})),
        ("directory-unknown-node", json!([{"key": {"utf8": "k"}, "node": "z"}])),
        ("directory-duplicate-key", json!([{"key": {"utf8": "k"}, "node": "a"}, {"key": {"hex": "6b"}, "node": "b"}])),
        ("directory-duplicate-u64", json!([{"key": {"u64": 1}, "node": "a"}, {"key": {"u64": "1"}, "node": "b"}])),
        ("directory-key-two-forms", json!([{"key": {"utf8": "k", "u64": 1}, "node": "a"}])),
        ("directory-key-no-form", json!([{"key": {}, "node": "a"}])),
        ("directory-key-string", json!([{"key": "k", "node": "a"}])),
        ("directory-key-odd-hex", json!([{"key": {"hex": "abc"}, "node": "a"}])),
        ("directory-key-u64-2p64", json!([{"key": {"u64": "18446744073709551616"}, "node": "a"}])),
        ("directory-key-utf16", json!([{"key": {"utf16": [104]}, "node": "a"}])),
        ("directory-entry-unknown-field", json!([{"key": {"utf8": "k"}, "node": "a", "weight": 1}])),
        ("directory-entry-missing-node", json!([{"key": {"utf8": "k"}}])),
    ] {
        bad.edit(label, "invalid_topology", |d| d["strategy"]["entries"] = entries);
    }
    bad.edit("directory-tagged-entry-never-matches", "invalid_topology", |d| {
        d["strategy"]["entries"] = json!([{"key": {"utf8": "{user:1}.profile"}, "node": "a"}]);
        d["hashing"] = json!({"hash_tag": "redis"});
    });
    let overridden = |overrides: Value| json!({"type": "vbucket", "vbuckets": 4, "overrides": overrides});
    for (label, overrides) in [
        ("vbucket-override-out-of-range", json!([{"key": {"utf8": "k"}, "vbucket": 4}])),
        ("vbucket-override-duplicate", json!([{"key": {"u64": 3}, "vbucket": 1}, {"key": {"u64": 3}, "vbucket": 2}])),
        ("vbucket-override-missing-vbucket", json!([{"key": {"u64": 3}}])),
        ("vbucket-override-node-field", json!([{"key": {"u64": 3}, "node": "a"}])),
    ] {
        bad.strategy(label, "invalid_topology", overridden(overrides));
    }
    bad.edit("vbucket-override-tagged-never-matches", "invalid_topology", |d| {
        d["strategy"] = overridden(json!([{"key": {"utf8": "{t}x"}, "vbucket": 1}]));
        d["hashing"] = json!({"hash_tag": "redis"});
    });
    bad.write(file, "reject/");
}

/// `apply` cases: the operations on the topologies above, and their rejections.
pub(crate) fn call_cases(file: &mut VectorFile) {
    for (label, id, operation) in [
        ("directory-set-new", DIRECTORY, json!({"op": "directory_set", "key": {"utf8": "user:2"}, "node": "d3"})),
        ("directory-set-replace", DIRECTORY, json!({"op": "directory_set", "key": {"utf8": "user:1"}, "node": "d0"})),
        (
            "directory-set-u64",
            DIRECTORY,
            json!({"op": "directory_set", "key": {"u64": "9007199254740993"}, "node": "d1"}),
        ),
        ("directory-set-hex", DIRECTORY, json!({"op": "directory_set", "key": {"hex": "00"}, "node": "d2"})),
        ("directory-remove", DIRECTORY, json!({"op": "directory_remove", "key": {"u64": 42}})),
        ("directory-remove-empty-key", DIRECTORY, json!({"op": "directory_remove", "key": {"utf8": ""}})),
        ("vbucket-override-new", OVERRIDES, json!({"op": "vbucket_override", "key": {"u64": 6}, "vbucket": 3})),
        ("vbucket-override-replace", OVERRIDES, json!({"op": "vbucket_override", "key": {"u64": 5}, "vbucket": 10})),
        ("vbucket-override-remove", OVERRIDES, json!({"op": "vbucket_override_remove", "key": {"utf8": "user:1"}})),
    ] {
        applied(file, &format!("apply/{label}"), On::Topology(id), operation);
    }
    for (label, id, operation, code) in [
        (
            "directory-set-unknown-node",
            DIRECTORY,
            json!({"op": "directory_set", "key": {"utf8": "k"}, "node": "zz"}),
            "invalid_argument",
        ),
        ("directory-set-no-node", DIRECTORY, json!({"op": "directory_set", "key": {"utf8": "k"}}), "invalid_argument"),
        (
            "directory-set-bad-key",
            DIRECTORY,
            json!({"op": "directory_set", "key": "k", "node": "d0"}),
            "invalid_argument",
        ),
        (
            "directory-set-extra-field",
            DIRECTORY,
            json!({"op": "directory_set", "key": {"utf8": "k"}, "node": "d0", "vbucket": 1}),
            "invalid_argument",
        ),
        (
            "directory-remove-unlisted",
            DIRECTORY,
            json!({"op": "directory_remove", "key": {"utf8": "user:2"}}),
            "invalid_argument",
        ),
        (
            "directory-remove-other-kind",
            DIRECTORY,
            json!({"op": "directory_remove", "key": {"utf8": "42"}}),
            "invalid_argument",
        ),
        (
            "directory-set-on-vbucket",
            OVERRIDES,
            json!({"op": "directory_set", "key": {"utf8": "k"}, "node": "o0"}),
            "invalid_argument",
        ),
        (
            "vbucket-override-out-of-range",
            OVERRIDES,
            json!({"op": "vbucket_override", "key": {"utf8": "k"}, "vbucket": 16}),
            "invalid_argument",
        ),
        (
            "vbucket-override-remove-unlisted",
            OVERRIDES,
            json!({"op": "vbucket_override_remove", "key": {"u64": 21}}),
            "invalid_argument",
        ),
        (
            "vbucket-override-on-directory",
            DIRECTORY,
            json!({"op": "vbucket_override", "key": {"utf8": "k"}, "vbucket": 0}),
            "invalid_argument",
        ),
        // Removing a node an entry names gives an invalid document.
        ("remove-node-named-by-entry", DIRECTORY, json!({"op": "remove_node", "id": "d1"}), "invalid_topology"),
    ] {
        apply_refused(file, &format!("apply/reject-{label}"), On::Topology(id), operation, code);
    }
    applied(file, "apply/add-node", On::Topology(DIRECTORY), json!({"op": "add_node", "node": {"id": "d4"}}));
}
