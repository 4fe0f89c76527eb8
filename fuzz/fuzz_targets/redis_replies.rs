//! `CLUSTER SHARDS` and `CLUSTER SLOTS` replies, as the JSON values the shells hand to
//! the core: through both readers, both import operations and a session's `refreshed`.
//!
//! The reply is built from the input's choices (`shardroute_fuzz::redis`: slot pairs at
//! the edges and overlapping, ids from a small pool so they repeat, empty and
//! over-long ids, both map forms) or, one input in four, any JSON text.
//!
//! Properties: nothing panics; what a reader accepts has unique ids that follow the
//! document's rules (1 to 1,024 bytes), at most 65,536 nodes, chains that name its
//! nodes, and ranges that overlap nowhere; an import either fails with
//! `invalid_argument` or `limit_exceeded`, or gives a topology whose canonical text
//! loads back (issue 34: an import must never install an id `to_json` cannot load); a
//! session refuses a reply with `invalid_argument` and keeps its table as it was, or
//! installs one whose document loads back, and lists each refresh candidate once.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use shardroute::session::{ClusterConfig, ClusterSession};
use shardroute::strategy::compat::redis_cluster::import::{read_shards, read_slots, RedisClusterImport};
use shardroute::{ops, Router, Topology};
use shardroute_fuzz::redis;

fn check_import(import: &RedisClusterImport) {
    assert!(import.nodes.len() <= 65_536);
    let ids: BTreeSet<&str> = import.nodes.iter().map(|node| node.id.as_str()).collect();
    assert_eq!(ids.len(), import.nodes.len(), "ids are unique");
    assert!(import.nodes.iter().all(|node| !node.id.is_empty() && node.id.len() <= 1024), "ids follow the rules");
    assert!(import.chains.iter().flatten().all(|&node| (node as usize) < import.nodes.len()));
    assert!(import.ranges.len() <= 16_384);
    let mut claimed = vec![false; 16_384];
    for &(start, end, chain) in &import.ranges {
        assert!(start <= end && end < 16_384 && (chain as usize) < import.chains.len());
        for slot in start..=end {
            assert!(!claimed[slot as usize], "slot {slot} in two ranges");
            claimed[slot as usize] = true;
        }
    }
}

fn run(u: &mut Unstructured) -> Result<()> {
    let reply = match u.int_in_range(0..=7u8)? {
        0 | 1 => {
            let text: &str = u.arbitrary()?;
            match shardroute::session::json_data(text) {
                Ok(value) => value,
                Err(_) => return Ok(()),
            }
        }
        2 | 3 => redis::slots_reply(u, 6)?,
        4 => redis::valid_shards(u)?,
        _ => redis::shards_reply(u, 6)?,
    };
    for read in [read_shards(&reply), read_slots(&reply)] {
        match read {
            Ok(import) => check_import(&import),
            Err(err) => assert!(["invalid_argument", "limit_exceeded"].contains(&err.code()), "{err}"),
        }
    }
    // Known ids keep their other fields (a failed node that serves again is active).
    let topology = Topology::from_value(&json!({"format": "shardroute/1", "epoch": 7, "nodes": [
        {"id": format!("{:040x}", 1), "zone": "z", "state": "failed"}, {"id": "x", "address": "h:1"}],
        "strategy": {"type": "modulo"}}))
    .expect("a valid topology");
    for op in ["import_redis_cluster_shards", "import_redis_cluster_slots"] {
        match ops::apply(&topology, &json!({"op": op, "reply": reply})) {
            Ok(result) => {
                let next = Topology::from_value(&result["topology"]).expect("an import's result loads");
                assert_eq!(next.epoch, 8);
                let router = Router::new(next).expect("an import's result builds");
                Router::from_json(&router.to_json()).expect("the imported router's own document loads");
            }
            Err(err) => assert!(["invalid_argument", "limit_exceeded"].contains(&err.code()), "{op}: {err}"),
        }
    }
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).expect("a seed");
    if u.arbitrary()? {
        session.refreshed(&redis::valid_shards(u)?, 0).expect("a whole reply installs");
    }
    let before: Option<String> = session.router().map(Router::to_json);
    match session.refreshed(&reply, 1) {
        Ok(()) => {
            let router = session.router().expect("a table");
            Router::from_json(&router.to_json()).expect("the session's document loads");
            let nodes = router.nodes().len();
            let candidates = session.refresh_candidates();
            let distinct: BTreeSet<String> = candidates.iter().map(|endpoint| endpoint.address()).collect();
            assert_eq!(distinct.len(), candidates.len(), "a candidate listed twice");
            assert!(candidates.len() <= nodes + 1);
        }
        Err(err) => {
            assert_eq!(err.code(), "invalid_argument", "{err}");
            assert_eq!(session.router().map(Router::to_json), before, "a refused reply changed the table");
        }
    }
    let _: Value = session.stats().to_value();
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
