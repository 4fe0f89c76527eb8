//! Keys from JavaScript values, converted with the core's helpers so that every binding
//! accepts and rejects the same inputs (see [`sr::key`]):
//!
//! | JavaScript | key | rejected with `invalid_key` |
//! |---|---|---|
//! | `string` | its UTF-8 bytes, read from the UTF-16 code units | lone surrogates ([`sr::key::utf8_from_utf16`]; never replaced by U+FFFD) |
//! | `Uint8Array` (and `Buffer`, of any realm) | its bytes | a view of a detached buffer, or out of its bounds |
//! | `bigint` | `u64` | outside `0..=2^64-1` |
//! | `number` | `u64` | not a safe non-negative integer ([`sr::key::u64_from_js_number`]) |
//! | anything else | | always |
//!
//! Keys the core makes (salting) come back as the type they went in as
//! ([`Key::salted_to_js`]): a string gives a string, a `Uint8Array` a `Uint8Array`, a
//! `bigint` or `number` a `bigint`.
//!
//! An array of keys (`routeMany`, `diff`) is read by [`keys_from_js`]; a bad key's error
//! names its index (`keys[2]: ...`).
//!
//! Every refusal is the core's ([`sr::argument`]), from the value's [`JsType`] ([`with_type`]),
//! so the Node addon, which reads values by the same rules, says the same.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[cfg(feature = "full-api")]
use js_sys::BigUint64Array;
use js_sys::{Array, BigInt, JsString, Reflect, Uint16Array, Uint32Array, Uint8Array};
use shardroute as sr;
use sr::argument::JsType;
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::errors::invalid_key;

/// A key converted from JavaScript, owning its bytes; [`Key::as_key`] lends it to the core.
/// Text and bytes are the same key to the core; the variant only remembers which JS type
/// a salted key must be returned as.
pub(crate) enum Key {
    Text(String),
    Bytes(Vec<u8>),
    U64(u64),
}

impl Key {
    /// Converts a JavaScript key (see the module docs).
    pub(crate) fn from_js(value: &JsValue) -> sr::Result<Key> {
        // A string key, the common one, in one imported call (the glue's copy is exact
        // for a well-formed string); a string with a lone surrogate is refused below.
        if let Some(text) = well_formed_text(value) {
            return Ok(Key::Text(text));
        }
        if let Some(text) = value.dyn_ref::<JsString>() {
            return utf8_from_js(text).map(Key::Text);
        }
        if value.is_bigint() {
            return u64_from_bigint(value, "key").map(Key::U64);
        }
        if let Some(number) = value.as_f64() {
            return sr::key::u64_from_js_number(number).map(Key::U64);
        }
        if let Some(bytes) =
            typed_view::<Uint8Array>(value, "the Uint8Array key", "Uint8Array", sr::ErrorKind::InvalidKey)
        {
            return bytes
                .and_then(|bytes| copied(bytes.length(), "bytes", |items| bytes.copy_to(items)))
                .map(Key::Bytes);
        }
        Err(with_type(value, sr::argument::not_a_key))
    }

    /// The core's view of this key.
    pub(crate) fn as_key(&self) -> sr::Key<'_> {
        match self {
            Key::Text(text) => sr::Key::Bytes(text.as_bytes()),
            Key::Bytes(bytes) => sr::Key::Bytes(bytes),
            Key::U64(value) => sr::Key::U64(*value),
        }
    }

    /// A key the core derived from this one (a salted key), as the JavaScript type this
    /// key came in as: string, `Uint8Array`, or `bigint` (for a `bigint` or `number`).
    /// In every build: a routing tier reads a hot key's salted forms during a migration
    /// (`Migration.readKeys`).
    pub(crate) fn salted_to_js(&self, salted: sr::OwnedKey) -> sr::Result<JsValue> {
        Ok(match (self, salted) {
            (_, sr::OwnedKey::U64(value)) => JsValue::from(value),
            // Salting appends a UTF-8 separator and ASCII digits to valid UTF-8: the
            // result is text again (checked, never assumed).
            (Key::Text(_), sr::OwnedKey::Bytes(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => JsValue::from(text),
                Err(_) => return Err(invalid_key(String::from("the salted form of a text key is not UTF-8"))),
            },
            (_, sr::OwnedKey::Bytes(bytes)) => Uint8Array::from(bytes.as_slice()).into(),
        })
    }
}

/// The keys of a JavaScript array, in order (`routeMany`, `diff`): `invalid_argument` when
/// `keys` is not an array, `invalid_key` naming the index of the first bad key.
pub(crate) fn keys_from_js(keys: &JsValue) -> sr::Result<Vec<Key>> {
    elements(
        keys,
        "keys",
        |index| at(index, sr::argument::unreadable_key()),
        |index, key| Key::from_js(key).map_err(|err| at(index, err)),
    )
}

/// The strings of a JavaScript array that are not keys (`what`: `seeds`, `names`), read as
/// [`keys_from_js`] reads keys: `invalid_argument` when `array` is not an array, for an
/// element that is not a string (naming it: `names[1] must be a string, got ...`), has a
/// lone surrogate, or cannot be read.
#[cfg(feature = "full-api")]
pub(crate) fn strings_from_js(array: &JsValue, what: &str) -> sr::Result<Vec<String>> {
    elements(
        array,
        what,
        |index| crate::js_session::unreadable_element(what, index),
        |index, item| text_argument(item, &format!("{what}[{index}]")),
    )
}

/// `[name, key]` pairs (`indexWritePlan`'s terms), as [`keys_from_js`] reads keys:
/// `invalid_argument` when `pairs` or an element is not an array, an element is not of
/// length 2 or its name is not text; `invalid_key` (naming the index) for a bad key.
#[cfg(feature = "full-api")]
pub(crate) fn pairs_from_js(pairs: &JsValue, what: &str) -> sr::Result<Vec<(String, Key)>> {
    let unreadable = |list: &str, index| crate::js_session::unreadable_element(list, index);
    elements(
        pairs,
        what,
        |index| unreadable(what, index),
        |index, pair| {
            let name = format!("{what}[{index}]");
            let items = elements(pair, &name, |item| unreadable(&name, item), |_, item| Ok(item.clone()))?;
            let [id, term] = &items[..] else {
                return Err(sr::argument::not_a_pair(&name, items.len()));
            };
            Ok((text_argument(id, &format!("{name}[0]"))?, Key::from_js(term).map_err(|err| at(index, err))?))
        },
    )
}

/// `each` of every element of a JavaScript array (`what` names it), in order;
/// `unreadable(index)` is the error of an element whose read throws. `invalid_argument`
/// when `array` is not an array (`Array.isArray`) or its `length` cannot be read.
fn elements<T>(
    array: &JsValue,
    what: &str,
    unreadable: impl Fn(usize) -> sr::Error,
    mut each: impl FnMut(usize, &JsValue) -> sr::Result<T>,
) -> sr::Result<Vec<T>> {
    if !is_array(array) {
        return Err(with_type(array, |got| sr::argument::not_an_array(what, got)));
    }
    // Read through `Reflect.get` (imported with `catch`): a proxy trap or getter that
    // throws becomes an error here instead of a JS exception unwinding through this call.
    let length = Reflect::get(array, &JsValue::from_str("length"))
        .ok()
        .and_then(|length| with_type(&length, |got| sr::argument::count(what, got)).ok())
        .ok_or_else(|| sr::argument::unreadable_length(what))?;
    // The length comes from JavaScript: never reserve more than a small batch up front.
    let mut converted = Vec::with_capacity(length.min(1024) as usize);
    for index in 0..length {
        let item = Reflect::get_u32(array, index).map_err(|_| unreadable(index as usize))?;
        converted.push(each(index as usize, &item)?);
    }
    Ok(converted)
}

/// `err` with its message prefixed by the index of the key it is about (`keys[2]: ...`).
pub(crate) fn at(index: usize, err: sr::Error) -> sr::Error {
    sr::argument::at_index(index, err)
}

/// The keys of `routeMany` / `nodeMany` as UTF-8 in one buffer plus byte offsets (key `i`
/// is `data[offsets[i]..offsets[i + 1]]`, the core's packed layout), when `packStrings`
/// (`js/support.mjs`) packs them: an array of at least a few keys, every one a string.
/// `None` otherwise (then [`keys_from_js`] reads them). The offsets are checked, never
/// assumed, so that slicing by them cannot fail ([`sr::key::check_packed_offsets`]); a
/// key with a lone surrogate is `invalid_key` naming its index, with the message a single
/// key gets ([`sr::key::utf8_from_packed_utf16`]).
pub(crate) fn packed_strings(keys: &JsValue) -> Option<sr::Result<(Vec<u8>, Vec<u32>)>> {
    let packed = pack_strings(keys);
    let packed = packed.dyn_ref::<Array>()?;
    let (units, offsets) = (packed.get(0), packed.get(1).dyn_into::<Uint32Array>().ok()?.to_vec());
    // Each a copy into wasm memory in one step.
    if let Some(ascii) = units.dyn_ref::<Uint8Array>() {
        // ASCII units are their UTF-8 bytes, and the unit offsets the byte offsets.
        let ascii = ascii.to_vec();
        return Some(sr::key::check_packed_offsets(&offsets, &ascii).map(|()| (ascii, offsets)));
    }
    let units = units.dyn_into::<Uint16Array>().ok()?.to_vec();
    Some(sr::key::utf8_from_packed_utf16(&units, &offsets))
}

/// The elements of a `BigUint64Array`, or `invalid_argument` naming `what`.
#[cfg(feature = "full-api")]
pub(crate) fn u64s_from_js(value: &JsValue, what: &str) -> sr::Result<Vec<u64>> {
    let array = typed_argument::<BigUint64Array>(value, what, "BigUint64Array")?;
    copied(array.length(), "keys", |items| array.copy_to(items))
}

/// The elements of a `Uint32Array`, or `invalid_argument` naming `what`.
#[cfg(feature = "full-api")]
pub(crate) fn u32s_from_js(value: &JsValue, what: &str) -> sr::Result<Vec<u32>> {
    let array = typed_argument::<Uint32Array>(value, what, "Uint32Array")?;
    copied(array.length(), "offsets", |items| array.copy_to(items))
}

/// The bytes of a `Uint8Array` (a `Buffer` too), or `invalid_argument` naming `what`.
pub(crate) fn bytes_from_js(value: &JsValue, what: &str) -> sr::Result<Vec<u8>> {
    let bytes = typed_argument::<Uint8Array>(value, what, "Uint8Array")?;
    copied(bytes.length(), "bytes", |items| bytes.copy_to(items))
}

/// A typed array argument of kind `name` as a fresh view ([`typed_view`]), or
/// `invalid_argument` naming `what`.
fn typed_argument<T: JsCast>(value: &JsValue, what: &str, name: &str) -> sr::Result<T> {
    typed_view(value, what, name, sr::ErrorKind::InvalidArgument)
        .unwrap_or_else(|| Err(with_type(value, |got| sr::argument::not_a_typed_array(what, name, got))))
}

/// `value` as a fresh view of its memory when it is a typed array of kind `name`
/// (`typedArrayView` in `js/support.mjs`: its real bounds, whatever an own `length`
/// property says, and of any realm), which js-sys's copies then read exactly; an error
/// of `kind` for a view of a detached buffer or out of its bounds; `None` for any other
/// value.
fn typed_view<T: JsCast>(value: &JsValue, what: &str, name: &str, kind: sr::ErrorKind) -> Option<sr::Result<T>> {
    let view = typed_array_view(value, name);
    if view.is_undefined() {
        return None;
    }
    if view.is_null() {
        return Some(Err(sr::argument::unreadable_view(what, kind)));
    }
    Some(Ok(view.unchecked_into()))
}

/// A `u64` given as a bigint or a decimal string ([`sr::key::parse_u64`]), such as the
/// hash argument of `jump`; `invalid_key` otherwise, like an integer key out of range.
#[cfg(feature = "full-api")]
pub(crate) fn u64_from_js(value: &JsValue, what: &str) -> sr::Result<u64> {
    if value.is_bigint() {
        return u64_from_bigint(value, what);
    }
    if let Some(text) = value.dyn_ref::<JsString>() {
        return sr::key::parse_u64(&utf8_from_js(text)?);
    }
    Err(with_type(value, |got| sr::argument::not_a_u64(what, got)))
}

/// A `nowMs` argument, the shell's clock (`milliseconds` of `bindings-js/session.rs`, the
/// wording both JavaScript packages share): the session's and the follower's.
pub(crate) fn milliseconds(value: &JsValue) -> sr::Result<u64> {
    with_type(value, |got| crate::js_session::milliseconds("nowMs", got, || bigint_u64(value)))
}

/// A string argument that is neither a key nor a document (an address, a redirect line),
/// as UTF-8: `invalid_argument` for another type or a lone surrogate.
pub(crate) fn text_argument(value: &JsValue, what: &str) -> sr::Result<String> {
    match value.dyn_ref::<JsString>() {
        Some(text) => text_from_js(text, what, sr::ErrorKind::InvalidArgument),
        None => Err(with_type(value, |got| sr::argument::not_text(what, got))),
    }
}

/// A JavaScript string that is not a key (`what`: a document, an address) as UTF-8,
/// without replacing lone surrogates: `kind` for one ([`sr::argument::text`]).
pub(crate) fn text_from_js(text: &JsString, what: &str, kind: sr::ErrorKind) -> sr::Result<String> {
    match exact_utf8(text) {
        Some(utf8) => Ok(utf8),
        None => sr::argument::text(what, &utf16_from_js(text)?, kind),
    }
}

/// A JavaScript string key as UTF-8 without replacing lone surrogates: wasm-bindgen's own
/// `String` conversion would replace them with U+FFFD, making two different strings one
/// key, so a result holding U+FFFD is read again code unit by code unit, and the core
/// rejects lone surrogates (`invalid_key`).
pub(crate) fn utf8_from_js(text: &JsString) -> sr::Result<String> {
    match exact_utf8(text) {
        Some(utf8) => Ok(utf8),
        None => sr::key::utf8_from_utf16(&utf16_from_js(text)?),
    }
}

/// wasm-bindgen's one-step copy (TextEncoder) of a string, when it is exact: unless the
/// result has a U+FFFD, which is either in the text or a replaced lone surrogate (then
/// `None`, and the caller reads the code units to tell which).
fn exact_utf8(text: &JsString) -> Option<String> {
    text.as_string().filter(|utf8| !utf8.contains('\u{FFFD}'))
}

/// The UTF-16 code units of a string.
fn utf16_from_js(text: &JsString) -> sr::Result<Vec<u16>> {
    let mut units = reserve(text.length(), "code units")?;
    units.extend(text.iter());
    Ok(units)
}

/// A vector of `length` items that `copy` fills from a typed array of that length (so that
/// `copy_to`'s length assertion holds), or `limit_exceeded` as for [`reserve`].
fn copied<T: Copy + Default>(length: u32, what: &str, copy: impl FnOnce(&mut [T])) -> sr::Result<Vec<T>> {
    let mut items = reserve(length, what)?;
    items.resize(length as usize, T::default());
    copy(&mut items);
    Ok(items)
}

/// An empty vector with room for `length` items, or `limit_exceeded` when wasm32's
/// memory cannot hold them (instead of the allocator aborting, which would trap).
fn reserve<T>(length: u32, what: &str) -> sr::Result<Vec<T>> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(length as usize).map_err(|_| {
        sr::Error::new(sr::ErrorKind::LimitExceeded, format!("{length} {what} do not fit in WebAssembly memory"))
    })?;
    Ok(buffer)
}

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// `[units, offsets]` (UTF-16 code units, in a `Uint8Array` when all are ASCII, else a
    /// `Uint16Array`) for an array of strings, else `undefined` (never throws).
    #[wasm_bindgen(js_name = packStrings)]
    fn pack_strings(keys: &JsValue) -> JsValue;

    /// The key when it is a string without lone surrogates, else `undefined` (never throws).
    #[wasm_bindgen(js_name = wellFormedText)]
    fn well_formed_text(key: &JsValue) -> Option<String>;

    /// `Array.isArray(value)`, false where it throws (a revoked proxy).
    #[wasm_bindgen(js_name = isArray)]
    fn is_array(value: &JsValue) -> bool;

    /// The kind of a typed array (`Uint16Array`, of any realm), or `undefined` for any
    /// other value (never throws, runs no user code).
    #[wasm_bindgen(js_name = typedArrayName)]
    fn typed_array_name(value: &JsValue) -> Option<String>;

    /// A fresh view of `value`'s memory with its real bounds when it is a typed array of
    /// kind `name`; `null` when its buffer is detached or it is out of bounds; `undefined`
    /// for any other value (never throws).
    #[wasm_bindgen(js_name = typedArrayView)]
    fn typed_array_view(value: &JsValue, name: &str) -> JsValue;
}

fn u64_from_bigint(value: &JsValue, what: &str) -> sr::Result<u64> {
    bigint_u64(value).map_err(|negative| sr::argument::bigint_out_of_range(what, negative))
}

/// A bigint (the caller checked that `value` is one) as a `u64`: its value, or
/// `Err(negative)` when it is outside `0..2^64`.
pub(crate) fn bigint_u64(value: &JsValue) -> Result<u64, bool> {
    u64::try_from_js_value_ref(value).ok_or_else(|| value.unchecked_ref::<BigInt>() < &BigInt::from(0))
}

/// `refuse` of what `value` is ([`JsType`]): its `typeof`, and for an object whether it is
/// a typed array (of which kind), an array (`Array.isArray`) or another object, read as
/// the Node addon reads it. Runs no user code.
pub(crate) fn with_type<R>(value: &JsValue, refuse: impl FnOnce(JsType<'_>) -> R) -> R {
    if let Some(number) = value.as_f64() {
        return refuse(JsType::Number(number));
    }
    if let Some(flag) = value.as_bool() {
        return refuse(JsType::Boolean(flag));
    }
    let simple = if value.is_undefined() {
        JsType::Undefined
    } else if value.is_null() {
        JsType::Null
    } else if value.is_string() {
        JsType::String
    } else if value.is_symbol() {
        JsType::Symbol
    } else if value.is_function() {
        JsType::Function
    } else if value.is_bigint() {
        JsType::BigInt
    } else if let Some(name) = typed_array_name(value) {
        return refuse(JsType::TypedArray(&name));
    } else if is_array(value) {
        JsType::Array
    } else {
        JsType::Object
    };
    refuse(simple)
}
