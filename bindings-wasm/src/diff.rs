//! `diff`: the core's [`sr::diff::diff`], the movement of a set of keys between two routers.

use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key::{self, Key};
use crate::router::Router;
use crate::topology;

/// Routes every key of an array under both routers and returns the core's report:
/// `{keys: [{old_shard, new_shard, old_node, new_node, moved}], total, moved, moved_ppm,
/// flows: [{from, to, keys}]}` (one entry per key in input order; `flows` for every pair
/// of nodes that exchange keys, sorted by node ids). Neither router is modified.
///
/// Throws `invalid_argument` when a router is not a `Router` or `keys` is not an array,
/// `invalid_key` for a bad key (the message names its index), and the first routing error
/// of either router.
#[wasm_bindgen]
pub fn diff(old_router: &JsValue, new_router: &JsValue, keys: &JsValue) -> Result<JsValue> {
    let report = Router::lend(old_router, "oldRouter", |old| {
        Router::lend(new_router, "newRouter", |new| {
            let keys = key::keys_from_js(keys)?;
            sr::diff::diff(old, new, keys.iter().map(Key::as_key))
        })
    })
    .and_then(|lent| lent)
    .and_then(|diff| diff)?;
    Ok(topology::value_to_js(&report.to_value(), "the result of diff")?)
}
