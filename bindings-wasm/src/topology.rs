//! Topology documents (and hashing specs, and operations) from JavaScript: JSON text, or an
//! object that is serialized with `JSON.stringify`, BigInt values written as decimal
//! strings (the core reads u64 fields from them). Parsing and validation are the core's.
//! JSON values the core returns (`apply`, `locate`) go back through `JSON.parse`; other
//! results are built as objects from their entries ([`record`]).

use alloc::format;
use alloc::string::String;

use js_sys::{Array, JsString, Object, JSON};
use serde_json::Value;
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::{invalid_argument, invalid_topology, result_not_built, thrown_message};
use crate::key::{type_name, utf8_from_js};

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    #[wasm_bindgen(catch, js_name = documentToJson)]
    fn document_to_json(value: &JsValue) -> Result<JsValue, JsValue>;
}

/// The JSON text of a document argument: a string as is (lone surrogates rejected), an
/// object serialized; anything else, or an object `JSON.stringify` refuses, is
/// `invalid_topology`.
pub(crate) fn json_text(value: &JsValue, what: &str) -> sr::Result<String> {
    text_of(value, what, invalid_topology)
}

/// The operation of `apply`: text or an object as for [`json_text`], then read by the
/// core ([`sr::ops::operation_from_json`]: a field named twice is refused); every failure
/// is `invalid_argument`.
pub(crate) fn argument_value(value: &JsValue, what: &str) -> sr::Result<Value> {
    sr::ops::operation_from_json(&text_of(value, what, invalid_argument)?)
}

/// A JSON value from the core as a JavaScript value: written by serde_json, read back by
/// `JSON.parse` (so a field named `__proto__` is an own property). The core writes u64
/// values above 2^53 - 1 as decimal strings, so no number loses precision.
pub(crate) fn value_to_js(value: &Value, what: &str) -> sr::Result<JsValue> {
    let text = serde_json::to_string(value).map_err(|err| result_not_built(what, &format!("{err}")))?;
    JSON::parse(&text).map_err(|thrown| result_not_built(what, &thrown_message(&thrown)))
}

/// A plain object from `[name, value]` entries (`Object.fromEntries`: every name, even
/// `__proto__`, becomes an own property, in entry order).
pub(crate) fn record(entries: &Array) -> sr::Result<Object> {
    Object::from_entries(entries).map_err(|thrown| result_not_built("result object", &thrown_message(&thrown)))
}

/// [`json_text`] with the error kind of the argument (`invalid_topology` for documents).
fn text_of(value: &JsValue, what: &str, error: fn(String) -> sr::Error) -> sr::Result<String> {
    if let Some(text) = value.dyn_ref::<JsString>() {
        // The core's decoder reports a lone surrogate as `invalid_key`; in a document (or
        // an operation) it is the document that is invalid.
        return utf8_from_js(text).map_err(|err| match err.kind() {
            sr::ErrorKind::InvalidKey => error(format!("{what} text: {}", err.message())),
            _ => err,
        });
    }
    if !value.is_object() {
        return Err(error(format!("{what} must be JSON text or an object, got {}", type_name(value))));
    }
    match document_to_json(value) {
        // JSON.stringify escapes lone surrogates, so its output converts losslessly.
        Ok(text) => text.as_string().ok_or_else(|| error(format!("{what} has no JSON form"))),
        Err(err) => Err(error(format!("{what} object cannot be written as JSON: {}", thrown_message(&err)))),
    }
}
