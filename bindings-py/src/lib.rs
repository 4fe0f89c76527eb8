//! The extension module `shardroute._native`: a pyo3 shell over the `shardroute` core
//! crate (`sr::`). It converts arguments, calls core and maps errors; it holds no
//! routing or hashing logic. The public package `shardroute` re-exports it.
//!
//! Modules mirror core: `router` (Router), `hashing` (hash_key), `strategy` (jump),
//! `key` (key and integer conversion), `json` (documents as text or mappings), and
//! `errors` (every exception class and the one mapping from core errors).

use pyo3::prelude::*;

mod errors;
mod hashing;
mod json;
mod key;
mod router;
mod strategy;

/// shardroute: one deterministic routing core for sharded systems.
///
/// A Router is built from a JSON topology document (format version, epoch, key
/// hashing, nodes, strategy) and answers, for any key, which shard and which node own
/// it and which nodes hold its replicas, bit for bit the same as the Rust, Node.js and
/// WebAssembly packages. hash_key and jump expose the bare hash and shard functions.
/// Every error is a ShardrouteError (a ValueError) with a stable .code.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<router::Router>()?;
    module.add_function(wrap_pyfunction!(hashing::hash_key, module)?)?;
    module.add_function(wrap_pyfunction!(strategy::jump, module)?)?;
    errors::register(module)?;
    Ok(())
}
