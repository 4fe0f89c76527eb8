//! `cassandra.json`: the `cassandra` profile (Murmur3Partitioner over explicit tokens).
//! Routing cases over the standard keys on Cassandra's evenly spaced three-node ring and
//! on a vnode ring; oracle cases whose tokens come from cassandra-driver 3.30.1 (PyPI,
//! `Murmur3Token.hash_fn`), each in a ring where the key's token alone belongs to one
//! node; rejected documents; and `import_cassandra_ring` operations.

use serde_json::{json, Map, Value};

use super::cases::{applied, apply_refused, routed, stated_route, On, Refusals};
use super::keys::{hex, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

/// Cassandra's initial tokens for three nodes under Murmur3Partitioner.
const EVEN_3: [(&str, i64); 3] = [
    ("10.0.0.1", -9_223_372_036_854_775_808),
    ("10.0.0.2", -3_074_457_345_618_258_603),
    ("10.0.0.3", 3_074_457_345_618_258_602),
];

/// `(label, key, token)`: tokens as cassandra-driver 3.30.1 computes them
/// (`cassandra.metadata.Murmur3Token.hash_fn`, pure-Python and C murmur3 agreeing).
fn oracle_tokens() -> Vec<(&'static str, Value, i64)> {
    vec![
        ("hex-empty", hex(b""), 0),
        ("utf8-123", utf8("123"), -7_468_325_962_851_647_638),
        ("hex-ff", hex(&[0xff]), -4_442_228_696_663_692_417),
        ("hex-808182", hex(&[0x80, 0x81, 0x82]), 4_805_209_697_930_042_770),
        ("hex-block-then-c3", hex(b"0123456789abcdef\xc3"), -6_398_537_846_206_061_979),
        ("utf8-hello-accent", utf8("h\u{e9}llo"), 4_427_587_122_518_744_475),
        ("hex-composite-ab-c", hex(&[0, 2, b'a', b'b', 0, 0, 1, b'c', 0]), -3_322_137_777_577_922_905),
        ("u64-1-bigint", u64_key(1), 6_292_367_497_774_912_474),
        ("u64-max-bigint", u64_key(u64::MAX), 7_071_048_584_287_372_947),
    ]
}

fn ring_doc(epoch: u64, tokens: &[(&str, Vec<i64>)]) -> Value {
    let ids: Vec<&str> = tokens.iter().map(|(id, _)| *id).collect();
    let lists: Map<String, Value> = tokens
        .iter()
        .map(|(id, list)| (id.to_string(), Value::Array(list.iter().map(|t| Value::String(t.to_string())).collect())))
        .collect();
    doc(&ids[..], json!({"type": "cassandra", "tokens": lists})).epoch(epoch)
}

fn even_doc() -> Value {
    let tokens: Vec<(&str, Vec<i64>)> = EVEN_3.iter().map(|(id, token)| (*id, vec![*token])).collect();
    ring_doc(3, &tokens)
}

fn vnode_doc() -> Value {
    ring_doc(
        7,
        &[
            (
                "cass-a",
                vec![-8_000_000_000_000_000_000, -1_000_000_000_000_000_000, 4_000_000_000_000_000_000, i64::MAX],
            ),
            ("cass-b", vec![-6_000_000_000_000_000_000, 0, 6_000_000_000_000_000_000]),
            ("cass-c", vec![-4_000_000_000_000_000_000, 2_000_000_000_000_000_000, 8_000_000_000_000_000_000]),
            ("cass-d", vec![i64::MIN, -2_000_000_000_000_000_000, 1]),
        ],
    )
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "cassandra",
        "The cassandra profile: Murmur3Partitioner tokens (murmur3_x64_128 h1 with Java's signed tail bytes, MIN -> MAX; integer keys as bigint big-endian bytes) over explicit tokens, (previous, token] ownership, SimpleStrategy replicas; oracle tokens; rejected documents; import_cassandra_ring.",
        "the `oracle` cases: tokens computed by cassandra-driver 3.30.1 from PyPI (Murmur3Token.hash_fn; conformance/oracles/test_cassandra.py compares over 12,000 keys with it and with npm cassandra-driver 4.10.0); the rest: generator",
    );
    routed(&mut file, "cassandra-even-3", even_doc());
    routed(&mut file, "cassandra-vnodes-4", vnode_doc());

    // Oracle tokens: node `t` owns exactly the key's token (`gap` holds token - 1).
    for (label, key, token) in oracle_tokens() {
        let id = format!("cassandra-oracle-{label}");
        let mut tokens = vec![("t", vec![token])];
        if token != i64::MIN {
            tokens.push(("gap", vec![token - 1]));
        }
        let router = file.topology(&id, ring_doc(1, &tokens));
        stated_route(&mut file, &id, &router, "oracle", key, (0, "t"));
    }
    rejected(&mut file);
    imports(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let mut bad = Refusals::of(even_doc());
    bad.edit("hashing-crc32", "invalid_topology", |d| d["hashing"] = json!({"function": "crc32"}));
    bad.edit("hashing-seed", "invalid_topology", |d| {
        d["hashing"] = json!({"seed": "00112233445566778899aabbccddeeff"})
    });
    bad.edit("hashing-hash-tag", "invalid_topology", |d| d["hashing"] = json!({"hash_tag": "redis"}));
    bad.edit("node-without-tokens", "invalid_topology", |d| {
        d["nodes"].as_array_mut().expect("nodes").push(json!({"id": "10.0.0.4"}))
    });
    bad.edit("weight", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(2));
    bad.strategy("tokens-missing", "invalid_topology", json!({"type": "cassandra"}));
    let token =
        |node: &'static str, token: &'static str| move |d: &mut Value| d["strategy"]["tokens"][node] = json!([token]);
    bad.edit("token-duplicate", "invalid_topology", token("10.0.0.2", "-9223372036854775808"));
    bad.edit("token-above-i64", "invalid_topology", token("10.0.0.2", "9223372036854775808"));
    bad.edit("unknown-field", "invalid_topology", |d| d["strategy"]["tokens_per_node"] = json!(8));
    bad.write(file, "load/reject-");
}

fn imports(file: &mut VectorFile) {
    let id = "cassandra-import-from";
    let from = doc(
        json!([{"id": "10.0.0.1", "address": "10.0.0.1:9042", "zone": "rack1"}, {"id": "old"}]),
        json!({"type": "jump"}),
    );
    file.topology(id, from.epoch(4).hashing(json!({"function": "crc32"})));
    let dump = json!({"10.0.0.1": ["-9223372036854775808", "3074457345618258602"], "10.0.0.2": ["-3074457345618258603"], "10.0.0.3": [0]});
    applied(
        file,
        &format!("{id}/apply/import"),
        On::Topology(id),
        json!({"op": "import_cassandra_ring", "tokens": dump}),
    );
    applied(
        file,
        "cassandra-even-3/apply/reimport-moved-token",
        On::Topology("cassandra-even-3"),
        json!({"op": "import_cassandra_ring", "tokens": {"10.0.0.1": ["-9223372036854775808"], "10.0.0.2": ["-3074457345618258603"], "10.0.0.3": ["1"]}}),
    );
    for (what, operation) in [
        ("empty", json!({"op": "import_cassandra_ring", "tokens": {}})),
        ("not-object", json!({"op": "import_cassandra_ring", "tokens": [["a", "1"]]})),
        ("empty-list", json!({"op": "import_cassandra_ring", "tokens": {"a": []}})),
        ("duplicate", json!({"op": "import_cassandra_ring", "tokens": {"a": ["5"], "b": [5]}})),
        ("out-of-range", json!({"op": "import_cassandra_ring", "tokens": {"a": ["-9223372036854775809"]}})),
        ("missing", json!({"op": "import_cassandra_ring"})),
        ("unknown-field", json!({"op": "import_cassandra_ring", "tokens": {"a": ["1"]}, "epoch": 2})),
    ] {
        apply_refused(file, &format!("{id}/apply/reject-{what}"), On::Topology(id), operation, "invalid_argument");
    }
}
