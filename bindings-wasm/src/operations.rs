//! `apply`: the core's [`sr::ops::apply`], the one call for every topology
//! operation (`add_node`, `remove_node`, ...), so a new operation needs no code here.
//!
//! The operations are the largest part of the core's code (about 150 KB of the .wasm).
//! A build without this crate's `operations` feature (on by default; build.sh's
//! SHARDROUTE_WASM_FEATURES) leaves them out: `apply`, `Router.moved` and `new
//! ClusterSession` (a session's refreshes and MOVEDs are operations), the calls that reach
//! them, then throw `invalid_argument`, and everything else is unchanged.

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
    let operation = topology::operation_value(operation)?;
    let result = applied(&document, &operation)?;
    Ok(topology::value_to_js(&result, "the result of apply")?)
}

/// The core's [`sr::ops::apply`].
#[cfg(feature = "operations")]
fn applied(document: &sr::Topology, operation: &serde_json::Value) -> sr::Result<serde_json::Value> {
    sr::ops::apply(document, operation)
}

/// Without the `operations` feature: `invalid_argument`, naming the feature.
#[cfg(not(feature = "operations"))]
fn applied(_: &sr::Topology, _: &serde_json::Value) -> sr::Result<serde_json::Value> {
    Err(not_built_in("apply"))
}

/// The core's [`sr::Router::moved`] (a `redis_moved` operation).
#[cfg(feature = "operations")]
pub(crate) fn moved(router: &sr::Router, slot: u32, address: &str) -> sr::Result<sr::Router> {
    router.moved(slot, address)
}

/// Without the `operations` feature: `invalid_argument`, naming the feature.
#[cfg(not(feature = "operations"))]
pub(crate) fn moved(_: &sr::Router, _: u32, _: &str) -> sr::Result<sr::Router> {
    Err(not_built_in("Router.moved"))
}

/// A new core session ([`sr::session::ClusterSession::new`]): its refreshes and MOVEDs
/// are topology operations.
#[cfg(feature = "operations")]
pub(crate) fn session(seeds: &[&str], config: sr::session::ClusterConfig) -> sr::Result<sr::session::ClusterSession> {
    sr::session::ClusterSession::new(seeds, config)
}

/// Without the `operations` feature: `invalid_argument`, naming the feature (after the
/// arguments were read, as the full build reads them).
#[cfg(not(feature = "operations"))]
pub(crate) fn session(_: &[&str], _: sr::session::ClusterConfig) -> sr::Result<sr::session::ClusterSession> {
    Err(not_built_in("ClusterSession"))
}

/// The error of a call whose code this build leaves out.
#[cfg(not(feature = "operations"))]
pub(crate) fn not_built_in(call: &str) -> sr::Error {
    sr::Error::new(
        sr::ErrorKind::InvalidArgument,
        alloc::format!(
            "{call} is not built into this package (built without the `operations` feature of shardroute-wasm)"
        ),
    )
}
