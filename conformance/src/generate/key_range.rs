//! `key_range.json`: key-range sharding. Routing cases for an alphabet split, a table
//! mixing integer, text and non-UTF-8 boundaries, the one-range default and round-robin
//! default owners; routes stated by hand from byte order (no hashing is involved, so
//! each expectation can be checked by reading the boundaries); rejected documents; and,
//! `shards_for_range` scans and `apply` cases of the range
//! operations.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{applied, apply_refused, expect_error, routed, stated_replicas, stated_route, On, Refusals};
use super::keys::{hex, owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

fn alphabet_doc() -> Value {
    doc(&["a", "b", "c"], json!({"type": "key_range", "boundaries": [utf8("g"), utf8("p")], "ranges": ["a", "b", "c"]}))
}

/// Integer boundaries (big-endian, so below every text key), text, a lone UTF-8 lead
/// byte and a two-byte key; node `x` owns two ranges.
fn mixed_doc() -> Value {
    let strategy = json!({"type": "key_range",
        "boundaries": [u64_key(1000), u64_key(1_000_000), utf8("m"), {"hex": "C3"}, hex(&[0xff, 0x00])],
        "ranges": ["x", "y", "x", "z", "w", "y"]});
    doc(&["x", "y", "z", "w"], strategy).epoch(2)
}

/// Route cases `<id>/stated/<what>` whose shard and node are stated by hand.
fn stated(file: &mut VectorFile, id: &str, router: &Router, routes: Vec<(&str, Value, u32, &str)>) {
    for (what, key, shard, node) in routes {
        stated_route(file, id, router, &format!("stated/{what}"), key, (shard, node));
    }
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "key_range",
        "Key-range sharding: sorted boundaries over raw keys in byte order (integers as big-endian bytes), one owner per range; defaults, canonical boundary spelling, rejected documents.",
        "stated cases: expectations written by hand from byte order (memcmp; integers as 8 big-endian bytes) and checked against the core; all other cases: generator",
    );
    let router = routed(&mut file, "key-range-alphabet", alphabet_doc());
    let alphabet = vec![
        ("empty-key", utf8(""), 0, "a"),
        ("apple", utf8("apple"), 0, "a"),
        ("below-boundary", utf8("fzzz"), 0, "a"),
        ("at-boundary", utf8("g"), 1, "b"),
        ("boundary-plus-nul", utf8("g\u{0}"), 1, "b"),
        ("oz", utf8("oz"), 1, "b"),
        ("at-second-boundary", utf8("p"), 2, "c"),
        ("zebra", utf8("zebra"), 2, "c"),
        ("upper-case-sorts-first", utf8("Zebra"), 0, "a"),
        ("byte-ff", hex(&[0xff]), 2, "c"),
        ("u64-7-is-00..07", u64_key(7), 0, "a"),
        ("u64-max-is-ff..ff", u64_key(u64::MAX), 2, "c"),
    ];
    stated(&mut file, "key-range-alphabet", &router, alphabet);
    stated_replicas(&mut file, "key-range-alphabet", &router, "replicas-all/oz", utf8("oz"), &["b", "c", "a"]);
    let router = routed(&mut file, "key-range-mixed", mixed_doc());
    let mixed = vec![
        ("u64-999", u64_key(999), 0, "x"),
        ("u64-1000", u64_key(1000), 1, "y"),
        ("u64-999999", u64_key(999_999), 1, "y"),
        ("u64-1000000", u64_key(1_000_000), 2, "x"),
        ("u64-1000000-as-bytes", hex(&1_000_000u64.to_be_bytes()), 2, "x"),
        ("text-after-integers", utf8("a"), 2, "x"),
        ("m", utf8("m"), 3, "z"),
        ("e-acute-c3a9", utf8("é"), 4, "w"),
        ("ff-prefix-of-ff00", hex(&[0xff]), 4, "w"),
        ("ff00", hex(&[0xff, 0x00]), 5, "y"),
        ("u64-max", u64_key(u64::MAX), 5, "y"),
    ];
    stated(&mut file, "key-range-mixed", &router, mixed);
    routed(&mut file, "key-range-single", doc(&["only", "spare"], json!({"type": "key_range"})).epoch(3));
    let default_owners = json!({"type": "key_range", "boundaries": [utf8("b"), utf8("d"), utf8("f")]});
    let router = routed(&mut file, "key-range-default-owners", doc(&["p", "q"], default_owners).epoch(4));
    let round_robin = vec![("round-robin-range-2", utf8("dog"), 2, "p"), ("round-robin-range-3", utf8("fox"), 3, "q")];
    stated(&mut file, "key-range-default-owners", &router, round_robin);
    let mut bad = Refusals::of(alphabet_doc());
    for (label, code, boundaries) in [
        ("decreasing", "invalid_topology", json!([utf8("p"), utf8("g")])),
        ("equal", "invalid_topology", json!([utf8("g"), hex(b"g")])),
        ("equal-u64-and-bytes", "invalid_topology", json!([u64_key(1), hex(&1u64.to_be_bytes())])),
        ("empty-boundary", "invalid_topology", json!([utf8(""), utf8("p")])),
    ] {
        bad.edit(label, code, |d| d["strategy"]["boundaries"] = boundaries);
    }
    bad.edit("ranges-short", "invalid_topology", |d| d["strategy"]["ranges"] = json!(["a", "b"]));
    bad.strategy("ranges-empty", "invalid_topology", json!({"type": "key_range", "boundaries": [], "ranges": []}));
    bad.edit("ranges-unknown-node", "invalid_topology", |d| d["strategy"]["ranges"] = json!(["a", "b", "zz"]));
    for (label, boundary) in [
        ("hex-odd", json!({"hex": "abc"})),
        ("hex-not-hex", json!({"hex": "0g"})),
        ("key-two-forms", json!({"utf8": "g", "hex": "67"})),
        ("key-bare-string", json!("g")),
        ("key-u64-out-of-range", json!({"u64": "18446744073709551616"})),
    ] {
        bad.edit(label, "invalid_topology", |d| d["strategy"]["boundaries"][0] = boundary);
    }
    bad.edit("boundary-over-4096-bytes", "limit_exceeded", |d| {
        d["strategy"]["boundaries"] = json!([hex(&[0x61; 4097])])
    });
    bad.edit("weighted", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(2));
    bad.edit("hash-tag-redis", "invalid_topology", |d| d["hashing"] = json!({"hash_tag": "redis"}));
    bad.edit("unknown-field", "invalid_topology", |d| d["strategy"]["splits"] = json!([]));
    bad.write(&mut file, "load/");
    call_cases(&mut file);
    file
}

/// `shards_for_range` and `apply` cases.
fn call_cases(file: &mut VectorFile) {
    let alphabet = Router::from_value(&alphabet_doc()).expect("alphabet");
    let mixed = Router::from_value(&mixed_doc()).expect("mixed");
    let scans: [(&str, &Router, Value, Value, &[u32]); 9] = [
        ("alphabet/a-to-g", &alphabet, utf8("a"), utf8("g"), &[0]),
        ("alphabet/a-to-g-nul", &alphabet, utf8("a"), utf8("g\u{0}"), &[0, 1]),
        ("alphabet/h-to-end", &alphabet, utf8("h"), Value::Null, &[1, 2]),
        ("alphabet/everything", &alphabet, utf8(""), Value::Null, &[0, 1, 2]),
        ("alphabet/within-one", &alphabet, utf8("q"), utf8("r"), &[2]),
        ("alphabet/boundary-to-boundary", &alphabet, utf8("g"), utf8("p"), &[1]),
        ("mixed/ids-999-to-1000001", &mixed, u64_key(999), u64_key(1_000_001), &[0, 1, 2]),
        ("mixed/ids-to-text", &mixed, u64_key(5000), utf8("n"), &[1, 2, 3]),
        ("mixed/c3-to-end", &mixed, hex(&[0xc3]), Value::Null, &[4, 5]),
    ];
    for (what, router, start, end, expected) in scans {
        let end_key = (!end.is_null()).then(|| owned_key(&end));
        let shards = router
            .shards_for_range(owned_key(&start).as_key(), end_key.as_ref().map(|k| k.as_key()))
            .expect("shards_for_range");
        assert_eq!(shards, expected, "{what}: core disagrees with the stated shards");
        let id = if what.starts_with("alphabet") { "key-range-alphabet" } else { "key-range-mixed" };
        file.case(
            &format!("key-range-{what}/shards_for_range"),
            json!({"op": "shards_for_range", "topology": id, "start": start, "end": end, "expect": {"shards": expected}}),
        );
    }
    for (what, start, end) in [("empty", utf8("k"), utf8("k")), ("reversed", utf8("k"), utf8("b"))] {
        let outcome = alphabet.shards_for_range(owned_key(&start).as_key(), Some(owned_key(&end).as_key())).map(drop);
        expect_error(
            file,
            &format!("key-range-alphabet/shards_for_range/reject-{what}"),
            json!({"op": "shards_for_range", "topology": "key-range-alphabet", "start": start, "end": end}),
            "invalid_argument",
            outcome,
        );
    }
    let id = "key-range-alphabet";
    let median = [utf8("q"), utf8("zz"), utf8("s"), utf8("s"), utf8("a"), utf8("x")];
    let animals: Vec<Value> =
        ["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "cat"].iter().map(|t| utf8(t)).collect();
    for (what, operation) in [
        (
            "split-to-new-node",
            json!({"op": "range_split", "at": utf8("k"), "node": {"id": "d", "address": "10.0.0.4:5432"}}),
        ),
        ("split-in-place", json!({"op": "range_split", "shard": 0, "at": utf8("c")})),
        ("split-median", json!({"op": "range_split_median", "shard": 2, "sample": median, "node": "a"})),
        ("merge", json!({"op": "range_merge", "shard": 0})),
        ("merge-to-node", json!({"op": "range_merge", "shard": 1, "node": "a"})),
        ("move", json!({"op": "range_move", "shard": 2, "node": "a"})),
        ("presplit", json!({"op": "range_presplit", "ranges": 4, "sample": animals, "nodes": ["c", "b"]})),
        ("add-node", json!({"op": "add_node", "node": {"id": "d"}})),
    ] {
        applied(file, &format!("{id}/apply/{what}"), On::Topology(id), operation);
    }
    for (what, operation, code) in [
        ("split-at-boundary", json!({"op": "range_split", "at": utf8("g")}), "invalid_argument"),
        ("split-outside-shard", json!({"op": "range_split", "shard": 0, "at": utf8("x")}), "invalid_argument"),
        ("merge-last", json!({"op": "range_merge", "shard": 2}), "invalid_argument"),
        (
            "median-one-key",
            json!({"op": "range_split_median", "shard": 0, "sample": [utf8("b"), utf8("b")]}),
            "invalid_argument",
        ),
        (
            "presplit-too-few-keys",
            json!({"op": "range_presplit", "ranges": 3, "sample": [utf8("a"), utf8("b")]}),
            "invalid_argument",
        ),
        ("presplit-no-sample", json!({"op": "range_presplit", "ranges": 2}), "invalid_argument"),
        ("move-unknown-node", json!({"op": "range_move", "shard": 0, "node": "zz"}), "invalid_argument"),
        ("remove-owner", json!({"op": "remove_node", "id": "b"}), "invalid_topology"),
    ] {
        apply_refused(file, &format!("{id}/apply/reject-{what}"), On::Topology(id), operation, code);
    }
    let ring = doc(&["a"], json!({"type": "ring"})).to_string();
    let operation = json!({"op": "range_merge", "shard": 0});
    apply_refused(file, "apply/reject-range-op-on-ring", On::Text(&ring), operation, "invalid_argument");
}
