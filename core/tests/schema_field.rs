//! A document may name its JSON Schema (`"$schema": "./topology.schema.json"`, for
//! editor completion): the core reads the field as a string and otherwise ignores it, so
//! the router, the canonical form and the checksum are those of the same document without it.

mod common;

use common::doc;
use serde_json::{json, Value};
use shardroute::Router;

#[test]
fn a_schema_reference_is_accepted_and_left_out_of_the_canonical_form() {
    let plain = doc(&["a", "b", "c"]).strategy(json!({"type": "ring", "points_per_node": 40}));
    let named = plain.clone().with("$schema", json!("../docs/topology.schema.json"));
    let (plain, named) = (plain.router(), named.router());
    assert_eq!(named.to_json(), plain.to_json());
    assert!(!named.to_json().contains("$schema"));
    for key in ["user:1", "user:2", "cart:9"] {
        assert_eq!(named.node(key).unwrap(), plain.node(key).unwrap());
    }
}

#[test]
fn a_checksummed_document_keeps_its_checksum_with_a_schema_reference() {
    let base = doc(&["a", "b"]).strategy(json!({"type": "vbucket", "vbuckets": 8}));
    let canonical: Value = serde_json::from_str(&base.router().to_json()).unwrap();
    let mut checksummed = canonical.clone();
    checksummed["checksum"] = json!(shardroute::Topology::from_value(&canonical).unwrap().checksum());
    let mut named = checksummed.clone();
    named["$schema"] = json!("https://shardroute.invalid/schema/topology-v1.json");
    let router = Router::from_json(&named.to_string()).expect("the checksum covers the content, not $schema");
    assert_eq!(router.to_json(), Router::from_json(&checksummed.to_string()).unwrap().to_json());
}

#[test]
fn a_schema_reference_that_is_not_a_string_is_refused_with_its_path() {
    for value in [json!(1), json!({"$ref": "x"}), json!(["a"])] {
        let document = doc(&["a"]).strategy(json!({"type": "jump"})).with("$schema", value);
        let err = document.load().expect_err("a non-string $schema is refused");
        assert_eq!(err.code(), "invalid_topology");
        assert!(err.to_string().starts_with("invalid_topology: $schema: expected a string"), "{err}");
    }
    let null = doc(&["a"]).strategy(json!({"type": "jump"})).with("$schema", Value::Null);
    assert!(null.load().is_ok(), "null is absent, as for every optional field");
}
