//! The vbucket dictionary's binary form ([`sr::dictionary`]): [`encode_dictionary`]
//! and [`decode_dictionary`].

use napi::bindgen_prelude::{TypedArray, TypedArrayType, Uint8Array, Uint8ArraySlice};
use napi::{JsValue, Unknown, ValueType};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{self, Result, Throw};
use crate::key;

/// The compact binary form of a vbucket dictionary (a topology document's JSON text;
/// `index.js` serializes objects), as a `Uint8Array`: [`sr::dictionary::encode`].
///
/// # Errors
/// The topology's errors as for `Router`; `invalid_argument` for a strategy other than
/// `vbucket`, or ids, addresses or zones too long for the binary form.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn encode_dictionary(topology: Unknown) -> Result<Uint8Array> {
    let text = crate::document_text(topology, "topology", sr::ErrorKind::InvalidTopology)?;
    let topology = sr::Topology::from_json(&text).or_throw()?;
    Ok(Uint8Array::new(sr::dictionary::encode(&topology).or_throw()?))
}

/// Decodes the binary form (a `Uint8Array`, a `Buffer` too) back into a topology,
/// validated as a JSON document is, and returns its canonical JSON text:
/// [`sr::dictionary::decode`], then [`sr::Topology::to_json`].
///
/// # Errors
/// `invalid_argument` for a value that is not a `Uint8Array`; `invalid_topology` for
/// damaged bytes (bad magic or version, checksum mismatch, truncated or trailing bytes,
/// content that is not a valid topology); `limit_exceeded` past the documented limits.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn decode_dictionary(bytes: Unknown) -> Result<String> {
    let bytes = uint8_array(bytes)?;
    Ok(sr::dictionary::decode(&bytes).or_throw()?.to_json())
}

/// Reads a `Uint8Array` argument, borrowing its bytes for the call.
///
/// # Errors
/// `invalid_argument` for any other value, other typed arrays included.
fn uint8_array(value: Unknown<'_>) -> Result<Uint8ArraySlice<'_>> {
    let kind = value.get_type().or_throw()?;
    if kind == ValueType::Object && value.is_typedarray().or_throw()? {
        // SAFETY: `is_typedarray` said this is a typed array.
        let view: TypedArray = unsafe { value.cast() }.or_throw()?;
        if view.typed_array_type == TypedArrayType::Uint8 {
            // SAFETY: a typed array of element type Uint8.
            return unsafe { value.cast() }.or_throw();
        }
    }
    Err(errors::new(
        sr::ErrorKind::InvalidArgument,
        format!("the binary dictionary must be a Uint8Array, got {}", key::describe(value, kind)?),
    ))
}
