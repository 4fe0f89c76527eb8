//! Source sessions: following a topology kept in etcd or served over HTTP, and the etcd
//! calls a publisher makes, as requests out and answers in (sans-IO), for every language.
//!
//! A shell (Python's `shardroute.etcd` and `shardroute.http`, the JavaScript shell the
//! addon and the WebAssembly package share, the CLI's `publish`, `watch` and `serve`)
//! moves bytes only. It makes a [`SourceSession`] from one JSON config, and:
//!
//! 1. calls [`SourceSession::start`] (a follower) or [`SourceSession::call`] (one etcd
//!    operation, such as `get` or `publish`) and performs every [`Action`] returned;
//! 2. performs a [`Request`] with the transport of its language: one HTTP request to
//!    `request.url`, its method, headers and body as given, reading at most
//!    `request.limit` bytes of the answer (more is [`SourceSession::failed`] with code
//!    `limit_exceeded`, before it is buffered). A plain request's whole answer is handed
//!    back with [`SourceSession::response`]; a `stream` (an etcd watch) is handed back with
//!    [`SourceSession::response`] (status and headers, empty body) when its head arrives
//!    with status 200 — any other status: its body, read up to `limit`, as for a plain
//!    request — then each piece of its body with [`SourceSession::chunk`], and its end with
//!    [`SourceSession::failed`] (code `closed`);
//! 3. hands back what went wrong with a request it could not complete,
//!    [`SourceSession::failed`] (`unreachable`: no connection, a reset, a TLS failure, an
//!    answer cut short; `closed`: a stream's server ended it; `limit_exceeded`);
//! 4. stops a request on [`Action::Cancel`];
//! 5. keeps one timer, at [`SourceSession::deadline`] (recomputed after every call), and
//!    calls [`SourceSession::timer`] when it passes: the session decides what a passed
//!    deadline means (a request that took too long, a quiet watch, the end of a backoff,
//!    the next poll);
//! 6. calls the application back on [`Action::Offered`] (a follower's new router, or a
//!    refusal), [`Action::Lost`] (the source lost, and when the session will try again),
//!    and ends a call on [`Action::Done`] or [`Action::Failed`].
//!
//! The shell holds no timeout, no retry rule, no member order and no codec: the config's
//! fields ([`SourceConfig`]) have their defaults here ([`defaults`]). Every time is the
//! shell's monotonic clock in milliseconds (`now_ms`). The scenarios of
//! `conformance/vectors/session_source.json` are the contract.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::session::follower::{Follower, Offered};

/// The defaults of every source session, one set for every language.
pub mod defaults {
    /// A whole request (connect, send, the whole answer; a stream: until its head).
    pub const REQUEST_TIMEOUT_MS: u64 = 5_000;
    /// How long a watch may stay quiet before the follower reads again to tell a quiet
    /// source from a lost one (0: never).
    pub const WATCH_IDLE_MS: u64 = 10_000;
    /// How often an HTTP source is asked again when it does not hold the request.
    pub const POLL_INTERVAL_MS: u64 = 1_000;
    /// How long an HTTP server that supports `Prefer: wait=N` is asked to hold a request.
    pub const LONG_POLL_WAIT_S: u64 = 30;
}

/// Why a request or a call failed, with the same codes in every language: `unreachable`
/// (no connection or no whole answer), `http` (an error status, in `status`), `malformed`
/// (an answer that is not the source's), `conflict` (a compare-and-swap lost), `closed` (a
/// call the session's `close` ended; a quiet watch is read again, never an error),
/// `unauthenticated` (etcd refused the user or
/// the token), or a core [`Error`]'s code (`limit_exceeded`, `invalid_topology`,
/// `stale_epoch`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    /// The code.
    pub code: &'static str,
    /// What happened, for a person.
    pub message: String,
    /// The HTTP status, for `http` (and `unauthenticated` when etcd's answer had one).
    pub status: Option<u16>,
}

impl SourceError {
    /// An error with `code` and `message`, no status.
    pub fn new(code: &'static str, message: impl Into<String>) -> SourceError {
        SourceError { code, message: message.into(), status: None }
    }

    /// A core error, its code kept.
    pub fn core(error: &Error) -> SourceError {
        SourceError::new(error.code(), error.message())
    }

    /// As the vectors and the bindings write it: `{"code", "message", "status"}`.
    pub fn to_value(&self) -> Value {
        json!({"code": self.code, "message": self.message, "status": self.status})
    }
}

/// One HTTP request for the shell to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The session's name for it, in every answer about it.
    pub id: u64,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The whole URL (`http://` or `https://`).
    pub url: String,
    /// Header names (lower case) and values, to send as given.
    pub headers: Vec<(&'static str, String)>,
    /// The body (`None`: none).
    pub body: Option<String>,
    /// When the request has failed if it has not been answered (a stream: opened).
    pub deadline: Option<u64>,
    /// The most bytes of an answer (a stream: of its unread part) the shell may buffer.
    pub limit: u64,
    /// A stream (an etcd watch): its body is handed back in chunks as it arrives.
    pub stream: bool,
}

impl Request {
    /// As the vectors and the bindings write it.
    pub fn to_value(&self) -> Value {
        let mut headers = Map::new();
        for (name, value) in &self.headers {
            headers.insert((*name).to_string(), Value::String(value.clone()));
        }
        json!({
            "id": self.id, "method": self.method, "url": self.url, "headers": headers, "body": self.body,
            "deadline": self.deadline, "limit": self.limit, "stream": self.stream,
        })
    }
}

/// What the shell does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Make this request.
    Request(Request),
    /// Stop request `id` (close its connection); nothing more is to be handed back for it.
    Cancel {
        /// The request.
        id: u64,
    },
    /// A follower read a document: what the core's follower made of it (call the
    /// application's `on_change` when `changed`, its `on_refused` on a refusal).
    Offered {
        /// Installed, unchanged or refused.
        offered: Offered,
        /// Whether the application sees something new: a router installed, or the
        /// companions changed under the same router.
        changed: bool,
        /// The source's revision of the document.
        revision: u64,
    },
    /// A follower lost its source (call the application's `on_error`); the session tries
    /// again by itself at `retry_at` (its deadline).
    Lost {
        /// Why.
        error: SourceError,
        /// When it tries again.
        retry_at: u64,
    },
    /// Call `call` succeeded with `result`.
    Done {
        /// The call.
        call: u64,
        /// Its result (each call's shape in its documentation).
        result: Value,
    },
    /// Call `call` failed.
    Failed {
        /// The call.
        call: u64,
        /// Why.
        error: SourceError,
    },
}

impl Action {
    /// As the vectors and the bindings write it: one key naming the action.
    pub fn to_value(&self) -> Value {
        match self {
            Action::Request(request) => json!({"request": request.to_value()}),
            Action::Cancel { id } => json!({"cancel": {"id": id}}),
            Action::Offered { offered, changed, revision } => {
                let mut value = offered.to_value();
                if let Offered::Refused(error) = offered {
                    value["refused"]["message"] = Value::String(error.message().to_string());
                }
                json!({"offered": {"result": value, "changed": changed, "revision": revision.to_string()}})
            }
            Action::Lost { error, retry_at } => json!({"lost": {"error": error.to_value(), "retry_at": retry_at}}),
            Action::Done { call, result } => json!({"done": {"call": call, "result": result}}),
            Action::Failed { call, error } => json!({"failed": {"call": call, "error": error.to_value()}}),
        }
    }
}

/// Every action as a JSON array (what a binding hands its language).
pub fn actions_value(actions: &[Action]) -> Value {
    Value::Array(actions.iter().map(Action::to_value).collect())
}

/// A source session: etcd ([`crate::session::etcd::EtcdSession`]) or HTTP
/// ([`crate::session::http::HttpSession`]), chosen by the config's `source`.
#[derive(Debug)]
pub enum SourceSession {
    /// etcd v3 through its JSON gateway: a follower, or calls (`get`, `txn`, `publish`, ...)
    /// (the `etcd` feature).
    #[cfg(feature = "etcd")]
    Etcd(crate::session::etcd::EtcdSession),
    /// An HTTP endpoint polled with `If-None-Match` (a follower only).
    Http(crate::session::http::HttpSession),
}

/// The config of a source session, as JSON: `{"source": "etcd", ...}` or
/// `{"source": "http", ...}`; each kind documents its other fields.
pub type SourceConfig = Value;

macro_rules! each {
    ($self:ident, $session:ident => $body:expr) => {
        match $self {
            #[cfg(feature = "etcd")]
            SourceSession::Etcd($session) => $body,
            SourceSession::Http($session) => $body,
        }
    };
}

impl SourceSession {
    /// The session `config` describes.
    ///
    /// # Errors
    /// `invalid_argument` for a config that is not an object, an unknown `source`, or a
    /// field its kind refuses.
    pub fn from_config(config: &Value) -> Result<SourceSession> {
        match config.get("source").and_then(Value::as_str) {
            #[cfg(feature = "etcd")]
            Some("etcd") => Ok(SourceSession::Etcd(crate::session::etcd::EtcdSession::from_config(config)?)),
            #[cfg(not(feature = "etcd"))]
            Some("etcd") => Err(Error::argument("config.source: the etcd session is not built in (the `etcd` feature)")),
            Some("http") => Ok(SourceSession::Http(crate::session::http::HttpSession::from_config(config)?)),
            _ => Err(Error::argument("config.source: expected \"etcd\" or \"http\"")),
        }
    }

    /// The config in use, every field (defaults filled in).
    pub fn config(&self) -> Value {
        each!(self, session => session.config())
    }

    /// Starts following (the first read). A session with no `key` to follow (etcd calls
    /// only) returns nothing.
    pub fn start(&mut self, now_ms: u64) -> Vec<Action> {
        each!(self, session => session.start(now_ms))
    }

    /// Starts one call (`op` as its kind documents: etcd's `{"op": "get", "key": ...}`),
    /// and returns its number (in its [`Action::Done`] or [`Action::Failed`]) and the
    /// actions to perform.
    ///
    /// # Errors
    /// `invalid_argument` for an op the session does not know or whose fields are wrong
    /// (an HTTP session has none).
    pub fn call(&mut self, op: &Value, now_ms: u64) -> Result<(u64, Vec<Action>)> {
        each!(self, session => session.call(op, now_ms))
    }

    /// The answer to request `id`: its status, its headers (an object, names in any
    /// case), and its body (a stream's: empty, its body follows in [`Self::chunk`]).
    pub fn response(&mut self, id: u64, now_ms: u64, status: u16, headers: &Value, body: &[u8]) -> Vec<Action> {
        each!(self, session => session.response(id, now_ms, status, headers, body))
    }

    /// The next piece of stream `id`'s body, as it arrived (any size; lines are the
    /// session's business).
    pub fn chunk(&mut self, id: u64, now_ms: u64, data: &[u8]) -> Vec<Action> {
        each!(self, session => session.chunk(id, now_ms, data))
    }

    /// Request `id` could not be completed: `code` is `unreachable`, `closed` (a stream
    /// ended by its server) or `limit_exceeded`; `message` says what the transport saw.
    pub fn failed(&mut self, id: u64, now_ms: u64, code: &str, message: &str) -> Vec<Action> {
        each!(self, session => session.failed(id, now_ms, code, message))
    }

    /// The deadline ([`Self::deadline`]) passed.
    pub fn timer(&mut self, now_ms: u64) -> Vec<Action> {
        each!(self, session => session.timer(now_ms))
    }

    /// Stops everything: the requests in flight are cancelled, the calls failed, and the
    /// follower stops (nothing more is asked for).
    pub fn close(&mut self, now_ms: u64) -> Vec<Action> {
        each!(self, session => session.close(now_ms))
    }

    /// The one time the shell must call [`Self::timer`] at (None: no timer).
    pub fn deadline(&self) -> Option<u64> {
        each!(self, session => session.deadline())
    }

    /// The core follower (None for a session that only makes calls).
    pub fn follower(&self) -> Option<&Follower> {
        each!(self, session => session.follower())
    }

    /// The session's state, for the shell's properties: `{"revision", "epoch", "stats",
    /// ...}` as each kind documents (`stats` the follower's counters and the session's).
    pub fn state(&self) -> Value {
        each!(self, session => session.state())
    }
}
