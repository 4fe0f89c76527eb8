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

use crate::argument::{at_index, LoneSurrogate};
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
    crate::argument::decode_utf16(units).map_err(not_unicode)
}

/// The `invalid_key` error of a text key with a lone surrogate.
fn not_unicode(lone: LoneSurrogate) -> Error {
    Error::key(alloc::format!("text key is not valid Unicode: {lone}"))
}

/// String keys packed as UTF-16 code units (how the JavaScript packages hand over an
/// array of strings in one call: key `i` is `units[offsets[i]..offsets[i + 1]]`) as UTF-8
/// in one buffer, with the byte offsets of the keys in the same layout: key `i` is
/// `data[ends[i]..ends[i + 1]]`, as
/// [`Router::route_packed_into`](crate::Router::route_packed_into) takes them.
///
/// Each key is converted on its own, as [`utf8_from_utf16`] converts one string: a lone
/// surrogate is refused, never replaced by U+FFFD, and a surrogate pair split between two
/// keys is two lone surrogates, as it is for two separate strings. The offsets are checked
/// before any key is read ([`check_packed_offsets`]), and every key is converted before
/// the call returns, so a caller routes nothing of a batch with a bad key. `ends` are
/// `u32` on every platform; `ends[0]` is 0 and `ends` has as many entries as `offsets`.
/// The same as `utf8_from_utf16` of each key, concatenated, but in one buffer, ASCII keys
/// copied unit by unit. Never panics.
///
/// # Errors
/// * `invalid_argument` when `offsets` is empty, does not start at 0, decreases or
///   points past `units` (as [`check_packed_offsets`]);
/// * `invalid_key` for the first key with a lone surrogate, with the message of
///   [`utf8_from_utf16`] prefixed with the key's index
///   ([`crate::argument::at_index`]): `keys[1]: text key is not valid Unicode:
///   unpaired surrogate 0xD800 at code unit 0`;
/// * `limit_exceeded` when the UTF-8 of the keys is more than `u32::MAX` bytes, or the
///   memory for it cannot be reserved.
///
/// # Example
/// ```
/// use shardroute::key::utf8_from_packed_utf16;
/// // "a", "é", "🔑" (a surrogate pair) and "": 1, 2, 4 and 0 bytes of UTF-8.
/// let units = [0x61, 0xE9, 0xD83D, 0xDD11];
/// let (data, ends) = utf8_from_packed_utf16(&units, &[0, 1, 2, 4, 4])?;
/// assert_eq!(data, "aé🔑".as_bytes());
/// assert_eq!(ends, [0, 1, 3, 7, 7]);
///
/// // The pair split between two keys: two lone surrogates.
/// let err = utf8_from_packed_utf16(&units, &[0, 3, 4]).unwrap_err();
/// assert_eq!(err.code(), "invalid_key");
/// assert_eq!(err.message(), "keys[0]: text key is not valid Unicode: unpaired surrogate 0xD83D at code unit 2");
/// assert_eq!(utf8_from_packed_utf16(&units, &[0, 5]).unwrap_err().code(), "invalid_argument");
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn utf8_from_packed_utf16(units: &[u16], offsets: &[u32]) -> Result<(Vec<u8>, Vec<u32>)> {
    check_packed_offsets(offsets, units)?;
    // At least one byte per code unit, and one end per offset.
    let mut data = reserved(units.len(), "bytes")?;
    let mut ends = reserved(offsets.len(), "offsets")?;
    ends.push(0);
    for (index, pair) in offsets.windows(2).enumerate() {
        // Checked above: this is `Some`.
        let key = units.get(pair[0] as usize..pair[1] as usize).ok_or_else(bad_packed_offsets)?;
        if key.iter().all(|&unit| unit < 0x80) {
            data.extend(key.iter().map(|&unit| unit as u8));
        } else {
            crate::argument::decode_utf16_each(key, |ch| {
                data.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
            })
            .map_err(|lone| at_index(index, not_unicode(lone)))?;
        }
        let end = u32::try_from(data.len())
            .map_err(|_| Error::limit("packed keys: their UTF-8 is more than 4 GiB (u32::MAX bytes)"))?;
        ends.push(end);
    }
    Ok((data, ends))
}

/// `Ok` when `offsets` cut `units` into packed keys (key `i` is
/// `units[offsets[i]..offsets[i + 1]]`): at least one entry, the first 0, none smaller
/// than the one before, the last at most `units.len()`. What [`utf8_from_packed_utf16`]
/// checks first, for a binding that slices packed keys itself (string keys packed as
/// bytes when all are ASCII).
///
/// # Errors
/// `invalid_argument` otherwise: `offsets must rise from 0 to at most the number of code
/// units`.
///
/// # Example
/// ```
/// use shardroute::key::check_packed_offsets;
/// assert!(check_packed_offsets(&[0, 2, 2, 5], b"user1").is_ok());
/// for bad in [&[][..], &[1, 5], &[0, 3, 2], &[0, 6]] {
///     assert_eq!(check_packed_offsets(bad, b"user1").unwrap_err().code(), "invalid_argument");
/// }
/// ```
pub fn check_packed_offsets<T>(offsets: &[u32], units: &[T]) -> Result<()> {
    let rising = offsets.first() == Some(&0)
        && offsets.windows(2).all(|pair| pair[0] <= pair[1])
        && offsets.last().is_some_and(|&end| end as usize <= units.len());
    if rising {
        Ok(())
    } else {
        Err(bad_packed_offsets())
    }
}

/// The `invalid_argument` error of packed keys' offsets that do not cut their units.
fn bad_packed_offsets() -> Error {
    Error::argument("offsets must rise from 0 to at most the number of code units")
}

/// An empty vector with room for `length` items, or `limit_exceeded` when memory cannot
/// hold them (instead of the allocator aborting, which traps in WebAssembly).
fn reserved<T>(length: usize, what: &str) -> Result<Vec<T>> {
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(length)
        .map_err(|_| Error::limit(alloc::format!("packed keys: {length} {what} do not fit in memory")))?;
    Ok(buffer)
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// UTF-16 of `keys`, packed as the JavaScript packages pack them.
    fn packed(keys: &[&str]) -> (Vec<u16>, Vec<u32>) {
        let mut units = Vec::new();
        let mut offsets = vec![0];
        for key in keys {
            units.extend(key.encode_utf16());
            offsets.push(units.len() as u32);
        }
        (units, offsets)
    }

    #[test]
    fn packed_utf16_gives_each_key_its_utf8_and_byte_offsets() {
        let keys = ["", "user:1", "café", "ключ", "日本語", "🔑", "a\u{0}b", "\u{FFFD}", "x🔑é", ""];
        let (units, offsets) = packed(&keys);
        let (data, ends) = utf8_from_packed_utf16(&units, &offsets).unwrap();
        assert_eq!(data, keys.concat().as_bytes());
        assert_eq!(ends.len(), offsets.len());
        assert_eq!(ends[0], 0);
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(&data[ends[i] as usize..ends[i + 1] as usize], key.as_bytes(), "key {i}");
        }
        assert_eq!(ends, [0, 0, 6, 11, 19, 28, 32, 35, 38, 45, 45]);
        // No keys at all.
        assert_eq!(utf8_from_packed_utf16(&[], &[0]).unwrap(), (vec![], vec![0]));
        // Units past the last offset are not read.
        assert_eq!(utf8_from_packed_utf16(&[0x61, 0xD800], &[0, 1]).unwrap(), (b"a".to_vec(), vec![0, 1]));
    }

    #[test]
    fn packed_utf16_refuses_lone_surrogates_naming_the_key() {
        let ok = "k".encode_utf16().collect::<Vec<u16>>();
        let cases: [(&[u16], &str); 5] = [
            (&[0xD800], "unpaired surrogate 0xD800 at code unit 0"),
            (&[0x61, 0xDC00], "unpaired surrogate 0xDC00 at code unit 1"),
            (&[0xDE00, 0xD83D], "unpaired surrogate 0xDE00 at code unit 0"),
            (&[0xD83D, 0xDE00, 0xDFFF], "unpaired surrogate 0xDFFF at code unit 2"),
            (&[0xE9, 0xD83D], "unpaired surrogate 0xD83D at code unit 1"),
        ];
        for (bad, why) in cases {
            let units = [&ok[..], &ok[..], bad, &ok[..]].concat();
            let offsets = [0, 1, 2, 2 + bad.len() as u32, 3 + bad.len() as u32];
            let err = utf8_from_packed_utf16(&units, &offsets).unwrap_err();
            assert_eq!(err.code(), "invalid_key", "{bad:X?}");
            assert_eq!(err.message(), alloc::format!("keys[2]: text key is not valid Unicode: {why}"));
            // The single key's own error, prefixed with its index.
            assert_eq!(err.message(), alloc::format!("keys[2]: {}", utf8_from_utf16(bad).unwrap_err().message()));
        }
        // A pair split between two keys is two lone surrogates; whole, it is one character.
        let pair = [0xD83D, 0xDD11];
        assert_eq!(utf8_from_packed_utf16(&pair, &[0, 2]).unwrap().0, "🔑".as_bytes());
        let err = utf8_from_packed_utf16(&pair, &[0, 1, 2]).unwrap_err();
        assert_eq!(err.message(), "keys[0]: text key is not valid Unicode: unpaired surrogate 0xD83D at code unit 0");
    }

    #[test]
    fn packed_utf16_refuses_offsets_that_do_not_cut_the_units() {
        let units = [0x61, 0x62, 0x63];
        for bad in [&[][..], &[1], &[1, 3], &[0, 2, 1], &[0, 4], &[0, 1, 1, 0], &[0, u32::MAX]] {
            let err = utf8_from_packed_utf16(&units, bad).unwrap_err();
            assert_eq!(err.code(), "invalid_argument", "{bad:?}");
            assert_eq!(err.message(), "offsets must rise from 0 to at most the number of code units");
            assert_eq!(check_packed_offsets(bad, &units).unwrap_err(), err);
        }
        // The offsets are checked before any key: a bad one after a lone surrogate wins.
        let err = utf8_from_packed_utf16(&[0xD800, 0x61], &[0, 1, 3]).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        for good in [&[0][..], &[0, 0], &[0, 3], &[0, 1, 1, 3], &[0, 2]] {
            assert!(check_packed_offsets(good, &units).is_ok(), "{good:?}");
            assert!(utf8_from_packed_utf16(&units, good).is_ok(), "{good:?}");
        }
    }
}
