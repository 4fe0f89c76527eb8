//! `SourceSession`: the core's sans-IO source sessions ([`ss::source`]: etcd through its
//! JSON gateway, an HTTP endpoint polled with `If-None-Match`, ZooKeeper over TCP) as a
//! JavaScript class, the same shape as the Node addon's. Conversion only, every decision is
//! the core's; what the two JavaScript packages share of it (the refusals the core does not
//! word, the actions' JSON) is `bindings-js/source.rs`, included as [`crate::js_source`].
//!
//! The core state is in a `RefCell`, borrowed mutably only while the core runs, after
//! every argument was read: reading an argument may run JavaScript (a getter, a proxy
//! trap), which may call the session again.

use core::cell::RefCell;

use shardroute as sr;
use sr::session as ss;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::js_source as shared;
use crate::key::{self, milliseconds};
use crate::router::Router;
use crate::topology;

/// A topology source as a protocol, without I/O: etcd (`{source: "etcd", members, key,
/// ...}`), an HTTP endpoint (`{source: "http", url, ...}`) or ZooKeeper (`{source:
/// "zookeeper", members, path, ...}`). The shell performs the actions the session returns
/// (objects with one key: `request`, `connect`, `send`, `cancel`, `offered`, `lost`,
/// `done` or `failed`), hands back what its transport saw (`response`, `opened`, `chunk`,
/// `failed`), keeps one timer at `deadline` and calls `timer` when it passes. Times and
/// ids are numbers; revisions and epochs decimal strings.
#[wasm_bindgen]
pub struct SourceSession {
    inner: RefCell<ss::SourceSession>,
}

#[wasm_bindgen]
impl SourceSession {
    /// The session `config` describes.
    ///
    /// Throws `invalid_argument` for a config the core refuses.
    #[wasm_bindgen(constructor)]
    pub fn new(config: &JsValue) -> Result<SourceSession> {
        let config = topology::data_json(config, "config")?;
        Ok(SourceSession { inner: RefCell::new(shared::session(&config)?) })
    }

    /// Starts following at `nowMs`: the actions.
    ///
    /// Throws `invalid_argument` for a bad time.
    pub fn start(&self, now_ms: &JsValue) -> Result<JsValue> {
        let now = milliseconds(now_ms)?;
        let actions = self.with(|session| session.start(now))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// Starts one call (`op`, such as `{op: "get", key: "k"}`) at `nowMs`: `{call,
    /// actions}`; the call ends with a `done` or `failed` action of that number.
    ///
    /// Throws `invalid_argument` for an op the session refuses, or a bad time.
    pub fn call(&self, op: &JsValue, now_ms: &JsValue) -> Result<JsValue> {
        let op = shared::data(&topology::data_json(op, "op")?, "op")?;
        let now = milliseconds(now_ms)?;
        let (call, actions) = self.with(|session| session.call(&op, now))??;
        Ok(topology::value_to_js(&shared::called(call, &actions), "call")?)
    }

    /// The answer to request `id`: `status`, `headers` (an object of strings) and `body` (a
    /// `Uint8Array`; a stream's: empty, its body follows in `chunk`): the actions.
    ///
    /// Throws `invalid_argument` for a bad id, time, status, headers or body.
    pub fn response(
        &self,
        id: &JsValue,
        now_ms: &JsValue,
        status: &JsValue,
        headers: &JsValue,
        body: &JsValue,
    ) -> Result<JsValue> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let status = key::with_type(status, shared::status)?;
        let headers = shared::data(&topology::data_json(headers, "headers")?, "headers")?;
        let body = key::bytes_from_js(body, "body")?;
        let actions = self.with(|session| session.response(id, now, status, &headers, &body))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// The next piece of stream `id`'s body (a `Uint8Array`): the actions.
    ///
    /// Throws `invalid_argument` for a bad id, time or data.
    pub fn chunk(&self, id: &JsValue, now_ms: &JsValue, data: &JsValue) -> Result<JsValue> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let data = key::bytes_from_js(data, "data")?;
        let actions = self.with(|session| session.chunk(id, now, &data))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// Connection `id` (a `connect` action's) is open: the actions (its first `send`). An
    /// id the session did not give, or gave up on, is ignored.
    ///
    /// Throws `invalid_argument` for a bad id or time.
    pub fn opened(&self, id: &JsValue, now_ms: &JsValue) -> Result<JsValue> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let actions = self.with(|session| session.opened(id, now))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// Request `id` could not be completed (`code`: `unreachable`, `closed`,
    /// `limit_exceeded`; `message`: what the transport saw): the actions.
    ///
    /// Throws `invalid_argument` for a bad id or time, or a code or message that is not text.
    pub fn failed(&self, id: &JsValue, now_ms: &JsValue, code: &JsValue, message: &JsValue) -> Result<JsValue> {
        let id = id_argument(id)?;
        let now = milliseconds(now_ms)?;
        let code = key::text_argument(code, "code")?;
        let message = key::text_argument(message, "message")?;
        let actions = self.with(|session| session.failed(id, now, &code, &message))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// The deadline passed: the actions.
    ///
    /// Throws `invalid_argument` for a bad time.
    pub fn timer(&self, now_ms: &JsValue) -> Result<JsValue> {
        let now = milliseconds(now_ms)?;
        let actions = self.with(|session| session.timer(now))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// Stops everything (the requests cancelled, the calls failed): the actions.
    ///
    /// Throws `invalid_argument` for a bad time.
    pub fn close(&self, now_ms: &JsValue) -> Result<JsValue> {
        let now = milliseconds(now_ms)?;
        let actions = self.with(|session| session.close(now))?;
        Ok(topology::value_to_js(&shared::actions(&actions), "actions")?)
    }

    /// When to call `timer` (a number on the shell's clock), or `null`.
    #[wasm_bindgen(getter)]
    pub fn deadline(&self) -> Result<JsValue> {
        let deadline = self.with(|session| shared::deadline(session.deadline()))?;
        Ok(deadline.map_or(JsValue::NULL, JsValue::from_f64))
    }

    /// The session's state (`revision`, `epoch`, `stats`, and each kind's own fields).
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> Result<JsValue> {
        let state = self.with(|session| session.state())?;
        Ok(topology::value_to_js(&state, "state")?)
    }

    /// The counters (`state.stats`).
    #[wasm_bindgen(getter)]
    pub fn stats(&self) -> Result<JsValue> {
        let stats = self.with(|session| shared::stats(&session.state()))?;
        Ok(topology::value_to_js(&stats, "stats")?)
    }

    /// The config in force, every field (defaults filled in).
    #[wasm_bindgen(getter)]
    pub fn config(&self) -> Result<JsValue> {
        let config = self.with(|session| session.config())?;
        Ok(topology::value_to_js(&config, "config")?)
    }

    /// The follower's current router (a new object each time), or `null`.
    #[wasm_bindgen(getter)]
    pub fn router(&self) -> Result<JsValue> {
        Ok(match self.with(|session| session.follower().and_then(ss::Follower::router).cloned())? {
            Some(router) => Router::wrap(router).into(),
            None => JsValue::NULL,
        })
    }
}

impl SourceSession {
    /// `call` on the core session, borrowed for one call after its arguments were read.
    fn with<R>(&self, call: impl FnOnce(&mut ss::SourceSession) -> R) -> sr::Result<R> {
        Ok(call(&mut *self.inner.try_borrow_mut().map_err(|_| shared::busy())?))
    }
}

/// A request `id` argument ([`shared::id`]).
fn id_argument(value: &JsValue) -> sr::Result<u64> {
    key::with_type(value, |got| shared::id(got, || key::bigint_u64(value)))
}
