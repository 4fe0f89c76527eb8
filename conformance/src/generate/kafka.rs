//! `kafka.json`: the `kafka` profile. Routing cases over the standard keys for the Java
//! partitioner and kafkajs' legacy one, explicit leaders, murmur2 values printed by
//! kafkajs itself, and rejected documents.

use serde_json::{json, Value};

use super::cases::{routed, stated_route, Refusals};
use super::keys::utf8;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

/// `(key, legacy murmur2, java murmur2)` as kafkajs 2.2.4 computes them
/// (`src/producer/partitioners/legacy/murmur2.js`, `default/murmur2.js`, Node 20).
const KAFKAJS_MURMUR2: [(&str, i32, i32); 6] = [
    ("", 275_646_684, 275_646_681),
    ("a", -809_885_833, -1_563_381_124),
    ("ab", -1_686_076_413, 316_155_434),
    ("abc", 1_545_667_907, 479_470_107),
    ("abcd", -2_139_815_384, -1_323_649_548),
    ("hello world", 1_620_997_181, 1_221_641_059),
];

fn kafka(partitions: Value, partitioner: &str) -> Value {
    json!({"type": "kafka", "partitions": partitions, "partitioner": partitioner})
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "kafka",
        "The kafka profile: the Java client's default partitioner (toPositive(murmur2(key)) % partitions) and kafkajs' LegacyPartitioner, default and explicit leaders, integer keys as decimal strings, rejected documents.",
        "kafkajs-ref cases: partitions computed by hand from murmur2 values printed by kafkajs 2.2.4 (legacy and default murmur2.js); all other routing cases: generator, for a core whose kafka profile agreed with kafka-python 3.0.12 DefaultPartitioner and kafkajs 2.2.4 DefaultPartitioner/JavaCompatiblePartitioner/LegacyPartitioner on every one of >= 10,000 keys per partition count (conformance/oracles/test_kafka.py, kafka.test.mjs)",
    );
    let brokers = &["broker-0", "broker-1", "broker-2"];
    routed(&mut file, "kafka-java-12", doc(brokers, kafka(json!(12), "java")));
    routed(&mut file, "kafka-legacy-12", doc(brokers, kafka(json!(12), "kafkajs_legacy")));
    let solo = doc(&["solo"], json!({"type": "kafka", "partitions": 1})).epoch(2);
    routed(&mut file, "kafka-default-partitioner-1", solo);
    let leaders = json!({"type": "kafka", "partitions": 5, "leaders": ["broker-2", "broker-0", "broker-0", "broker-1", "broker-2"]});
    routed(&mut file, "kafka-leaders-5", doc(brokers, leaders).epoch(3));
    reference(&mut file);
    rejected(&mut file);
    file
}

fn reference(file: &mut VectorFile) {
    for (partitioner, legacy) in [("java", false), ("kafkajs_legacy", true)] {
        let id = format!("kafka-{partitioner}-1000");
        let router = file.topology(&id, doc(&["b0", "b1", "b2", "b3"], kafka(json!(1000), partitioner)));
        for (key, legacy_hash, java_hash) in KAFKAJS_MURMUR2 {
            let hash = if legacy { legacy_hash } else { java_hash };
            let partition = (hash & 0x7fff_ffff) as u32 % 1000;
            let node = format!("b{}", partition % 4);
            stated_route(file, &id, &router, &format!("kafkajs-ref/{key:?}"), utf8(key), (partition, &node));
        }
    }
}

fn rejected(file: &mut VectorFile) {
    let mut bad = Refusals::of(doc(&["a", "b", "c"], kafka(json!(4), "java")));
    bad.edit("hashing-crc32", "invalid_topology", |d| d["hashing"] = json!({"function": "crc32"}));
    bad.edit("hashing-hash-tag", "invalid_topology", |d| d["hashing"] = json!({"hash_tag": "redis"}));
    for (label, code, strategy) in [
        ("partitions-missing", "invalid_topology", json!({"type": "kafka"})),
        ("partitions-zero", "invalid_topology", kafka(json!(0), "java")),
        ("partitions-string", "invalid_topology", kafka(json!("12"), "java")),
        ("partitions-over-limit", "limit_exceeded", kafka(json!(1_048_577), "java")),
        ("partitioner-unknown", "invalid_topology", kafka(json!(4), "murmur2")),
        ("partitioner-legacy-typo", "invalid_topology", kafka(json!(4), "legacy")),
        ("leaders-too-few", "invalid_topology", json!({"type": "kafka", "partitions": 3, "leaders": ["a", "b"]})),
        ("leaders-unknown-node", "invalid_topology", json!({"type": "kafka", "partitions": 2, "leaders": ["a", "z"]})),
    ] {
        bad.strategy(label, code, strategy);
    }
    bad.edit("weights", "invalid_topology", |d| d["nodes"] = json!([{"id": "a", "weight": 2}, {"id": "b"}]));
    bad.strategy("unknown-field", "invalid_topology", json!({"type": "kafka", "partitions": 2, "replication": 3}));
    bad.write(file, "reject/");
}
