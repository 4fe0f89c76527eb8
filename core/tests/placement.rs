//! `locate` with placement name templates, and hot-key salting.

mod common;

use common::doc;
use serde_json::{json, Value};
use shardroute::{OwnedKey, Router};

/// Three databases over jump, with one more top-level field (`placement`, `hot_keys`).
fn router(field: &str, value: Value) -> Router {
    doc(json!([{"id": "db-a", "address": "10.0.0.1:5432", "zone": "z1"}, {"id": "db-b"}, {"id": "db-c"}]))
        .strategy(json!({"type": "jump"}))
        .with(field, value)
        .router()
}

#[test]
fn locate_renders_every_template_for_the_keys_shard() {
    let r =
        router("placement", json!({"database": "db_{shard}", "table": "comments_{shard:03}", "dsn": "{node}/{{x}}"}));
    for key in ["user:1", "user:2", "user:3", "user:4"] {
        let location = r.locate(key).unwrap();
        let shard = r.route(key).unwrap();
        assert_eq!(location.shard, shard);
        assert_eq!(location.node, r.node(key).unwrap());
        let names: Vec<(&str, String)> = location.names.clone();
        assert_eq!(
            names,
            vec![
                ("database", format!("db_{shard}")),
                ("dsn", format!("{}/{{x}}", location.node)),
                ("table", format!("comments_{shard:03}")),
            ]
        );
        let node = &r.nodes()[shard as usize];
        assert_eq!(location.address, node.address.as_deref());
        assert_eq!(location.zone, node.zone.as_deref());
    }
    let canonical = Router::from_json(&r.to_json()).unwrap();
    assert_eq!(canonical.to_json(), r.to_json());
}

#[test]
fn bad_templates_are_rejected_when_the_document_loads() {
    for (template, why) in [
        ("db_{shards}", "unknown placeholder"),
        ("db_{shard", "unclosed"),
        ("db_}", "unmatched"),
        ("t_{shard:021}", "unknown placeholder"),
    ] {
        let placed = doc(&["a"]).strategy(json!({"type": "jump"})).with("placement", json!({"table": template}));
        let err = placed.load().unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
        assert!(err.message().starts_with("placement.table: ") && err.message().contains(why), "{err}");
    }
}

#[test]
fn hot_keys_spread_over_their_fanout_and_others_stay_whole() {
    let r = router("hot_keys", json!({"keys": {"celebrity": 8, "trend": 2}}));
    assert_eq!(r.fanout("celebrity"), 8);
    assert_eq!(r.fanout("nobody"), 1);
    assert_eq!(r.fanout(7u64), 1);
    assert_eq!(r.salted_key("celebrity", 3), OwnedKey::Bytes(b"celebrity#3".to_vec()));
    assert_eq!(
        r.salted_key("celebrity", 11),
        OwnedKey::Bytes(b"celebrity#3".to_vec()),
        "salt is taken modulo the fanout"
    );
    assert_eq!(r.salted_key("nobody", 5), OwnedKey::Bytes(b"nobody".to_vec()));
    assert_eq!(r.salted_key(9u64, 5), OwnedKey::U64(9));
    let reads = r.salted_keys("celebrity").unwrap();
    assert_eq!(reads.len(), 8);
    for (salt, (key, shard)) in reads.iter().enumerate() {
        assert_eq!(key, &OwnedKey::Bytes(format!("celebrity#{salt}").into_bytes()));
        assert_eq!(*shard, r.route(key.as_key()).unwrap());
    }
    let distinct: std::collections::BTreeSet<u32> = reads.iter().map(|(_, shard)| *shard).collect();
    assert!(distinct.len() > 1, "eight salted keys over three nodes land on more than one");
    assert_eq!(
        r.salted_keys("nobody").unwrap(),
        vec![(OwnedKey::Bytes(b"nobody".to_vec()), r.route("nobody").unwrap())]
    );
}

#[test]
fn hot_key_documents_are_validated() {
    for (hot, code) in [
        (json!({"keys": {"k": 0}}), "invalid_topology"),
        (json!({"keys": {"k": 2000}}), "limit_exceeded"),
        (json!({"keys": ["k"]}), "invalid_topology"),
        (json!({"separator": 1, "keys": {}}), "invalid_topology"),
        (json!({"keys": {"k": 2}, "fanout": 3}), "invalid_topology"),
    ] {
        let hot_doc = doc(&["a"]).strategy(json!({"type": "jump"})).with("hot_keys", hot.clone());
        assert_eq!(hot_doc.load().unwrap_err().code(), code, "{hot}");
    }
}
