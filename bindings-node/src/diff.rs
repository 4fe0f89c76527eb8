//! [`diff`]: key movement between two routers ([`sr::diff`]).

use napi::{Env, Unknown};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};
use crate::key;
use crate::router;

/// Routes every key of an array under `old` and `new` (native routers; `index.js`
/// unwraps its public `Router`s) and reports what moves: the JSON text of
/// [`sr::diff::Diff::to_value`], which `index.js` parses.
///
/// # Errors
/// `invalid_argument` when a router is not a `Router` or `keys` is not an array;
/// `invalid_key` for a key that is not a key (the message names its index); the core's
/// routing errors.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn diff(env: &Env, old: Unknown, new: Unknown, keys: Unknown) -> Result<String> {
    let old = router::argument(env, old, "oldRouter")?;
    let new = router::argument(env, new, "newRouter")?;
    let keys = key::many_from_js(keys)?;
    let diff = sr::diff::diff(&old.inner, &new.inner, keys.iter().map(key::Key::as_core)).or_throw()?;
    Ok(diff.to_value().to_string())
}
