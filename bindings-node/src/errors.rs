//! Every error this addon throws, mapped in one place.
//!
//! A failed call throws a JavaScript `Error` whose `code` property is the core's stable
//! code ([`sr::ErrorKind::code`]: `"invalid_key"`, ...) and whose `message` is the core's
//! message. `index.js` rethrows those as `ShardrouteError`, the package's public class,
//! recognising them by the codes [`error_codes`] lists. A failure of N-API itself (which
//! no input should cause) keeps N-API's status as its code and is rethrown unchanged, and
//! a JavaScript exception raised while reading an argument propagates as it was.

use napi::Status;
use napi_derive::napi;
use shardroute as sr;

/// The `code` of a thrown error: a core error kind, or an N-API status.
pub enum Code {
    /// A shardroute error: its code is the core's.
    Core(sr::ErrorKind),
    /// N-API itself failed, or a JavaScript exception is pending.
    Napi(Status),
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::Core(kind) => kind.code(),
            Code::Napi(status) => status.as_ref(),
        }
    }
}

/// The error every exported function returns; napi-rs throws it as a JS `Error` with
/// `code` set to [`Code::as_ref`].
pub type Error = napi::Error<Code>;

/// Shorthand for a result that throws an [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

/// An error of `kind` with `message`, for argument checks done in this addon.
pub fn new(kind: sr::ErrorKind, message: impl Into<String>) -> Error {
    napi::Error::new(Code::Core(kind), message.into())
}

/// A core error as thrown.
pub fn from_core(err: sr::Error) -> Error {
    new(err.kind(), err.message())
}

/// Converts a core or N-API result into one that throws with the right code.
pub trait Throw<T> {
    /// The same result, its error mapped to an [`Error`].
    fn or_throw(self) -> Result<T>;
}

impl<T> Throw<T> for sr::Result<T> {
    fn or_throw(self) -> Result<T> {
        self.map_err(from_core)
    }
}

impl<T> Throw<T> for napi::Result<T> {
    fn or_throw(self) -> Result<T> {
        self.map_err(|err| napi::Error::new(Code::Napi(err.status), err.reason))
    }
}

/// The codes of shardroute's errors, in the core's order (`ErrorKind::ALL`): `index.js`
/// rethrows an error carrying one of these as a `ShardrouteError`.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn error_codes() -> Vec<&'static str> {
    sr::ErrorKind::ALL.iter().map(|kind| kind.code()).collect()
}
