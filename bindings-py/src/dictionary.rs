//! `shardroute.encode_dictionary` and `shardroute.decode_dictionary`: shells over
//! [`sr::dictionary::encode`] and [`sr::dictionary::decode`], the vbucket dictionary's
//! compact binary form.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};
use shardroute as sr;

use crate::errors;
use crate::json::document_text;
use crate::key::type_name;

/// The compact binary form of a vbucket dictionary (docs/dictionary-format.md), as
/// bytes: what edge workers and caches keep. decode_dictionary reads it back.
///
/// topology is a document as for Router (JSON text or a mapping) whose strategy is
/// vbucket.
///
/// Raises InvalidTopologyError for a malformed document, InvalidArgumentError when its
/// strategy is not vbucket or a node id, address or zone exceeds 65,534 bytes.
#[pyfunction]
pub fn encode_dictionary<'py>(topology: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let py = topology.py();
    let topology = sr::Topology::from_json(&document_text(topology, "topology")?).map_err(errors::to_py)?;
    let bytes = sr::dictionary::encode(&topology).map_err(errors::to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The topology in a binary dictionary (bytes, bytearray or memoryview, as
/// encode_dictionary writes it), as canonical JSON text: the same text as
/// Router(...).to_json() of the encoded document. It is validated exactly as a JSON
/// document, checksum included.
///
/// Raises InvalidTopologyError for bad magic, an unknown version, a checksum mismatch,
/// truncated or trailing bytes, or content that is not a valid topology;
/// LimitExceededError past the documented limits; InvalidArgumentError for a value that
/// is not bytes-like (as the JavaScript packages for a value that is not a Uint8Array).
#[pyfunction]
pub fn decode_dictionary(data: &Bound<'_, PyAny>) -> PyResult<String> {
    let bytes = dictionary_bytes(data)?;
    let topology = sr::dictionary::decode(bytes.as_bytes()).map_err(errors::to_py)?;
    Ok(topology.to_json())
}

/// A binary dictionary argument's bytes: `bytes` itself, or a copy of a `bytearray` or
/// `memoryview`; `invalid_argument` for anything else.
pub fn dictionary_bytes<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let py = data.py();
    let bytes = if let Ok(bytes) = data.cast::<PyBytes>() {
        bytes.clone()
    } else if data.is_instance_of::<PyByteArray>() || data.is_instance_of::<PyMemoryView>() {
        // `bytes(data)`: a copy, contiguous whatever the buffer's shape; it fails only
        // for a released memoryview.
        py.get_type::<PyBytes>()
            .call1((data,))
            .map_err(|err| errors::convert(py, err, sr::ErrorKind::InvalidArgument, "binary dictionary"))?
            .cast_into::<PyBytes>()?
    } else {
        return Err(errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("a binary dictionary must be bytes, bytearray or memoryview, not {}", type_name(data)),
        ));
    };
    Ok(bytes)
}
