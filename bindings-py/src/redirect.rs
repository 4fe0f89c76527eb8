//! `shardroute.parse_redirect`: a shell over core's [`Redirect::parse`], Redis Cluster's
//! `MOVED` and `ASK` errors read into the package's `Redirect` named tuple.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use shardroute::strategy::compat::redis_cluster::redirect::Redirect;

use crate::errors;
use crate::key::str_from_py;

/// `shardroute.Redirect`, the `typing.NamedTuple` defined in the package's `__init__.py`
/// (imported on first use, when the package is fully imported).
static REDIRECT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Reads a Redis Cluster redirection error as a client receives it, e.g. "MOVED 3999
/// 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381" (a leading "-" of the raw RESP error
/// and surrounding white space are allowed): a Redirect named tuple (kind "MOVED" or
/// "ASK", slot, address). A MOVED updates the slot table: Router.moved(slot, address);
/// an ASK sends one command elsewhere: Router.ask(slot, address).
///
/// Raises InvalidArgumentError for any other line (another error, a slot outside
/// 0..16384, an address without a port) and for a line that is not a str.
#[pyfunction]
pub fn parse_redirect<'py>(line: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let redirect = Redirect::parse(&str_from_py(line, "line")?).map_err(errors::to_py)?;
    let class = REDIRECT.import(line.py(), "shardroute", "Redirect")?;
    class.call1((redirect.kind.as_str(), redirect.slot, redirect.address))
}
