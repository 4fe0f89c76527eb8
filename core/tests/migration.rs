//! Migrations between two topologies: what moves (checked against `diff`, the
//! key-by-key listing), where services read and write, and the units a copy job moves.

use serde_json::json;
use shardroute::diff::diff;
use shardroute::migration::Migration;
use shardroute::{ops, Key, Router, Topology};

/// The 1-based `id % n ?: n` over servers `shard_1..shard_n`, integer user ids as their
/// own hash.
fn seed(servers: u32, epoch: u64) -> Router {
    let nodes: Vec<_> = (1..=servers).map(|i| json!({"id": format!("shard_{i}")})).collect();
    Router::from_value(&json!({"format": "shardroute/1", "epoch": epoch, "hashing": {"integers": "identity"},
        "nodes": nodes, "strategy": {"type": "modulo", "one_based": true}}))
    .unwrap()
}

#[test]
fn five_to_ten_moves_what_diff_lists() {
    let migration = Migration::new(seed(5, 1), seed(10, 2)).unwrap();
    let users: Vec<u64> = (1..=5000).collect();
    let listed = diff(migration.before(), migration.after(), users.iter().map(|&u| Key::U64(u)), true).unwrap();
    let moving = migration.moving_keys(users.iter().map(|&u| Key::U64(u))).unwrap();
    assert_eq!(moving.len() as u64, listed.moved);
    // Half the users move: those whose id % 10 is 6..9 or 0 (to shards 6..10).
    assert_eq!(moving.len(), 2500);
    for (index, entry) in listed.keys.iter().flatten().enumerate() {
        let user = users[index];
        let moves = migration.moves(user).unwrap();
        assert_eq!(moves.is_some(), entry.moved());
        assert_eq!(migration.write_target(user).unwrap(), entry.new_node);
        let expected =
            if entry.moved() { vec![&entry.old_node[..], &entry.new_node[..]] } else { vec![&entry.new_node[..]] };
        assert_eq!(migration.read_targets(user, false).unwrap(), expected);
        assert_eq!(migration.read_targets(user, true).unwrap(), [&entry.new_node[..]]);
        assert_eq!(moving.binary_search(&(index as u32)).is_ok(), entry.moved());
    }
    assert_eq!(migration.moving_shards().unwrap_err().code(), "invalid_argument");
}

#[test]
fn a_migration_goes_forward() {
    assert_eq!(Migration::new(seed(10, 2), seed(5, 2)).unwrap_err().code(), "stale_epoch");
    assert_eq!(Migration::new(seed(10, 3), seed(5, 2)).unwrap_err().code(), "stale_epoch");
}

#[test]
fn a_dictionary_in_motion_lists_its_moving_vbuckets() {
    let nodes: Vec<_> = (1..=5).map(|i| json!({"id": format!("shard_{i}")})).collect();
    let start = Topology::from_value(&json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes,
        "strategy": {"type": "vbucket", "vbuckets": 256}}))
    .unwrap();
    let added: Vec<_> = (6..=10).map(|i| json!({"id": format!("shard_{i}")})).collect();
    let result = ops::apply(&start, &json!({"op": "plan_rebalance", "add": added})).unwrap();
    let moving = Router::from_value(&result["topology"]).unwrap();
    let migration = Migration::of_dictionary(&moving).unwrap();
    assert_eq!((migration.before().epoch(), migration.after().epoch()), (2, 3));
    let shards = migration.moving_shards().unwrap();
    let document = &result["topology"]["strategy"];
    let changed: Vec<u32> =
        (0..256u32).filter(|&v| document["map"][v as usize][0] != document["forward_map"][v as usize][0]).collect();
    assert_eq!(shards.iter().map(|s| s.shard).collect::<Vec<_>>(), changed);
    // The planner moves the lower bound: the new nodes' share, 128 of 256.
    assert_eq!(shards.len(), result["moved_actives"].as_u64().unwrap() as usize);
    for shard in &shards {
        assert_eq!(shard.from, document["map"][shard.shard as usize][0]);
        assert_eq!(shard.to, document["forward_map"][shard.shard as usize][0]);
        assert!(shard.to.as_bytes() >= b"shard_6".as_slice() || shard.to == "shard_10");
    }
    // A key of a moving vbucket reads old then new until it has moved.
    let key = (0u64..)
        .map(|i| format!("user:{i}"))
        .find(|k| shards.iter().any(|s| s.shard == moving.route(k.as_str()).unwrap()))
        .unwrap();
    let (from, to) = migration.moves(key.as_str()).unwrap().unwrap();
    assert_eq!(migration.read_targets(key.as_str(), false).unwrap(), [from, to]);
    assert_eq!(Migration::of_dictionary(migration.after()).unwrap_err().code(), "invalid_argument");
}

/// A placed tenant's keys move when its group changes, though the strategy's own moves
/// (jump over the same three nodes) say nothing does: `scan_nodes` must then read a node
/// a key leaves before the node it goes to.
#[cfg(feature = "tables")]
#[test]
fn scan_nodes_reads_a_placed_tenants_move_in_order() {
    let doc = |epoch: u64, group: &str| {
        json!({"format": "shardroute/1", "epoch": epoch, "strategy": {"type": "jump"},
            "hashing": {"partition_key": {"rule": "prefix", "separator": ":"}},
            "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
            "node_groups": {"eu": [group]},
            "tenants": {"entries": {"acme": {"group": "eu"}}}})
        .to_string()
    };
    let migration =
        Migration::new(Router::from_json(&doc(1, "c")).unwrap(), Router::from_json(&doc(2, "a")).unwrap()).unwrap();
    let key = "acme:order:1";
    assert_eq!(migration.moves(Key::from(key)).unwrap(), Some(("c", "a")));
    let order = migration.scan_nodes();
    let c = order.iter().position(|&node| node == "c").expect("c is read");
    assert!(order[c + 1..].contains(&"a"), "a read after c: {order:?}");
}

/// A background copy moves whole vbuckets whose owner changes. When keys change vbucket
/// between the two documents (another hashing, other tenant entries, other overrides), no
/// vbucket changes owner, the copy would move nothing and mark everything moved, and
/// reads would then miss every key left on its old node: such a session is refused, and
/// the lazy one (which moves key by key) is not.
#[test]
fn a_background_copy_is_refused_when_keys_change_vbucket() {
    use shardroute::session::migration::{MigrationSession, Mode};
    let owners = ["a", "b", "c"];
    let map: Vec<serde_json::Value> = (0..16).map(|v| json!([owners[v % 3]])).collect();
    let doc = |epoch: u64, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut document = json!({"format": "shardroute/1", "epoch": epoch,
            "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
            "hashing": {"partition_key": {"rule": "prefix", "separator": ":"}},
            "strategy": {"type": "vbucket", "vbuckets": 16, "map": map}});
        edit(&mut document);
        Router::from_value(&document).unwrap()
    };
    type Change = fn(&mut serde_json::Value);
    let mut changes: Vec<(&str, Change)> = vec![
        ("hashing", |d| d["hashing"]["seed"] = json!("0f0e0d0c0b0a09080706050403020100")),
        ("overrides", |d| d["strategy"]["overrides"] = json!([{"key": {"utf8": "t1"}, "vbucket": 5}])),
    ];
    if cfg!(feature = "tables") {
        changes.push(("tenant", |d| d["tenants"] = json!({"entries": {"t1": {"shards": 4}}})));
    }
    for (what, change) in &changes {
        let migration = Migration::new(doc(1, &|_| {}), doc(2, change)).unwrap();
        assert_eq!(migration.moving_shards().unwrap(), vec![], "{what}: no vbucket changes owner");
        assert!(migration.units_differ().is_some(), "{what}");
        let err = MigrationSession::new(migration.clone(), Mode::Background).unwrap_err();
        assert_eq!(err.code(), "invalid_argument", "{what}");
        assert!(err.message().contains("lazy"), "{what}: {}", err.message());
        MigrationSession::new(migration, Mode::Lazy).unwrap();
    }
    let same = Migration::new(doc(1, &|_| {}), doc(2, &|d| d["strategy"]["map"][0] = json!(["b"]))).unwrap();
    assert_eq!(same.units_differ(), None);
    assert_eq!(MigrationSession::new(same, Mode::Background).unwrap().mode(), Mode::Background);
}

/// A family's rows move by a migration of its two routers (`table(name)` of each
/// document): widening its group with `node_group_set` moves keys only onto the new
/// node, under the next epoch, and the lazy steps say so.
#[cfg(feature = "tables")]
#[test]
fn a_widened_familys_rows_move_by_a_migration_of_its_routers() {
    use shardroute::session::migration::{MigrationSession, Mode};
    let document = json!({"format": "shardroute/1", "epoch": 1, "strategy": {"type": "jump"},
        "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}],
        "node_groups": {"eu": ["a", "b"]},
        "table_families": {"orders": {"tables": ["orders"], "group": "eu", "strategy": {"type": "jump"}}}});
    let next = ops::apply(
        &Topology::from_value(&document).unwrap(),
        &json!({"op": "node_group_set", "group": "eu", "nodes": ["a", "b", "c"]}),
    )
    .unwrap();
    let before = Router::from_value(&document).unwrap().table("orders").unwrap().clone();
    let after = Router::from_value(&next["topology"]).unwrap().table("orders").unwrap().clone();
    let session = MigrationSession::new(Migration::new(before.clone(), after.clone()).unwrap(), Mode::Lazy).unwrap();
    let mut moved = 0;
    for i in 0..3000 {
        let key = format!("customer:{i}");
        match session.lazy_steps(key.as_str()).unwrap() {
            Some(steps) => {
                // Jump over 2 -> 3 buckets moves keys only into the new one.
                assert_eq!(steps.write_to, "c");
                assert_eq!(steps.read_from, before.node(key.as_str()).unwrap());
                assert_eq!(steps.fence_epoch, 2);
                moved += 1;
            }
            None => assert_eq!(before.node(key.as_str()).unwrap(), after.node(key.as_str()).unwrap()),
        }
    }
    // About a third (jump's 1/3), well inside 25%..42% for 3,000 keys.
    assert!((750..1260).contains(&moved), "{moved} of 3000 moved");
}
