//! `key_range.json`: key-range sharding. Routing cases for an alphabet split, a table
//! mixing integer, text and non-UTF-8 boundaries, the one-range default and round-robin
//! default owners; routes stated by hand from byte order (no hashing is involved, so
//! each expectation can be checked by reading the boundaries); rejected documents; and,
//! `shards_for_range` scans and `apply` cases of the range
//! operations.

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use super::{
    apply_case, apply_error, doc, expect_error, hex, nodes, owned_key, routing_cases, u64_key, utf8, VectorFile,
};

fn alphabet_doc() -> Value {
    doc(
        1,
        nodes(&["a", "b", "c"]),
        json!({"type": "key_range", "boundaries": [utf8("g"), utf8("p")], "ranges": ["a", "b", "c"]}),
    )
}

/// Integer boundaries (big-endian, so below every text key), text, a lone UTF-8 lead
/// byte and a two-byte key; node `x` owns two ranges.
fn mixed_doc() -> Value {
    doc(
        2,
        nodes(&["x", "y", "z", "w"]),
        json!({"type": "key_range",
            "boundaries": [u64_key(1000), u64_key(1_000_000), utf8("m"), {"hex": "C3"}, hex(&[0xff, 0x00])],
            "ranges": ["x", "y", "x", "z", "w", "y"]}),
    )
}

/// A route case whose expectation is stated by hand; the core is checked to agree.
fn stated_route(file: &mut VectorFile, router: &Router, id: &str, what: &str, key: Value, shard: u32, node: &str) {
    let owned = owned_key(&key);
    assert_eq!(
        router.route(owned.as_key()).expect("route"),
        shard,
        "{id}/{what}: core disagrees with the stated shard"
    );
    assert_eq!(router.node(owned.as_key()).expect("node"), node, "{id}/{what}: core disagrees with the stated node");
    file.case(
        &format!("{id}/stated/{what}"),
        json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
    );
}

pub(crate) fn file() -> VectorFile {
    let mut file = routing_file();
    call_cases(&mut file);
    file
}

fn routing_file() -> VectorFile {
    let mut file = VectorFile::new(
        "key_range",
        "Key-range sharding: sorted boundaries over raw keys in byte order (integers as big-endian bytes), one owner per range; defaults, canonical boundary spelling, rejected documents.",
        "stated cases: expectations written by hand from byte order (memcmp; integers as 8 big-endian bytes) and checked against the core; all other cases: generator",
    );
    let router = file.topology("key-range-alphabet", alphabet_doc());
    routing_cases(&mut file, "key-range-alphabet", &router);
    let alphabet: [(&str, Value, u32, &str); 12] = [
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
    for (what, key, shard, node) in alphabet {
        stated_route(&mut file, &router, "key-range-alphabet", what, key, shard, node);
    }
    file.case(
        "key-range-alphabet/replicas-all/oz",
        json!({"op": "replicas", "topology": "key-range-alphabet", "key": utf8("oz"), "count": 3, "expect": {"nodes": ["b", "c", "a"]}}),
    );
    let router = file.topology("key-range-mixed", mixed_doc());
    routing_cases(&mut file, "key-range-mixed", &router);
    let mixed: [(&str, Value, u32, &str); 11] = [
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
    for (what, key, shard, node) in mixed {
        stated_route(&mut file, &router, "key-range-mixed", what, key, shard, node);
    }
    let router = file.topology("key-range-single", doc(3, nodes(&["only", "spare"]), json!({"type": "key_range"})));
    routing_cases(&mut file, "key-range-single", &router);
    let router = file.topology(
        "key-range-default-owners",
        doc(4, nodes(&["p", "q"]), json!({"type": "key_range", "boundaries": [utf8("b"), utf8("d"), utf8("f")]})),
    );
    routing_cases(&mut file, "key-range-default-owners", &router);
    stated_route(&mut file, &router, "key-range-default-owners", "round-robin-range-2", utf8("dog"), 2, "p");
    stated_route(&mut file, &router, "key-range-default-owners", "round-robin-range-3", utf8("fox"), 3, "q");
    let base = || alphabet_doc();
    let mut bad: Vec<(&str, Value, &str)> = Vec::new();
    let mut edit = |label: &'static str, code: &'static str, change: &dyn Fn(&mut Value)| {
        let mut document = base();
        change(&mut document);
        bad.push((label, document, code));
    };
    edit("decreasing", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([utf8("p"), utf8("g")]));
    edit("equal", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([utf8("g"), hex(b"g")]));
    edit("equal-u64-and-bytes", "invalid_topology", &|d| {
        d["strategy"]["boundaries"] = json!([u64_key(1), hex(&1u64.to_be_bytes())])
    });
    edit("empty-boundary", "invalid_topology", &|d| d["strategy"]["boundaries"] = json!([utf8(""), utf8("p")]));
    edit("ranges-short", "invalid_topology", &|d| d["strategy"]["ranges"] = json!(["a", "b"]));
    edit("ranges-empty", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "key_range", "boundaries": [], "ranges": []})
    });
    edit("ranges-unknown-node", "invalid_topology", &|d| d["strategy"]["ranges"] = json!(["a", "b", "zz"]));
    edit("hex-odd", "invalid_topology", &|d| d["strategy"]["boundaries"][0] = json!({"hex": "abc"}));
    edit("hex-not-hex", "invalid_topology", &|d| d["strategy"]["boundaries"][0] = json!({"hex": "0g"}));
    edit("key-two-forms", "invalid_topology", &|d| d["strategy"]["boundaries"][0] = json!({"utf8": "g", "hex": "67"}));
    edit("key-bare-string", "invalid_topology", &|d| d["strategy"]["boundaries"][0] = json!("g"));
    edit("key-u64-out-of-range", "invalid_topology", &|d| {
        d["strategy"]["boundaries"][0] = json!({"u64": "18446744073709551616"})
    });
    edit("boundary-over-4096-bytes", "limit_exceeded", &|d| d["strategy"]["boundaries"] = json!([hex(&[0x61; 4097])]));
    edit("weighted", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!(2));
    edit("hash-tag-redis", "invalid_topology", &|d| d["hashing"] = json!({"hash_tag": "redis"}));
    edit("unknown-field", "invalid_topology", &|d| d["strategy"]["splits"] = json!([]));
    for (label, document, code) in bad {
        let raw = document.to_string();
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(&mut file, &format!("load/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
    file
}

/// `shards_for_range` and `apply` cases (calls the bindings are still learning).
pub(crate) fn call_cases(file: &mut VectorFile) {
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
    let document = alphabet_doc();
    apply_case(
        file,
        id,
        &document,
        "split-to-new-node",
        json!({"op": "range_split", "at": utf8("k"), "node": {"id": "d", "address": "10.0.0.4:5432"}}),
    );
    apply_case(file, id, &document, "split-in-place", json!({"op": "range_split", "shard": 0, "at": utf8("c")}));
    apply_case(
        file,
        id,
        &document,
        "split-median",
        json!({"op": "range_split_median", "shard": 2, "sample": [utf8("q"), utf8("zz"), utf8("s"), utf8("s"), utf8("a"), utf8("x")], "node": "a"}),
    );
    apply_case(file, id, &document, "merge", json!({"op": "range_merge", "shard": 0}));
    apply_case(file, id, &document, "merge-to-node", json!({"op": "range_merge", "shard": 1, "node": "a"}));
    apply_case(file, id, &document, "move", json!({"op": "range_move", "shard": 2, "node": "a"}));
    let sample: Vec<Value> =
        ["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "cat"].iter().map(|t| utf8(t)).collect();
    apply_case(
        file,
        id,
        &document,
        "presplit",
        json!({"op": "range_presplit", "ranges": 4, "sample": sample, "nodes": ["c", "b"]}),
    );
    apply_case(file, id, &document, "add-node", json!({"op": "add_node", "node": {"id": "d"}}));
    apply_error(
        file,
        id,
        &document,
        "split-at-boundary",
        json!({"op": "range_split", "at": utf8("g")}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "split-outside-shard",
        json!({"op": "range_split", "shard": 0, "at": utf8("x")}),
        "invalid_argument",
    );
    apply_error(file, id, &document, "merge-last", json!({"op": "range_merge", "shard": 2}), "invalid_argument");
    apply_error(
        file,
        id,
        &document,
        "median-one-key",
        json!({"op": "range_split_median", "shard": 0, "sample": [utf8("b"), utf8("b")]}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "presplit-too-few-keys",
        json!({"op": "range_presplit", "ranges": 3, "sample": [utf8("a"), utf8("b")]}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "presplit-no-sample",
        json!({"op": "range_presplit", "ranges": 2}),
        "invalid_argument",
    );
    apply_error(
        file,
        id,
        &document,
        "move-unknown-node",
        json!({"op": "range_move", "shard": 0, "node": "zz"}),
        "invalid_argument",
    );
    apply_error(file, id, &document, "remove-owner", json!({"op": "remove_node", "id": "b"}), "invalid_topology");
    let ring = doc(1, nodes(&["a"]), json!({"type": "ring"}));
    let raw = ring.to_string();
    let outcome =
        ops::apply(&Topology::from_value(&ring).expect("ring"), &json!({"op": "range_merge", "shard": 0})).map(drop);
    expect_error(
        file,
        "apply/reject-range-op-on-ring",
        json!({"op": "apply", "topology_json": raw, "operation": {"op": "range_merge", "shard": 0}}),
        "invalid_argument",
        outcome,
    );
}
