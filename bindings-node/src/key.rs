//! JavaScript values as keys, and as the other integers and texts calls take.
//!
//! | JavaScript | key | rejected with `invalid_key` |
//! |---|---|---|
//! | `string` | its UTF-8 bytes | lone surrogates ([`sr::key::utf8_from_utf16`]) |
//! | `Uint8Array` (and `Buffer`) | its bytes | other typed arrays; a view of a detached buffer, or out of its bounds |
//! | `bigint` | `Key::U64` | negative, or `2n ** 64n` and above |
//! | `number` | `Key::U64` | not a safe non-negative integer ([`sr::key::u64_from_js_number`]) |
//! | anything else | | always |
//!
//! Strings are read as UTF-16 code units: N-API's UTF-8 read would turn a lone surrogate
//! into U+FFFD, so two different strings would route as one key.
//!
//! Keys the core makes (salting) go back as the type they came in as: a string key
//! gives a string, a `Uint8Array` a `Uint8Array`, a `bigint` or `number` a `bigint`.
//!
//! Every refusal is the core's ([`sr::argument`]), from the value's [`JsType`] ([`js_type`]),
//! so the WebAssembly package, which reads values by the same rules, says the same.

use std::ptr;

use napi::bindgen_prelude::{
    BigInt, ClassInstance, Either3, JavaScriptClassExt, MaybeTypeTag, TypedArray, TypedArrayType, Uint8Array,
    Uint8ArraySlice,
};
use napi::{sys, Env, JsString, JsValue, Unknown, ValueType};
use shardroute as sr;
use sr::argument::JsType;

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
    // Short strings, the common key, first: the read fails cheaply on other values, and
    // saves the type query.
    if let Some(key) = short_text(value) {
        return Ok(key);
    }
    match value.get_type().or_throw()? {
        ValueType::String => Ok(Key::Text(key_text(value)?)),
        ValueType::BigInt => Ok(Key::U64(u64_from_bigint(value, "key")?)),
        ValueType::Number => {
            // SAFETY: `get_type` said this is a number.
            let number: f64 = unsafe { value.cast() }.or_throw()?;
            Ok(Key::U64(sr::key::u64_from_js_number(number).or_throw()?))
        }
        ValueType::Object if value.is_typedarray().or_throw()? => {
            // SAFETY: `is_typedarray` said this is a typed array.
            let view: TypedArray = unsafe { value.cast() }.or_throw()?;
            if view.typed_array_type != TypedArrayType::Uint8 {
                return Err(sr::argument::not_a_key(JsType::TypedArray(typed_array_name(view.typed_array_type))))
                    .or_throw();
            }
            // SAFETY: a typed array of element type Uint8.
            let bytes: Uint8ArraySlice = unsafe { value.cast() }.or_throw()?;
            if bytes.is_empty() && !readable_view(value)? {
                return Err(sr::argument::unreadable_view("the Uint8Array key", sr::ErrorKind::InvalidKey)).or_throw();
            }
            Ok(Key::Bytes(bytes))
        }
        _ => Err(sr::argument::not_a_key(js_type(value)?)).or_throw(),
    }
}

/// The longest string key (in UTF-8 bytes) held without allocating, and one more than the
/// longest string (in UTF-16 code units) read in one N-API call into a stack buffer.
const SHORT_TEXT: usize = 64;

/// A string of fewer than [`SHORT_TEXT`] UTF-16 code units whose UTF-8 fits in
/// [`SHORT_TEXT`] bytes, read in one N-API call into a stack buffer; `None` for any other
/// string (then [`text`] reads it, and reports a lone surrogate) and for any other value
/// (N-API refuses to read it as a string).
///
/// UTF-16 rather than N-API's UTF-8 read: a truncated read is then simply `length ==
/// SHORT_TEXT - 1` (N-API cuts whole code units, never inside a UTF-8 sequence), and a lone
/// surrogate is seen as such instead of being replaced by U+FFFD.
fn short_text(value: Unknown<'_>) -> Option<Key<'static>> {
    let raw = value.value();
    let mut units = [0u16; SHORT_TEXT];
    let mut length = 0usize;
    // SAFETY: `raw` is a live string value of this call's env; N-API writes at most
    // `units.len()` code units (the text, truncated, then a NUL) and the count into `length`.
    let status = unsafe {
        napi::sys::napi_get_value_string_utf16(raw.env, raw.value, units.as_mut_ptr(), units.len(), &mut length)
    };
    // A result of `SHORT_TEXT - 1` units may have been cut: the general path decides.
    if status != napi::sys::Status::napi_ok || length + 1 >= SHORT_TEXT {
        return None;
    }
    let mut bytes = [0u8; SHORT_TEXT];
    let written = utf8_into(units.get(..length)?, &mut bytes)?;
    Some(Key::ShortText(bytes, written as u8))
}

/// Writes the UTF-8 of the UTF-16 `units` to the start of `out`: the byte count, or `None`
/// at a lone surrogate or when `out` is too short (`3 * units.len()` bytes always suffice).
/// Each call converts one key on its own: a surrogate pair split across two calls is two
/// lone surrogates, as it is for two separate strings.
pub fn utf8_into(units: &[u16], out: &mut [u8]) -> Option<usize> {
    // ASCII, the common key, is one byte per unit.
    if units.len() <= out.len() && units.iter().all(|&unit| unit < 0x80) {
        for (byte, &unit) in out.iter_mut().zip(units) {
            *byte = unit as u8;
        }
        return Some(units.len());
    }
    let mut written = 0;
    for decoded in char::decode_utf16(units.iter().copied()) {
        let ch = decoded.ok()?;
        let end = written + ch.len_utf8();
        ch.encode_utf8(out.get_mut(written..end)?);
        written = end;
    }
    Some(written)
}

/// The `invalid_key` error of a string key whose UTF-16 `units` [`utf8_into`] refused for a
/// lone surrogate: the core's message, the same as [`from_js`] gives for that string.
pub fn utf16_error(units: &[u16]) -> errors::Error {
    match sr::key::utf8_from_utf16(units) {
        Err(err) => errors::new(err.kind(), err.message()),
        // Not reached: the callers pass text with a lone surrogate.
        Ok(_) => errors::new(sr::ErrorKind::InvalidKey, "text key is not valid Unicode"),
    }
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

/// Reads an array of routing keys, in order: an array, or anything `Array.isArray`
/// holds for (a `Proxy` of an array), read element by element as the WebAssembly
/// package reads it.
///
/// # Errors
/// `invalid_argument` when `keys` is not an array, or its `length` cannot be read; a
/// key's error as [`from_js`], or `invalid_key` when reading it throws (a getter, a
/// proxy trap), its message prefixed with the key's index ([`at`]).
pub fn many_from_js<'env>(keys: Unknown<'env>) -> Result<Vec<Key<'env>>> {
    elements(
        keys,
        "keys",
        |index| at(index, errors::from_core(sr::argument::unreadable_key())),
        |index, key| from_js(key).map_err(|err| at(index, err)),
    )
}

/// Reads an array of strings that are not keys (`what`: `seeds`, `names`), as
/// [`many_from_js`] reads keys.
///
/// # Errors
/// `invalid_argument` when `array` is not an array or its `length` cannot be read, for an
/// element that is not a string (naming it: `names[1] must be a string, got ...`), has a
/// lone surrogate, or cannot be read.
pub fn strings_from_js(array: Unknown<'_>, what: &str) -> Result<Vec<String>> {
    elements(
        array,
        what,
        |index| errors::from_core(crate::js_session::unreadable_element(what, index)),
        |index, item| crate::text_argument(item, &format!("{what}[{index}]")),
    )
}

/// `[name, key]` pairs (`indexWritePlan`'s terms), as [`many_from_js`] reads keys.
///
/// # Errors
/// `invalid_argument` when `pairs` or an element is not an array, an element is not of
/// length 2 or its name is not text; `invalid_key` (naming the index) for a bad key.
pub fn pairs_from_js<'env>(pairs: Unknown<'env>, what: &str) -> Result<Vec<(String, Key<'env>)>> {
    let unreadable = |list: &str, index| errors::from_core(crate::js_session::unreadable_element(list, index));
    elements(
        pairs,
        what,
        |index| unreadable(what, index),
        |index, pair| {
            let name = format!("{what}[{index}]");
            let items = elements(pair, &name, |item| unreadable(&name, item), |_, item| Ok(item))?;
            let [id, term] = items[..] else {
                return Err(sr::argument::not_a_pair(&name, items.len())).or_throw();
            };
            Ok((crate::text_argument(id, &format!("{name}[0]"))?, from_js(term).map_err(|err| at(index, err))?))
        },
    )
}

/// `each` of every element of an array (`what` names it), in order: an array, or anything
/// `Array.isArray` holds for (a `Proxy` of an array), read element by element as the
/// WebAssembly package reads it; `unreadable(index)` is the error of an element whose
/// read throws (a getter, a proxy trap).
///
/// # Errors
/// `invalid_argument` when `array` is not an array, or its `length` cannot be read; the
/// first error of `unreadable` or `each`.
fn elements<'env, T>(
    array: Unknown<'env>,
    what: &str,
    unreadable: impl Fn(usize) -> errors::Error,
    mut each: impl FnMut(usize, Unknown<'env>) -> Result<T>,
) -> Result<Vec<T>> {
    let raw = array.value();
    let length = if array.is_array().or_throw()? {
        let mut length = 0u32;
        // SAFETY: a live array value of this call's env.
        check(unsafe { sys::napi_get_array_length(raw.env, raw.value, &mut length) }).or_throw()?;
        length
    } else if js_type(array)? == JsType::Array {
        // A proxy of an array: N-API's array calls refuse it, JavaScript reads it.
        property_length(array, what)?
    } else {
        return Err(sr::argument::not_an_array(what, js_type(array)?)).or_throw();
    };
    // The length comes from JavaScript: reserve no more than a small batch up front.
    let mut converted = Vec::with_capacity(length.min(1024) as usize);
    for index in 0..length {
        let mut element = ptr::null_mut();
        // SAFETY: a live object value of this call's env; a getter or trap may throw.
        let status = unsafe { sys::napi_get_element(raw.env, raw.value, index, &mut element) };
        if status != sys::Status::napi_ok {
            clear_exception(raw.env);
            return Err(unreadable(index as usize));
        }
        // SAFETY: `element` is a live value of this call's env.
        let element = unsafe { Unknown::from_raw_unchecked(raw.env, element) };
        converted.push(each(index as usize, element)?);
    }
    Ok(converted)
}

/// The `length` of an array proxy (`what` names it), read as JavaScript reads it.
///
/// # Errors
/// `invalid_argument` when the read throws or gives no array length (an integer in
/// `0..=2^32-1`).
fn property_length(array: Unknown<'_>, what: &str) -> Result<u32> {
    let raw = array.value();
    let mut length = ptr::null_mut();
    // SAFETY: a live object value of this call's env; the trap may throw.
    let status = unsafe { sys::napi_get_named_property(raw.env, raw.value, c"length".as_ptr(), &mut length) };
    if status != sys::Status::napi_ok {
        clear_exception(raw.env);
        return Err(sr::argument::unreadable_length(what)).or_throw();
    }
    // SAFETY: `length` is a live value of this call's env.
    let length = unsafe { Unknown::from_raw_unchecked(raw.env, length) };
    sr::argument::count(what, js_type(length)?).map_err(|_| sr::argument::unreadable_length(what)).or_throw()
}

/// The UTF-8 of string keys packed by `index.js` as UTF-16 code units when every unit is
/// ASCII (the common batch): then each unit is one byte, and the unit offsets are the byte
/// offsets. `None` otherwise.
pub fn ascii_from_packed_utf16(units: &[u16]) -> Option<Vec<u8>> {
    // A fold without early exit, then a plain narrowing copy: both vectorize.
    if units.iter().fold(0, |all, &unit| all | unit) >= 0x80 {
        return None;
    }
    Some(units.iter().map(|&unit| unit as u8).collect())
}

/// Calls `each` with the UTF-8 bytes of every string key packed by `index.js` as UTF-16
/// code units (key `i` is `units[offsets[i]..offsets[i + 1]]`), in order, converting each
/// key on its own into one reused buffer. Every key is checked before the first `each`,
/// as [`many_from_js`] reads every key of an array before any is routed. For calls that
/// take every key at once, the core converts the batch itself
/// ([`sr::key::utf8_from_packed_utf16`]).
///
/// # Errors
/// `invalid_argument` when the offsets do not cut `units` ([`sr::key::check_packed_offsets`]);
/// `invalid_key` for a key with a lone surrogate, its message prefixed with the key's
/// index ([`at`]), as [`many_from_js`] reports it; the first error of `each`.
pub fn for_each_packed_utf16(units: &[u16], offsets: &[u32], mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    sr::key::check_packed_offsets(offsets, units).or_throw()?;
    // Only text with a surrogate unit can hold a lone one: most batches skip the decoding.
    // (A fold without early exit: the compiler vectorizes it.)
    let surrogates = units.iter().fold(false, |found, &unit| found | (unit & 0xF800 == 0xD800));
    if surrogates {
        for (index, pair) in offsets.windows(2).enumerate() {
            let key = &units[pair[0] as usize..pair[1] as usize];
            if char::decode_utf16(key.iter().copied()).any(|decoded| decoded.is_err()) {
                return Err(at(index, utf16_error(key)));
            }
        }
    }
    let mut scratch = vec![0u8; 3 * SHORT_TEXT];
    for pair in offsets.windows(2) {
        let key = &units[pair[0] as usize..pair[1] as usize];
        if scratch.len() < 3 * key.len() {
            scratch.resize(3 * key.len(), 0);
        }
        // Checked above, and `scratch` holds 3 bytes per unit: this does not fail.
        let written = utf8_into(key, &mut scratch).ok_or_else(|| utf16_error(key))?;
        each(&scratch[..written])?;
    }
    Ok(())
}

/// A typed array of element type `kind` (`BigUint64Array`, `Uint32Array`, ...) read in
/// place: the slice borrows the array's memory for the duration of the call.
///
/// # Errors
/// `invalid_argument` naming `what` for any other value, and for a view of a detached
/// buffer or out of its bounds ([`sr::argument::unreadable_view`]).
pub fn typed_array<'env, T>(value: Unknown<'env>, kind: TypedArrayType, what: &str) -> Result<T>
where
    T: napi::bindgen_prelude::FromNapiValue + 'env,
{
    if value.get_type().or_throw()? == ValueType::Object && value.is_typedarray().or_throw()? {
        // SAFETY: `is_typedarray` said this is a typed array.
        let view: TypedArray = unsafe { value.cast() }.or_throw()?;
        if view.typed_array_type == kind {
            if view.arraybuffer.is_empty() && !readable_view(value)? {
                return Err(sr::argument::unreadable_view(what, sr::ErrorKind::InvalidArgument)).or_throw();
            }
            // SAFETY: a typed array of element type `kind`, the element type of `T`.
            return unsafe { value.cast() }.or_throw();
        }
    }
    Err(sr::argument::not_a_typed_array(what, typed_array_name(kind), js_type(value)?)).or_throw()
}

/// Whether an empty typed array can be read: a copy of it (`new Uint8Array(view)`, or
/// `new BigUint64Array(view)` for bigint elements: the two kinds do not convert, even
/// empty), which copies no element, throws for a view of a detached buffer or one out of
/// its bounds after a resize, as the WebAssembly package's check does
/// (`typedArrayView`). N-API gives such a view as empty: without this, a detached key
/// would route as the empty key.
///
/// # Errors
/// N-API's, if the constructor cannot be reached.
fn readable_view(view: Unknown<'_>) -> Result<bool> {
    let raw = view.value();
    let env = raw.env;
    // SAFETY: every caller checked that `view` is a typed array.
    let kind = unsafe { view.cast::<TypedArray>() }.or_throw()?.typed_array_type;
    let name = match kind {
        TypedArrayType::BigInt64 | TypedArrayType::BigUint64 => c"BigUint64Array",
        _ => c"Uint8Array",
    };
    let mut global = ptr::null_mut();
    let mut constructor = ptr::null_mut();
    let mut copy = ptr::null_mut();
    // SAFETY: the env of this call; `view` is a live value of it.
    unsafe {
        check(sys::napi_get_global(env, &mut global)).or_throw()?;
        check(sys::napi_get_named_property(env, global, name.as_ptr(), &mut constructor)).or_throw()?;
        if sys::napi_new_instance(env, constructor, 1, &raw.value, &mut copy) != sys::Status::napi_ok {
            clear_exception(env);
            return Ok(false);
        }
    }
    Ok(true)
}

/// Clears the JavaScript exception a failed N-API call left pending (a getter or proxy
/// trap that threw), so that the call can throw its own error instead.
pub fn clear_exception(env: sys::napi_env) {
    let mut exception = ptr::null_mut();
    // SAFETY: the env of this call. With nothing pending, this does nothing.
    unsafe { sys::napi_get_and_clear_last_exception(env, &mut exception) };
}

/// An N-API status as a result.
fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(napi::Status::from(status), "N-API call failed".to_owned()))
    }
}

/// The name of a typed array kind, as JavaScript names its constructor.
fn typed_array_name(kind: TypedArrayType) -> &'static str {
    match kind {
        TypedArrayType::Int8 => "Int8Array",
        TypedArrayType::Uint8 => "Uint8Array",
        TypedArrayType::Uint8Clamped => "Uint8ClampedArray",
        TypedArrayType::Int16 => "Int16Array",
        TypedArrayType::Uint16 => "Uint16Array",
        TypedArrayType::Int32 => "Int32Array",
        TypedArrayType::Uint32 => "Uint32Array",
        TypedArrayType::Float32 => "Float32Array",
        TypedArrayType::Float64 => "Float64Array",
        TypedArrayType::BigInt64 => "BigInt64Array",
        TypedArrayType::BigUint64 => "BigUint64Array",
        // A kind newer than napi-rs knows (Float16Array).
        _ => "typed array",
    }
}

/// `err` with its message prefixed by the index of the key it is about (`keys[2]: ...`).
pub fn at(index: usize, err: errors::Error) -> errors::Error {
    match err.status {
        errors::Code::Core(kind) => errors::from_core(sr::argument::at_index(index, sr::Error::new(kind, err.reason))),
        // Not a refusal of the key: N-API itself failed.
        errors::Code::Napi(_) => err,
    }
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
        ValueType::String => sr::key::parse_u64(&key_text(value)?).or_throw(),
        _ => Err(sr::argument::not_a_u64(what, js_type(value)?)).or_throw(),
    }
}

/// Reads a JavaScript string key as UTF-8 without replacing lone surrogates.
///
/// # Errors
/// `invalid_key` for a lone surrogate (the core's message); N-API's status if the read
/// fails.
fn key_text(value: Unknown<'_>) -> Result<String> {
    sr::key::utf8_from_utf16(&utf16(value)?).or_throw()
}

/// Reads a JavaScript string that is not a key (`what`: a document, an address) as
/// UTF-8 without replacing lone surrogates.
///
/// # Errors
/// `kind` for a lone surrogate ([`sr::argument::text`]); N-API's status if the read fails.
pub fn text(value: Unknown<'_>, what: &str, kind: sr::ErrorKind) -> Result<String> {
    sr::argument::text(what, &utf16(value)?, kind).or_throw()
}

/// The UTF-16 code units of a string value.
fn utf16(value: Unknown<'_>) -> Result<Vec<u16>> {
    // SAFETY: every caller checked that `value` is a string (and N-API's read would
    // fail, not misbehave, on any other value).
    let string: JsString = unsafe { value.cast() }.or_throw()?;
    let length = string.utf16_len().or_throw()?;
    let units = string.into_utf16().or_throw()?;
    // napi-rs's buffer also holds the terminating NUL: take the string's own units only.
    units.as_slice().get(..length).map(<[u16]>::to_vec).ok_or_else(|| {
        napi::Error::new(errors::Code::Napi(napi::Status::GenericFailure), "short UTF-16 read".to_owned())
    })
}

/// A `bigint` as a `u64`, losslessly.
///
/// # Errors
/// `invalid_key` for a negative value or one of `2n ** 64n` or more.
fn u64_from_bigint(value: Unknown<'_>, what: &str) -> Result<u64> {
    bigint_u64(value)?.map_err(|negative| sr::argument::bigint_out_of_range(what, negative)).or_throw()
}

/// A `bigint` (every caller checked that `value` is one) as a `u64`: its value, or
/// `Err(negative)` when it is outside `0..2^64`.
///
/// # Errors
/// N-API's, if the read fails.
pub fn bigint_u64(value: Unknown<'_>) -> Result<core::result::Result<u64, bool>> {
    // SAFETY: every caller checked that `value` is a bigint.
    let big: BigInt = unsafe { value.cast() }.or_throw()?;
    Ok(match big.get_u64() {
        (false, value, true) => Ok(value),
        (negative, _, _) => Err(negative),
    })
}

/// `value` as an instance of the addon's class `T` (a `Router`, a `Command`), or the
/// error `refuse` makes of what it is.
///
/// # Errors
/// `refuse`'s for any other value.
pub fn instance<'env, T>(
    env: &Env,
    value: Unknown<'env>,
    refuse: impl FnOnce(JsType<'_>) -> sr::Error,
) -> Result<ClassInstance<'env, T>>
where
    T: JavaScriptClassExt + MaybeTypeTag + 'env,
{
    // `instanceof` asks a proxy for its prototype: a revoked one throws, and is no instance.
    let is_instance = T::instance_of(env, &value).unwrap_or_else(|_| {
        clear_exception(env.raw());
        false
    });
    // SAFETY: `instance_of` said this is a `T`, or a proxy of one, which N-API cannot
    // unwrap (an error, no exception pending): no instance either.
    match is_instance.then(|| unsafe { value.cast() }.ok()).flatten() {
        Some(instance) => Ok(instance),
        None => Err(refuse(js_type(value)?)).or_throw(),
    }
}

/// What a JavaScript value is, for the core's refusals ([`sr::argument::JsType`]): its `typeof`,
/// and for an object whether it is a typed array (of which kind), an array
/// (`Array.isArray`: a `Proxy` of an array too, which N-API's own check misses) or
/// another object. The WebAssembly package reads the same by the same rules.
///
/// # Errors
/// N-API's, if a check fails.
pub fn js_type(value: Unknown<'_>) -> Result<JsType<'static>> {
    Ok(match value.get_type().or_throw()? {
        ValueType::Undefined => JsType::Undefined,
        ValueType::Null => JsType::Null,
        // SAFETY (both): `get_type` said which type this is.
        ValueType::Boolean => JsType::Boolean(unsafe { value.cast() }.or_throw()?),
        ValueType::Number => JsType::Number(unsafe { value.cast() }.or_throw()?),
        ValueType::String => JsType::String,
        ValueType::Symbol => JsType::Symbol,
        ValueType::Function => JsType::Function,
        ValueType::BigInt => JsType::BigInt,
        ValueType::Object if value.is_typedarray().or_throw()? => {
            // SAFETY: `is_typedarray` said this is a typed array.
            let view: TypedArray = unsafe { value.cast() }.or_throw()?;
            JsType::TypedArray(typed_array_name(view.typed_array_type))
        }
        ValueType::Object if value.is_array().or_throw()? || is_array_proxy(value)? => JsType::Array,
        ValueType::Object | ValueType::External | ValueType::Unknown => JsType::Object,
    })
}

/// `Array.isArray(value)`, for an object N-API does not see as an array: a `Proxy` of one.
///
/// # Errors
/// N-API's, if `Array.isArray` cannot be reached.
fn is_array_proxy(value: Unknown<'_>) -> Result<bool> {
    let raw = value.value();
    let env = raw.env;
    let (mut global, mut array, mut is_array, mut result) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    let mut answer = false;
    // SAFETY: the env of this call; `value` is a live value of it. `Array.isArray` runs no
    // user code, not even a proxy's traps.
    unsafe {
        check(sys::napi_get_global(env, &mut global)).or_throw()?;
        check(sys::napi_get_named_property(env, global, c"Array".as_ptr(), &mut array)).or_throw()?;
        check(sys::napi_get_named_property(env, array, c"isArray".as_ptr(), &mut is_array)).or_throw()?;
        if sys::napi_call_function(env, array, is_array, 1, &raw.value, &mut result) != sys::Status::napi_ok {
            // Only a revoked proxy makes it throw.
            clear_exception(env);
            return Ok(false);
        }
        check(sys::napi_get_value_bool(env, result, &mut answer)).or_throw()?;
    }
    Ok(answer)
}
