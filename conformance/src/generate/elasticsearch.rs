//! `elasticsearch.json`: the `elasticsearch` profile. Shards of Elasticsearch's published
//! Murmur3 values worked out by hand, routing over the standard keys (non-UTF-8 byte
//! keys rejected), default and explicit routing shards, routing partitions with
//! `routing + "\0" + _id` keys, and rejected documents.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{load_case, route_case, stated_route, Refusals};
use super::keys::{standard_keys, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, strategy, Document};

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
    strategy("elasticsearch", fields)
}

/// Adds topology `id` with `route` cases for every standard key (errors recorded as
/// such: byte keys that are not UTF-8 are `invalid_key`) and the `extra` keys, and a
/// `load` case.
fn routes(file: &mut VectorFile, id: &str, document: Value, extra: &[(&str, &str)]) {
    let router = file.topology(id, document);
    let mut keys = standard_keys();
    keys.extend(extra.iter().map(|(label, text)| ((*label).to_string(), utf8(text))));
    for (label, key) in &keys {
        route_case(file, id, &router, label, key);
    }
    load_case(file, id, &router);
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "elasticsearch",
        "The elasticsearch profile: floorMod(murmur3_x86_32(routing as UTF-16LE), routing shards) / factor with the 7.0+ default routing shards, explicit routing shards, routing_partition_size with routing\\0_id keys, primaries, invalid UTF-8 keys and rejected documents.",
        "es-ref cases: shards worked out by hand from the hashes of Elasticsearch Murmur3HashFunctionTests.testKnownValues; all other routing cases: generator, for a core whose elasticsearch profile agreed on every one of >= 10,000 keys per configuration with Elasticsearch's IndexRouting formula over PyPI mmh3 5.3.1 (conformance/oracles/test_elasticsearch.py)",
    );
    let three = &["es-0", "es-1", "es-2"];
    // The published hashes: with 2^20 shards and routing shards the shard is the hash's
    // low 20 bits; with 5 shards (640 routing shards, factor 128) floorMod(h, 640) / 128.
    let lowbits = doc(three, es(json!({"number_of_shards": 1_048_576, "number_of_routing_shards": 1_048_576})));
    let router = file.topology("es-lowbits", lowbits);
    let five = doc(three, es(json!({"number_of_shards": 5})));
    let five_router = Router::from_value(&five).expect("es-5");
    for (text, hash) in ES_MURMUR3 {
        let low = hash & 0xf_ffff;
        let node = format!("es-{}", low % 3);
        stated_route(&mut file, "es-lowbits", &router, &format!("es-ref/{text}"), utf8(text), (low, &node));
        let shard = ((hash as i32).rem_euclid(640) / 128) as u32;
        let node = format!("es-{}", shard % 3);
        stated_route(&mut file, "es-5", &five_router, &format!("es-ref/{text}"), utf8(text), (shard, &node));
    }
    load_case(&mut file, "es-lowbits", &router);
    routes(&mut file, "es-5", five, &[]);
    routes(&mut file, "es-1", doc(&["solo"], es(json!({"number_of_shards": 1}))).epoch(2), &[]);
    let primaries = json!({"number_of_shards": 5, "number_of_routing_shards": 30, "primaries": ["es-2", "es-2", "es-0", "es-1", "es-0"]});
    routes(&mut file, "es-5-routing-30", doc(three, es(primaries)).epoch(3), &[]);
    routes(&mut file, "es-600", doc(three, es(json!({"number_of_shards": 600}))).epoch(4), &[]);
    routes(
        &mut file,
        "es-12-partition-3",
        doc(three, es(json!({"number_of_shards": 12, "routing_partition_size": 3}))).epoch(5),
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
    let mut bad = Refusals::of(doc(&["a", "b", "c"], es(json!({"number_of_shards": 2}))));
    bad.edit("hashing-identity", "invalid_topology", |d| d["hashing"] = json!({"integers": "identity"}));
    bad.strategy("shards-missing", "invalid_topology", json!({"type": "elasticsearch"}));
    for (label, code, fields) in [
        ("shards-zero", "invalid_topology", json!({"number_of_shards": 0})),
        ("shards-over-limit", "limit_exceeded", json!({"number_of_shards": 1_048_577})),
        (
            "routing-shards-not-multiple",
            "invalid_topology",
            json!({"number_of_shards": 5, "number_of_routing_shards": 32}),
        ),
        (
            "routing-shards-over-int",
            "invalid_topology",
            json!({"number_of_shards": 1, "number_of_routing_shards": 2_147_483_648u64}),
        ),
        (
            "partition-not-below-routing-shards",
            "invalid_topology",
            json!({"number_of_shards": 5, "number_of_routing_shards": 5, "routing_partition_size": 5}),
        ),
        ("partition-zero", "invalid_topology", json!({"number_of_shards": 5, "routing_partition_size": 0})),
        ("primaries-wrong-length", "invalid_topology", json!({"number_of_shards": 2, "primaries": ["a"]})),
    ] {
        bad.strategy(label, code, es(fields));
    }
    bad.edit("weights", "invalid_topology", |d| d["nodes"] = json!([{"id": "a", "weight": 2}, {"id": "b"}]));
    bad.strategy("unknown-field", "invalid_topology", es(json!({"number_of_shards": 2, "shards": 2})));
    bad.write(file, "reject/");
}
