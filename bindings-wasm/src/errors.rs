//! Error mapping, in one place: every [`sr::Error`] crosses into JavaScript as a
//! `ShardrouteError`, a real `Error` subclass (defined in `js/support.mjs`) whose `.code`
//! is the core's stable [`sr::ErrorKind::code`] and whose `.message` is the core's message
//! (in the route build, its refusals of what the build leaves out name the package that has
//! it: `makeError` in `js/support.mjs`).
//! Nothing else is ever thrown by this package: no strings, no plain values, no traps.

use alloc::format;
use alloc::string::String;

use js_sys::Reflect;
use shardroute as sr;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// The JavaScript error class; the generated glue re-exports it as the package's
    /// `ShardrouteError`, so `err instanceof ShardrouteError` holds for every thrown error.
    #[wasm_bindgen(reexport)]
    pub type ShardrouteError;

    /// A new `ShardrouteError` (`makeError`): in the route build, a refusal of what it leaves
    /// out ("not built in") names the package that has it.
    #[wasm_bindgen(js_name = makeError)]
    fn make_error(code: &str, message: &str) -> ShardrouteError;
}

/// A core error on its way to JavaScript: the `E` of every exported `Result`.
#[derive(Debug)]
pub struct Error(sr::Error);

/// The result of every fallible export.
pub type Result<T, E = Error> = core::result::Result<T, E>;

impl From<sr::Error> for Error {
    fn from(err: sr::Error) -> Error {
        Error(err)
    }
}

impl From<Error> for JsValue {
    fn from(Error(err): Error) -> JsValue {
        make_error(err.code(), err.message()).into()
    }
}

/// An `invalid_key` error: a key of an unsupported type or out of range.
pub(crate) fn invalid_key(message: String) -> sr::Error {
    sr::Error::new(sr::ErrorKind::InvalidKey, message)
}

/// A `limit_exceeded` error: a result could not be built (the JavaScript engine threw,
/// which only running out of memory or past an engine size limit makes it do).
pub(crate) fn result_not_built(what: &str, reason: &str) -> sr::Error {
    sr::Error::new(sr::ErrorKind::LimitExceeded, format!("{what} cannot be built: {reason}"))
}

/// The `message` of a thrown JavaScript value, or `""` (reading it never throws).
pub(crate) fn thrown_message(thrown: &JsValue) -> String {
    Reflect::get(thrown, &JsValue::from_str("message")).ok().and_then(|m| m.as_string()).unwrap_or_default()
}
