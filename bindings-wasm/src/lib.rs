//! # shardroute-wasm
//!
//! The WebAssembly binding of [`shardroute`], built with wasm-bindgen into the npm package
//! `shardroute-wasm` (for browsers and Node.js). Like the Python and Node bindings it is a
//! shell: it converts JavaScript values with the core's helpers, calls the core, and maps
//! errors (`errors.rs`). No routing or hashing happens here.
//!
//! The core is used without its `std` feature: this crate is the proof that routing is
//! `no_std` + `alloc`. The exported API is the same shape as the Node addon's:
//! `Router`, `Migration`, `hashKey`, `jump`, `moduloMoves`, `apply`, `diff`,
//! `encodeDictionary`, `decodeDictionary`, `parseRedirect`, `parseAddress`,
//! `ClusterSession`, `Command`, `Action`, `sessionDefaults`, `TopologyFollower`,
//! `Offered`, `followerDefaults`, `MigrationSession`, `SourceSession`, `ShardrouteError`
//! (see `index.d.ts`), and `RoutingService`, the routing service's core that
//! `shardroute-wasm/service` mounts as a `fetch` handler (typed in `service.d.ts`).
//!
//! # Crate features
//!
//! * `full-api` (default): every call beyond what an edge routing tier makes: `apply`,
//!   `diff`, `encodeDictionary`, `hashKey`, `jump`, `moduloMoves`, `parseRedirect`,
//!   `parseAddress`, `ClusterSession`, `sessionDefaults` and `RoutingService`, and the
//!   methods of the classes that plan, move or explain (see the `impl` blocks under this feature). Without
//!   it, the *route build* (`shardroute-wasm/route`, `route.d.ts`; build.sh's route
//!   variant): routers (a document or a dictionary in, routes, nodes, replicas, read and
//!   write targets, `replace`), the topology follower without `publish`, the source
//!   sessions (`SourceSession`: `./route/http` follows a topology over it), and the
//!   migration read and write plans. A call left out is not exported at all.
//! * `operations` (default): the topology operations behind `apply`, `Router.moved` and
//!   `new ClusterSession`; without it (and with `full-api`) those throw `invalid_argument`.
//! * `all-strategies` (default), or the core's strategy features one by one: which
//!   strategy types the package reads.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

mod dictionary;
#[cfg(feature = "full-api")]
mod diff;
mod errors;
mod follower;
mod key;
mod migration;
mod migration_session;
#[cfg(feature = "full-api")]
mod operations;
#[cfg(feature = "full-api")]
mod redirect;
mod router;
#[cfg(feature = "full-api")]
mod service;
#[cfg(feature = "full-api")]
mod session;
mod source;
mod topology;

/// The session's glue both JavaScript packages compile (`bindings-js/session.rs`).
/// The route build (without `full-api`) uses only its argument readers.
#[path = "../../bindings-js/session.rs"]
#[cfg_attr(not(feature = "full-api"), allow(dead_code))]
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

#[cfg(feature = "full-api")]
use js_sys::Array;
use shardroute as sr;
use wasm_bindgen::prelude::*;

#[cfg(feature = "full-api")]
use crate::errors::Result;
#[cfg(feature = "full-api")]
use crate::key::Key;

pub use crate::dictionary::decode_dictionary;
#[cfg(feature = "full-api")]
pub use crate::dictionary::encode_dictionary;
#[cfg(feature = "full-api")]
pub use crate::diff::diff;
pub use crate::follower::{follower_defaults, TopologyFollower};
pub use crate::migration::Migration;
pub use crate::migration_session::MigrationSession;
#[cfg(feature = "full-api")]
pub use crate::operations::apply;
#[cfg(feature = "full-api")]
pub use crate::redirect::parse_redirect;
pub use crate::router::Router;
#[cfg(feature = "full-api")]
pub use crate::service::RoutingService;
#[cfg(feature = "full-api")]
pub use crate::session::{parse_address, session_defaults, ClusterSession, Command};
pub use crate::source::SourceSession;

/// The core's limit on a document's JSON text, in bytes
/// ([`sr::limits::MAX_DOCUMENT_BYTES`]); a u32, so a JavaScript number holds it exactly.
pub(crate) const MAX_DOCUMENT_BYTES: u32 = {
    assert!(sr::limits::MAX_DOCUMENT_BYTES <= u32::MAX as u64);
    sr::limits::MAX_DOCUMENT_BYTES as u32
};
/// The deepest nesting of arrays and objects in JSON text ([`sr::limits::MAX_JSON_NESTING`]).
pub(crate) const MAX_JSON_NESTING: u32 = sr::limits::MAX_JSON_NESTING;

/// `[MAX_DOCUMENT_BYTES, MAX_JSON_NESTING]`: the core's limits, which build.sh reads from
/// the built module and writes into both glues as the package's exported constants
/// `MAX_DOCUMENT_BYTES` and `MAX_JSON_NESTING` (wasm-bindgen exports no constants, and the
/// web glue's module is not instantiated until `init`). The glues do not export this
/// function itself. In both builds: the route build's HTTP follower reads within the limit.
#[doc(hidden)]
#[wasm_bindgen(js_name = "__limits")]
pub fn limits() -> Vec<u32> {
    alloc::vec![MAX_DOCUMENT_BYTES, MAX_JSON_NESTING]
}

/// The 64-bit hash of a key under a hashing spec (JSON text or an object; the default
/// spec, SipHash-2-4 keyed `00..0f`, when omitted), as a BigInt.
///
/// Throws `invalid_key` for an unsupported key and `invalid_topology` for a bad spec.
#[cfg(feature = "full-api")]
#[wasm_bindgen(js_name = hashKey)]
pub fn hash_key(key: &JsValue, hashing: &JsValue) -> Result<u64> {
    let key = Key::from_js(key)?;
    let spec = if hashing.is_undefined() || hashing.is_null() {
        sr::KeyHashing::default()
    } else {
        sr::KeyHashing::from_json(&topology::json_text(hashing, "hashing")?)?
    };
    Ok(sr::hash_key(key.as_key(), &spec))
}

/// Jump consistent hash (Lamping & Veach, 2014) of a u64 hash (bigint or decimal string)
/// over `buckets` buckets, in `0..buckets`.
///
/// Throws `invalid_key` for a hash outside `0..=2^64-1`, `invalid_argument` for a bucket
/// count that is not an integer in `0..=2^32-1`, `no_nodes` for 0 buckets.
#[cfg(feature = "full-api")]
#[wasm_bindgen]
pub fn jump(hash: &JsValue, buckets: &JsValue) -> Result<u32> {
    let hash = key::u64_from_js(hash, "hash")?;
    let buckets = u32_from_js(buckets, "buckets")?;
    Ok(sr::jump(hash, buckets)?)
}

/// Where each shard's keys can go when a modulo cluster changes from `old_count` to
/// `new_count` shards by a whole factor, as an array per old shard: growing, shard `k`'s
/// keys stay on `k` or move to `k + old, k + 2*old, ...` (`k` first); shrinking, shard `k`
/// merges into `k % new`.
///
/// Throws `invalid_argument` for a count that is not an integer in `0..=2^32-1` or when
/// neither count divides the other, `no_nodes` for a count of 0, `limit_exceeded` above
/// the vbucket limit.
#[cfg(feature = "full-api")]
#[wasm_bindgen(js_name = moduloMoves)]
pub fn modulo_moves(old_count: &JsValue, new_count: &JsValue) -> Result<Array> {
    let old_count = u32_from_js(old_count, "oldCount")?;
    let new_count = u32_from_js(new_count, "newCount")?;
    Ok(sr::strategy::hashed::modulo::moves(old_count, new_count)?.iter().map(|to| numbers(to)).collect())
}

/// Shard numbers as a plain array of numbers (not a `Uint32Array`: these are short lists
/// users compare and print).
#[cfg(feature = "full-api")]
pub(crate) fn numbers(values: &[u32]) -> Array {
    values.iter().map(|&value| JsValue::from(value)).collect()
}

/// Node ids from the core as owned strings, for an export that returns `string[]`: one
/// copy of the conversion for every such export (each inlined its own).
#[inline(never)]
pub(crate) fn owned_ids(ids: Vec<&str>) -> Vec<String> {
    ids.into_iter().map(String::from).collect()
}

/// A count argument: a JS number that is an integer in `0..=u32::MAX`, else
/// `invalid_argument` ([`sr::argument::count`]). (wasm-bindgen's own `u32` conversion would
/// wrap `-1` to 4294967295 silently.)
pub(crate) fn u32_from_js(value: &JsValue, what: &str) -> sr::Result<u32> {
    key::with_type(value, |got| sr::argument::count(what, got))
}
