//! `partition_key.json`: compound keys, routed by one part under the hashing section's
//! `partition_key` rule (prefix up to a separator, the Nth field, a byte range).
//!
//! Every route case is stated by a relation, not by the code under test's extraction:
//! the part of each compound key is written here by hand, and the expected shard and
//! node are what the *same document without the rule* answers for that part. Scans
//! within one partition key must visit that part's one shard in every strategy; scans
//! across partition keys visit every shard, and a `key_range` plan over them gathers by
//! merging. Then the documents a rule makes invalid.

use serde_json::{json, Value};

use shardroute::scatter::{Gather, ReadFrom, Scope};
use shardroute::{OwnedKey, Router};

use super::cases::{load_case, Refusals};
use super::keys::{hex, owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

/// The strategies each rule is checked under: hashed, vbuckets, hashed ranges, ordered
/// ranges.
fn documents() -> Vec<(&'static str, Value)> {
    let five = ["p0", "p1", "p2", "p3", "p4"];
    vec![
        ("modulo", doc(&five, json!({"type": "modulo"}))),
        ("jump", doc(&five, json!({"type": "jump"}))),
        ("ring", doc(&five, json!({"type": "ring", "points_per_node": 40}))),
        ("rendezvous", doc(&five, json!({"type": "rendezvous"}))),
        ("maglev", doc(&five, json!({"type": "maglev", "table_size": 251}))),
        ("vbucket", doc(&five, json!({"type": "vbucket", "vbuckets": 64}))),
        ("hash-range", doc(&five, json!({"type": "hash_range"}))),
        (
            "key-range",
            doc(&five, json!({"type": "key_range", "boundaries": [utf8("d"), utf8("m"), utf8("s"), utf8("w")]})),
        ),
    ]
}

/// A rule, its name in case ids, and compound keys with their parts written by hand.
struct Rule {
    name: &'static str,
    rule: Value,
    keys: Vec<(&'static str, Value, Value)>,
    /// Scans `(label, start, end)` whose keys all share one partition key.
    within: Vec<(&'static str, Value, Value)>,
    /// Scans that span partition keys.
    across: Vec<(&'static str, Value, Value)>,
}

fn rules() -> Vec<Rule> {
    vec![
        Rule {
            name: "prefix",
            rule: json!({"rule": "prefix", "separator": ":"}),
            keys: vec![
                ("sensor-time", utf8("sensor42:2026-11-27T10:00"), utf8("sensor42")),
                ("sensor-other-time", utf8("sensor42:2026-11-28T23:59"), utf8("sensor42")),
                ("no-separator-whole-key", utf8("sensor42"), utf8("sensor42")),
                ("first-separator", utf8("a:b:c"), utf8("a")),
                ("empty-prefix", utf8(":tail"), utf8("")),
                ("ends-with-separator", utf8("kiwi:"), utf8("kiwi")),
                ("non-ascii", utf8("é:1"), utf8("é")),
                ("non-utf8-bytes", hex(&[0xff, b':', 0x01]), hex(&[0xff])),
            ],
            within: vec![
                ("one-day", utf8("sensor42:2026-11-27"), utf8("sensor42:2026-11-28")),
                ("prefix-and-separator-to-next", utf8("sensor42:"), utf8("sensor42;")),
            ],
            across: vec![
                ("two-sensors", utf8("sensor41:"), utf8("sensor43:")),
                ("common-prefix-without-separator", utf8("sensor42"), utf8("sensor420")),
            ],
        },
        Rule {
            name: "field-1",
            rule: json!({"rule": "field", "separator": "|", "index": 1}),
            keys: vec![
                ("tenant-user-time", utf8("acme|user7|2026-11-27"), utf8("user7")),
                ("tenant-user", utf8("acme|user7"), utf8("user7")),
                ("one-field-whole-key", utf8("acme"), utf8("acme")),
                ("empty-field", utf8("acme||2026"), utf8("")),
                ("four-fields", utf8("a|b|c|d"), utf8("b")),
            ],
            within: vec![("one-user", utf8("acme|user7|2026-01"), utf8("acme|user7|2026-12"))],
            across: vec![("one-tenant", utf8("acme|"), utf8("acme}"))],
        },
        Rule {
            name: "prefix-two-bytes",
            rule: json!({"rule": "prefix", "separator": "::"}),
            keys: vec![
                ("double-colon", utf8("ns::item"), utf8("ns")),
                ("single-colon-is-not-it", utf8("a:b::c"), utf8("a:b")),
                ("three-colons", utf8("a:::b"), utf8("a")),
                ("none-whole-key", utf8("a:b"), utf8("a:b")),
            ],
            within: vec![("one-namespace", utf8("ns::a"), utf8("ns::z"))],
            across: vec![("namespaces", utf8("na"), utf8("nz"))],
        },
        Rule {
            name: "bytes-2-3",
            rule: json!({"rule": "bytes", "offset": 2, "length": 3}),
            keys: vec![
                ("middle", utf8("xxabcyy"), utf8("abc")),
                ("exactly-long-enough", utf8("xxabc"), utf8("abc")),
                ("too-short-whole-key", utf8("xxab"), utf8("xxab")),
                ("binary", hex(&[0, 1, 0xfe, 0xff, 0x80, 9]), hex(&[0xfe, 0xff, 0x80])),
            ],
            within: vec![("fixed-prefix", utf8("xxabc0"), utf8("xxabc9"))],
            across: vec![("prefix-too-short", utf8("xxab0"), utf8("xxab9"))],
        },
    ]
}

fn key_of(value: &Value) -> OwnedKey {
    owned_key(value)
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "partition_key",
        "Compound keys: the hashing section's partition_key rule (prefix up to a separator, the Nth field, a byte range) routes a key by one part, in every strategy; scans within one partition key visit one shard.",
        "route cases stated by a relation: each key's part written by hand, routed by the same document without the rule; scans within one partition key stated as that part's shard, scans across as every shard; the rest generator",
    );
    for rule in rules() {
        for (kind, document) in documents() {
            let plain = Router::from_value(&document).expect("the document without a rule");
            let id = format!("pk-{}-{kind}", rule.name);
            let mut hashing = json!({});
            hashing["partition_key"] = rule.rule.clone();
            let router = file.topology(&id, document.hashing(hashing));
            load_case(&mut file, &id, &router);
            for (label, key, part) in &rule.keys {
                let shard = plain.route(key_of(part).as_key()).expect("route the part");
                let node = plain.node(key_of(part).as_key()).expect("node of the part");
                assert_eq!(router.route(key_of(key).as_key()).expect("route"), shard, "{id}/{label}: shard");
                assert_eq!(router.node(key_of(key).as_key()).expect("node"), node, "{id}/{label}: node");
                file.case(
                    &format!("{id}/route/{label}"),
                    json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
                );
            }
            // The batch call, which takes its own path for documents without a rule: the
            // same shards as one key at a time, stated by the parts.
            let parts: Vec<u32> =
                rule.keys.iter().map(|(_, _, part)| plain.route(key_of(part).as_key()).expect("part")).collect();
            let many: Vec<shardroute::OwnedKey> = rule.keys.iter().map(|(_, key, _)| key_of(key)).collect();
            let got = router.route_many(many.iter().map(shardroute::OwnedKey::as_key)).expect("route_many");
            assert_eq!(got, parts, "{id}: route_many");
            let keys: Vec<&Value> = rule.keys.iter().map(|(_, key, _)| key).collect();
            file.case(
                &format!("{id}/route_many"),
                json!({"op": "route_many", "topology": id, "keys": keys, "expect": {"shards": parts}}),
            );
            // An integer key has no parts: it routes as it does without the rule.
            let shard = plain.route(42u64).expect("route 42");
            let node = plain.node(42u64).expect("node 42");
            assert_eq!((router.route(42u64).expect("42"), router.node(42u64).expect("42")), (shard, node));
            file.case(
                &format!("{id}/route/u64-has-no-parts"),
                json!({"op": "route", "topology": id, "key": u64_key(42), "expect": {"shard": shard, "node": node}}),
            );
            let every: Vec<u32> = plain.shard_range().collect();
            let scans = rule.within.iter().map(|scan| (scan, true)).chain(rule.across.iter().map(|scan| (scan, false)));
            for ((label, start, end), within) in scans {
                let expected = if within {
                    vec![plain.route(router.hashing().routed(key_of(start).as_key())).expect("part")]
                } else {
                    every.clone()
                };
                let got = router
                    .shards_for_range(key_of(start).as_key(), Some(key_of(end).as_key()))
                    .expect("shards_for_range");
                assert_eq!(got, expected, "{id}/{label}: shards_for_range");
                file.case(
                    &format!("{id}/shards_for_range/{label}"),
                    json!({"op": "shards_for_range", "topology": id, "start": start, "end": end, "expect": {"shards": expected}}),
                );
            }
        }
    }
    // `hash_key` with a spec that has a rule: the hash of the part under the spec without it.
    for rule in rules() {
        let spec = json!({"partition_key": rule.rule});
        let whole = shardroute::KeyHashing::default();
        for (label, key, part) in rule.keys.iter().take(2) {
            let hash = shardroute::hash_key(key_of(part).as_key(), &whole);
            let with = shardroute::KeyHashing::from_json(&spec.to_string()).expect("spec");
            assert_eq!(shardroute::hash_key(key_of(key).as_key(), &with), hash, "{label}");
            file.case(
                &format!("pk-{}/hash_key/{label}", rule.name),
                json!({"op": "hash_key", "key": key, "hashing": spec, "expect": {"hash": hash.to_string()}}),
            );
        }
    }
    scatter_cases(&mut file);
    refusals(&mut file);
    file
}

/// Range plans of `key_range` under a rule: one visit within a partition key, every
/// range merged across them (a rule need not keep key order).
fn scatter_cases(file: &mut VectorFile) {
    let id = "pk-prefix-key-range";
    let router = file.router(id);
    for (label, start, end, visits) in
        [("within", utf8("mango:1"), utf8("mango:9"), 1), ("across", utf8("apple:"), utf8("zebra:"), 5)]
    {
        let plan = router
            .scatter(
                Scope::Range { start: key_of(&start).as_key(), end: Some(key_of(&end).as_key()) },
                ReadFrom::Primary,
            )
            .expect("scatter");
        assert_eq!(plan.visits.len(), visits, "{label}: visits");
        // Under a rule a range plan always merges, one visit or five: a gatherer never
        // relies on shard order when ranges hold partition keys.
        assert_eq!(plan.gather, Gather::Merge, "{label}: gather");
        file.case(
            &format!("{id}/scatter/{label}"),
            json!({"op": "scatter", "topology": id, "scope": "range", "start": start, "end": end,
                "read_from": "primary", "turn": 0, "zone": null, "expect": plan.to_value(&router)}),
        );
    }
}

/// Documents a rule makes invalid.
fn refusals(file: &mut VectorFile) {
    let base = doc(&["a", "b", "c"], json!({"type": "jump"}))
        .hashing(json!({"partition_key": {"rule": "prefix", "separator": ":"}}));
    let mut bad = Refusals::of(base);
    let rule = |d: &mut Value, rule: Value| d["hashing"]["partition_key"] = rule;
    for (label, code, value) in [
        ("unknown-rule", "invalid_topology", json!({"rule": "regex", "separator": ":"})),
        ("no-rule", "invalid_topology", json!({"separator": ":"})),
        ("rule-not-text", "invalid_topology", json!({"rule": 1})),
        ("not-an-object", "invalid_topology", json!("prefix")),
        ("unknown-field", "invalid_topology", json!({"rule": "prefix", "separator": ":", "pattern": ".*"})),
        ("empty-separator", "invalid_topology", json!({"rule": "prefix", "separator": ""})),
        ("separator-9-bytes", "invalid_topology", json!({"rule": "prefix", "separator": "123456789"})),
        ("separator-not-text", "invalid_topology", json!({"rule": "prefix", "separator": 58})),
        ("prefix-without-separator", "invalid_topology", json!({"rule": "prefix"})),
        ("prefix-with-index", "invalid_topology", json!({"rule": "prefix", "separator": ":", "index": 1})),
        ("field-without-index", "invalid_topology", json!({"rule": "field", "separator": ":"})),
        ("field-index-256", "limit_exceeded", json!({"rule": "field", "separator": ":", "index": 256})),
        ("field-index-negative", "invalid_topology", json!({"rule": "field", "separator": ":", "index": -1})),
        ("field-index-fraction", "invalid_topology", json!({"rule": "field", "separator": ":", "index": 1.5})),
        ("bytes-length-0", "invalid_topology", json!({"rule": "bytes", "offset": 0, "length": 0})),
        ("bytes-offset-over-limit", "limit_exceeded", json!({"rule": "bytes", "offset": 65_537, "length": 1})),
        ("bytes-length-over-limit", "limit_exceeded", json!({"rule": "bytes", "offset": 0, "length": 65_537})),
        (
            "bytes-with-separator",
            "invalid_topology",
            json!({"rule": "bytes", "offset": 0, "length": 4, "separator": ":"}),
        ),
        ("whole-with-separator", "invalid_topology", json!({"rule": "whole", "separator": ":"})),
    ] {
        bad.edit(label, code, |d| rule(d, value));
    }
    bad.edit("with-hash-tag", "invalid_topology", |d| d["hashing"]["hash_tag"] = json!("redis"));
    bad.edit("compat-profile", "invalid_topology", |d| d["strategy"] = json!({"type": "redis_cluster"}));
    bad.edit("hot-key-salt-cut-off", "invalid_topology", |d| d["hot_keys"] = json!({"keys": {"celebrity:1": 4}}));
    bad.edit("directory-entry-never-matches", "invalid_topology", |d| {
        d["strategy"] = json!({"type": "directory", "entries": [{"key": utf8("user:1"), "node": "a"}], "fallback": {"type": "jump"}})
    });
    bad.write(file, "pk-refused/");
    // Allowed: `whole` (the default, left out of the canonical text) and a hot key whose
    // salt the rule keeps (no separator in it, so the salted keys are whole keys).
    let whole = doc(&["a", "b", "c"], json!({"type": "jump"})).hashing(json!({"partition_key": {"rule": "whole"}}));
    let router = file.topology("pk-whole", whole);
    assert!(!router.to_json().contains("partition_key"), "whole is the default: not written");
    load_case(file, "pk-whole", &router);
    let hot = doc(&["a", "b", "c"], json!({"type": "jump"}))
        .hashing(json!({"partition_key": {"rule": "prefix", "separator": ":"}}))
        .with("hot_keys", json!({"keys": {"celebrity": 4}}));
    let router = file.topology("pk-hot-key-kept", hot);
    load_case(file, "pk-hot-key-kept", &router);
}
