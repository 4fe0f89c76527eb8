//! `id_groups.json`: id-interval shard groups. Routes read off the groups by hand
//! (interval, then `id % total weight` against the shards' weights), interval edges,
//! ids outside every interval and byte keys rejected, rejected documents (overlaps,
//! writable groups, weights), and `decode_id` (group, table
//! suffix), `shards_for_range` and the group operations through `apply`.

use serde_json::{json, Value};
use shardroute::{Key, Router};

use super::cases::{
    applied, apply_refused, expect_error, load_case, refused_key, refused_text, stated_replicas, stated_route, On,
};
use super::keys::{hex, owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

const NODES: [&str; 4] = ["db-a", "db-b", "db-c", "db-d"];

/// Two groups: `g1` owns `[0, 1e6)` and the reused `[5e6, 6e6)`, shards `db-a` (weight 1)
/// and `db-b` (weight 2); `g2`, writable, owns `[1e6, 3e6)` with `db-c` and `db-d`.
fn orders() -> Value {
    json!({"type": "id_groups",
        "groups": [
            {"id": "g1", "intervals": [[0, 1_000_000], [5_000_000, 6_000_000]],
             "shards": [{"node": "db-a", "weight": 1}, {"node": "db-b", "weight": 2}]},
            {"id": "g2", "intervals": [[1_000_000, 3_000_000]], "writable": true,
             "shards": [{"node": "db-c"}, {"node": "db-d"}]}],
        "tables": {"interval": 100_000, "rule": "orders_{n}"}})
}

/// A route case `<topology>/stated/<what>` stated by hand; the core is checked to agree.
fn stated(file: &mut VectorFile, router: &Router, topology: &str, what: &str, id: u64, shard: u32, node: &str) {
    stated_route(file, topology, router, &format!("stated/{what}"), u64_key(id), (shard, node));
}

/// `route` and `replicas` cases that must fail with `invalid_key`.
fn rejected(file: &mut VectorFile, router: &Router, topology: &str, what: &str, key: Value) {
    let outcome = router.route(owned_key(&key).as_key()).map(drop);
    refused_key(file, topology, &key, None, outcome, |op| format!("{topology}/rejected/{op}-{what}"));
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "id_groups",
        "Id-interval shard groups: an id goes to the group whose interval holds it, then to the shard owning id % total weight; interval edges, weights, ids outside every interval, rejected documents; decode_id with group and table suffix, shards_for_range, and the add-group / add-interval / set-writable operations.",
        "generator; `stated` routes are read off the groups by hand (and checked against the core)",
    );
    let router = file.topology("orders", doc(&NODES, orders()));
    load_case(&mut file, "orders", &router);
    // g1: residue id % 3: 0 -> shard 0 (db-a), 1 and 2 -> shard 1 (db-b).
    // g2: id % 2: 0 -> shard 2 (db-c), 1 -> shard 3 (db-d).
    let stated_ids: [(&str, u64, u32, &str); 14] = [
        ("g1-first", 0, 0, "db-a"),
        ("g1-residue-1", 1, 1, "db-b"),
        ("g1-residue-2", 2, 1, "db-b"),
        ("g1-residue-0", 3, 0, "db-a"),
        ("g1-42", 42, 0, "db-a"),
        ("g1-last", 999_999, 0, "db-a"),
        ("g2-first", 1_000_000, 2, "db-c"),
        ("g2-odd", 1_000_001, 3, "db-d"),
        ("g2-middle", 2_000_000, 2, "db-c"),
        ("g2-last", 2_999_999, 3, "db-d"),
        ("g1-reused-first", 5_000_000, 1, "db-b"),
        ("g1-reused-residue-0", 5_000_001, 0, "db-a"),
        ("g1-reused-residue-1", 5_000_002, 1, "db-b"),
        ("g1-reused-last", 5_999_999, 1, "db-b"),
    ];
    for (what, id, shard, node) in stated_ids {
        assert_eq!(
            u64::from(shard),
            if !(1_000_000..5_000_000).contains(&id) { u64::from(id % 3 != 0) } else { 2 + id % 2 }
        );
        stated(&mut file, &router, "orders", what, id, shard, node);
    }
    let keys: Vec<Value> = stated_ids.iter().map(|(_, id, _, _)| u64_key(*id)).collect();
    let shards: Vec<u32> = stated_ids.iter().map(|(_, _, shard, _)| *shard).collect();
    file.case(
        "orders/route_many",
        json!({"op": "route_many", "topology": "orders", "keys": keys, "expect": {"shards": shards}}),
    );
    for (what, id) in [("g1-residue-1", 1u64), ("g2-odd", 1_000_001)] {
        // The owner, then the next nodes in list order.
        let owner = NODES.iter().position(|n| *n == router.node(id).expect("node")).expect("owner");
        let successors: Vec<&str> = (0..3).map(|step| NODES[(owner + step) % 4]).collect();
        stated_replicas(&mut file, "orders", &router, &format!("stated/replicas-3-{what}"), u64_key(id), &successors);
    }
    for (what, key) in [
        ("gap-3000000", u64_key(3_000_000)),
        ("gap-4999999", u64_key(4_999_999)),
        ("after-6000000", u64_key(6_000_000)),
        ("u64-max", u64_key(u64::MAX)),
        ("text-42", utf8("42")),
        ("bytes", hex(&[0, 0, 0, 0, 0, 0, 0, 0])),
    ] {
        rejected(&mut file, &router, "orders", what, key);
    }

    // Bounds beyond 2^53 (written as strings), one group of three weighted shards.
    let big = json!({"type": "id_groups", "groups": [
        {"id": "high", "intervals": [["18446744073709551000", "18446744073709551615"]], "writable": true,
         "shards": [{"node": "db-d", "weight": 3}, {"node": "db-a", "weight": 1}, {"node": "db-c", "weight": 4}]}]});
    let router = file.topology("high-ids", doc(&NODES, big).epoch(2));
    load_case(&mut file, "high-ids", &router);
    // Residues of id % 8: 0..=2 -> shard 0 (db-d), 3 -> shard 1 (db-a), 4..=7 -> shard 2 (db-c).
    for id in [18_446_744_073_709_551_000u64, 18_446_744_073_709_551_003, 18_446_744_073_709_551_614] {
        let (shard, node) = match id % 8 {
            0..=2 => (0, "db-d"),
            3 => (1, "db-a"),
            _ => (2, "db-c"),
        };
        stated(&mut file, &router, "high-ids", &format!("id-{id}"), id, shard, node);
    }
    rejected(&mut file, &router, "high-ids", "below", u64_key(18_446_744_073_709_550_999));
    rejected(&mut file, &router, "high-ids", "u64-max", u64_key(u64::MAX));

    document_errors(&mut file);
    call_cases(&mut file);
    file
}

/// A change to the `orders` strategy that makes it invalid.
type Edit = Box<dyn Fn(&mut Value)>;

fn document_errors(file: &mut VectorFile) {
    let edits: Vec<(&str, &str, Edit)> = vec![
        (
            "overlap-across-groups",
            "invalid_topology",
            Box::new(|s| s["groups"][1]["intervals"][0] = json!([999_999, 2_000_000])),
        ),
        ("overlap-within-group", "invalid_topology", Box::new(|s| s["groups"][0]["intervals"][1] = json!([500, 600]))),
        (
            "same-interval-twice",
            "invalid_topology",
            Box::new(|s| s["groups"][1]["intervals"][0] = json!([0, 1_000_000])),
        ),
        ("empty-interval", "invalid_topology", Box::new(|s| s["groups"][0]["intervals"][1] = json!([7, 7]))),
        ("reversed-interval", "invalid_topology", Box::new(|s| s["groups"][0]["intervals"][1] = json!([9, 7]))),
        ("interval-three-bounds", "invalid_topology", Box::new(|s| s["groups"][0]["intervals"][1] = json!([1, 2, 3]))),
        ("no-intervals", "invalid_topology", Box::new(|s| s["groups"][0]["intervals"] = json!([]))),
        ("no-writable-group", "invalid_topology", Box::new(|s| s["groups"][1]["writable"] = json!(false))),
        ("two-writable-groups", "invalid_topology", Box::new(|s| s["groups"][0]["writable"] = json!(true))),
        ("weight-zero", "invalid_topology", Box::new(|s| s["groups"][0]["shards"][0]["weight"] = json!(0))),
        ("weight-fraction", "invalid_topology", Box::new(|s| s["groups"][0]["shards"][0]["weight"] = json!(1.5))),
        ("weight-string", "invalid_topology", Box::new(|s| s["groups"][0]["shards"][0]["weight"] = json!("2"))),
        ("weight-over-limit", "limit_exceeded", Box::new(|s| s["groups"][0]["shards"][0]["weight"] = json!(2_000_000))),
        ("unknown-node", "invalid_topology", Box::new(|s| s["groups"][0]["shards"][1]["node"] = json!("db-z"))),
        ("no-shards", "invalid_topology", Box::new(|s| s["groups"][0]["shards"] = json!([]))),
        ("duplicate-group-id", "invalid_topology", Box::new(|s| s["groups"][1]["id"] = json!("g1"))),
        ("no-groups", "invalid_topology", Box::new(|s| s["groups"] = json!([]))),
        ("table-rule-without-placeholder", "invalid_topology", Box::new(|s| s["tables"]["rule"] = json!("orders"))),
        ("table-interval-zero", "invalid_topology", Box::new(|s| s["tables"]["interval"] = json!(0))),
        ("unknown-group-field", "invalid_topology", Box::new(|s| s["groups"][0]["weight"] = json!(1))),
    ];
    for (what, code, change) in edits {
        let mut strategy = orders();
        change(&mut strategy);
        refused_text(file, &format!("load/{what}"), &doc(&NODES, strategy).to_string(), code);
    }
}

/// `decode_id`, `shards_for_range` and `apply` cases.
fn call_cases(file: &mut VectorFile) {
    let router = file.router("orders");
    // group index, then table suffix id / 100000.
    for (id, shard, group, table) in [
        (0u64, 0u32, 0u64, 0u64),
        (999_999, 0, 0, 9),
        (1_000_001, 3, 1, 10),
        (2_999_999, 3, 1, 29),
        (5_000_002, 1, 0, 50),
    ] {
        let decoded = router.decode_id(id).expect("decode");
        assert_eq!((decoded.shard, decoded.fields), (shard, vec![("group", group), ("table", table)]));
        file.case(
            &format!("orders/decode_id/{id}"),
            json!({"op": "decode_id", "topology": "orders", "id": id.to_string(),
                   "expect": {"shard": shard, "fields": [["group", group.to_string()], ["table", table.to_string()]]}}),
        );
    }
    let outcome = router.decode_id(3_000_000).map(drop);
    expect_error(
        file,
        "orders/decode_id/rejected-gap",
        json!({"op": "decode_id", "topology": "orders", "id": "3000000"}),
        "invalid_key",
        outcome,
    );
    // Ranges: the shards of the groups whose intervals overlap, in id order, each once.
    for (what, start, end, shards) in [
        ("g1-one-id", 1u64, Some(2u64), vec![1u32]),
        ("g1-two-ids", 2, Some(4), vec![1, 0]),
        ("g1-into-g2", 999_999, Some(1_000_002), vec![0, 2, 3]),
        ("g2-only", 1_500_000, Some(2_500_000), vec![2, 3]),
        ("gap", 3_000_000, Some(5_000_000), vec![]),
        ("g2-to-end", 2_000_001, None, vec![3, 2, 1, 0]),
    ] {
        let got = router.shards_for_range(start, end.map(Key::U64)).expect("range");
        assert_eq!(got, shards, "orders/{what}");
        let end = end.map_or(Value::Null, u64_key);
        file.case(
            &format!("orders/shards_for_range/{what}"),
            json!({"op": "shards_for_range", "topology": "orders", "start": u64_key(start), "end": end, "expect": {"shards": shards}}),
        );
    }
    let outcome = router.shards_for_range(7u64, Some(Key::U64(7))).map(drop);
    expect_error(
        file,
        "orders/shards_for_range/empty-range",
        json!({"op": "shards_for_range", "topology": "orders", "start": u64_key(7), "end": u64_key(7)}),
        "invalid_argument",
        outcome,
    );

    let g3 = json!({"id": "g3", "intervals": [[3_000_000, 4_000_000]], "shards": [{"node": "db-a"}, {"node": "db-d", "weight": 3}]});
    let changes: Vec<(&str, Value)> = vec![
        ("add-group", json!({"op": "id_groups_add_group", "group": g3})),
        ("add-group-read-only", json!({"op": "id_groups_add_group", "group": g3, "writable": false})),
        ("add-interval", json!({"op": "id_groups_add_interval", "group": "g2", "interval": [3_000_000, "4000000"]})),
        ("set-writable", json!({"op": "id_groups_set_writable", "group": "g1"})),
    ];
    for (what, operation) in changes {
        let result = applied(file, &format!("orders/apply/{what}"), On::Topology("orders"), operation);
        let next = Router::from_value(&result["topology"]).expect("next topology");
        assert_eq!(next.epoch(), 2);
        // No id that routed before moves.
        for id in (0..6_100_000u64).step_by(9_973) {
            if let Ok(shard) = router.route(id) {
                assert_eq!(next.route(id).expect("still routes"), shard, "{what}: id {id} moved");
                assert_eq!(next.node(id).expect("node"), router.node(id).expect("node"));
            }
        }
    }
    let refused: Vec<(&str, Value, &str)> = vec![
        (
            "add-group-overlapping",
            json!({"op": "id_groups_add_group", "group": {"id": "g3", "intervals": [[2_500_000, 3_500_000]], "shards": [{"node": "db-a"}]}}),
            "invalid_topology",
        ),
        (
            "add-group-duplicate-id",
            json!({"op": "id_groups_add_group", "group": {"id": "g2", "intervals": [[3_000_000, 3_500_000]], "shards": [{"node": "db-a"}]}}),
            "invalid_topology",
        ),
        (
            "add-group-writable-inside",
            json!({"op": "id_groups_add_group", "group": {"id": "g3", "intervals": [[3_000_000, 3_500_000]], "shards": [{"node": "db-a"}], "writable": true}}),
            "invalid_argument",
        ),
        ("add-group-not-object", json!({"op": "id_groups_add_group", "group": "g3"}), "invalid_argument"),
        (
            "add-interval-overlapping",
            json!({"op": "id_groups_add_interval", "group": "g1", "interval": [2_999_999, 3_100_000]}),
            "invalid_topology",
        ),
        (
            "add-interval-empty",
            json!({"op": "id_groups_add_interval", "group": "g1", "interval": [3_100_000, 3_100_000]}),
            "invalid_argument",
        ),
        (
            "add-interval-unknown-group",
            json!({"op": "id_groups_add_interval", "group": "g9", "interval": [3_000_000, 3_100_000]}),
            "invalid_argument",
        ),
        ("set-writable-unknown-group", json!({"op": "id_groups_set_writable", "group": "g9"}), "invalid_argument"),
        ("node-edits-refused", json!({"op": "add_node", "node": {"id": "db-e"}}), "invalid_argument"),
    ];
    for (what, operation, code) in refused {
        apply_refused(file, &format!("orders/apply/refused-{what}"), On::Topology("orders"), operation, code);
    }
}
