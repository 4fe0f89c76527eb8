//! Source sessions: following a topology kept in etcd or ZooKeeper or served over HTTP,
//! and the calls a publisher makes, as requests (or connections and bytes) out and
//! answers in (sans-IO), for every language.
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
//!
//!    A ZooKeeper session asks for TCP connections instead ([`Action::Connect`]: no TLS):
//!    the shell answers [`SourceSession::opened`] once one is open, writes every
//!    [`Action::Send`]'s bytes to it in order, hands every read back with
//!    [`SourceSession::chunk`] (any size, nothing buffered by the shell), and its end
//!    with [`SourceSession::failed`] (`closed`: the peer closed it; `unreachable`: a
//!    connect, read or write error);
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

use alloc::vec::Vec;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::session::follower::Follower;

// The vocabulary (actions, requests, errors, defaults) lives in `exchange`, which the
// kinds use too: this module names the kinds, so they must not name it.
pub use crate::session::exchange::{actions_value, defaults, Action, Request, SourceError};

/// A source session: etcd ([`crate::session::etcd::EtcdSession`]), HTTP
/// ([`crate::session::http::HttpSession`]) or ZooKeeper
/// (`crate::session::zookeeper::ZookeeperSession`), chosen by the config's `source`.
#[derive(Debug)]
pub enum SourceSession {
    /// etcd v3 through its JSON gateway: a follower, or calls (`get`, `txn`, `publish`, ...)
    /// (the `etcd` feature).
    #[cfg(feature = "etcd")]
    Etcd(crate::session::etcd::EtcdSession),
    /// An HTTP endpoint polled with `If-None-Match` (a follower only).
    Http(crate::session::http::HttpSession),
    /// ZooKeeper over its own TCP protocol (jute): a follower, or calls (`get`, `publish`,
    /// `refresh`) (the `zookeeper` feature).
    #[cfg(feature = "zookeeper")]
    Zookeeper(crate::session::zookeeper::ZookeeperSession),
}

/// The config of a source session, as JSON: `{"source": "etcd", ...}`,
/// `{"source": "http", ...}` or `{"source": "zookeeper", ...}`; each kind documents its
/// other fields.
pub type SourceConfig = Value;

macro_rules! each {
    ($self:ident, $session:ident => $body:expr) => {
        match $self {
            #[cfg(feature = "etcd")]
            SourceSession::Etcd($session) => $body,
            SourceSession::Http($session) => $body,
            #[cfg(feature = "zookeeper")]
            SourceSession::Zookeeper($session) => $body,
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
            Some("etcd") => {
                Err(Error::argument("config.source: the etcd session is not built in (the `etcd` feature)"))
            }
            Some("http") => Ok(SourceSession::Http(crate::session::http::HttpSession::from_config(config)?)),
            #[cfg(feature = "zookeeper")]
            Some("zookeeper") => {
                Ok(SourceSession::Zookeeper(crate::session::zookeeper::ZookeeperSession::from_config(config)?))
            }
            #[cfg(not(feature = "zookeeper"))]
            Some("zookeeper") => {
                Err(Error::argument("config.source: the ZooKeeper session is not built in (the `zookeeper` feature)"))
            }
            _ => Err(Error::argument("config.source: expected \"etcd\", \"http\" or \"zookeeper\"")),
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

    /// Connection `id` ([`Action::Connect`]) is open (a ZooKeeper session; the other
    /// kinds open no connection and ignore it).
    pub fn opened(&mut self, id: u64, now_ms: u64) -> Vec<Action> {
        match self {
            #[cfg(feature = "zookeeper")]
            SourceSession::Zookeeper(session) => session.opened(id, now_ms),
            _ => {
                let _ = (id, now_ms);
                Vec::new()
            }
        }
    }

    /// The answer to request `id`: its status, its headers (an object, names in any
    /// case), and its body (a stream's: empty, its body follows in [`Self::chunk`]).
    pub fn response(&mut self, id: u64, now_ms: u64, status: u16, headers: &Value, body: &[u8]) -> Vec<Action> {
        each!(self, session => session.response(id, now_ms, status, headers, body))
    }

    /// The next piece of stream `id`'s body, or the next bytes read from connection `id`
    /// (ZooKeeper), as they arrived (any size; lines and frames are the session's
    /// business).
    pub fn chunk(&mut self, id: u64, now_ms: u64, data: &[u8]) -> Vec<Action> {
        each!(self, session => session.chunk(id, now_ms, data))
    }

    /// Request or connection `id` could not be completed: `code` is `unreachable`,
    /// `closed` (a stream or connection ended by its server) or `limit_exceeded`; `message` says what the transport saw.
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
