//! The routing service's native part (`shardroute/service`): a shell over
//! [`sr::service`], the sans-IO core of `GET /route?key=...` and `POST /route`. It
//! converts a request's parts and hands back the answer's; every decision (the query, the
//! batch, the keys, the limits, the status, the JSON, the ETag) is the core's.
//! `service.js` is its public face.

use napi::bindgen_prelude::{Buffer, Uint8ArraySlice};
use napi::{Env, Unknown};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::Result;
use crate::router;

/// One answer: the status, the headers as `[name, value]` pairs (lower-case names; the
/// writer adds `content-length`) and the body.
#[napi(object)]
pub struct ServiceAnswer {
    pub status: u32,
    pub headers: Vec<Vec<String>>,
    pub body: Buffer,
}

impl From<sr::service::Response> for ServiceAnswer {
    fn from(response: sr::service::Response) -> ServiceAnswer {
        ServiceAnswer {
            status: u32::from(response.status),
            headers: response.headers.into_iter().map(|(name, value)| vec![name.to_string(), value]).collect(),
            body: response.body.into(),
        }
    }
}

/// The routing service of one router (a native `Router`; `service.js` unwraps the
/// public one), over a copy of it.
#[napi]
pub struct RoutingService {
    inner: sr::service::Service,
}

#[napi]
impl RoutingService {
    /// # Errors
    /// `invalid_argument` when `router` is not a `Router`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: &Env, router: Unknown) -> Result<Self> {
        let router = router::argument(env, router, "router")?;
        Ok(RoutingService { inner: sr::service::Service::new((*router.inner).clone()) })
    }

    /// The strong ETag of every answer of this document, quoted.
    #[napi(getter, catch_unwind)]
    pub fn etag(&self) -> String {
        self.inner.etag().to_string()
    }

    /// The answer to one request; `body` is what was read of it (bounded by the caller).
    #[napi(catch_unwind)]
    pub fn answer(
        &self,
        method: String,
        target: String,
        if_none_match: Option<String>,
        body: Option<Uint8ArraySlice>,
    ) -> ServiceAnswer {
        let body: &[u8] = body.as_ref().map_or(&[], |body| body.as_ref());
        let request =
            sr::service::Request { method: &method, target: &target, if_none_match: if_none_match.as_deref(), body };
        self.inner.answer(&request).into()
    }
}

/// Whether the path of `target` is the service's (`/route`).
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn service_handles(target: String) -> bool {
    sr::service::handles(&target)
}

/// The `413` answer of a body of `length` bytes, past `MAX_SERVICE_BODY_BYTES`.
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn service_body_too_large(length: f64) -> ServiceAnswer {
    // A JavaScript length: a non-negative integer, exact below 2^53.
    sr::service::body_too_large(if length.is_finite() && length > 0.0 { length as u64 } else { 0 }).into()
}

/// The `408` answer of a body that did not arrive within `BODY_TIMEOUT_MS` of the head.
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn service_body_timed_out() -> ServiceAnswer {
    sr::service::body_timed_out().into()
}

/// The `503` answer before there is a router.
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn service_unavailable() -> ServiceAnswer {
    sr::service::unavailable().into()
}

/// The core's service constants: `MAX_SERVICE_BODY_BYTES`, `MAX_SERVICE_KEYS`,
/// `BODY_TIMEOUT_MS`, each exact in a JavaScript number.
#[napi(catch_unwind)]
#[cfg_attr(test, allow(dead_code))]
pub fn service_limits() -> Vec<u32> {
    const { assert!(sr::limits::MAX_SERVICE_BODY_BYTES <= u32::MAX as u64) };
    const { assert!(sr::service::BODY_TIMEOUT_MS <= u32::MAX as u64) };
    vec![sr::limits::MAX_SERVICE_BODY_BYTES as u32, sr::limits::MAX_SERVICE_KEYS, sr::service::BODY_TIMEOUT_MS as u32]
}
