//! `shardroute.TopologyFollower`: a shell over core's topology follower
//! ([`sr::session::follower`]). Converts arguments and results; every decision is the core's.

use pyo3::prelude::*;
use shardroute as sr;
use sr::session as ss;

use crate::dictionary::dictionary_bytes;
use crate::errors;
use crate::json::{document_text, value_to_py};
use crate::key::{type_name, u64_from_py};
use crate::router::Router;

/// What became of an offered document: kind is "installed" (epoch is the new router's),
/// "unchanged" (the held document again) or "refused" (code and message say why; the
/// follower keeps the router it had).
#[pyclass(module = "shardroute", frozen)]
pub struct Offered {
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    epoch: Option<u64>,
    #[pyo3(get)]
    code: Option<&'static str>,
    #[pyo3(get)]
    message: Option<String>,
}

impl Offered {
    fn from_core(offered: ss::Offered) -> Offered {
        match offered {
            ss::Offered::Installed { epoch } => {
                Offered { kind: "installed", epoch: Some(epoch), code: None, message: None }
            }
            ss::Offered::Unchanged => Offered { kind: "unchanged", epoch: None, code: None, message: None },
            ss::Offered::Refused(error) => Offered {
                kind: "refused",
                epoch: None,
                code: Some(error.code()),
                message: Some(error.message().to_string()),
            },
        }
    }
}

#[pymethods]
impl Offered {
    /// The ShardrouteError of a refusal (InvalidTopologyError, StaleEpochError, ...), to
    /// raise or to log; None for other kinds.
    fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let code = self.code?;
        let kind = sr::ErrorKind::ALL.into_iter().find(|kind| kind.code() == code)?;
        let message = self.message.clone().unwrap_or_default();
        Some(errors::to_py(sr::Error::new(kind, message)).into_value(py).into_any())
    }

    fn __repr__(&self) -> String {
        match (self.kind, self.epoch, self.code) {
            ("installed", Some(epoch), _) => format!("Offered(installed epoch {epoch})"),
            ("refused", _, Some(code)) => format!("Offered(refused {code})"),
            (kind, _, _) => format!("Offered({kind})"),
        }
    }
}

/// Follows a topology from a source (etcd, ZooKeeper, an HTTP endpoint), without I/O:
/// hand it every value the source shows, with the source's revision and the time; it
/// installs newer epochs, refuses and counts what it must not install (an invalid
/// document, a lower epoch, an older revision) while keeping the last good router, says
/// when to reconnect after the source is lost, and builds a publisher's
/// compare-and-swap write.
///
/// TopologyFollower(config=None): config a mapping of reconnect_first_ms and
/// reconnect_max_ms (follower_defaults()).
///
/// Raises InvalidArgumentError for an unknown config field or a value out of range.
#[pyclass(module = "shardroute")]
pub struct TopologyFollower {
    inner: ss::Follower,
}

fn now(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    u64_from_py(value, what).map_err(|_| {
        errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("{what} must be an int in 0..2**64, not {}", type_name(value)),
        )
    })
}

/// The follower's defaults as a dict (reconnect_first_ms, reconnect_max_ms).
#[pyfunction]
pub fn follower_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    value_to_py(py, &ss::FollowerConfig::default().to_value())
}

impl TopologyFollower {
    /// `offer` (the core's `offer_dictionary` or `offer_bytes`) of bytes from Python.
    fn offer_binary(
        &mut self,
        data: &Bound<'_, PyAny>,
        revision: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
        offer: fn(&mut ss::Follower, &[u8], u64, u64) -> ss::Offered,
    ) -> PyResult<Offered> {
        let revision = now(revision, "revision")?;
        let now = now(now_ms, "now_ms")?;
        let bytes = dictionary_bytes(data)?;
        Ok(Offered::from_core(offer(&mut self.inner, bytes.as_bytes(), revision, now)))
    }
}

#[pymethods]
impl TopologyFollower {
    #[new]
    #[pyo3(signature = (config = None))]
    fn new(config: Option<&Bound<'_, PyAny>>) -> PyResult<TopologyFollower> {
        let config = match config {
            Some(config) if !config.is_none() => {
                let text = crate::json::json_text(config, "config", sr::ErrorKind::InvalidArgument)?;
                let value: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|err| errors::new(sr::ErrorKind::InvalidArgument, format!("config: {err}")))?;
                ss::FollowerConfig::from_value(&value).map_err(errors::to_py)?
            }
            _ => ss::FollowerConfig::default(),
        };
        Ok(TopologyFollower { inner: ss::Follower::new(config) })
    }

    /// A document (JSON text or a mapping) from the source at revision (an int), seen at
    /// now_ms: an Offered.
    fn offer(
        &mut self,
        document: &Bound<'_, PyAny>,
        revision: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Offered> {
        let revision = now(revision, "revision")?;
        let now = now(now_ms, "now_ms")?;
        let text = document_text(document, "document")?;
        Ok(Offered::from_core(self.inner.offer(&text, revision, now)))
    }

    /// A binary dictionary (bytes, as encode_dictionary writes it) from the source.
    fn offer_dictionary(
        &mut self,
        data: &Bound<'_, PyAny>,
        revision: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Offered> {
        self.offer_binary(data, revision, now_ms, ss::Follower::offer_dictionary)
    }

    /// A value from a source of plain bytes: a binary dictionary when it starts with the
    /// dictionary's magic, otherwise JSON text that must be valid UTF-8.
    fn offer_bytes(
        &mut self,
        data: &Bound<'_, PyAny>,
        revision: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Offered> {
        self.offer_binary(data, revision, now_ms, ss::Follower::offer_bytes)
    }

    /// The source was lost at now_ms: when to reconnect (an int on the same clock).
    fn disconnected(&mut self, now_ms: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.inner.disconnected(now(now_ms, "now_ms")?))
    }

    /// The source answers again: the next loss waits the first backoff.
    fn connected(&mut self) {
        self.inner.connected();
    }

    /// When the shell must next act (its one timer): the reconnect time the last
    /// disconnected() gave, until connected(); None while connected.
    fn next_deadline(&self) -> Option<u64> {
        self.inner.next_deadline()
    }

    /// The compare-and-swap write of document (text or mapping): a dict with
    /// expected_revision (None: create), epoch and document (canonical JSON text).
    ///
    /// Raises InvalidTopologyError (or LimitExceededError, NoNodesError) for a document
    /// the follower would refuse, StaleEpochError unless its epoch is the held one + 1.
    fn publish<'py>(&self, document: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = document.py();
        let write = self.inner.publish(&document_text(document, "document")?).map_err(errors::to_py)?;
        value_to_py(
            py,
            &serde_json::json!({"expected_revision": write.expected_revision, "epoch": write.epoch, "document": write.document}),
        )
    }

    /// The router installed last, or None.
    #[getter]
    fn router(&self, py: Python<'_>) -> Option<Router> {
        self.inner.router().map(|router| Router::wrap(py, router.clone()))
    }

    /// The source revision of the document installed last, or None.
    #[getter]
    fn revision(&self) -> Option<u64> {
        self.inner.revision()
    }

    /// The counters: offered, installed, unchanged, disconnects, refused (code -> count).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.stats().to_value())
    }

    /// The settings in force.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.config().to_value())
    }

    fn __repr__(&self) -> String {
        match (self.inner.router(), self.inner.revision()) {
            (Some(router), Some(revision)) => {
                format!("<shardroute.TopologyFollower epoch={} revision={revision}>", router.epoch())
            }
            _ => "<shardroute.TopologyFollower no router yet>".to_string(),
        }
    }
}
