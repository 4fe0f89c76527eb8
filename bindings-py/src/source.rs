//! `shardroute.SourceSession`: a shell over core's sans-IO source sessions
//! ([`sr::session::source`]: etcd through its JSON gateway, an HTTP endpoint polled with
//! `If-None-Match`, ZooKeeper over TCP). Converts arguments and actions; every decision is
//! the core's.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyMapping, PyMemoryView};
use shardroute as sr;
use sr::session as ss;

use crate::errors;
use crate::json::{data_value, value_to_py};
use crate::key::{str_from_py, type_name};
use crate::router::Router;

/// A topology source as a protocol, without I/O (sans-IO, like ClusterSession): etcd
/// (config {"source": "etcd", "members": [...], "key": ..., ...}) or an HTTP endpoint
/// ({"source": "http", "url": ..., ...}) or ZooKeeper ({"source": "zookeeper", "members":
/// [...], "path": ..., ...}). The shell performs the actions the session returns (a list
/// of dicts, each with one key: "request", "connect", "send", "cancel", "offered", "lost",
/// "done" or "failed"), hands back what its transport saw (response, opened, chunk,
/// failed), keeps one timer at deadline and calls timer when it passes. Every time is the
/// shell's monotonic clock in milliseconds; revisions and epochs are decimal strings.
///
/// SourceSession(config): config a mapping (config gives every field, defaults filled).
///
/// Raises InvalidArgumentError for a config the core refuses.
#[pyclass(module = "shardroute")]
pub struct SourceSession {
    inner: ss::SourceSession,
    /// The `Router` the `router` property gave last, by epoch: a router of one epoch is
    /// one document (a follower installs only newer epochs), so it is wrapped once.
    router: Option<(u64, Py<Router>)>,
}

/// A time or an id: an `int` in `0..2**64` (`invalid_argument` otherwise).
fn int(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
        if let Ok(number) = value.extract::<u64>() {
            return Ok(number);
        }
    }
    Err(errors::new(
        sr::ErrorKind::InvalidArgument,
        format!("{what} must be an int in 0..2**64, not {}", describe(value)),
    ))
}

/// An out-of-range `int` by its side, anything else by its type.
fn describe(value: &Bound<'_, PyAny>) -> String {
    if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
        return if value.lt(0).unwrap_or(false) {
            "a negative int".to_owned()
        } else {
            "an int above 2**64-1".to_owned()
        };
    }
    type_name(value)
}

/// A mapping argument (config, op, headers) as a JSON value, by the JavaScript packages'
/// rules ([`data_value`]); a `Mapping` that is not a `dict` is copied into one first.
fn mapping_value(value: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    let py = value.py();
    if !value.is_instance_of::<PyMapping>() {
        return Err(errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("{what} must be a mapping, not {}", type_name(value)),
        ));
    }
    let dict = if value.is_instance_of::<PyDict>() {
        value.clone()
    } else {
        py.get_type::<PyDict>().call1((value,)).map_err(|err| {
            errors::convert(py, err, sr::ErrorKind::InvalidArgument, &format!("{what} cannot be read as a mapping"))
        })?
    };
    data_value(&dict, what, sr::ErrorKind::InvalidArgument)
}

/// Bytes handed in (a body, a chunk): `bytes` as it is, a `bytearray` or `memoryview`
/// copied once (`bytes(data)`, contiguous whatever the buffer's shape).
fn bytes_arg<'py>(data: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyBytes>> {
    let py = data.py();
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(bytes.clone());
    }
    if data.is_instance_of::<PyByteArray>() || data.is_instance_of::<PyMemoryView>() {
        return py
            .get_type::<PyBytes>()
            .call1((data,))
            .map_err(|err| errors::convert(py, err, sr::ErrorKind::InvalidArgument, what))?
            .cast_into::<PyBytes>()
            .map_err(PyErr::from);
    }
    Err(errors::new(
        sr::ErrorKind::InvalidArgument,
        format!("{what} must be bytes, bytearray or memoryview, not {}", type_name(data)),
    ))
}

/// The actions as Python data (a list of dicts), as `Action::to_value` writes them.
fn actions<'py>(py: Python<'py>, actions: &[ss::SourceAction]) -> PyResult<Bound<'py, PyAny>> {
    value_to_py(py, &ss::source::actions_value(actions))
}

#[pymethods]
impl SourceSession {
    #[new]
    fn new(config: &Bound<'_, PyAny>) -> PyResult<SourceSession> {
        let config = mapping_value(config, "config")?;
        let inner = ss::SourceSession::from_config(&config).map_err(errors::to_py)?;
        Ok(SourceSession { inner, router: None })
    }

    /// Starts following (the first read) at now_ms: the actions. A session with no key
    /// to follow (etcd calls only) returns none.
    fn start<'py>(&mut self, py: Python<'py>, now_ms: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let now = int(now_ms, "now_ms")?;
        actions(py, &self.inner.start(now))
    }

    /// Starts one call (op a mapping such as {"op": "get", "key": "k"}) at now_ms:
    /// SourceCall(call, actions), a named tuple of the call's number and the actions;
    /// its end is a "done" or "failed" action with that call id.
    ///
    /// Raises InvalidArgumentError for an op the session does not know or whose fields
    /// are wrong.
    fn call<'py>(
        &mut self,
        py: Python<'py>,
        op: &Bound<'py, PyAny>,
        now_ms: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let op = mapping_value(op, "op")?;
        let now = int(now_ms, "now_ms")?;
        let (call, list) = self.inner.call(&op, now).map_err(errors::to_py)?;
        crate::records::SOURCE_CALL.class(py)?.call1((call, actions(py, &list)?))
    }

    /// The answer to request id: its status (an int), its headers (a mapping of str to
    /// str, names in any case) and its body (bytes, bytearray or memoryview; a stream's:
    /// empty, its body follows in chunk()): the actions.
    #[pyo3(signature = (id, now_ms, status, headers, body))]
    fn response<'py>(
        &mut self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        now_ms: &Bound<'py, PyAny>,
        status: &Bound<'py, PyAny>,
        headers: &Bound<'py, PyAny>,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = int(id, "id")?;
        let now = int(now_ms, "now_ms")?;
        let status = match int(status, "status").map(u16::try_from) {
            Ok(Ok(status)) => status,
            Ok(Err(_)) => return Err(errors::new(sr::ErrorKind::InvalidArgument, "status is above 65535")),
            Err(err) => return Err(err),
        };
        let headers = mapping_value(headers, "headers")?;
        let body = bytes_arg(body, "body")?;
        actions(py, &self.inner.response(id, now, status, &headers, body.as_bytes()))
    }

    /// The next piece of stream id's body, or the next read of connection id (bytes,
    /// bytearray or memoryview), as it arrived: the actions.
    fn chunk<'py>(
        &mut self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        now_ms: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = int(id, "id")?;
        let now = int(now_ms, "now_ms")?;
        let data = bytes_arg(data, "data")?;
        actions(py, &self.inner.chunk(id, now, data.as_bytes()))
    }

    /// Connection id (a "connect" action's) is open: the actions (its first "send").
    /// An id the session did not give, or gave up on, is ignored.
    fn opened<'py>(
        &mut self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        now_ms: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = int(id, "id")?;
        let now = int(now_ms, "now_ms")?;
        actions(py, &self.inner.opened(id, now))
    }

    /// Request or connection id could not be completed: code is "unreachable", "closed"
    /// (a stream or a connection ended by its server) or "limit_exceeded"; message says
    /// what the transport saw.
    fn failed<'py>(
        &mut self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        now_ms: &Bound<'py, PyAny>,
        code: &Bound<'py, PyAny>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = int(id, "id")?;
        let now = int(now_ms, "now_ms")?;
        let code = str_from_py(code, "code")?;
        let message = str_from_py(message, "message")?;
        actions(py, &self.inner.failed(id, now, &code, &message))
    }

    /// The deadline passed (now_ms at or after it): the actions.
    fn timer<'py>(&mut self, py: Python<'py>, now_ms: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let now = int(now_ms, "now_ms")?;
        actions(py, &self.inner.timer(now))
    }

    /// Stops everything: the requests in flight cancelled, the calls failed; nothing more
    /// is asked for. The actions.
    fn close<'py>(&mut self, py: Python<'py>, now_ms: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let now = int(now_ms, "now_ms")?;
        actions(py, &self.inner.close(now))
    }

    /// The one time to call timer() at (an int on the shell's clock), or None: read it
    /// again after every call.
    #[getter]
    fn deadline(&self) -> Option<u64> {
        self.inner.deadline()
    }

    /// The session's state (revision, epoch, stats, and each kind's own fields), a dict.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.state())
    }

    /// The counters (the follower's and the session's), a dict: state["stats"].
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.inner.state();
        value_to_py(py, state.get("stats").unwrap_or(&serde_json::Value::Null))
    }

    /// The config in force, every field (defaults filled in), a dict.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.config())
    }

    /// The follower's current router, or None (before the first install, or a session
    /// that only makes calls).
    #[getter]
    fn router(&mut self, py: Python<'_>) -> PyResult<Option<Py<Router>>> {
        Router::cached(py, &mut self.router, self.inner.follower().and_then(ss::Follower::router))
    }

    fn __repr__(&self) -> String {
        let config = self.inner.config();
        let kind = config.get("source").and_then(serde_json::Value::as_str).unwrap_or("?");
        format!("SourceSession({kind})")
    }
}
