//! `diff`: the core's [`sr::diff::diff`], the movement of a set of keys between two routers.

use js_sys::Reflect;
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key::{self, Key};
use crate::router::Router;
use crate::topology;

/// Routes every key of an array under both routers and returns the core's report, its
/// fields in `camelCase`: `{total, moved, movedPpm, flows: [{from, to, keys}]}` (`flows`
/// for every pair of nodes that exchange keys, sorted by node ids), and with
/// `options.perKey` also `keys: [{oldShard, newShard, oldNode, newNode, moved}]` (one entry per key in input
/// order, at most `limits::MAX_DIFF_LISTED_KEYS`). Neither router is modified.
///
/// Throws `invalid_argument` when a router is not a `Router`, `keys` is not an array or
/// `options` is not `{perKey?: boolean}`, `limit_exceeded` for a per-key list too long,
/// `invalid_key` for a bad key (the message names its index), and the first routing error
/// of either router.
#[wasm_bindgen]
pub fn diff(old_router: &JsValue, new_router: &JsValue, keys: &JsValue, options: &JsValue) -> Result<JsValue> {
    let per_key = per_key(options)?;
    let report = Router::lend(old_router, "oldRouter", |old| {
        Router::lend(new_router, "newRouter", |new| {
            let keys = key::keys_from_js(keys)?;
            sr::diff::diff(old, new, keys.iter().map(Key::as_key), per_key)
        })
    })
    .and_then(|lent| lent)
    .and_then(|diff| diff)?;
    Ok(topology::value_to_js(&crate::js_session::camel_fields(report.to_value()), "the result of diff")?)
}

/// `options.perKey`: `undefined` or `null` options are `false`.
fn per_key(options: &JsValue) -> sr::Result<bool> {
    if options.is_undefined() || options.is_null() {
        return Ok(false);
    }
    if !options.is_object() {
        return Err(sr::diff::per_key_option_error());
    }
    match Reflect::get(options, &JsValue::from_str("perKey")) {
        Ok(flag) if flag.is_undefined() => Ok(false),
        Ok(flag) => flag.as_bool().ok_or_else(sr::diff::per_key_option_error),
        Err(_) => Err(sr::diff::per_key_option_error()),
    }
}
