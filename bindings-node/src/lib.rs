//! The Node.js addon of shardroute: a napi-rs shell over the core crate.
//!
//! This crate only converts JavaScript values into core types and maps core errors:
//! every routing and hashing decision is the core's (`sr::`). `index.js` is the package's
//! public face: it serializes object documents (topologies, hashing specs, operations),
//! parses the JSON results of `apply` and `diff`, wraps the native routers `replace`,
//! `moved` and a `Migration` return and the native migrations, turns the `[name, value]`
//! pairs of `decodeId` and `locate` into objects, looks up the node ids of the node
//! indices `node`, `nodeMany` and `groupByNode` get (one shared string per node), makes
//! `groupByNode`'s groups from one flat `Uint32Array`, copies arrays of string keys into
//! one `Uint16Array` for `routeMany`, `nodeMany` and `groupByNode`, wraps the native
//! session as the public `ClusterSession` (its actions become the package's `Action`),
//! the native follower as the public `TopologyFollower` (its outcomes become the package's
//! `Offered`) and the native migration session as the public `MigrationSession`, and turns
//! thrown errors into `ShardrouteError`.
//!
//! Modules mirror the core's: `router` (`Router`), `migration` (`Migration`),
//! `operations` (`apply`), `diff` (`diff`), `dictionary` (`encodeDictionary`,
//! `decodeDictionary`), `redirect` (`parseRedirect`, Redis Cluster's `MOVED` and `ASK`
//! errors), `session` (`ClusterSession`, `Command`, `sessionDefaults`, `parseAddress`: the
//! sans-IO Redis Cluster session, with `js_session`, the part the WASM package compiles
//! too), `follower` (`TopologyFollower`, `followerDefaults`: the sans-IO topology
//! follower, with `js_follower`, likewise shared), `migration_session`
//! (`MigrationSession`: the core's `session::migration`, with `js_migration_session`,
//! likewise shared), `source` (`SourceSession`: the core's sans-IO etcd and HTTP source
//! sessions, with `js_source`, likewise shared), `key` (conversions), `errors` (the one
//! error mapping); `hot` holds `Router.route` and `Router.node` as plain N-API functions, the one place that bypasses
//! napi-rs's call glue for speed.
//!
//! Every exported function and method is `#[napi(catch_unwind)]`, and `hot`'s functions
//! catch panics the same way: a panic (which the core promises never to raise) becomes a
//! thrown JavaScript `Error`, never an abort.

mod dictionary;
mod diff;
mod errors;
mod follower;
mod hot;
mod key;
mod migration;
mod migration_session;
mod operations;
mod redirect;
mod router;
mod service;
mod session;
mod source;

/// The session's glue both JavaScript packages compile (`bindings-js/session.rs`).
#[path = "../../bindings-js/session.rs"]
mod js_session;

/// The follower's glue both JavaScript packages compile (`bindings-js/follower.rs`).
#[path = "../../bindings-js/follower.rs"]
mod js_follower;

/// The migration session's glue both JavaScript packages compile
/// (`bindings-js/migration_session.rs`).
#[path = "../../bindings-js/migration_session.rs"]
mod js_migration_session;

/// The source session's glue both JavaScript packages compile (`bindings-js/source.rs`).
#[path = "../../bindings-js/source.rs"]
mod js_source;

use napi::bindgen_prelude::BigInt;
use napi::{Unknown, ValueType};
use napi_derive::napi;
use shardroute as sr;

use errors::{Result, Throw};

/// The core's limit on a document's JSON text, in bytes ([`sr::limits::MAX_DOCUMENT_BYTES`]),
/// which `index.js` exports and every source of the package reads within.
#[napi]
pub const MAX_DOCUMENT_BYTES: u32 = {
    // A JavaScript number holds it exactly; u32 says so at compile time.
    assert!(sr::limits::MAX_DOCUMENT_BYTES <= u32::MAX as u64);
    sr::limits::MAX_DOCUMENT_BYTES as u32
};

/// The deepest nesting of arrays and objects in JSON text
/// ([`sr::limits::MAX_JSON_NESTING`]), which `index.js` exports.
#[napi]
pub const MAX_JSON_NESTING: u32 = sr::limits::MAX_JSON_NESTING;

/// The hash of `key` under a hashing spec (JSON text; `undefined` or `null` for the
/// default spec), as a `bigint`.
///
/// # Errors
/// `invalid_key` for a value that is not a key; `invalid_topology` for a bad spec.
#[napi(catch_unwind)]
pub fn hash_key(key: Unknown, hashing: Unknown) -> Result<BigInt> {
    let key = key::from_js(key)?;
    let spec = match hashing.get_type().or_throw()? {
        ValueType::Undefined | ValueType::Null => sr::KeyHashing::default(),
        _ => {
            sr::KeyHashing::from_json(&document_text(hashing, "hashing", sr::ErrorKind::InvalidTopology)?).or_throw()?
        }
    };
    Ok(BigInt::from(sr::hash_key(key.as_core(), &spec)))
}

/// The jump consistent hash of `hash` (a `bigint` or a decimal string) over `buckets`.
///
/// # Errors
/// `invalid_key` for a hash outside `0..2^64`; `invalid_argument` for a bucket count
/// that is not an integer in `0..=2^32-1`; `no_nodes` for zero buckets.
#[napi(catch_unwind)]
pub fn jump(hash: Unknown, buckets: Unknown) -> Result<u32> {
    let hash = key::u64_from_js(hash, "hash")?;
    let buckets = u32_argument(buckets, "buckets")?;
    sr::jump(hash, buckets).or_throw()
}

/// Where each shard's keys can go when a modulo cluster goes from `old` to `new` shards
/// (a whole-factor change): [`sr::strategy::hashed::modulo::moves`], as arrays of numbers.
///
/// # Errors
/// `invalid_argument` for a count that is not an integer in `0..=2^32-1`, and the
/// core's (`no_nodes` for 0, `invalid_argument` when neither count divides the other,
/// `limit_exceeded`).
#[napi(catch_unwind)]
pub fn modulo_moves(old: Unknown, new: Unknown) -> Result<Vec<Vec<u32>>> {
    let old = u32_argument(old, "oldCount")?;
    let new = u32_argument(new, "newCount")?;
    sr::strategy::hashed::modulo::moves(old, new).or_throw()
}

/// Panics: lets the tests check that a panic becomes a thrown `Error`. Not part of the
/// package's API (`index.js` does not export it).
#[doc(hidden)]
#[napi(js_name = "__panicForTesting", catch_unwind)]
pub fn panic_for_testing() {
    panic!("shardroute-node: deliberate panic for testing");
}

/// Reads a JSON document argument (a topology, a hashing spec, an operation): a string,
/// read as UTF-16 so a lone surrogate is an error rather than U+FFFD. (`index.js` turns
/// object documents into their text first.)
///
/// # Errors
/// `kind` (`invalid_topology` for documents, `invalid_argument` for operations) for a
/// value that is not a string, or text with a lone surrogate.
fn document_text(value: Unknown<'_>, what: &str, kind: sr::ErrorKind) -> Result<String> {
    match value.get_type().or_throw()? {
        ValueType::String => key::text(value, what, kind),
        _ => Err(sr::argument::not_a_document(what, key::js_type(value)?, kind)).or_throw(),
    }
}

/// Reads a text argument that is neither a key nor a document: an address, a redirect line.
///
/// # Errors
/// `invalid_argument` for a value that is not a string, or text with a lone surrogate.
fn text_argument(value: Unknown<'_>, what: &str) -> Result<String> {
    match value.get_type().or_throw()? {
        ValueType::String => key::text(value, what, sr::ErrorKind::InvalidArgument),
        _ => Err(sr::argument::not_text(what, key::js_type(value)?)).or_throw(),
    }
}

/// Reads an optional count argument (`readReplica`'s turn): `undefined` is 0, anything
/// else as for [`u32_argument`].
///
/// # Errors
/// As [`u32_argument`].
fn optional_u32_argument(value: Unknown<'_>, what: &str) -> Result<u32> {
    sr::argument::optional_count(what, key::js_type(value)?).or_throw()
}

/// Reads an optional flag argument (`readTargets`' moved): `undefined` is false, a
/// `boolean` its value.
///
/// # Errors
/// `invalid_argument` for any other value.
fn optional_bool_argument(value: Unknown<'_>, what: &str) -> Result<bool> {
    sr::argument::optional_flag(what, key::js_type(value)?).or_throw()
}

/// Reads a count argument: a `number` that is an integer in `0..=2^32-1`.
///
/// # Errors
/// `invalid_argument` for any other value ([`sr::argument::count`]).
fn u32_argument(value: Unknown<'_>, what: &str) -> Result<u32> {
    sr::argument::count(what, key::js_type(value)?).or_throw()
}
