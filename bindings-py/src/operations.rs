//! `shardroute.apply`: a shell over [`sr::ops::apply`], topology operations as
//! data.

use pyo3::prelude::*;
use shardroute as sr;

use crate::errors;
use crate::json::{document_text, json_text, value_to_py};

/// Applies an operation to a topology and returns {"topology": the new document,
/// ...report}: the new document in canonical form with the epoch advanced by one, and
/// beside it what the operation reports (the node added, the node removed, ...). The
/// input is never modified; Router(result["topology"]) routes by the new topology.
///
/// topology is a document as for Router (JSON text or a mapping); operation a JSON
/// object as text or a mapping, e.g. {"op": "add_node", "node": {"id": "d"}} or
/// {"op": "remove_node", "id": "b"}. The result is plain JSON data (dict, list, str,
/// int, ...).
///
/// Raises InvalidTopologyError for a malformed topology (or when the result would not
/// be a valid one), InvalidArgumentError for a malformed or unknown operation or one
/// that does not fit the topology's strategy, NoNodesError when it would remove the last
/// node, LimitExceededError past the limits.
#[pyfunction]
pub fn apply<'py>(topology: &Bound<'py, PyAny>, operation: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = topology.py();
    let topology = sr::Topology::from_json(&document_text(topology, "topology")?).map_err(errors::to_py)?;
    let text = json_text(operation, "operation", sr::ErrorKind::InvalidArgument)?;
    let operation = sr::ops::operation_from_json(&text).map_err(errors::to_py)?;
    let result = sr::ops::apply(&topology, &operation).map_err(errors::to_py)?;
    value_to_py(py, &result)
}
