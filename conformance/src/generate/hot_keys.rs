//! `hot_keys.json`: hot keys that come and go. `hot_key_add` and `hot_key_remove` (the
//! next topology checked against a document written by hand), and the migration rule
//! between the two epochs, both ways: reads gather every salted form under either epoch
//! (`Migration::read_keys`), writes go where the new epoch says (`Migration::write_key`).
//! The salted keys of every migration case are written by hand from the separator and
//! the fanouts (`key + "#" + salt`), and the core is checked to agree.

use serde_json::{json, Value};

use shardroute::{Router, Topology};

use super::cases::{applied, apply_refused, expect_error, On};
use super::keys::{hex, owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

const NODES: [&str; 4] = ["a", "b", "c", "d"];

/// A migration case: name, before, after, key, salt, the read keys and the write key.
type Transition = (&'static str, &'static str, &'static str, Value, u32, Vec<Value>, Value);

/// Jump over four nodes with the hot keys `keys` (none: no `hot_keys` section).
fn hot(epoch: u64, keys: Value) -> Value {
    let document = doc(&NODES, json!({"type": "jump"})).epoch(epoch);
    if keys.as_object().is_some_and(|keys| keys.is_empty()) {
        document
    } else {
        document.with("hot_keys", json!({"separator": "#", "keys": keys}))
    }
}

/// `key#0 .. key#(fanout-1)`, written out.
fn salted(key: &str, fanout: u32) -> Vec<Value> {
    (0..fanout).map(|salt| utf8(&format!("{key}#{salt}"))).collect()
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "hot_keys",
        "Hot keys that come and go: hot_key_add and hot_key_remove, and the migration rule between the two epochs both ways (reads gather both epochs' salted keys, writes go where the new epoch says).",
        "operations checked against the next documents written by hand; migration cases' salted keys written by hand (key#salt) and checked against the core; refusals generator",
    );
    file.topology("hk-base", hot(1, json!({"trend": 3})));
    file.topology("hk-celebrity", hot(2, json!({"trend": 3, "celebrity": 4})));
    file.topology("hk-cooled", hot(2, json!({})));
    file.topology("hk-trend-6", hot(2, json!({"trend": 6})));
    file.topology("hk-listed-fanout-1", hot(1, json!({"solo": 1})));
    file.topology("hk-trend-3-again", hot(3, json!({"trend": 3})));

    // The operations: each next topology is the hand-written document of the same epoch.
    for (what, on, operation, next) in [
        ("add", "hk-base", json!({"op": "hot_key_add", "key": utf8("celebrity"), "fanout": 4}), "hk-celebrity"),
        ("change-fanout", "hk-base", json!({"op": "hot_key_add", "key": utf8("trend"), "fanout": 6}), "hk-trend-6"),
        ("remove-last", "hk-base", json!({"op": "hot_key_remove", "key": utf8("trend")}), "hk-cooled"),
        ("remove", "hk-celebrity", json!({"op": "hot_key_remove", "key": utf8("celebrity")}), "hk-base"),
    ] {
        let result = applied(&mut file, &format!("apply/{what}"), On::Topology(on), operation);
        let got = Topology::from_value(&result["topology"]).expect("the next topology loads");
        let mut expected = file.parsed(next);
        expected.epoch = file.parsed(on).epoch + 1;
        assert_eq!(got, expected, "{what}: the next topology differs from the one written by hand");
    }
    applied(
        &mut file,
        "apply/add-to-a-document-without-hot-keys",
        On::Topology("hk-cooled"),
        json!({"op": "hot_key_add", "key": hex(b"trend"), "fanout": 3}),
    );
    for (what, operation, code) in [
        ("remove-not-hot", json!({"op": "hot_key_remove", "key": utf8("nope")}), "invalid_argument"),
        ("fanout-1", json!({"op": "hot_key_add", "key": utf8("x"), "fanout": 1}), "invalid_argument"),
        ("fanout-over-limit", json!({"op": "hot_key_add", "key": utf8("x"), "fanout": 1025}), "limit_exceeded"),
        ("same-fanout", json!({"op": "hot_key_add", "key": utf8("trend"), "fanout": 3}), "invalid_argument"),
        ("integer-key", json!({"op": "hot_key_add", "key": u64_key(42), "fanout": 2}), "invalid_argument"),
        ("not-utf8", json!({"op": "hot_key_add", "key": hex(&[0xff]), "fanout": 2}), "invalid_argument"),
        ("bare-string-key", json!({"op": "hot_key_add", "key": "x", "fanout": 2}), "invalid_argument"),
        ("unknown-field", json!({"op": "hot_key_add", "key": utf8("x"), "fanout": 2, "salt": 1}), "invalid_argument"),
    ] {
        apply_refused(&mut file, &format!("apply/reject-{what}"), On::Topology("hk-base"), operation, code);
    }
    // A partition key rule that would cut the salt off: the result is no valid document.
    let ruled =
        doc(&NODES, json!({"type": "jump"})).hashing(json!({"partition_key": {"rule": "prefix", "separator": ":"}}));
    file.topology("hk-prefix-rule", ruled);
    apply_refused(
        &mut file,
        "apply/reject-salt-cut-off-by-partition-key",
        On::Topology("hk-prefix-rule"),
        json!({"op": "hot_key_add", "key": utf8("celebrity:1"), "fanout": 4}),
        "invalid_topology",
    );

    // The migration rule, stated by hand.
    let mut becoming_hot = salted("celebrity", 4);
    becoming_hot.push(utf8("celebrity"));
    let mut cooling = vec![utf8("trend")];
    cooling.extend(salted("trend", 3));
    let cases: Vec<Transition> = vec![
        ("becoming-hot", "hk-base", "hk-celebrity", utf8("celebrity"), 2, becoming_hot, utf8("celebrity#2")),
        (
            "becoming-hot-salt-wraps",
            "hk-base",
            "hk-celebrity",
            utf8("celebrity"),
            9,
            salted("celebrity", 4).into_iter().chain([utf8("celebrity")]).collect(),
            utf8("celebrity#1"),
        ),
        ("cooling", "hk-base", "hk-cooled", utf8("trend"), 2, cooling, utf8("trend")),
        ("fanout-3-to-6", "hk-base", "hk-trend-6", utf8("trend"), 4, salted("trend", 6), utf8("trend#4")),
        (
            "fanout-6-to-3",
            "hk-trend-6",
            "hk-trend-3-again",
            utf8("trend"),
            4,
            [salted("trend", 3), salted("trend", 6).split_off(3)].concat(),
            utf8("trend#1"),
        ),
        ("hot-on-both", "hk-base", "hk-celebrity", utf8("trend"), 0, salted("trend", 3), utf8("trend#0")),
        ("cold-on-both", "hk-base", "hk-celebrity", utf8("user:1"), 5, vec![utf8("user:1")], utf8("user:1")),
        ("integer", "hk-base", "hk-celebrity", u64_key(42), 1, vec![u64_key(42)], u64_key(42)),
        (
            "hex-key-form",
            "hk-base",
            "hk-celebrity",
            hex(b"celebrity"),
            3,
            (0..4).map(|salt| hex(format!("celebrity#{salt}").as_bytes())).chain([hex(b"celebrity")]).collect(),
            hex(b"celebrity#3"),
        ),
    ];
    for (what, before, after, key, salt, read_keys, write_key) in cases {
        let migration =
            shardroute::migration::Migration::new(file.router(before), file.router(after)).expect("migration");
        let owned = owned_key(&key);
        let got_reads: Vec<Value> =
            migration.read_keys(owned.as_key()).iter().map(|read| crate::run::key_form(&key, read)).collect();
        assert_eq!(got_reads, read_keys, "{what}: read_keys");
        assert_eq!(
            crate::run::key_form(&key, &migration.write_key(owned.as_key(), salt)),
            write_key,
            "{what}: write_key"
        );
        file.case(
            &format!("migration/{what}"),
            json!({"op": "migration_salted", "before": before, "after": after, "key": key, "salt": salt,
                "expect": {"read_keys": read_keys, "write_key": write_key}}),
        );
    }
    let invalid = json!({"utf16": [0xD800]});
    expect_error(
        &mut file,
        "migration/reject-lone-surrogate",
        json!({"op": "migration_salted", "before": "hk-base", "after": "hk-celebrity", "key": invalid, "salt": 0}),
        "invalid_key",
        Err(shardroute::key::utf8_from_utf16(&[0xD800]).unwrap_err()),
    );

    // A hot key listed with fanout 1 is not salted: its write key is itself, where its
    // one read looks (salted_keys gives [solo]).
    let listed: Router = file.router("hk-listed-fanout-1");
    for salt in [0u32, 3] {
        let got = crate::run::key_form(&utf8("solo"), &listed.salted_key("solo", salt));
        assert_eq!(got, utf8("solo"), "fanout 1: salted_key");
        file.case(
            &format!("salted_key/listed-fanout-1/{salt}"),
            json!({"op": "salted_key", "topology": "hk-listed-fanout-1", "key": utf8("solo"), "salt": salt, "expect": {"key": utf8("solo")}}),
        );
    }
    file
}
