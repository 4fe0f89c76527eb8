//! The extension module `shardroute._native`: a pyo3 shell over the `shardroute` core
//! crate (`sr::`). It converts arguments, calls core and maps errors; it holds no
//! routing or hashing logic. The public package `shardroute` re-exports it.
//!
//! Modules mirror core: `router` (Router), `migration` (Migration), `hashing`
//! (hash_key), `strategy` (jump, modulo_moves, decoded ids), `operations` (apply),
//! `diff` (diff), `dictionary` (encode_dictionary, decode_dictionary), `redirect`
//! (parse_redirect, Redis Cluster's MOVED and ASK errors), `placement_names` (locations),
//! `session` (ClusterSession, the sans-IO Redis Cluster client
//! session), `source` (SourceSession, the sans-IO etcd and HTTP topology sources), `key`
//! (key and integer conversion, salted keys back), `json` (documents as text or
//! mappings, JSON results), and `errors` (every exception class and the one mapping
//! from core errors).

use pyo3::prelude::*;
use shardroute as sr;

mod arrays;
mod dictionary;
mod diff;
mod errors;
mod follower;
mod hashing;
mod json;
mod key;
mod migration;
mod migration_session;
mod operations;
mod placement_names;
mod records;
mod redirect;
mod router;
mod session;
mod source;
mod service;
mod strategy;

/// shardroute: one deterministic routing core for sharded systems.
///
/// A Router is built from a JSON topology document (format version, epoch, key
/// hashing, nodes, strategy) and answers, for any key, which shard and which node own
/// it and which nodes hold its replicas, bit for bit the same as the Rust, Node.js and
/// WebAssembly packages; it also locates a key (address, zone, rendered database and
/// table names), salts hot keys, plans range scans and decodes ids; for a vbucket
/// dictionary in motion it routes reads and writes (route_read, route_write) and
/// refuses stale topologies (replace). apply edits a topology by operations
/// (add_node, remove_node, plan_rebalance, ...); diff reports which keys move between
/// two routers, and Migration(before, after) where services read and write and what a
/// copy job moves while the data moves; encode_dictionary and decode_dictionary convert
/// a vbucket dictionary to and from its compact binary form; hash_key, jump and
/// modulo_moves expose the bare hash and shard functions. For Redis Cluster clients, parse_redirect reads MOVED
/// and ASK errors, which Router.moved and Router.ask act on; Router.same_slot,
/// Router.group_by_node and Router.read_replica serve multi-key commands, pipelines and
/// replica reads; ClusterSession makes a Redis Cluster client's decisions (redirects,
/// retries, refreshes) without I/O, for shardroute.redis and any other shell.
/// Every error is a ShardrouteError (a ValueError) with a stable .code.
/// MAX_DOCUMENT_BYTES and MAX_JSON_NESTING are the core's limits on a document's JSON
/// text (bytes) and nesting (arrays and objects), which every source reads within.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The core's limits, re-exported so that no shell holds its own copy of a number.
    module.add("MAX_DOCUMENT_BYTES", sr::limits::MAX_DOCUMENT_BYTES)?;
    module.add("MAX_JSON_NESTING", sr::limits::MAX_JSON_NESTING)?;
    module.add_class::<router::Router>()?;
    module.add_class::<migration::Migration>()?;
    module.add_function(wrap_pyfunction!(hashing::hash_key, module)?)?;
    module.add_function(wrap_pyfunction!(strategy::jump, module)?)?;
    module.add_function(wrap_pyfunction!(strategy::modulo_moves, module)?)?;
    module.add_function(wrap_pyfunction!(operations::apply, module)?)?;
    module.add_function(wrap_pyfunction!(diff::diff, module)?)?;
    module.add_function(wrap_pyfunction!(dictionary::encode_dictionary, module)?)?;
    module.add_function(wrap_pyfunction!(dictionary::decode_dictionary, module)?)?;
    module.add_function(wrap_pyfunction!(redirect::parse_redirect, module)?)?;
    module.add_class::<session::ClusterSession>()?;
    module.add_class::<session::Command>()?;
    module.add_class::<session::Action>()?;
    module.add_function(wrap_pyfunction!(session::session_defaults, module)?)?;
    module.add_function(wrap_pyfunction!(session::parse_address, module)?)?;
    module.add_class::<follower::TopologyFollower>()?;
    module.add_class::<migration_session::MigrationSession>()?;
    module.add_class::<follower::Offered>()?;
    module.add_function(wrap_pyfunction!(follower::follower_defaults, module)?)?;
    module.add_class::<source::SourceSession>()?;
    service::register(module)?;
    errors::register(module)?;
    Ok(())
}
