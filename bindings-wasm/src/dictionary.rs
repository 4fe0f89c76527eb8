//! The vbucket dictionary's compact binary form: the core's [`sr::dictionary::encode`] and
//! [`sr::dictionary::decode`] (format: `docs/dictionary-format.md`). The route build (without
//! the `full-api` feature) decodes only.

use alloc::string::String;
#[cfg(feature = "full-api")]
use alloc::vec::Vec;

use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key;
#[cfg(feature = "full-api")]
use crate::topology;

/// The binary form of a `vbucket` topology document (JSON text or an object, as for
/// `new Router`), as a `Uint8Array`.
///
/// Throws as `new Router` does for the document, and `invalid_argument` when its strategy
/// is not `vbucket` or a node id, address or zone exceeds 65,534 bytes.
#[cfg(feature = "full-api")]
#[wasm_bindgen(js_name = encodeDictionary)]
pub fn encode_dictionary(topology: &JsValue) -> Result<Vec<u8>> {
    let topology = sr::Topology::from_json(&topology::json_text(topology, "topology")?)?;
    Ok(sr::dictionary::encode(&topology)?)
}

/// Decodes the binary form (a `Uint8Array`, or a `Buffer`) into the canonical JSON text of
/// its topology document, validated as `new Router` validates a document.
///
/// Throws `invalid_topology` for damaged bytes (bad magic, unknown version, checksum
/// mismatch, truncated or trailing bytes) or content that is not a valid topology,
/// `limit_exceeded` past the documented limits, and `invalid_argument` when `bytes` is not
/// a readable `Uint8Array`.
#[wasm_bindgen(js_name = decodeDictionary)]
pub fn decode_dictionary(bytes: &JsValue) -> Result<String> {
    let bytes = key::bytes_from_js(bytes, "bytes")?;
    Ok(sr::dictionary::decode(&bytes)?.to_json())
}
