//! JSON text is read strictly everywhere the core reads it: a field named twice in one
//! object is refused with its path (two parsers, one keeping the first and one the last,
//! would read two topologies from the same bytes), and nesting is bounded.

use shardroute::ops::{apply, operation_from_json};
use shardroute::{KeyHashing, Topology};

fn refused(text: &str) -> shardroute::Error {
    Topology::from_json(text).expect_err(text)
}

#[test]
fn a_field_named_twice_is_refused_with_its_path() {
    let cases = [
        (
            r#"{"format": "shardroute/1", "epoch": 1, "epoch": 2, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#,
            "the top level: the field \"epoch\"",
        ),
        (
            r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b", "id": "c"}], "strategy": {"type": "jump"}}"#,
            "nodes[1]: the field \"id\"",
        ),
        (
            r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "ring", "points_per_node": 1, "points_per_node": 2}}"#,
            "strategy: the field \"points_per_node\"",
        ),
        (
            r#"{"format": "shardroute/1", "epoch": 1, "hashing": {"seed": "000102030405060708090a0b0c0d0e0f", "seed": "0f0e0d0c0b0a09080706050403020100"}, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#,
            "hashing: the field \"seed\"",
        ),
    ];
    for (text, start) in cases {
        let err = refused(text);
        assert_eq!(err.code(), "invalid_topology", "{text}");
        assert!(err.message().starts_with(start), "{}", err.message());
    }
    // The same documents without the second field load.
    let once = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#;
    assert_eq!(Topology::from_json(once).unwrap().epoch, 1);
}

#[test]
fn the_same_key_in_different_objects_is_fine() {
    let text = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a", "zone": "z"}, {"id": "b", "zone": "z"}], "strategy": {"type": "jump"}}"#;
    assert_eq!(Topology::from_json(text).unwrap().nodes.len(), 2);
}

#[test]
fn hashing_specs_and_operations_are_read_as_strictly() {
    let err = KeyHashing::from_json(r#"{"function": "crc32", "function": "siphash-2-4"}"#).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("the top level: the field \"function\""), "{}", err.message());
    let err = operation_from_json(r#"{"op": "add_node", "node": {"id": "d", "id": "e"}}"#).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().starts_with("node: the field \"id\""), "{}", err.message());
    assert_eq!(operation_from_json("{").unwrap_err().code(), "invalid_argument");
    // A Couchbase bucket config given as text inside an operation, with a field twice.
    let topology = Topology::from_json(
        r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#,
    )
    .unwrap();
    let operation = serde_json::json!({"op": "import_couchbase_config", "config": r#"{"rev": 1, "rev": 2}"#});
    let err = apply(&topology, &operation).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().contains("the field \"rev\" appears twice"), "{}", err.message());
}

#[test]
fn nesting_is_bounded_without_exhausting_the_stack() {
    // 100,000 levels would overflow a recursive reader's stack; the reader stops at 64.
    for depth in [65usize, 129, 100_000] {
        let text = format!(
            r#"{{"format": "shardroute/1", "epoch": 1, "nodes": [{{"id": "a"}}], "strategy": {{"type": "jump"}}, "placement": {}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let err = refused(&text);
        assert_eq!(err.code(), "limit_exceeded");
        // The path where the limit is reached: placement[0][0]... (63 indices below placement).
        let path = format!("placement{}: nested in 64 arrays and objects; the limit is 64", "[0]".repeat(63));
        assert!(err.message().starts_with(&path), "{}", err.message());
        let deep_operation = format!(r#"{{"op": {}{}}}"#, "{\"a\":".repeat(depth), "}".repeat(depth));
        let err = operation_from_json(&deep_operation).unwrap_err();
        assert_eq!(err.code(), "limit_exceeded");
        assert!(err.message().starts_with(&format!("op{}: nested in 64", ".a".repeat(63))), "{}", err.message());
    }
    // Within the limit, depth is no error of the reader's (the field is simply wrong).
    let text = format!(
        r#"{{"format": "shardroute/1", "epoch": 1, "nodes": [{{"id": "a"}}], "strategy": {{"type": "jump"}}, "placement": {}{}}}"#,
        "[".repeat(63),
        "]".repeat(63)
    );
    let err = refused(&text);
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("placement"), "{}", err.message());
}
