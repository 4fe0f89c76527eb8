//! The ZooKeeper source session: following a topology kept in a ZooKeeper node, and the
//! calls of a publisher (`get`, `publish`, `refresh`), over ZooKeeper's own TCP protocol
//! (jute frames, [`codec`]), as connections and bytes out and bytes in (sans-IO).
//!
//! A shell performs the [`Action`]s (see [`source`](crate::session::source) for the
//! driver loop): [`Action::Connect`] (a TCP connection, answered by
//! [`ZookeeperSession::opened`] or `failed`), [`Action::Send`] (bytes to write) and
//! [`Action::Cancel`] (close it); every read goes back through
//! [`ZookeeperSession::chunk`], the peer's close through `failed(id, now, "closed", ..)`.
//! This module decides everything else, once for every language:
//!
//! * **Sessions and members.** One session on one member at a time, always a new
//!   ZooKeeper session (never resumed), its `lastZxidSeen` the largest zxid seen so far (a
//!   member behind us refuses us and we move on). The handshake (TCP, `ConnectResponse`,
//!   and the authentication's answer) must finish within `read_timeout / members` (the C
//!   client's rule), `read_timeout` being two thirds of the session timeout asked for
//!   (at least 100 ms). A member that cannot be reached, refuses the session (a granted
//!   timeout of 0, a closed connection), is silent past its deadline or sends what is not
//!   ZooKeeper's protocol (`malformed`) is left for the next one, round the list once;
//!   then the round has failed: the calls fail with the last member's error, and a
//!   follower reports [`Action::Lost`] and starts a new round when the follower's
//!   backoff ([`Follower::disconnected`]) ends.
//! * **Liveness.** With `T` the timeout granted: a ping when nothing was sent for `T/3`;
//!   the member is lost (next member, as above) when nothing was heard for `2T/3`.
//! * **Authentication** (`user` and `password`): a digest `AuthPacket` right after the
//!   handshake; `AUTHFAILED` (or an `AuthFailed` state event) is `unauthenticated` for
//!   every call and for the follower, never tried on another member; `NOAUTH` on a read
//!   or a write is `unauthenticated` too.
//! * **Following** (a `path`): on every new session, `getData(path, watch)`. Data that is
//!   there and not empty is offered to the core's [`Follower`] (as bytes; revision: the
//!   node's `mzxid`); null or empty data is an absent document (nothing offered); no node
//!   (`NONODE`) sets an `exists` watch for its creation. A node event for the path reads
//!   again, one read at a time (events during a read make one more read after it). An
//!   `Expired` state event loses the session (next member). The first read that succeeds
//!   after a loss reconnects the follower ([`Follower::connected`]).
//! * **Refreshing** (`{"op": "refresh"}`): answered by the next follow read that starts
//!   (at once when none is in flight), as etcd's.
//! * **Publishing** (`{"op": "publish"}`): the stored node is read and offered to a fresh
//!   follower; the new document must be the one it would install next (epoch + 1),
//!   written with `setData` at the version read, or `create` when there is no node
//!   (missing parents created first, empty and persistent; ACL `world:anyone`, or with a
//!   user the `auth` scheme; all permissions). `BADVERSION` and `NODEEXISTS` are
//!   `conflict`. A stored value the follower refuses is not overwritten unless `replace`
//!   is asked, and then only by a valid document whose epoch is above the stored value's
//!   `epoch` field (when there is none, it is refused: ZooKeeper keeps no history). A
//!   write whose outcome is unknown (the session lost after it was sent) is read back on
//!   the next session: our document there means done.
//! * Every call has one whole deadline, `request_timeout_ms` after it starts (failed
//!   `unreachable`); `close` sends `closeSession` (best effort), cancels the connection
//!   and fails the calls `closed`.
//!
//! Every frame is bounded by [`MAX_ANSWER_BYTES`](crate::limits::MAX_ANSWER_BYTES) from
//! its head, before its body is gathered. Times are the shell's `now_ms`; no clock is
//! read, no socket opened, and no input panics.

pub mod codec;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use self::codec::{class, code, Class, Frames, Node, Reply, Stat};
use crate::error::{Error, ErrorKind, Result};
use crate::router::Router;
use crate::session::exchange::{defaults, Action, SourceError};
use crate::session::follower::{Follower, FollowerConfig, FollowerStats, Offered};

#[cfg(test)]
mod tests;

/// How [`ZookeeperSession::config`] shows a password; never taken as one by `from_config`.
const PASSWORD_MASK: &str = "***";
/// The shortest read timeout a handshake is given, whatever the session timeout asked.
const MIN_READ_TIMEOUT_MS: u64 = 100;

/// A password: its `Debug` prints `"***"`.
#[derive(Clone, PartialEq, Eq)]
struct Secret(String);

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("\"***\"")
    }
}

/// One member: as configured, and taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Member {
    text: String,
    host: String,
    port: u16,
}

/// The settings of a ZooKeeper session, from its JSON config.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ZkConfig {
    members: Vec<Member>,
    path: Option<String>,
    session_timeout_ms: u64,
    request_timeout_ms: u64,
    follower: FollowerConfig,
    user: Option<String>,
    password: Option<Secret>,
}

fn ms_field(name: &str, value: &Value) -> Result<u64> {
    value
        .as_u64()
        .filter(|&ms| ms <= 1 << 53)
        .ok_or_else(|| Error::argument(format!("config.{name}: expected milliseconds, an integer in 0..=2^53")))
}

fn text_field(name: &str, value: &Value) -> Result<String> {
    value.as_str().map(ToString::to_string).ok_or_else(|| Error::argument(format!("config.{name}: expected a string")))
}

fn path_field(name: &str, value: &Value) -> Result<String> {
    let path = text_field(name, value)?;
    codec::check_path(&path).map_err(|why| Error::argument(format!("{name}: {why}")))?;
    Ok(path)
}

impl ZkConfig {
    fn from_value(config: &Value) -> Result<ZkConfig> {
        let Value::Object(fields) = config else {
            return Err(Error::argument("config: expected an object"));
        };
        let mut out = ZkConfig {
            members: Vec::new(),
            path: None,
            session_timeout_ms: defaults::ZOOKEEPER_SESSION_TIMEOUT_MS,
            request_timeout_ms: defaults::REQUEST_TIMEOUT_MS,
            follower: FollowerConfig::default(),
            user: None,
            password: None,
        };
        let mut follower = Map::new();
        for (name, value) in fields {
            match name.as_str() {
                "source" => {}
                "members" => {
                    let list = value
                        .as_array()
                        .ok_or_else(|| Error::argument("config.members: expected a list of host:port"))?;
                    for each in list {
                        let text = text_field("members", each)?;
                        let (host, port) = codec::parse_host(&text)
                            .map_err(|why| Error::argument(format!("config.members: {why}")))?;
                        out.members.push(Member { text: text.trim().to_string(), host, port });
                    }
                }
                "path" | "user" | "password" if value.is_null() => {}
                "path" => out.path = Some(path_field("config.path", value)?),
                "session_timeout_ms" => out.session_timeout_ms = ms_field(name, value)?,
                "request_timeout_ms" => out.request_timeout_ms = ms_field(name, value)?,
                "reconnect_first_ms" | "reconnect_max_ms" => {
                    follower.insert(name.clone(), value.clone());
                }
                "user" => out.user = Some(text_field("user", value)?),
                "password" => {
                    let password = text_field("password", value)?;
                    if password == PASSWORD_MASK {
                        return Err(Error::argument(
                            "config.password: \"***\" is how config() hides a password, never one (give the password)",
                        ));
                    }
                    out.password = Some(Secret(password));
                }
                other => {
                    return Err(Error::argument(format!(
                        "config: unknown field {other:?} (source, members, path, session_timeout_ms, \
                         request_timeout_ms, reconnect_first_ms, reconnect_max_ms, user, password)"
                    )))
                }
            }
        }
        if out.members.is_empty() {
            return Err(Error::argument("config.members: at least one member (host:port)"));
        }
        if out.request_timeout_ms == 0 {
            return Err(Error::argument("config.request_timeout_ms: at least 1"));
        }
        if out.session_timeout_ms == 0 || out.session_timeout_ms > i32::MAX as u64 {
            return Err(Error::argument("config.session_timeout_ms: in 1..=2147483647"));
        }
        if out.user.is_some() != out.password.is_some() {
            return Err(Error::argument("config: user and password go together"));
        }
        out.follower = FollowerConfig::from_value(&Value::Object(follower))?;
        Ok(out)
    }

    fn to_value(&self) -> Value {
        let members: Vec<&str> = self.members.iter().map(|m| m.text.as_str()).collect();
        json!({
            "source": "zookeeper", "members": members, "path": self.path,
            "session_timeout_ms": self.session_timeout_ms, "request_timeout_ms": self.request_timeout_ms,
            "reconnect_first_ms": self.follower.reconnect_first_ms, "reconnect_max_ms": self.follower.reconnect_max_ms,
            "user": self.user, "password": self.password.as_ref().map(|_| PASSWORD_MASK),
        })
    }
}

/// Where a connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// TCP connecting (until `opened`).
    Connecting,
    /// `ConnectRequest` sent.
    Handshake,
    /// `AuthPacket` sent.
    Auth,
    /// The session is open.
    Ready,
}

/// Who waits for a request's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// The follower's `getData`.
    Read,
    /// The follower's `exists` (a watch for the node's creation).
    Exists,
    /// A call (its number).
    Call(u64),
}

/// The one connection (and ZooKeeper session) in use.
#[derive(Clone, Debug)]
struct Conn {
    id: u64,
    member: usize,
    phase: Phase,
    /// When the handshake has failed (until `Ready`).
    handshake_deadline: u64,
    frames: Frames,
    /// The session timeout granted (`Ready`).
    granted_ms: u64,
    sent_at: u64,
    heard_at: u64,
    next_xid: i32,
    pending: BTreeMap<i32, Purpose>,
}

/// The stage of a publish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Read,
    /// Creating the parent at this index.
    Parent(usize),
    Write,
    ReadBack,
}

#[derive(Clone, Debug)]
struct PublishCall {
    path: String,
    document: String,
    replace: bool,
    stage: Stage,
    /// The stored node's stat (None: no node).
    stored: Option<Stat>,
    /// What is written: the canonical document and its epoch.
    written: Option<(String, u64)>,
    /// The parents were created once already.
    parents_done: bool,
    /// Why the write's outcome is unknown (a read-back is on its way).
    blind_error: Option<SourceError>,
}

#[derive(Clone, Debug)]
enum CallKind {
    Get { path: String },
    Refresh,
    Publish(Box<PublishCall>),
}

#[derive(Clone, Debug)]
struct Call {
    kind: CallKind,
    deadline: u64,
    /// The xid of its request in flight.
    sent: Option<i32>,
}

#[derive(Clone, Debug, Default)]
struct Follow {
    path: String,
    /// A read (`getData` or `exists`) is in flight.
    reading: bool,
    /// One more read after the one in flight (events arrived).
    dirty: bool,
    /// The refresh calls the read in flight answers.
    serving: Vec<u64>,
    /// The refresh calls waiting for the next read.
    queued: Vec<u64>,
    retry_at: Option<u64>,
    /// Lost until a read succeeds.
    lost: bool,
    reads: u64,
    events: u64,
}

/// The ZooKeeper source session (see the module docs). Made from a config
/// ([`ZookeeperSession::from_config`]): `{"source": "zookeeper", "members":
/// ["host:port" | "host" | "[v6]:port", ...], "path"?, "session_timeout_ms"?,
/// "request_timeout_ms"?, "reconnect_first_ms"?, "reconnect_max_ms"?, "user"?,
/// "password"?}`.
#[derive(Debug)]
pub struct ZookeeperSession {
    config: Box<ZkConfig>,
    in_use: usize,
    /// Members tried in this round (reset by a session that opens).
    tried: usize,
    next_id: u64,
    conn: Option<Box<Conn>>,
    /// The largest zxid seen (the next session's `lastZxidSeen`).
    zxid: i64,
    calls: BTreeMap<u64, Call>,
    follow: Option<Box<Follow>>,
    follower: Option<Box<Follower>>,
    started: bool,
    closed: bool,
    sessions: u64,
    pings: u64,
}

fn rev(revision: u64) -> Value {
    Value::String(revision.to_string())
}

fn zxid_u64(zxid: i64) -> u64 {
    u64::try_from(zxid).unwrap_or(0)
}

fn op_fields(op: &Value, name: &str, allowed: &[&str]) -> Result<()> {
    let Value::Object(fields) = op else { return Err(Error::argument(format!("{name}: expected an object"))) };
    match fields.keys().find(|field| !allowed.contains(&field.as_str())) {
        None => Ok(()),
        Some(field) => Err(Error::argument(format!("{name}: unknown field {field:?} ({})", allowed.join(", ")))),
    }
}

impl ZookeeperSession {
    /// The session `config` describes (its fields in the type's docs and in
    /// [`defaults`]). `path`, `user` and `password` may be `null`; `password` may not be
    /// `"***"` (the mask `config()` writes).
    ///
    /// # Errors
    /// `invalid_argument` for an unknown field, a field of the wrong type, no member, a
    /// member that is not `host[:port]`, a path ZooKeeper refuses, a session timeout
    /// outside `1..=2^31-1`, or a user without a password (or the reverse).
    pub fn from_config(config: &Value) -> Result<ZookeeperSession> {
        let config = ZkConfig::from_value(config)?;
        let (follow, follower) = match &config.path {
            None => (None, None),
            Some(path) => (
                Some(Box::new(Follow { path: path.clone(), ..Follow::default() })),
                Some(Box::new(Follower::new(config.follower.clone()))),
            ),
        };
        Ok(ZookeeperSession {
            config: Box::new(config),
            in_use: 0,
            tried: 0,
            next_id: 0,
            conn: None,
            zxid: 0,
            calls: BTreeMap::new(),
            follow,
            follower,
            started: false,
            closed: false,
            sessions: 0,
            pings: 0,
        })
    }

    /// The config in use, every field (defaults filled in; a password shown as `"***"`).
    pub fn config(&self) -> Value {
        self.config.to_value()
    }

    /// Starts following: a session and its first read. Nothing for a calls-only session,
    /// a second start, or a closed session.
    pub fn start(&mut self, now_ms: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if self.follow.is_some() && !self.started && !self.closed {
            self.started = true;
            self.read(now_ms, &mut out);
        }
        out
    }

    /// Starts one call; its number and the actions. Ops and results:
    ///
    /// * `{"op": "get", "path"?}` (default: the config's `path`) → `{"value": str|null,
    ///   "value_b64"?: str, "version": n|null, "mzxid": "N"}` (no node: `null`, `null`,
    ///   `"0"`; null data: `value` null; data that is not UTF-8: `value` null and its
    ///   bytes in `value_b64`);
    /// * `{"op": "publish", "path"?, "document", "replace"?: bool}` → `{"revision": "N",
    ///   "epoch": "N"}` (`revision`: the node's new `mzxid`; see the module docs);
    /// * `{"op": "refresh"}` (a session with a `path` only) → `{"offered": <the Offered
    ///   result> | null, "revision": "N"}` (`null`: no document; `revision`: the zxid of
    ///   the server's answer), as etcd's refresh.
    ///
    /// # Errors
    /// `invalid_argument` for an unknown op, a field missing, of the wrong type or unknown,
    /// a bad path, no path (neither in the op nor in the config), and `refresh` on a
    /// session with no `path`.
    pub fn call(&mut self, op: &Value, now_ms: u64) -> Result<(u64, Vec<Action>)> {
        let kind = self.parse_call(op)?;
        self.next_id += 1;
        let number = self.next_id;
        let mut out = Vec::new();
        if self.closed {
            out.push(Action::Failed {
                call: number,
                error: SourceError::new("closed", "the ZooKeeper session is closed"),
            });
            return Ok((number, out));
        }
        let refresh = matches!(kind, CallKind::Refresh);
        let deadline = now_ms.saturating_add(self.config.request_timeout_ms);
        self.calls.insert(number, Call { kind, deadline, sent: None });
        if refresh {
            if let Some(follow) = self.follow.as_mut() {
                follow.queued.push(number);
            }
            if !self.follow.as_ref().is_some_and(|f| f.reading) {
                self.send_read(now_ms, &mut out);
            }
        } else if self.ready() {
            self.send_call(number, now_ms, &mut out);
        } else {
            self.ensure_conn(now_ms, &mut out);
        }
        Ok((number, out))
    }

    fn parse_call(&self, op: &Value) -> Result<CallKind> {
        let path_of = |op: &Value| -> Result<String> {
            match op.get("path") {
                None | Some(Value::Null) => {
                    self.config.path.clone().ok_or_else(|| Error::argument("op.path: no path (and none in the config)"))
                }
                Some(value) => path_field("op.path", value),
            }
        };
        match op.get("op").and_then(Value::as_str) {
            Some("get") => {
                op_fields(op, "op get", &["op", "path"])?;
                Ok(CallKind::Get { path: path_of(op)? })
            }
            Some("refresh") => {
                op_fields(op, "op refresh", &["op"])?;
                if self.follow.is_none() {
                    return Err(Error::argument("op refresh: a session with a path to follow (config.path)"));
                }
                Ok(CallKind::Refresh)
            }
            Some("publish") => {
                op_fields(op, "op publish", &["op", "path", "document", "replace"])?;
                let document = op
                    .get("document")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::argument("op.document: expected a string"))?
                    .to_string();
                let replace = match op.get("replace") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(replace)) => *replace,
                    Some(_) => return Err(Error::argument("op.replace: expected a boolean")),
                };
                Ok(CallKind::Publish(Box::new(PublishCall {
                    path: path_of(op)?,
                    document,
                    replace,
                    stage: Stage::Read,
                    stored: None,
                    written: None,
                    parents_done: false,
                    blind_error: None,
                })))
            }
            _ => Err(Error::argument("op.op: expected \"get\", \"publish\" or \"refresh\"")),
        }
    }

    /// Connection `id` is open: the handshake starts.
    pub fn opened(&mut self, id: u64, now_ms: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        let (zxid, timeout) = (self.zxid, self.config.session_timeout_ms);
        let Some(conn) = self.conn.as_mut().filter(|c| c.id == id && c.phase == Phase::Connecting) else {
            return out;
        };
        conn.phase = Phase::Handshake;
        conn.sent_at = now_ms;
        conn.heard_at = now_ms;
        let timeout = i32::try_from(timeout).unwrap_or(i32::MAX);
        out.push(Action::Send { id, data: codec::connect_request(zxid, timeout) });
        out
    }

    /// Never used by this kind (no HTTP request): ignored.
    pub fn response(&mut self, id: u64, now_ms: u64, status: u16, headers: &Value, body: &[u8]) -> Vec<Action> {
        let _ = (id, now_ms, status, headers, body);
        Vec::new()
    }

    /// Bytes read from connection `id`.
    pub fn chunk(&mut self, id: u64, now_ms: u64, data: &[u8]) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        let Some(conn) = self.conn.as_mut().filter(|c| c.id == id && c.phase != Phase::Connecting) else {
            return out;
        };
        conn.heard_at = now_ms;
        if let Err(why) = conn.frames.push(data) {
            let error = self.malformed(&why);
            self.member_lost(error, now_ms, &mut out);
            return out;
        }
        while let Some(frame) = self.conn.as_mut().filter(|c| c.id == id).and_then(|c| c.frames.next_frame()) {
            self.frame(&frame, now_ms, &mut out);
        }
        out
    }

    /// Connection `id` failed (`unreachable`) or its peer closed it (`closed`).
    pub fn failed(&mut self, id: u64, now_ms: u64, code: &str, message: &str) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed || self.conn.as_ref().is_none_or(|c| c.id != id) {
            return out;
        }
        let why = if code == "closed" { "the member closed the connection" } else { message };
        let error = SourceError::new("unreachable", format!("{}: {why}", self.where_()));
        // Ended already: nothing to cancel.
        if let Some(conn) = self.conn.as_mut() {
            conn.id = 0;
        }
        self.member_lost(error, now_ms, &mut out);
        out
    }

    /// The deadline passed: calls past theirs fail, a handshake past its deadline or a
    /// silent member moves to the next member, a ping is sent when due, a backoff's end
    /// starts a new round.
    pub fn timer(&mut self, now_ms: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        let late: Vec<u64> = self.calls.iter().filter(|(_, c)| c.deadline <= now_ms).map(|(n, _)| *n).collect();
        for number in late {
            self.calls.remove(&number);
            if let Some(follow) = self.follow.as_mut() {
                follow.queued.retain(|&n| n != number);
                follow.serving.retain(|&n| n != number);
            }
            let error = SourceError::new(
                "unreachable",
                format!("ZooKeeper: no answer within {} ms", self.config.request_timeout_ms),
            );
            out.push(Action::Failed { call: number, error });
        }
        if let Some(conn) = self.conn.as_deref() {
            if conn.phase != Phase::Ready {
                if conn.handshake_deadline <= now_ms {
                    let error = SourceError::new(
                        "unreachable",
                        format!("{}: no session within {} ms", self.where_(), self.handshake_ms()),
                    );
                    self.member_lost(error, now_ms, &mut out);
                }
            } else if conn.heard_at.saturating_add(read_timeout(conn.granted_ms)) <= now_ms {
                let error = SourceError::new(
                    "unreachable",
                    format!("{}: nothing heard for {} ms", self.where_(), read_timeout(conn.granted_ms)),
                );
                self.member_lost(error, now_ms, &mut out);
            } else if conn.sent_at.saturating_add(ping_every(conn.granted_ms)) <= now_ms {
                self.pings += 1;
                self.send(codec::ping_request(), now_ms, &mut out);
            }
        }
        let retry = self.follow.as_ref().and_then(|f| f.retry_at).is_some_and(|at| at <= now_ms);
        if retry {
            if let Some(follow) = self.follow.as_mut() {
                follow.retry_at = None;
            }
            self.read(now_ms, &mut out);
        }
        out
    }

    /// Stops everything: `closeSession` sent (best effort), the connection cancelled, the
    /// calls failed (`closed`), no more actions.
    pub fn close(&mut self, now_ms: u64) -> Vec<Action> {
        let _ = now_ms;
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        self.closed = true;
        if let Some(mut conn) = self.conn.take() {
            if conn.phase == Phase::Ready {
                let xid = conn.next_xid;
                out.push(Action::Send { id: conn.id, data: codec::close_request(xid) });
                conn.next_xid = xid.wrapping_add(1);
            }
            if conn.id != 0 {
                out.push(Action::Cancel { id: conn.id });
            }
        }
        for call in core::mem::take(&mut self.calls).into_keys() {
            out.push(Action::Failed { call, error: SourceError::new("closed", "the ZooKeeper session was closed") });
        }
        if let Some(follow) = self.follow.as_mut() {
            follow.retry_at = None;
            follow.reading = false;
            follow.dirty = false;
            follow.serving.clear();
            follow.queued.clear();
        }
        out
    }

    /// The one time the shell must call [`Self::timer`] at: the earliest of the
    /// handshake's deadline, the next ping, the liveness deadline, the calls' deadlines
    /// and the end of a backoff.
    pub fn deadline(&self) -> Option<u64> {
        if self.closed {
            return None;
        }
        let conn = self.conn.as_deref().map(|conn| {
            if conn.phase == Phase::Ready {
                conn.sent_at
                    .saturating_add(ping_every(conn.granted_ms))
                    .min(conn.heard_at.saturating_add(read_timeout(conn.granted_ms)))
            } else {
                conn.handshake_deadline
            }
        });
        let calls = self.calls.values().map(|c| c.deadline);
        let retry = self.follow.as_ref().and_then(|f| f.retry_at);
        calls.chain(conn).chain(retry).min()
    }

    /// The core follower (None for a calls-only session).
    pub fn follower(&self) -> Option<&Follower> {
        self.follower.as_deref()
    }

    /// `{"revision": "N"|null, "epoch": "N"|null, "member": "host:port", "stats":
    /// {<follower stats>, "sessions": n, "events": n, "reads": n, "pings": n}}`.
    pub fn state(&self) -> Value {
        let follower = self.follower.as_deref();
        let mut stats = follower.map_or_else(|| FollowerStats::default().to_value(), |f| f.stats().to_value());
        let (reads, events) = self.follow.as_ref().map_or((0, 0), |f| (f.reads, f.events));
        stats["sessions"] = Value::from(self.sessions);
        stats["events"] = Value::from(events);
        stats["reads"] = Value::from(reads);
        stats["pings"] = Value::from(self.pings);
        json!({
            "revision": follower.and_then(Follower::revision).map(rev),
            "epoch": follower.and_then(Follower::router).map(|router| rev(router.epoch())),
            "member": self.config.members.get(self.in_use).map_or("", |m| m.text.as_str()),
            "stats": stats,
        })
    }

    // -- connections ----------------------------------------------------------------------

    fn where_(&self) -> String {
        let member = self.conn.as_ref().map_or(self.in_use, |c| c.member);
        format!("ZooKeeper {}", self.config.members.get(member).map_or("", |m| m.text.as_str()))
    }

    fn malformed(&self, why: &str) -> SourceError {
        SourceError::new("malformed", format!("{}: {why}", self.where_()))
    }

    /// The handshake's time: the read timeout (2/3 of the session timeout asked for, at
    /// least 100 ms) over the number of members.
    fn handshake_ms(&self) -> u64 {
        let read = (self.config.session_timeout_ms * 2 / 3).max(MIN_READ_TIMEOUT_MS);
        (read / self.config.members.len().max(1) as u64).max(1)
    }

    fn ready(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.phase == Phase::Ready)
    }

    /// A connection to the member in use, unless there is one.
    fn ensure_conn(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        if self.conn.is_some() {
            return;
        }
        self.next_id += 1;
        let id = self.next_id;
        let deadline = now_ms.saturating_add(self.handshake_ms());
        let member = self.in_use;
        let Some(target) = self.config.members.get(member) else { return };
        out.push(Action::Connect { id, host: target.host.clone(), port: target.port, deadline });
        self.conn = Some(Box::new(Conn {
            id,
            member,
            phase: Phase::Connecting,
            handshake_deadline: deadline,
            frames: Frames::default(),
            granted_ms: 0,
            sent_at: now_ms,
            heard_at: now_ms,
            next_xid: 1,
            pending: BTreeMap::new(),
        }));
    }

    /// Sends a frame on the connection.
    fn send(&mut self, data: Vec<u8>, now_ms: u64, out: &mut Vec<Action>) {
        if let Some(conn) = self.conn.as_mut() {
            conn.sent_at = now_ms;
            out.push(Action::Send { id: conn.id, data });
        }
    }

    /// Sends a request for `purpose`: its xid is the next one.
    fn request(&mut self, purpose: Purpose, make: impl FnOnce(i32) -> Vec<u8>, now_ms: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conn.as_mut().filter(|c| c.phase == Phase::Ready) else { return };
        let xid = conn.next_xid;
        conn.next_xid = if xid >= i32::MAX - 1 { 1 } else { xid + 1 };
        conn.pending.insert(xid, purpose);
        if let Purpose::Call(number) = purpose {
            if let Some(call) = self.calls.get_mut(&number) {
                call.sent = Some(xid);
            }
        }
        self.send(make(xid), now_ms, out);
    }

    /// The member in use is lost: its connection cancelled, what was in flight made ready
    /// to go again, and the next member (or, the round over, the failure).
    fn member_lost(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conn.take() else { return };
        if conn.id != 0 {
            out.push(Action::Cancel { id: conn.id });
        }
        self.requeue(&conn);
        self.in_use = (conn.member + 1) % self.config.members.len().max(1);
        self.tried += 1;
        if self.tried >= self.config.members.len() {
            self.round_failed(error, now_ms, out);
        } else {
            self.ensure_conn(now_ms, out);
        }
    }

    /// What was in flight on a lost connection goes again on the next session: a
    /// publish's write whose outcome is unknown becomes a read-back.
    fn requeue(&mut self, conn: &Conn) {
        if let Some(follow) = self.follow.as_mut() {
            if follow.reading {
                follow.reading = false;
                follow.dirty = false;
                let mut serving = core::mem::take(&mut follow.serving);
                serving.append(&mut follow.queued);
                follow.queued = serving;
            }
        }
        for purpose in conn.pending.values() {
            let Purpose::Call(number) = purpose else { continue };
            let Some(call) = self.calls.get_mut(number) else { continue };
            call.sent = None;
            if let CallKind::Publish(publish) = &mut call.kind {
                if publish.stage == Stage::Write {
                    publish.stage = Stage::ReadBack;
                    publish.blind_error = Some(SourceError::new(
                        "unreachable",
                        "ZooKeeper: the session was lost after the write was sent (outcome unknown)",
                    ));
                }
            }
        }
    }

    /// Every member failed: the calls fail with `error`, a follower is lost (backoff).
    fn round_failed(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        self.tried = 0;
        for call in core::mem::take(&mut self.calls).into_keys() {
            out.push(Action::Failed { call, error: error.clone() });
        }
        if let Some(follow) = self.follow.as_mut() {
            follow.queued.clear();
            follow.serving.clear();
        }
        self.lose_follow(error, now_ms, out);
    }

    /// The follower lost its source: [`Action::Lost`], and a read again after its backoff.
    fn lose_follow(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        let started = self.started;
        let (Some(follow), Some(follower)) = (self.follow.as_mut(), self.follower.as_mut()) else { return };
        follow.reading = false;
        follow.dirty = false;
        if !started {
            return;
        }
        follow.lost = true;
        let retry_at = follower.disconnected(now_ms);
        follow.retry_at = Some(retry_at);
        out.push(Action::Lost { error, retry_at });
    }

    /// `unauthenticated`: not tried on another member.
    fn auth_failed(&mut self, message: String, now_ms: u64, out: &mut Vec<Action>) {
        if let Some(conn) = self.conn.take() {
            if conn.id != 0 {
                out.push(Action::Cancel { id: conn.id });
            }
        }
        self.round_failed(SourceError::new("unauthenticated", message), now_ms, out);
    }

    /// The session is open: the follower's read, and every call waiting.
    fn session_ready(&mut self, granted_ms: u64, now_ms: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conn.as_mut() else { return };
        conn.phase = Phase::Ready;
        conn.granted_ms = granted_ms;
        self.sessions += 1;
        self.tried = 0;
        let follow_wants = self.follow.as_ref().is_some_and(|f| self.started || !f.queued.is_empty());
        if follow_wants {
            if let Some(follow) = self.follow.as_mut() {
                follow.retry_at = None;
            }
            self.send_read(now_ms, out);
        }
        let waiting: Vec<u64> = self
            .calls
            .iter()
            .filter(|(_, c)| c.sent.is_none() && !matches!(c.kind, CallKind::Refresh))
            .map(|(n, _)| *n)
            .collect();
        for number in waiting {
            self.send_call(number, now_ms, out);
        }
    }

    /// One frame from the member.
    fn frame(&mut self, frame: &[u8], now_ms: u64, out: &mut Vec<Action>) {
        let Some(phase) = self.conn.as_ref().map(|c| c.phase) else { return };
        if phase == Phase::Handshake {
            match codec::decode_connect(frame) {
                Err(why) => {
                    let error = self.malformed(&why);
                    self.member_lost(error, now_ms, out);
                }
                Ok(granted) if granted.timeout_ms <= 0 => {
                    let error = SourceError::new(
                        "unreachable",
                        format!(
                            "{}: the member refused the session (it is behind zxid {:#x})",
                            self.where_(),
                            self.zxid
                        ),
                    );
                    self.member_lost(error, now_ms, out);
                }
                Ok(granted) => {
                    let granted_ms = granted.timeout_ms as u64;
                    if let (Some(user), Some(password)) = (&self.config.user, &self.config.password) {
                        let data = codec::auth_request(user, &password.0);
                        if let Some(conn) = self.conn.as_mut() {
                            conn.phase = Phase::Auth;
                            conn.granted_ms = granted_ms;
                        }
                        self.send(data, now_ms, out);
                    } else {
                        self.session_ready(granted_ms, now_ms, out);
                    }
                }
            }
            return;
        }
        let reply = match codec::decode_reply(frame) {
            Ok(reply) => reply,
            Err(why) => {
                let error = self.malformed(&why);
                return self.member_lost(error, now_ms, out);
            }
        };
        if phase == Phase::Auth {
            match reply {
                Reply::Auth { err: 0 } => {
                    let granted = self.conn.as_ref().map_or(0, |c| c.granted_ms);
                    self.session_ready(granted, now_ms, out);
                }
                Reply::Auth { err } => {
                    let message = format!("{}: {} (user {:?})", self.where_(), codec::describe(err), self.config.user);
                    self.auth_failed(message, now_ms, out);
                }
                Reply::Notification(n) if n.state == codec::state::AUTH_FAILED => {
                    let message = format!("{}: the authentication failed", self.where_());
                    self.auth_failed(message, now_ms, out);
                }
                Reply::Pong | Reply::Notification(_) => {}
                Reply::Answer { xid, .. } => {
                    let error = self.malformed(&format!("an answer to no request ({xid})"));
                    self.member_lost(error, now_ms, out);
                }
            }
            return;
        }
        match reply {
            Reply::Pong | Reply::Auth { .. } => {}
            Reply::Notification(n) if n.ends_session() => {
                if n.state == codec::state::AUTH_FAILED {
                    let message = format!("{}: the authentication failed", self.where_());
                    self.auth_failed(message, now_ms, out);
                } else {
                    let why =
                        if n.state == codec::state::EXPIRED { "the session expired" } else { "the session ended" };
                    let error =
                        SourceError::new("unreachable", format!("{}: {why} (state {})", self.where_(), n.state));
                    self.member_lost(error, now_ms, out);
                }
            }
            Reply::Notification(n) => {
                let ours = self.follow.as_ref().is_some_and(|f| n.changes(&f.path));
                if ours {
                    if let Some(follow) = self.follow.as_mut() {
                        follow.events += 1;
                    }
                    self.read(now_ms, out);
                }
            }
            Reply::Answer { xid, zxid, err, body } => {
                self.zxid = self.zxid.max(zxid);
                let purpose = self.conn.as_mut().and_then(|c| c.pending.remove(&xid));
                match purpose {
                    None => {
                        let error = self.malformed(&format!("an answer to no request ({xid})"));
                        self.member_lost(error, now_ms, out);
                    }
                    Some(purpose) if err != code::OK && class(err) == Class::Lost => {
                        let error =
                            SourceError::new("unreachable", format!("{}: {}", self.where_(), codec::describe(err)));
                        // Put back what the member lost, this request too.
                        if let Some(conn) = self.conn.as_mut() {
                            conn.pending.insert(xid, purpose);
                        }
                        self.member_lost(error, now_ms, out);
                    }
                    Some(Purpose::Read) => self.read_answer(zxid, err, &body, now_ms, out),
                    Some(Purpose::Exists) => self.exists_answer(err, &body, now_ms, out),
                    Some(Purpose::Call(number)) => self.call_answer(number, xid, zxid, err, &body, now_ms, out),
                }
            }
        }
    }

    // -- following --------------------------------------------------------------------------

    /// The follow policy's read: now, or one more after the read in flight; a session
    /// first when there is none.
    fn read(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        if follow.reading {
            follow.dirty = true;
            return;
        }
        self.send_read(now_ms, out);
    }

    /// `getData(path, watch)` on the session (one is opened first when there is none);
    /// it answers every refresh call queued.
    fn send_read(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        if !self.ready() {
            return self.ensure_conn(now_ms, out);
        }
        let watch = self.started;
        let Some(follow) = self.follow.as_mut() else { return };
        follow.reading = true;
        follow.dirty = false;
        follow.serving = core::mem::take(&mut follow.queued);
        let path = follow.path.clone();
        self.request(Purpose::Read, |xid| codec::get_data_request(xid, &path, watch), now_ms, out);
    }

    fn read_answer(&mut self, zxid: i64, err: i32, body: &[u8], now_ms: u64, out: &mut Vec<Action>) {
        let node = match err {
            code::OK => match codec::decode_data(body) {
                Ok(node) => Some(node),
                Err(why) => {
                    let error = self.malformed(&why);
                    return self.member_lost(error, now_ms, out);
                }
            },
            code::NONODE => None,
            _ => {
                let code = if class(err) == Class::Unauthenticated { "unauthenticated" } else { "invalid_argument" };
                let error = SourceError::new(code, format!("{}: {}", self.where_(), codec::describe(err)));
                return self.read_failed(error, now_ms, out);
            }
        };
        let started = self.started;
        let (Some(follow), Some(follower)) = (self.follow.as_mut(), self.follower.as_mut()) else { return };
        follow.reading = false;
        follow.reads += 1;
        let mut offered_value = Value::Null;
        let absent = node.is_none();
        if let Some(Node { data: Some(data), stat }) = node {
            if !data.is_empty() {
                let revision = zxid_u64(stat.mzxid);
                let offered = follower.offer_bytes(&data, revision, now_ms);
                let changed = matches!(offered, Offered::Installed { .. });
                let action = Action::Offered { offered, changed, revision };
                offered_value = action.to_value()["offered"]["result"].take();
                out.push(action);
            }
        }
        for call in core::mem::take(&mut follow.serving) {
            self.calls.remove(&call);
            out.push(Action::Done { call, result: json!({"offered": offered_value, "revision": rev(zxid_u64(zxid))}) });
        }
        if follow.lost {
            follow.lost = false;
            follow.retry_at = None;
            follower.connected();
        }
        if absent && started {
            // A watch for its creation.
            follow.reading = true;
            let path = follow.path.clone();
            self.request(Purpose::Exists, |xid| codec::exists_request(xid, &path, true), now_ms, out);
            return;
        }
        self.next_read(now_ms, out);
    }

    fn exists_answer(&mut self, err: i32, body: &[u8], now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        follow.reading = false;
        match err {
            code::OK => {
                if let Err(why) = codec::decode_stat(body) {
                    let error = self.malformed(&why);
                    return self.member_lost(error, now_ms, out);
                }
                // Created since the read: read it.
                follow.dirty = true;
            }
            code::NONODE => {}
            _ => {
                let code = if class(err) == Class::Unauthenticated { "unauthenticated" } else { "invalid_argument" };
                let error = SourceError::new(code, format!("{}: {}", self.where_(), codec::describe(err)));
                return self.read_failed(error, now_ms, out);
            }
        }
        self.next_read(now_ms, out);
    }

    /// A read ended: the one more the policy wants, else the one queued refresh calls
    /// wait for.
    fn next_read(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_ref() else { return };
        if !follow.reading && (follow.dirty || !follow.queued.is_empty()) {
            self.send_read(now_ms, out);
        }
    }

    /// A read refused (`NOAUTH`, ...): the refresh calls it answers fail, the follower is
    /// lost (backoff; the session stays).
    fn read_failed(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        follow.reading = false;
        for call in core::mem::take(&mut follow.serving) {
            self.calls.remove(&call);
            out.push(Action::Failed { call, error: error.clone() });
        }
        self.lose_follow(error, now_ms, out);
    }

    // -- calls ------------------------------------------------------------------------------

    /// Sends call `number`'s request for its stage.
    fn send_call(&mut self, number: u64, now_ms: u64, out: &mut Vec<Action>) {
        let auth = self.config.user.is_some();
        let Some(call) = self.calls.get(&number) else { return };
        let frame: Box<dyn FnOnce(i32) -> Vec<u8>> = match &call.kind {
            CallKind::Refresh => return,
            CallKind::Get { path } => {
                let path = path.clone();
                Box::new(move |xid| codec::get_data_request(xid, &path, false))
            }
            CallKind::Publish(publish) => {
                let path = publish.path.clone();
                match publish.stage {
                    Stage::Read | Stage::ReadBack => Box::new(move |xid| codec::get_data_request(xid, &path, false)),
                    Stage::Parent(at) => {
                        let parent = codec::parents(&path).get(at).cloned().unwrap_or_default();
                        Box::new(move |xid| codec::create_request(xid, &parent, b"", auth))
                    }
                    Stage::Write => {
                        let document = publish.written.as_ref().map_or_else(String::new, |(d, _)| d.clone());
                        match &publish.stored {
                            Some(stat) => {
                                let version = stat.version;
                                Box::new(move |xid| codec::set_data_request(xid, &path, document.as_bytes(), version))
                            }
                            None => Box::new(move |xid| codec::create_request(xid, &path, document.as_bytes(), auth)),
                        }
                    }
                }
            }
        };
        self.request(Purpose::Call(number), frame, now_ms, out);
    }

    fn server_error(&self, err: i32) -> SourceError {
        let code = match class(err) {
            Class::Unauthenticated => "unauthenticated",
            Class::Conflict => "conflict",
            _ => "invalid_argument",
        };
        SourceError::new(code, format!("{}: {}", self.where_(), codec::describe(err)))
    }

    #[allow(clippy::too_many_arguments)]
    fn call_answer(
        &mut self,
        number: u64,
        xid: i32,
        zxid: i64,
        err: i32,
        body: &[u8],
        now_ms: u64,
        out: &mut Vec<Action>,
    ) {
        // A call that ended (its deadline) or an old request of it: nothing to do.
        if self.calls.get(&number).is_none_or(|c| c.sent != Some(xid)) {
            return;
        }
        let Some(mut call) = self.calls.remove(&number) else { return };
        call.sent = None;
        let failed = |error: SourceError| Action::Failed { call: number, error };
        match call.kind {
            CallKind::Refresh => {}
            CallKind::Get { .. } => {
                let result = match err {
                    code::NONODE => Ok(json!({"value": null, "version": null, "mzxid": "0"})),
                    code::OK => match codec::decode_data(body) {
                        Ok(node) => Ok(node_value(&node)),
                        Err(why) => {
                            let error = self.malformed(&why);
                            self.calls.insert(number, call);
                            return self.member_lost(error, now_ms, out);
                        }
                    },
                    _ => Err(self.server_error(err)),
                };
                out.push(match result {
                    Ok(result) => Action::Done { call: number, result },
                    Err(error) => failed(error),
                });
            }
            CallKind::Publish(mut publish) => {
                let node = match (err, publish.stage) {
                    (code::OK, Stage::Read | Stage::ReadBack) => match codec::decode_data(body) {
                        Ok(node) => Some(node),
                        Err(why) => {
                            let error = self.malformed(&why);
                            call.kind = CallKind::Publish(publish);
                            self.calls.insert(number, call);
                            return self.member_lost(error, now_ms, out);
                        }
                    },
                    _ => None,
                };
                match self.publish_step(&mut publish, zxid, err, body, node, now_ms) {
                    Step::Done(result) => out.push(Action::Done { call: number, result }),
                    Step::Failed(error) => out.push(failed(error)),
                    Step::Next => {
                        call.kind = CallKind::Publish(publish);
                        self.calls.insert(number, call);
                        self.send_call(number, now_ms, out);
                    }
                }
            }
        }
    }

    /// What a publish's answer makes: the next stage, its result or its failure.
    fn publish_step(
        &self,
        publish: &mut PublishCall,
        zxid: i64,
        err: i32,
        body: &[u8],
        node: Option<Node>,
        now_ms: u64,
    ) -> Step {
        let epoch = || publish.written.as_ref().map_or(0, |(_, epoch)| *epoch);
        match publish.stage {
            Stage::Read => {
                if err != code::OK && err != code::NONODE {
                    return Step::Failed(self.server_error(err));
                }
                let mut follower = Follower::new(FollowerConfig::default());
                publish.stored = node.as_ref().map(|n| n.stat.clone());
                let data = node.and_then(|n| n.data).filter(|d| !d.is_empty());
                let Some(value) = data else {
                    return self.publish_write(publish, follower.publish(&publish.document));
                };
                let revision = publish.stored.as_ref().map_or(0, |s| zxid_u64(s.mzxid));
                match follower.offer_bytes(&value, revision, now_ms) {
                    Offered::Refused(refusal) if !publish.replace => Step::Failed(SourceError::new(
                        refusal.code(),
                        format!(
                            "publish: the document stored at {:?} is refused ({}); not overwritten; publish with \
                             replace to repair it",
                            publish.path,
                            refusal.message()
                        ),
                    )),
                    Offered::Refused(_) => {
                        let held = serde_json::from_slice::<Value>(&value)
                            .ok()
                            .and_then(|stored| stored.get("epoch").and_then(Value::as_u64));
                        let Some(held) = held else {
                            return Step::Failed(SourceError::new(
                                "invalid_argument",
                                format!(
                                    "publish: cannot tell the epoch followers hold of {:?} (ZooKeeper keeps no \
                                     history); not replaced",
                                    publish.path
                                ),
                            ));
                        };
                        match Router::from_json(&publish.document) {
                            Err(error) => Step::Failed(SourceError::core(&error)),
                            Ok(router) if router.epoch() <= held => Step::Failed(SourceError::core(&Error::new(
                                ErrorKind::StaleEpoch,
                                format!("publish: a replacement needs an epoch above {held}, not {}", router.epoch()),
                            ))),
                            Ok(router) => {
                                publish.written = Some((router.to_json(), router.epoch()));
                                publish.stage = Stage::Write;
                                Step::Next
                            }
                        }
                    }
                    _ => self.publish_write(publish, follower.publish(&publish.document)),
                }
            }
            Stage::Parent(at) => match err {
                code::OK | code::NODEEXISTS => {
                    publish.stage =
                        if at + 1 < codec::parents(&publish.path).len() { Stage::Parent(at + 1) } else { Stage::Write };
                    Step::Next
                }
                _ => Step::Failed(self.server_error(err)),
            },
            Stage::Write => match err {
                code::OK => {
                    let mzxid = match &publish.stored {
                        // setData: the new stat.
                        Some(_) => match codec::decode_stat(body) {
                            Ok(stat) => stat.mzxid,
                            Err(why) => return Step::Failed(self.malformed(&why)),
                        },
                        // create: the zxid of the creation.
                        None => zxid,
                    };
                    Step::Done(json!({"revision": rev(zxid_u64(mzxid)), "epoch": rev(epoch())}))
                }
                code::NONODE if publish.stored.is_none() && !publish.parents_done => {
                    publish.parents_done = true;
                    publish.stage =
                        if codec::parents(&publish.path).is_empty() { Stage::Write } else { Stage::Parent(0) };
                    Step::Next
                }
                code::NONODE | code::BADVERSION | code::NODEEXISTS => Step::Failed(conflict(publish)),
                _ => Step::Failed(self.server_error(err)),
            },
            Stage::ReadBack => {
                if err != code::OK && err != code::NONODE {
                    return Step::Failed(self.server_error(err));
                }
                let document = publish.written.as_ref().map_or("", |(d, _)| d.as_str());
                let blind = publish.blind_error.take().unwrap_or_else(|| conflict(publish));
                match (node, &publish.stored) {
                    (Some(node), _) if node.data.as_deref() == Some(document.as_bytes()) => {
                        Step::Done(json!({"revision": rev(zxid_u64(node.stat.mzxid)), "epoch": rev(epoch())}))
                    }
                    (Some(node), Some(stored)) if node.stat.version == stored.version => Step::Failed(blind),
                    (None, None) => Step::Failed(blind),
                    _ => Step::Failed(conflict(publish)),
                }
            }
        }
    }

    fn publish_write(&self, publish: &mut PublishCall, write: Result<crate::session::follower::Publish>) -> Step {
        match write {
            Ok(write) => {
                publish.written = Some((write.document, write.epoch));
                publish.stage = Stage::Write;
                Step::Next
            }
            Err(error) => Step::Failed(SourceError::core(&error)),
        }
    }
}

/// What a publish's answer makes.
enum Step {
    Done(Value),
    Failed(SourceError),
    Next,
}

fn conflict(publish: &PublishCall) -> SourceError {
    let epoch = publish.written.as_ref().map_or(0, |(_, epoch)| *epoch);
    SourceError::new(
        "conflict",
        format!("publish: {:?} changed since it was read (epoch {epoch} not written)", publish.path),
    )
}

/// A `get`'s result.
fn node_value(node: &Node) -> Value {
    let mut value = json!({"value": null, "version": node.stat.version, "mzxid": rev(zxid_u64(node.stat.mzxid))});
    if let Some(data) = &node.data {
        match core::str::from_utf8(data) {
            Ok(text) => value["value"] = Value::String(text.to_string()),
            Err(_) => value["value_b64"] = Value::String(crate::session::exchange::b64(data)),
        }
    }
    value
}

/// Two thirds of the session timeout granted: nothing heard for that long loses the member.
fn read_timeout(granted_ms: u64) -> u64 {
    (granted_ms * 2 / 3).max(1)
}

/// A third of the session timeout granted: nothing sent for that long sends a ping.
fn ping_every(granted_ms: u64) -> u64 {
    (granted_ms / 3).max(1)
}
