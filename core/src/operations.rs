//! Topology operations: changes the core computes, so every language edits a topology
//! the same way. An operation is data, like the topology it applies to:
//!
//! ```json
//! {"op": "trie_split", "leaf": "10", "node": {"id": "n7"}}
//! ```
//!
//! [`apply`] returns a JSON object with the new document under `"topology"` (canonical
//! form, epoch incremented by one) and an operation-specific report beside it (which
//! nodes go, which ranges moved, ...). The input is never modified. Bindings expose it
//! as one generic call, so a new operation needs no binding code.
//!
//! | `op` | strategy | what it does |
//! |---|---|---|
//! | `add_node` | any whose placement is derived from the node list | appends `node` (an entry as in `nodes`) |
//! | `remove_node` | same | removes the node with id `id` |

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::json::{self, Object};
use crate::strategy::Strategy;
use crate::topology::Topology;

/// Applies an operation to a topology: `{"topology": new document, ...report}`.
///
/// # Errors
/// `invalid_argument` for an unknown operation, one that does not fit the topology's
/// strategy, or bad operation parameters; `invalid_topology` when the result would not
/// be a valid topology; `limit_exceeded` past the documented limits.
pub fn apply(topology: &Topology, operation: &Value) -> Result<Value> {
    let name = match operation.get("op") {
        Some(Value::String(name)) => name.as_str(),
        _ => return Err(Error::argument("operation: expected an object with a string field \"op\"")),
    };
    // One arm per operation; each returns the new topology and its report.
    let (next, report): (Topology, Map<String, Value>) = match name {
        "add_node" => add_node(topology, operation)?,
        "remove_node" => remove_node(topology, operation)?,
        // Issue 3 operations: add `"<op>" => <module>::<function>(topology, operation)?,` arms here.
        other => return Err(Error::argument(format!("operation: unknown op {other:?}"))),
    };
    let mut result = report;
    result.insert("topology".into(), next.to_value());
    Ok(Value::Object(result))
}

/// Reads an operation object with its allowed fields (`op` included), rejecting
/// unknown ones with `invalid_argument`.
pub(crate) fn operation_object<'a>(operation: &'a Value, fields: &'static [&'static str]) -> Result<Object<'a>> {
    Object::new("operation", operation, fields).map_err(|err| Error::argument(String::from(err.message())))
}

/// The next epoch: one more than the current, refusing to wrap.
pub(crate) fn next_epoch(topology: &Topology) -> Result<u64> {
    topology.epoch.checked_add(1).ok_or_else(|| json::at("epoch", "already at its maximum; cannot advance"))
}

/// Strategies whose placement is a pure function of the node list: editing the list is
/// the whole change. Table-driven strategies (vbucket maps, ...) need their own ops.
fn derived_from_nodes(topology: &Topology) -> bool {
    match &topology.strategy {
        Strategy::Vbucket(spec) => spec.map.is_none(),
        Strategy::Modulo(_) | Strategy::Jump(_) | Strategy::Ring(_) | Strategy::Rendezvous(_) => true,
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

fn add_node(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "node"])?;
    if !derived_from_nodes(topology) {
        return Err(Error::argument(format!(
            "add_node: the {} strategy's placement is a table; use its own operations",
            topology.strategy.type_name()
        )));
    }
    let entry = object.required("node").map_err(|err| Error::argument(String::from(err.message())))?;
    let mut document = topology.to_value();
    document["epoch"] = json::u64_value(next_epoch(topology)?);
    if let Some(Value::Array(nodes)) = document.get_mut("nodes") {
        nodes.push(entry.clone());
    }
    let next = Topology::from_value(&document)?;
    let mut report = Map::new();
    report.insert("added".into(), Value::String(next.nodes[next.nodes.len() - 1].id.clone()));
    Ok((next, report))
}

fn remove_node(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "id"])?;
    if !derived_from_nodes(topology) {
        return Err(Error::argument(format!(
            "remove_node: the {} strategy's placement is a table; use its own operations",
            topology.strategy.type_name()
        )));
    }
    let id = match object.required("id").map_err(|err| Error::argument(String::from(err.message())))? {
        Value::String(id) => id.as_str(),
        _ => return Err(Error::argument("operation.id: expected a string")),
    };
    let index = topology
        .nodes
        .iter()
        .position(|node| node.id == id)
        .ok_or_else(|| Error::argument(format!("remove_node: no node {id:?}")))?;
    let mut document = topology.to_value();
    document["epoch"] = json::u64_value(next_epoch(topology)?);
    if let Some(Value::Array(nodes)) = document.get_mut("nodes") {
        let kept: Vec<Value> = nodes.iter().enumerate().filter(|(i, _)| *i != index).map(|(_, n)| n.clone()).collect();
        *nodes = kept;
    }
    let next = Topology::from_value(&document)?;
    let mut report = Map::new();
    report.insert("removed".into(), Value::String(String::from(id)));
    Ok((next, report))
}
