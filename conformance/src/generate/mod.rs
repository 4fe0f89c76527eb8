//! Writes the vector files. Values marked `source: generator` are computed by the core
//! at the commit that writes them (they pin behaviour: a change is a visible diff);
//! values from published references are read from `reference/` and copied unchanged,
//! and error cases state the intended error code, which the generator checks the core
//! produces before writing anything.

use serde_json::{json, Value};
use shardroute::{Key, KeyHashing, Router};

use crate::write;

mod calls;
mod cassandra;
mod couchbase;
mod dictionary;
mod directory;
mod elasticsearch;
mod hash_range;
mod id_groups;
mod ids;
mod kafka;
mod ketama;
mod key_range;
mod maglev;
mod multilevel;
mod redis_cluster;
mod token_ring;
mod trie;
mod vitess;
mod vshard;

/// A file being assembled.
pub(crate) struct VectorFile {
    name: &'static str,
    description: &'static str,
    source: &'static str,
    pub(crate) topologies: Vec<(String, Value)>,
    pub(crate) cases: Vec<Value>,
}

impl VectorFile {
    pub(crate) fn new(name: &'static str, description: &'static str, source: &'static str) -> VectorFile {
        VectorFile { name, description, source, topologies: Vec::new(), cases: Vec::new() }
    }

    pub(crate) fn topology(&mut self, id: &str, doc: Value) -> Router {
        let router = Router::from_value(&doc).unwrap_or_else(|err| panic!("topology {id}: {err}"));
        self.topologies.push((id.to_string(), doc));
        router
    }

    pub(crate) fn case(&mut self, what: &str, mut case: Value) {
        let name = format!("{}/{}", self.name, what);
        assert!(!self.cases.iter().any(|c| c["name"] == name.as_str()), "duplicate case name {name}");
        case["name"] = Value::String(name);
        self.cases.push(case);
    }

    pub(crate) fn render(&self) -> (String, String) {
        let header = [
            ("format", json!("shardroute-vectors/1")),
            ("name", json!(self.name)),
            ("description", json!(self.description)),
            ("source", json!(self.source)),
        ];
        (format!("{}.json", self.name), write::file(&header, &self.topologies, &self.cases))
    }
}

pub(crate) fn utf8(text: &str) -> Value {
    json!({ "utf8": text })
}

pub(crate) fn hex(bytes: &[u8]) -> Value {
    json!({ "hex": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() })
}

pub(crate) fn u64_key(value: u64) -> Value {
    json!({ "u64": value.to_string() })
}

/// The key set every routing topology is checked with: text (ASCII, hash tags,
/// Cyrillic, emoji, long, empty), raw bytes, UTF-16 with a valid surrogate pair, and
/// integers at the edges of 32, 53 and 64 bits.
pub(crate) fn standard_keys() -> Vec<(String, Value)> {
    let mut keys: Vec<(String, Value)> = Vec::new();
    for i in 0..16 {
        keys.push((format!("utf8-user-{i}"), utf8(&format!("user:{i}"))));
    }
    for (label, text) in [
        ("utf8-empty", ""),
        ("utf8-a", "a"),
        ("utf8-tag-following", "{user1000}.following"),
        ("utf8-tag-followers", "{user1000}.followers"),
        ("utf8-tag-empty", "foo{}{bar}"),
        ("utf8-cyrillic", "ключ"),
        ("utf8-emoji", "🔑"),
        ("utf8-spaces", "key with spaces"),
    ] {
        keys.push((label.to_string(), utf8(text)));
    }
    keys.push(("utf8-long-300".into(), utf8(&"x".repeat(300))));
    // Multi-byte text around 64 UTF-8 bytes, where a binding's short-string buffer ends:
    // a truncation at a character boundary must never pass for the whole key.
    for (label, unit, count) in [
        ("cyrillic-31", "ю", 31),
        ("cyrillic-32", "ю", 32),
        ("cjk-21", "日", 21),
        ("emoji-15", "🔑", 15),
        ("emoji-16", "🔑", 16),
    ] {
        keys.push((format!("utf8-multibyte-{label}"), utf8(&unit.repeat(count))));
    }
    for (label, bytes) in [
        ("hex-empty", &[][..]),
        ("hex-00", &[0][..]),
        ("hex-ff00ff", &[0xff, 0, 0xff][..]),
        ("hex-deadbeef", &[0xde, 0xad, 0xbe, 0xef][..]),
    ] {
        keys.push((label.to_string(), hex(bytes)));
    }
    keys.push(("utf16-emoji-pair".into(), json!({"utf16": [0xD83D, 0xDE00]})));
    for (label, value) in [
        ("u64-0", 0),
        ("u64-1", 1),
        ("u64-42", 42),
        ("u64-2p32", 1 << 32),
        ("u64-2p53-1", (1 << 53) - 1),
        ("u64-2p53", 1 << 53),
        ("u64-2p53+1", (1 << 53) + 1),
        ("u64-max", u64::MAX),
    ] {
        keys.push((label.to_string(), u64_key(value)));
    }
    keys
}

pub(crate) fn owned_key(value: &Value) -> crate::run::OwnedKey {
    match crate::run::to_key(value) {
        Ok(Ok(key)) => key,
        _ => panic!("standard key {value} must convert"),
    }
}

/// `route` and `replicas` cases for every standard key, and one `route_many` over all.
pub(crate) fn routing_cases(file: &mut VectorFile, id: &str, router: &Router) {
    let keys = standard_keys();
    let count = router.nodes().len().min(3) as u32;
    let mut shards = Vec::new();
    for (label, key) in &keys {
        let owned = owned_key(key);
        let shard = router.route(owned.as_key()).expect("route");
        let node = router.node(owned.as_key()).expect("node");
        shards.push(shard);
        file.case(
            &format!("{id}/route/{label}"),
            json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
        );
        let expect = match router.replicas(owned.as_key(), count) {
            Ok(nodes) => json!({ "nodes": nodes }),
            Err(err) => json!({ "error": err.code() }),
        };
        file.case(
            &format!("{id}/replicas-{count}/{label}"),
            json!({"op": "replicas", "topology": id, "key": key, "count": count, "expect": expect}),
        );
    }
    let all: Vec<Value> = keys.iter().map(|(_, key)| key.clone()).collect();
    file.case(
        &format!("{id}/route_many"),
        json!({"op": "route_many", "topology": id, "keys": all, "expect": {"shards": shards}}),
    );
    file.case(&format!("{id}/load"), json!({"op": "load", "topology": id, "expect": {"epoch": router.epoch().to_string(), "to_json": router.to_json()}}));
}

/// An `apply` case on topology `id` (whose document is `document`) recording the
/// core's result.
pub(crate) fn apply_case(file: &mut VectorFile, id: &str, document: &Value, what: &str, operation: Value) {
    let topology = shardroute::Topology::from_value(document).expect("topology");
    let result = shardroute::ops::apply(&topology, &operation).unwrap_or_else(|err| panic!("{what}: {err}"));
    file.case(
        &format!("{id}/apply/{what}"),
        json!({"op": "apply", "topology": id, "operation": operation, "expect": {"result": result}}),
    );
}

/// An `apply` case that must fail with `code`.
pub(crate) fn apply_error(file: &mut VectorFile, id: &str, document: &Value, what: &str, operation: Value, code: &str) {
    let topology = shardroute::Topology::from_value(document).expect("topology");
    let outcome = shardroute::ops::apply(&topology, &operation).map(drop);
    expect_error(
        file,
        &format!("{id}/apply/reject-{what}"),
        json!({"op": "apply", "topology": id, "operation": operation}),
        code,
        outcome,
    );
}

/// An error case: checks the core gives `code` before recording it.
pub(crate) fn expect_error(
    file: &mut VectorFile,
    what: &str,
    case: Value,
    code: &str,
    outcome: Result<(), shardroute::Error>,
) {
    match outcome {
        Err(err) if err.code() == code => {}
        Err(err) => panic!("{what}: expected {code}, core says {err}"),
        Ok(()) => panic!("{what}: expected {code}, core accepted it"),
    }
    let mut case = case;
    case["expect"] = json!({ "error": code });
    file.case(what, case);
}

pub(crate) fn nodes(ids: &[&str]) -> Value {
    Value::Array(ids.iter().map(|id| json!({ "id": id })).collect())
}

pub(crate) fn doc(epoch: u64, nodes: Value, strategy: Value) -> Value {
    json!({"format": "shardroute/1", "epoch": epoch, "nodes": nodes, "strategy": strategy})
}

pub(crate) fn reference_lines(name: &str) -> Vec<String> {
    let path = crate::root().join("reference").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect()
}

fn hashing_file() -> VectorFile {
    let mut file = VectorFile::new(
        "hashing",
        "Key hashing: SipHash-2-4 reference outputs, the CRC-32 check value, Redis hash tags, integer keys, UTF-16 keys and key rejection.",
        "siphash-ref cases: vectors_sip64 of the SipHash reference implementation (reference/siphash24.txt); crc32-ref cases: the CRC-32/IEEE check value and the zlib value of the pangram; all other expected hashes: generator",
    );
    for (length, line) in reference_lines("siphash24.txt").iter().enumerate() {
        let bytes: Vec<u8> = (0..length as u8).collect();
        let output: Vec<u8> = (0..8).map(|i| u8::from_str_radix(&line[2 * i..2 * i + 2], 16).expect("hex")).collect();
        let expected = u64::from_le_bytes(output.try_into().expect("8 bytes"));
        file.case(
            &format!("siphash-ref/default-seed/len-{length:02}"),
            json!({"op": "hash_key", "key": hex(&bytes), "expect": {"hash": expected.to_string()}}),
        );
        if length % 8 == 7 {
            let spec = json!({"function": "siphash-2-4", "seed": "000102030405060708090a0b0c0d0e0f"});
            file.case(&format!("siphash-ref/explicit-seed/len-{length:02}"), json!({"op": "hash_key", "hashing": spec, "key": hex(&bytes), "expect": {"hash": expected.to_string()}}));
        }
    }
    let crc = json!({"function": "crc32"});
    for (label, text, value) in [
        ("check-123456789", "123456789", 0xCBF4_3926u64),
        ("pangram", "The quick brown fox jumps over the lazy dog", 0x414F_A339),
        ("empty", "", 0),
    ] {
        file.case(
            &format!("crc32-ref/{label}"),
            json!({"op": "hash_key", "hashing": crc, "key": utf8(text), "expect": {"hash": value.to_string()}}),
        );
    }
    // Hash tags: every edge of the Redis rule, under both functions.
    let tag_keys = [
        ("whole-key", "user1000"),
        ("tag", "{user1000}.following"),
        ("tag-same", "{user1000}.followers"),
        ("tag-only-inner", "user1000"),
        ("empty-tag", "foo{}{bar}"),
        ("nested-open", "foo{{bar}}zap"),
        ("first-tag-wins", "foo{bar}{zap}"),
        ("unclosed", "foo{bar"),
        ("close-before-open", "}foo{bar}"),
        ("only-braces", "{}"),
        ("tag-at-end", "baz{x}"),
    ];
    for (function, spec) in
        [("siphash", json!({"hash_tag": "redis"})), ("crc32", json!({"function": "crc32", "hash_tag": "redis"}))]
    {
        let hashing = KeyHashing::from_json(&spec.to_string()).expect("spec");
        for (label, text) in tag_keys {
            let hash = hashing.hash(Key::from(text));
            file.case(
                &format!("tag/{function}/{label}"),
                json!({"op": "hash_key", "hashing": spec, "key": utf8(text), "expect": {"hash": hash.to_string()}}),
            );
        }
    }
    let default = KeyHashing::default();
    let identity = json!({"integers": "identity"});
    for value in [0u64, 42, 1 << 53, u64::MAX] {
        let hash = default.hash(Key::U64(value));
        file.case(
            &format!("u64/le-bytes/{value}"),
            json!({"op": "hash_key", "key": u64_key(value), "expect": {"hash": hash.to_string()}}),
        );
        file.case(
            &format!("u64/le-bytes-as-bytes/{value}"),
            json!({"op": "hash_key", "key": hex(&value.to_le_bytes()), "expect": {"hash": hash.to_string()}}),
        );
        file.case(&format!("u64/identity/{value}"), json!({"op": "hash_key", "hashing": identity, "key": u64_key(value), "expect": {"hash": value.to_string()}}));
    }
    let seeded = json!({"seed": "f0e0d0c0b0a090807060504030201000"});
    let seeded_hashing = KeyHashing::from_json(&seeded.to_string()).expect("seed");
    for text in ["user:1", ""] {
        let hash = seeded_hashing.hash(Key::from(text));
        file.case(
            &format!("seeded/{text}"),
            json!({"op": "hash_key", "hashing": seeded, "key": utf8(text), "expect": {"hash": hash.to_string()}}),
        );
    }
    let emoji = default.hash(Key::from("😀"));
    file.case(
        "utf16/valid-pair",
        json!({"op": "hash_key", "key": {"utf16": [0xD83D, 0xDE00]}, "expect": {"hash": emoji.to_string()}}),
    );
    file.case(
        "utf16/valid-pair-as-utf8",
        json!({"op": "hash_key", "key": utf8("😀"), "expect": {"hash": emoji.to_string()}}),
    );
    file.case("utf16/ascii", json!({"op": "hash_key", "key": {"utf16": [104, 105]}, "expect": {"hash": default.hash(Key::from("hi")).to_string()}}));
    for (label, units) in [
        ("lone-high", vec![0xD800u16]),
        ("lone-low", vec![0xDC00]),
        ("high-then-ascii", vec![0xD83D, 0x61]),
        ("reversed-pair", vec![0xDE00, 0xD83D]),
        ("trailing-high", vec![0x61, 0xDBFF]),
    ] {
        let outcome = shardroute::key::utf8_from_utf16(&units).map(drop);
        expect_error(
            &mut file,
            &format!("reject/utf16-{label}"),
            json!({"op": "hash_key", "key": {"utf16": units}}),
            "invalid_key",
            outcome,
        );
    }
    for (label, text) in
        [("2p64", "18446744073709551616"), ("negative", "-1"), ("huge", "340282366920938463463374607431768211456")]
    {
        let outcome = shardroute::key::parse_u64(text).map(drop);
        expect_error(
            &mut file,
            &format!("reject/u64-{label}"),
            json!({"op": "hash_key", "key": {"u64": text}}),
            "invalid_key",
            outcome,
        );
    }
    for (label, spec) in [
        ("unknown-function", json!({"function": "md5"})),
        ("seed-short", json!({"seed": "0001"})),
        ("seed-not-hex", json!({"seed": "zz0102030405060708090a0b0c0d0e0f"})),
        ("seed-with-crc32", json!({"function": "crc32", "seed": "000102030405060708090a0b0c0d0e0f"})),
        ("unknown-field", json!({"hashtag": "redis"})),
        ("unknown-tag-rule", json!({"hash_tag": "memcached"})),
        ("unknown-integer-rule", json!({"integers": "be_bytes"})),
        ("not-an-object", json!("siphash-2-4")),
    ] {
        let outcome = KeyHashing::from_json(&spec.to_string()).map(drop);
        expect_error(
            &mut file,
            &format!("reject/spec-{label}"),
            json!({"op": "hash_key", "hashing": spec, "key": utf8("k")}),
            "invalid_topology",
            outcome,
        );
    }
    file
}

fn jump_file() -> VectorFile {
    let mut file = VectorFile::new(
        "jump",
        "Jump consistent hash: the bare function against published values, and the jump strategy.",
        "ref-cpp cases: values of the paper's reference C++ code as published in dgryski/go-jump jump_test.go; ref-guava cases: Guava HashingTest.testConsistentHash_linearCongruentialGeneratorCompatibility; strategy cases: generator",
    );
    let reference: [(u64, &[u32]); 4] = [
        (0, &[0; 20]),
        (1, &[0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17]),
        (0xdeadbeef, &[0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16]),
        (0x0ddc0ffeebadf00d, &[0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15]),
    ];
    for (key, buckets) in reference {
        for (index, &expected) in buckets.iter().enumerate() {
            let n = index + 1;
            file.case(
                &format!("ref-cpp/{key:#x}/{n}"),
                json!({"op": "jump", "hash": key.to_string(), "buckets": n, "expect": {"shard": expected}}),
            );
        }
    }
    for (key, expected) in [(1u64, 55u32), (2, 62), (3, 8), (4, 45), (5, 59)] {
        file.case(
            &format!("ref-guava/{key}/100"),
            json!({"op": "jump", "hash": key.to_string(), "buckets": 100, "expect": {"shard": expected}}),
        );
    }
    for (hash, buckets) in
        [(u64::MAX, 1u32), (u64::MAX, 1_000_000), (0x8000_0000_0000_0000, 4_294_967_295), (12345, 65_536)]
    {
        let shard = shardroute::jump(hash, buckets).expect("jump");
        file.case(
            &format!("edge/{hash:#x}/{buckets}"),
            json!({"op": "jump", "hash": hash.to_string(), "buckets": buckets, "expect": {"shard": shard}}),
        );
    }
    expect_error(
        &mut file,
        "reject/zero-buckets",
        json!({"op": "jump", "hash": "7", "buckets": 0}),
        "no_nodes",
        shardroute::jump(7, 0).map(drop),
    );
    expect_error(
        &mut file,
        "reject/hash-2p64",
        json!({"op": "jump", "hash": "18446744073709551616", "buckets": 3}),
        "invalid_key",
        shardroute::key::parse_u64("18446744073709551616").map(drop),
    );
    let ten: Vec<String> = (0..10).map(|i| format!("shard-{i:02}")).collect();
    let ids: Vec<&str> = ten.iter().map(String::as_str).collect();
    let router = file.topology("jump-10", doc(1, nodes(&ids), json!({"type": "jump"})));
    routing_cases(&mut file, "jump-10", &router);
    let mut identity = doc(2, nodes(&ids[..7]), json!({"type": "jump"}));
    identity["hashing"] = json!({"integers": "identity"});
    let router = file.topology("jump-identity-7", identity);
    routing_cases(&mut file, "jump-identity-7", &router);
    file
}

fn modulo_file() -> VectorFile {
    let mut file = VectorFile::new(
        "modulo",
        "Modulo sharding: hash % n, user_id % n with identity hashing, the 1-based variant, CRC32.",
        "generator",
    );
    let router = file.topology("modulo-5", doc(1, nodes(&["m0", "m1", "m2", "m3", "m4"]), json!({"type": "modulo"})));
    routing_cases(&mut file, "modulo-5", &router);
    let mut identity = doc(1, nodes(&["m0", "m1", "m2", "m3", "m4"]), json!({"type": "modulo"}));
    identity["hashing"] = json!({"integers": "identity"});
    let router = file.topology("modulo-identity-5", identity);
    routing_cases(&mut file, "modulo-identity-5", &router);
    let mut one_based = doc(1, nodes(&["s1", "s2", "s3", "s4"]), json!({"type": "modulo", "one_based": true}));
    one_based["hashing"] = json!({"integers": "identity"});
    let router = file.topology("modulo-one-based-4", one_based);
    routing_cases(&mut file, "modulo-one-based-4", &router);
    // user_id % n written out: ids 0..12 over 4 shards, 1-based, are plain arithmetic.
    for id in 0u64..12 {
        let shard = match id % 4 {
            0 => 4,
            other => other,
        };
        file.case(&format!("modulo-one-based-4/arithmetic/{id}"), json!({"op": "route", "topology": "modulo-one-based-4", "key": u64_key(id), "expect": {"shard": shard, "node": format!("s{shard}")}}));
    }
    let mut crc = doc(1, nodes(&["c0", "c1", "c2", "c3", "c4", "c5", "c6"]), json!({"type": "modulo"}));
    crc["hashing"] = json!({"function": "crc32"});
    let router = file.topology("modulo-crc32-7", crc);
    routing_cases(&mut file, "modulo-crc32-7", &router);
    // crc32("123456789") = 0xCBF43926 = 3421780262 = 7 * 488825751 + 5.
    file.case("modulo-crc32-7/arithmetic/check-value", json!({"op": "route", "topology": "modulo-crc32-7", "key": utf8("123456789"), "expect": {"shard": 5, "node": "c5"}}));
    file
}

fn ring_file() -> VectorFile {
    let mut file = VectorFile::new(
        "ring",
        "Consistent-hash ring with virtual nodes: default points, weights, CRC32 points with Redis hash tags.",
        "generator",
    );
    let router = file.topology("ring-5", doc(1, nodes(&["r0", "r1", "r2", "r3", "r4"]), json!({"type": "ring"})));
    routing_cases(&mut file, "ring-5", &router);
    let weighted = json!([{"id": "small", "weight": 0.5}, {"id": "base"}, {"id": "double", "weight": 2}, {"id": "x1.5", "weight": 1.5, "zone": "z2", "address": "10.1.0.4:11211"}]);
    let router = file.topology("ring-weighted-4", doc(2, weighted, json!({"type": "ring", "points_per_node": 40})));
    routing_cases(&mut file, "ring-weighted-4", &router);
    let mut tagged = doc(3, nodes(&["t0", "t1", "t2"]), json!({"type": "ring", "points_per_node": 100}));
    tagged["hashing"] = json!({"function": "crc32", "hash_tag": "redis"});
    let router = file.topology("ring-crc32-tag-3", tagged);
    routing_cases(&mut file, "ring-crc32-tag-3", &router);
    let router = file.topology("ring-single", doc(4, nodes(&["only"]), json!({"type": "ring", "points_per_node": 1})));
    routing_cases(&mut file, "ring-single", &router);
    file
}

fn rendezvous_file() -> VectorFile {
    let mut file = VectorFile::new(
        "rendezvous",
        "Rendezvous (highest random weight) hashing: unweighted, weighted (libm ln), seeded.",
        "generator",
    );
    let ids = ["h0", "h1", "h2", "h3", "h4", "h5"];
    let router = file.topology("rendezvous-6", doc(1, nodes(&ids), json!({"type": "rendezvous"})));
    routing_cases(&mut file, "rendezvous-6", &router);
    let weighted = json!([{"id": "w-a", "weight": 1}, {"id": "w-b", "weight": 3}, {"id": "w-c", "weight": 0.25}, {"id": "w-d", "weight": 10}, {"id": "w-e", "weight": 1e-3}]);
    let router = file.topology("rendezvous-weighted-5", doc(2, weighted, json!({"type": "rendezvous"})));
    routing_cases(&mut file, "rendezvous-weighted-5", &router);
    let mut seeded = doc(3, nodes(&["s-a", "s-b", "s-c"]), json!({"type": "rendezvous"}));
    seeded["hashing"] = json!({"seed": "5eed5eed5eed5eed5eed5eed5eed5eed"});
    let router = file.topology("rendezvous-seeded-3", seeded);
    routing_cases(&mut file, "rendezvous-seeded-3", &router);
    file
}

fn vbucket_file() -> VectorFile {
    let mut file = VectorFile::new(
        "vbucket",
        "Vbuckets with a dictionary: the derived round-robin map, an explicit map with chains of different lengths.",
        "generator",
    );
    let router = file.topology(
        "vbucket-1024-r2",
        doc(1, nodes(&["v0", "v1", "v2", "v3"]), json!({"type": "vbucket", "replicas": 2})),
    );
    routing_cases(&mut file, "vbucket-1024-r2", &router);
    let map = json!([["b", "a"], ["c"], ["a", "c", "b"], ["a", "b"], ["b"], ["c", "a"], ["a"], ["b", "c"]]);
    let mut explicit =
        doc(u64::MAX - 1, nodes(&["a", "b", "c"]), json!({"type": "vbucket", "vbuckets": 8, "map": map}));
    explicit["epoch"] = json!((u64::MAX - 1).to_string());
    let router = file.topology("vbucket-map-8", explicit);
    routing_cases(&mut file, "vbucket-map-8", &router);
    // A u64 key with identity hashing lands in vbucket `key % 8`: routing is the table, exactly.
    let mut identity = doc(5, nodes(&["a", "b", "c"]), json!({"type": "vbucket", "vbuckets": 8, "map": map}));
    identity["hashing"] = json!({"integers": "identity"});
    file.topology("vbucket-map-8-identity", identity);
    let chains = map.as_array().expect("map");
    for key in 0u64..16 {
        let chain = chains[(key % 8) as usize].as_array().expect("chain");
        file.case(&format!("vbucket-map-8-identity/table/{key}"), json!({"op": "route", "topology": "vbucket-map-8-identity", "key": u64_key(key), "expect": {"shard": key % 8, "node": chain[0]}}));
        file.case(&format!("vbucket-map-8-identity/chain/{key}"), json!({"op": "replicas", "topology": "vbucket-map-8-identity", "key": u64_key(key), "count": chain.len(), "expect": {"nodes": chain}}));
    }
    file
}

fn errors_file() -> VectorFile {
    let mut file = VectorFile::new(
        "errors",
        "Rejected documents, keys and arguments, with the error code each must give in every language.",
        "generator (expected codes stated by hand and checked against the core)",
    );
    let base = || doc(1, nodes(&["a", "b", "c"]), json!({"type": "ring"}));
    let mut bad: Vec<(&str, String, &str)> = vec![
        ("not-json", "{\"format\": ".into(), "invalid_topology"),
        ("nan-literal", base().to_string().replace("\"epoch\":1", "\"epoch\":NaN"), "invalid_topology"),
        ("array", "[]".into(), "invalid_topology"),
        ("empty-object", "{}".into(), "invalid_topology"),
        ("trailing-garbage", format!("{} x", base()), "invalid_topology"),
        ("deep-nesting", format!("{}{}", "[".repeat(200), "]".repeat(200)), "invalid_topology"),
    ];
    let mut edit = |label: &'static str, code: &'static str, change: &dyn Fn(&mut Value)| {
        let mut doc = base();
        change(&mut doc);
        bad.push((label, doc.to_string(), code));
    };
    edit("format-missing", "invalid_topology", &|d| drop(d.as_object_mut().map(|o| o.remove("format"))));
    edit("format-unknown", "invalid_topology", &|d| d["format"] = json!("shardroute/2"));
    edit("epoch-missing", "invalid_topology", &|d| drop(d.as_object_mut().map(|o| o.remove("epoch"))));
    edit("epoch-negative", "invalid_topology", &|d| d["epoch"] = json!(-1));
    edit("epoch-float", "invalid_topology", &|d| d["epoch"] = json!(1.5));
    edit("epoch-2p64", "invalid_topology", &|d| d["epoch"] = json!("18446744073709551616"));
    edit("epoch-bool", "invalid_topology", &|d| d["epoch"] = json!(true));
    edit("unknown-top-field", "invalid_topology", &|d| d["shards"] = json!(3));
    edit("unknown-node-field", "invalid_topology", &|d| d["nodes"][1]["wieght"] = json!(2));
    edit("unknown-strategy-field", "invalid_topology", &|d| d["strategy"]["points"] = json!(2));
    edit("nodes-not-array", "invalid_topology", &|d| d["nodes"] = json!({"a": {}}));
    edit("nodes-empty", "no_nodes", &|d| d["nodes"] = json!([]));
    edit("node-id-missing", "invalid_topology", &|d| d["nodes"][0] = json!({"weight": 1}));
    edit("node-id-empty", "invalid_topology", &|d| d["nodes"][0]["id"] = json!(""));
    edit("node-id-number", "invalid_topology", &|d| d["nodes"][0]["id"] = json!(7));
    edit("node-id-duplicate", "invalid_topology", &|d| d["nodes"][2]["id"] = json!("a"));
    edit("node-id-too-long", "limit_exceeded", &|d| d["nodes"][0]["id"] = json!("n".repeat(1025)));
    edit("weight-zero", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!(0));
    edit("weight-negative", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!(-1));
    edit("weight-string", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!("1"));
    edit("weight-huge", "invalid_topology", &|d| d["nodes"][0]["weight"] = json!(1e7));
    edit("address-number", "invalid_topology", &|d| d["nodes"][0]["address"] = json!(6379));
    edit("strategy-missing", "invalid_topology", &|d| drop(d.as_object_mut().map(|o| o.remove("strategy"))));
    edit("strategy-unknown", "invalid_topology", &|d| d["strategy"] = json!({"type": "random"}));
    edit("strategy-no-type", "invalid_topology", &|d| d["strategy"] = json!({"points_per_node": 3}));
    edit("ring-points-zero", "invalid_topology", &|d| d["strategy"]["points_per_node"] = json!(0));
    edit("ring-points-over-limit", "limit_exceeded", &|d| d["strategy"]["points_per_node"] = json!(100_000));
    edit("ring-total-points-over-limit", "limit_exceeded", &|d| {
        d["strategy"]["points_per_node"] = json!(65_536);
        d["nodes"] = Value::Array((0..300).map(|i| json!({"id": format!("n{i}")})).collect());
    });
    edit("jump-weighted", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "jump"});
        d["nodes"][1]["weight"] = json!(2);
    });
    edit("modulo-one-based-string", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "modulo", "one_based": "yes"})
    });
    edit("vbucket-zero", "invalid_topology", &|d| d["strategy"] = json!({"type": "vbucket", "vbuckets": 0}));
    edit("vbucket-over-limit", "limit_exceeded", &|d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 2_097_152})
    });
    edit("vbucket-map-short", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 3, "map": [["a"], ["b"]]})
    });
    edit("vbucket-map-missing-node", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 2, "map": [["a"], ["z"]]})
    });
    edit("vbucket-map-empty-chain", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 2, "map": [["a"], []]})
    });
    edit("vbucket-map-repeated-node", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 2, "map": [["a", "a"], ["b"]]})
    });
    edit("vbucket-map-and-replicas", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]], "replicas": 1})
    });
    edit("vbucket-replicas-too-many", "invalid_topology", &|d| {
        d["strategy"] = json!({"type": "vbucket", "replicas": 3})
    });
    edit("hashing-unknown-function", "invalid_topology", &|d| d["hashing"] = json!({"function": "fnv"}));
    for (label, raw, code) in bad {
        let outcome = Router::from_json(&raw).map(drop);
        expect_error(&mut file, &format!("load/{label}"), json!({"op": "load", "topology_json": raw}), code, outcome);
    }
    let router = file.topology("ring-3", base());
    let key_errors = [
        ("lone-high", json!({"utf16": [0x61, 0xD800]})),
        ("lone-low", json!({"utf16": [0xDC00, 0x61]})),
        ("u64-2p64", json!({"u64": "18446744073709551616"})),
        ("u64-negative", json!({"u64": "-1"})),
    ];
    for (label, key) in key_errors {
        let outcome = crate::run::to_key(&key).expect("well-formed vector").map(drop);
        expect_error(
            &mut file,
            &format!("route/{label}"),
            json!({"op": "route", "topology": "ring-3", "key": key}),
            "invalid_key",
            outcome.clone(),
        );
        expect_error(
            &mut file,
            &format!("replicas/{label}"),
            json!({"op": "replicas", "topology": "ring-3", "key": key, "count": 1}),
            "invalid_key",
            outcome.clone(),
        );
        expect_error(
            &mut file,
            &format!("route_many/{label}"),
            json!({"op": "route_many", "topology": "ring-3", "keys": [utf8("fine"), key]}),
            "invalid_key",
            outcome,
        );
    }
    for count in [0u32, 4] {
        let outcome = router.replicas("k", count).map(drop);
        expect_error(
            &mut file,
            &format!("replicas/count-{count}"),
            json!({"op": "replicas", "topology": "ring-3", "key": utf8("k"), "count": count}),
            "invalid_argument",
            outcome,
        );
    }
    let short = file.topology(
        "vbucket-short-chain",
        doc(1, nodes(&["a", "b"]), json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]]})),
    );
    let outcome = short.replicas("k", 2).map(drop);
    expect_error(
        &mut file,
        "replicas/longer-than-chain",
        json!({"op": "replicas", "topology": "vbucket-short-chain", "key": utf8("k"), "count": 2}),
        "invalid_argument",
        outcome,
    );
    file
}

fn topology_file() -> VectorFile {
    let mut file = VectorFile::new("topology", "Loading documents: canonical to_json, defaults spelled out, u64 epochs above 2^53 as strings, integer-or-string epochs.", "generator");
    let docs = [
        ("minimal", doc(0, nodes(&["a"]), json!({"type": "jump"}))),
        (
            "epoch-string",
            json!({"format": "shardroute/1", "epoch": "77", "nodes": [{"id": "a"}], "strategy": {"type": "modulo"}}),
        ),
        (
            "epoch-2p53",
            json!({"format": "shardroute/1", "epoch": 9007199254740992u64, "nodes": [{"id": "a"}], "strategy": {"type": "modulo"}}),
        ),
        (
            "epoch-max",
            json!({"format": "shardroute/1", "epoch": "18446744073709551615", "nodes": [{"id": "a"}], "strategy": {"type": "rendezvous"}}),
        ),
        (
            "all-fields",
            json!({"format": "shardroute/1", "epoch": 3, "hashing": {"function": "crc32", "hash_tag": "redis", "integers": "identity"}, "nodes": [{"id": "a", "address": "10.0.0.1:6379", "weight": 2.5, "zone": "z1"}, {"id": "b"}], "strategy": {"type": "ring", "points_per_node": 7}}),
        ),
        (
            "unicode-ids",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "узел-1"}, {"id": "节点-2"}, {"id": "🔑"}], "strategy": {"type": "rendezvous"}}),
        ),
        (
            "null-optional-fields",
            json!({"format": "shardroute/1", "epoch": 1, "hashing": null, "nodes": [{"id": "a", "address": null, "zone": null, "weight": null}], "strategy": {"type": "ring", "points_per_node": null}}),
        ),
        (
            "vbucket-map",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "vbucket", "vbuckets": 2, "map": [["b", "a"], ["a"]]}}),
        ),
    ];
    for (id, doc) in docs {
        let router = file.topology(id, doc);
        file.case(&format!("load/{id}"), json!({"op": "load", "topology": id, "expect": {"epoch": router.epoch().to_string(), "to_json": router.to_json()}}));
        let again = Router::from_json(&router.to_json()).expect("canonical form loads");
        assert_eq!(again.to_json(), router.to_json(), "{id}: to_json is not a fixed point");
        file.case(&format!("reload/{id}"), json!({"op": "load", "topology_json": router.to_json(), "expect": {"epoch": router.epoch().to_string(), "to_json": router.to_json()}}));
    }
    file
}

/// Every vector file as `(file name, text)`, in a fixed order. A new file is one
/// module under `generate/` and one entry here.
pub fn all() -> Vec<(String, String)> {
    [
        hashing_file(),
        jump_file(),
        modulo_file(),
        ring_file(),
        rendezvous_file(),
        vbucket_file(),
        errors_file(),
        topology_file(),
        calls::file(),
        dictionary::file(),
        // More strategies: add `<module>::file(),` entries below this line.
        cassandra::file(),
        vitess::file(),
        kafka::file(),
        elasticsearch::file(),
        ketama::file(),
        ids::file(),
        id_groups::file(),
        key_range::file(),
        hash_range::file(),
        directory::file(),
        multilevel::file(),
        trie::file(),
        token_ring::file(),
        maglev::file(),
        redis_cluster::file(),
        couchbase::file(),
        vshard::file(),
    ]
    .iter()
    .map(VectorFile::render)
    .collect()
}
