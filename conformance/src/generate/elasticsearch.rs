//! `elasticsearch.json`: the `elasticsearch` profile. Shards of Elasticsearch's published
//! Murmur3 values worked out by hand, routing over the standard keys (non-UTF-8 byte
//! keys rejected), default and explicit routing shards, routing partitions with
//! `routing + "\0" + _id` keys, and rejected documents.

use serde_json::{json, Value};
use shardroute::Router;

use super::{doc, expect_error, nodes, owned_key, standard_keys, utf8, VectorFile};

/// Elasticsearch `Murmur3HashFunctionTests.testKnownValues`:
/// `Murmur3HashFunction.hash(text)` (x86_32, seed 0, over UTF-16LE).
const ES_MURMUR3: [(&str, u32); 7] = [
    ("hell", 0x5a0c_b7c3),
    ("hello", 0xd7c3_1989),
    ("hello w", 0x22ab_2984),
    ("hello wo", 0xdf0c_a123),
    ("hello wor", 0xe774_4d61),
    ("The quick brown fox jumps over the lazy dog", 0xe07d_b09c),
    ("The quick brown fox jumps over the lazy cog", 0x4e63_d2ad),
];

fn es(fields: Value) -> Value {
    let mut strategy = json!({"type": "elasticsearch"});
    for (name, value) in fields.as_object().expect("fields") {
        strategy[name] = value.clone();
    }
    strategy
}

/// `route` cases for every standard key (errors recorded as such: byte keys that are
/// not UTF-8 are `invalid_key`), extra keys, and a `load` case.
fn cases(file: &mut VectorFile, id: &str, router: &Router, extra: &[(&str, &str)]) {
    let mut keys = standard_keys();
    keys.extend(extra.iter().map(|(label, text)| ((*label).to_string(), utf8(text))));
    for (label, key) in &keys {
        let owned = owned_key(key);
        let expect = match (router.route(owned.as_key()), router.node(owned.as_key())) {
            (Ok(shard), Ok(node)) => json!({"shard": shard, "node": node}),
            (Err(err), _) | (_, Err(err)) => json!({"error": err.code()}),
        };
        file.case(&format!("{id}/route/{label}"), json!({"op": "route", "topology": id, "key": key, "expect": expect}));
    }
    file.case(
        &format!("{id}/load"),
        json!({"op": "load", "topology": id, "expect": {"epoch": router.epoch().to_string(), "to_json": router.to_json()}}),
    );
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "elasticsearch",
        "The elasticsearch profile: floorMod(murmur3_x86_32(routing as UTF-16LE), routing shards) / factor with the 7.0+ default routing shards, explicit routing shards, routing_partition_size with routing\\0_id keys, primaries, invalid UTF-8 keys and rejected documents.",
        "es-ref cases: shards worked out by hand from the hashes of Elasticsearch Murmur3HashFunctionTests.testKnownValues; all other routing cases: generator, for a core whose elasticsearch profile agreed on every one of >= 10,000 keys per configuration with Elasticsearch's IndexRouting formula over PyPI mmh3 5.3.1 (conformance/oracles/test_elasticsearch.py)",
    );
    let three = || nodes(&["es-0", "es-1", "es-2"]);
    // The published hashes: with 2^20 shards and routing shards the shard is the hash's
    // low 20 bits; with 5 shards (640 routing shards, factor 128) floorMod(h, 640) / 128.
    let router = file.topology(
        "es-lowbits",
        doc(1, three(), es(json!({"number_of_shards": 1_048_576, "number_of_routing_shards": 1_048_576}))),
    );
    let five = file.topology("es-5", doc(1, three(), es(json!({"number_of_shards": 5}))));
    for (text, hash) in ES_MURMUR3 {
        let low = hash & 0xf_ffff;
        assert_eq!(router.route(text).expect("route"), low, "{text:?} disagrees with Elasticsearch");
        file.case(
            &format!("es-lowbits/es-ref/{text}"),
            json!({"op": "route", "topology": "es-lowbits", "key": utf8(text), "expect": {"shard": low, "node": format!("es-{}", low % 3)}}),
        );
        let shard = ((hash as i32).rem_euclid(640) / 128) as u32;
        assert_eq!(five.route(text).expect("route"), shard, "{text:?} disagrees with Elasticsearch");
        file.case(
            &format!("es-5/es-ref/{text}"),
            json!({"op": "route", "topology": "es-5", "key": utf8(text), "expect": {"shard": shard, "node": format!("es-{}", shard % 3)}}),
        );
    }
    file.case(
        "es-lowbits/load",
        json!({"op": "load", "topology": "es-lowbits", "expect": {"epoch": "1", "to_json": router.to_json()}}),
    );
    cases(&mut file, "es-5", &five, &[]);
    let router = file.topology("es-1", doc(2, nodes(&["solo"]), es(json!({"number_of_shards": 1}))));
    cases(&mut file, "es-1", &router, &[]);
    let router = file.topology(
        "es-5-routing-30",
        doc(3, three(), es(json!({"number_of_shards": 5, "number_of_routing_shards": 30, "primaries": ["es-2", "es-2", "es-0", "es-1", "es-0"]}))),
    );
    cases(&mut file, "es-5-routing-30", &router, &[]);
    let router = file.topology("es-600", doc(4, three(), es(json!({"number_of_shards": 600}))));
    cases(&mut file, "es-600", &router, &[]);
    let router = file.topology(
        "es-12-partition-3",
        doc(5, three(), es(json!({"number_of_shards": 12, "routing_partition_size": 3}))),
    );
    cases(
        &mut file,
        "es-12-partition-3",
        &router,
        &[
            ("routing-and-id", "user-1\0doc-1"),
            ("routing-and-id-2", "user-1\0doc-2"),
            ("routing-and-id-3", "user-1\0doc-3"),
            ("empty-id", "user-1\0"),
            ("empty-routing", "\0doc-1"),
            ("unicode", "ключ\0🔑"),
            ("second-nul-in-id", "user-1\0doc\0x"),
        ],
    );
    rejected(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let three = || nodes(&["a", "b", "c"]);
    let mut hashed = doc(1, three(), es(json!({"number_of_shards": 2})));
    hashed["hashing"] = json!({"integers": "identity"});
    let weighted = doc(1, json!([{"id": "a", "weight": 2}, {"id": "b"}]), es(json!({"number_of_shards": 2})));
    let bad: Vec<(&str, Value, &str)> = vec![
        ("hashing-identity", hashed, "invalid_topology"),
        ("shards-missing", doc(1, three(), json!({"type": "elasticsearch"})), "invalid_topology"),
        ("shards-zero", doc(1, three(), es(json!({"number_of_shards": 0}))), "invalid_topology"),
        ("shards-over-limit", doc(1, three(), es(json!({"number_of_shards": 1_048_577}))), "limit_exceeded"),
        (
            "routing-shards-not-multiple",
            doc(1, three(), es(json!({"number_of_shards": 5, "number_of_routing_shards": 32}))),
            "invalid_topology",
        ),
        (
            "routing-shards-over-int",
            doc(1, three(), es(json!({"number_of_shards": 1, "number_of_routing_shards": 2_147_483_648u64}))),
            "invalid_topology",
        ),
        (
            "partition-not-below-routing-shards",
            doc(
                1,
                three(),
                es(json!({"number_of_shards": 5, "number_of_routing_shards": 5, "routing_partition_size": 5})),
            ),
            "invalid_topology",
        ),
        (
            "partition-zero",
            doc(1, three(), es(json!({"number_of_shards": 5, "routing_partition_size": 0}))),
            "invalid_topology",
        ),
        (
            "primaries-wrong-length",
            doc(1, three(), es(json!({"number_of_shards": 2, "primaries": ["a"]}))),
            "invalid_topology",
        ),
        ("weights", weighted, "invalid_topology"),
        ("unknown-field", doc(1, three(), es(json!({"number_of_shards": 2, "shards": 2}))), "invalid_topology"),
    ];
    for (label, document, code) in bad {
        let outcome = Router::from_value(&document).map(drop);
        expect_error(
            file,
            &format!("reject/{label}"),
            json!({"op": "load", "topology_json": document.to_string()}),
            code,
            outcome,
        );
    }
}
