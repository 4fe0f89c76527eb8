//! Any key on any valid topology: every lookup of the router.
//!
//! The topology is a committed seed, edited (`shardroute_fuzz::topology`); the keys are
//! bytes, seed strings (so hash tags and text keys occur) or integers.
//!
//! Properties: nothing panics; a shard is in `shard_range()`; a node index is in the
//! node list and `node()` names that node; `shard_owner(route(k)) == node(k)`; every
//! name a lookup returns is a node of the topology; the batch calls (`route_many`,
//! `route_u64s_into`, `route_packed_into`) agree with `route` key by key; the canonical
//! text builds a router that routes the same; a router fails to build only with the
//! codes of `shardroute_fuzz::BUILD_ERRORS`.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shardroute::strategy::compat::redis_cluster::redirect::Redirect;
use shardroute::{Key, OwnedKey, Router, Strategy};

fn run(u: &mut Unstructured) -> Result<()> {
    let topology = shardroute_fuzz::topology(u)?;
    let Some(router) = shardroute_fuzz::router(topology) else { return Ok(()) };
    let ids: Vec<&str> = router.nodes().iter().map(|node| node.id.as_str()).collect();
    let is_node = |name: &str| ids.contains(&name);
    let keys = shardroute_fuzz::keys(u, 6)?;
    let mut shards = Vec::new();
    for owned in &keys {
        let key = owned.as_key();
        let _ = router.hash(key);
        let shard = router.route(key);
        match &shard {
            Ok(shard) => {
                assert!(router.shard_range().contains(shard), "shard {shard} outside {:?}", router.shard_range());
                let index = router.node_index(key).expect("a routed key has a node");
                let node = router.node(key).expect("a routed key has a node");
                assert_eq!(ids.get(index as usize), Some(&node), "node_index and node disagree");
                assert_eq!(router.shard_owner(*shard).expect("a routed shard has an owner"), node);
            }
            Err(error) => {
                let again = router.node(key).expect_err("node() succeeded where route() failed");
                assert_eq!(again.code(), error.code());
            }
        }
        shards.push(shard.as_ref().ok().copied());
        let count = u.int_in_range(0..=8u32)?;
        if let Ok(replicas) = router.replicas(key, count) {
            assert_eq!(replicas.len(), count as usize, "replicas({count}) gave {}", replicas.len());
            assert!(replicas.iter().all(|name| is_node(name)), "replica outside the topology");
        }
        if let Ok(location) = router.locate(key) {
            assert!(is_node(location.node), "locate named a node outside the topology");
        }
        let _ = router.fanout(key);
        if let Ok(salted) = router.salted_keys(key) {
            for (salted_key, _) in salted.iter().take(4) {
                let _ = router.route(salted_key.as_key());
            }
        }
        let _ = router.salted_key(key, u.arbitrary()?);
        if let Ok(node) = router.route_read(key) {
            assert!(is_node(node));
        }
        if let Ok(nodes) = router.route_write(key) {
            assert!(nodes.iter().all(|name| is_node(name)));
        }
        if let Ok(node) = router.read_replica(key, u.arbitrary()?) {
            assert!(is_node(node));
        }
        let _ = router.decode_id(u.arbitrary()?);
        let _ = router.shard_owner(u.arbitrary()?);
    }
    let end = shardroute_fuzz::key(u)?;
    if let Ok(range) = router.shards_for_range(keys[0].as_key(), if u.arbitrary()? { Some(end.as_key()) } else { None })
    {
        assert!(range.iter().all(|shard| router.shard_range().contains(shard)));
    }
    // Batches agree with single lookups.
    let batch = router.route_many(keys.iter().map(OwnedKey::as_key));
    if shards.iter().all(Option::is_some) {
        let single: Vec<u32> = shards.iter().flatten().copied().collect();
        assert_eq!(batch.expect("every key routed alone"), single, "route_many disagrees with route");
    }
    let integers: Vec<u64> =
        keys.iter().filter_map(|k| if let OwnedKey::U64(v) = k { Some(*v) } else { None }).collect();
    let mut out = Vec::new();
    if router.route_u64s_into(&integers, &mut out).is_ok() {
        let single: Vec<u32> = integers.iter().map(|&v| router.route(Key::U64(v)).expect("batch routed it")).collect();
        assert_eq!(out, single, "route_u64s_into disagrees with route");
    }
    let byte_keys: Vec<&[u8]> =
        keys.iter().filter_map(|k| if let OwnedKey::Bytes(b) = k { Some(b.as_slice()) } else { None }).collect();
    let mut packed = Vec::new();
    let mut offsets = vec![0u32];
    for bytes in &byte_keys {
        packed.extend_from_slice(bytes);
        offsets.push(packed.len() as u32);
    }
    out.clear();
    if router.route_packed_into(&packed, &offsets, &mut out).is_ok() {
        let single: Vec<u32> =
            byte_keys.iter().map(|&b| router.route(Key::Bytes(b)).expect("batch routed it")).collect();
        assert_eq!(out, single, "route_packed_into disagrees with route");
    }
    let _ = router.group_by_node(keys.iter().map(OwnedKey::as_key));
    let _ = router.same_slot(keys.iter().map(OwnedKey::as_key));
    // Redis redirects on any topology (refused unless redis_cluster).
    let slot = if u.arbitrary()? { u.int_in_range(0..=16_383u32)? } else { u.arbitrary()? };
    let address = shardroute_fuzz::string(u)?;
    if let Ok(moved) = router.moved(slot, &address) {
        assert!(matches!(router.strategy(), Strategy::RedisCluster(_)));
        assert!(moved.epoch() > router.epoch(), "MOVED did not advance the epoch");
    }
    let _ = router.ask(slot, &address);
    let _ = Redirect::parse(&address);
    // The canonical text routes the same (one input in four: it builds a second router).
    if !u.ratio(1, 4)? {
        return Ok(());
    }
    let reloaded = Router::from_json(&router.to_json()).expect("the canonical form reloads");
    assert_eq!(reloaded.to_json(), router.to_json());
    for (owned, shard) in keys.iter().zip(&shards) {
        assert_eq!(reloaded.route(owned.as_key()).ok(), *shard, "the reloaded router routes differently");
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
