//! `shardroute.hash_key`: a shell over [`sr::hash_key`] and [`sr::KeyHashing`].

use pyo3::prelude::*;
use shardroute as sr;

use crate::errors;
use crate::json::document_text;
use crate::key::Key;

/// The 64-bit hash of a key under a hashing spec, for users who bring their own
/// placement: the value a topology with that "hashing" section places.
///
/// hashing is the spec as JSON text or a mapping, e.g. {"function": "crc32"}; None
/// is the default (SipHash-2-4 with the seed 00..0f, integers as 8 little-endian bytes).
/// Returns an int in 0..2**64.
///
/// Raises InvalidKeyError for a value that is not a key, InvalidTopologyError for a
/// malformed spec.
#[pyfunction]
#[pyo3(signature = (key, hashing = None))]
pub fn hash_key(key: &Bound<'_, PyAny>, hashing: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    let spec = match hashing {
        None => sr::KeyHashing::default(),
        Some(spec) => sr::KeyHashing::from_json(&document_text(spec, "hashing")?).map_err(errors::to_py)?,
    };
    let key = Key::from_py(key)?;
    Ok(sr::hash_key(key.as_core(), &spec))
}
