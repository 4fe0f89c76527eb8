//! `directory.json`: the directory strategy (an explicit key → node table over a
//! fallback) and vbucket per-key overrides. Routing cases; hand-stated routes of listed
//! keys; near misses (prefixes, the other key kind) checked against the fallback alone;
//! hash-tag matching; rejected documents; and `apply` cases
//! of `directory_set`, `directory_remove`, `vbucket_override` and
//! `vbucket_override_remove`.

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use super::{doc, expect_error, hex, nodes, owned_key, routing_cases, u64_key, utf8, VectorFile};

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

/// A route case whose expected node is stated by hand (shard = the node's index); the
/// core is checked to agree.
fn stated_route(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: &Value, node: &str) {
    let owned = owned_key(key);
    let shard = router.nodes().iter().position(|n| n.id == node).expect("node in topology") as u32;
    assert_eq!(router.route(owned.as_key()).expect("route"), shard, "{id}/{what}: core disagrees");
    assert_eq!(router.node(owned.as_key()).expect("node"), node, "{id}/{what}: core disagrees");
    file.case(
        &format!("{id}/stated/{what}"),
        json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
    );
}

/// A route case for a key the directory does not list: the expected answer is the
/// fallback strategy's alone (computed by a router over the fallback by itself).
fn fallback_route(file: &mut VectorFile, router: &Router, alone: &Router, id: &str, what: &str, key: &Value) {
    let owned = owned_key(key);
    let node = alone.node(owned.as_key()).expect("node");
    let shard = alone.node_index(owned.as_key()).expect("node index");
    assert_eq!(router.node(owned.as_key()).expect("node"), node, "{id}/{what}: not the fallback's node");
    file.case(
        &format!("{id}/fallback/{what}"),
        json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
    );
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "directory",
        "Directory sharding (an explicit key -> node table over a fallback strategy) and vbucket per-key overrides: listed keys, near misses, byte vs integer keys, hash-tag matching, replicas, rejected documents, directory and override operations.",
        "generator; `stated` cases are read off the table by hand (and checked against the core); `fallback` cases expect what the fallback strategy alone answers",
    );
    let ids = ["d0", "d1", "d2", "d3"];
    let entries = jump_entries();
    let router = file.topology("directory-jump-4", doc(1, nodes(&ids), directory(&entries, json!({"type": "jump"}))));
    let alone = Router::from_value(&doc(1, nodes(&ids), json!({"type": "jump"}))).expect("jump alone");
    routing_cases(&mut file, "directory-jump-4", &router);
    for (index, (key, node)) in entries.iter().enumerate() {
        stated_route(&mut file, &router, "directory-jump-4", &format!("entry-{index}"), key, node);
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
        fallback_route(&mut file, &router, &alone, "directory-jump-4", what, &key);
    }
    // A listed key's replicas: its node, then the fallback's order without it.
    for (what, key) in [("user-1", utf8("user:1")), ("u64-42", u64_key(42)), ("empty", utf8(""))] {
        let owned = owned_key(&key);
        let nodes = router.replicas(owned.as_key(), 4).expect("replicas");
        let entry = router.node(owned.as_key()).expect("node");
        let mut expected = vec![entry];
        expected.extend(alone.replicas(owned.as_key(), 4).expect("replicas").into_iter().filter(|n| *n != entry));
        assert_eq!(nodes, expected, "{what}: replicas are the owner then the fallback's order");
        file.case(
            &format!("directory-jump-4/stated/replicas-{what}"),
            json!({"op": "replicas", "topology": "directory-jump-4", "key": key, "count": 4, "expect": {"nodes": nodes}}),
        );
    }

    // Hash tags: an entry for the tag moves every key carrying it; weighted ring fallback.
    let weighted =
        json!([{"id": "r0"}, {"id": "r1", "weight": 2}, {"id": "r2"}, {"id": "r3", "weight": 0.5}, {"id": "r4"}]);
    let tagged_entries = [(utf8("user:1"), "r4"), (utf8("user1000"), "r0"), (u64_key(1), "r3")];
    let mut tagged =
        doc(2, weighted.clone(), directory(&tagged_entries, json!({"type": "ring", "points_per_node": 40})));
    tagged["hashing"] = json!({"hash_tag": "redis"});
    let router = file.topology("directory-tagged-ring-5", tagged);
    routing_cases(&mut file, "directory-tagged-ring-5", &router);
    for (what, key, node) in [
        ("user-1", "user:1", "r4"),
        ("user-1-profile", "{user:1}.profile", "r4"),
        ("user-1-posts", "{user:1}.posts", "r4"),
        ("user-1-suffix-tag", "x{user:1}y", "r4"),
        ("user1000-following", "{user1000}.following", "r0"),
        ("user1000-followers", "{user1000}.followers", "r0"),
    ] {
        stated_route(&mut file, &router, "directory-tagged-ring-5", what, &utf8(key), node);
    }
    let mut ring_alone = doc(2, weighted, json!({"type": "ring", "points_per_node": 40}));
    ring_alone["hashing"] = json!({"hash_tag": "redis"});
    let ring_alone = Router::from_value(&ring_alone).expect("ring alone");
    for (what, key) in [("empty-tag", utf8("{}user:1")), ("other-tag", utf8("{user:2}.profile")), ("u64-2", u64_key(2))]
    {
        fallback_route(&mut file, &router, &ring_alone, "directory-tagged-ring-5", what, &key);
    }

    // No entries: the fallback, exactly; rendezvous with weights.
    let weights = json!([{"id": "w0", "weight": 3}, {"id": "w1"}, {"id": "w2", "weight": 0.25}]);
    let router = file.topology(
        "directory-empty-rendezvous-3",
        doc(3, weights, json!({"type": "directory", "fallback": {"type": "rendezvous"}})),
    );
    routing_cases(&mut file, "directory-empty-rendezvous-3", &router);

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

fn overrides_doc() -> Value {
    let mut document = doc(
        4,
        nodes(&["o0", "o1", "o2"]),
        json!({"type": "vbucket", "vbuckets": 16, "map": override_map(), "overrides": [
            {"key": {"u64": 5}, "vbucket": 9},
            {"key": {"utf8": "user:1"}, "vbucket": 0},
            {"key": {"hex": "00ff"}, "vbucket": 15},
            {"key": {"u64": "18446744073709551615"}, "vbucket": 1},
        ]}),
    );
    document["hashing"] = json!({"integers": "identity"});
    document
}

fn overrides(file: &mut VectorFile) {
    let id = "vbucket-overrides-16";
    let router = file.topology(id, overrides_doc());
    routing_cases(file, id, &router);
    // Integer keys are their own hash: vbucket `k % 16` unless overridden. Only the
    // listed key 5 moves; 21 (also `% 16 == 5`) stays in vbucket 5.
    let chain = |v: u64| vec![format!("o{}", v % 3), format!("o{}", (v + 1) % 3)];
    for key in 0u64..24 {
        let vbucket = if key == 5 { 9 } else { key % 16 };
        let expected = chain(vbucket);
        assert_eq!(router.route(key).expect("route"), vbucket as u32, "{key}");
        file.case(&format!("{id}/stated/route-{key}"), json!({"op": "route", "topology": id, "key": u64_key(key), "expect": {"shard": vbucket, "node": expected[0]}}));
        file.case(
            &format!("{id}/stated/chain-{key}"),
            json!({"op": "replicas", "topology": id, "key": u64_key(key), "count": 2, "expect": {"nodes": expected}}),
        );
    }
    for (what, key, vbucket) in
        [("max", u64_key(u64::MAX), 1u64), ("user-1", utf8("user:1"), 0), ("hex-00ff", hex(&[0, 0xff]), 15)]
    {
        let expected = chain(vbucket);
        let owned = owned_key(&key);
        assert_eq!(router.route(owned.as_key()).expect("route"), vbucket as u32, "{what}");
        file.case(
            &format!("{id}/stated/route-{what}"),
            json!({"op": "route", "topology": id, "key": key, "expect": {"shard": vbucket, "node": expected[0]}}),
        );
    }
    // The same bytes spelled as text route alike; the text "5" is not the integer 5.
    let plain = Router::from_value(&doc(
        4,
        nodes(&["o0", "o1", "o2"]),
        json!({"type": "vbucket", "vbuckets": 16, "map": override_map()}),
    ))
    .expect("plain");
    for (what, key) in [("text-5", utf8("5")), ("user-10", utf8("user:10")), ("hex-00", hex(&[0]))] {
        let owned = owned_key(&key);
        let shard = plain.route(owned.as_key()).expect("route");
        assert_eq!(router.route(owned.as_key()).expect("route"), shard, "{what}");
        file.case(&format!("{id}/unlisted/{what}"), json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": plain.node(owned.as_key()).expect("node")}}));
    }
}

fn rejected(file: &mut VectorFile) {
    let base = |strategy: Value| doc(1, nodes(&["a", "b", "c"]), strategy);
    let with_entries =
        |entries: Value| base(json!({"type": "directory", "entries": entries, "fallback": {"type": "jump"}}));
    let mut tagged = base(
        json!({"type": "directory", "entries": [{"key": {"utf8": "{user:1}.profile"}, "node": "a"}], "fallback": {"type": "jump"}}),
    );
    tagged["hashing"] = json!({"hash_tag": "redis"});
    let mut tagged_override =
        base(json!({"type": "vbucket", "vbuckets": 4, "overrides": [{"key": {"utf8": "{t}x"}, "vbucket": 1}]}));
    tagged_override["hashing"] = json!({"hash_tag": "redis"});
    let mut weighted = base(json!({"type": "directory", "fallback": {"type": "jump"}}));
    weighted["nodes"][0]["weight"] = json!(2);
    let bad: Vec<(&str, Value, &str)> = vec![
        ("directory-no-fallback", base(json!({"type": "directory", "entries": []})), "invalid_topology"),
        (
            "directory-fallback-vbucket",
            base(json!({"type": "directory", "fallback": {"type": "vbucket"}})),
            "invalid_topology",
        ),
        (
            "directory-fallback-directory",
            base(json!({"type": "directory", "fallback": {"type": "directory", "fallback": {"type": "jump"}}})),
            "invalid_topology",
        ),
        (
            "directory-fallback-one-based",
            base(json!({"type": "directory", "fallback": {"type": "modulo", "one_based": true}})),
            "invalid_topology",
        ),
        (
            "directory-fallback-unknown",
            base(json!({"type": "directory", "fallback": {"type": "random"}})),
            "invalid_topology",
        ),
        ("directory-fallback-weights", weighted, "invalid_topology"),
        ("directory-entries-object", with_entries(json!({"user:1": "a"})), "invalid_topology"),
        ("directory-unknown-node", with_entries(json!([{"key": {"utf8": "k"}, "node": "z"}])), "invalid_topology"),
        (
            "directory-duplicate-key",
            with_entries(json!([{"key": {"utf8": "k"}, "node": "a"}, {"key": {"hex": "6b"}, "node": "b"}])),
            "invalid_topology",
        ),
        (
            "directory-duplicate-u64",
            with_entries(json!([{"key": {"u64": 1}, "node": "a"}, {"key": {"u64": "1"}, "node": "b"}])),
            "invalid_topology",
        ),
        (
            "directory-key-two-forms",
            with_entries(json!([{"key": {"utf8": "k", "u64": 1}, "node": "a"}])),
            "invalid_topology",
        ),
        ("directory-key-no-form", with_entries(json!([{"key": {}, "node": "a"}])), "invalid_topology"),
        ("directory-key-string", with_entries(json!([{"key": "k", "node": "a"}])), "invalid_topology"),
        ("directory-key-odd-hex", with_entries(json!([{"key": {"hex": "abc"}, "node": "a"}])), "invalid_topology"),
        (
            "directory-key-u64-2p64",
            with_entries(json!([{"key": {"u64": "18446744073709551616"}, "node": "a"}])),
            "invalid_topology",
        ),
        ("directory-key-utf16", with_entries(json!([{"key": {"utf16": [104]}, "node": "a"}])), "invalid_topology"),
        (
            "directory-entry-unknown-field",
            with_entries(json!([{"key": {"utf8": "k"}, "node": "a", "weight": 1}])),
            "invalid_topology",
        ),
        ("directory-entry-missing-node", with_entries(json!([{"key": {"utf8": "k"}}])), "invalid_topology"),
        ("directory-tagged-entry-never-matches", tagged, "invalid_topology"),
        (
            "vbucket-override-out-of-range",
            base(json!({"type": "vbucket", "vbuckets": 4, "overrides": [{"key": {"utf8": "k"}, "vbucket": 4}]})),
            "invalid_topology",
        ),
        (
            "vbucket-override-duplicate",
            base(
                json!({"type": "vbucket", "vbuckets": 4, "overrides": [{"key": {"u64": 3}, "vbucket": 1}, {"key": {"u64": 3}, "vbucket": 2}]}),
            ),
            "invalid_topology",
        ),
        (
            "vbucket-override-missing-vbucket",
            base(json!({"type": "vbucket", "vbuckets": 4, "overrides": [{"key": {"u64": 3}}]})),
            "invalid_topology",
        ),
        (
            "vbucket-override-node-field",
            base(json!({"type": "vbucket", "vbuckets": 4, "overrides": [{"key": {"u64": 3}, "node": "a"}]})),
            "invalid_topology",
        ),
        ("vbucket-override-tagged-never-matches", tagged_override, "invalid_topology"),
    ];
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(file, &format!("reject/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
}

/// `apply` cases: the operations on the topologies above, and their rejections.
pub(crate) fn call_cases(file: &mut VectorFile) {
    let directory_topology = Topology::from_value(&doc(
        1,
        nodes(&["d0", "d1", "d2", "d3"]),
        directory(&jump_entries(), json!({"type": "jump"})),
    ))
    .expect("directory topology");
    let overrides_topology = Topology::from_value(&overrides_doc()).expect("overrides topology");
    let cases: Vec<(&str, &str, &Topology, Value)> = vec![
        (
            "directory-set-new",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"utf8": "user:2"}, "node": "d3"}),
        ),
        (
            "directory-set-replace",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"utf8": "user:1"}, "node": "d0"}),
        ),
        (
            "directory-set-u64",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"u64": "9007199254740993"}, "node": "d1"}),
        ),
        (
            "directory-set-hex",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"hex": "00"}, "node": "d2"}),
        ),
        (
            "directory-remove",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_remove", "key": {"u64": 42}}),
        ),
        (
            "directory-remove-empty-key",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_remove", "key": {"utf8": ""}}),
        ),
        (
            "vbucket-override-new",
            "vbucket-overrides-16",
            &overrides_topology,
            json!({"op": "vbucket_override", "key": {"u64": 6}, "vbucket": 3}),
        ),
        (
            "vbucket-override-replace",
            "vbucket-overrides-16",
            &overrides_topology,
            json!({"op": "vbucket_override", "key": {"u64": 5}, "vbucket": 10}),
        ),
        (
            "vbucket-override-remove",
            "vbucket-overrides-16",
            &overrides_topology,
            json!({"op": "vbucket_override_remove", "key": {"utf8": "user:1"}}),
        ),
    ];
    for (label, id, topology, operation) in cases {
        let result = ops::apply(topology, &operation).expect("apply");
        file.case(
            &format!("apply/{label}"),
            json!({"op": "apply", "topology": id, "operation": operation, "expect": {"result": result}}),
        );
    }
    let rejections: Vec<(&str, &str, &Topology, Value)> = vec![
        (
            "directory-set-unknown-node",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"utf8": "k"}, "node": "zz"}),
        ),
        (
            "directory-set-no-node",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"utf8": "k"}}),
        ),
        (
            "directory-set-bad-key",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": "k", "node": "d0"}),
        ),
        (
            "directory-set-extra-field",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_set", "key": {"utf8": "k"}, "node": "d0", "vbucket": 1}),
        ),
        (
            "directory-remove-unlisted",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_remove", "key": {"utf8": "user:2"}}),
        ),
        (
            "directory-remove-other-kind",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "directory_remove", "key": {"utf8": "42"}}),
        ),
        (
            "directory-set-on-vbucket",
            "vbucket-overrides-16",
            &overrides_topology,
            json!({"op": "directory_set", "key": {"utf8": "k"}, "node": "o0"}),
        ),
        (
            "vbucket-override-out-of-range",
            "vbucket-overrides-16",
            &overrides_topology,
            json!({"op": "vbucket_override", "key": {"utf8": "k"}, "vbucket": 16}),
        ),
        (
            "vbucket-override-remove-unlisted",
            "vbucket-overrides-16",
            &overrides_topology,
            json!({"op": "vbucket_override_remove", "key": {"u64": 21}}),
        ),
        (
            "vbucket-override-on-directory",
            "directory-jump-4",
            &directory_topology,
            json!({"op": "vbucket_override", "key": {"utf8": "k"}, "vbucket": 0}),
        ),
    ];
    for (label, id, topology, operation) in rejections {
        let outcome = ops::apply(topology, &operation).map(drop);
        expect_error(
            file,
            &format!("apply/reject-{label}"),
            json!({"op": "apply", "topology": id, "operation": operation}),
            "invalid_argument",
            outcome,
        );
    }
    // Removing a node an entry names gives an invalid document.
    let outcome = ops::apply(&directory_topology, &json!({"op": "remove_node", "id": "d1"})).map(drop);
    expect_error(
        file,
        "apply/reject-remove-node-named-by-entry",
        json!({"op": "apply", "topology": "directory-jump-4", "operation": {"op": "remove_node", "id": "d1"}}),
        "invalid_topology",
        outcome,
    );
    let result = ops::apply(&directory_topology, &json!({"op": "add_node", "node": {"id": "d4"}})).expect("add_node");
    file.case("apply/add-node", json!({"op": "apply", "topology": "directory-jump-4", "operation": {"op": "add_node", "node": {"id": "d4"}}, "expect": {"result": result}}));
}
