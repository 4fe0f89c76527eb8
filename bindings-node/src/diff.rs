//! [`diff`]: key movement between two routers ([`sr::diff`]).

use napi::bindgen_prelude::{JsObjectValue, Object};
use napi::{Env, Unknown, ValueType};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};
use crate::key;
use crate::router;

/// Routes every key of an array under `old` and `new` (native routers; `index.js`
/// unwraps its public `Router`s) and reports what moves: the JSON text of
/// [`sr::diff::Diff::to_value`] with its fields in `camelCase`, which `index.js` parses. `options.perKey` asks for each
/// key's entry too (at most `limits::MAX_DIFF_LISTED_KEYS` keys); without it the counts
/// and flows are tallied key by key with no per-key storage in core.
///
/// # Errors
/// `invalid_argument` when a router is not a `Router`, `keys` is not an array or
/// `options` is not `{perKey?: boolean}`; `limit_exceeded` for a per-key list too long;
/// `invalid_key` for a key that is not a key (the message names its index); the core's
/// routing errors.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn diff(env: &Env, old: Unknown, new: Unknown, keys: Unknown, options: Option<Unknown>) -> Result<String> {
    let old = router::argument(env, old, "oldRouter")?;
    let new = router::argument(env, new, "newRouter")?;
    let per_key = match options {
        Some(options) => per_key(options)?,
        None => false,
    };
    let keys = key::many_from_js(keys)?;
    let diff = sr::diff::diff(&old.inner, &new.inner, keys.iter().map(key::Key::as_core), per_key).or_throw()?;
    Ok(crate::js_session::camel_fields(diff.to_value()).to_string())
}

/// `options.perKey`: absent, `undefined` or `null` options are `false`.
fn per_key(options: Unknown) -> Result<bool> {
    let rejected = || Err(sr::diff::per_key_option_error()).or_throw();
    match options.get_type().or_throw()? {
        ValueType::Undefined | ValueType::Null => Ok(false),
        ValueType::Object => {
            // SAFETY: `get_type` said this is an object.
            let object: Object = unsafe { options.cast() }.or_throw()?;
            let flag: Unknown = object.get_named_property("perKey").or_throw()?;
            match flag.get_type().or_throw()? {
                ValueType::Undefined => Ok(false),
                // SAFETY: `get_type` said this is a boolean.
                ValueType::Boolean => unsafe { flag.cast::<bool>() }.or_throw(),
                _ => rejected(),
            }
        }
        _ => rejected(),
    }
}
