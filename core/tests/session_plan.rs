//! `ClusterSession::plan_flat` is `plan` without a vector per slot. `plan` is built on it,
//! so the two agreeing checks only the expansion and the flat form's own shape (`starts`
//! one longer than `slots`, from 0 to the last index, no empty slot); what pins both is the
//! definition, checked on random keys and tables against each key's slot computed here:
//! one group per node in node order, each key once, in the group of its slot's node, slots
//! increasing, a slot's keys in input order.

use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::session::{Access, ClusterConfig, ClusterSession, FlatGroup, Group};
use shardroute::strategy::compat::redis_cluster::key_slot;
use shardroute::Key;

/// Three masters on 7000-7002, slots split at `5461 + shift` and `10923 + shift`.
fn shards(shift: u32) -> Value {
    let node = |port: u32| {
        json!({"id": format!("{port:040}"), "endpoint": "127.0.0.1", "ip": "127.0.0.1", "port": port,
               "role": "master", "health": "online", "replication-offset": 0})
    };
    let bounds = [0, 5461 + shift, 10923 + shift, 16384];
    Value::Array(
        (0..3).map(|i| json!({"slots": [bounds[i], bounds[i + 1] - 1], "nodes": [node(7000 + i as u32)]})).collect(),
    )
}

fn session(shift: u32) -> ClusterSession {
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    session.refreshed(&shards(shift), 0).unwrap();
    session
}

/// The flat groups with a vector per slot, as `plan` gives them.
fn expanded(flat: &[FlatGroup]) -> Vec<Group> {
    flat.iter()
        .map(|group| {
            assert_eq!(group.starts.len(), group.slots.len() + 1);
            assert_eq!(group.starts.first(), Some(&0));
            assert_eq!(*group.starts.last().unwrap() as usize, group.indices.len());
            Group {
                target: group.target.clone(),
                slots: group
                    .slots
                    .iter()
                    .zip(group.starts.windows(2))
                    .map(|(&slot, run)| {
                        assert!(run[0] < run[1], "a slot with no key");
                        (slot, group.indices[run[0] as usize..run[1] as usize].to_vec())
                    })
                    .collect(),
            }
        })
        .collect()
}

#[test]
fn a_stated_batch() {
    // "a" and "{a}2" are slot 15495 (7002's), "b" slot 3300 (7000's).
    let mut session = session(0);
    let keys = ["a", "b", "{a}2", "b"].map(Key::from);
    let flat = session.plan_flat(&keys, Access::Read).unwrap();
    let addresses: Vec<String> = flat.iter().map(|group| group.target.endpoint.address()).collect();
    assert_eq!(addresses, ["127.0.0.1:7000", "127.0.0.1:7002"]);
    assert_eq!(
        (&flat[0].slots[..], &flat[0].starts[..], &flat[0].indices[..]),
        (&[3300][..], &[0, 2][..], &[1, 3][..])
    );
    assert_eq!(
        (&flat[1].slots[..], &flat[1].starts[..], &flat[1].indices[..]),
        (&[15495][..], &[0, 2][..], &[0, 2][..])
    );
    assert_eq!(expanded(&flat), session.plan(&keys, Access::Read).unwrap());
    assert!(session.plan_flat(&[], Access::Read).unwrap().is_empty());
    let mut fresh = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    assert_eq!(fresh.plan_flat(&keys, Access::Read).unwrap_err().code(), "invalid_argument");
}

proptest! {
    #[test]
    fn flat_is_plan_and_both_are_their_definition(
        shift in 0u32..3000,
        texts in prop::collection::vec(prop_oneof!["[a-z]{1,6}", "\\{[a-c]\\}[0-9]{1,3}"], 0..120),
        read in any::<bool>(),
    ) {
        let mut session = session(shift);
        let keys: Vec<Key<'_>> = texts.iter().map(|text| Key::from(text.as_str())).collect();
        let access = if read { Access::Read } else { Access::Write };
        let flat = session.plan_flat(&keys, access).unwrap();
        let groups = session.plan(&keys, access).unwrap();
        prop_assert_eq!(expanded(&flat), groups.clone());
        // The definition: node order (ports increase with the slots here), slots
        // increasing within a group, a slot's indices in input order, every key once.
        let bounds = [5461 + shift, 10923 + shift, 16384];
        let port = |slot: u32| 7000 + bounds.iter().position(|&bound| slot < bound).unwrap() as u16;
        let mut seen = vec![false; keys.len()];
        let mut last_port = 0;
        for group in &groups {
            prop_assert!(group.target.endpoint.port() > last_port);
            last_port = group.target.endpoint.port();
            prop_assert!(group.slots.windows(2).all(|pair| pair[0].0 < pair[1].0));
            for (slot, indices) in &group.slots {
                prop_assert!(indices.windows(2).all(|pair| pair[0] < pair[1]));
                for &index in indices {
                    prop_assert_eq!(key_slot(keys[index as usize]), *slot);
                    prop_assert_eq!(port(*slot), group.target.endpoint.port());
                    prop_assert!(!seen[index as usize]);
                    seen[index as usize] = true;
                }
            }
        }
        prop_assert!(seen.iter().all(|&was| was));
    }
}
