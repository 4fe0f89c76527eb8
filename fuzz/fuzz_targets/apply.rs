//! Every typed operation on any valid topology, chained, and what a change moves.
//!
//! A topology and an operation come from the seeds: most often a pair the vectors apply
//! together (so the operation fits the strategy), else any topology with any
//! operation; both are edited (`shardroute_fuzz::mutate`). Up to three operations are
//! applied in a row, each to the result of the last. Between the two routers of each
//! step: the migration's per-key answers, the key-by-key diff and the disruption.
//!
//! Properties: nothing panics; the result of an operation is a valid document that
//! loads back to the same topology; the epoch advances by exactly one (generators keep
//! it; a Couchbase config import takes the config's, and reports `newer` truthfully),
//! so apply never lowers the epoch behind the caller's back; the same operation applied
//! again, through the typed path (`Op::from_value` then `Op::apply`), gives the same
//! result (no hidden state; checked on one input in four); answers of the migration
//! name nodes of its two topologies.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use shardroute::migration::Migration;
use shardroute::ops::{self, Op};
use shardroute::{diff, disruption, OwnedKey, Router, Topology};

const GENERATORS: &[&str] =
    &["id_bits_compose", "id_bits_tickets", "id_bits_reserve_block", "id_bits_ticket_server", "id_bits_decode"];

fn run(u: &mut Unstructured) -> Result<()> {
    let seeds = shardroute_fuzz::seeds();
    let (mut topology, mut operation) = if u.ratio(3, 4)? {
        let (topology, operation) = seeds.pairs[u.choose_index(seeds.pairs.len())?];
        (shardroute_fuzz::edited_topology(topology, u)?, seeds.operations[operation].clone())
    } else {
        (shardroute_fuzz::topology(u)?, seeds.operations[u.choose_index(seeds.operations.len())?].clone())
    };
    for _ in 0..u.int_in_range(1..=3u8)? {
        shardroute_fuzz::mutate(&mut operation, u)?;
        let result = ops::apply(&topology, &operation);
        let Ok(result) = result else { return Ok(()) };
        let next = Topology::from_value(&result["topology"]).expect("an operation's result is a valid document");
        // Again, typed (one input in four): the same answer.
        if u.ratio(1, 4)? {
            let typed = Op::from_value(&operation, &topology).and_then(|op| op.apply(&topology));
            let typed = typed.expect("applied once, applies again").topology;
            assert_eq!(next.to_json(), typed.to_json(), "the typed result differs");
        }
        let again = Topology::from_json(&next.to_json()).expect("the canonical result reloads");
        assert_eq!(again, next);
        let name = operation["op"].as_str().unwrap_or_default();
        if GENERATORS.contains(&name) {
            assert_eq!(next.epoch, topology.epoch, "a generator changed the epoch");
        } else if name == "import_couchbase_config" {
            assert_eq!(result["newer"], Value::Bool(next.epoch > topology.epoch), "`newer` misreports the epoch");
        } else {
            assert_eq!(Some(next.epoch), topology.epoch.checked_add(1), "{name} did not advance the epoch by one");
        }
        if let (Some(before), Some(after)) =
            (shardroute_fuzz::router(topology.clone()), shardroute_fuzz::router(next.clone()))
        {
            compare(before, after, u)?;
        }
        topology = next;
        operation = seeds.operations[u.choose_index(seeds.operations.len())?].clone();
    }
    Ok(())
}

/// What moves between two routers, per key and in total.
fn compare(before: Router, after: Router, u: &mut Unstructured) -> Result<()> {
    let keys = shardroute_fuzz::keys(u, 4)?;
    // One input in eight: the measure hashes a large key sample, most of a run's time.
    if u.ratio(1, 8)? {
        let _ = disruption::between(before.topology(), after.topology());
    }
    // The streamed counts (no per-key storage) agree with the per-key list.
    let streamed = diff::diff(&before, &after, keys.iter().map(OwnedKey::as_key), false);
    let listed = diff::diff(&before, &after, keys.iter().map(OwnedKey::as_key), true);
    if let (Ok(streamed), Ok(listed)) = (&streamed, &listed) {
        let per_key = listed.keys.as_ref().expect("the per-key list was asked for");
        assert!(streamed.keys.is_none(), "a streamed diff holds no per-key list");
        assert_eq!((streamed.total, streamed.moved, &streamed.flows), (listed.total, listed.moved, &listed.flows));
        assert_eq!(per_key.len() as u64, listed.total);
        assert_eq!(per_key.iter().filter(|key| key.moved()).count() as u64, listed.moved);
    } else {
        assert_eq!(streamed.is_ok(), listed.is_ok(), "streamed and listed diffs fail together");
    }
    let _ = Migration::of_dictionary(&after);
    let Ok(migration) = Migration::new(before, after) else { return Ok(()) };
    let known = |name: &str| {
        [migration.before(), migration.after()].iter().any(|router| router.nodes().iter().any(|node| node.id == name))
    };
    // The scan order of a query over every key: known nodes, and every move's old node
    // read before its new one.
    let scan = migration.scan_nodes();
    assert!(scan.iter().all(|name| known(name)), "scan_nodes names an unknown node");
    let safe = |from: &str, to: &str| {
        let first = scan.iter().position(|&id| id == from);
        matches!((first, scan.iter().rposition(|&id| id == to)), (Some(first), Some(last)) if first < last)
    };
    for owned in &keys {
        let key = owned.as_key();
        if let Ok(Some((from, to))) = migration.moves(key) {
            assert!(known(from) && known(to), "a move names an unknown node");
            assert!(safe(from, to), "scan_nodes reads {to} before {from}: {scan:?}");
        }
        if let Ok(target) = migration.write_target(key) {
            assert!(known(target));
        }
        if let Ok(targets) = migration.read_targets(key, u.arbitrary()?) {
            assert!(targets.iter().all(|name| known(name)));
        }
    }
    if let Ok(shards) = migration.moving_shards() {
        assert!(shards.iter().all(|shard| known(shard.from) && known(shard.to)));
        assert!(shards.iter().all(|shard| safe(shard.from, shard.to)), "scan_nodes: {scan:?}");
    }
    let _ = migration.moving_keys(keys.iter().map(OwnedKey::as_key));
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
