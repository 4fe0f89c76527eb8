//! Keys: Python values converted to core [`sr::Key`]s and core [`sr::OwnedKey`]s
//! (salted keys) back, and the integer arguments (hashes, counts) converted to
//! `u64`/`u32`.
//!
//! `str` is its UTF-8 encoding; `bytes`, `bytearray` and `memoryview` are their bytes;
//! an `int` (not a `bool`) in `0..2**64` is an integer key. Anything else is
//! `invalid_key`, and so is a `str` holding a lone surrogate: it has no UTF-8 encoding,
//! and replacing the surrogate would route two different strings as one key.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList, PyMemoryView, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use shardroute as sr;

use crate::errors;

/// A key converted from Python, holding the object whose bytes it borrows.
pub enum Key<'py> {
    /// Raw bytes, or text that Python encoded into a new `bytes` object.
    Bytes(Bound<'py, PyBytes>),
    /// Text whose UTF-8 form the `str` object itself holds (see [`str_utf8`]): no copy.
    Text { _owner: Bound<'py, PyString>, utf8: Utf8 },
    /// An integer key.
    U64(u64),
}

/// Where a `str` object keeps its UTF-8 form: valid while the object lives (strings are
/// immutable), which [`Key::Text`] guarantees by holding the object.
#[derive(Clone, Copy)]
pub struct Utf8 {
    data: *const u8,
    len: usize,
}

impl<'py> Key<'py> {
    /// Converts a Python value.
    ///
    /// # Errors
    /// `invalid_key` for a value of an unsupported type, a `str` with lone surrogates, an
    /// `int` outside `0..2**64`.
    pub fn from_py(value: &Bound<'py, PyAny>) -> PyResult<Key<'py>> {
        // The common cases first, by exact type checks (a pointer comparison each; the
        // subclass checks below call into the interpreter under abi3).
        if let Ok(text) = value.cast_exact::<PyString>() {
            if let Some(utf8) = str_utf8(text) {
                return Ok(Key::Text { _owner: text.clone(), utf8 });
            }
        } else if value.cast_exact::<PyInt>().is_ok() {
            return int_to_u64(value, "integer key").map(Key::U64);
        }
        if let Ok(bytes) = value.cast::<PyBytes>() {
            Ok(Key::Bytes(bytes.clone()))
        } else if let Ok(text) = value.cast::<PyString>() {
            match str_utf8(text) {
                Some(utf8) => Ok(Key::Text { _owner: text.clone(), utf8 }),
                None => text_bytes(text).map(Key::Bytes),
            }
        } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
            u64_from_py(value, "integer key").map(Key::U64)
        } else if value.is_instance_of::<PyByteArray>() || value.is_instance_of::<PyMemoryView>() {
            // `bytes(value)`: a copy, contiguous whatever the buffer's shape. It fails
            // only for a released memoryview, which is no key either.
            let py = value.py();
            let bytes = py
                .get_type::<PyBytes>()
                .call1((value,))
                .map_err(|err| errors::convert(py, err, sr::ErrorKind::InvalidKey, "byte key"))?;
            Ok(Key::Bytes(bytes.cast_into::<PyBytes>()?))
        } else {
            Err(errors::new(
                sr::ErrorKind::InvalidKey,
                format!("a key must be str, bytes, bytearray, memoryview or int, not {}", type_name(value)),
            ))
        }
    }

    /// [`from_py`](Key::from_py) for a value the caller owns (an iterator's item): a
    /// `str` is kept as it is, without the extra reference `from_py` takes.
    pub fn from_py_owned(value: Bound<'py, PyAny>) -> PyResult<Key<'py>> {
        match value.cast_into_exact::<PyString>() {
            Ok(text) => match str_utf8(&text) {
                Some(utf8) => Ok(Key::Text { _owner: text, utf8 }),
                None => Key::from_py(text.as_any()),
            },
            Err(err) => Key::from_py(&err.into_inner()),
        }
    }

    /// Whether a value is a text or byte-string key (which Python can also iterate).
    pub fn is_text_or_bytes(value: &Bound<'py, PyAny>) -> bool {
        value.is_instance_of::<PyString>()
            || value.is_instance_of::<PyBytes>()
            || value.is_instance_of::<PyByteArray>()
            || value.is_instance_of::<PyMemoryView>()
    }

    /// Borrows as a core key.
    pub fn as_core(&self) -> sr::Key<'_> {
        match self {
            Key::Bytes(bytes) => sr::Key::Bytes(bytes.as_bytes()),
            // SAFETY: `str_utf8` gave the pointer and length of the UTF-8 buffer owned by
            // the `str` object held alongside, which lives (and stays unchanged) at least
            // as long as `self`.
            Key::Text { utf8, .. } => sr::Key::Bytes(unsafe { std::slice::from_raw_parts(utf8.data, utf8.len) }),
            Key::U64(value) => sr::Key::U64(*value),
        }
    }
}

/// The keys of an iterable argument (`route_many`'s, `diff`'s), converted in order.
///
/// # Errors
/// `invalid_argument` when `keys` is not iterable or is a single key (a `str` or bytes
/// is iterable, but routing its characters is never what was meant); `invalid_key` at
/// the first value that is not a key, or when the iterator raises (the cause), its
/// message prefixed with the key's index (`keys[2]: ...`).
pub fn keys_from_py<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Vec<Key<'py>>> {
    if Key::is_text_or_bytes(keys) {
        return Err(single_key_error());
    }
    let iterator = keys.try_iter().map_err(|err| {
        errors::convert(keys.py(), err, sr::ErrorKind::InvalidArgument, "keys must be an iterable of keys")
    })?;
    // The iterator gives no length under abi3: a list's or tuple's saves the regrowing.
    let known = keys.is_instance_of::<PyList>() || keys.is_instance_of::<PyTuple>();
    let mut converted = Vec::with_capacity(if known { keys.len()? } else { 0 });
    for (index, key) in iterator.enumerate() {
        let key = key.map_err(|err| unreadable_key(keys.py(), index, err))?;
        converted.push(Key::from_py_owned(key).map_err(|err| errors::at_index(keys.py(), index, err))?);
    }
    Ok(converted)
}

/// How many keys [`for_each_key_chunk`] converts before handing them to core.
const CHUNK: usize = 1024;

/// Converts the keys of an iterable argument in chunks and hands each chunk to `each`,
/// in order: batches of any size in bounded memory, with the objects each key borrows
/// from held only while its chunk is routed.
///
/// # Errors
/// As [`keys_from_py`], and whatever `each` returns.
pub fn for_each_key_chunk<'py>(
    keys: &Bound<'py, PyAny>,
    mut each: impl FnMut(&[Key<'py>]) -> PyResult<()>,
) -> PyResult<()> {
    let iterator = keys.try_iter().map_err(|err| {
        errors::convert(keys.py(), err, sr::ErrorKind::InvalidArgument, "keys must be an iterable of keys")
    })?;
    let mut chunk = Vec::with_capacity(CHUNK);
    for (index, key) in iterator.enumerate() {
        let key = key.map_err(|err| unreadable_key(keys.py(), index, err))?;
        chunk.push(Key::from_py_owned(key).map_err(|err| errors::at_index(keys.py(), index, err))?);
        if chunk.len() == CHUNK {
            each(&chunk)?;
            chunk.clear();
        }
    }
    if !chunk.is_empty() {
        each(&chunk)?;
    }
    Ok(())
}

/// The `invalid_key` error of a key the iterable of keys failed to give (its iterator
/// raised), with what it raised as the cause, as the JavaScript packages refuse an
/// element whose getter throws; a `BaseException` that is not an `Exception`
/// (KeyboardInterrupt) propagates unchanged.
fn unreadable_key(py: Python<'_>, index: usize, raised: PyErr) -> PyErr {
    let core = sr::argument::at_index(index, sr::argument::unreadable_key());
    errors::convert(py, raised, sr::ErrorKind::InvalidKey, core.message())
}

/// The error for a single `str` or bytes key passed where an iterable of keys is expected.
pub fn single_key_error() -> PyErr {
    errors::new(
        sr::ErrorKind::InvalidArgument,
        "keys must be an iterable of keys, not a single str or bytes key; wrap it in a list",
    )
}

/// A key returned by core (a salted key) as the Python type of the key it came from:
/// `str` for a `str` key, `bytes` for a bytes-like key, `int` for an `int` key.
///
/// # Errors
/// `invalid_key` if the bytes of a key that came from a `str` are not UTF-8. Core salts
/// by appending the UTF-8 separator and ASCII digits to the key's UTF-8 bytes, so this
/// does not happen; it is an error rather than a silent switch to `bytes`.
pub fn owned_to_py<'py>(source: &Bound<'py, PyAny>, key: &sr::OwnedKey) -> PyResult<Bound<'py, PyAny>> {
    let py = source.py();
    match key {
        sr::OwnedKey::U64(value) => value.into_bound_py_any(py),
        sr::OwnedKey::Bytes(bytes) if source.is_instance_of::<PyString>() => match std::str::from_utf8(bytes) {
            Ok(text) => text.into_bound_py_any(py),
            Err(err) => Err(errors::new(sr::ErrorKind::InvalidKey, format!("salted text key is not UTF-8: {err}"))),
        },
        sr::OwnedKey::Bytes(bytes) => Ok(PyBytes::new(py, bytes).into_any()),
    }
}

/// The UTF-8 form a `str` object keeps: for an ASCII string its own characters, for
/// others a UTF-8 copy CPython makes once and caches in the object. Unlike
/// `str.encode()` this allocates no `bytes` object per key, which is most of the cost
/// of a key in a batch. `None` when the string has lone surrogates (no UTF-8 form; the
/// caller goes the slow way to report it). `PyUnicode_AsUTF8AndSize` is in the stable
/// ABI from CPython 3.10, the wheel's floor.
fn str_utf8(text: &Bound<'_, PyString>) -> Option<Utf8> {
    let mut len: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live `str` object and the GIL is held (it is a `Bound`).
    let data = unsafe { pyo3::ffi::PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut len) };
    if data.is_null() {
        // The UnicodeEncodeError it raised: `text_bytes` reports lone surrogates itself.
        drop(PyErr::take(text.py()));
        return None;
    }
    Some(Utf8 { data: data.cast::<u8>(), len: len as usize })
}

/// The UTF-8 bytes of a `str`, as a new `bytes` object.
///
/// # Errors
/// `invalid_key` for lone surrogates, with core's message: the string is re-read as
/// UTF-16 (surrogates kept) and handed to [`sr::key::utf8_from_utf16`], the check the
/// JavaScript bindings use, so every language rejects it in the same words.
fn text_bytes<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyBytes>> {
    text.encode_utf8().map_err(|err| match utf16_units(text).map(|units| sr::key::utf8_from_utf16(&units)) {
        Some(Err(rejection)) => errors::to_py(rejection),
        // Not expected: core accepts what Python could not encode. Say why Python failed.
        _ => errors::convert(text.py(), err, sr::ErrorKind::InvalidKey, "text key"),
    })
}

/// The UTF-16 code units of a `str`, lone surrogates kept (as a JavaScript string holds
/// them), for core's decoders to find and name the first lone one; `None` if Python
/// cannot encode it (not expected: `surrogatepass` takes every `str`).
fn utf16_units(text: &Bound<'_, PyString>) -> Option<Vec<u16>> {
    let units = text.call_method1("encode", ("utf-16-le", "surrogatepass")).ok()?;
    let units = units.cast_into::<PyBytes>().ok()?;
    Some(units.as_bytes().chunks_exact(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]])).collect())
}

/// The text of a `str` that is not a key (a document's JSON text, an address, a
/// redirect line); `what` names it.
///
/// # Errors
/// `kind` for lone surrogates (no UTF-8 form) in core's words, the JavaScript packages'
/// ([`sr::argument::text`]): `"topology is not valid Unicode: unpaired surrogate 0xD800
/// at code unit 51"`, with Python's `UnicodeEncodeError` as the cause.
pub fn text_of(text: &Bound<'_, PyString>, what: &str, kind: sr::ErrorKind) -> PyResult<String> {
    match text.to_cow() {
        Ok(text) => Ok(text.into_owned()),
        Err(err) => {
            let py = text.py();
            match utf16_units(text).map(|units| sr::argument::text(what, &units, kind)) {
                Some(Err(refusal)) => {
                    let refusal = errors::to_py(refusal);
                    refusal.set_cause(py, Some(err));
                    Err(refusal)
                }
                // Not expected: core accepts what Python could not encode. Say why Python failed.
                _ => Err(errors::convert(py, err, kind, &format!("{what} is not valid Unicode"))),
            }
        }
    }
}

/// An `int` in `0..2**64` as a `u64`; `what` names the value in the error.
///
/// # Errors
/// `invalid_key` (the code of core's [`sr::key::parse_u64`]) when the value is negative,
/// too large, or not an `int`; a `bool` is not accepted: `True` as a key or a hash is
/// almost certainly a bug.
pub fn u64_from_py(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(errors::new(
            sr::ErrorKind::InvalidKey,
            format!("{what} must be an int in 0..2**64, not {}", type_name(value)),
        ));
    }
    int_to_u64(value, what)
}

/// [`u64_from_py`] for a value already known to be an `int` (not a `bool`).
fn int_to_u64(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    value.extract::<u64>().map_err(|_| {
        // Not the value itself: a huge int can be too long to format.
        let side = if value.lt(0).unwrap_or(false) { "negative" } else { "above 2**64-1" };
        errors::new(sr::ErrorKind::InvalidKey, format!("{what} is {side}; expected an int in 0..2**64"))
    })
}

/// An `int` in `0..2**32` as a `u32`, for counts; `what` names the argument.
///
/// # Errors
/// `invalid_argument` when the value is not an `int` (or is a `bool`) or is out of range.
pub fn u32_from_py(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("{what} must be an int in 0..2**32, not {}", type_name(value)),
        ));
    }
    value.extract::<u32>().map_err(|_| {
        let side = if value.lt(0).unwrap_or(false) { "negative" } else { "above 2**32-1" };
        errors::new(sr::ErrorKind::InvalidArgument, format!("{what} is {side}; expected an int in 0..2**32"))
    })
}

/// A `str` argument that is not a key nor a document (an address, a redirect line), as
/// its text; `what` names the argument.
///
/// # Errors
/// `invalid_argument` when the value is not a `str`, or has lone surrogates (no UTF-8
/// form: [`text_of`]).
pub fn str_from_py(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let text = value.cast::<PyString>().map_err(|_| {
        errors::new(sr::ErrorKind::InvalidArgument, format!("{what} must be a str, not {}", type_name(value)))
    })?;
    text_of(text, what, sr::ErrorKind::InvalidArgument)
}

/// The name of a value's type, for messages.
pub fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map_or_else(|_| "an unknown type".to_owned(), |name| name.to_string())
}
