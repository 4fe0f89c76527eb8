//! [`apply`]: topology operations ([`sr::operations`]) as one generic call.

use napi::Unknown;
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};

/// Applies an operation to a topology: both are JSON text (`index.js` serializes
/// objects). Returns the result object's JSON text, which `index.js` parses: the new
/// document under `topology` and the operation's report beside it. A new operation in
/// the core needs no code here.
///
/// # Errors
/// The topology's errors as for `Router` (`invalid_topology`, `no_nodes`,
/// `limit_exceeded`); `invalid_argument` for an operation that is not JSON text of an
/// object, and the core's errors of [`sr::ops::apply`].
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn apply(topology: Unknown, operation: Unknown) -> Result<String> {
    let topology = crate::document_text(topology, "topology", sr::ErrorKind::InvalidTopology)?;
    let topology = sr::Topology::from_json(&topology).or_throw()?;
    let operation = crate::document_text(operation, "operation", sr::ErrorKind::InvalidArgument)?;
    let operation = sr::ops::operation_from_json(&operation).or_throw()?;
    let result = sr::ops::apply(&topology, &operation).or_throw()?;
    Ok(result.to_string())
}
