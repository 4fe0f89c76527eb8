//! The redis_cluster profile: the create split covers every slot for every master count,
//! the key → slot rule on its published examples, and the document checks.

mod common;

use common::doc;
use serde_json::json;
use shardroute::strategy::compat::redis_cluster::{create_split, key_slot, SLOTS};
use shardroute::{Key, Router};

#[test]
fn create_split_covers_every_slot_for_every_master_count() {
    let mut largest = 0;
    for masters in 1..=SLOTS {
        let Some(ranges) = create_split(masters) else { continue };
        largest = masters;
        assert_eq!(ranges.len() as u32, masters);
        let mut next = 0;
        for &(start, end) in &ranges {
            assert_eq!(start, next, "{masters} masters");
            assert!(end >= start);
            next = end + 1;
        }
        assert_eq!(next, SLOTS, "{masters} masters");
    }
    // Every cluster size redis-cli is meant for (its docs suggest at most ~1000 nodes).
    assert!((1..=2048).all(|masters| create_split(masters).is_some()));
    assert_eq!(largest, SLOTS, "one slot each: exact steps of 1.0");
    assert!(create_split(0).is_none());
    assert!(create_split(SLOTS + 1).is_none());
    // redis-cli's printout for 3 and 6 masters.
    assert_eq!(create_split(3).unwrap(), [(0, 5460), (5461, 10922), (10923, 16383)]);
    assert_eq!(create_split(6).unwrap()[..2], [(0, 2730), (2731, 5460)]);
}

#[test]
fn key_slot_follows_the_hash_tag_rule() {
    let slot = |bytes: &[u8]| key_slot(Key::Bytes(bytes));
    assert_eq!(slot(b"123456789"), 0x31C3 & 0x3FFF);
    assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
    assert_eq!(slot(b"foo{}{bar}"), 8363); // whole key (redis-server 7.0.15)
    assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
    assert_eq!(slot(b""), 0);
    for value in [0, 7, 42, u64::MAX] {
        assert_eq!(key_slot(Key::U64(value)), slot(value.to_string().as_bytes()));
    }
}

#[test]
fn document_checks() {
    let cluster = doc(&["a", "b"]).strategy(json!({"type": "redis_cluster"}));
    let even = Router::from_json(&cluster.clone().text()).unwrap();
    assert_eq!(even.route("somekey").unwrap(), 11058);
    assert_eq!(even.node("somekey").unwrap(), "b");
    let err = Router::from_json(&cluster.hashing(json!({"function": "crc32"})).text()).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("hashing:"), "{}", err.message());
    let gap = doc(&["a", "b"]).strategy(json!({"type": "redis_cluster", "slots": [
        {"start": 0, "end": 9, "nodes": ["a"]}, {"start": 11, "end": 16383, "nodes": ["b"]}]}));
    assert!(Router::from_json(&gap.text()).unwrap_err().message().contains("slots 10..=10 belong to no range"));
    // A canonical document loads back to the same router.
    let again = Router::from_json(&even.to_json()).unwrap();
    assert_eq!(again.to_json(), even.to_json());
}
