//! `session_follower.json`: scenarios of the topology follower. Each case offers
//! documents (JSON text or binary dictionaries) with source revisions, loses and regains
//! its source, and builds publishers' writes; each step's answer is the core's, and the
//! generator refuses to write a file unless every answer is also what the scenario
//! states by hand below (installed / unchanged / refused with which code, when to
//! reconnect, which compare-and-swap write).

use serde_json::{json, Value};

use super::keys::hex_digits;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

fn offer(document: &str, revision: u64) -> Value {
    json!({"call": "offer", "document": document, "revision": revision})
}

fn offer_text(text: &str, revision: u64) -> Value {
    json!({"call": "offer", "document_json": text, "revision": revision})
}

fn offer_dictionary(hex: &str, revision: u64) -> Value {
    json!({"call": "offer_dictionary", "hex": hex, "revision": revision})
}

fn offer_bytes(bytes: &[u8], revision: u64) -> Value {
    json!({"call": "offer_bytes", "hex": hex_digits(bytes), "revision": revision})
}

fn publish(document: &str) -> Value {
    json!({"call": "publish", "document": document})
}

fn disconnected(now: u64) -> Value {
    json!({"call": "disconnected", "now_ms": now})
}

fn state() -> Value {
    json!({"call": "state"})
}

fn stats() -> Value {
    json!({"call": "stats"})
}

/// Panics unless `got` is what `wanted` says: `installed N`, `unchanged`, `refused CODE`,
/// `reconnect N`, `deadline N` (`none`), `ok`, `state EPOCH REVISION` (`-` for none), `publish REVISION EPOCH`,
/// `error CODE`, `stats name=value ...` (`refused.CODE=n`).
fn check(scenario: &str, call: &Value, wanted: &str, got: &Value) {
    let words: Vec<&str> = wanted.split(' ').collect();
    let text = |value: &Value| value.as_str().map_or("-".to_string(), str::to_string);
    let ok = match words[0] {
        "installed" => got == &json!({"installed": {"epoch": words[1]}}),
        "unchanged" => got == &json!({"unchanged": {}}),
        "refused" => got == &json!({"refused": {"code": words[1]}}),
        "reconnect" => got == &json!({"reconnect_at_ms": words[1]}),
        "deadline" => got == &json!({"deadline_ms": (words[1] != "none").then_some(words[1])}),
        "ok" => got == &json!({"ok": true}),
        "error" => got == &json!({"error": words[1]}),
        "state" => text(&got["epoch"]) == words[1] && text(&got["revision"]) == words[2],
        "publish" => text(&got["expected_revision"]) == words[1] && text(&got["epoch"]) == words[2],
        "stats" => words[1..].iter().all(|pair| {
            let (name, value) = pair.split_once('=').expect("name=value");
            let found = match name.split_once('.') {
                Some((outer, inner)) => &got[outer][inner],
                None => &got[name],
            };
            found.as_u64().map(|n| n.to_string()).as_deref() == Some(value)
        }),
        other => panic!("{scenario}: unknown expectation {other:?}"),
    };
    assert!(ok, "{scenario}: {call} answered {got}, the scenario says {wanted:?}");
}

/// A scenario: its name, its config, and its steps with the answer each must get.
type Scenario<'a> = (&'a str, Option<Value>, Vec<(Value, &'a str)>);

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "session_follower",
        "Scenarios of the topology follower (sans-IO): documents and binary dictionaries offered with source revisions (installed, unchanged, or refused with a code while the last good router stays), the reconnect backoff after a lost source, and the publisher's compare-and-swap write (the held revision, the held epoch + 1).",
        "generator; each scenario's answers are also stated by hand in conformance/src/generate/session_follower.rs and checked before writing",
    );
    let jump = |epoch: u64, nodes: &[&str]| doc(nodes, json!({"type": "jump"})).epoch(epoch);
    file.topology("e1", jump(1, &["a", "b"]));
    file.topology("e2", jump(2, &["a", "b", "c"]));
    file.topology("e2-other", jump(2, &["a", "b", "d"]));
    file.topology("e3", jump(3, &["a", "b", "c", "d"]));
    file.topology("e4", jump(4, &["a", "b", "c", "d", "e"]));
    let entries: Vec<Value> = (0..4).map(|i| json!({"id": format!("n{i}")})).collect();
    let dictionary = doc(Value::Array(entries), json!({"type": "vbucket", "vbuckets": 64, "replicas": 1})).epoch(5);
    file.topology("dictionary", dictionary);
    let bytes = shardroute::dictionary::encode(&file.parsed("dictionary")).expect("encode");
    let hex = hex_digits(&bytes);
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 1;
    let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
    let e1_text = file.to_value()["topologies"]["e1"].to_string().into_bytes();
    let with_name = |name: &[u8]| {
        let mut text = br#"{"format": "shardroute/1", "epoch": 9, "nodes": [{"id": "a"}, {"id": ""#.to_vec();
        text.extend_from_slice(name);
        text.extend_from_slice(br#""}], "strategy": {"type": "jump"}}"#);
        text
    };

    let scenarios: Vec<Scenario<'_>> = vec![
        (
            "installs-newer-epochs-and-keeps-the-last-good",
            None,
            vec![
                (state(), "state - -"),
                (offer("e1", 10), "installed 1"),
                (offer("e2", 11), "installed 2"),
                (offer("e2", 12), "unchanged"),
                (offer("e1", 13), "refused stale_epoch"),
                (offer("e2-other", 14), "refused stale_epoch"),
                (offer_text("not json", 15), "refused invalid_topology"),
                (offer_text("{}", 16), "refused invalid_topology"),
                (offer_text(&deep, 17), "refused limit_exceeded"),
                (offer_text(r#"{"format": "shardroute/1", "epoch": 9, "nodes": [], "strategy": {"type": "jump"}}"#, 18), "refused no_nodes"),
                (state(), "state 2 12"),
                (offer("e3", 19), "installed 3"),
                (state(), "state 3 19"),
                (
                    stats(),
                    "stats offered=10 installed=3 unchanged=1 refused.stale_epoch=2 refused.invalid_topology=2 refused.limit_exceeded=1 refused.no_nodes=1",
                ),
            ],
        ),
        (
            "an-older-revision-is-refused",
            None,
            vec![
                (offer("e3", 20), "installed 3"),
                (offer("e4", 19), "refused stale_epoch"),
                (offer("e3", 20), "unchanged"),
                (offer("e4", 21), "installed 4"),
                (state(), "state 4 21"),
            ],
        ),
        (
            "binary-dictionaries",
            None,
            vec![
                (offer_dictionary(&hex, 1), "installed 5"),
                (offer_dictionary(&hex_digits(&damaged), 2), "refused invalid_topology"),
                (offer_dictionary(&hex_digits(&bytes[..bytes.len() / 2]), 3), "refused invalid_topology"),
                (offer_dictionary(&hex, 4), "unchanged"),
                (offer("e4", 5), "refused stale_epoch"),
                (state(), "state 5 4"),
            ],
        ),
        (
            // A source of plain bytes (ZooKeeper, an untyped HTTP body): the dictionary's
            // magic says binary, anything else must be UTF-8 JSON. Invalid UTF-8 (a stray
            // 0xff, a lone surrogate in CESU-8 form) is refused, never replaced.
            "plain-bytes-dictionary-or-utf8-json",
            None,
            vec![
                (offer_bytes(&e1_text, 1), "installed 1"),
                (offer_bytes(&bytes, 2), "installed 5"),
                (offer_bytes(&with_name(b"b\xff"), 3), "refused invalid_topology"),
                (offer_bytes(&with_name(b"b\xed\xa0\x80"), 4), "refused invalid_topology"),
                (offer_bytes(b"", 5), "refused invalid_topology"),
                (offer_bytes(b"SRVB\x00\x01", 6), "refused invalid_topology"),
                (offer_bytes(&bytes, 1), "refused stale_epoch"),
                (offer_bytes(&with_name("b\u{e9}".as_bytes()), 7), "installed 9"),
                (state(), "state 9 7"),
                (stats(), "stats offered=8 installed=3 refused.invalid_topology=4 refused.stale_epoch=1"),
            ],
        ),
        (
            "reconnect-backs-off-doubling-until-connected",
            None,
            vec![
                (disconnected(0), "reconnect 100"),
                (disconnected(100), "reconnect 300"),
                (disconnected(300), "reconnect 700"),
                (disconnected(700), "reconnect 1500"),
                (disconnected(1500), "reconnect 3100"),
                (disconnected(3100), "reconnect 6300"),
                (disconnected(6300), "reconnect 11300"),
                (json!({"call": "connected"}), "ok"),
                (disconnected(20000), "reconnect 20100"),
                (stats(), "stats disconnects=8"),
            ],
        ),
        (
            // The follower says when the shell must act (its one timer): the reconnect
            // time, until connected.
            "next-deadline-is-the-reconnect-until-connected",
            None,
            vec![
                (json!({"call": "next_deadline"}), "deadline none"),
                (disconnected(50), "reconnect 150"),
                (json!({"call": "next_deadline"}), "deadline 150"),
                (disconnected(150), "reconnect 350"),
                (json!({"call": "next_deadline"}), "deadline 350"),
                (json!({"call": "connected"}), "ok"),
                (json!({"call": "next_deadline"}), "deadline none"),
            ],
        ),
        (
            "reconnect-backoff-from-config",
            Some(json!({"reconnect_first_ms": 10, "reconnect_max_ms": 25})),
            vec![(disconnected(0), "reconnect 10"), (disconnected(10), "reconnect 30"), (disconnected(30), "reconnect 55")],
        ),
        (
            "publish-is-a-cas-of-the-next-epoch",
            None,
            vec![
                (publish("e3"), "publish - 3"),
                (offer("e1", 7), "installed 1"),
                (publish("e2"), "publish 7 2"),
                (publish("e3"), "error stale_epoch"),
                (publish("e1"), "error stale_epoch"),
                (json!({"call": "publish", "document_json": "{"}), "error invalid_topology"),
                (offer("e2", 8), "installed 2"),
                (publish("e3"), "publish 8 3"),
            ],
        ),
    ];
    for (name, config, steps) in scenarios {
        let mut case = json!({"op": "topology_follower"});
        if let Some(config) = config {
            case["config"] = config;
        }
        case["steps"] = Value::Array(steps.iter().map(|(call, _)| call.clone()).collect());
        let expect =
            crate::session::topology_follower(&file.to_value(), &case).unwrap_or_else(|err| panic!("{name}: {err}"));
        let results = expect["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(results.len(), steps.len(), "{name}: {expect}");
        for ((call, wanted), got) in steps.iter().zip(&results) {
            check(name, call, wanted, got);
        }
        case["expect"] = expect;
        file.case(name, case);
    }
    for (what, config) in [
        ("unknown-field", json!({"reconnect_ms": 1})),
        ("zero-first", json!({"reconnect_first_ms": 0})),
        ("max-below-first", json!({"reconnect_first_ms": 100, "reconnect_max_ms": 10})),
        ("fraction", json!({"reconnect_first_ms": 1.5})),
    ] {
        let mut case = json!({"op": "topology_follower", "config": config, "steps": []});
        let expect = crate::session::topology_follower(&file.to_value(), &case).expect("runs");
        assert_eq!(expect, json!({"error": "invalid_argument"}), "config {what}");
        case["expect"] = expect;
        file.case(&format!("bad-config/{what}"), case);
    }
    file
}
