//! A node of the topology (`nodes[i]` of the document): its id, what clients need to
//! reach it, its weight and its state. Strategies refer to nodes by their index in the
//! list; the order is part of the placement.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::json::{self, Object, Put as _};
use crate::limits;

/// The fields a node entry may have.
const FIELDS: &[&str] = &["id", "address", "weight", "zone", "state"];

/// The operational state of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NodeState {
    /// Serving, and may receive data.
    #[default]
    Active,
    /// Being emptied: still serving what it holds, receives nothing new.
    Draining,
    /// Its data is lost: its vbuckets are served by promoted replicas.
    Failed,
}

impl NodeState {
    /// The document spelling: `"active"`, `"draining"` or `"failed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Active => "active",
            NodeState::Draining => "draining",
            NodeState::Failed => "failed",
        }
    }
}

/// A node of the topology.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Unique, non-empty id: what `node(key)` returns.
    pub id: String,
    /// Optional address for clients (`host:port`, URL, ...); not used in placement.
    pub address: Option<String>,
    /// Relative capacity, finite and in `(0, 1e6]`; 1 by default.
    pub weight: f64,
    /// Optional failure domain.
    pub zone: Option<String>,
    /// Operational state; `active` unless the document says otherwise.
    pub state: NodeState,
}

impl Node {
    /// An active node of weight 1 with no address or zone.
    ///
    /// # Example
    /// ```
    /// let node = shardroute::Node::new("db-1");
    /// assert_eq!((node.id.as_str(), node.weight), ("db-1", 1.0));
    /// ```
    pub fn new(id: impl Into<String>) -> Node {
        Node { id: id.into(), address: None, weight: 1.0, zone: None, state: NodeState::Active }
    }

    /// Reads one node entry at `path` (`nodes[3]`, `operation.node`, ...).
    pub(crate) fn from_value(path: &str, value: &Value) -> Result<Node> {
        let object = Object::new(path, value, FIELDS)?;
        let id = json::id(&object.path_of("id"), object.required("id")?)?;
        let text = |name: &str| -> Result<Option<String>> {
            let Some(value) = object.optional(name) else { return Ok(None) };
            let path = object.path_of(name);
            let text = json::str(&path, value)?;
            check_text_length(&path, text)?;
            Ok(Some(text.to_string()))
        };
        let (address, zone) = (text("address")?, text("zone")?);
        let weight = match object.optional("weight") {
            None => 1.0,
            Some(value) => weight(&object.path_of("weight"), value)?,
        };
        let state = object.choice(
            "state",
            "state",
            NodeState::Active,
            &[("active", NodeState::Active), ("draining", NodeState::Draining), ("failed", NodeState::Failed)],
        )?;
        Ok(Node { id: id.to_string(), address, weight, zone, state })
    }

    /// The canonical entry: `state` only when not active, so ordinary documents keep
    /// their form.
    pub(crate) fn to_value(&self) -> Value {
        let mut entry = Map::new();
        entry.put("id", Value::String(self.id.clone()));
        if let Some(address) = &self.address {
            entry.put("address", Value::String(address.clone()));
        }
        // Weights are finite by construction, so `from_f64` always succeeds.
        entry.put("weight", serde_json::Number::from_f64(self.weight).map_or(Value::Null, Value::Number));
        if let Some(zone) = &self.zone {
            entry.put("zone", Value::String(zone.clone()));
        }
        if self.state != NodeState::Active {
            entry.put("state", self.state.as_str().into());
        }
        Value::Object(entry)
    }
}

/// A node weight: finite, in `(0, 1e6]`.
pub(crate) fn weight(path: &str, value: &Value) -> Result<f64> {
    match value.as_f64() {
        Some(weight) if weight.is_finite() && weight > 0.0 && weight <= limits::MAX_WEIGHT => Ok(weight),
        _ => {
            Err(json::at(path, format_args!("must be a finite number > 0 and <= 1e6, found {}", json::describe(value))))
        }
    }
}

/// Reads the `nodes` array and checks it as a list ([`check_list`]).
pub(crate) fn parse_list(value: &Value) -> Result<Vec<Node>> {
    let entries = json::array("nodes", value)?;
    check_count(entries.len())?;
    let nodes = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| Node::from_value(&format!("nodes[{index}]"), entry))
        .collect::<Result<Vec<Node>>>()?;
    check_unique(&nodes)?;
    Ok(nodes)
}

/// The rules of a whole node list: not empty (`no_nodes`), at most
/// [`MAX_NODES`](limits::MAX_NODES) and addresses and zones of at most
/// [`MAX_NODE_TEXT_BYTES`](limits::MAX_NODE_TEXT_BYTES) (`limit_exceeded`), ids unique (`invalid_topology`
/// naming the later entry). Every edit of the list ends with this check.
pub(crate) fn check_list(nodes: &[Node]) -> Result<()> {
    check_count(nodes.len())?;
    for (index, node) in nodes.iter().enumerate() {
        for (name, text) in [("address", &node.address), ("zone", &node.zone)] {
            if let Some(text) = text {
                check_text_length(&format!("nodes[{index}].{name}"), text)?;
            }
        }
    }
    check_unique(nodes)
}

/// An `address` or `zone` of at most [`MAX_NODE_TEXT_BYTES`](limits::MAX_NODE_TEXT_BYTES)
/// bytes, the binary dictionary's cap (`limit_exceeded` naming the field otherwise).
fn check_text_length(path: &str, text: &str) -> Result<()> {
    let limit = limits::MAX_NODE_TEXT_BYTES;
    if text.len() as u64 > u64::from(limit) {
        return Err(Error::limit(format!("{path}: {} bytes; the limit is {limit}", text.len())));
    }
    Ok(())
}

fn check_count(count: usize) -> Result<()> {
    if count == 0 {
        return Err(Error::new(
            ErrorKind::NoNodes,
            "nodes: the node list is empty; a topology needs at least one node",
        ));
    }
    if count > limits::MAX_NODES as usize {
        return Err(Error::limit(format!("nodes: {count} nodes; the limit is {}", limits::MAX_NODES)));
    }
    Ok(())
}

fn check_unique(nodes: &[Node]) -> Result<()> {
    let mut ids: Vec<(&str, usize)> = nodes.iter().enumerate().map(|(index, node)| (node.id.as_str(), index)).collect();
    ids.sort_unstable();
    match ids.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        Some(pair) => Err(json::at(
            &format!("nodes[{}].id", pair[1].1.max(pair[0].1)),
            format_args!("duplicate node id {:?} (also nodes[{}])", pair[0].0, pair[1].1.min(pair[0].1)),
        )),
        None => Ok(()),
    }
}

/// The index of the node with id `id`.
pub(crate) fn index_of(nodes: &[Node], id: &str) -> Option<u32> {
    nodes.iter().position(|node| node.id == id).map(|index| index as u32)
}

/// The index of the node named by the string `value` at `path` (`invalid_topology`
/// "names node ..., which is not in nodes" when there is none).
pub(crate) fn index_from_value(path: &str, value: &Value, nodes: &[Node]) -> Result<u32> {
    let id = json::str(path, value)?;
    index_of(nodes, id).ok_or_else(|| json::at(path, format_args!("names node {id:?}, which is not in nodes")))
}
