//! Multi-level maps: routing equals a naive three-step oracle (remainder, table,
//! rendezvous or jump over the group), partitions are balanced, and the operations
//! move exactly the partitions they report.

mod common;

use common::doc;
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::strategy::partitioned::multilevel::partition_hash;
use shardroute::{ops, Router, Topology};

/// SplitMix64 written step by step as in Vigna's `splitmix64.c`: the state advances
/// by the golden gamma, then the output is mixed.
fn splitmix64_stream(count: usize) -> Vec<u64> {
    let mut state: u64 = 0;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

#[test]
fn partition_hash_is_splitmix64() {
    // The published first outputs of SplitMix64 with state 0.
    let published = [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F, 0xF88B_B8A8_724C_81EC];
    for (partition, expected) in published.iter().enumerate() {
        assert_eq!(partition_hash(partition as u32), *expected);
    }
    for (partition, expected) in splitmix64_stream(1000).iter().enumerate() {
        assert_eq!(partition_hash(partition as u32), *expected);
    }
}

/// The naive oracle of a multilevel node: the group from the map (or round-robin),
/// then the winner among the group's nodes by the rendezvous strategy itself (a
/// rendezvous router over just the group, asked for the integer key
/// `partition_hash(p)` under identity hashing) or by the bare jump function.
fn oracle_replicas(
    groups: &[Vec<String>],
    map: Option<&[usize]>,
    jump: bool,
    partition: u32,
    count: u32,
) -> Vec<String> {
    let group = match map {
        Some(map) => map[partition as usize],
        None => partition as usize % groups.len(),
    };
    let members = &groups[group];
    let hash = partition_hash(partition);
    if jump {
        let first = shardroute::jump(hash, members.len() as u32).unwrap() as usize;
        (0..count as usize).map(|step| members[(first + step) % members.len()].clone()).collect()
    } else {
        let router =
            doc(members).strategy(json!({"type": "rendezvous"})).hashing(json!({"integers": "identity"})).router();
        router.replicas(hash, count).unwrap().into_iter().map(String::from).collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn routing_matches_the_three_step_oracle(
        partitions in 1u32..64,
        sizes in proptest::collection::vec(1usize..4, 1..5),
        map_seed in proptest::collection::vec(any::<usize>(), 64),
        explicit in any::<bool>(),
        jump in any::<bool>(),
        keys in proptest::collection::vec(any::<Vec<u8>>(), 1..30),
    ) {
        let mut next = 0;
        let groups: Vec<Vec<String>> = sizes.iter().map(|&size| {
            let members = (next..next + size).map(|i| format!("n{i}")).collect();
            next += size;
            members
        }).collect();
        let node_count = next + 1; // one spare node in no group
        let map: Option<Vec<usize>> = explicit.then(|| (0..partitions as usize).map(|p| map_seed[p] % groups.len()).collect());
        let mut strategy = json!({"type": "multilevel", "partitions": partitions, "within_group": if jump { "jump" } else { "rendezvous" },
            "groups": groups.iter().enumerate().map(|(g, members)| json!({"id": format!("g{g}"), "nodes": members})).collect::<Vec<_>>()});
        if let Some(map) = &map {
            strategy["map"] = json!(map.iter().map(|g| format!("g{g}")).collect::<Vec<_>>());
        }
        let router = doc(node_count).strategy(strategy).router();
        let used: Vec<usize> = (0..partitions as usize).map(|p| map.as_ref().map_or(p % groups.len(), |m| m[p])).collect();
        let smallest = used.iter().map(|&g| groups[g].len()).min().unwrap() as u32;
        prop_assert_eq!(router.max_replica_count(), smallest);
        for key in &keys {
            let partition = (router.hash(key.as_slice()) % u64::from(partitions)) as u32;
            prop_assert_eq!(router.route(key.as_slice()).unwrap(), partition);
            let size = groups[used[partition as usize]].len() as u32;
            let expected = oracle_replicas(&groups, map.as_deref(), jump, partition, size);
            prop_assert_eq!(router.node(key.as_slice()).unwrap(), expected[0].as_str());
            prop_assert_eq!(router.replicas(key.as_slice(), size).unwrap(), expected.iter().map(String::as_str).collect::<Vec<_>>());
            if size < node_count as u32 {
                prop_assert_eq!(router.replicas(key.as_slice(), size + 1).unwrap_err().code(), "invalid_argument");
            }
        }
        let topology = router.topology();
        prop_assert_eq!(&Topology::from_value(&topology.to_value()).unwrap(), topology);
    }
}

#[test]
fn partitions_spread_evenly_over_groups_and_nodes() {
    let groups: Vec<Value> = (0..4)
        .map(|g| json!({"id": format!("g{g}"), "nodes": (0..3).map(|i| format!("n{}", g * 3 + i)).collect::<Vec<_>>()}))
        .collect();
    for within in ["rendezvous", "jump"] {
        let grid = doc(12)
            .strategy(json!({"type": "multilevel", "partitions": 4096, "groups": groups, "within_group": within}));
        let router = grid.clone().router();
        let mut partitions_per_node = [0u32; 12];
        let mut keys_per_node = [0u32; 12];
        for i in 0..60_000u64 {
            keys_per_node[router.node_index(i).unwrap() as usize] += 1;
        }
        // With identity hashing the integer p is in partition p.
        let identity = grid.hashing(json!({"integers": "identity"})).router();
        for p in 0..4096u64 {
            assert_eq!(identity.route(p).unwrap(), p as u32);
            partitions_per_node[identity.node_index(p).unwrap() as usize] += 1;
        }
        // 4096 / 12 = 341.3 partitions per node; sampling noise is about 18.
        for count in partitions_per_node {
            assert!((270..=410).contains(&count), "{within}: partitions per node {partitions_per_node:?}");
        }
        for count in keys_per_node {
            assert!((4000..=6000).contains(&count), "{within}: keys per node {keys_per_node:?}");
        }
    }
}

/// The owner of every partition, read through identity-hashed integer keys.
fn partition_owners(topology: &Topology) -> Vec<String> {
    let mut topology = topology.clone();
    topology.hashing = shardroute::KeyHashing::from_json(r#"{"integers": "identity"}"#).unwrap();
    let router = Router::new(topology).unwrap();
    (0..router.shard_range().end).map(|p| router.node(u64::from(p)).unwrap().to_string()).collect()
}

fn moves_of(report: &Value) -> Vec<(u32, String, String)> {
    report["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m[0].as_u64().unwrap() as u32, m[1].as_str().unwrap().into(), m[2].as_str().unwrap().into()))
        .collect()
}

fn observed_moves(before: &[String], after: &[String]) -> Vec<(u32, String, String)> {
    before
        .iter()
        .zip(after)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(p, (a, b))| (p as u32, a.clone(), b.clone()))
        .collect()
}

fn two_groups(within: &str) -> Topology {
    doc(9)
        .strategy(json!({"type": "multilevel", "partitions": 512, "within_group": within, "groups": [
            {"id": "g0", "nodes": ["n0", "n1", "n2"]},
            {"id": "g1", "nodes": ["n3", "n4", "n5"]},
        ]}))
        .topology()
}

#[test]
fn a_group_change_moves_only_that_groups_partitions_and_reports_them() {
    for within in ["rendezvous", "jump"] {
        let start = two_groups(within);
        let before = partition_owners(&start);
        // Add a node to g1 (appended: jump moves partitions only onto it, too).
        let grown = ops::apply(
            &start,
            &json!({"op": "multilevel_group_set", "group": "g1", "nodes": ["n3", "n4", "n5", "n6"]}),
        )
        .unwrap();
        let after = partition_owners(&Topology::from_value(&grown["topology"]).unwrap());
        let moves = observed_moves(&before, &after);
        assert_eq!(moves_of(&grown), moves, "{within}: the report is the exact diff");
        assert!(
            moves.iter().all(|(p, _, to)| p % 2 == 1 && to == "n6"),
            "{within}: only g1's partitions move, onto n6"
        );
        let g1_partitions = 256.0;
        let share = moves.len() as f64 / g1_partitions;
        assert!((0.15..0.35).contains(&share), "{within}: {} of 256 moved", moves.len());
        assert_eq!(
            (&grown["created"], &grown["removed"], &grown["group"]),
            (&json!(false), &json!(false), &json!("g1"))
        );
        if within == "rendezvous" {
            // Remove a middle node: only its partitions move, each within the group.
            let shrunk =
                ops::apply(&start, &json!({"op": "multilevel_group_set", "group": "g0", "nodes": ["n0", "n2"]}))
                    .unwrap();
            let after = partition_owners(&Topology::from_value(&shrunk["topology"]).unwrap());
            let moves = observed_moves(&before, &after);
            assert_eq!(moves_of(&shrunk), moves);
            let owned_by_n1 = before.iter().filter(|owner| *owner == "n1").count();
            assert_eq!(moves.len(), owned_by_n1);
            assert!(moves.iter().all(|(p, from, to)| p % 2 == 0 && from == "n1" && (to == "n0" || to == "n2")));
        }
    }
}

#[test]
fn remapping_a_partition_moves_only_its_keys() {
    let start = two_groups("rendezvous");
    let before_router = Router::new(start.clone()).unwrap();
    let key = "user:77";
    let partition = before_router.route(key).unwrap();
    let (from_group, to_group) = if partition.is_multiple_of(2) { ("g0", "g1") } else { ("g1", "g0") };
    let result =
        ops::apply(&start, &json!({"op": "multilevel_remap", "partition": partition, "group": to_group})).unwrap();
    assert_eq!(
        (&result["partition"], &result["from_group"], &result["to_group"]),
        (&json!(partition), &json!(from_group), &json!(to_group))
    );
    let after_router = Router::from_value(&result["topology"]).unwrap();
    assert_eq!(result["from"], json!(before_router.node(key).unwrap()));
    assert_eq!(result["to"], json!(after_router.node(key).unwrap()));
    assert_ne!(result["from"], result["to"]); // the groups are disjoint
    for i in 0..20_000 {
        let key = format!("k{i}");
        let (a, b) = (before_router.node(key.as_str()).unwrap(), after_router.node(key.as_str()).unwrap());
        assert!(a == b || before_router.route(key.as_str()).unwrap() == partition, "{key} moved from {a} to {b}");
    }
    // The derived map is written out, with only this partition changed.
    let map = result["topology"]["strategy"]["map"].as_array().unwrap();
    assert_eq!(map.len(), 512);
    for (p, group) in map.iter().enumerate() {
        let expected = if p as u32 == partition { to_group.to_string() } else { format!("g{}", p % 2) };
        assert_eq!(group, &json!(expected));
    }
}

#[test]
fn creating_and_removing_groups_moves_nothing() {
    let start = two_groups("rendezvous");
    let before = partition_owners(&start);
    let created =
        ops::apply(&start, &json!({"op": "multilevel_group_set", "group": "g2", "nodes": ["n6", "n7"]})).unwrap();
    assert_eq!((&created["created"], &created["moves"]), (&json!(true), &json!([])));
    let with_g2 = Topology::from_value(&created["topology"]).unwrap();
    assert_eq!(partition_owners(&with_g2), before, "a new group holds nothing until partitions are remapped to it");
    // g2 holds no partition, so it can be removed again; g0 cannot.
    let removed = ops::apply(&with_g2, &json!({"op": "multilevel_group_set", "group": "g2", "nodes": []})).unwrap();
    assert_eq!(removed["removed"], json!(true));
    assert_eq!(partition_owners(&Topology::from_value(&removed["topology"]).unwrap()), before);
    let err = ops::apply(&with_g2, &json!({"op": "multilevel_group_set", "group": "g0", "nodes": []})).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().contains("still holds 256 partition(s)"), "{err}");
    // With a derived map and more groups than partitions, the spare group sits past the
    // last partition and removing it keeps the map derived.
    let few = doc(3)
        .strategy(json!({"type": "multilevel", "partitions": 2, "groups": [{"id": "a", "nodes": ["n0"]}, {"id": "b", "nodes": ["n1"]}, {"id": "c", "nodes": ["n2"]}]}))
        .topology();
    let removed = ops::apply(&few, &json!({"op": "multilevel_group_set", "group": "c", "nodes": []})).unwrap();
    assert!(removed["topology"]["strategy"].get("map").is_none());
    assert_eq!(partition_owners(&Topology::from_value(&removed["topology"]).unwrap()), partition_owners(&few));
}

#[test]
fn bad_documents_name_the_field() {
    let check = |strategy: Value, code: &str, start: &str| {
        let err = doc(4).strategy(strategy.clone()).load().unwrap_err();
        assert_eq!(err.code(), code, "{strategy}: {err}");
        assert!(err.message().starts_with(start), "{strategy}: {err}");
    };
    let groups = json!([{"id": "g0", "nodes": ["n0", "n1"]}, {"id": "g1", "nodes": ["n2"]}]);
    check(json!({"type": "multilevel"}), "invalid_topology", "strategy.groups: missing required field");
    check(json!({"type": "multilevel", "groups": []}), "invalid_topology", "strategy.groups: needs at least one group");
    check(json!({"type": "multilevel", "groups": groups, "partitions": 0}), "invalid_topology", "strategy.partitions");
    check(
        json!({"type": "multilevel", "groups": groups, "partitions": 2_000_000}),
        "limit_exceeded",
        "strategy.partitions",
    );
    check(
        json!({"type": "multilevel", "groups": groups, "within_group": "ring"}),
        "invalid_topology",
        "strategy.within_group: unknown",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "g0", "nodes": ["n0"]}, {"id": "g0", "nodes": ["n1"]}]}),
        "invalid_topology",
        "strategy.groups[1].id: duplicate group id \"g0\" (also strategy.groups[0])",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "", "nodes": ["n0"]}]}),
        "invalid_topology",
        "strategy.groups[0].id: must not be empty",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "g", "nodes": []}]}),
        "invalid_topology",
        "strategy.groups[0].nodes: a group needs",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "g", "nodes": ["zz"]}]}),
        "invalid_topology",
        "strategy.groups[0].nodes[0]: names node \"zz\"",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "g", "nodes": ["n0", "n0"]}]}),
        "invalid_topology",
        "strategy.groups[0].nodes[1]: node \"n0\" appears twice",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "g", "nodes": ["n0"]}, {"id": "h", "nodes": ["n1", "n0"]}]}),
        "invalid_topology",
        "strategy.groups[1].nodes[1]: node \"n0\" is already in group \"g\" (strategy.groups[0])",
    );
    check(
        json!({"type": "multilevel", "partitions": 3, "groups": groups, "map": ["g0", "g1"]}),
        "invalid_topology",
        "strategy.map: expected 3 group ids",
    );
    check(
        json!({"type": "multilevel", "partitions": 2, "groups": groups, "map": ["g0", "g9"]}),
        "invalid_topology",
        "strategy.map[1]: names group \"g9\"",
    );
    check(
        json!({"type": "multilevel", "groups": [{"id": "g", "nodes": ["n0"], "zone": "z"}]}),
        "invalid_topology",
        "strategy.groups[0].zone: unknown field",
    );
    let mut weighted = doc(4)
        .strategy(json!({"type": "multilevel", "groups": groups, "within_group": "jump"}))
        .node_field(2, "weight", json!(3))
        .value();
    assert!(Router::from_value(&weighted).unwrap_err().message().starts_with("nodes[2].weight: within_group \"jump\""));
    weighted["strategy"]["within_group"] = json!("rendezvous");
    assert!(Router::from_value(&weighted).is_ok());
}

#[test]
fn canonical_form_spells_out_defaults_and_keeps_a_derived_map_derived() {
    let router =
        doc(2).strategy(json!({"type": "multilevel", "groups": [{"id": "g", "nodes": ["n1", "n0"]}]})).router();
    let written: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(
        written["strategy"],
        json!({"type": "multilevel", "partitions": 4096, "groups": [{"id": "g", "nodes": ["n1", "n0"]}], "within_group": "rendezvous"})
    );
    assert_eq!(router.shard_range(), 0..4096);
}

#[test]
fn multilevel_operations_reject_what_does_not_fit() {
    let start = two_groups("rendezvous");
    let code = |op: Value| ops::apply(&start, &op).unwrap_err().code();
    assert_eq!(code(json!({"op": "multilevel_remap", "partition": 512, "group": "g0"})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_remap", "partition": 1, "group": "g9"})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_remap", "partition": "1", "group": "g0"})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_remap", "group": "g0"})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_group_set", "group": "g0", "nodes": ["n3"]})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_group_set", "group": "g0", "nodes": ["n0", "n0"]})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_group_set", "group": "g0", "nodes": ["zz"]})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_group_set", "group": "g9", "nodes": []})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_group_set", "group": "", "nodes": ["n6"]})), "invalid_argument");
    assert_eq!(code(json!({"op": "multilevel_group_set", "group": "g0", "nodes": "n0"})), "invalid_argument");
    let jump = doc(2).strategy(json!({"type": "jump"})).topology();
    assert_eq!(
        ops::apply(&jump, &json!({"op": "multilevel_remap", "partition": 0, "group": "g0"})).unwrap_err().code(),
        "invalid_argument"
    );
    // The pool: a spare node can come and go; a grouped node must leave its group first.
    let added = ops::apply(&start, &json!({"op": "add_node", "node": {"id": "n9"}})).unwrap();
    assert_eq!(partition_owners(&Topology::from_value(&added["topology"]).unwrap()), partition_owners(&start));
    assert!(ops::apply(&start, &json!({"op": "remove_node", "id": "n8"})).is_ok());
    let err = ops::apply(&start, &json!({"op": "remove_node", "id": "n4"})).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("strategy.groups[1].nodes[1]: names node \"n4\""), "{err}");
}

/// The seed of the mutation test, written as text: it cuts it at byte positions.
const VALID: &str = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b", "weight": 2}, {"id": "c"}], "strategy": {"type": "multilevel", "partitions": 5, "groups": [{"id": "x", "nodes": ["a", "b"]}, {"id": "y", "nodes": ["c"]}], "map": ["x", "y", "x", "x", "y"]}}"#;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Mutated documents, arbitrary keys and arbitrary operations never panic; what an
    /// operation returns always builds a router.
    #[test]
    fn mutated_documents_and_operations_never_panic(
        cut in 0usize..VALID.len(),
        insert in ".{0,8}",
        key in any::<Vec<u8>>(),
        remap in any::<bool>(),
        first in prop_oneof![Just(json!(null)), Just(json!(0)), Just(json!(4)), Just(json!(5)), Just(json!("x")), Just(json!("z")), Just(json!(""))],
        second in prop_oneof![Just(json!(null)), Just(json!("x")), Just(json!("y")), Just(json!("new")), Just(json!(["a"])), Just(json!(["c", "b"])), Just(json!([])), Just(json!(["q"]))],
    ) {
        let mut doc = String::from(&VALID[..cut]);
        doc.push_str(&insert);
        doc.push_str(&VALID[cut..]);
        for text in [doc.as_str(), VALID] {
            if let Ok(router) = Router::from_json(text) {
                let _ = router.node(key.as_slice()).unwrap();
                for count in 0..=3 {
                    let _ = router.replicas(key.as_slice(), count);
                }
                let again = Router::from_json(&router.to_json()).expect("canonical form reloads");
                prop_assert_eq!(again.to_json(), router.to_json());
                let operation = if remap {
                    json!({"op": "multilevel_remap", "partition": first, "group": second})
                } else {
                    json!({"op": "multilevel_group_set", "group": first, "nodes": second})
                };
                if let Ok(result) = ops::apply(router.topology(), &operation) {
                    prop_assert!(Router::from_value(&result["topology"]).is_ok(), "{}", result);
                }
            }
        }
    }
}

#[test]
fn build_work_is_bounded() {
    // 2^20 partitions over one group of 65 nodes would score 68 Mi nodes.
    let ids: Vec<String> = (0..65).map(|i| format!("n{i}")).collect();
    let err = doc(65)
        .strategy(json!({"type": "multilevel", "partitions": 1 << 20, "groups": [{"id": "g", "nodes": ids}]}))
        .load()
        .unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    assert!(err.message().starts_with("strategy.groups: placing 1048576 partitions"), "{err}");
    // Growing a group past the bound is refused the same way.
    let topology = doc(65)
        .strategy(json!({"type": "multilevel", "partitions": 1 << 20, "groups": [{"id": "g", "nodes": &ids[..64]}]}))
        .topology();
    let err = ops::apply(&topology, &json!({"op": "multilevel_group_set", "group": "g", "nodes": ids})).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
}
