//! `Router::explain` retraces the lookup that `route` makes: for every topology of the
//! conformance vectors (every strategy, profile and hashing option) and a spread of
//! keys, the explanation's shard and owner are `route`'s and `node`'s, and what it says
//! it hit is consistent with the hash it reports.

mod common;

use common::doc;
use serde_json::{json, Value};
use shardroute::explain::{Explanation, Hit};
use shardroute::{jump, Key, Router};

/// Every topology document of the committed vectors that loads.
fn vector_routers() -> Vec<(String, Router)> {
    let folder = format!("{}/../conformance/vectors", env!("CARGO_MANIFEST_DIR"));
    let mut routers = Vec::new();
    for entry in std::fs::read_dir(folder).expect("vectors folder") {
        let path = entry.expect("entry").path();
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let Some(Value::Object(topologies)) = file.get("topologies") else { continue };
        for (name, document) in topologies {
            if let Ok(router) = Router::from_value(document) {
                routers.push((name.clone(), router));
            }
        }
    }
    assert!(routers.len() > 50, "only {} topologies found", routers.len());
    routers
}

fn keys() -> Vec<Key<'static>> {
    let texts: &[&'static str] =
        &["", "user:1", "{user1000}.following", "foo{}{bar}", "12345", "\u{e9}t\u{e9}", "order:99:item", "zzz"];
    let mut keys: Vec<Key<'static>> = texts.iter().map(|text| Key::from(*text)).collect();
    keys.extend([0u64, 1, 42, 1 << 40, u64::MAX].map(Key::U64));
    keys.push(Key::Bytes(b"\xff\x00binary"));
    keys
}

/// What the hit says, checked against the reported hash and shard.
fn check_hit(name: &str, explanation: &Explanation, key: Key<'_>) {
    let value = explanation.hashed.as_ref().map(|hashed| hashed.value);
    let shard = explanation.shard;
    match &explanation.hit {
        Hit::Modulo { nodes, one_based } => {
            let remainder = (value.unwrap() % u64::from(*nodes)) as u32;
            let expected = if *one_based && remainder == 0 { *nodes } else { remainder };
            assert_eq!(shard, expected, "{name}");
        }
        Hit::Jump { buckets } => assert_eq!(shard, jump(value.unwrap(), *buckets).unwrap(), "{name}"),
        Hit::TableEntry { entry, size } => assert_eq!(u64::from(*entry), value.unwrap() % u64::from(*size), "{name}"),
        Hit::Vbucket { vbucket, vbuckets, overridden: false } => {
            assert_eq!(u64::from(*vbucket), value.unwrap() % u64::from(*vbuckets), "{name}");
            assert_eq!(*vbucket, shard, "{name}");
        }
        Hit::Slot { slot } => assert_eq!(u64::from(*slot), value.unwrap() % 16384, "{name}"),
        Hit::Bucket { bucket, buckets } => assert_eq!(u64::from(*bucket), value.unwrap() % u64::from(*buckets) + 1),
        Hit::HashRange { range, start, end } => {
            let hash = value.unwrap();
            assert!(*start <= hash && end.is_none_or(|end| hash < end), "{name}: {hash:#x} in {start:#x}..{end:?}");
            assert_eq!(*range, shard, "{name}");
        }
        Hit::KeyRange { range, start, end } => {
            if let Key::Bytes(bytes) = key {
                assert!(start.as_deref().is_none_or(|start| start <= bytes), "{name}");
                assert!(end.as_deref().is_none_or(|end| bytes < end), "{name}");
            }
            assert_eq!(*range, shard, "{name}");
        }
        Hit::Leaf { prefix } => {
            let bits = format!("{:064b}", value.unwrap());
            assert!(bits.starts_with(prefix.as_str()), "{name}: {bits} under leaf {prefix}");
        }
        Hit::Partition { partition, partitions, .. } => {
            assert_eq!(u64::from(*partition), value.unwrap() % u64::from(*partitions), "{name}");
            assert_eq!(*partition, shard, "{name}");
        }
        Hit::Point { .. } | Hit::Token { .. } | Hit::Vbucket { .. } | Hit::Listed | Hit::Shard => {}
        other => panic!("{name}: a hit this test does not know: {other:?}"),
    }
}

#[test]
fn explain_agrees_with_route_for_every_vector_topology() {
    let mut hits = std::collections::BTreeSet::new();
    for (name, router) in vector_routers() {
        for key in keys() {
            let explained = router.explain(key);
            let routed = router.route(key);
            match (explained, routed) {
                (Ok(explanation), Ok(shard)) => {
                    assert_eq!(explanation.shard, shard, "{name} {key:?}");
                    assert_eq!(explanation.node, router.node(key).unwrap(), "{name} {key:?}");
                    assert_eq!(explanation.strategy, router.strategy().type_name());
                    // A range holds the key's partition key (the whole key without a rule).
                    check_hit(&name, &explanation, router.hashing().routed(key));
                    assert!(explanation.why().contains(&format!("{:?}", explanation.node)), "{name}");
                    hits.insert(format!("{:?}", explanation.hit).split([' ', '{']).next().unwrap().to_string());
                }
                (Err(explained), Err(routed)) => assert_eq!(explained, routed, "{name} {key:?}"),
                (explained, routed) => panic!("{name} {key:?}: explain {explained:?}, route {routed:?}"),
            }
        }
    }
    let every = [
        "Shard",
        "Modulo",
        "Jump",
        "Point",
        "TableEntry",
        "Token",
        "Vbucket",
        "Slot",
        "Bucket",
        "KeyRange",
        "HashRange",
        "Leaf",
        "Partition",
        "Listed",
    ];
    for hit in every {
        assert!(hits.contains(hit), "no vector topology explained a {hit} hit: {hits:?}");
    }
}

#[test]
fn the_hashed_bytes_are_the_tag_or_the_key() {
    let tagged = doc(&["a", "b"]).strategy(json!({"type": "jump"})).hashing(json!({"hash_tag": "redis"})).router();
    let explanation = tagged.explain("{user1000}.following").unwrap();
    let hashed = explanation.hashed.unwrap();
    assert_eq!((hashed.input.as_slice(), hashed.tagged), (&b"user1000"[..], true));
    assert_eq!(hashed.value, tagged.hash("user1000"));
    assert_eq!(hashed.function, "siphash-2-4");
    let whole = tagged.explain("foo{}{bar}").unwrap().hashed.unwrap();
    assert_eq!((whole.input.as_slice(), whole.tagged), (&b"foo{}{bar}"[..], false));

    let identity = doc(3).strategy(json!({"type": "modulo"})).hashing(json!({"integers": "identity"})).router();
    let explanation = identity.explain(7u64).unwrap();
    assert_eq!(explanation.hashed.as_ref().unwrap().function, "identity");
    assert_eq!(explanation.why(), r#"identity(key) = 0x7, % 3 = shard 1, node "n1""#);

    let redis = doc(&["a", "b", "c"]).strategy(json!({"type": "redis_cluster"})).router();
    let explanation = redis.explain(42u64).unwrap();
    assert_eq!(explanation.hashed.unwrap().input, b"42", "Redis hashes an integer's decimal text");
}

#[test]
fn overrides_and_directory_entries_say_so() {
    let vbuckets = doc(&["a", "b"])
        .strategy(json!({"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]],
            "overrides": [{"key": {"utf8": "hot"}, "vbucket": 3}]}))
        .router();
    let explanation = vbuckets.explain("hot").unwrap();
    assert_eq!(explanation.hit, Hit::Vbucket { vbucket: 3, vbuckets: 4, overridden: true });
    assert_eq!(explanation.why(), r#"the key's override sends it to vbucket 3 of 4, whose chain starts with "b""#);

    let directory = doc(&["a", "b"])
        .strategy(json!({"type": "directory", "entries": [{"key": {"utf8": "vip"}, "node": "b"}],
            "fallback": {"type": "jump"}}))
        .router();
    let explanation = directory.explain("vip").unwrap();
    assert_eq!((explanation.hit, explanation.hashed), (Hit::Listed, None));
    assert_eq!(directory.explain("other").unwrap().hit, Hit::Jump { buckets: 2 });
}

#[test]
fn ranges_and_leaves_name_their_bounds() {
    let ranges = doc(&["a", "b", "c"])
        .strategy(json!({"type": "key_range", "boundaries": [{"utf8": "g"}, {"utf8": "p"}], "ranges": ["a", "b", "c"]}))
        .router();
    let explanation = ranges.explain("kiwi").unwrap();
    assert_eq!(explanation.hit, Hit::KeyRange { range: 1, start: Some(b"g".to_vec()), end: Some(b"p".to_vec()) });
    assert_eq!(explanation.why(), r#"the key sorts into range 1 ["g", "p"), owned by "b""#);
    assert_eq!(ranges.explain("apple").unwrap().why(), r#"the key sorts into range 0 [start, "g"), owned by "a""#);

    let trie = doc(&["a", "b", "c"])
        .strategy(json!({"type": "trie", "leaves": [{"prefix": "0", "node": "a"}, {"prefix": "10", "node": "b"},
            {"prefix": "11", "node": "c"}]}))
        .router();
    for key in ["x", "y", "z", "w"] {
        let Hit::Leaf { prefix } = trie.explain(key).unwrap().hit else { panic!("a trie hits a leaf") };
        let expected = match trie.node(key).unwrap() {
            "a" => "0",
            "b" => "10",
            _ => "11",
        };
        assert_eq!(prefix, expected);
    }
}
