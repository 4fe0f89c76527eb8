//! Redis Cluster redirections (`MOVED`, `ASK`) and the multi-key helpers a smart client
//! needs (`same_slot`, `group_by_node`, `read_replica`), checked against a slot map
//! kept by hand: what the router answers after any sequence of MOVEDs is what a map
//! `slot -> master` updated the obvious way answers.

use proptest::prelude::*;
use serde_json::json;
use shardroute::strategy::compat::redis_cluster::key_slot;
use shardroute::strategy::compat::redis_cluster::redirect::{Redirect, RedirectKind};
use shardroute::{ops, Key, Router, Topology};

/// Three masters with addresses and one replica each, as `CLUSTER SHARDS` would give.
fn cluster() -> Router {
    Router::from_value(&json!({
        "format": "shardroute/1", "epoch": 5,
        "nodes": [
            {"id": "m1", "address": "127.0.0.1:7001"}, {"id": "m2", "address": "127.0.0.1:7002"},
            {"id": "m3", "address": "127.0.0.1:7003"}, {"id": "r1", "address": "127.0.0.1:7004"},
            {"id": "r2", "address": "127.0.0.1:7005"}, {"id": "r3", "address": "127.0.0.1:7006"}
        ],
        "strategy": {"type": "redis_cluster", "slots": [
            {"start": 0, "end": 5460, "nodes": ["m1", "r1"]},
            {"start": 5461, "end": 10922, "nodes": ["m2", "r2"]},
            {"start": 10923, "end": 16383, "nodes": ["m3", "r3"]}
        ]}
    }))
    .unwrap()
}

fn slots(router: &Router) -> serde_json::Value {
    let document: serde_json::Value = serde_json::from_str(&router.to_json()).unwrap();
    document["strategy"]["slots"].clone()
}

#[test]
fn redirect_lines_parse_as_clients_receive_them() {
    let moved = Redirect::parse("MOVED 3999 127.0.0.1:6381").unwrap();
    assert_eq!((moved.kind, moved.slot, moved.address.as_str()), (RedirectKind::Moved, 3999, "127.0.0.1:6381"));
    let ask = Redirect::parse("-ASK 0 [::1]:7000\r\n").unwrap();
    assert_eq!((ask.kind, ask.slot, ask.address.as_str()), (RedirectKind::Ask, 0, "[::1]:7000"));
    // A node that does not know its own host announces `:port`.
    assert_eq!(Redirect::parse("MOVED 16383 :7000").unwrap().address, ":7000");
    for bad in [
        "",
        "MOVED",
        "MOVED 1",
        "MOVED abc 127.0.0.1:1",
        "MOVED -1 127.0.0.1:1",
        "MOVED 16384 127.0.0.1:1",
        "MOVED 1 127.0.0.1",
        "MOVED 1 127.0.0.1:0",
        "MOVED 1 127.0.0.1:65536",
        "MOVED 1 127.0.0.1:1 extra",
        "moved 1 127.0.0.1:1",
        "ERR unknown command",
        "CROSSSLOT Keys in request don't hash to the same slot",
    ] {
        let err = Redirect::parse(bad).unwrap_err();
        assert_eq!(err.code(), "invalid_argument", "{bad:?}: {err}");
    }
}

#[test]
fn moved_gives_one_slot_a_new_master_and_changes_nothing_else() {
    let router = cluster();
    let slot = key_slot(Key::Bytes(b"user:1"));
    let moved = router.moved(slot, "127.0.0.1:7002").unwrap();
    assert_eq!(moved.epoch(), 6);
    assert_eq!(router.epoch(), 5, "the router moved from is unchanged");
    assert_eq!(moved.node("user:1").unwrap(), "m2");
    // Only that slot changed owner; MOVED names no replica, so the chain is the master.
    assert_eq!(moved.replicas("user:1", 1).unwrap(), ["m2"]);
    assert_eq!(moved.read_replica("user:1", 0).unwrap(), "m2");
    for other in [0, slot.saturating_sub(1), slot + 1, 5461, 16383] {
        if other != slot {
            let key = key_in_slot(other);
            assert_eq!(moved.node(key.as_str()).unwrap(), router.node(key.as_str()).unwrap(), "slot {other}");
        }
    }
}

#[test]
fn moved_to_an_unknown_address_adds_the_node_and_consecutive_slots_join() {
    let mut router = cluster();
    for slot in 100..=102 {
        router = router.moved(slot, "127.0.0.1:7010").unwrap();
    }
    assert_eq!(router.epoch(), 8);
    let added = router.nodes().last().unwrap();
    assert_eq!((added.id.as_str(), added.address.as_deref()), ("127.0.0.1:7010", Some("127.0.0.1:7010")));
    assert_eq!(router.nodes().len(), 7, "the node is added once");
    assert_eq!(
        slots(&router),
        json!([
            {"start": 0, "end": 99, "nodes": ["m1", "r1"]},
            {"start": 100, "end": 102, "nodes": ["127.0.0.1:7010"]},
            {"start": 103, "end": 5460, "nodes": ["m1", "r1"]},
            {"start": 5461, "end": 10922, "nodes": ["m2", "r2"]},
            {"start": 10923, "end": 16383, "nodes": ["m3", "r3"]}
        ])
    );
    // Moving the slots back joins the ranges again.
    for slot in 100..=102 {
        router = router.moved(slot, "127.0.0.1:7001").unwrap();
    }
    assert_eq!(slots(&router)[0], json!({"start": 0, "end": 99, "nodes": ["m1", "r1"]}));
    assert_eq!(slots(&router)[1], json!({"start": 100, "end": 102, "nodes": ["m1"]}));
}

#[test]
fn moved_is_the_redis_moved_operation() {
    let router = cluster();
    let result =
        ops::apply(router.topology(), &json!({"op": "redis_moved", "slot": 7, "address": "127.0.0.1:7003"})).unwrap();
    assert_eq!(result["slot"], 7);
    assert_eq!((result["from"].as_str(), result["to"].as_str()), (Some("m1"), Some("m3")));
    assert_eq!(result["added"], serde_json::Value::Null);
    let via_op = Topology::from_value(&result["topology"]).unwrap();
    assert_eq!(&via_op, router.moved(7, "127.0.0.1:7003").unwrap().topology());
}

#[test]
fn moved_refuses_as_the_redis_moved_operation_does() {
    // `Router::moved` makes the operation's change itself (the router sits below `ops`
    // in the module graph): its refusals must stay the operation's, word for word.
    let jump = Router::from_json(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#,
    )
    .unwrap();
    let mut last_epoch = cluster().topology().to_value();
    last_epoch["epoch"] = json!(u64::MAX.to_string());
    let last_epoch = Router::from_value(&last_epoch).unwrap();
    for router in [jump, last_epoch] {
        let via_op =
            ops::apply(router.topology(), &json!({"op": "redis_moved", "slot": 1, "address": "127.0.0.1:7001"}))
                .unwrap_err();
        assert_eq!(router.moved(1, "127.0.0.1:7001").unwrap_err(), via_op);
    }
}

#[test]
fn bad_redirects_are_refused_and_change_nothing() {
    let router = cluster();
    for (slot, address) in [(16384, "127.0.0.1:7001"), (1, "127.0.0.1"), (1, "127.0.0.1:0"), (1, "bad host:1")] {
        assert_eq!(router.moved(slot, address).unwrap_err().code(), "invalid_argument", "{slot} {address}");
        assert_eq!(router.ask(slot, address).unwrap_err().code(), "invalid_argument", "{slot} {address}");
    }
    for operation in [
        json!({"op": "redis_moved", "slot": 16384, "address": "127.0.0.1:7001"}),
        json!({"op": "redis_moved", "slot": 1}),
        json!({"op": "redis_moved", "slot": 1, "address": 7001}),
        json!({"op": "redis_moved", "slot": 1, "address": "127.0.0.1:7001", "extra": true}),
    ] {
        let err = ops::apply(router.topology(), &operation).unwrap_err();
        assert_eq!(err.code(), "invalid_argument", "{operation}: {err}");
    }
    let jump = Router::from_json(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#,
    )
    .unwrap();
    assert_eq!(jump.moved(1, "127.0.0.1:7001").unwrap_err().code(), "invalid_argument");
    assert_eq!(jump.ask(1, "127.0.0.1:7001").unwrap_err().code(), "invalid_argument");
    assert_eq!(router.epoch(), 5);
}

#[test]
fn ask_names_the_target_once_and_changes_nothing() {
    let router = cluster();
    assert_eq!(router.ask(42, "127.0.0.1:7009").unwrap(), "127.0.0.1:7009");
    assert_eq!(router.epoch(), 5);
    assert_eq!(router.nodes().len(), 6);
}

#[test]
fn same_slot_needs_a_shared_hash_tag() {
    let router = cluster();
    assert_eq!(
        router.same_slot(["{user:1}.name", "{user:1}.mail", "user:1"]).unwrap(),
        key_slot(Key::Bytes(b"user:1"))
    );
    let err = router.same_slot(["{user:1}.name", "{user:2}.name"]).unwrap_err();
    assert_eq!(err.code(), "cross_slot");
    assert!(err.message().starts_with("key 1 is in shard"), "{err}");
    assert_eq!(router.same_slot(Vec::<&str>::new()).unwrap_err().code(), "invalid_argument");
}

#[test]
fn read_replica_goes_round_the_replicas() {
    let router = cluster();
    let owner = router.node("user:1").unwrap();
    let replica = router.read_replica("user:1", 0).unwrap();
    assert_ne!(owner, replica);
    assert_eq!(router.replicas("user:1", 2).unwrap(), [owner, replica]);
    assert_eq!(router.read_replica("user:1", 7).unwrap(), replica, "one replica: every turn reads it");
    let jump = Router::from_json(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}}"#,
    )
    .unwrap();
    assert_eq!(jump.read_replica("k", 3).unwrap(), jump.node("k").unwrap(), "no chain: the owner");
}

/// A key whose slot is `slot` (searched; every slot has short keys).
fn key_in_slot(slot: u32) -> String {
    (0u64..).map(|i| format!("k{i}")).find(|key| key_slot(Key::Bytes(key.as_bytes())) == slot).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After any MOVEDs, every slot's master is what a hand-kept map says, and the
    /// table stays valid (it reads back from its own JSON).
    #[test]
    fn moved_matches_a_slot_map(moves in prop::collection::vec((0u32..16384, 0usize..8), 1..40)) {
        let addresses: Vec<String> = (7001..=7008).map(|port| format!("127.0.0.1:{port}")).collect();
        let ids = ["m1", "m2", "m3", "r1", "r2", "r3"];
        let mut router = cluster();
        let mut master: Vec<String> = (0..16384u32)
            .map(|slot| String::from(if slot <= 5460 { "m1" } else if slot <= 10922 { "m2" } else { "m3" }))
            .collect();
        for (slot, target) in moves {
            router = router.moved(slot, &addresses[target]).unwrap();
            master[slot as usize] = ids.get(target).map_or(addresses[target].clone(), |id| String::from(*id));
        }
        let reread = Router::from_json(&router.to_json()).unwrap();
        for slot in (0..16384u32).step_by(97).chain([0, 16383]) {
            let document: serde_json::Value = serde_json::from_str(&reread.to_json()).unwrap();
            let owner = document["strategy"]["slots"]
                .as_array()
                .unwrap()
                .iter()
                .find(|range| range["start"].as_u64().unwrap() <= u64::from(slot) && u64::from(slot) <= range["end"].as_u64().unwrap())
                .map(|range| range["nodes"][0].as_str().unwrap().to_string())
                .unwrap();
            prop_assert_eq!(&owner, &master[slot as usize], "slot {}", slot);
        }
    }

    /// Grouping by node puts every key in exactly one group, the group of its node, in
    /// input order, groups in node order.
    #[test]
    fn group_by_node_partitions_the_keys(keys in prop::collection::vec("[a-z{}:0-9]{0,12}", 0..200)) {
        let router = cluster();
        let groups = router.group_by_node(keys.iter().map(String::as_str)).unwrap();
        let mut seen = vec![false; keys.len()];
        prop_assert!(groups.windows(2).all(|pair| pair[0].0 < pair[1].0));
        for (node, members) in &groups {
            prop_assert!(members.windows(2).all(|pair| pair[0] < pair[1]));
            for &index in members {
                prop_assert!(!seen[index as usize]);
                seen[index as usize] = true;
                prop_assert_eq!(router.node_index(keys[index as usize].as_str()).unwrap(), *node);
            }
        }
        prop_assert!(seen.iter().all(|&found| found));
    }
}
