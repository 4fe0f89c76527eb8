//! The vbucket dictionary's binary form ([`sr::dictionary`]): [`encode_dictionary`]
//! and [`decode_dictionary`].

use napi::bindgen_prelude::{TypedArrayType, Uint8Array, Uint8ArraySlice};
use napi::Unknown;
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};
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
/// `invalid_argument` for a value that is not a readable `Uint8Array`; `invalid_topology` for
/// damaged bytes (bad magic or version, checksum mismatch, truncated or trailing bytes,
/// content that is not a valid topology); `limit_exceeded` past the documented limits.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn decode_dictionary(bytes: Unknown) -> Result<String> {
    let bytes: Uint8ArraySlice = key::typed_array(bytes, TypedArrayType::Uint8, "bytes")?;
    Ok(sr::dictionary::decode(&bytes).or_throw()?.to_json())
}
