//! `id_groups`: routing against a linear-scan oracle, exact weights over a cycle, no
//! movement on expansion, range scans against enumeration, and the document rules.

mod common;

use common::{answers_any_id, doc, Doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::{ops, Key, Router, Topology};

const NODES: [&str; 4] = ["a", "b", "c", "d"];

/// The documents of this file: epoch 3 over `NODES`.
fn groups_doc(strategy: Value) -> Doc {
    doc(&NODES).strategy(strategy).epoch(3)
}

/// The oracle: find the group by scanning every interval of every group, then walk its
/// shards subtracting weights from `id % total`. Shards are counted across groups.
fn naive(strategy: &Value, id: u64) -> Option<(u32, String)> {
    let mut first_shard = 0u32;
    for group in strategy["groups"].as_array().unwrap() {
        let shards = group["shards"].as_array().unwrap();
        let weight = |shard: &Value| shard.get("weight").and_then(Value::as_u64).unwrap_or(1);
        let inside = group["intervals"].as_array().unwrap().iter().any(|pair| {
            let bound = |v: &Value| v.as_u64().unwrap_or_else(|| v.as_str().unwrap().parse().unwrap());
            bound(&pair[0]) <= id && id < bound(&pair[1])
        });
        if inside {
            let total: u64 = shards.iter().map(weight).sum();
            let mut residue = id % total;
            for (index, shard) in shards.iter().enumerate() {
                if residue < weight(shard) {
                    return Some((first_shard + index as u32, shard["node"].as_str().unwrap().to_string()));
                }
                residue -= weight(shard);
            }
        }
        first_shard += shards.len() as u32;
    }
    None
}

/// A random valid strategy: cut points split `[0, 2000)` into intervals dealt to groups
/// (some left as gaps), each group with 1..4 weighted shards on random nodes.
fn strategy() -> impl Strategy<Value = Value> {
    (
        1usize..4,
        prop::collection::btree_set(1u64..2000, 4..14),
        prop::collection::vec((0usize..5, prop::collection::vec((0usize..4, 1u64..6), 1..4)), 4),
        any::<bool>(),
    )
        .prop_map(|(group_count, cuts, deal, tables)| {
            let cuts: Vec<u64> = std::iter::once(0).chain(cuts).collect();
            let mut intervals = vec![Vec::new(); group_count];
            for (index, pair) in cuts.windows(2).enumerate() {
                // The first intervals seed every group; later ones go to a group or a gap.
                let owner = if index < group_count { Some(index) } else { Some(deal[index % 4].0).filter(|g| *g < group_count) };
                if let Some(group) = owner {
                    intervals[group].push(json!([pair[0], pair[1].to_string()]));
                }
            }
            let groups: Vec<Value> = (0..group_count)
                .map(|g| {
                    let shards: Vec<Value> =
                        deal[g].1.iter().map(|(node, weight)| json!({"node": NODES[*node], "weight": weight})).collect();
                    json!({"id": format!("g{g}"), "intervals": intervals[g], "shards": shards, "writable": g == group_count - 1})
                })
                .collect();
            let mut strategy = json!({"type": "id_groups", "groups": groups});
            if tables {
                strategy["tables"] = json!({"interval": 100, "rule": "orders_{n}"});
            }
            strategy
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn routing_matches_the_linear_scan(strategy in strategy(), ids in prop::collection::vec(0u64..2100, 64)) {
        let router = groups_doc(strategy.clone()).router();
        for id in ids.into_iter().chain([0, 1999, 2000, u64::MAX]) {
            match naive(&strategy, id) {
                Some((shard, node)) => {
                    prop_assert_eq!(router.route(id).unwrap(), shard);
                    prop_assert_eq!(router.node(id).unwrap(), node.as_str());
                    let decoded = router.decode_id(id).unwrap();
                    prop_assert_eq!(decoded.shard, shard);
                    prop_assert_eq!(decoded.fields[0].0, "group");
                    if strategy.get("tables").is_some() {
                        prop_assert_eq!(decoded.fields[1], ("table", id / 100));
                    }
                }
                None => {
                    prop_assert_eq!(router.route(id).unwrap_err().code(), "invalid_key");
                    prop_assert_eq!(router.decode_id(id).unwrap_err().code(), "invalid_key");
                }
            }
        }
    }

    #[test]
    fn adding_a_group_or_an_interval_moves_no_id(strategy in strategy(), weights in prop::collection::vec(1u64..5, 1..4), split in 2001u64..3000) {
        let before = groups_doc(strategy).topology();
        let shards: Vec<Value> = weights.iter().enumerate().map(|(i, w)| json!({"node": NODES[i], "weight": w})).collect();
        let grown = ops::apply(&before, &json!({"op": "id_groups_add_group",
            "group": {"id": "new", "intervals": [[2000, split]], "shards": shards}})).unwrap();
        let grown_topology = Topology::from_value(&grown["topology"]).unwrap();
        prop_assert_eq!(grown_topology.epoch, before.epoch + 1);
        let grown = Router::new(grown_topology).unwrap();
        prop_assert_eq!(grown.to_json().matches("\"writable\":true").count(), 1);
        // Reuse: the freed space above the new group goes to the first group.
        let reused = ops::apply(grown.topology(), &json!({"op": "id_groups_add_interval", "group": "g0", "interval": [split, "5000"]})).unwrap();
        let reused = Router::from_value(&reused["topology"]).unwrap();
        let before = Router::new(before).unwrap();
        let old_shards = before.shard_range().end;
        for id in 0..5100u64 {
            match before.route(id) {
                Ok(shard) => {
                    prop_assert_eq!(grown.route(id).unwrap(), shard);
                    prop_assert_eq!(grown.node(id).unwrap(), before.node(id).unwrap());
                    prop_assert_eq!(reused.route(id).unwrap(), shard);
                    prop_assert_eq!(reused.node(id).unwrap(), before.node(id).unwrap());
                }
                Err(_) if (2000..split).contains(&id) => {
                    // New ids go to the new group, whose shards come after all old ones.
                    prop_assert!(grown.route(id).unwrap() >= old_shards);
                    prop_assert_eq!(reused.route(id).unwrap(), grown.route(id).unwrap());
                }
                Err(_) if (split..5000).contains(&id) => {
                    prop_assert!(grown.route(id).is_err());
                    prop_assert_eq!(reused.decode_id(id).unwrap().fields[0], ("group", 0));
                }
                Err(_) => prop_assert!(grown.route(id).is_err() && reused.route(id).is_err()),
            }
        }
    }

    #[test]
    fn weights_hold_exactly_over_every_full_cycle(weights in prop::collection::vec(1u32..9, 1..6), start in 0u64..1_000_000) {
        let total: u32 = weights.iter().sum();
        let shards: Vec<Value> = weights.iter().map(|w| json!({"node": "a", "weight": w})).collect();
        let router = groups_doc(json!({"type": "id_groups", "groups": [
            {"id": "g", "intervals": [[start, start + 3 * u64::from(total)]], "shards": shards, "writable": true}]})).router();
        for offset in [0, 1, u64::from(total) / 2, u64::from(total) * 2] {
            let mut counts = vec![0u32; weights.len()];
            for id in start + offset..start + offset + u64::from(total) {
                counts[router.route(id).unwrap() as usize] += 1;
            }
            prop_assert_eq!(&counts, &weights);
        }
    }

    /// shards_for_range against routing every id of the range (ids stay below 2100).
    #[test]
    fn ranges_match_enumeration(strategy in strategy(), start in 0u64..2100, len in 1u64..400, open in any::<bool>()) {
        let router = groups_doc(strategy).router();
        let end = if open { 2100 } else { start + len };
        let mut naive: Vec<u32> = Vec::new();
        for id in start..end {
            if let Ok(shard) = router.route(id) {
                if !naive.contains(&shard) {
                    naive.push(shard);
                }
            }
        }
        let fast = router.shards_for_range(start, if open { None } else { Some(Key::U64(end)) }).unwrap();
        prop_assert_eq!(fast, naive);
    }
}

fn base() -> Value {
    json!({"type": "id_groups", "groups": [
        {"id": "g1", "intervals": [[0, 1000]], "shards": [{"node": "a", "weight": 1}, {"node": "b", "weight": 2}]},
        {"id": "g2", "intervals": [[1000, 2000], ["3000", "4000"]], "shards": [{"node": "c"}, {"node": "d"}], "writable": true}]})
}

#[test]
fn routes_decodes_and_round_trips() {
    let mut strategy = base();
    strategy["tables"] = json!({"interval": "250", "rule": "orders_{n:02}"});
    let router = groups_doc(strategy).router();
    // g1: residues 0 -> shard 0 (a), 1..=2 -> shard 1 (b); g2: shards 2 (c), 3 (d).
    for (id, shard, node) in [
        (0u64, 0, "a"),
        (1, 1, "b"),
        (2, 1, "b"),
        (3, 0, "a"),
        (999, 0, "a"),
        (1000, 2, "c"),
        (1001, 3, "d"),
        (3999, 3, "d"),
    ] {
        assert_eq!((router.route(id).unwrap(), router.node(id).unwrap()), (shard, node), "id {id}");
    }
    for id in [2000u64, 2999, 4000, u64::MAX] {
        let err = router.route(id).unwrap_err();
        assert_eq!(err.code(), "invalid_key");
        assert!(err.message().contains("in no group"), "{}", err.message());
    }
    assert_eq!(router.route("1000").unwrap_err().code(), "invalid_key");
    assert_eq!(router.replicas(1u64, 3).unwrap(), ["b", "c", "d"]);
    let decoded = router.decode_id(3010).unwrap();
    assert_eq!((decoded.shard, decoded.fields), (2, vec![("group", 1), ("table", 12)]));
    let shardroute::Strategy::IdGroups(spec) = router.strategy() else { panic!() };
    assert_eq!(spec.table_name(3010).unwrap(), "orders_12");
    assert_eq!(spec.table_name(10).unwrap(), "orders_00");
    assert_eq!(spec.writable_group().id(), "g2");
    assert_eq!(spec.groups()[0].total_weight(), 3);
    assert_eq!(router.shard_range(), 0..4);
    assert_eq!(router.shards_for_range(990u64, Some(Key::U64(1001))).unwrap(), [0, 1, 2]);
    assert_eq!(router.shards_for_range(1500u64, Some(Key::U64(1500))).unwrap_err().code(), "invalid_argument");
    assert_eq!(router.shards_for_range("a", None).unwrap_err().code(), "invalid_key");
    let canonical: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(canonical["strategy"]["groups"][1]["shards"][0], json!({"node": "c", "weight": 1}));
    assert_eq!(canonical["strategy"]["groups"][0]["writable"], json!(false));
    assert_eq!(canonical["strategy"]["groups"][1]["intervals"][1], json!([3000, 4000]));
    assert_eq!(Topology::from_value(&canonical).unwrap(), *router.topology());
    // Bounds above 2^53 are written as strings, and read back.
    let mut big = base();
    big["groups"][1]["intervals"][1] = json!(["18446744073709551000", "18446744073709551615"]);
    let big = groups_doc(big).router();
    assert!(big.to_json().contains("[\"18446744073709551000\",\"18446744073709551615\"]"));
    assert_eq!(big.route(u64::MAX - 1).unwrap(), 2 + (u64::MAX - 1) as u32 % 2);
    assert_eq!(Router::from_json(&big.to_json()).unwrap().to_json(), big.to_json());
}

/// `strategy` with the value at `path` (keys and indexes joined by `/`) replaced.
fn set(mut strategy: Value, path: &str, value: Value) -> Value {
    let mut at = &mut strategy;
    for step in path.split('/') {
        at = match step.parse::<usize>() {
            Ok(index) => &mut at[index],
            Err(_) => &mut at[step],
        };
    }
    *at = value;
    strategy
}

#[test]
fn documents_are_checked() {
    const ONE_PLACEHOLDER: &str = "tables.rule: expected a name with exactly one placeholder";
    // The base strategy with one value replaced, and how the message starts after "strategy.".
    let invalid = [
        (
            "groups/1/intervals/1",
            json!([500, 1500]),
            "groups[1].intervals[1]: [500, 1500) overlaps strategy.groups[0].intervals[0] = [0, 1000)",
        ),
        (
            "groups/1/intervals/1",
            json!([1500, 1600]),
            "groups[1].intervals[1]: [1500, 1600) overlaps strategy.groups[1].intervals[0] = [1000, 2000)",
        ),
        (
            "groups/1/intervals/0",
            json!([0, 1000]),
            "groups[1].intervals[0]: [0, 1000) overlaps strategy.groups[0].intervals[0] = [0, 1000)",
        ),
        ("groups/0/intervals/0", json!([5, 5]), "groups[0].intervals[0]: empty interval [5, 5)"),
        ("groups/0/intervals/0", json!([9, 5]), "groups[0].intervals[0]: empty interval [9, 5)"),
        ("groups/0/intervals/0", json!([1, 2, 3]), "groups[0].intervals[0]: expected [start, end], found 3"),
        ("groups/0/intervals/0", json!([1, -2]), "groups[0].intervals[0][1]: expected an integer"),
        ("groups/0/intervals", json!([]), "groups[0].intervals: a group needs at least one interval"),
        ("groups/1/writable", json!(false), "groups: no group is writable"),
        ("groups/0/writable", json!(true), "groups[1].writable: strategy.groups[0] is already writable"),
        ("groups/0/writable", json!("yes"), "groups[0].writable: expected a boolean"),
        ("groups/0/shards/0/weight", json!(0), "groups[0].shards[0].weight: expected an integer in 1..=1048576"),
        ("groups/0/shards/0/weight", json!(1.5), "groups[0].shards[0].weight: expected an integer in 1..=1048576"),
        ("groups/0/shards/1/node", json!("z"), "groups[0].shards[1].node: names node \"z\""),
        ("groups/0/shards", json!([]), "groups[0].shards: a group needs at least one shard"),
        ("groups/1/id", json!("g1"), "groups[1].id: duplicate group id \"g1\" (also strategy.groups[0])"),
        ("groups/0/id", json!(""), "groups[0].id: must not be empty"),
        ("groups/0/shard", json!([]), "groups[0].shard: unknown field"),
        ("groups", json!([]), "groups: needs at least one group"),
        ("tables", json!({"interval": 0, "rule": "t_{n}"}), "tables.interval: must be at least 1"),
        ("tables", json!({"interval": 10, "rule": "orders"}), ONE_PLACEHOLDER),
        ("tables", json!({"interval": 10, "rule": "t_{n}_{n}"}), ONE_PLACEHOLDER),
        ("tables", json!({"interval": 10, "rule": "t_{shard}"}), ONE_PLACEHOLDER),
        ("tables", json!({"interval": 10}), "tables.rule: missing required field"),
    ];
    let over_limits = [
        ("groups/0/shards/0/weight", json!(2_000_000), "groups[0].shards[0].weight"),
        (
            "groups/0/shards",
            json!([{"node": "a", "weight": 1_000_000}, {"node": "b", "weight": 100_000}]),
            "groups[0].shards: the group's weights sum past",
        ),
    ];
    let cases = invalid.map(|case| ("invalid_topology", case)).into_iter();
    for (code, (path, value, prefix)) in cases.chain(over_limits.map(|case| ("limit_exceeded", case))) {
        let err = groups_doc(set(base(), path, value)).load().unwrap_err();
        let (actual, message) = (err.code(), err.message());
        assert_eq!(actual, code, "{message}");
        assert!(message.starts_with(&format!("strategy.{prefix}")), "expected {prefix:?}, got {message:?}");
    }
}

#[test]
fn operations_check_their_arguments() {
    let topology = groups_doc(base()).topology();
    let apply = |op: Value| ops::apply(&topology, &op);
    let code = |op: Value| apply(op).unwrap_err().code();
    let group = json!({"id": "g3", "intervals": [[2000, 3000]], "shards": [{"node": "a"}]});
    let added = apply(json!({"op": "id_groups_add_group", "group": group})).unwrap();
    assert_eq!(added["added"], "g3");
    assert_eq!(added["shards"], json!([4]));
    assert_eq!(added["writable"], "g3");
    let quiet = apply(json!({"op": "id_groups_add_group", "group": group, "writable": false})).unwrap();
    assert_eq!(quiet["writable"], "g2");
    assert_eq!(
        code(
            json!({"op": "id_groups_add_group", "group": {"id": "g3", "intervals": [[2000, 3000]], "shards": [{"node": "a"}], "writable": true}})
        ),
        "invalid_argument"
    );
    assert_eq!(
        code(
            json!({"op": "id_groups_add_group", "group": {"id": "g3", "intervals": [[1500, 2500]], "shards": [{"node": "a"}]}})
        ),
        "invalid_topology"
    );
    assert_eq!(
        code(
            json!({"op": "id_groups_add_group", "group": {"id": "g1", "intervals": [[2000, 2500]], "shards": [{"node": "a"}]}})
        ),
        "invalid_topology"
    );
    assert_eq!(code(json!({"op": "id_groups_add_group", "group": [1]})), "invalid_argument");
    assert_eq!(code(json!({"op": "id_groups_add_group"})), "invalid_argument");
    assert_eq!(code(json!({"op": "id_groups_add_group", "group": group, "writable": 1})), "invalid_argument");
    let reused = apply(json!({"op": "id_groups_add_interval", "group": "g1", "interval": ["2000", 2500]})).unwrap();
    assert_eq!(reused["group"], "g1");
    assert_eq!(reused["interval"], json!([2000, 2500]));
    assert_eq!(reused["topology"]["strategy"]["groups"][0]["intervals"], json!([[0, 1000], [2000, 2500]]));
    assert_eq!(
        code(json!({"op": "id_groups_add_interval", "group": "g9", "interval": [2000, 2500]})),
        "invalid_argument"
    );
    assert_eq!(
        code(json!({"op": "id_groups_add_interval", "group": "g1", "interval": [2500, 2000]})),
        "invalid_argument"
    );
    assert_eq!(
        code(json!({"op": "id_groups_add_interval", "group": "g1", "interval": [1999, 2500]})),
        "invalid_topology"
    );
    assert_eq!(code(json!({"op": "id_groups_add_interval", "group": "g1"})), "invalid_argument");
    let switched = apply(json!({"op": "id_groups_set_writable", "group": "g1"})).unwrap();
    assert_eq!((&switched["writable"], &switched["previous"]), (&json!("g1"), &json!("g2")));
    let switched = Topology::from_value(&switched["topology"]).unwrap();
    let shardroute::Strategy::IdGroups(spec) = &switched.strategy else { panic!() };
    assert_eq!(spec.writable_group().id(), "g1");
    assert_eq!(switched.epoch, topology.epoch + 1);
    assert_eq!(code(json!({"op": "id_groups_set_writable", "group": 1})), "invalid_argument");
    // Node edits do not fit the table; group ops do not fit other strategies.
    assert_eq!(code(json!({"op": "add_node", "node": {"id": "e"}})), "invalid_argument");
    let jump = doc(&["a"]).strategy(json!({"type": "jump"})).topology();
    assert_eq!(
        ops::apply(&jump, &json!({"op": "id_groups_set_writable", "group": "g1"})).unwrap_err().code(),
        "invalid_argument"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary bounds and weights give a router or an error; a router answers any id
    /// and any range without panicking, and its canonical form reloads.
    #[test]
    fn arbitrary_groups_never_panic(
        bounds in prop::collection::vec((any::<u64>(), any::<u64>()), 1..5),
        weights in prop::collection::vec(prop_oneof![0u64..4, any::<u64>()], 1..4),
        ids in prop::collection::vec(any::<u64>(), 8),
        writable in 0usize..3,
    ) {
        let groups: Vec<Value> = bounds.iter().enumerate().map(|(g, (start, end))| {
            let shards: Vec<Value> = weights.iter().map(|w| json!({"node": NODES[g % 4], "weight": w})).collect();
            json!({"id": format!("g{g}"), "intervals": [[start.to_string(), end.to_string()]], "shards": shards, "writable": g == writable})
        }).collect();
        let strategy = json!({"type": "id_groups", "groups": groups, "tables": {"interval": ids[0] | 1, "rule": "t{n:020}"}});
        if let Ok(router) = groups_doc(strategy).load() {
            answers_any_id(&router, &ids, ids[1], 4);
        }
    }
}
