//! Topology operations: generic node edits.

mod common;

use common::doc;
use serde_json::json;
use shardroute::{ops, Router, Topology};

fn topology(strategy: serde_json::Value) -> Topology {
    doc(&["a", "b"]).strategy(strategy).epoch(4).topology()
}

#[test]
fn add_and_remove_node_advance_the_epoch_and_round_trip() {
    let before = topology(json!({"type": "rendezvous"}));
    let added = ops::apply(&before, &json!({"op": "add_node", "node": {"id": "c", "weight": 2}})).unwrap();
    assert_eq!(added["added"], "c");
    let grown = Router::from_value(&added["topology"]).unwrap();
    assert_eq!(grown.epoch(), 5);
    assert_eq!(grown.nodes().len(), 3);
    let removed = ops::apply(grown.topology(), &json!({"op": "remove_node", "id": "a"})).unwrap();
    let shrunk = Router::from_value(&removed["topology"]).unwrap();
    assert_eq!(shrunk.epoch(), 6);
    assert_eq!(shrunk.nodes().iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), ["b", "c"]);
}

#[test]
fn operations_reject_what_does_not_fit() {
    let jump = topology(json!({"type": "jump"}));
    let code = |op: serde_json::Value| ops::apply(&jump, &op).unwrap_err().code();
    assert_eq!(code(json!({"op": "fly"})), "invalid_argument");
    assert_eq!(code(json!({"nope": 1})), "invalid_argument");
    assert_eq!(code(json!({"op": "remove_node", "id": "zz"})), "invalid_argument");
    assert_eq!(code(json!({"op": "add_node", "node": {"id": "a"}})), "invalid_topology"); // duplicate id
    assert_eq!(code(json!({"op": "add_node", "node": {"id": "c", "weight": 2}})), "invalid_topology"); // jump has no weights
    assert_eq!(code(json!({"op": "remove_node", "id": "a", "extra": true})), "invalid_argument");
    let table = doc(&["a"]).strategy(json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]]})).topology();
    assert_eq!(
        ops::apply(&table, &json!({"op": "add_node", "node": {"id": "b"}})).unwrap_err().code(),
        "invalid_argument"
    );
    let last = topology(json!({"type": "jump"}));
    let one = ops::apply(&last, &json!({"op": "remove_node", "id": "a"})).unwrap();
    let only = Topology::from_value(&one["topology"]).unwrap();
    assert_eq!(ops::apply(&only, &json!({"op": "remove_node", "id": "b"})).unwrap_err().code(), "no_nodes");
}
