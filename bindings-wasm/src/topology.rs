//! Topology documents (and hashing specs, and operations) from JavaScript: JSON text, or an
//! object serialized by `documentToJson` (`bindings-js/shared.mjs`, strict where
//! `JSON.stringify` is lenient), BigInt values written as decimal strings (the core reads
//! u64 fields from them); a session's config and replies, always serialized
//! ([`data_json`]). Parsing and validation are the core's.
//! JSON values the core returns (`apply`, `locate`) go back through `JSON.parse`; other
//! results are built as objects from their entries ([`record`]).

use alloc::string::String;

use js_sys::{Array, JsString, Object, Reflect, JSON};
use serde_json::Value;
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::{result_not_built, thrown_message};
use crate::key::{text_from_js, with_type};

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// The JSON text of a document object, or the `ShardrouteError` saying why there is
    /// none (`documentToJson` in `shared.mjs`, strict: NaN, functions, cycles), within
    /// the core's limits given here (`shared.mjs` holds no copy of them). Never throws.
    #[wasm_bindgen(js_name = documentJsonOrError)]
    fn document_json_or_error(
        value: &JsValue,
        what: &str,
        code: &str,
        max_document_bytes: u32,
        max_json_nesting: u32,
    ) -> JsValue;
}

/// The JSON text of a document argument: a string as is (lone surrogates rejected), an
/// object serialized; anything else, or an object that is not JSON data, is
/// `invalid_topology`.
pub(crate) fn json_text(value: &JsValue, what: &str) -> sr::Result<String> {
    text_of(value, what, sr::ErrorKind::InvalidTopology)
}

/// An operation (of `apply`): text or an object as for [`json_text`], then read by the
/// core ([`sr::ops::operation_from_json`]); every failure is `invalid_argument`.
#[cfg(feature = "full-api")]
pub(crate) fn operation_value(value: &JsValue) -> sr::Result<Value> {
    sr::ops::operation_from_json(&text_of(value, "operation", sr::ErrorKind::InvalidArgument)?)
}

/// A JSON value from the core as a JavaScript value: written by serde_json, read back by
/// `JSON.parse` (so a field named `__proto__` is an own property). The core writes u64
/// values above 2^53 - 1 as decimal strings, so no number loses precision.
pub(crate) fn value_to_js(value: &Value, what: &str) -> sr::Result<JsValue> {
    // `Display`, the compact writer the core's `Topology::to_json` uses: one copy of
    // serde_json's writer in the module (`serde_json::to_string` would add a second, ~1.5
    // KB). Writing a `Value` cannot fail (its object keys are strings).
    let text = value.to_string();
    JSON::parse(&text).map_err(|thrown| result_not_built(what, &thrown_message(&thrown)))
}

/// A plain object from `[name, value]` entries (`Object.fromEntries`: every name, even
/// `__proto__`, becomes an own property, in entry order).
pub(crate) fn record(entries: &Array) -> sr::Result<Object> {
    Object::from_entries(entries).map_err(|thrown| result_not_built("result object", &thrown_message(&thrown)))
}

/// The JSON text of JavaScript data that is never text itself (a session's `config`, a
/// `CLUSTER SHARDS` reply): any value, a string too, serialized by `documentToJson`; what
/// JSON cannot hold is `invalid_argument`. (The addon's `index.js` serializes the same
/// arguments with the same function.)
pub(crate) fn data_json(value: &JsValue, what: &str) -> sr::Result<String> {
    serialized(value, what, sr::ErrorKind::InvalidArgument)
}

/// [`json_text`] with the error kind of the argument (`invalid_topology` for documents).
fn text_of(value: &JsValue, what: &str, kind: sr::ErrorKind) -> sr::Result<String> {
    if let Some(text) = value.dyn_ref::<JsString>() {
        return text_from_js(text, what, kind);
    }
    if !value.is_object() {
        return Err(with_type(value, |got| sr::argument::not_a_document(what, got, kind)));
    }
    serialized(value, what, kind)
}

/// `value` serialized by `documentToJson`, or its error (`kind` unless it says otherwise).
fn serialized(value: &JsValue, what: &str, kind: sr::ErrorKind) -> sr::Result<String> {
    let json = document_json_or_error(value, what, kind.code(), crate::MAX_DOCUMENT_BYTES, crate::MAX_JSON_NESTING);
    if let Some(text) = json.as_string() {
        // The text of a well-formed object (documentToJson refuses lone surrogates).
        return Ok(text);
    }
    // A ShardrouteError made by documentToJson: its code is one of the core's.
    let code = Reflect::get(&json, &JsValue::from_str("code")).ok().and_then(|code| code.as_string());
    let kind = sr::ErrorKind::ALL.into_iter().find(|kind| Some(kind.code()) == code.as_deref()).unwrap_or(kind);
    Err(sr::Error::new(kind, thrown_message(&json)))
}
