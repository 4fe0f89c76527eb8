//! `tables.json`: node groups and table families in one document. A case that names a
//! `table` runs on `Router.table(table)`. Every family route is stated by a relation: the
//! key routed by a document of its own (the group's nodes in the group's order, the
//! family's strategy and hashing). Reference reads and writes are stated by hand: the read
//! node is `group[jump(hash(key), len(group))]` (in a zone: jump over the group's nodes in
//! that zone), a write lists the read node, then the rest of the group in its order. Then
//! the documents, calls and operations the sections make invalid.

use serde_json::{json, Value};

use shardroute::{jump, Router};

use super::cases::{applied, apply_refused, edited, expect_error, load_case, result_or_error, On, Refusals};
use super::keys::{owned_key, standard_keys, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

const SHOP: &str = "shop";

fn nodes() -> Value {
    json!([
        {"id": "db-1", "zone": "eu-1"}, {"id": "db-2", "zone": "eu-1"}, {"id": "db-3", "zone": "eu-2"},
        {"id": "db-4", "zone": "us-1"}, {"id": "db-5", "zone": "us-1"}, {"id": "db-6", "zone": "us-2"}
    ])
}

fn groups() -> Value {
    json!({"eu": ["db-1", "db-2", "db-3"], "us": ["db-6", "db-4", "db-5"]})
}

fn families() -> Value {
    json!({
        "orders": {"tables": ["orders", "order_items"], "group": "eu",
                   "hashing": {"function": "crc32"}, "strategy": {"type": "ring", "points_per_node": 64}},
        "events": {"tables": ["events"], "group": "us",
                   "strategy": {"type": "key_range", "boundaries": [utf8("2026-06")], "ranges": ["db-5", "db-4"]}},
        "catalog": {"tables": ["countries", "currencies"], "reference": true},
        "tax": {"tables": ["tax_rates"], "group": "us", "reference": true}
    })
}

/// The whole database: users by the document's jump over every node, and the families.
fn shop() -> Value {
    let mut document = doc(&["x"], json!({"type": "jump"}));
    document["nodes"] = nodes();
    document.with("node_groups", groups()).with("table_families", families())
}

/// The ids of a group's nodes in the group's order (every node for `None`).
fn members(group: Option<&str>) -> Vec<Value> {
    match group {
        Some(name) => groups()[name].as_array().expect("a group").clone(),
        None => nodes().as_array().expect("nodes").iter().map(|node| node["id"].clone()).collect(),
    }
}

/// A family's document alone: its group's nodes in the group's order, its strategy and
/// hashing.
fn alone(family: &str) -> Router {
    let spec = &families()[family];
    let all = nodes();
    let listed: Vec<Value> = members(spec["group"].as_str())
        .iter()
        .map(|id| all.as_array().expect("nodes").iter().find(|node| &node["id"] == id).expect("a node").clone())
        .collect();
    let mut document = doc(&["x"], spec["strategy"].clone());
    document["nodes"] = Value::Array(listed);
    if let Some(hashing) = spec.get("hashing") {
        document = document.hashing(hashing.clone());
    }
    Router::from_value(&document).expect("the family's document alone")
}

/// The read node of a reference family, by hand: jump over the group (the zone's nodes of
/// the group when the zone holds any).
fn reference_read(router: &Router, group: Option<&str>, key: &Value, zone: Option<&str>) -> String {
    let all = nodes();
    let ids: Vec<String> = members(group).iter().map(|id| id.as_str().expect("an id").to_string()).collect();
    let zone_of = |id: &str| {
        all.as_array().expect("nodes").iter().find(|node| node["id"] == id).and_then(|node| node["zone"].as_str())
    };
    let near: Vec<&String> = ids.iter().filter(|id| zone.is_some() && zone_of(id) == zone).collect();
    let hash = router.hash(owned_key(key).as_key());
    if near.is_empty() {
        ids[jump(hash, ids.len() as u32).expect("jump") as usize].clone()
    } else {
        near[jump(hash, near.len() as u32).expect("jump") as usize].to_string()
    }
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "tables",
        "Node groups and table families: a case with `table` runs on Router.table(table); a sharded family routes by its own strategy and hashing over its group, a reference family is read from one node of its group (read_near: one in the caller's zone) and written to all; tables outside every family route by the document.",
        "family routes stated by a relation (the family's document alone: its group's nodes, strategy and hashing); reference reads and writes stated by hand from jump hash; refusals generator",
    );
    let router = file.topology(SHOP, shop());
    load_case(&mut file, SHOP, &router);
    let users = Router::from_value(&{
        let mut document = doc(&["x"], json!({"type": "jump"}));
        document["nodes"] = nodes();
        document
    })
    .expect("the document without tables");

    let keys = standard_keys();
    // Tables outside every family: the document's own strategy, as without tables.
    for (label, key) in keys.iter().take(6) {
        let owned = owned_key(key);
        let expect = result_or_error(
            users.route(owned.as_key()).and_then(|shard| Ok((shard, users.node(owned.as_key())?))),
            |(shard, node)| json!({"shard": shard, "node": node}),
        );
        let got = router.route(owned.as_key()).and_then(|shard| Ok((shard, router.node(owned.as_key())?)));
        assert_eq!(result_or_error(got, |(shard, node)| json!({"shard": shard, "node": node})), expect);
        file.case(
            &format!("{SHOP}/route/document/{label}"),
            json!({"op": "route", "topology": SHOP, "key": key, "expect": expect}),
        );
    }

    // Sharded families: each table of the family routes as the family's document alone.
    let dates = [("early", utf8("2026-01-15")), ("june", utf8("2026-06")), ("late", utf8("2026-11-30"))];
    for (table, family, keys) in [
        ("orders", "orders", keys.iter().map(|(label, key)| (label.clone(), key.clone())).collect::<Vec<_>>()),
        ("order_items", "orders", keys.iter().take(4).map(|(label, key)| (label.clone(), key.clone())).collect()),
        ("events", "events", dates.iter().map(|(label, key)| (label.to_string(), key.clone())).collect()),
    ] {
        let reference = alone(family);
        let via = router.table(table).expect("a family's table");
        for (label, key) in &keys {
            let owned = owned_key(key);
            let expect = result_or_error(
                reference.route(owned.as_key()).and_then(|shard| Ok((shard, reference.node(owned.as_key())?))),
                |(shard, node)| json!({"shard": shard, "node": node}),
            );
            let got = via.route(owned.as_key()).and_then(|shard| Ok((shard, via.node(owned.as_key())?)));
            assert_eq!(
                result_or_error(got, |(shard, node)| json!({"shard": shard, "node": node})),
                expect,
                "{table} {label}"
            );
            file.case(
                &format!("{SHOP}/route/{table}/{label}"),
                json!({"op": "route", "topology": SHOP, "table": table, "key": key, "expect": expect}),
            );
        }
        let (label, key) = &keys[0];
        let owned = owned_key(key);
        let expect = result_or_error(reference.replicas(owned.as_key(), 2), |nodes| json!({ "nodes": nodes }));
        assert_eq!(result_or_error(via.replicas(owned.as_key(), 2), |nodes| json!({ "nodes": nodes })), expect);
        file.case(
            &format!("{SHOP}/replicas-2/{table}/{label}"),
            json!({"op": "replicas", "topology": SHOP, "table": table, "key": key, "count": 2, "expect": expect}),
        );
        // One node holds a key of a sharded family: a write goes there, a read too,
        // whatever the caller's zone.
        let owner = reference.node(owned.as_key()).expect("owner").to_string();
        assert_eq!(via.route_write(owned.as_key()).expect("write"), [owner.as_str()]);
        assert_eq!(via.read_near(owned.as_key(), Some("us-2")).expect("read"), owner);
        file.case(
            &format!("{SHOP}/route_write/{table}/{label}"),
            json!({"op": "route_write", "topology": SHOP, "table": table, "key": key, "expect": {"nodes": [owner]}}),
        );
        file.case(
            &format!("{SHOP}/read_near/{table}/{label}/us-2"),
            json!({"op": "read_near", "topology": SHOP, "table": table, "key": key, "zone": "us-2", "expect": {"node": owner}}),
        );
    }

    // Reference families: read from one node (by the key's hash, in the caller's zone
    // when it holds one), written to every node of the group.
    for (table, group) in [("countries", None), ("currencies", None), ("tax_rates", Some("us"))] {
        let via = router.table(table).expect("a reference table");
        assert!(via.is_reference());
        let ids: Vec<String> = members(group).iter().map(|id| id.as_str().expect("id").to_string()).collect();
        for (label, key) in keys.iter().take(5) {
            let owned = owned_key(key);
            let read = reference_read(&router, group, key, None);
            assert_eq!(via.route_read(owned.as_key()).expect("read"), read, "{table} {label}");
            assert_eq!(via.node(owned.as_key()).expect("node"), read, "{table} {label}");
            let mut write = vec![read.clone()];
            write.extend(ids.iter().filter(|id| **id != read).cloned());
            assert_eq!(via.route_write(owned.as_key()).expect("write"), write, "{table} {label}");
            file.case(
                &format!("{SHOP}/route_read/{table}/{label}"),
                json!({"op": "route_read", "topology": SHOP, "table": table, "key": key, "expect": {"node": read}}),
            );
            file.case(
                &format!("{SHOP}/route_write/{table}/{label}"),
                json!({"op": "route_write", "topology": SHOP, "table": table, "key": key, "expect": {"nodes": write}}),
            );
            for zone in [Some("eu-1"), Some("us-1"), Some("us-2"), Some("mars"), None] {
                let near = reference_read(&router, group, key, zone);
                assert_eq!(via.read_near(owned.as_key(), zone).expect("read_near"), near, "{table} {label} {zone:?}");
                file.case(
                    &format!("{SHOP}/read_near/{table}/{label}/{}", zone.unwrap_or("none")),
                    json!({"op": "read_near", "topology": SHOP, "table": table, "key": key, "zone": zone, "expect": {"node": near}}),
                );
            }
        }
    }

    // A table no family lists is refused, not routed by the document's rule.
    for (what, case) in [
        ("route", json!({"op": "route", "topology": SHOP, "table": "users", "key": utf8("u:1")})),
        (
            "read_near",
            json!({"op": "read_near", "topology": SHOP, "table": "users", "key": utf8("u:1"), "zone": "eu-1"}),
        ),
    ] {
        let outcome = router.table("users").map(drop);
        expect_error(&mut file, &format!("{SHOP}/reject/unknown-table/{what}"), case, "invalid_argument", outcome);
    }

    // Node operations keep the sections; removing a node a group names is refused.
    applied(
        &mut file,
        &format!("{SHOP}/apply/add-node"),
        On::Topology(SHOP),
        json!({"op": "add_node", "node": {"id": "db-7"}}),
    );
    apply_refused(
        &mut file,
        &format!("{SHOP}/apply/remove-node-named-by-a-group"),
        On::Topology(SHOP),
        json!({"op": "remove_node", "id": "db-4"}),
        "invalid_topology",
    );

    // The sections' own operations: each next document is the input edited by hand.
    let edit = |change: &dyn Fn(&mut Value)| {
        let mut document = shop();
        change(&mut document);
        document
    };
    edited(
        &mut file,
        &format!("{SHOP}/apply/node-group-set/reorder-and-shrink"),
        SHOP,
        json!({"op": "node_group_set", "group": "eu", "nodes": ["db-3", "db-1"]}),
        edit(&|d| d["node_groups"]["eu"] = json!(["db-3", "db-1"])),
        json!({"group": "eu", "created": false, "removed": false,
               "from": ["db-1", "db-2", "db-3"], "to": ["db-3", "db-1"]}),
    );
    edited(
        &mut file,
        &format!("{SHOP}/apply/node-group-set/create"),
        SHOP,
        json!({"op": "node_group_set", "group": "apac", "nodes": ["db-2"]}),
        edit(&|d| d["node_groups"]["apac"] = json!(["db-2"])),
        json!({"group": "apac", "created": true, "removed": false, "from": null, "to": ["db-2"]}),
    );
    for (label, operation, code) in [
        (
            "remove-a-group-a-family-names",
            json!({"op": "node_group_set", "group": "us", "nodes": []}),
            "invalid_topology",
        ),
        ("remove-an-unknown-group", json!({"op": "node_group_set", "group": "apac", "nodes": []}), "invalid_argument"),
        ("unknown-node", json!({"op": "node_group_set", "group": "eu", "nodes": ["db-9"]}), "invalid_topology"),
        ("nodes-not-an-array", json!({"op": "node_group_set", "group": "eu", "nodes": "db-1"}), "invalid_argument"),
        ("node-twice", json!({"op": "node_group_set", "group": "eu", "nodes": ["db-1", "db-1"]}), "invalid_topology"),
    ] {
        apply_refused(&mut file, &format!("{SHOP}/apply/node-group-set/{label}"), On::Topology(SHOP), operation, code);
    }
    let moved_orders =
        json!({"tables": ["orders", "order_items", "refunds"], "group": "us", "strategy": {"type": "jump"}});
    edited(
        &mut file,
        &format!("{SHOP}/apply/table-family-set/replace"),
        SHOP,
        json!({"op": "table_family_set", "family": "orders", "entry": moved_orders}),
        edit(&|d| d["table_families"]["orders"] = moved_orders.clone()),
        json!({"family": "orders", "created": false, "tables_added": ["refunds"], "tables_removed": []}),
    );
    let rates = json!({"tables": ["fx_rates"], "group": "eu", "reference": true});
    edited(
        &mut file,
        &format!("{SHOP}/apply/table-family-set/create"),
        SHOP,
        json!({"op": "table_family_set", "family": "fx", "entry": rates}),
        edit(&|d| d["table_families"]["fx"] = rates.clone()),
        json!({"family": "fx", "created": true, "tables_added": ["fx_rates"], "tables_removed": []}),
    );
    edited(
        &mut file,
        &format!("{SHOP}/apply/table-family-remove"),
        SHOP,
        json!({"op": "table_family_remove", "family": "tax"}),
        edit(&|d| {
            d["table_families"].as_object_mut().expect("families").remove("tax");
        }),
        json!({"family": "tax", "tables": ["tax_rates"]}),
    );
    for (label, operation, code) in [
        (
            "table-in-two-families",
            json!({"op": "table_family_set", "family": "archive", "entry": {"tables": ["orders"], "reference": true}}),
            "invalid_topology",
        ),
        (
            "unknown-group",
            json!({"op": "table_family_set", "family": "fx", "entry": {"tables": ["fx"], "group": "asia", "reference": true}}),
            "invalid_topology",
        ),
        ("entry-not-an-object", json!({"op": "table_family_set", "family": "fx", "entry": ["fx"]}), "invalid_argument"),
        ("remove-unknown", json!({"op": "table_family_remove", "family": "fx"}), "invalid_argument"),
        ("unknown-field", json!({"op": "table_family_remove", "family": "tax", "tables": []}), "invalid_argument"),
    ] {
        apply_refused(&mut file, &format!("{SHOP}/apply/table-family/{label}"), On::Topology(SHOP), operation, code);
    }
    // Emptied sections leave the document: the last group goes, and with it both.
    let mut lone = doc(&["x"], json!({"type": "jump"})).with("node_groups", json!({"eu": ["db-1"]}));
    lone["nodes"] = nodes();
    let without = {
        let mut document = lone.clone();
        document.as_object_mut().expect("a document").remove("node_groups");
        document
    };
    file.topology("one-group", lone);
    let result = edited(
        &mut file,
        "one-group/apply/node-group-set/remove-the-last",
        "one-group",
        json!({"op": "node_group_set", "group": "eu", "nodes": []}),
        without,
        json!({"group": "eu", "created": false, "removed": true, "from": ["db-1"], "to": null}),
    );
    assert!(result["topology"].get("node_groups").is_none() && result["topology"].get("table_families").is_none());

    let mut bad = Refusals::of(shop());
    bad.edit("table-in-two-families", "invalid_topology", |d| {
        d["table_families"]["tax"]["tables"] = json!(["tax_rates", "orders"])
    });
    bad.edit("table-twice-in-a-family", "invalid_topology", |d| {
        d["table_families"]["events"]["tables"] = json!(["events", "events"])
    });
    bad.edit("group-unknown-node", "invalid_topology", |d| d["node_groups"]["eu"] = json!(["db-1", "db-9"]));
    bad.edit("group-node-twice", "invalid_topology", |d| d["node_groups"]["eu"] = json!(["db-1", "db-1"]));
    bad.edit("group-empty", "invalid_topology", |d| d["node_groups"]["eu"] = json!([]));
    bad.edit("group-not-an-array", "invalid_topology", |d| d["node_groups"]["eu"] = json!("db-1"));
    bad.edit("family-unknown-group", "invalid_topology", |d| d["table_families"]["events"]["group"] = json!("asia"));
    bad.edit("strategy-outside-group", "invalid_topology", |d| {
        d["table_families"]["events"]["strategy"]["ranges"] = json!(["db-5", "db-1"])
    });
    bad.edit("reference-with-strategy", "invalid_topology", |d| {
        d["table_families"]["catalog"]["strategy"] = json!({"type": "jump"})
    });
    bad.edit("no-strategy", "invalid_topology", |d| {
        d["table_families"]["events"]["strategy"] = Value::Null;
        d["table_families"]["events"].as_object_mut().expect("family").remove("strategy");
    });
    bad.edit("no-tables", "invalid_topology", |d| d["table_families"]["events"]["tables"] = json!([]));
    bad.edit("unknown-field", "invalid_topology", |d| d["table_families"]["events"]["nodes"] = json!([]));
    bad.edit("families-not-an-object", "invalid_topology", |d| d["table_families"] = json!([]));
    bad.edit("too-many-groups", "limit_exceeded", |d| {
        let many: serde_json::Map<String, Value> = (0..1025).map(|i| (format!("g{i:04}"), json!(["db-1"]))).collect();
        d["node_groups"] = Value::Object(many);
    });
    bad.edit("too-many-families", "limit_exceeded", |d| {
        let many: serde_json::Map<String, Value> =
            (0..65).map(|i| (format!("f{i:02}"), json!({"tables": [format!("t{i}")], "reference": true}))).collect();
        d["table_families"] = Value::Object(many);
    });
    bad.write(&mut file, &format!("{SHOP}/load/reject-"));
    file
}
