//! Topology documents built in code, the one way the integration tests write them:
//! `doc(nodes).strategy(json!(..))`, then `.hashing(..)`, `.epoch(..)` or `.with(..)`
//! where a test needs them, and `.value()`, `.text()`, `.router()`, `.load()` or
//! `.topology()`. Nodes come from a count (`n0`, `n1`, ...), a list of ids, or node
//! entries written out.
#![allow(dead_code)]

use serde_json::{json, Value};
use shardroute::{Error, Key, OwnedKey, Router, Topology};

/// Something that lists a document's nodes.
pub trait Nodes {
    /// The `nodes` array.
    fn entries(self) -> Value;
}

/// `n0`, `n1`, ... for a count.
impl Nodes for usize {
    fn entries(self) -> Value {
        ids(self).as_slice().entries()
    }
}

impl<S: AsRef<str>> Nodes for &[S] {
    fn entries(self) -> Value {
        Value::Array(self.iter().map(|id| json!({ "id": id.as_ref() })).collect())
    }
}

impl<S: AsRef<str>, const N: usize> Nodes for &[S; N] {
    fn entries(self) -> Value {
        self.as_slice().entries()
    }
}

impl<S: AsRef<str>> Nodes for &Vec<S> {
    fn entries(self) -> Value {
        self.as_slice().entries()
    }
}

/// Node entries written out in full (weights, zones, addresses).
impl Nodes for Value {
    fn entries(self) -> Value {
        self
    }
}

/// A document: format `shardroute/1`, epoch 1 and the nodes, until changed.
#[derive(Clone)]
pub struct Doc(Value);

pub fn doc(nodes: impl Nodes) -> Doc {
    Doc(json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes.entries()}))
}

impl Doc {
    pub fn strategy(self, strategy: Value) -> Doc {
        self.with("strategy", strategy)
    }

    pub fn hashing(self, hashing: Value) -> Doc {
        self.with("hashing", hashing)
    }

    /// A number, or a decimal string.
    pub fn epoch(self, epoch: impl Into<Value>) -> Doc {
        self.with("epoch", epoch.into())
    }

    /// Any other top-level field (`placement`, `hot_keys`, `checksum`).
    pub fn with(mut self, field: &str, value: Value) -> Doc {
        self.0[field] = value;
        self
    }

    /// Sets one field of the strategy.
    pub fn strategy_field(mut self, field: &str, value: Value) -> Doc {
        self.0["strategy"][field] = value;
        self
    }

    /// Sets one field of node `index`.
    pub fn node_field(mut self, index: usize, field: &str, value: Value) -> Doc {
        self.0["nodes"][index][field] = value;
        self
    }

    pub fn value(self) -> Value {
        self.0
    }

    /// The document as JSON text.
    pub fn text(self) -> String {
        self.0.to_string()
    }

    /// The router, or why the document does not load.
    pub fn load(self) -> Result<Router, Error> {
        Router::from_value(&self.0)
    }

    /// The router of a document that must load.
    pub fn router(self) -> Router {
        Router::from_value(&self.0).unwrap_or_else(|err| panic!("{err}\n{}", self.0))
    }

    /// The parsed document of a document that must load.
    pub fn topology(self) -> Topology {
        Topology::from_value(&self.0).unwrap_or_else(|err| panic!("{err}\n{}", self.0))
    }
}

/// Node ids `n0..n{count}`.
pub fn ids(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("n{i}")).collect()
}

/// Keys `key:{i}` for `i` in a range.
pub fn keys(start: u64, count: u64) -> Vec<String> {
    (start..start + count).map(|i| format!("key:{i}")).collect()
}

/// Lowercase hex digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A key in the form documents and operations write it (`{"hex": ..}` or `{"u64": ..}`).
pub fn key_object(key: &OwnedKey) -> Value {
    match key {
        OwnedKey::Bytes(bytes) => json!({ "hex": hex(bytes) }),
        OwnedKey::U64(value) => json!({"u64": value.to_string()}),
    }
}

/// A `key_range` or `hash_range` table over `n0..n{nodes}`: the boundaries as given,
/// range `i` owned by `n{owners[i]}`.
pub fn range_doc(kind: &str, boundaries: impl IntoIterator<Item = Value>, owners: &[usize], nodes: usize) -> Doc {
    let ranges: Vec<String> = owners.iter().map(|o| format!("n{o}")).collect();
    let boundaries: Vec<Value> = boundaries.into_iter().collect();
    doc(nodes).strategy(json!({"type": kind, "boundaries": boundaries, "ranges": ranges}))
}

/// A `key_range` table with byte-string boundaries (see `range_doc`).
pub fn key_range_doc(boundaries: &[Vec<u8>], owners: &[usize], nodes: usize) -> Doc {
    range_doc("key_range", boundaries.iter().map(|b| json!({ "hex": hex(b) })), owners, nodes)
}

/// Every call on ids answers or fails, never panics (a range runs from each id to
/// `width` past it, and to the end), and the router's canonical form reloads as itself.
pub fn answers_any_id(router: &Router, ids: &[u64], width: u64, replicas: u32) {
    for &id in ids {
        let _ = router.route(id);
        let _ = router.decode_id(id);
        let _ = router.replicas(id, replicas);
        let _ = router.shards_for_range(id, Some(Key::U64(id.wrapping_add(width))));
        let _ = router.shards_for_range(id, None);
    }
    let again = Router::from_json(&router.to_json()).expect("the canonical form reloads");
    assert_eq!(again.to_json(), router.to_json());
}
