//! `shardroute.service`'s native part: a shell over [`sr::service`], the routing
//! service's sans-IO core (`GET /route?key=...`, `POST /route`). It converts the request's
//! parts and hands back the answer's; every decision (the query, the batch, the keys, the
//! limits, the status, the JSON) is the core's. Registered as the private submodule
//! `shardroute._native._service` (no name of the top-level `shardroute`);
//! `python/shardroute/service.py` is its public face.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyModule};
use shardroute as sr;

use crate::router::Router;

/// What an answer is handed back as: `(status, [(header, value), ...], body)`.
type Answer<'py> = (u16, Vec<(&'static str, String)>, Bound<'py, PyBytes>);

fn to_py(py: Python<'_>, response: sr::service::Response) -> Answer<'_> {
    (response.status, response.headers, PyBytes::new(py, &response.body))
}

/// The routing service of one router: `RoutingService(router)`, its `etag`, and
/// `answer(method, target, if_none_match, body)`.
#[pyclass(module = "shardroute._native._service", frozen)]
pub struct RoutingService {
    inner: sr::service::Service,
}

#[pymethods]
impl RoutingService {
    #[new]
    fn new(router: PyRef<'_, Router>) -> RoutingService {
        RoutingService { inner: sr::service::Service::new(router.inner.clone()) }
    }

    /// The strong ETag of every answer of this document, quoted.
    #[getter]
    fn etag(&self) -> &str {
        self.inner.etag()
    }

    /// The epoch of the router answered from.
    #[getter]
    fn epoch(&self) -> u64 {
        self.inner.router().epoch()
    }

    /// The answer to one request: `(status, headers, body)`.
    #[pyo3(signature = (method, target, if_none_match, body))]
    fn answer<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        target: &str,
        if_none_match: Option<&str>,
        body: &[u8],
    ) -> Answer<'py> {
        let request = sr::service::Request { method, target, if_none_match, body };
        // The core's work runs without the GIL: a batch is up to 10,000 keys.
        let response = py.detach(|| self.inner.answer(&request));
        to_py(py, response)
    }
}

/// Whether the path of `target` is the service's (`/route`).
#[pyfunction]
fn handles(target: &str) -> bool {
    sr::service::handles(target)
}

/// The `413` answer of a body of `length` bytes, past `MAX_SERVICE_BODY_BYTES`.
#[pyfunction]
fn body_too_large(py: Python<'_>, length: u64) -> Answer<'_> {
    to_py(py, sr::service::body_too_large(length))
}

/// The `503` answer before there is a router.
#[pyfunction]
fn unavailable(py: Python<'_>) -> Answer<'_> {
    to_py(py, sr::service::unavailable())
}

/// Adds the private submodule `_service` to `shardroute._native` (set as an attribute, so
/// that `from shardroute._native import *` does not take it).
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let service = PyModule::new(py, "_service")?;
    service.add("MAX_SERVICE_BODY_BYTES", sr::limits::MAX_SERVICE_BODY_BYTES)?;
    service.add("MAX_SERVICE_KEYS", sr::limits::MAX_SERVICE_KEYS)?;
    service.add("BODY_TIMEOUT_MS", sr::service::BODY_TIMEOUT_MS)?;
    service.add("PATH", sr::service::PATH)?;
    service.add_class::<RoutingService>()?;
    service.add_function(wrap_pyfunction!(handles, &service)?)?;
    service.add_function(wrap_pyfunction!(body_too_large, &service)?)?;
    service.add_function(wrap_pyfunction!(unavailable, &service)?)?;
    module.setattr("_service", service)?;
    Ok(())
}
