//! The `partition_key` rule (compound keys): each rule against a reference written with
//! std's own string splitting, and the claim that lets a range scan visit one shard
//! (`KeyHashing::one_partition`) checked by brute force over every short key.

use proptest::prelude::*;
use serde_json::json;
use shardroute::hashing::{PartitionKey, Separator};
use shardroute::{Key, Router};

fn router(rule: serde_json::Value, strategy: serde_json::Value) -> Router {
    Router::from_value(&json!({
        "format": "shardroute/1", "epoch": 1,
        "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}],
        "hashing": {"partition_key": rule},
        "strategy": strategy,
    }))
    .expect("a valid document")
}

/// The part a rule picks, written with `str::split` / `str::find` (text keys only).
fn reference(rule: &PartitionKey, key: &str) -> String {
    match *rule {
        PartitionKey::Prefix { separator } => key.split(separator.as_str()).next().unwrap_or(key).to_string(),
        PartitionKey::Field { separator, index } => {
            key.split(separator.as_str()).nth(index as usize).unwrap_or(key).to_string()
        }
        PartitionKey::Bytes { offset, length } => {
            let (start, end) = (offset as usize, offset as usize + length as usize);
            match key.as_bytes().get(start..end) {
                Some(part) => String::from_utf8(part.to_vec()).unwrap_or_default(),
                None => key.to_string(),
            }
        }
        _ => key.to_string(),
    }
}

fn rule_strategy() -> impl Strategy<Value = PartitionKey> {
    let separator = prop::sample::select(vec![":", "|", "::", ":|", "ab"]).prop_map(|s| Separator::new(s).unwrap());
    prop_oneof![
        separator.clone().prop_map(|separator| PartitionKey::Prefix { separator }),
        (separator, 0u32..4).prop_map(|(separator, index)| PartitionKey::Field { separator, index }),
        (0u32..4, 1u32..4).prop_map(|(offset, length)| PartitionKey::Bytes { offset, length }),
    ]
}

proptest! {
    /// Every rule picks what std's splitting picks (keys of ASCII, so byte ranges are text).
    #[test]
    fn rules_match_std_splitting(rule in rule_strategy(), key in "[ab:|]{0,12}") {
        let picked = rule.select(key.as_bytes());
        prop_assert_eq!(String::from_utf8(picked.to_vec()).unwrap(), reference(&rule, &key));
    }

    /// A compound key routes exactly where its part routes without the rule, in a hashed,
    /// a vbucket and an ordered placement.
    #[test]
    fn a_key_routes_as_its_part(key in "[ab:|]{0,12}") {
        for strategy in [json!({"type": "jump"}), json!({"type": "vbucket", "vbuckets": 16}),
                         json!({"type": "key_range", "boundaries": [{"utf8": "a:"}, {"utf8": "b"}]})] {
            let with = router(json!({"rule": "field", "separator": ":", "index": 1}), strategy.clone());
            let without = router(json!({"rule": "whole"}), strategy);
            let part = reference(&PartitionKey::Field { separator: Separator::new(":").unwrap(), index: 1 }, &key);
            prop_assert_eq!(with.route(key.as_str()).unwrap(), without.route(part.as_str()).unwrap());
            prop_assert_eq!(with.hash(key.as_str()), without.hash(part.as_str()));
        }
    }
}

/// Every key over a small alphabet up to `len` bytes, in byte order.
fn all_keys(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut keys = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..len {
        let next: Vec<Vec<u8>> = last
            .iter()
            .flat_map(|key: &Vec<u8>| {
                alphabet.iter().map(move |&b| {
                    let mut longer = key.clone();
                    longer.push(b);
                    longer
                })
            })
            .collect();
        keys.extend(next.iter().cloned());
        last = next;
    }
    keys.sort();
    keys
}

/// Whenever `one_partition(start, end)` says yes, every key of `[start, end)` (every one
/// up to 4 bytes over an alphabet with the separator, its next byte up, `00` and `ff`)
/// has the partition key of `start`; and the router's scan is that one shard.
#[test]
fn one_partition_is_sound_for_every_short_range() {
    let alphabet = [0x00, b':', b';', b'a', 0xff];
    let keys = all_keys(&alphabet, 4);
    let bounds = all_keys(&alphabet, 3);
    let rules = [
        json!({"rule": "prefix", "separator": ":"}),
        json!({"rule": "field", "separator": ":", "index": 1}),
        json!({"rule": "bytes", "offset": 1, "length": 2}),
    ];
    for rule in rules {
        let router = router(rule.clone(), json!({"type": "jump"}));
        let hashing = *router.hashing();
        let mut claimed = 0;
        for start in &bounds {
            for end in &bounds {
                if start >= end || !hashing.one_partition(Key::Bytes(start), Some(Key::Bytes(end))) {
                    continue;
                }
                claimed += 1;
                let part = hashing.routed_bytes(start);
                for key in keys.iter().filter(|key| *key >= start && *key < end) {
                    assert_eq!(hashing.routed_bytes(key), part, "{rule}: {key:?} in [{start:?}, {end:?})");
                }
                let shards = router.shards_for_range(Key::Bytes(start), Some(Key::Bytes(end))).unwrap();
                assert_eq!(shards, [router.route(Key::Bytes(start)).unwrap()], "{rule}: [{start:?}, {end:?})");
            }
        }
        assert!(claimed > 20, "{rule}: only {claimed} ranges were within one partition key");
    }
}

#[test]
fn the_next_byte_up_closes_a_partition() {
    let router = router(json!({"rule": "prefix", "separator": ":"}), json!({"type": "jump"}));
    let hashing = router.hashing();
    assert!(hashing.one_partition(Key::Bytes(b"s42:"), Some(Key::Bytes(b"s42;"))));
    assert!(hashing.one_partition(Key::Bytes(b"s42:1"), Some(Key::Bytes(b"s42:9"))));
    // `s42;` is not under `s42:`, and neither is anything after it.
    assert!(!hashing.one_partition(Key::Bytes(b"s42:"), Some(Key::Bytes(b"s42;0"))));
    assert!(!hashing.one_partition(Key::Bytes(b"s41:"), Some(Key::Bytes(b"s43:"))));
    assert!(!hashing.one_partition(Key::Bytes(b"s42:"), None), "to the end of the key space");
    assert!(!hashing.one_partition(Key::U64(1), Some(Key::U64(2))), "integers have no parts");
}

#[test]
fn canonical_text_keeps_the_rule_and_round_trips() {
    for rule in [
        json!({"rule": "prefix", "separator": "::"}),
        json!({"rule": "field", "separator": "|", "index": 2}),
        json!({"rule": "bytes", "offset": 0, "length": 16}),
    ] {
        let router = router(rule.clone(), json!({"type": "jump"}));
        let text = router.to_json();
        let written: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(written["hashing"]["partition_key"], rule);
        assert_eq!(Router::from_json(&text).unwrap().topology(), router.topology());
    }
}

#[test]
fn explain_shows_the_part_that_was_hashed() {
    let router = router(json!({"rule": "prefix", "separator": ":"}), json!({"type": "jump"}));
    let hashed = router.explain("sensor42:2026").unwrap().hashed.expect("jump hashes the key");
    assert_eq!(hashed.input, b"sensor42");
    assert!(hashed.tagged, "a part of a longer key was hashed");
}

#[test]
fn the_binary_dictionary_refuses_a_rule() {
    let router = router(json!({"rule": "prefix", "separator": ":"}), json!({"type": "vbucket", "vbuckets": 8}));
    let err = shardroute::dictionary::encode(router.topology()).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
}

#[test]
fn a_range_scan_over_one_sensor_stays_on_one_range() {
    // Ranges of sensor ids; readings keyed `sensor:time`.
    let router = router(
        json!({"rule": "prefix", "separator": ":"}),
        json!({"type": "key_range", "boundaries": [{"utf8": "s3"}, {"utf8": "s6"}]}),
    );
    assert_eq!(router.route("s4:2026-11-27T10:00").unwrap(), 1);
    assert_eq!(router.shards_for_range("s4:2026-11-27", Some(Key::Bytes(b"s4:2026-11-28"))).unwrap(), [1]);
    // `s2:...` to `s7:...` spans sensors: every range (a rule need not keep key order).
    assert_eq!(router.shards_for_range("s2:", Some(Key::Bytes(b"s7:"))).unwrap(), [0, 1, 2]);
}
