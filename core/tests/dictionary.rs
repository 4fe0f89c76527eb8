//! The vbucket dictionary: rebalance operations, routing during migration, epochs,
//! vbucket count changes, checksums and the binary encoding.

mod common;

use common::doc;
use serde_json::{json, Value};
use shardroute::{dictionary, ops, Router, Topology};

fn dictionary(nodes: usize, vbuckets: u32, replicas: u32) -> Topology {
    let ids: Vec<Value> = (0..nodes).map(|i| json!({"id": format!("n{i}"), "zone": format!("z{}", i % 2)})).collect();
    doc(json!(ids))
        .strategy(json!({"type": "vbucket", "vbuckets": vbuckets, "replicas": replicas}))
        .epoch(10)
        .topology()
}

fn apply(topology: &Topology, operation: Value) -> (Topology, Value) {
    let result = ops::apply(topology, &operation).unwrap_or_else(|err| panic!("{operation}: {err}"));
    (Topology::from_value(&result["topology"]).unwrap(), result)
}

fn keys() -> Vec<String> {
    (0..5000).map(|i| format!("key:{i}")).collect()
}

#[test]
fn adding_a_node_moves_exactly_its_quota_and_routes_writes_to_both_owners_meanwhile() {
    let before = dictionary(4, 1024, 1);
    let (during, report) =
        apply(&before, json!({"op": "plan_rebalance", "add": [{"id": "n4", "zone": "z0"}], "max_moves_per_node": 4}));
    assert_eq!(during.epoch, 11);
    assert!(during.checksummed);
    // Quota of the new node: 1024 / 5 rounded by largest remainder = 205 (the first 4 nodes get 205, 205, 205, 205? sum 1024).
    let quota = report["quota"].as_object().unwrap();
    let total: u64 = quota.values().map(|q| q.as_u64().unwrap()).sum();
    assert_eq!(total, 1024);
    assert_eq!(report["moved_actives"], report["lower_bound"]);
    assert_eq!(report["moved_actives"], quota["n4"]);
    let old = Router::new(before.clone()).unwrap();
    let mid = Router::new(during.clone()).unwrap();
    for key in keys() {
        let key = key.as_str();
        // Plain routing follows the current map: nothing has moved yet.
        assert_eq!(mid.node(key).unwrap(), old.node(key).unwrap());
        assert_eq!(mid.route_read(key).unwrap(), old.node(key).unwrap());
        let writes = mid.route_write(key).unwrap();
        assert_eq!(writes.last().copied().unwrap(), old.node(key).unwrap(), "the old owner always gets the write");
        assert!(writes.len() == 1 || writes[0] == "n4", "only moves onto the new node are in flight: {writes:?}");
    }
    let (after, done) = apply(&during, json!({"op": "complete_moves"}));
    assert_eq!(after.epoch, 12);
    assert_eq!(done["remaining"], 0);
    let new = Router::new(after.clone()).unwrap();
    let mut moved = 0;
    for key in keys() {
        let (a, b) = (old.node(key.as_str()).unwrap(), new.node(key.as_str()).unwrap());
        if a != b {
            assert_eq!(b, "n4", "keys move only onto the new node");
            moved += 1;
        }
        assert_eq!(new.route_write(key.as_str()).unwrap(), vec![b]);
    }
    assert!((800..1200).contains(&moved), "about 1/5 of 5000 keys: {moved}");
    let document = after.to_value();
    assert!(document["strategy"].get("forward_map").is_none() && document["strategy"].get("states").is_none());
}

#[test]
fn a_failed_node_is_served_by_promoted_replicas_at_once_then_leaves() {
    let before = dictionary(4, 64, 1);
    let (during, report) = apply(&before, json!({"op": "plan_rebalance", "fail": ["n1"]}));
    let mid = Router::new(during.clone()).unwrap();
    assert_eq!(mid.nodes()[1].state, shardroute::NodeState::Failed);
    let promotions = report["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "promotion" && m["role"] == "active")
        .count();
    assert!(promotions > 0);
    // Every promoted vbucket already routes to its promoted replica.
    for mv in report["moves"].as_array().unwrap().iter().filter(|m| m["kind"] == "promotion" && m["role"] == "active") {
        let vbucket = mv["vbucket"].as_u64().unwrap() as usize;
        assert_eq!(during.to_value()["strategy"]["map"][vbucket][0], mv["to"]);
    }
    let (after, done) = apply(&during, json!({"op": "complete_moves"}));
    assert_eq!(done["removed_nodes"], json!(["n1"]));
    let ids: Vec<&str> = after.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["n0", "n2", "n3"]);
    Router::new(after).unwrap();
}

#[test]
fn read_only_vbuckets_refuse_writes_and_serve_reads() {
    let router = doc(&["a", "b"])
        .strategy(json!({"type": "vbucket", "vbuckets": 2, "map": [["a"], ["b"]], "states": {"0": "read_only", "1": "active"}}))
        .router();
    let key = (0..100).map(|i| format!("k{i}")).find(|k| router.route(k.as_str()).unwrap() == 0).unwrap();
    assert_eq!(router.route_read(key.as_str()).unwrap(), "a");
    assert_eq!(router.route_write(key.as_str()).unwrap_err().code(), "read_only");
    assert!(!router.to_json().contains("\"1\""), "active states are not written: {}", router.to_json());
    let migrating_without_forward =
        doc(&["a"]).strategy(json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]], "states": {"0": "migrating"}}));
    assert_eq!(migrating_without_forward.load().unwrap_err().code(), "invalid_topology");
}

#[test]
fn replacing_needs_a_newer_epoch() {
    let current = Router::new(dictionary(3, 16, 0)).unwrap();
    let older = Router::new(Topology { epoch: 9, ..dictionary(3, 16, 0) }).unwrap();
    let err = current.replace(older).unwrap_err();
    assert_eq!(err.code(), "stale_epoch");
    assert!(err.message().contains("holds epoch 10"), "{err}");
    let same_epoch_other_content = Router::new(dictionary(4, 16, 0)).unwrap();
    assert_eq!(current.replace(same_epoch_other_content).unwrap_err().code(), "stale_epoch");
    assert_eq!(current.replace(Router::new(dictionary(3, 16, 0)).unwrap()).unwrap().epoch(), 10);
    assert_eq!(
        current.replace(Router::new(Topology { epoch: 11, ..dictionary(4, 16, 0) }).unwrap()).unwrap().epoch(),
        11
    );
}

#[test]
fn doubling_and_halving_move_no_key() {
    let before = dictionary(5, 128, 2);
    let (doubled, _) = apply(&before, json!({"op": "vbucket_double"}));
    let (halved, _) = apply(&doubled, json!({"op": "vbucket_halve"}));
    let a = Router::new(before).unwrap();
    let b = Router::new(doubled).unwrap();
    let c = Router::new(halved).unwrap();
    assert_eq!(b.shard_range().end, 256);
    for key in keys() {
        let key = key.as_str();
        assert_eq!(a.replicas(key, 3).unwrap(), b.replicas(key, 3).unwrap());
        assert_eq!(a.route(key).unwrap(), c.route(key).unwrap());
        assert_eq!(b.route(key).unwrap() % 128, a.route(key).unwrap());
    }
    // Halving is refused once a pair is split.
    let (moved, _) = apply(&dictionary(5, 4, 0), json!({"op": "vbucket_double"}));
    let mut document = moved.to_value();
    document["strategy"]["map"][5] = json!(["n4"]);
    document["checksum"] = Value::Null;
    let split = Topology::from_value(&document).unwrap();
    assert_eq!(ops::apply(&split, &json!({"op": "vbucket_halve"})).unwrap_err().code(), "invalid_argument");
}

#[test]
fn checksums_catch_edits_and_truncation() {
    let (during, _) = apply(&dictionary(4, 32, 1), json!({"op": "plan_rebalance", "add": [{"id": "n4"}]}));
    let text = during.to_value().to_string();
    assert!(text.contains("\"checksum\":\"xxh64:"));
    assert_eq!(Topology::from_json(&text).unwrap(), during);
    let edited = text.replacen("\"n4\"", "\"n3\"", 1).replacen("\"id\":\"n3\"", "\"id\":\"nX\"", 1);
    let err = Topology::from_json(&edited).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    let epoch_bumped = text.replace("\"epoch\":11", "\"epoch\":12");
    assert!(Topology::from_json(&epoch_bumped).unwrap_err().message().starts_with("checksum:"));
}

#[test]
fn the_binary_form_round_trips_and_refuses_damage() {
    let (during, _) =
        apply(&dictionary(4, 1024, 1), json!({"op": "plan_rebalance", "add": [{"id": "n4"}], "fail": ["n2"]}));
    let wide_ids: Vec<Value> = (0..300).map(|i| json!({"id": format!("node-{i}"), "weight": 1 + i % 3})).collect();
    let wide = doc(json!(wide_ids))
        .strategy(json!({"type": "vbucket", "vbuckets": 600, "replicas": 2}))
        .epoch(3)
        .hashing(json!({"function": "crc32", "hash_tag": "redis"}))
        .with("placement", json!({"bucket": "b_{shard:04}"}))
        .with("hot_keys", json!({"keys": {"hot": 4}}))
        .topology();
    let (wide_explicit, _) = apply(&wide, json!({"op": "plan_rebalance"}));
    for topology in [dictionary(4, 1024, 1), during, wide, wide_explicit] {
        let bytes = dictionary::encode(&topology).unwrap();
        let back = dictionary::decode(&bytes).unwrap();
        assert_eq!(back, topology);
        assert_eq!(back.to_json(), topology.to_json());
        for index in [0, 5, bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[index] ^= 0x40;
            assert_eq!(dictionary::decode(&damaged).unwrap_err().code(), "invalid_topology");
        }
        assert_eq!(dictionary::decode(&bytes[..bytes.len() - 3]).unwrap_err().code(), "invalid_topology");
    }
    let jump = doc(&["a"]).strategy(json!({"type": "jump"})).topology();
    assert_eq!(dictionary::encode(&jump).unwrap_err().code(), "invalid_argument");
}
