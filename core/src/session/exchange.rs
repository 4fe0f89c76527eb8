//! The vocabulary of the source sessions ([`crate::session::source`]): what a shell is
//! asked to do ([`Action`], [`Request`]), why a request or a call failed
//! ([`SourceError`]), and the defaults of every kind ([`defaults`]). Its own module so
//! that each kind (etcd, HTTP, ZooKeeper) and the [`SourceSession`](crate::session::source) that
//! dispatches to them depend on it, and not on each other.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::session::follower::Offered;

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
    /// The ZooKeeper session timeout asked for (the server grants one between 2 and 20
    /// of its ticks): a member silent for two thirds of the one granted is left.
    pub const ZOOKEEPER_SESSION_TIMEOUT_MS: u64 = 10_000;
}

/// Why a request or a call failed, with the same codes in every language: `unreachable`
/// (no connection or no whole answer), `http` (an error status, in `status`), `malformed`
/// (an answer that is not the source's: a ZooKeeper frame too), `conflict` (a
/// compare-and-swap lost: ZooKeeper's `BADVERSION`, `NODEEXISTS`), `closed` (a
/// call the session's `close` ended; a quiet watch is read again, never an error),
/// `unauthenticated` (etcd refused the user or
/// the token; ZooKeeper answered `AUTHFAILED` or `NOAUTH`), or a core [`Error`]'s code (`limit_exceeded`, `invalid_topology`,
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
    /// Open a TCP connection (no TLS) to `host:port` and answer
    /// [`SourceSession::opened`](crate::session::source::SourceSession::opened) once it is
    /// open, or `failed(id, now, "unreachable", message)`; then hand back every read with
    /// `chunk` (any size, nothing buffered by the shell) and the peer's close with
    /// `failed(id, now, "closed", ...)` (a ZooKeeper session).
    Connect {
        /// The connection.
        id: u64,
        /// A host name or an IP address (an IPv6 address without brackets).
        host: String,
        /// The TCP port.
        port: u16,
        /// When the session gives up on it (its own timer covers it).
        deadline: u64,
    },
    /// Write all of `data` to connection `id`, in order (a write error:
    /// `failed(id, now, "unreachable", message)`).
    Send {
        /// The connection.
        id: u64,
        /// The bytes.
        data: Vec<u8>,
    },
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
            Action::Connect { id, host, port, deadline } => {
                json!({"connect": {"id": id, "host": host, "port": port, "deadline": deadline}})
            }
            Action::Send { id, data } => json!({"send": {"id": id, "data_b64": b64(data)}}),
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

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` in standard base64 with padding (an [`Action::Send`]'s `data_b64`).
pub fn b64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [group[0], group.get(1).copied().unwrap_or(0), group.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].iter().enumerate() {
            if i <= group.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
