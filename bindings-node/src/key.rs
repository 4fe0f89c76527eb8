//! JavaScript values as keys, and as the other integers and texts calls take.
//!
//! | JavaScript | key | rejected with `invalid_key` |
//! |---|---|---|
//! | `string` | its UTF-8 bytes | lone surrogates ([`sr::key::utf8_from_utf16`]) |
//! | `Uint8Array` (and `Buffer`) | its bytes | other typed arrays |
//! | `bigint` | `Key::U64` | negative, or `2n ** 64n` and above |
//! | `number` | `Key::U64` | not a safe non-negative integer ([`sr::key::u64_from_js_number`]) |
//! | anything else | | always |
//!
//! Strings are read as UTF-16 code units: N-API's UTF-8 read would turn a lone surrogate
//! into U+FFFD, so two different strings would route as one key.
//!
//! Keys the core makes (salting) go back as the type they came in as: a string key
//! gives a string, a `Uint8Array` a `Uint8Array`, a `bigint` or `number` a `bigint`.

use napi::bindgen_prelude::{Array, BigInt, Either3, TypedArray, TypedArrayType, Uint8Array, Uint8ArraySlice};
use napi::{JsString, JsValue, Unknown, ValueType};
use shardroute as sr;

use crate::errors::{self, Result, Throw};

/// A key read from a JavaScript value; [`Key::as_core`] lends it to the core.
pub enum Key<'env> {
    /// A string, decoded to UTF-8.
    Text(String),
    /// A short string, decoded to UTF-8 without allocating: the first `.1` bytes of `.0`.
    ShortText([u8; SHORT_TEXT], u8),
    /// The bytes of a `Uint8Array`, borrowed for the duration of the call.
    Bytes(Uint8ArraySlice<'env>),
    /// A `bigint` or `number` key.
    U64(u64),
}

impl Key<'_> {
    /// The key as the core takes it.
    pub fn as_core(&self) -> sr::Key<'_> {
        match self {
            Key::Text(text) => sr::Key::Bytes(text.as_bytes()),
            Key::ShortText(bytes, length) => sr::Key::Bytes(&bytes[..usize::from(*length)]),
            Key::Bytes(bytes) => sr::Key::Bytes(bytes),
            Key::U64(value) => sr::Key::U64(*value),
        }
    }
}

/// Reads a routing key.
///
/// # Errors
/// `invalid_key` for a value that is not a key (see the module docs).
pub fn from_js<'env>(value: Unknown<'env>) -> Result<Key<'env>> {
    match value.get_type().or_throw()? {
        ValueType::String => match short_text(value)? {
            Some(key) => Ok(key),
            None => Ok(Key::Text(text(value, sr::ErrorKind::InvalidKey)?)),
        },
        ValueType::BigInt => Ok(Key::U64(u64_from_bigint(value, "bigint key")?)),
        ValueType::Number => {
            // SAFETY: `get_type` said this is a number.
            let number: f64 = unsafe { value.cast() }.or_throw()?;
            Ok(Key::U64(sr::key::u64_from_js_number(number).or_throw()?))
        }
        ValueType::Object if value.is_typedarray().or_throw()? => {
            // SAFETY: `is_typedarray` said this is a typed array.
            let view: TypedArray = unsafe { value.cast() }.or_throw()?;
            if view.typed_array_type != TypedArrayType::Uint8 {
                return Err(invalid_key(&format!("a {}Array", view.typed_array_type.as_ref())));
            }
            // SAFETY: a typed array of element type Uint8.
            Ok(Key::Bytes(unsafe { value.cast() }.or_throw()?))
        }
        other => Err(invalid_key(&describe(value, other)?)),
    }
}

/// The longest string key (in UTF-8 bytes, less one) read without allocating.
const SHORT_TEXT: usize = 64;

/// A string of fewer than [`SHORT_TEXT`] UTF-8 bytes read in one N-API call into a stack
/// buffer, or `None` (then [`text`] reads it). N-API's UTF-8 read replaces a lone
/// surrogate by U+FFFD, so a result holding U+FFFD is `None` too: [`text`] tells a real
/// U+FFFD from a lone surrogate.
fn short_text(value: Unknown<'_>) -> Result<Option<Key<'static>>> {
    let raw = value.value();
    let mut bytes = [0u8; SHORT_TEXT];
    let mut length = 0usize;
    // SAFETY: `raw` is a live string value of this call's env; N-API writes at most
    // `bytes.len()` bytes (the text, truncated, then a NUL) and the count into `length`.
    let status = unsafe {
        napi::sys::napi_get_value_string_utf8(raw.env, raw.value, bytes.as_mut_ptr().cast(), bytes.len(), &mut length)
    };
    // V8 truncates at a character boundary: a truncated result leaves fewer free bytes
    // than the next character needs (at most 4), so only a result shorter than
    // `SHORT_TEXT - 4` bytes is certainly whole.
    if status != napi::sys::Status::napi_ok || length + 4 >= SHORT_TEXT {
        return Ok(None); // failed, or possibly truncated: the general path decides
    }
    if bytes[..length].windows(3).any(|window| window == "\u{FFFD}".as_bytes()) {
        return Ok(None);
    }
    Ok(Some(Key::ShortText(bytes, length as u8)))
}

/// Reads an optional key: `undefined` and `null` are `None`.
///
/// # Errors
/// As [`from_js`].
pub fn optional_from_js<'env>(value: Unknown<'env>) -> Result<Option<Key<'env>>> {
    match value.get_type().or_throw()? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        _ => from_js(value).map(Some),
    }
}

/// Reads an array of routing keys, in order.
///
/// # Errors
/// `invalid_argument` when `keys` is not an array; a key's error as [`from_js`], its
/// message prefixed with the key's index ([`at`]).
pub fn many_from_js<'env>(keys: Unknown<'env>) -> Result<Vec<Key<'env>>> {
    if !keys.is_array().or_throw()? {
        let kind = keys.get_type().or_throw()?;
        return Err(errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("keys must be an array, got {}", describe(keys, kind)?),
        ));
    }
    // SAFETY: `is_array` said this is an array.
    let array: Array = unsafe { keys.cast() }.or_throw()?;
    (0..array.len())
        .map(|index| {
            let value: Option<Unknown<'env>> = array.get(index).or_throw()?;
            let value =
                value.ok_or_else(|| errors::new(sr::ErrorKind::InvalidArgument, "the array changed while it was read"));
            value.and_then(from_js).map_err(|err| at(index as usize, err))
        })
        .collect()
}

/// A typed array of element type `kind` (`BigUint64Array`, `Uint32Array`, ...) read in
/// place: the slice borrows the array's memory for the duration of the call.
///
/// # Errors
/// `invalid_argument` naming `what` for any other value.
pub fn typed_array<'env, T>(value: Unknown<'env>, kind: TypedArrayType, what: &str) -> Result<T>
where
    T: napi::bindgen_prelude::FromNapiValue + 'env,
{
    let value_type = value.get_type().or_throw()?;
    if value_type == ValueType::Object && value.is_typedarray().or_throw()? {
        // SAFETY: `is_typedarray` said this is a typed array.
        let view: TypedArray = unsafe { value.cast() }.or_throw()?;
        if view.typed_array_type == kind {
            // SAFETY: a typed array of element type `kind`, the element type of `T`.
            return unsafe { value.cast() }.or_throw();
        }
        return Err(errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("{what} must be a {}Array, got a {}Array", kind.as_ref(), view.typed_array_type.as_ref()),
        ));
    }
    Err(errors::new(
        sr::ErrorKind::InvalidArgument,
        format!("{what} must be a {}Array, got {}", kind.as_ref(), describe(value, value_type)?),
    ))
}

/// `err` with its message prefixed by the index of the key it is about (`keys[2]: ...`).
pub fn at(index: usize, err: errors::Error) -> errors::Error {
    napi::Error::new(err.status, format!("keys[{index}]: {}", err.reason))
}

/// A key made by the core, as JavaScript returns it.
pub type JsKey = Either3<String, Uint8Array, BigInt>;

/// A key made by the core from `source`, as the JavaScript type `source` came in as:
/// bytes made from a string are a string again (salting appends UTF-8 text).
///
/// # Errors
/// N-API's `GenericFailure` if bytes made from a string are not UTF-8, which the core's
/// salting never does.
pub fn to_js(source: &Key<'_>, key: sr::OwnedKey) -> Result<JsKey> {
    Ok(match (source, key) {
        (_, sr::OwnedKey::U64(value)) => Either3::C(BigInt::from(value)),
        (Key::Text(_) | Key::ShortText(..), sr::OwnedKey::Bytes(bytes)) => {
            Either3::A(String::from_utf8(bytes).map_err(|err| {
                napi::Error::new(
                    errors::Code::Napi(napi::Status::GenericFailure),
                    format!("a key made from a string is not UTF-8: {err}"),
                )
            })?)
        }
        (_, sr::OwnedKey::Bytes(bytes)) => Either3::B(Uint8Array::new(bytes)),
    })
}

/// Reads a `u64` given as a `bigint` or a decimal string, such as a hash for `jump`.
///
/// # Errors
/// `invalid_key` for a negative or too large value, text that [`sr::key::parse_u64`]
/// rejects, or another type.
pub fn u64_from_js(value: Unknown<'_>, what: &str) -> Result<u64> {
    match value.get_type().or_throw()? {
        ValueType::BigInt => u64_from_bigint(value, what),
        ValueType::String => sr::key::parse_u64(&text(value, sr::ErrorKind::InvalidKey)?).or_throw(),
        other => Err(errors::new(
            sr::ErrorKind::InvalidKey,
            format!("{what} must be a bigint or a decimal string, got {}", describe(value, other)?),
        )),
    }
}

/// Reads a JavaScript string as UTF-8 without replacing lone surrogates.
///
/// # Errors
/// `kind` for a lone surrogate (the core's message); N-API's status if the read fails.
pub fn text(value: Unknown<'_>, kind: sr::ErrorKind) -> Result<String> {
    // SAFETY: every caller checked that `value` is a string (and N-API's read would
    // fail, not misbehave, on any other value).
    let string: JsString = unsafe { value.cast() }.or_throw()?;
    let length = string.utf16_len().or_throw()?;
    let units = string.into_utf16().or_throw()?;
    // napi-rs's buffer also holds the terminating NUL: take the string's own units only.
    let units = units.as_slice().get(..length).ok_or_else(|| {
        napi::Error::new(errors::Code::Napi(napi::Status::GenericFailure), "short UTF-16 read".to_owned())
    })?;
    sr::key::utf8_from_utf16(units).map_err(|err| errors::new(kind, err.message()))
}

/// A `bigint` as a `u64`, losslessly.
///
/// # Errors
/// `invalid_key` for a negative value or one of `2n ** 64n` or more.
fn u64_from_bigint(value: Unknown<'_>, what: &str) -> Result<u64> {
    // SAFETY: every caller checked that `value` is a bigint.
    let big: BigInt = unsafe { value.cast() }.or_throw()?;
    match big.get_u64() {
        (false, value, true) => Ok(value),
        (negative, _, _) => Err(errors::new(
            sr::ErrorKind::InvalidKey,
            format!(
                "{what} is {}; it must be in 0n..=18446744073709551615n",
                if negative { "negative" } else { "2n ** 64n or more" }
            ),
        )),
    }
}

fn invalid_key(what: &str) -> errors::Error {
    errors::new(
        sr::ErrorKind::InvalidKey,
        format!("{what} is not a key; a key is a string, a Uint8Array, a bigint or a safe non-negative integer number"),
    )
}

/// Names a JavaScript value's type for an error message (`"null"`, `"an array"`, ...).
pub fn describe(value: Unknown<'_>, kind: ValueType) -> Result<String> {
    Ok(match kind {
        ValueType::Undefined => "undefined".to_owned(),
        ValueType::Null => "null".to_owned(),
        ValueType::Boolean => "a boolean".to_owned(),
        ValueType::Number => "a number".to_owned(),
        ValueType::String => "a string".to_owned(),
        ValueType::Symbol => "a symbol".to_owned(),
        ValueType::Function => "a function".to_owned(),
        ValueType::BigInt => "a bigint".to_owned(),
        ValueType::Object if value.is_array().or_throw()? => "an array".to_owned(),
        ValueType::Object if value.is_typedarray().or_throw()? => "a typed array".to_owned(),
        ValueType::Object => "an object".to_owned(),
        ValueType::External | ValueType::Unknown => "a native value".to_owned(),
    })
}
