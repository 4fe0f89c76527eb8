//! JSON documents (a topology, a hashing spec, an operation) passed as text or as
//! parsed Python data, and JSON results returned as Python data.
//!
//! A `str` is the JSON text itself. A `Mapping` (a `dict` from `json.load`, usually) is
//! serialized with `json.dumps(..., allow_nan=False)` and parsed by core like any text,
//! the same path the JavaScript bindings take with `JSON.stringify`. Anything else, or a
//! mapping `json.dumps` cannot serialize (a NaN, a set, a nested non-dict mapping), is
//! `invalid_topology`, core's code for a malformed document (`invalid_argument` for an
//! operation, core's code for a malformed operation). A result (`apply`'s) is its JSON
//! text read back with `json.loads`.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyMapping, PyString};
use shardroute as sr;

use crate::errors;
use crate::key::type_name;

static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The JSON text of a document argument; `what` names it in errors ("topology").
///
/// # Errors
/// `invalid_topology` for a value that is neither `str` nor a serializable `Mapping`,
/// and for a `str` with lone surrogates (it has no UTF-8 encoding).
pub fn document_text(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    json_text(value, what, sr::ErrorKind::InvalidTopology)
}

/// As [`document_text`], with `kind` as the error code of a malformed value.
pub fn json_text(value: &Bound<'_, PyAny>, what: &str, kind: sr::ErrorKind) -> PyResult<String> {
    let py = value.py();
    let text = if let Ok(text) = value.cast::<PyString>() {
        text.clone()
    } else if value.is_instance_of::<PyMapping>() {
        let not_serializable = |err| errors::convert(py, err, kind, &format!("{what} is not JSON-serializable"));
        // `json.dumps` takes dicts only; any other mapping is copied into one.
        let dict = if value.is_instance_of::<PyDict>() {
            value.clone()
        } else {
            py.get_type::<PyDict>().call1((value,)).map_err(not_serializable)?
        };
        let dumps = DUMPS.import(py, "json", "dumps")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item(intern!(py, "allow_nan"), false)?;
        kwargs.set_item(intern!(py, "ensure_ascii"), false)?;
        let dumped = dumps.call((dict,), Some(&kwargs)).map_err(not_serializable)?;
        dumped.cast_into::<PyString>()?
    } else {
        return Err(errors::new(
            kind,
            format!("{what} must be JSON text (str) or a mapping, not {}", type_name(value)),
        ));
    };
    match text.to_cow() {
        Ok(text) => Ok(text.into_owned()),
        Err(err) => Err(errors::convert(py, err, kind, &format!("{what} is not valid Unicode"))),
    }
}

/// A JSON value from core as Python data (`dict`, `list`, `str`, `int`, `float`, `bool`,
/// `None`), through `json.loads` of its text: objects keep their field order and
/// integers stay exact.
pub fn value_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    let loads = LOADS.import(py, "json", "loads")?;
    loads.call1((value.to_string(),))
}
