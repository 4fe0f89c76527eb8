//! Keys: what a router routes.
//!
//! A key is either a byte string (text is its UTF-8 encoding) or an unsigned 64-bit
//! integer. The distinction matters: the integer `42` and the text `"42"` are different
//! keys. How each is hashed is the topology's [`KeyHashing`](crate::KeyHashing).
//!
//! Bindings convert their language's values into a [`Key`] with the helpers here, so
//! that every language accepts and rejects the same inputs with the same error code:
//! text with lone surrogates is rejected (never replaced by U+FFFD), and integers
//! outside `0..=u64::MAX` are rejected.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, Result};

/// A routing key: bytes, or an unsigned 64-bit integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    /// A byte-string key. Text keys are their UTF-8 bytes.
    Bytes(&'a [u8]),
    /// An integer key, such as a user id.
    U64(u64),
}

/// A key that owns its bytes: what calls that make new keys (salting) return.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OwnedKey {
    /// A byte-string key.
    Bytes(Vec<u8>),
    /// An integer key.
    U64(u64),
}

impl OwnedKey {
    /// Borrows as a [`Key`].
    pub fn as_key(&self) -> Key<'_> {
        match self {
            OwnedKey::Bytes(bytes) => Key::Bytes(bytes),
            OwnedKey::U64(value) => Key::U64(*value),
        }
    }
}

impl From<Key<'_>> for OwnedKey {
    fn from(key: Key<'_>) -> OwnedKey {
        match key {
            Key::Bytes(bytes) => OwnedKey::Bytes(bytes.to_vec()),
            Key::U64(value) => OwnedKey::U64(value),
        }
    }
}

impl<'a> From<&'a [u8]> for Key<'a> {
    fn from(bytes: &'a [u8]) -> Key<'a> {
        Key::Bytes(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Key<'a> {
    fn from(bytes: &'a [u8; N]) -> Key<'a> {
        Key::Bytes(bytes)
    }
}

impl<'a> From<&'a str> for Key<'a> {
    fn from(text: &'a str) -> Key<'a> {
        Key::Bytes(text.as_bytes())
    }
}

impl<'a> From<&'a String> for Key<'a> {
    fn from(text: &'a String) -> Key<'a> {
        Key::Bytes(text.as_bytes())
    }
}

impl<'a> From<&'a Vec<u8>> for Key<'a> {
    fn from(bytes: &'a Vec<u8>) -> Key<'a> {
        Key::Bytes(bytes)
    }
}

impl From<u64> for Key<'_> {
    fn from(value: u64) -> Self {
        Key::U64(value)
    }
}

/// Decodes UTF-16 code units (a JavaScript string) into UTF-8, rejecting lone surrogates.
///
/// JavaScript runtimes silently replace lone surrogates with U+FFFD when they encode a
/// string as UTF-8, which would make two different JS strings route as one key. The Node
/// and WASM bindings read strings as UTF-16 and call this instead.
///
/// # Errors
/// `invalid_key` naming the offset of the first unpaired surrogate.
///
/// # Example
/// ```
/// assert_eq!(shardroute::key::utf8_from_utf16(&[0x68, 0x69]).unwrap(), "hi");
/// let err = shardroute::key::utf8_from_utf16(&[0xD83D, 0xDE00, 0xD800]).unwrap_err();
/// assert_eq!(err.code(), "invalid_key");
/// assert!(err.message().ends_with("unpaired surrogate 0xD800 at code unit 2"));
/// ```
pub fn utf8_from_utf16(units: &[u16]) -> Result<String> {
    crate::argument::decode_utf16(units)
        .map_err(|lone| Error::key(alloc::format!("text key is not valid Unicode: {lone}")))
}

/// Parses a decimal string as a `u64` (the JSON and JavaScript spelling of big integers).
///
/// Accepts only ASCII digits, without sign, spaces or leading `+`; `"0"` and numbers
/// with leading zeros are accepted.
///
/// # Errors
/// `invalid_key` when the text is empty, has a non-digit, or exceeds `u64::MAX`.
///
/// # Example
/// ```
/// assert_eq!(shardroute::key::parse_u64("18446744073709551615").unwrap(), u64::MAX);
/// assert_eq!(shardroute::key::parse_u64("18446744073709551616").unwrap_err().code(), "invalid_key");
/// ```
pub fn parse_u64(text: &str) -> Result<u64> {
    parse_decimal_u64(text)
        .ok_or_else(|| Error::key(alloc::format!("{text:?} is not a decimal integer in 0..=18446744073709551615")))
}

/// `Some(value)` when `text` is a plain decimal `u64`.
pub(crate) fn parse_decimal_u64(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.bytes().try_fold(0u64, |acc, digit| acc.checked_mul(10)?.checked_add(u64::from(digit - b'0')))
}

/// Checks that a JavaScript `Number` key is a safe non-negative integer and converts it.
///
/// Numbers above 2^53 - 1 have already lost precision before they reach us, so routing
/// them would silently route a different id: they must be passed as `BigInt`.
///
/// # Errors
/// `invalid_key` for NaN, infinities, fractions, negatives and numbers above 2^53 - 1.
pub fn u64_from_js_number(value: f64) -> Result<u64> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    // `value == trunc(value)` without a platform float function: casting to u64 and back
    // is exact for every integer in the safe range.
    if value.is_finite() && (0.0..=MAX_SAFE_INTEGER).contains(&value) && (value as u64) as f64 == value {
        Ok(value as u64)
    } else {
        Err(Error::key(alloc::format!(
            "number key {} is not a safe non-negative integer; pass integers above 2^53-1 as BigInt",
            crate::argument::JsNumber(value)
        )))
    }
}

/// The decimal text of `value`, written into the end of `buffer` (no allocation, no
/// `core::fmt`): how systems that hash an integer's text (Redis, Couchbase, Kafka,
/// Vitess, ketama's point names) see it.
///
/// # Example
/// ```
/// let mut buffer = [0u8; 20];
/// assert_eq!(shardroute::key::decimal(0, &mut buffer), b"0");
/// assert_eq!(shardroute::key::decimal(u64::MAX, &mut buffer), b"18446744073709551615");
/// ```
pub fn decimal(mut value: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &buffer[start..];
        }
    }
}

/// Appends the decimal text of `value` to `out`.
pub(crate) fn push_decimal(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(decimal(value, &mut [0u8; 20]));
}

/// Calls `f` with the bytes the systems that read integers as text hash for a key
/// (Couchbase, Kafka, Redis, vshard, memcached): byte keys as they are, integers as their
/// decimal ASCII.
pub(crate) fn with_key_bytes<T>(key: Key<'_>, f: impl FnOnce(&[u8]) -> T) -> T {
    match key {
        Key::Bytes(bytes) => f(bytes),
        Key::U64(value) => f(decimal(value, &mut [0u8; 20])),
    }
}
