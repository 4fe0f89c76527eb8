//! `multilevel.json`: partitions → groups → nodes. Routing cases over round-robin and
//! explicit maps, rendezvous (weighted) and jump within groups; hand-stated routes of
//! integer keys under identity hashing with one-node groups (partition = key % P, node
//! = the map's group's only node); rejected documents; and
//! `apply` cases of `multilevel_remap` and `multilevel_group_set`.

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use super::{doc, expect_error, nodes, routing_cases, u64_key, VectorFile};

fn group(id: &str, members: &[&str]) -> Value {
    json!({"id": id, "nodes": members})
}

/// Twelve nodes in four groups of three, 4096 partitions, round-robin map.
fn grid_doc(within: &str) -> Value {
    let ids: Vec<String> = (0..12).map(|i| format!("m{i:02}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let groups: Vec<Value> = (0..4).map(|g| group(&format!("rack-{g}"), &refs[g * 3..g * 3 + 3])).collect();
    doc(1, nodes(&refs), json!({"type": "multilevel", "groups": groups, "within_group": within}))
}

/// Eight partitions over three one-node groups and a spare node, explicit map; integer
/// keys are their own hash, so key `k` is in partition `k % 8` on its group's node.
const SMALL_MAP: [&str; 8] = ["east", "west", "west", "north", "east", "north", "west", "east"];

fn small_doc() -> Value {
    let mut document = doc(
        2,
        nodes(&["e", "w", "n", "spare"]),
        json!({"type": "multilevel", "partitions": 8, "map": SMALL_MAP,
            "groups": [group("east", &["e"]), group("west", &["w"]), group("north", &["n"])]}),
    );
    document["hashing"] = json!({"integers": "identity"});
    document
}

/// Sixteen partitions, an explicit map over groups of different sizes, jump within.
fn jump_doc() -> Value {
    let map: Vec<&str> = (0..16).map(|p| ["small", "large", "large"][p % 3]).collect();
    doc(
        3,
        nodes(&["j0", "j1", "j2", "j3", "j4", "j5"]),
        json!({"type": "multilevel", "partitions": 16, "map": map, "within_group": "jump",
            "groups": [group("small", &["j5", "j0"]), group("large", &["j1", "j2", "j3", "j4"])]}),
    )
}

/// Weighted rendezvous inside two groups, 64 partitions, round-robin map, one spare node.
fn weighted_doc() -> Value {
    let weighted = json!([{"id": "h0", "weight": 4}, {"id": "h1"}, {"id": "h2", "weight": 0.5}, {"id": "h3", "weight": 2}, {"id": "h4"}, {"id": "h5", "weight": 3}]);
    doc(
        4,
        weighted,
        json!({"type": "multilevel", "partitions": 64, "groups": [group("a", &["h0", "h1", "h2"]), group("b", &["h3", "h4"])]}),
    )
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "multilevel",
        "Multi-level maps: key -> partition (hash % P) -> group (map or round-robin) -> node inside the group (rendezvous or jump over the partition's SplitMix64 hash); hand-stated integer routes, weighted groups, rejected documents, remap and group operations.",
        "generator; `stated` cases are read off the map by hand (identity hashing, one-node groups) and checked against the core",
    );
    for within in ["rendezvous", "jump"] {
        let id = format!("multilevel-grid-{within}");
        let router = file.topology(&id, grid_doc(within));
        routing_cases(&mut file, &id, &router);
    }

    let id = "multilevel-small-8";
    let router = file.topology(id, small_doc());
    routing_cases(&mut file, id, &router);
    let node_of = |group: &str| match group {
        "east" => "e",
        "west" => "w",
        _ => "n",
    };
    for key in (0u64..20).chain([u64::MAX, u64::MAX - 3, 1 << 53]) {
        let partition = key % 8;
        let node = node_of(SMALL_MAP[partition as usize]);
        assert_eq!(router.route(key).expect("route"), partition as u32, "{key}");
        assert_eq!(router.node(key).expect("node"), node, "{key}");
        file.case(
            &format!("{id}/stated/route-{key}"),
            json!({"op": "route", "topology": id, "key": u64_key(key), "expect": {"shard": partition, "node": node}}),
        );
    }
    // One-node groups hold one replica: asking for two fails for every key.
    let outcome = router.replicas(0u64, 2).map(drop);
    expect_error(
        &mut file,
        &format!("{id}/replicas-beyond-group"),
        json!({"op": "replicas", "topology": id, "key": u64_key(0), "count": 2}),
        "invalid_argument",
        outcome,
    );

    let router = file.topology("multilevel-jump-16", jump_doc());
    routing_cases(&mut file, "multilevel-jump-16", &router);

    let router = file.topology("multilevel-weighted-64", weighted_doc());
    routing_cases(&mut file, "multilevel-weighted-64", &router);

    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let base = |strategy: Value| doc(1, nodes(&["a", "b", "c", "d"]), strategy);
    let groups = json!([group("g0", &["a", "b"]), group("g1", &["c"])]);
    let ml = |extra: Value| {
        let mut strategy = json!({"type": "multilevel", "groups": groups});
        for (field, value) in extra.as_object().expect("object") {
            strategy[field] = value.clone();
        }
        base(strategy)
    };
    let mut weighted_jump = ml(json!({"within_group": "jump"}));
    weighted_jump["nodes"][3]["weight"] = json!(2);
    let bad: Vec<(&str, Value, &str)> = vec![
        ("no-groups", base(json!({"type": "multilevel"})), "invalid_topology"),
        ("groups-empty", ml(json!({"groups": []})), "invalid_topology"),
        ("groups-object", ml(json!({"groups": {"g0": ["a"]}})), "invalid_topology"),
        ("group-no-nodes", ml(json!({"groups": [{"id": "g0", "nodes": []}]})), "invalid_topology"),
        ("group-missing-id", ml(json!({"groups": [{"nodes": ["a"]}]})), "invalid_topology"),
        ("group-empty-id", ml(json!({"groups": [{"id": "", "nodes": ["a"]}]})), "invalid_topology"),
        ("group-duplicate-id", ml(json!({"groups": [group("g", &["a"]), group("g", &["b"])]})), "invalid_topology"),
        ("group-unknown-node", ml(json!({"groups": [group("g", &["z"])]})), "invalid_topology"),
        ("group-repeated-node", ml(json!({"groups": [group("g", &["a", "a"])]})), "invalid_topology"),
        (
            "node-in-two-groups",
            ml(json!({"groups": [group("g", &["a"]), group("h", &["b", "a"])]})),
            "invalid_topology",
        ),
        ("group-unknown-field", ml(json!({"groups": [{"id": "g", "nodes": ["a"], "weight": 2}]})), "invalid_topology"),
        ("partitions-zero", ml(json!({"partitions": 0})), "invalid_topology"),
        ("partitions-over-limit", ml(json!({"partitions": 2_097_152})), "limit_exceeded"),
        ("map-short", ml(json!({"partitions": 3, "map": ["g0", "g1"]})), "invalid_topology"),
        ("map-unknown-group", ml(json!({"partitions": 2, "map": ["g0", "g9"]})), "invalid_topology"),
        ("map-node-id", ml(json!({"partitions": 2, "map": ["g0", "a"]})), "invalid_topology"),
        ("within-unknown", ml(json!({"within_group": "ring"})), "invalid_topology"),
        ("jump-weighted", weighted_jump, "invalid_topology"),
    ];
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(file, &format!("reject/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
}

/// `apply` cases: remap and group edits on the topologies above, and their rejections.
pub(crate) fn call_cases(file: &mut VectorFile) {
    let small = Topology::from_value(&small_doc()).expect("small");
    let weighted = Topology::from_value(&weighted_doc()).expect("weighted");
    let jump = Topology::from_value(&jump_doc()).expect("jump");
    let cases: Vec<(&str, &str, &Topology, Value)> = vec![
        (
            "remap-explicit",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_remap", "partition": 3, "group": "east"}),
        ),
        (
            "remap-derived",
            "multilevel-weighted-64",
            &weighted,
            json!({"op": "multilevel_remap", "partition": 63, "group": "a"}),
        ),
        (
            "group-grow-weighted",
            "multilevel-weighted-64",
            &weighted,
            json!({"op": "multilevel_group_set", "group": "b", "nodes": ["h3", "h4", "h5"]}),
        ),
        (
            "group-grow",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["w", "spare"]}),
        ),
        (
            "group-create",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "south", "nodes": ["spare"]}),
        ),
        (
            "group-shrink-jump",
            "multilevel-jump-16",
            &jump,
            json!({"op": "multilevel_group_set", "group": "large", "nodes": ["j1", "j2", "j3"]}),
        ),
        (
            "group-reorder-jump",
            "multilevel-jump-16",
            &jump,
            json!({"op": "multilevel_group_set", "group": "small", "nodes": ["j0", "j5"]}),
        ),
        ("add-spare-node", "multilevel-small-8", &small, json!({"op": "add_node", "node": {"id": "spare-2"}})),
    ];
    for (label, id, topology, operation) in cases {
        let result = ops::apply(topology, &operation).expect("apply");
        file.case(
            &format!("apply/{label}"),
            json!({"op": "apply", "topology": id, "operation": operation, "expect": {"result": result}}),
        );
    }
    // Create then remove: the removal applies to the document the creation returned.
    let created = ops::apply(&small, &json!({"op": "multilevel_group_set", "group": "south", "nodes": ["spare"]}))
        .expect("create");
    let created_text = created["topology"].to_string();
    let created = Topology::from_json(&created_text).expect("created");
    let operation = json!({"op": "multilevel_group_set", "group": "south", "nodes": []});
    let result = ops::apply(&created, &operation).expect("remove");
    file.case(
        "apply/group-remove-empty",
        json!({"op": "apply", "topology_json": created_text, "operation": operation, "expect": {"result": result}}),
    );

    let rejections: Vec<(&str, &str, &Topology, Value, &str)> = vec![
        (
            "remap-partition-out-of-range",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_remap", "partition": 8, "group": "east"}),
            "invalid_argument",
        ),
        (
            "remap-unknown-group",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_remap", "partition": 0, "group": "south"}),
            "invalid_argument",
        ),
        (
            "remap-missing-partition",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_remap", "group": "east"}),
            "invalid_argument",
        ),
        (
            "group-node-in-other-group",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["w", "e"]}),
            "invalid_argument",
        ),
        (
            "group-unknown-node",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["x"]}),
            "invalid_argument",
        ),
        (
            "group-repeated-node",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["w", "w"]}),
            "invalid_argument",
        ),
        (
            "group-remove-holding",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "west", "nodes": []}),
            "invalid_argument",
        ),
        (
            "group-remove-unknown",
            "multilevel-small-8",
            &small,
            json!({"op": "multilevel_group_set", "group": "south", "nodes": []}),
            "invalid_argument",
        ),
        (
            "remove-grouped-node",
            "multilevel-small-8",
            &small,
            json!({"op": "remove_node", "id": "n"}),
            "invalid_topology",
        ),
    ];
    for (label, id, topology, operation, code) in rejections {
        let outcome = ops::apply(topology, &operation).map(drop);
        let case = json!({"op": "apply", "topology": id, "operation": operation});
        expect_error(file, &format!("apply/reject-{label}"), case, code, outcome);
    }
    let raw = doc(1, nodes(&["a"]), json!({"type": "jump"})).to_string();
    let operation = json!({"op": "multilevel_remap", "partition": 0, "group": "east"});
    let outcome = ops::apply(&Topology::from_json(&raw).expect("jump"), &operation).map(drop);
    let case = json!({"op": "apply", "topology_json": raw, "operation": operation});
    expect_error(file, "apply/reject-remap-on-jump", case, "invalid_argument", outcome);
}
