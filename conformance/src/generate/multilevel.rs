//! `multilevel.json`: partitions → groups → nodes. Routing cases over round-robin and
//! explicit maps, rendezvous (weighted) and jump within groups; hand-stated routes of
//! integer keys under identity hashing with one-node groups (partition = key % P, node
//! = the map's group's only node); rejected documents; and
//! `apply` cases of `multilevel_remap` and `multilevel_group_set`.

use serde_json::{json, Value};
use shardroute::ops;

use super::cases::{applied, apply_refused, expect_error, routed, stated_route, On, Refusals};
use super::keys::u64_key;
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, merged, Document};

fn group(id: &str, members: &[&str]) -> Value {
    json!({"id": id, "nodes": members})
}

/// Twelve nodes in four groups of three, 4096 partitions, round-robin map.
fn grid_doc(within: &str) -> Value {
    let ids: Vec<String> = (0..12).map(|i| format!("m{i:02}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let groups: Vec<Value> = (0..4).map(|g| group(&format!("rack-{g}"), &refs[g * 3..g * 3 + 3])).collect();
    doc(&ids[..], json!({"type": "multilevel", "groups": groups, "within_group": within}))
}

/// Eight partitions over three one-node groups and a spare node, explicit map; integer
/// keys are their own hash, so key `k` is in partition `k % 8` on its group's node.
const SMALL_MAP: [&str; 8] = ["east", "west", "west", "north", "east", "north", "west", "east"];

fn small_doc() -> Value {
    let strategy = json!({"type": "multilevel", "partitions": 8, "map": SMALL_MAP,
        "groups": [group("east", &["e"]), group("west", &["w"]), group("north", &["n"])]});
    doc(&["e", "w", "n", "spare"], strategy).epoch(2).hashing(identity())
}

/// Sixteen partitions, an explicit map over groups of different sizes, jump within.
fn jump_doc() -> Value {
    let map: Vec<&str> = (0..16).map(|p| ["small", "large", "large"][p % 3]).collect();
    let strategy = json!({"type": "multilevel", "partitions": 16, "map": map, "within_group": "jump",
        "groups": [group("small", &["j5", "j0"]), group("large", &["j1", "j2", "j3", "j4"])]});
    doc(&["j0", "j1", "j2", "j3", "j4", "j5"], strategy).epoch(3)
}

/// Weighted rendezvous inside two groups, 64 partitions, round-robin map, one spare node.
fn weighted_doc() -> Value {
    let weighted = json!([{"id": "h0", "weight": 4}, {"id": "h1"}, {"id": "h2", "weight": 0.5}, {"id": "h3", "weight": 2}, {"id": "h4"}, {"id": "h5", "weight": 3}]);
    let groups = [group("a", &["h0", "h1", "h2"]), group("b", &["h3", "h4"])];
    doc(weighted, json!({"type": "multilevel", "partitions": 64, "groups": groups})).epoch(4)
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "multilevel",
        "Multi-level maps: key -> partition (hash % P) -> group (map or round-robin) -> node inside the group (rendezvous or jump over the partition's SplitMix64 hash); hand-stated integer routes, weighted groups, rejected documents, remap and group operations.",
        "generator; `stated` cases are read off the map by hand (identity hashing, one-node groups) and checked against the core",
    );
    for within in ["rendezvous", "jump"] {
        routed(&mut file, &format!("multilevel-grid-{within}"), grid_doc(within));
    }

    let id = "multilevel-small-8";
    let router = routed(&mut file, id, small_doc());
    let node_of = |group: &str| match group {
        "east" => "e",
        "west" => "w",
        _ => "n",
    };
    for key in (0u64..20).chain([u64::MAX, u64::MAX - 3, 1 << 53]) {
        let partition = (key % 8) as u32;
        let node = node_of(SMALL_MAP[partition as usize]);
        stated_route(&mut file, id, &router, &format!("stated/route-{key}"), u64_key(key), (partition, node));
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

    routed(&mut file, "multilevel-jump-16", jump_doc());
    routed(&mut file, "multilevel-weighted-64", weighted_doc());

    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let groups = json!([group("g0", &["a", "b"]), group("g1", &["c"])]);
    let mut bad = Refusals::of(doc(&["a", "b", "c", "d"], json!({"type": "multilevel", "groups": groups})));
    bad.strategy("no-groups", "invalid_topology", json!({"type": "multilevel"}));
    for (label, fields, code) in [
        ("groups-empty", json!({"groups": []}), "invalid_topology"),
        ("groups-object", json!({"groups": {"g0": ["a"]}}), "invalid_topology"),
        ("group-no-nodes", json!({"groups": [{"id": "g0", "nodes": []}]}), "invalid_topology"),
        ("group-missing-id", json!({"groups": [{"nodes": ["a"]}]}), "invalid_topology"),
        ("group-empty-id", json!({"groups": [{"id": "", "nodes": ["a"]}]}), "invalid_topology"),
        ("group-duplicate-id", json!({"groups": [group("g", &["a"]), group("g", &["b"])]}), "invalid_topology"),
        ("group-unknown-node", json!({"groups": [group("g", &["z"])]}), "invalid_topology"),
        ("group-repeated-node", json!({"groups": [group("g", &["a", "a"])]}), "invalid_topology"),
        ("node-in-two-groups", json!({"groups": [group("g", &["a"]), group("h", &["b", "a"])]}), "invalid_topology"),
        ("group-unknown-field", json!({"groups": [{"id": "g", "nodes": ["a"], "weight": 2}]}), "invalid_topology"),
        ("partitions-zero", json!({"partitions": 0}), "invalid_topology"),
        ("partitions-over-limit", json!({"partitions": 2_097_152}), "limit_exceeded"),
        ("map-short", json!({"partitions": 3, "map": ["g0", "g1"]}), "invalid_topology"),
        ("map-unknown-group", json!({"partitions": 2, "map": ["g0", "g9"]}), "invalid_topology"),
        ("map-node-id", json!({"partitions": 2, "map": ["g0", "a"]}), "invalid_topology"),
        ("within-unknown", json!({"within_group": "ring"}), "invalid_topology"),
    ] {
        bad.edit(label, code, |d| d["strategy"] = merged(d["strategy"].take(), fields));
    }
    bad.edit("jump-weighted", "invalid_topology", |d| {
        d["strategy"]["within_group"] = json!("jump");
        d["nodes"][3]["weight"] = json!(2);
    });
    bad.write(file, "reject/");
}

/// `apply` cases: remap and group edits on the topologies above, and their rejections.
fn call_cases(file: &mut VectorFile) {
    let (small, weighted, jump) = ("multilevel-small-8", "multilevel-weighted-64", "multilevel-jump-16");
    for (label, id, operation) in [
        ("remap-explicit", small, json!({"op": "multilevel_remap", "partition": 3, "group": "east"})),
        ("remap-derived", weighted, json!({"op": "multilevel_remap", "partition": 63, "group": "a"})),
        (
            "group-grow-weighted",
            weighted,
            json!({"op": "multilevel_group_set", "group": "b", "nodes": ["h3", "h4", "h5"]}),
        ),
        ("group-grow", small, json!({"op": "multilevel_group_set", "group": "west", "nodes": ["w", "spare"]})),
        ("group-create", small, json!({"op": "multilevel_group_set", "group": "south", "nodes": ["spare"]})),
        (
            "group-shrink-jump",
            jump,
            json!({"op": "multilevel_group_set", "group": "large", "nodes": ["j1", "j2", "j3"]}),
        ),
        ("group-reorder-jump", jump, json!({"op": "multilevel_group_set", "group": "small", "nodes": ["j0", "j5"]})),
        ("add-spare-node", small, json!({"op": "add_node", "node": {"id": "spare-2"}})),
    ] {
        applied(file, &format!("apply/{label}"), On::Topology(id), operation);
    }
    // Create then remove: the removal applies to the document the creation returned.
    let create = json!({"op": "multilevel_group_set", "group": "south", "nodes": ["spare"]});
    let created = ops::apply(&file.parsed(small), &create).expect("create")["topology"].to_string();
    let remove = json!({"op": "multilevel_group_set", "group": "south", "nodes": []});
    applied(file, "apply/group-remove-empty", On::Text(&created), remove);

    for (label, operation, code) in [
        (
            "remap-partition-out-of-range",
            json!({"op": "multilevel_remap", "partition": 8, "group": "east"}),
            "invalid_argument",
        ),
        (
            "remap-unknown-group",
            json!({"op": "multilevel_remap", "partition": 0, "group": "south"}),
            "invalid_argument",
        ),
        ("remap-missing-partition", json!({"op": "multilevel_remap", "group": "east"}), "invalid_argument"),
        (
            "group-node-in-other-group",
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["w", "e"]}),
            "invalid_argument",
        ),
        (
            "group-unknown-node",
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["x"]}),
            "invalid_argument",
        ),
        (
            "group-repeated-node",
            json!({"op": "multilevel_group_set", "group": "west", "nodes": ["w", "w"]}),
            "invalid_argument",
        ),
        (
            "group-remove-holding",
            json!({"op": "multilevel_group_set", "group": "west", "nodes": []}),
            "invalid_argument",
        ),
        (
            "group-remove-unknown",
            json!({"op": "multilevel_group_set", "group": "south", "nodes": []}),
            "invalid_argument",
        ),
        ("remove-grouped-node", json!({"op": "remove_node", "id": "n"}), "invalid_topology"),
    ] {
        apply_refused(file, &format!("apply/reject-{label}"), On::Topology(small), operation, code);
    }
    let raw = doc(&["a"], json!({"type": "jump"})).to_string();
    let operation = json!({"op": "multilevel_remap", "partition": 0, "group": "east"});
    apply_refused(file, "apply/reject-remap-on-jump", On::Text(&raw), operation, "invalid_argument");
}
