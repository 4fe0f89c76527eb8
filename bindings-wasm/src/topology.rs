//! Topology documents (and hashing specs) from JavaScript: JSON text, or an object that is
//! serialized with `JSON.stringify`, BigInt values written as decimal strings (the core
//! reads u64 fields from them). Parsing and validation are the core's.

use alloc::format;
use alloc::string::String;

use js_sys::{JsString, Reflect};
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::invalid_topology;
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
    if let Some(text) = value.dyn_ref::<JsString>() {
        // The core's decoder reports a lone surrogate as `invalid_key`; in a document it
        // is the document that is invalid.
        return utf8_from_js(text).map_err(|err| match err.kind() {
            sr::ErrorKind::InvalidKey => invalid_topology(format!("{what} text: {}", err.message())),
            _ => err,
        });
    }
    if !value.is_object() {
        return Err(invalid_topology(format!("{what} must be JSON text or an object, got {}", type_name(value))));
    }
    match document_to_json(value) {
        // JSON.stringify escapes lone surrogates, so its output converts losslessly.
        Ok(text) => text.as_string().ok_or_else(|| invalid_topology(format!("{what} has no JSON form"))),
        Err(err) => {
            // `Reflect.get` with `catch`: even reading the thrown value's message cannot throw.
            let reason = Reflect::get(&err, &JsValue::from_str("message")).ok().and_then(|m| m.as_string());
            let reason = reason.unwrap_or_default();
            Err(invalid_topology(format!("{what} object cannot be written as JSON: {reason}")))
        }
    }
}
