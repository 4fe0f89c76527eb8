//! The declared key type (`"hashing": {"keys": "u64"}`): decimal text routes as its
//! integer, every other text is refused with `invalid_key`, and the default is unchanged.

use shardroute::{Key, Router};

fn doc(hashing: &str) -> String {
    format!(
        r#"{{"format": "shardroute/1", "epoch": 1, "nodes": [{{"id": "a"}}, {{"id": "b"}}, {{"id": "c"}}, {{"id": "d"}}, {{"id": "e"}}],
        "strategy": {{"type": "jump"}}, "hashing": {hashing}}}"#
    )
}

#[test]
fn decimal_text_routes_as_its_integer() {
    let router = Router::from_json(&doc(r#"{"keys": "u64"}"#)).unwrap();
    for value in [0u64, 7, 42, 1 << 53, u64::MAX] {
        let text = value.to_string();
        assert_eq!(router.route(text.as_str()).unwrap(), router.route(value).unwrap(), "{text}");
        assert_eq!(router.node(text.as_bytes()).unwrap(), router.node(value).unwrap(), "{text}");
        assert_eq!(router.explain(text.as_str()).unwrap().shard, router.route(value).unwrap());
    }
    let texts = ["1", "2", "3", "18446744073709551615"];
    let values = [1u64, 2, 3, u64::MAX];
    assert_eq!(router.route_many(texts).unwrap(), router.route_many(values.map(Key::U64)).unwrap());
    let mut out = Vec::new();
    router.route_many_into(texts, &mut out).unwrap();
    assert_eq!(out, router.route_many(values.map(Key::U64)).unwrap());
    router.route_packed_into(b"123", &[0, 1, 2, 3], &mut out).unwrap();
    assert_eq!(out, router.route_many(values[..3].iter().map(|&v| Key::U64(v))).unwrap());
}

#[test]
fn other_text_is_refused_with_one_code_and_message() {
    let router = Router::from_json(&doc(r#"{"keys": "u64"}"#)).unwrap();
    for text in ["07", "-1", "+1", "1e3", " 7", "7 ", "", "abc", "18446744073709551616", "٣"] {
        let err = router.route(text).unwrap_err();
        assert_eq!(err.code(), "invalid_key", "{text:?}");
        assert_eq!(
            err.message(),
            format!("key {text:?} is not a u64 in decimal (the document's hashing.keys is \"u64\")"),
            "{text:?}"
        );
        assert_eq!(router.route_many(["1", text]).unwrap_err().code(), "invalid_key");
        assert_eq!(router.replicas(text, 1).unwrap_err().code(), "invalid_key");
        assert_eq!(router.explain(text).unwrap_err().code(), "invalid_key");
    }
    let mut out = Vec::new();
    assert_eq!(router.route_packed_into(b"107", &[0, 1, 3], &mut out).unwrap_err().code(), "invalid_key");
    assert_eq!(out.len(), 1);
}

#[test]
fn default_keeps_text_and_integers_apart_and_its_json() {
    let plain = Router::from_json(&doc("{}")).unwrap();
    let bytes = Router::from_json(&doc(r#"{"keys": "bytes"}"#)).unwrap();
    assert_eq!(plain.to_json(), bytes.to_json());
    assert!(!plain.to_json().contains("\"keys\""));
    // "7" and 7 are different keys without a declaration (they differ on this document).
    assert_ne!(plain.hash("7"), plain.hash(7u64));
    let typed = Router::from_json(&doc(r#"{"keys": "u64"}"#)).unwrap();
    assert!(typed.to_json().contains(r#""keys":"u64""#));
    assert_eq!(Router::from_json(&typed.to_json()).unwrap().to_json(), typed.to_json());
    let err = Router::from_json(&doc(r#"{"keys": "int"}"#)).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
}

#[test]
fn the_binary_dictionary_refuses_a_declared_key_type() {
    let text = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}],
        "strategy": {"type": "vbucket", "vbuckets": 16}, "hashing": {"keys": "u64"}}"#;
    let topology = shardroute::Topology::from_json(text).unwrap();
    let err = shardroute::dictionary::encode(&topology).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().contains("hashing.keys"), "{err}");
    let plain = shardroute::Topology::from_json(&text.replace(r#""keys": "u64""#, r#""keys": "bytes""#)).unwrap();
    assert!(shardroute::dictionary::encode(&plain).is_ok());
}

#[test]
fn the_hash_of_decimal_text_is_the_hash_of_its_integer() {
    for spec in [r#"{"keys": "u64"}"#, r#"{"keys": "u64", "integers": "identity"}"#] {
        let hashing = shardroute::KeyHashing::from_json(spec).unwrap();
        assert_eq!(shardroute::hash_key("7", &hashing), shardroute::hash_key(7u64, &hashing), "{spec}");
        let router = Router::from_json(&doc(spec)).unwrap();
        assert_eq!(router.hash("42"), router.hash(42u64), "{spec}");
    }
}
