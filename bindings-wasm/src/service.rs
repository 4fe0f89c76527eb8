//! The routing service's native part (`shardroute-wasm/service`): a shell over
//! [`sr::service`], the sans-IO core of `GET /route?key=...` and `POST /route`. It
//! converts a request's parts and the core's answer; the core decides every status,
//! header and byte (docs/routing-service.md). `service.mjs` is its public face, a `fetch`
//! handler for workers, Deno and browsers' service workers.

use alloc::string::String;
use alloc::vec::Vec;

use js_sys::{Array, Object, Uint8Array};
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key;
use crate::router::Router;
use crate::topology::record;

/// The routing service of one router: the answers `shardroute serve` gives, for the
/// document of the `Router` it was made from (a copy: that `Router` stays the caller's).
#[wasm_bindgen]
pub struct RoutingService {
    inner: sr::service::Service,
}

#[wasm_bindgen]
impl RoutingService {
    /// The service of `router`, a live `Router`.
    ///
    /// Throws `invalid_argument` when `router` is not a live `Router`.
    #[wasm_bindgen(constructor)]
    pub fn new(router: &JsValue) -> Result<RoutingService> {
        let router = Router::lend(router, "router", sr::Router::clone)?;
        Ok(RoutingService { inner: sr::service::Service::new(router) })
    }

    /// The strong ETag of every answer of this document, quoted.
    #[wasm_bindgen(getter)]
    pub fn etag(&self) -> String {
        self.inner.etag().into()
    }

    /// The answer to one request, `{status, headers: [[name, value], ...], body}` (`body` a
    /// `Uint8Array`); `body` is what was read of the request's body, at most
    /// `MAX_SERVICE_BODY_BYTES` (the shell bounds it before it buffers).
    ///
    /// Throws `invalid_argument` when `method`, `target` or `ifNoneMatch` (optional) is not
    /// a string of valid Unicode, or `body` (optional) not a `Uint8Array`.
    pub fn answer(
        &self,
        method: &JsValue,
        target: &JsValue,
        if_none_match: &JsValue,
        body: &JsValue,
    ) -> Result<Object> {
        let method = key::text_argument(method, "method")?;
        let target = key::text_argument(target, "target")?;
        let if_none_match = match if_none_match.is_null() || if_none_match.is_undefined() {
            true => None,
            false => Some(key::text_argument(if_none_match, "ifNoneMatch")?),
        };
        let body = match body.is_null() || body.is_undefined() {
            true => Vec::new(),
            false => key::bytes_from_js(body, "body")?,
        };
        let request = sr::service::Request {
            method: &method,
            target: &target,
            if_none_match: if_none_match.as_deref(),
            body: &body,
        };
        answer_of(self.inner.answer(&request))
    }

    /// Whether the path of `target` (path and query) is the service's (`/route`).
    ///
    /// Throws `invalid_argument` when `target` is not a string of valid Unicode.
    pub fn handles(target: &JsValue) -> Result<bool> {
        Ok(sr::service::handles(&key::text_argument(target, "target")?))
    }

    /// The `413` answer of a body of `length` bytes, past `MAX_SERVICE_BODY_BYTES`.
    ///
    /// Throws `invalid_argument` when `length` is not a number.
    #[wasm_bindgen(js_name = bodyTooLarge)]
    pub fn body_too_large(length: &JsValue) -> Result<Object> {
        let length = length
            .as_f64()
            .ok_or_else(|| sr::Error::new(sr::ErrorKind::InvalidArgument, "length must be a number of bytes"))?;
        // A JavaScript length: a non-negative integer, exact below 2^53.
        answer_of(sr::service::body_too_large(if length.is_finite() && length > 0.0 { length as u64 } else { 0 }))
    }

    /// The `408` answer of a body that did not arrive within `BODY_TIMEOUT_MS` of the head.
    #[wasm_bindgen(js_name = bodyTimedOut)]
    pub fn body_timed_out() -> Result<Object> {
        answer_of(sr::service::body_timed_out())
    }

    /// The `503` answer before there is a router.
    pub fn unavailable() -> Result<Object> {
        answer_of(sr::service::unavailable())
    }

    /// The core's service constants: `[MAX_SERVICE_BODY_BYTES, MAX_SERVICE_KEYS,
    /// BODY_TIMEOUT_MS]`, each exact in a JavaScript number.
    pub fn limits() -> Vec<u32> {
        const { assert!(sr::limits::MAX_SERVICE_BODY_BYTES <= u32::MAX as u64) };
        const { assert!(sr::service::BODY_TIMEOUT_MS <= u32::MAX as u64) };
        alloc::vec![
            sr::limits::MAX_SERVICE_BODY_BYTES as u32,
            sr::limits::MAX_SERVICE_KEYS,
            sr::service::BODY_TIMEOUT_MS as u32
        ]
    }
}

/// The JavaScript record of a core answer.
fn answer_of(response: sr::service::Response) -> Result<Object> {
    let headers = Array::new();
    for (name, value) in &response.headers {
        headers.push(&Array::of2(&JsValue::from_str(name), &JsValue::from_str(value)));
    }
    let body = Uint8Array::from(response.body.as_slice());
    Ok(record(&Array::of3(
        &Array::of2(&"status".into(), &response.status.into()),
        &Array::of2(&"headers".into(), &headers),
        &Array::of2(&"body".into(), &body),
    ))?)
}
