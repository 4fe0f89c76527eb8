//! `apply`: the core's [`sr::ops::apply`], the one call for every topology
//! operation (`add_node`, `remove_node`, ...), so a new operation needs no code here.

use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::topology;

/// Applies an operation to a topology document and returns the core's result object:
/// the new document under `topology` (canonical, epoch + 1) and the operation's report
/// beside it. Both arguments are JSON text or objects (BigInt values written as decimal
/// strings); the inputs are never modified.
///
/// Throws `invalid_topology`, `no_nodes` or `limit_exceeded` for the document (as `new
/// Router`), `invalid_argument` for an operation that is not a JSON object with a known
/// `op`, does not fit the strategy or has bad parameters, and `invalid_topology` when the
/// result would not be a valid topology.
#[wasm_bindgen]
pub fn apply(document: &JsValue, operation: &JsValue) -> Result<JsValue> {
    let document = sr::Topology::from_json(&topology::json_text(document, "topology")?)?;
    let operation = topology::argument_value(operation, "operation")?;
    let result = sr::ops::apply(&document, &operation)?;
    Ok(topology::value_to_js(&result, "the result of apply")?)
}
