//! Hostile Redis Cluster replies and redirect streams (issue 34, findings 1, 6 and 7):
//! each input is built here, as a fake node would send it, and each test asserts what
//! the core does with it — refused with the code, or accepted with a bounded table —
//! never how long it took.
//!
//! On the code before the fix: the 974 KB `CLUSTER SHARDS` reply copied its 1,001-id
//! chain once per slot pair before any check (tens of GB: the process aborts);
//! 100,000 nodes were accepted one linear id scan at a time and refused only at the
//! end; 8,000 MOVEDs of one slot left 8,006 nodes in the session's table; `scatter` of
//! a million keys on a million vbuckets inserted each shard into a sorted vector; and
//! empty or 2,000-byte node ids were installed, so `to_json()` did not load back.

use serde_json::{json, Value};
use shardroute::ops;
use shardroute::scatter::{ReadFrom, Scope};
use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
use shardroute::strategy::compat::redis_cluster::import::{read_shards, read_slots};
use shardroute::strategy::compat::redis_cluster::key_slot;
use shardroute::{Key, Router, Topology};

/// A 40-hex-digit node id, as a real server writes it.
fn id(n: u32) -> String {
    format!("{n:040x}")
}

fn node(n: u32, role: &str) -> Value {
    json!({"id": id(n), "port": 7000 + (n % 50_000), "ip": "127.0.0.1", "endpoint": "127.0.0.1",
           "role": role, "replication-offset": 0, "health": "online"})
}

/// A shard of `CLUSTER SHARDS`: its slot pairs (as `[start, end]` lists) and nodes.
fn shard(pairs: &[(u32, u32)], nodes: Vec<Value>) -> Value {
    let slots: Vec<Value> = pairs.iter().map(|&(start, end)| json!([start, end])).collect();
    json!({"slots": slots, "nodes": nodes})
}

/// Three masters splitting the slots, one replica each.
fn three() -> Value {
    json!([
        shard(&[(0, 5460)], vec![node(1, "master"), node(4, "replica")]),
        shard(&[(5461, 10922)], vec![node(2, "master"), node(5, "replica")]),
        shard(&[(10923, 16383)], vec![node(3, "master"), node(6, "replica")]),
    ])
}

fn topology() -> Topology {
    Topology::from_json(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "x"}], "strategy": {"type": "modulo"}}"#,
    )
    .unwrap()
}

fn import(op: &str, reply: Value) -> shardroute::Result<Value> {
    ops::apply(&topology(), &json!({"op": op, "reply": reply}))
}

fn code<T: core::fmt::Debug>(result: shardroute::Result<T>) -> (&'static str, String) {
    let err = result.unwrap_err();
    (err.code(), err.message().to_string())
}

/// The reply of finding 1: one shard, a master and 1,000 replicas, the slot pair
/// `[0, 0]` listed 100,000 times (or its flat form: 200,000 zeros).
fn finding_one_reply(flat_slots: bool) -> Value {
    let mut nodes = vec![node(0, "master")];
    nodes.extend((1..=1000).map(|n| node(n, "replica")));
    let slots: Vec<Value> =
        if flat_slots { vec![json!(0); 200_000] } else { (0..100_000).map(|_| json!([0, 0])).collect() };
    json!([{"slots": slots, "nodes": nodes}])
}

#[test]
fn a_shard_listing_one_slot_pair_100000_times_is_refused_before_any_copy() {
    for flat in [false, true] {
        let reply = finding_one_reply(flat);
        // Over half a megabyte of JSON (974 KB as the finding's fake node wrote it).
        assert!(serde_json::to_string(&reply).unwrap().len() > 500_000);
        let (code_, message) = code(read_shards(&reply));
        assert_eq!(code_, "limit_exceeded", "{message}");
        assert!(message.starts_with("operation.reply[0].slots: 100000 slot ranges"), "{message}");
        let (code_, _) = code(import("import_redis_cluster_shards", reply.clone()));
        assert_eq!(code_, "limit_exceeded");
        // Through the session: refused, no table installed.
        let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
        assert_eq!(session.refreshed(&reply, 1).unwrap_err().code(), "invalid_argument");
        assert!(session.router().is_none());
    }
}

#[test]
fn overlapping_slot_pairs_are_refused_at_the_pair_that_overlaps() {
    let reply = json!([shard(&[(0, 16383), (0, 0)], vec![node(0, "master")])]);
    let (code_, message) = code(read_shards(&reply));
    assert_eq!(code_, "invalid_argument");
    assert_eq!(message, "operation.reply[0].slots[1]: slots 0..=0 overlap an earlier range (slot 0 is listed twice)");
    // Across shards, and in CLUSTER SLOTS.
    let reply = json!([shard(&[(0, 100)], vec![node(0, "master")]), shard(&[(100, 16383)], vec![node(1, "master")])]);
    assert!(code(read_shards(&reply)).1.starts_with("operation.reply[1].slots[0]: slots 100..=16383 overlap"));
    let slots = json!([[0, 16383, ["h", 1, id(1)]], [5, 5, ["h", 2, id(2)]]]);
    assert_eq!(
        code(read_slots(&slots)).1,
        "operation.reply[1]: slots 5..=5 overlap an earlier range (slot 5 is listed twice)"
    );
    // An end below its start.
    let reply = json!([shard(&[(10, 5)], vec![node(0, "master")])]);
    assert_eq!(code(read_shards(&reply)).0, "invalid_argument");
    // More CLUSTER SLOTS entries than slots: refused before one is read.
    let entries: Vec<Value> = (0..16_385).map(|_| json!([0, 0, ["h", 1, id(1)]])).collect();
    let (code_, message) = code(import("import_redis_cluster_slots", Value::Array(entries)));
    assert_eq!(
        (code_, message.as_str()),
        (
            "limit_exceeded",
            "operation.reply: 16385 slot ranges, 0 before them; a reply has at most 16384 (one per slot)"
        )
    );
}

#[test]
fn one_chain_per_shard_however_many_slot_pairs_share_it() {
    // A master and 1,000 replicas with every slot as its own pair: 16,384 ranges that
    // share one stored chain (before the fix: 16,384 copies of 1,001 ids, 1.3 GB).
    let pairs: Vec<(u32, u32)> = (0..16_384).map(|slot| (slot, slot)).collect();
    let mut nodes = vec![node(0, "master")];
    nodes.extend((1..=1000).map(|n| node(n, "replica")));
    let reply = json!([shard(&pairs, nodes)]);
    let read = read_shards(&reply).unwrap();
    assert_eq!((read.nodes.len(), read.chains.len(), read.ranges.len()), (1001, 1, 16_384));
    assert_eq!(read.chains[0].len(), 1001);
    assert_eq!(read.chain_ids(0).next(), Some(id(0).as_str()));
    // A chain past 1 master + 15 replicas is a limit, refused before the ranges are built.
    let (code_, message) = code(import("import_redis_cluster_shards", reply));
    assert_eq!(code_, "limit_exceeded", "{message}");
    assert!(message.contains("1001 nodes; at most 16 per range"), "{message}");
}

#[test]
fn node_count_is_checked_as_nodes_are_read() {
    // 100,000 nodes in one shard: refused at the 65,537th, naming it.
    let mut nodes = vec![node(0, "master")];
    nodes.extend((1..100_000).map(|n| node(n, "replica")));
    let reply = json!([shard(&[(0, 16383)], nodes)]);
    let (code_, message) = code(read_shards(&reply));
    assert_eq!(code_, "limit_exceeded");
    assert!(message.starts_with("operation.reply[0].nodes[65536]: more than 65536 nodes"), "{message}");
    // Duplicates are found by a map, and named.
    let reply = json!([shard(&[(0, 16383)], vec![node(0, "master"), node(1, "replica"), node(0, "replica")])]);
    assert_eq!(
        code(read_shards(&reply)).1,
        format!("operation.reply[0].nodes[2].id: node {:?} is listed twice", id(0))
    );
}

#[test]
fn sixty_thousand_nodes_refresh_and_list_each_candidate_once() {
    // 16,384 one-slot masters and 43,616 slot-less shards: 60,000 nodes, every one a
    // refresh candidate (before the fix: a linear scan per node, per refresh).
    let mut shards: Vec<Value> =
        (0..16_384u32).map(|slot| shard(&[(slot, slot)], vec![node(slot, "master")])).collect();
    shards.extend((16_384..60_000u32).map(|n| shard(&[], vec![node(n, "master")])));
    let reply = Value::Array(shards);
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    session.refreshed(&reply, 1).unwrap();
    assert_eq!(session.router().unwrap().nodes().len(), 60_000);
    // 50,000 distinct ports, the seed among them.
    assert_eq!(session.refresh_candidates().len(), 50_000);
    assert_eq!(session.refresh_candidates().len(), 50_000);
}

#[test]
fn eight_thousand_moveds_of_one_slot_leave_a_bounded_node_table() {
    // No throttled refresh in between: every command is sent at once.
    let config = ClusterConfig { refresh_interval_ms: 1 << 40, ..ClusterConfig::default() };
    let mut session = ClusterSession::new(&["127.0.0.1:7001"], config).unwrap();
    session.refreshed(&three(), 0).unwrap();
    let key = Key::from("user:1");
    let slot = key_slot(key);
    for (now, n) in (1u64..).zip(0..8_000u32) {
        let mut command = session.command(&[key], Access::Write, now).unwrap();
        assert!(matches!(session.poll(&mut command, now), Action::Send(_)));
        let address = format!("10.{}.{}.{}:6379", n >> 16, (n >> 8) & 0xff, n & 0xff);
        match session.failed(&mut command, &format!("MOVED {slot} {address}"), &[], now) {
            Action::Send(target) => assert_eq!(target.endpoint.address(), address),
            other => panic!("MOVED {n}: {other:?}"),
        }
    }
    // The six nodes of the refresh and the slot's last owner; the 7,999 owners before it
    // served nothing and left (before the fix: 8,006 nodes).
    let router = session.router().unwrap();
    assert_eq!(router.nodes().len(), 7);
    assert_eq!(session.endpoints().len(), 7);
    assert_eq!(session.stats().moved, 8_000);
    // The table routes the slot to its last owner, and its document loads back.
    assert_eq!(router.shard_owner(slot).unwrap(), "10.0.31.63:6379");
    Router::from_json(&router.to_json()).unwrap();
}

#[test]
fn a_moved_keeps_nodes_that_still_serve_a_range() {
    let mut session = ClusterSession::new(&["127.0.0.1:7001"], ClusterConfig::default()).unwrap();
    session.refreshed(&three(), 0).unwrap();
    // Slot 0 moves from node 1 (which keeps 1..=5460) to a new node, then to another:
    // node 1 and its replica stay, the first new node leaves.
    let zero = (0u64..).find(|&k| key_slot(Key::U64(k)) == 0).unwrap();
    for (now, address) in [(1u64, "10.0.0.1:6379"), (2, "10.0.0.2:6379")] {
        let mut command = session.command(&[Key::U64(zero)], Access::Write, now).unwrap();
        assert_eq!(command.slot(), 0);
        session.poll(&mut command, now);
        session.failed(&mut command, &format!("MOVED 0 {address}"), &[], now);
    }
    let router = session.router().unwrap();
    let ids: Vec<&str> = router.nodes().iter().map(|node| node.id.as_str()).collect();
    assert_eq!(ids.len(), 7);
    assert!(ids.contains(&id(1).as_str()) && ids.contains(&id(4).as_str()));
    assert!(!ids.contains(&"10.0.0.1:6379") && ids.contains(&"10.0.0.2:6379"));
    assert_eq!(router.shard_owner(1).unwrap(), id(1));
    assert_eq!(router.shard_owner(0).unwrap(), "10.0.0.2:6379");
}

#[test]
fn scatter_of_a_million_keys_on_a_million_vbuckets_in_adversarial_order() {
    let router = Router::from_json(
        r#"{"format": "shardroute/1", "epoch": 1, "hashing": {"integers": "identity"},
            "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "vbucket", "vbuckets": 1048576}}"#,
    )
    .unwrap();
    // Keys whose shards fall in decreasing order: each new shard sorts before every
    // shard seen so far (the worst case of an insert into a sorted vector).
    let mut keyed: Vec<(u32, u64)> = (0..1_000_000u64).map(|k| (router.route(Key::U64(k)).unwrap(), k)).collect();
    keyed.sort_unstable_by(|a, b| b.cmp(a));
    let keys: Vec<Key<'_>> = keyed.iter().map(|&(_, k)| Key::U64(k)).collect();
    let plan = router.scatter(Scope::Keys(&keys), ReadFrom::Primary).unwrap();
    let mut distinct: Vec<u32> = keyed.iter().map(|&(shard, _)| shard).collect();
    distinct.dedup();
    assert_eq!(plan.visits.len(), distinct.len());
    // First-key order (here: decreasing shards), every key once, indices increasing.
    assert!(plan.visits.windows(2).all(|pair| pair[0].shard > pair[1].shard && pair[0].keys[0] < pair[1].keys[0]));
    assert_eq!(plan.visits.iter().map(|visit| visit.keys.len()).sum::<usize>(), 1_000_000);
    for visit in plan.visits.iter().step_by(997) {
        assert!(visit.keys.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(visit.keys.iter().all(|&index| keyed[index as usize].0 == visit.shard));
    }
}

#[test]
fn node_ids_follow_the_documents_rules() {
    let one = |id: &str| json!([{"slots": [0, 16383], "nodes": [{"id": id, "ip": "h", "port": 1, "role": "master"}]}]);
    let slots = |id: &str| json!([[0, 16383, ["h", 1, id]]]);
    for (bad, wanted) in [
        (String::new(), "invalid_argument"),
        ("x".repeat(2_000), "limit_exceeded"),
        ("x".repeat(70_000), "limit_exceeded"),
    ] {
        // The document loader's own verdict on the same id.
        let document =
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": bad}], "strategy": {"type": "modulo"}});
        let loader = Topology::from_value(&document).unwrap_err().code();
        assert_eq!(loader, if wanted == "limit_exceeded" { "limit_exceeded" } else { "invalid_topology" });
        let (code_, message) = code(import("import_redis_cluster_shards", one(&bad)));
        assert_eq!(code_, wanted, "{message}");
        assert!(message.starts_with("operation.reply[0].nodes[0].id: "), "{message}");
        let (code_, message) = code(import("import_redis_cluster_slots", slots(&bad)));
        assert_eq!(code_, wanted, "{message}");
        assert!(message.starts_with("operation.reply[0][2][2]: "), "{message}");
        let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
        assert_eq!(session.refreshed(&one(&bad), 1).unwrap_err().code(), "invalid_argument");
        assert!(session.router().is_none());
    }
    // The longest id allowed imports, and the router's document loads back.
    let longest = "x".repeat(1024);
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    session.refreshed(&one(&longest), 1).unwrap();
    Router::from_json(&session.router().unwrap().to_json()).unwrap();
    let result = import("import_redis_cluster_slots", slots(&longest)).unwrap();
    Topology::from_value(&result["topology"]).unwrap();
}

/// A MOVED to an address longer than a node id may be: the node it would add could not be
/// written back as a document, so `Router::moved` refuses it (the session caps hosts at
/// 255 bytes before it gets here).
#[test]
fn a_moved_address_longer_than_a_node_id_is_refused() {
    let router = shardroute::Router::from_json(
        r#"{"format": "shardroute/1", "epoch": 1,
            "nodes": [{"id": "a", "address": "10.0.0.1:6379"}],
            "strategy": {"type": "redis_cluster"}}"#,
    )
    .unwrap();
    let long = format!("{}:7001", "h".repeat(2000));
    let err = router.moved(1, &long).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded", "{}", err.message());
    let fits = format!("{}:7001", "h".repeat(1019));
    let moved = router.moved(1, &fits).unwrap();
    let again = shardroute::Router::from_json(&moved.to_json()).unwrap();
    assert_eq!(again.node("user:1").ok(), moved.node("user:1").ok());
}
