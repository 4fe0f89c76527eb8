//! `kafka.json`: the `kafka` profile. Routing cases over the standard keys for the Java
//! partitioner and kafkajs' legacy one, explicit leaders, murmur2 values printed by
//! kafkajs itself, and rejected documents.

use serde_json::{json, Value};
use shardroute::Router;

use super::{doc, expect_error, nodes, routing_cases, utf8, VectorFile};

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
    let brokers = nodes(&["broker-0", "broker-1", "broker-2"]);
    let router = file.topology("kafka-java-12", doc(1, brokers.clone(), kafka(json!(12), "java")));
    routing_cases(&mut file, "kafka-java-12", &router);
    let router = file.topology("kafka-legacy-12", doc(1, brokers.clone(), kafka(json!(12), "kafkajs_legacy")));
    routing_cases(&mut file, "kafka-legacy-12", &router);
    let router = file
        .topology("kafka-default-partitioner-1", doc(2, nodes(&["solo"]), json!({"type": "kafka", "partitions": 1})));
    routing_cases(&mut file, "kafka-default-partitioner-1", &router);
    let leaders = json!({"type": "kafka", "partitions": 5, "leaders": ["broker-2", "broker-0", "broker-0", "broker-1", "broker-2"]});
    let router = file.topology("kafka-leaders-5", doc(3, brokers.clone(), leaders));
    routing_cases(&mut file, "kafka-leaders-5", &router);
    reference(&mut file);
    rejected(&mut file);
    file
}

fn reference(file: &mut VectorFile) {
    let ids: Vec<String> = (0..4).map(|i| format!("b{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    for (partitioner, legacy) in [("java", false), ("kafkajs_legacy", true)] {
        let id = format!("kafka-{partitioner}-1000");
        let router = file.topology(&id, doc(1, nodes(&ids), kafka(json!(1000), partitioner)));
        for (key, legacy_hash, java_hash) in KAFKAJS_MURMUR2 {
            let hash = if legacy { legacy_hash } else { java_hash };
            let partition = (hash & 0x7fff_ffff) as u32 % 1000;
            assert_eq!(router.route(key).expect("route"), partition, "{id}: {key:?} disagrees with kafkajs");
            let node = format!("b{}", partition % 4);
            file.case(
                &format!("{id}/kafkajs-ref/{key:?}"),
                json!({"op": "route", "topology": id, "key": utf8(key), "expect": {"shard": partition, "node": node}}),
            );
        }
    }
}

fn rejected(file: &mut VectorFile) {
    let three = || nodes(&["a", "b", "c"]);
    let mut hashed = doc(1, three(), kafka(json!(4), "java"));
    hashed["hashing"] = json!({"function": "crc32"});
    let mut tagged = doc(1, three(), kafka(json!(4), "java"));
    tagged["hashing"] = json!({"hash_tag": "redis"});
    let weighted = doc(1, json!([{"id": "a", "weight": 2}, {"id": "b"}]), kafka(json!(4), "java"));
    let bad: Vec<(&str, Value, &str)> = vec![
        ("hashing-crc32", hashed, "invalid_topology"),
        ("hashing-hash-tag", tagged, "invalid_topology"),
        ("partitions-missing", doc(1, three(), json!({"type": "kafka"})), "invalid_topology"),
        ("partitions-zero", doc(1, three(), kafka(json!(0), "java")), "invalid_topology"),
        ("partitions-string", doc(1, three(), kafka(json!("12"), "java")), "invalid_topology"),
        ("partitions-over-limit", doc(1, three(), kafka(json!(1_048_577), "java")), "limit_exceeded"),
        ("partitioner-unknown", doc(1, three(), kafka(json!(4), "murmur2")), "invalid_topology"),
        ("partitioner-legacy-typo", doc(1, three(), kafka(json!(4), "legacy")), "invalid_topology"),
        (
            "leaders-too-few",
            doc(1, three(), json!({"type": "kafka", "partitions": 3, "leaders": ["a", "b"]})),
            "invalid_topology",
        ),
        (
            "leaders-unknown-node",
            doc(1, three(), json!({"type": "kafka", "partitions": 2, "leaders": ["a", "z"]})),
            "invalid_topology",
        ),
        ("weights", weighted, "invalid_topology"),
        (
            "unknown-field",
            doc(1, three(), json!({"type": "kafka", "partitions": 2, "replication": 3})),
            "invalid_topology",
        ),
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
