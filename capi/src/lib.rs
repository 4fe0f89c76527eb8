//! libshardroute: the C ABI over the shardroute core (docs/c.md).
//!
//! A shell, like the Python and Node bindings: it converts types and maps errors, and
//! decides nothing. Conventions, the same for every function (capi/include/shardroute.h
//! is generated from these doc comments by cbindgen):
//!
//! - Every function but the accessors of `sr_error`, the free functions and
//!   `sr_version` returns `sr_error *`: `NULL` on success, else an error the caller frees
//!   with `sr_error_free`. Results go to out-parameters, written only on success.
//! - Text and bytes come in as a pointer and a length (no NUL needed). `NULL` is allowed
//!   only with length 0 (an empty buffer, as cgo and JNA pass one). Text must be UTF-8,
//!   else the call fails with the code of that argument (a document: `invalid_topology`,
//!   a key: `invalid_key`, other text: `invalid_argument`), as in every binding
//!   (conformance/README.md, "Values crossing into a binding").
//! - Handles (`sr_router *`, `sr_migration *`, sessions) are opaque; a `NULL` handle or
//!   out-parameter is `invalid_argument`. Each handle has one `_free` function.
//! - Returned JSON text is NUL-terminated UTF-8 owned by the caller: free it with
//!   `sr_string_free`. Returned bytes: `sr_bytes_free(ptr, len)`. Returned `(ptr, len)`
//!   text marked *borrowed* lives as long as the handle (or static data) it came from
//!   and is never freed. No call answers with a pointer into the caller's own arguments:
//!   a binding may pass a temporary copy of its buffer (JNA does, cgo may), and such a
//!   pointer would dangle at return. A result that is part of an argument comes back as
//!   an offset and a length into that argument (`sr_router_ask`).
//! - No panic crosses: one would come back as an error with code `internal` (a bug).
#![allow(non_camel_case_types)]
// Every function is `unsafe extern "C"`: the C caller vouches for its pointers, and the
// ownership and lifetime rules are written in each function's doc comment (the header's).
#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use serde_json::Value;
use sr::{Error, ErrorKind, Key};

mod migration;
mod router;
mod session;
mod source;

pub use migration::*;
pub use router::*;
pub use session::*;
pub use source::*;

/// An error: a stable code (`Error::code()` of the core, e.g. `"invalid_key"`, or
/// `"internal"` for a caught panic) and a message. Free with `sr_error_free`.
pub struct sr_error {
    code: CString,
    message: CString,
}

/// A key argument: `kind` is `SR_KEY_BYTES` (`bytes`, `len`: the key's bytes, text as
/// UTF-8) or `SR_KEY_U64` (`value`). The bytes are borrowed for the call only.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sr_key {
    /// `SR_KEY_BYTES` or `SR_KEY_U64`; any other value is `invalid_key`.
    pub kind: u32,
    /// The key's bytes (`SR_KEY_BYTES`); `NULL` only with `len` 0.
    pub bytes: *const u8,
    /// The number of bytes at `bytes`.
    pub len: usize,
    /// The integer key (`SR_KEY_U64`).
    pub value: u64,
}

/// A key of bytes (text is its UTF-8 bytes).
pub const SR_KEY_BYTES: u32 = 0;
/// An integer key.
pub const SR_KEY_U64: u32 = 1;

/// A borrowed text argument in a list (seeds, error class names): `ptr` and `len`
/// bytes of UTF-8, `NULL` only with `len` 0.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sr_str {
    /// The text's bytes.
    pub ptr: *const c_char,
    /// Their number.
    pub len: usize,
}

pub(crate) type Res<T> = Result<T, Error>;

static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The library's version, e.g. `"0.1.0"` (the workspace version, the same as every
/// shardroute package). Static: never freed. Compare with `SHARDROUTE_VERSION` of the
/// header to catch a header and a library of two releases.
#[no_mangle]
pub extern "C" fn sr_version() -> *const c_char {
    VERSION.as_ptr().cast()
}

/// The error's stable code (NUL-terminated). Borrowed: valid until `sr_error_free(error)`.
/// `NULL` when `error` is `NULL`.
#[no_mangle]
pub unsafe extern "C" fn sr_error_code(error: *const sr_error) -> *const c_char {
    error.as_ref().map_or(ptr::null(), |e| e.code.as_ptr())
}

/// The error's message (NUL-terminated UTF-8). Borrowed: valid until
/// `sr_error_free(error)`. `NULL` when `error` is `NULL`.
#[no_mangle]
pub unsafe extern "C" fn sr_error_message(error: *const sr_error) -> *const c_char {
    error.as_ref().map_or(ptr::null(), |e| e.message.as_ptr())
}

/// Frees an error returned by any call. `NULL` is a no-op. Use it once per error.
#[no_mangle]
pub unsafe extern "C" fn sr_error_free(error: *mut sr_error) {
    free_box(error)
}

/// Frees a string (JSON text) returned by any call. `NULL` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn sr_string_free(text: *mut c_char) {
    if !text.is_null() {
        drop(CString::from_raw(text));
    }
}

/// Frees bytes returned by any call, with the length the call wrote. The pointer may be
/// non-NULL for 0 bytes: pass it here all the same. `NULL` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn sr_bytes_free(bytes: *mut u8, len: usize) {
    if !bytes.is_null() {
        drop(Box::from_raw(ptr::slice_from_raw_parts_mut(bytes, len)));
    }
}

fn boxed_error(error: &Error) -> *mut sr_error {
    let clean = |text: &str| CString::new(text.replace('\0', "\\0")).unwrap_or_default();
    Box::into_raw(Box::new(sr_error { code: clean(error.code()), message: clean(error.message()) }))
}

/// Runs one entry point: its error, or a caught panic, as an `sr_error *`.
pub(crate) fn guard(body: impl FnOnce() -> Res<()>) -> *mut sr_error {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(error)) => boxed_error(&error),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Box::into_raw(Box::new(sr_error {
                code: CString::new("internal").unwrap_or_default(),
                message: CString::new(format!("shardroute panicked (a bug): {what}").replace('\0', ""))
                    .unwrap_or_default(),
            }))
        }
    }
}

pub(crate) fn argument(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidArgument, message)
}

/// A borrowed buffer; `NULL` only with length 0.
pub(crate) unsafe fn bytes<'a>(data: *const u8, len: usize, what: &str, kind: ErrorKind) -> Res<&'a [u8]> {
    if data.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(Error::new(kind, format!("{what} is NULL with length {len}"))) };
    }
    Ok(std::slice::from_raw_parts(data, len))
}

/// A borrowed UTF-8 text; `NULL` only with length 0; invalid UTF-8 is `kind`.
pub(crate) unsafe fn text<'a>(data: *const c_char, len: usize, what: &str, kind: ErrorKind) -> Res<&'a str> {
    let raw = bytes(data.cast(), len, what, kind)?;
    std::str::from_utf8(raw).map_err(|e| Error::new(kind, format!("{what} is not valid UTF-8: {e}")))
}

/// Text that is not a document or a key (addresses, names, lines).
pub(crate) unsafe fn arg_text<'a>(data: *const c_char, len: usize, what: &str) -> Res<&'a str> {
    text(data, len, what, ErrorKind::InvalidArgument)
}

/// JSON data given as text (configs, replies, headers, source calls), read as the
/// JavaScript packages read theirs (`session::json_data`): `invalid_argument` when the
/// text is not UTF-8 or not JSON.
pub(crate) unsafe fn json_arg(data: *const c_char, len: usize, what: &str) -> Res<Value> {
    let text = arg_text(data, len, what)?;
    sr::session::json_data(text).map_err(|err| argument(format!("{what} is not JSON data: {err}")))
}

/// A handle argument.
pub(crate) unsafe fn handle<'a, T>(handle: *const T, what: &str) -> Res<&'a T> {
    handle.as_ref().ok_or_else(|| argument(format!("{what} is NULL")))
}

/// A mutable handle argument.
pub(crate) unsafe fn handle_mut<'a, T>(handle: *mut T, what: &str) -> Res<&'a mut T> {
    handle.as_mut().ok_or_else(|| argument(format!("{what} is NULL")))
}

/// An out-parameter: checked before any work, written after.
pub(crate) unsafe fn out<'a, T>(out: *mut T, what: &str) -> Res<&'a mut T> {
    out.as_mut().ok_or_else(|| argument(format!("the out-parameter {what} is NULL")))
}

pub(crate) unsafe fn key<'a>(key: *const sr_key) -> Res<Key<'a>> {
    let key = key.as_ref().ok_or_else(|| Error::new(ErrorKind::InvalidKey, "the key is NULL"))?;
    key_of(key)
}

pub(crate) unsafe fn key_of<'a>(key: &sr_key) -> Res<Key<'a>> {
    match key.kind {
        SR_KEY_BYTES => Ok(Key::Bytes(bytes(key.bytes, key.len, "a key", ErrorKind::InvalidKey)?)),
        SR_KEY_U64 => Ok(Key::U64(key.value)),
        other => {
            Err(Error::new(ErrorKind::InvalidKey, format!("a key's kind is {other}, not SR_KEY_BYTES or SR_KEY_U64")))
        }
    }
}

/// An optional key: `NULL` is `None`.
pub(crate) unsafe fn optional_key<'a>(pointer: *const sr_key) -> Res<Option<Key<'a>>> {
    if pointer.is_null() {
        Ok(None)
    } else {
        key(pointer).map(Some)
    }
}

/// A borrowed array of keys (`NULL` only with count 0).
pub(crate) unsafe fn keys<'a>(keys: *const sr_key, count: usize) -> Res<Vec<Key<'a>>> {
    array(keys, count, "keys")?.iter().map(|k| key_of(k)).collect()
}

pub(crate) unsafe fn array<'a, T>(items: *const T, count: usize, what: &str) -> Res<&'a [T]> {
    if items.is_null() {
        return if count == 0 { Ok(&[]) } else { Err(argument(format!("{what} is NULL with count {count}"))) };
    }
    Ok(std::slice::from_raw_parts(items, count))
}

pub(crate) unsafe fn texts<'a>(items: *const sr_str, count: usize, what: &str) -> Res<Vec<&'a str>> {
    array(items, count, what)?.iter().map(|t| arg_text(t.ptr, t.len, what)).collect()
}

/// NUL-terminated text for the caller to free with `sr_string_free`.
fn c_string(text: String) -> Res<*mut c_char> {
    Ok(CString::new(text).map_err(|_| argument("a returned text holds a NUL byte"))?.into_raw())
}

/// Writes JSON text for the caller to free with `sr_string_free` (an entry point with
/// more than one out-parameter; else `json_out`).
pub(crate) fn put_json(out: &mut *mut c_char, value: &Value) -> Res<()> {
    *out = c_string(value.to_string())?;
    Ok(())
}

// The shape of every entry point: `guard` around a body that checks the out-parameters
// first, then calls the core, then writes them (only on success). The `*_out` helpers
// below are that shape, one per kind of result, so an entry point is its core call.

/// An entry point writing `body`'s value to `*target` (`what`: its name when `NULL`).
pub(crate) unsafe fn value_out<T>(target: *mut T, what: &str, body: impl FnOnce() -> Res<T>) -> *mut sr_error {
    guard(|| {
        let slot = out(target, what)?;
        *slot = body()?;
        Ok(())
    })
}

/// An entry point writing a new handle to `*out_handle` (the caller frees it with its
/// `_free` function).
pub(crate) unsafe fn handle_out<T>(out_handle: *mut *mut T, body: impl FnOnce() -> Res<T>) -> *mut sr_error {
    value_out(out_handle, "out", || Ok(Box::into_raw(Box::new(body()?))))
}

/// An entry point writing text to `*out_text` (free with `sr_string_free`).
pub(crate) unsafe fn string_out(out_text: *mut *mut c_char, body: impl FnOnce() -> Res<String>) -> *mut sr_error {
    value_out(out_text, "out", || c_string(body()?))
}

/// An entry point writing JSON text to `*out_json` (free with `sr_string_free`).
pub(crate) unsafe fn json_out(out_json: *mut *mut c_char, body: impl FnOnce() -> Res<Value>) -> *mut sr_error {
    string_out(out_json, || Ok(body()?.to_string()))
}

/// An entry point writing bytes to `*out_bytes`/`*out_len` (free with `sr_bytes_free`).
pub(crate) unsafe fn bytes_out(
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
    body: impl FnOnce() -> Res<Vec<u8>>,
) -> *mut sr_error {
    guard(|| {
        let (target, target_len) = (out(out_bytes, "out")?, out(out_len, "out_len")?);
        let boxed = body()?.into_boxed_slice();
        *target_len = boxed.len();
        *target = Box::into_raw(boxed).cast();
        Ok(())
    })
}

/// An entry point writing text borrowed from a handle or static data as a pointer and a
/// length (`names`: the two out-parameters' names). Never for text borrowed from an
/// argument: that is `put_span`.
pub(crate) unsafe fn borrowed_out<'a>(
    text: *mut *const c_char,
    text_len: *mut usize,
    names: (&str, &str),
    body: impl FnOnce() -> Res<&'a str>,
) -> *mut sr_error {
    guard(|| {
        let (text, text_len) = (out(text, names.0)?, out(text_len, names.1)?);
        let borrowed = body()?;
        *text = borrowed.as_ptr().cast();
        *text_len = borrowed.len();
        Ok(())
    })
}

/// An entry point writing an optional u64 as a flag (`*present`) and a value (`*value`,
/// named `what`; 0 when absent).
pub(crate) unsafe fn optional_out(
    present: *mut bool,
    value: *mut u64,
    what: &str,
    body: impl FnOnce() -> Res<Option<u64>>,
) -> *mut sr_error {
    guard(|| {
        let (present, value) = (out(present, "present")?, out(value, what)?);
        let optional = body()?;
        *present = optional.is_some();
        *value = optional.unwrap_or(0);
        Ok(())
    })
}

/// Writes where `part` lies in the argument `whole` as an offset and a length, so that
/// the caller reads it from its own buffer (the copy a binding passed may be gone). A
/// `part` outside `whole` is a bug: it panics, which `guard` answers as `internal`.
pub(crate) fn put_span(out_offset: &mut usize, out_len: &mut usize, whole: &str, part: &str) {
    let offset = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    assert!(offset <= whole.len() && part.len() <= whole.len() - offset, "a result is not inside its argument");
    *out_offset = offset;
    *out_len = part.len();
}

/// A handle's `_free`: drops the box; `NULL` is a no-op.
pub(crate) unsafe fn free_box<T>(pointer: *mut T) {
    if !pointer.is_null() {
        drop(Box::from_raw(pointer));
    }
}

/// A key as the vectors and the other bindings' JSON write it: `{"u64": "42"}` or
/// `{"hex": "00ff"}`.
pub(crate) fn key_value(key: &sr::OwnedKey) -> Value {
    match key {
        sr::OwnedKey::U64(value) => serde_json::json!({ "u64": value.to_string() }),
        sr::OwnedKey::Bytes(bytes) => {
            serde_json::json!({ "hex": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() })
        }
    }
}

thread_local! {
    /// The batch calls' shards before they are copied out: reused, so a batch allocates
    /// nothing once a thread has routed its largest batch.
    pub(crate) static SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Parses a decimal u64 the way every binding reads one (`key::parse_u64`:
/// `invalid_key` for a sign, a fraction or a value past 2^64 - 1).
#[no_mangle]
pub unsafe extern "C" fn sr_parse_u64(text_ptr: *const c_char, text_len: usize, value: *mut u64) -> *mut sr_error {
    value_out(value, "value", || sr::key::parse_u64(text(text_ptr, text_len, "the integer", ErrorKind::InvalidKey)?))
}

/// Converts UTF-16 code units to UTF-8 bytes (`key::utf8_from_utf16`): a lone surrogate
/// is `invalid_key`. `*out`/`*out_len` receive bytes the caller frees with
/// `sr_bytes_free(*out, *out_len)`. `units` is borrowed for the call.
#[no_mangle]
pub unsafe extern "C" fn sr_utf8_from_utf16(
    units: *const u16,
    count: usize,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> *mut sr_error {
    bytes_out(out_bytes, out_len, || Ok(sr::key::utf8_from_utf16(array(units, count, "units")?)?.into_bytes()))
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn code(error: *mut sr_error) -> String {
        // SAFETY: an error from `guard`, read then freed once.
        unsafe {
            let code = CStr::from_ptr(sr_error_code(error)).to_str().unwrap().to_string();
            assert!(!CStr::from_ptr(sr_error_message(error)).to_bytes().is_empty());
            sr_error_free(error);
            code
        }
    }

    #[test]
    fn a_panic_comes_back_as_an_internal_error() {
        let error = guard(|| panic!("boom"));
        assert!(!error.is_null());
        // SAFETY: the error just returned.
        let message = unsafe { CStr::from_ptr(sr_error_message(error)).to_str().unwrap().to_string() };
        assert!(message.contains("boom"), "{message}");
        assert_eq!(code(error), "internal");
    }

    #[test]
    fn core_errors_keep_their_code_and_null_is_invalid_argument() {
        let mut router = ptr::null_mut();
        // SAFETY: valid text and out-parameter; then a NULL out-parameter on purpose.
        unsafe {
            assert_eq!(code(sr_router_new(b"{}".as_ptr().cast(), 2, &mut router)), "invalid_topology");
            assert_eq!(code(sr_router_new(b"{}".as_ptr().cast(), 2, ptr::null_mut())), "invalid_argument");
            assert_eq!(code(sr_router_new(b"\xff".as_ptr().cast(), 1, &mut router)), "invalid_topology");
        }
        assert!(router.is_null(), "an out-parameter is written only on success");
    }

    /// Counts this thread's allocations, for the hot path's allocation-free promise.
    struct Counting;

    thread_local! {
        static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    // SAFETY: forwards to the system allocator; only counts.
    unsafe impl std::alloc::GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
            let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
            std::alloc::System.alloc(layout)
        }
        unsafe fn dealloc(&self, pointer: *mut u8, layout: std::alloc::Layout) {
            std::alloc::System.dealloc(pointer, layout)
        }
    }

    #[global_allocator]
    static ALLOCATOR: Counting = Counting;

    #[test]
    fn the_hot_path_allocates_nothing() {
        let document = br#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}],
            "strategy": {"type": "jump"}}"#;
        let mut router = ptr::null_mut();
        let (data, offsets) = (b"user:1user:22", [0u32, 6, 13]);
        let mut shards = [0u32; 2];
        let (mut shard, mut node, mut node_len) = (0u32, ptr::null(), 0usize);
        // SAFETY: valid buffers and out-parameters throughout; the router freed once.
        unsafe {
            assert!(sr_router_new(document.as_ptr().cast(), document.len(), &mut router).is_null());
            let mut warm = |router| {
                sr_router_route_packed(router, data.as_ptr(), data.len(), offsets.as_ptr(), 3, shards.as_mut_ptr(), 2)
            };
            assert!(warm(router).is_null());
            let before = ALLOCATIONS.with(|count| count.get());
            for _ in 0..100 {
                assert!(sr_router_route(router, b"user:1".as_ptr(), 6, &mut shard).is_null());
                assert!(sr_router_route_u64(router, 42, &mut shard).is_null());
                assert!(sr_router_node(router, b"user:1".as_ptr(), 6, &mut node, &mut node_len).is_null());
                assert!(sr_router_node_u64(router, 42, &mut node, &mut node_len).is_null());
                assert!(warm(router).is_null());
            }
            assert_eq!(ALLOCATIONS.with(|count| count.get()) - before, 0, "the hot path allocated");
            sr_router_free(router);
        }
    }

    /// `sr_router_ask` answers where the address lies in its argument, not a pointer into
    /// it: the argument here is a copy dropped right after the call (as JNA's is).
    #[test]
    fn ask_answers_an_offset_into_its_argument() {
        let document = br#"{"format": "shardroute/1", "epoch": 5, "nodes": [{"id": "m1", "address": "127.0.0.1:7001"}],
            "strategy": {"type": "redis_cluster", "slots": [{"start": 0, "end": 16383, "nodes": ["m1"]}]}}"#;
        let address = "127.0.0.1:7003";
        let mut router = ptr::null_mut();
        let (mut offset, mut len) = (usize::MAX, usize::MAX);
        // SAFETY: valid buffers and out-parameters; the router freed once.
        unsafe {
            assert!(sr_router_new(document.as_ptr().cast(), document.len(), &mut router).is_null());
            let copy = address.as_bytes().to_vec();
            assert!(sr_router_ask(router, 1, copy.as_ptr().cast(), copy.len(), &mut offset, &mut len).is_null());
            drop(copy);
            assert_eq!(
                code(sr_router_ask(router, 1, address.as_ptr().cast(), address.len(), ptr::null_mut(), &mut len)),
                "invalid_argument"
            );
            sr_router_free(router);
        }
        assert_eq!((offset, len), (0, address.len()), "an offset and a length into the argument");
        assert_eq!(&address[offset..offset + len], "127.0.0.1:7003");
    }

    #[test]
    fn put_span_refuses_a_part_outside_its_argument() {
        let whole = String::from("127.0.0.1:7003");
        let elsewhere = String::from("127.0.0.1:7003");
        let error = guard(|| {
            put_span(&mut 0, &mut 0, &whole, &elsewhere);
            Ok(())
        });
        assert_eq!(code(error), "internal");
        let (mut offset, mut len) = (0, 0);
        put_span(&mut offset, &mut len, &whole, &whole[10..]);
        assert_eq!((offset, len), (10, 4));
    }

    #[test]
    fn the_version_is_the_workspace_version() {
        // SAFETY: a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(sr_version()) }.to_str().unwrap();
        assert_eq!(version, env!("CARGO_PKG_VERSION"));
    }
}
