//! The one way this crate builds topology documents (the vector generator and the
//! measuring programs): `doc(nodes, strategy)` gives format `shardroute/1`, epoch 1,
//! the nodes and the strategy; `.epoch(..)`, `.hashing(..)` and `.with(..)` change the
//! rest. Vector files write object fields in a fixed order, so the order fields are set
//! in never shows in a vector.

use serde_json::{json, Value};

/// Something that lists a document's nodes.
pub trait Nodes {
    /// The `nodes` array.
    fn entries(self) -> Value;
}

/// Node entries written out in full (weights, zones, addresses).
impl Nodes for Value {
    fn entries(self) -> Value {
        self
    }
}

/// `n0`, `n1`, ... for a count.
impl Nodes for usize {
    fn entries(self) -> Value {
        Value::Array((0..self).map(|i| json!({"id": format!("n{i}")})).collect())
    }
}

impl Nodes for &[&str] {
    fn entries(self) -> Value {
        Value::Array(self.iter().map(|id| json!({ "id": id })).collect())
    }
}

impl<const N: usize> Nodes for &[&str; N] {
    fn entries(self) -> Value {
        self[..].entries()
    }
}

impl Nodes for &[String] {
    fn entries(self) -> Value {
        Value::Array(self.iter().map(|id| json!({ "id": id })).collect())
    }
}

/// A `nodes` array.
pub fn nodes(list: impl Nodes) -> Value {
    list.entries()
}

/// A document at epoch 1 over `nodes` with `strategy`.
pub fn doc(nodes: impl Nodes, strategy: Value) -> Value {
    json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes.entries(), "strategy": strategy})
}

/// The changes a document takes after `doc`.
pub trait Document {
    /// Sets the epoch: a number, or a decimal string.
    fn epoch(self, epoch: impl Into<Value>) -> Value;
    /// Sets the key hashing spec.
    fn hashing(self, hashing: Value) -> Value;
    /// Sets any other top-level field (`placement`, `hot_keys`).
    fn with(self, field: &str, value: Value) -> Value;
}

impl Document for Value {
    fn epoch(self, epoch: impl Into<Value>) -> Value {
        self.with("epoch", epoch.into())
    }

    fn hashing(self, hashing: Value) -> Value {
        self.with("hashing", hashing)
    }

    fn with(mut self, field: &str, value: Value) -> Value {
        self[field] = value;
        self
    }
}

/// Integer keys hashed as themselves, so a hand-stated route can be read off the
/// strategy's table.
pub fn identity() -> Value {
    json!({"integers": "identity"})
}

/// `object` with the fields of `fields` set on it.
pub fn merged(mut object: Value, fields: Value) -> Value {
    for (name, value) in fields.as_object().expect("fields are an object") {
        object[name] = value.clone();
    }
    object
}

/// A strategy object: `{"type": kind}` and the fields of `fields`.
pub fn strategy(kind: &str, fields: Value) -> Value {
    merged(json!({ "type": kind }), fields)
}
