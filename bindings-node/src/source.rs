//! [`SourceSession`]: the core's sans-IO source sessions ([`ss::source`]: etcd through its
//! JSON gateway, an HTTP endpoint polled with `If-None-Match`, ZooKeeper over TCP) for
//! JavaScript. Conversion
//! only, every decision is the core's; what the two JavaScript packages share of it (the
//! refusals the core does not word, the actions' JSON) is `bindings-js/source.rs`,
//! included as [`crate::js_source`].
//!
//! `index.js` wraps the native session as the public `SourceSession`: it serializes
//! `config`, `op` and `headers` (`documentToJson`), parses the JSON text of the actions,
//! `state`, `stats` and `config`, and wraps the native `router` as a public `Router`.
//!
//! The core state is in a `RefCell`, borrowed mutably only while the core runs, after
//! every argument was read.

use std::cell::{RefCell, RefMut};
use std::sync::Arc;

use napi::bindgen_prelude::{TypedArrayType, Uint8ArraySlice};
use napi::Unknown;
use napi_derive::napi;
use shardroute as sr;
use sr::session as ss;

use crate::errors::{self, Result, Throw};
use crate::js_source as shared;
use crate::key;
use crate::router::Router;
use crate::session::{milliseconds, unsigned};

/// A source session ([`ss::SourceSession`]); `index.js` wraps it as the public
/// `SourceSession`.
#[napi]
pub struct SourceSession {
    inner: RefCell<ss::SourceSession>,
}

#[napi]
impl SourceSession {
    /// The session `config` (JSON text from `index.js`) describes.
    ///
    /// # Errors
    /// `invalid_argument` for a config the core refuses ([`ss::SourceSession::from_config`]).
    #[napi(constructor, catch_unwind)]
    pub fn new(config: Unknown) -> Result<Self> {
        let config = crate::text_argument(config, "config")?;
        Ok(SourceSession { inner: RefCell::new(shared::session(&config).or_throw()?) })
    }

    /// Starts following at `nowMs`: the actions, as JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for a bad time.
    #[napi(catch_unwind)]
    pub fn start(&self, now_ms: Unknown) -> Result<String> {
        let now = milliseconds(now_ms)?;
        Ok(shared::actions(&self.session()?.start(now)).to_string())
    }

    /// Starts one call (`op`: JSON text from `index.js`) at `nowMs`: `{call, actions}` as
    /// JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for an op the session refuses, or a bad time.
    #[napi(catch_unwind)]
    pub fn call(&self, op: Unknown, now_ms: Unknown) -> Result<String> {
        let op = shared::data(&crate::text_argument(op, "op")?, "op").or_throw()?;
        let now = milliseconds(now_ms)?;
        let (call, actions) = self.session()?.call(&op, now).or_throw()?;
        Ok(shared::called(call, &actions).to_string())
    }

    /// The answer to request `id`: `status`, `headers` (JSON text from `index.js`) and
    /// `body` (a `Uint8Array`, read in place): the actions, as JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for a bad id, time, status, headers or body.
    #[napi(catch_unwind)]
    pub fn response(
        &self,
        id: Unknown,
        now_ms: Unknown,
        status: Unknown,
        headers: Unknown,
        body: Unknown,
    ) -> Result<String> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let status = shared::status(key::js_type(status)?).or_throw()?;
        let headers = shared::data(&crate::text_argument(headers, "headers")?, "headers").or_throw()?;
        let body: Uint8ArraySlice = key::typed_array(body, TypedArrayType::Uint8, "body")?;
        Ok(shared::actions(&self.session()?.response(id, now, status, &headers, &body)).to_string())
    }

    /// The next piece of stream `id`'s body (a `Uint8Array`, read in place): the actions,
    /// as JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for a bad id, time or data.
    #[napi(catch_unwind)]
    pub fn chunk(&self, id: Unknown, now_ms: Unknown, data: Unknown) -> Result<String> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let data: Uint8ArraySlice = key::typed_array(data, TypedArrayType::Uint8, "data")?;
        Ok(shared::actions(&self.session()?.chunk(id, now, &data)).to_string())
    }

    /// Connection `id` (a `connect` action's) is open: the actions, as JSON text. An id the
    /// session did not give, or gave up on, is ignored.
    ///
    /// # Errors
    /// `invalid_argument` for a bad id or time.
    #[napi(catch_unwind)]
    pub fn opened(&self, id: Unknown, now_ms: Unknown) -> Result<String> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        Ok(shared::actions(&self.session()?.opened(id, now)).to_string())
    }

    /// Request `id` could not be completed (`code`: `unreachable`, `closed`,
    /// `limit_exceeded`; `message`: what the transport saw): the actions, as JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for a bad id or time, or a code or message that is not text.
    #[napi(catch_unwind)]
    pub fn failed(&self, id: Unknown, now_ms: Unknown, code: Unknown, message: Unknown) -> Result<String> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let code = crate::text_argument(code, "code")?;
        let message = crate::text_argument(message, "message")?;
        Ok(shared::actions(&self.session()?.failed(id, now, &code, &message)).to_string())
    }

    /// The deadline passed: the actions, as JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for a bad time.
    #[napi(catch_unwind)]
    pub fn timer(&self, now_ms: Unknown) -> Result<String> {
        let now = milliseconds(now_ms)?;
        Ok(shared::actions(&self.session()?.timer(now)).to_string())
    }

    /// Stops everything: the actions, as JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for a bad time.
    #[napi(catch_unwind)]
    pub fn close(&self, now_ms: Unknown) -> Result<String> {
        let now = milliseconds(now_ms)?;
        Ok(shared::actions(&self.session()?.close(now)).to_string())
    }

    /// When to call `timer` (a number on the shell's clock), or `null`.
    #[napi(getter, catch_unwind)]
    pub fn deadline(&self) -> Result<Option<f64>> {
        Ok(shared::deadline(self.session()?.deadline()))
    }

    /// The session's state, as JSON text (`index.js` parses it).
    #[napi(getter, catch_unwind)]
    pub fn state(&self) -> Result<String> {
        Ok(self.session()?.state().to_string())
    }

    /// The counters (`state.stats`), as JSON text (`index.js` parses it).
    #[napi(getter, catch_unwind)]
    pub fn stats(&self) -> Result<String> {
        Ok(shared::stats(&self.session()?.state()).to_string())
    }

    /// The config in force (defaults filled in), as JSON text (`index.js` parses it).
    #[napi(getter, catch_unwind)]
    pub fn config(&self) -> Result<String> {
        Ok(self.session()?.config().to_string())
    }

    /// The follower's current router (`index.js` wraps it as a public `Router`), or `null`.
    #[napi(getter, catch_unwind)]
    pub fn router(&self) -> Result<Option<Router>> {
        let session = self.session()?;
        Ok(session.follower().and_then(ss::Follower::router).map(|router| Router { inner: Arc::new(router.clone()) }))
    }
}

impl SourceSession {
    /// The core session, borrowed for one call after its arguments were read.
    fn session(&self) -> Result<RefMut<'_, ss::SourceSession>> {
        self.inner.try_borrow_mut().map_err(|_| errors::from_core(shared::busy()))
    }
}

/// A request `id` argument ([`shared::id`]).
fn id_argument(value: Unknown<'_>) -> Result<u64> {
    unsigned(value, |got, bigint| shared::id(got, || bigint))
}
