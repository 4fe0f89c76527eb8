//! Errors: the one place where a core [`sr::Error`] becomes a Python exception.
//!
//! The classes are built once, from [`sr::ErrorKind::ALL`], so a kind added to the core
//! gets its class with no change here:
//!
//! * `ShardrouteError(ValueError)`, the base class every error of the package derives from;
//! * one subclass per kind, named from its code (`invalid_key` -> `InvalidKeyError`), with
//!   the code as a class attribute (`InvalidKeyError.code == "invalid_key"`).
//!
//! A raised error has `.code` (the stable string code, the contract) and `.message` (the
//! core's human-readable message, also `str(error)`).

use std::ffi::CString;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use shardroute as sr;

/// The module the classes claim to live in: the public package, not `shardroute._native`.
const MODULE: &str = "shardroute";
const BASE_NAME: &str = "ShardrouteError";

/// The base class's docstring, listing every code of `ErrorKind::ALL`.
fn base_doc() -> String {
    let codes: Vec<String> = sr::ErrorKind::ALL.iter().map(|kind| format!("{:?}", kind.code())).collect();
    format!(
        "Base class of every shardroute error (a ValueError).\n\n\
         `code` is the stable string code of the error's kind, the same in every language \
         ({}); `message` is the human-readable message, also `str(error)`. \
         Catch a subclass (`InvalidKeyError`, ...) or compare `code`.",
        codes.join(", ")
    )
}

/// The base class and one subclass per kind, in the order of `ErrorKind::ALL`.
struct Classes {
    base: Py<PyType>,
    kinds: Vec<(sr::ErrorKind, Py<PyType>)>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let base = new_class(py, BASE_NAME, &base_doc(), &py.get_type::<PyValueError>(), None)?;
        let kinds = sr::ErrorKind::ALL
            .iter()
            .map(|&kind| {
                let code = kind.code();
                let doc = format!("A shardroute error with code {code:?}.");
                let class = new_class(py, &class_name(code), &doc, base.bind(py), Some(code))?;
                Ok((kind, class))
            })
            .collect::<PyResult<_>>()?;
        Ok(Classes { base, kinds })
    })
}

fn new_class(
    py: Python<'_>,
    name: &str,
    doc: &str,
    base: &Bound<'_, PyType>,
    code: Option<&str>,
) -> PyResult<Py<PyType>> {
    let qualified = CString::new(format!("{MODULE}.{name}"))?;
    let doc = CString::new(doc)?;
    let class = PyErr::new_type(py, &qualified, Some(&doc), Some(base), None)?;
    // Set after creation, not through `new_type`'s `dict`: pyo3 0.27 drops its reference
    // to that dict before CPython reads it.
    if let Some(code) = code {
        class.bind(py).setattr("code", code)?;
    }
    Ok(class)
}

/// `invalid_key` -> `InvalidKeyError`.
fn class_name(code: &str) -> String {
    let mut name: String = code
        .split('_')
        .flat_map(|word| {
            let mut chars = word.chars();
            chars.next().map(|first| first.to_ascii_uppercase()).into_iter().chain(chars)
        })
        .collect();
    name.push_str("Error");
    name
}

/// Adds `ShardrouteError` and every kind's subclass to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let classes = classes(py)?;
    module.add(BASE_NAME, classes.base.bind(py))?;
    for (_, class) in &classes.kinds {
        let class = class.bind(py);
        module.add(class.name()?, class)?;
    }
    Ok(())
}

/// Converts a core error into the Python exception of its kind, with `.code` and `.message`.
///
/// Use as `.map_err(errors::to_py)`.
pub(crate) fn to_py(err: sr::Error) -> PyErr {
    Python::attach(|py| instantiate(py, &err).unwrap_or_else(|failure| failure))
}

fn instantiate(py: Python<'_>, err: &sr::Error) -> PyResult<PyErr> {
    let classes = classes(py)?;
    // `ErrorKind` is non-exhaustive and `ALL` lists every kind; the base class is only a
    // fallback for a kind that a future core adds to one but not the other.
    let class =
        classes.kinds.iter().find(|(kind, _)| *kind == err.kind()).map_or(&classes.base, |(_, class)| class).bind(py);
    let instance = class.call1((err.message(),))?;
    instance.setattr("code", err.code())?;
    instance.setattr("message", err.message())?;
    Ok(PyErr::from_value(instance))
}

/// An error of `kind` raised by the binding itself (an argument of the wrong type).
pub(crate) fn new(kind: sr::ErrorKind, message: impl Into<String>) -> PyErr {
    to_py(sr::Error::new(kind, message))
}

/// `err` raised for the key at `index` of a batch, with its message prefixed
/// `keys[index]: ` as the JavaScript packages name a bad key of an array
/// ([`sr::argument::at_index`]), its cause kept; an exception that is not a `ShardrouteError`
/// is returned unchanged.
pub(crate) fn at_index(py: Python<'_>, index: usize, err: PyErr) -> PyErr {
    let Ok(classes) = classes(py) else { return err };
    let value = err.value(py);
    if !value.is_instance(classes.base.bind(py)).unwrap_or(false) {
        return err;
    }
    let code = value.getattr("code").and_then(|code| code.extract::<String>());
    let message = value.getattr("message").and_then(|message| message.extract::<String>());
    let (Ok(code), Ok(message)) = (code, message) else { return err };
    let Some(kind) = sr::ErrorKind::ALL.into_iter().find(|kind| kind.code() == code) else { return err };
    let named = to_py(sr::argument::at_index(index, sr::Error::new(kind, message)));
    named.set_cause(py, err.cause(py));
    named
}

/// A Python exception met while converting an argument (`json.dumps` failing, a `str`
/// that cannot be encoded, a non-iterable), re-raised as an error of `kind` whose message
/// is `"{what}: {original}"`, with the original as `__cause__`. A `BaseException` that is
/// not an `Exception` (KeyboardInterrupt, SystemExit) propagates unchanged.
pub(crate) fn convert(py: Python<'_>, original: PyErr, kind: sr::ErrorKind, what: &str) -> PyErr {
    if !original.is_instance_of::<PyException>(py) {
        return original;
    }
    let err = new(kind, format!("{what}: {}", original.value(py)));
    err.set_cause(py, Some(original));
    err
}
