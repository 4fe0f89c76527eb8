//! Just enough of ZooKeeper's client protocol for `publish`, `watch` and `serve`, over
//! `std::net`: one session on one member, synchronous calls, and the data watch of one node.
//!
//! The protocol is jute records in frames: a 4-byte big-endian length and that many bytes.
//! Jute writes an int as 4 bytes big-endian, a long as 8, a bool as 1 byte, a buffer or
//! string as an int length and its bytes (-1: null), a vector as an int count and its items.
//! A session opens with a `ConnectRequest` answered by a `ConnectResponse`; then each
//! request is a `RequestHeader {xid, type}` and its record, each reply a
//! `ReplyHeader {xid, zxid, err}` and, when `err` is 0, its record. Two xids are the
//! server's own: -2 answers a ping, -1 carries a watch notification
//! (`WatcherEvent {type, state, path}`).
//!
//! The codec (the `*_request` encoders, [`Frames`], [`decode_connect`], [`decode_reply`],
//! the [`ERRORS`] table, [`next_step`]) is pure and decides; [`Session`] only moves bytes,
//! waits and keeps the time. Every session is new (`sessionId` 0): a lost or expired one
//! is answered by the caller with a new session and a new read, never resumed. No
//! authentication, chroot, TLS or multi-ops.

use std::collections::VecDeque;
use std::fmt;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::wire::MAX_BODY;

/// The session timeout asked for; the server grants one between 2 and 20 of its ticks.
/// A silent member is left after two thirds of it.
pub const SESSION_TIMEOUT_MS: i32 = 3_000;
/// The longest wait for a TCP connection and for the answer to the connect request (a
/// paused member takes the connection and answers nothing: the next is tried after it).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// The shortest time between pings, whatever the session timeout granted.
const MIN_PING_EVERY: Duration = Duration::from_millis(10);
/// ZooKeeper's port when a member names none.
const DEFAULT_PORT: u16 = 2181;

/// Request types (`ZooDefs.OpCode`).
mod op {
    pub const CREATE: i32 = 1;
    pub const EXISTS: i32 = 3;
    pub const GET_DATA: i32 = 4;
    pub const SET_DATA: i32 = 5;
    pub const PING: i32 = 11;
    pub const CLOSE_SESSION: i32 = -11;
}

/// The xid of a watch notification.
const XID_NOTIFICATION: i32 = -1;
/// The xid of a ping and of its answer.
const XID_PING: i32 = -2;

/// Watch event types (`Watcher.Event.EventType`).
pub mod event {
    /// No node event: a change of the session's state.
    pub const NONE: i32 = -1;
    pub const NODE_CREATED: i32 = 1;
    pub const NODE_DELETED: i32 = 2;
    pub const NODE_DATA_CHANGED: i32 = 3;
}

/// Session states a notification may carry (`Watcher.Event.KeeperState`).
mod state {
    pub const DISCONNECTED: i32 = 0;
    pub const EXPIRED: i32 = -112;
    pub const CLOSED: i32 = 7;
}

/// ACL permissions: read, write, create, delete, admin.
const PERMS_ALL: i32 = 31;

/// What an error code means here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The node does not exist (for a create: its parent).
    Absent,
    /// A compare-and-swap lost: the node changed or appeared since it was read.
    Conflict,
    /// The session or the member is lost: a new session (on the next member) may do.
    Lost,
    /// The server refuses the request as asked (arguments, ACLs); retrying will not help.
    Refused,
}

/// ZooKeeper's error codes (`KeeperException.Code`) this client tells apart: code, name,
/// class. Any other code is [`Class::Lost`] (`SYSTEMERROR` and the like: try again).
pub const ERRORS: &[(i32, &str, Class)] = &[
    (-4, "CONNECTIONLOSS", Class::Lost),
    (-7, "OPERATIONTIMEOUT", Class::Lost),
    (-8, "BADARGUMENTS", Class::Refused),
    (-101, "NONODE", Class::Absent),
    (-102, "NOAUTH", Class::Refused),
    (-103, "BADVERSION", Class::Conflict),
    (-110, "NODEEXISTS", Class::Conflict),
    (-112, "SESSIONEXPIRED", Class::Lost),
    (-114, "INVALIDACL", Class::Refused),
    (-118, "SESSIONMOVED", Class::Lost),
    (-119, "NOTREADONLY", Class::Lost),
];

/// A failed call.
#[derive(Debug)]
pub enum Error {
    /// The server answered the request with this error code.
    Server(i32),
    /// The member could not be reached, closed the connection, stopped answering, or sent
    /// something that is not ZooKeeper's protocol.
    Lost(String),
}

impl Error {
    /// What the error means ([`ERRORS`]).
    pub fn class(&self) -> Class {
        match self {
            Error::Server(code) => {
                ERRORS.iter().find(|(c, _, _)| c == code).map_or(Class::Lost, |&(_, _, class)| class)
            }
            Error::Lost(_) => Class::Lost,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Server(code) => match ERRORS.iter().find(|(c, _, _)| c == code) {
                Some((_, name, _)) => write!(f, "ZooKeeper answered {name} ({code})"),
                None => write!(f, "ZooKeeper answered error {code}"),
            },
            Error::Lost(why) => f.write_str(why),
        }
    }
}

// -- jute -------------------------------------------------------------------------------

/// A jute record being written.
#[derive(Default)]
struct Record(Vec<u8>);

impl Record {
    fn int(mut self, value: i32) -> Record {
        self.0.extend_from_slice(&value.to_be_bytes());
        self
    }

    fn long(mut self, value: i64) -> Record {
        self.0.extend_from_slice(&value.to_be_bytes());
        self
    }

    fn bool(mut self, value: bool) -> Record {
        self.0.push(u8::from(value));
        self
    }

    /// A buffer, or null (length -1). Callers keep buffers under [`MAX_BODY`].
    fn buffer(self, value: Option<&[u8]>) -> Record {
        match value {
            None => self.int(-1),
            Some(bytes) => {
                let mut record = self.int(bytes.len() as i32);
                record.0.extend_from_slice(bytes);
                record
            }
        }
    }

    fn string(self, value: &str) -> Record {
        self.buffer(Some(value.as_bytes()))
    }

    /// The record as one frame: its length, then its bytes.
    fn framed(self) -> Vec<u8> {
        let mut frame = Vec::with_capacity(4 + self.0.len());
        frame.extend_from_slice(&(self.0.len() as i32).to_be_bytes());
        frame.extend_from_slice(&self.0);
        frame
    }
}

/// A jute record being read; every length is checked against what is left of it.
struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err(format!("a record cut short in its {what}"));
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(taken)
    }

    fn int(&mut self, what: &str) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    fn long(&mut self, what: &str) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    fn bool(&mut self, what: &str) -> Result<bool, String> {
        Ok(self.take(1, what)?[0] != 0)
    }

    /// A buffer, `None` when null.
    fn buffer(&mut self, what: &str) -> Result<Option<&'a [u8]>, String> {
        match self.int(what)? {
            -1 => Ok(None),
            length if length < 0 => Err(format!("a negative length ({length}) for its {what}")),
            length => self.take(length as usize, what).map(Some),
        }
    }

    fn string(&mut self, what: &str) -> Result<String, String> {
        let bytes = self.buffer(what)?.unwrap_or_default();
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("its {what} is not UTF-8"))
    }
}

/// A node's metadata (`org.apache.zookeeper.data.Stat`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// The zxid of the change that created the node.
    pub czxid: i64,
    /// The zxid of the change that last wrote its data: the follower's revision.
    pub mzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    /// How many times its data was written: what `setData` compares.
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: i64,
}

impl Stat {
    fn read(fields: &mut Fields<'_>) -> Result<Stat, String> {
        Ok(Stat {
            czxid: fields.long("stat")?,
            mzxid: fields.long("stat")?,
            ctime: fields.long("stat")?,
            mtime: fields.long("stat")?,
            version: fields.int("stat")?,
            cversion: fields.int("stat")?,
            aversion: fields.int("stat")?,
            ephemeral_owner: fields.long("stat")?,
            data_length: fields.int("stat")?,
            num_children: fields.int("stat")?,
            pzxid: fields.long("stat")?,
        })
    }
}

// -- requests -----------------------------------------------------------------------------

/// `ConnectRequest`: protocol version 0, the last zxid seen (a member behind it refuses
/// the session), the timeout asked for, session 0 and a 16-byte zero password (a new
/// session), not read-only.
pub fn connect_request(last_zxid_seen: i64, timeout_ms: i32) -> Vec<u8> {
    Record::default().int(0).long(last_zxid_seen).int(timeout_ms).long(0).buffer(Some(&[0; 16])).bool(false).framed()
}

fn request(xid: i32, op: i32) -> Record {
    Record::default().int(xid).int(op)
}

/// `getData`: the node's data and stat, and with `watch` one notification of its next
/// change or deletion.
pub fn get_data_request(xid: i32, path: &str, watch: bool) -> Vec<u8> {
    request(xid, op::GET_DATA).string(path).bool(watch).framed()
}

/// `exists`: the node's stat, and with `watch` one notification of its next creation,
/// change or deletion (also when it does not exist).
pub fn exists_request(xid: i32, path: &str, watch: bool) -> Vec<u8> {
    request(xid, op::EXISTS).string(path).bool(watch).framed()
}

/// `setData` if the node's version is still `version` (else `BADVERSION`).
pub fn set_data_request(xid: i32, path: &str, data: &[u8], version: i32) -> Vec<u8> {
    request(xid, op::SET_DATA).string(path).buffer(Some(data)).int(version).framed()
}

/// `create`: a persistent node readable and writable by anyone (`world:anyone`, all
/// permissions); `NODEEXISTS` if it is there.
pub fn create_request(xid: i32, path: &str, data: &[u8]) -> Vec<u8> {
    request(xid, op::CREATE)
        .string(path)
        .buffer(Some(data))
        .int(1)
        .int(PERMS_ALL)
        .string("world")
        .string("anyone")
        .int(0)
        .framed()
}

/// A ping: keeps the session while nothing else is sent.
pub fn ping_request() -> Vec<u8> {
    request(XID_PING, op::PING).framed()
}

/// Ends the session at once (instead of when its timeout passes).
pub fn close_request(xid: i32) -> Vec<u8> {
    request(xid, op::CLOSE_SESSION).framed()
}

// -- replies ------------------------------------------------------------------------------

/// Splits a byte stream into frames. A length that is negative or over [`MAX_BODY`] is an
/// error as soon as its 4 bytes are in, before anything is allocated for it.
#[derive(Default)]
pub struct Frames {
    pending: Vec<u8>,
}

impl Frames {
    /// Bytes as they arrive.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next whole frame (without its length), `None` until all of it is in.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, String> {
        let Some(head) = self.pending.first_chunk::<4>() else {
            return Ok(None);
        };
        let length = i32::from_be_bytes(*head);
        if length < 0 || length as usize > MAX_BODY {
            return Err(format!("a frame of {length} bytes (at most {MAX_BODY})"));
        }
        let end = 4 + length as usize;
        if self.pending.len() < end {
            return Ok(None);
        }
        let frame = self.pending[4..end].to_vec();
        self.pending.drain(..end);
        Ok(Some(frame))
    }
}

/// A `ConnectResponse`.
#[derive(Debug, PartialEq, Eq)]
pub struct Connected {
    /// The session timeout granted.
    pub timeout_ms: i32,
    pub session_id: i64,
}

/// Reads a `ConnectResponse` (its trailing read-only flag is optional: older servers send
/// none). A timeout of 0 or less is a session refused.
pub fn decode_connect(frame: &[u8]) -> Result<Connected, String> {
    let mut fields = Fields { bytes: frame };
    let _protocol_version = fields.int("protocol version")?;
    let timeout_ms = fields.int("timeout")?;
    let session_id = fields.long("session id")?;
    let _password = fields.buffer("password")?;
    let _read_only = !fields.bytes.is_empty() && fields.bool("read-only flag")?;
    if timeout_ms <= 0 {
        return Err("the member refused the session (expired)".into());
    }
    Ok(Connected { timeout_ms, session_id })
}

/// A watch notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// An [`event`] type.
    pub kind: i32,
    /// The session's state (3: connected).
    pub state: i32,
    pub path: String,
}

impl Notification {
    /// A node event for `path` that asks for a new read (and a new watch): created,
    /// changed or deleted.
    pub fn changes(&self, path: &str) -> bool {
        self.path == path && matches!(self.kind, event::NODE_CREATED | event::NODE_DATA_CHANGED | event::NODE_DELETED)
    }

    /// A change of state that ends the session.
    pub fn ends_session(&self) -> bool {
        self.kind == event::NONE && matches!(self.state, state::DISCONNECTED | state::EXPIRED | state::CLOSED)
    }
}

/// A frame from the server after the connect response.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// The answer to request `xid`: its record when `err` is 0.
    Answer { xid: i32, zxid: i64, err: i32, body: Vec<u8> },
    /// The answer to a ping.
    Pong,
    /// A watch fired.
    Notification(Notification),
}

/// Reads a reply: its header, then what the xid says follows.
pub fn decode_reply(frame: &[u8]) -> Result<Reply, String> {
    let mut fields = Fields { bytes: frame };
    let xid = fields.int("reply header")?;
    let zxid = fields.long("reply header")?;
    let err = fields.int("reply header")?;
    match xid {
        XID_PING => Ok(Reply::Pong),
        XID_NOTIFICATION => Ok(Reply::Notification(Notification {
            kind: fields.int("event")?,
            state: fields.int("event")?,
            path: fields.string("event path")?,
        })),
        _ => Ok(Reply::Answer { xid, zxid, err, body: fields.bytes.to_vec() }),
    }
}

/// A node as `getData` reads it.
#[derive(Debug)]
pub struct Node {
    /// Its data, `None` when null.
    pub data: Option<Vec<u8>>,
    pub stat: Stat,
}

/// A `getData` answer: the data (`None` when null) and the stat.
pub fn decode_data(body: &[u8]) -> Result<Node, String> {
    let mut fields = Fields { bytes: body };
    let data = fields.buffer("data")?.map(<[u8]>::to_vec);
    Ok(Node { data, stat: Stat::read(&mut fields)? })
}

/// An `exists` or `setData` answer: the stat.
pub fn decode_stat(body: &[u8]) -> Result<Stat, String> {
    Stat::read(&mut Fields { bytes: body })
}

/// What a waiting session does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing was heard for the read timeout (two thirds of the session): the member is lost.
    Lost,
    /// Nothing was sent for `ping_every`: send a ping.
    Ping,
    /// Wait for a frame until then.
    Wait(Instant),
}

/// Decides, from the last times something was sent and heard: a member silent for the
/// session `timeout` is lost; a session silent on our side for `ping_every` is pinged.
pub fn next_step(now: Instant, sent: Instant, heard: Instant, ping_every: Duration, timeout: Duration) -> Step {
    if now.saturating_duration_since(heard) >= timeout {
        Step::Lost
    } else if now.saturating_duration_since(sent) >= ping_every {
        Step::Ping
    } else {
        Step::Wait((sent + ping_every).min(heard + timeout))
    }
}

/// `host:port`, `host` (port 2181) or `[v6]:port` taken apart.
pub fn parse_host(member: &str) -> Result<(String, u16), String> {
    let member = member.trim();
    let (host, port) = match member.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || (host.starts_with('[') && host.ends_with(']')) => {
            (host, port.parse::<u16>().map_err(|_| format!("{member}: bad port {port:?}"))?)
        }
        _ => (member, DEFAULT_PORT),
    };
    let host = host.trim_matches(['[', ']']);
    if host.is_empty() {
        return Err(format!("{member:?}: no host"));
    }
    Ok((host.to_string(), port))
}

/// An absolute node path as ZooKeeper takes it: `/`, or `/`-separated names, none empty,
/// `.` or `..`, no trailing `/`.
pub fn check_path(path: &str) -> Result<(), String> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!("{path:?}: a ZooKeeper path starts with /"));
    };
    if rest.is_empty() {
        return Ok(());
    }
    if rest.split('/').any(|name| name.is_empty() || name == "." || name == "..") || path.contains('\0') {
        return Err(format!("{path:?}: not a ZooKeeper path (empty, . or .. names)"));
    }
    Ok(())
}

// -- the session ----------------------------------------------------------------------------

/// One session on one member.
pub struct Session {
    member: String,
    stream: TcpStream,
    frames: Frames,
    next_xid: i32,
    timeout: Duration,
    /// The largest zxid a reply carried: the next session's `lastZxidSeen`.
    zxid: i64,
    sent: Instant,
    heard: Instant,
    notifications: VecDeque<Notification>,
}

impl Session {
    /// Opens a new session on `member`, telling it the last zxid seen.
    pub fn open(member: &str, last_zxid_seen: i64) -> Result<Session, Error> {
        let lost = |why: String| Error::Lost(format!("{member}: {why}"));
        let (host, port) = parse_host(member).map_err(Error::Lost)?;
        let addresses: Vec<SocketAddr> =
            (host.as_str(), port).to_socket_addrs().map_err(|err| lost(err.to_string()))?.collect();
        let mut failed = "no address".to_string();
        let mut connected = None;
        for address in addresses {
            match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    connected = Some(stream);
                    break;
                }
                Err(err) => failed = err.to_string(),
            }
        }
        let stream = connected.ok_or_else(|| lost(failed))?;
        let _ = stream.set_nodelay(true);
        let now = Instant::now();
        let mut session = Session {
            member: member.to_string(),
            stream,
            frames: Frames::default(),
            next_xid: 1,
            timeout: CONNECT_TIMEOUT,
            zxid: last_zxid_seen,
            sent: now,
            heard: now,
            notifications: VecDeque::new(),
        };
        session.send(&connect_request(last_zxid_seen, SESSION_TIMEOUT_MS))?;
        let frame = session
            .frame(now + CONNECT_TIMEOUT)?
            .ok_or_else(|| lost(format!("no answer to the connect request in {} ms", CONNECT_TIMEOUT.as_millis())))?;
        let granted = decode_connect(&frame).map_err(lost)?;
        // Lost when silent for two thirds of the session granted, as the C client and
        // kazoo read it: the member is left while the session can still move elsewhere.
        session.timeout = Duration::from_millis(granted.timeout_ms as u64 * 2 / 3);
        Ok(session)
    }

    /// Opens a session on the first of `members` that grants one, in turn.
    pub fn open_any(members: &[String], last_zxid_seen: i64) -> Result<Session, Error> {
        let mut failures = Vec::new();
        for member in members {
            match Session::open(member, last_zxid_seen) {
                Ok(session) => return Ok(session),
                Err(err) => failures.push(err.to_string()),
            }
        }
        Err(Error::Lost(failures.join("; ")))
    }

    /// The session timeout the member granted.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The largest zxid seen in this session (or the one it was opened with).
    pub fn zxid(&self) -> i64 {
        self.zxid
    }

    fn lost(&self, why: impl fmt::Display) -> Error {
        Error::Lost(format!("{}: {why}", self.member))
    }

    fn send(&mut self, frame: &[u8]) -> Result<(), Error> {
        self.stream.write_all(frame).map_err(|err| self.lost(err))?;
        self.sent = Instant::now();
        Ok(())
    }

    /// The next frame, or `None` if none is whole by `until`.
    fn frame(&mut self, until: Instant) -> Result<Option<Vec<u8>>, Error> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(frame) = self.frames.next_frame().map_err(|why| self.lost(why))? {
                return Ok(Some(frame));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream.set_read_timeout(Some(left)).map_err(|err| self.lost(err))?;
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(self.lost("the member closed the connection")),
                Ok(n) => {
                    self.heard = Instant::now();
                    self.frames.push(&chunk[..n]);
                }
                Err(err)
                    if matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(err) => return Err(self.lost(err)),
            }
        }
    }

    /// The next reply, or `None` if none came by `until`. Notifications are queued.
    fn reply(&mut self, until: Instant) -> Result<Option<Reply>, Error> {
        let Some(frame) = self.frame(until)? else {
            return Ok(None);
        };
        let reply = decode_reply(&frame).map_err(|why| self.lost(why))?;
        if let Reply::Answer { zxid, .. } = reply {
            self.zxid = self.zxid.max(zxid);
        }
        Ok(Some(reply))
    }

    /// Sends `frame` (request `xid`) and waits up to the read timeout for its answer.
    fn call(&mut self, xid: i32, frame: &[u8]) -> Result<(i64, Vec<u8>), Error> {
        self.send(frame)?;
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.reply(deadline)? {
                None => return Err(self.lost(format!("no answer in {} ms", self.timeout.as_millis()))),
                Some(Reply::Answer { xid: answered, zxid, err, body }) if answered == xid => {
                    return if err == 0 { Ok((zxid, body)) } else { Err(Error::Server(err)) };
                }
                Some(Reply::Answer { xid: answered, .. }) => {
                    return Err(self.lost(format!("an answer to request {answered}, not {xid}")))
                }
                Some(Reply::Notification(notification)) => self.notifications.push_back(notification),
                Some(Reply::Pong) => {}
            }
        }
    }

    fn xid(&mut self) -> i32 {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.checked_add(1).unwrap_or(1);
        xid
    }

    /// The node's data (`None` when null) and stat; `None` when there is no node.
    pub fn get_data(&mut self, path: &str, watch: bool) -> Result<Option<Node>, Error> {
        let xid = self.xid();
        match self.call(xid, &get_data_request(xid, path, watch)) {
            Ok((_, body)) => decode_data(&body).map(Some).map_err(|why| self.lost(why)),
            Err(err) if err.class() == Class::Absent => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The node's stat, `None` when there is no node.
    pub fn exists(&mut self, path: &str, watch: bool) -> Result<Option<Stat>, Error> {
        let xid = self.xid();
        match self.call(xid, &exists_request(xid, path, watch)) {
            Ok((_, body)) => decode_stat(&body).map(Some).map_err(|why| self.lost(why)),
            Err(err) if err.class() == Class::Absent => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Writes `data` if the node is still at `version`; its new stat.
    pub fn set_data(&mut self, path: &str, data: &[u8], version: i32) -> Result<Stat, Error> {
        let xid = self.xid();
        let (_, body) = self.call(xid, &set_data_request(xid, path, data, version))?;
        decode_stat(&body).map_err(|why| self.lost(why))
    }

    /// Creates the node with `data`; the zxid of the creation (the node's `mzxid`).
    pub fn create(&mut self, path: &str, data: &[u8]) -> Result<i64, Error> {
        let xid = self.xid();
        self.call(xid, &create_request(xid, path, data)).map(|(zxid, _)| zxid)
    }

    /// Waits for the next watch notification, pinging when nothing was sent for
    /// `ping_every`; the member is lost when nothing is heard for the read timeout, and
    /// the session when a notification says so.
    pub fn notification(&mut self, ping_every: Duration) -> Result<Notification, Error> {
        let ping_every = ping_every.max(MIN_PING_EVERY);
        loop {
            if let Some(notification) = self.notifications.pop_front() {
                if notification.ends_session() {
                    return Err(self.lost(format!("the session ended (state {})", notification.state)));
                }
                return Ok(notification);
            }
            match next_step(Instant::now(), self.sent, self.heard, ping_every, self.timeout) {
                Step::Lost => return Err(self.lost(format!("no answer to pings in {} ms", self.timeout.as_millis()))),
                Step::Ping => self.send(&ping_request())?,
                Step::Wait(until) => match self.reply(until)? {
                    Some(Reply::Notification(notification)) => self.notifications.push_back(notification),
                    Some(Reply::Pong) | None => {}
                    Some(Reply::Answer { xid, .. }) => {
                        return Err(self.lost(format!("an answer to no request ({xid})")))
                    }
                },
            }
        }
    }

    /// Ends the session (best effort: the member would end it after its timeout anyway).
    pub fn close(mut self) {
        let xid = self.xid();
        if self.send(&close_request(xid)).is_ok() {
            let _ = self.reply(Instant::now() + Duration::from_millis(500));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hex, spaces ignored.
    fn bytes(hex: &str) -> Vec<u8> {
        let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap()).collect()
    }

    #[test]
    fn the_connect_request_is_45_bytes_of_jute() {
        let expected = bytes(
            "0000002d\
             00000000\
             0000000000000102\
             00002710\
             0000000000000000\
             00000010 00000000000000000000000000000000\
             00",
        );
        assert_eq!(connect_request(0x102, 10_000), expected);
    }

    #[test]
    fn requests_are_a_header_and_their_record() {
        // getData(xid 7, "/a", watch): length 15 = 4 xid + 4 type + 4+2 path + 1 bool.
        assert_eq!(get_data_request(7, "/a", true), bytes("0000000f 00000007 00000004 00000002 2f61 01"));
        assert_eq!(exists_request(8, "/a", false), bytes("0000000f 00000008 00000003 00000002 2f61 00"));
        // setData(xid 9, "/a", "xy", version 3): 4+4 + 6 path + 4+2 data + 4 version = 24.
        assert_eq!(
            set_data_request(9, "/a", b"xy", 3),
            bytes("00000018 00000009 00000005 00000002 2f61 00000002 7879 00000003")
        );
        // create: path, data, one ACL (perms 31, "world", "anyone"), flags 0 (persistent).
        assert_eq!(
            create_request(1, "/a", b"x"),
            bytes(
                "00000032 00000001 00000001 00000002 2f61 00000001 78 \
                 00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65 00000000"
            )
        );
        assert_eq!(ping_request(), bytes("00000008 fffffffe 0000000b"));
        assert_eq!(close_request(4), bytes("00000008 00000004 fffffff5"));
    }

    #[test]
    fn null_and_empty_buffers_differ() {
        assert_eq!(Record::default().buffer(None).0, bytes("ffffffff"));
        assert_eq!(Record::default().buffer(Some(b"")).0, bytes("00000000"));
        let mut fields = Fields { bytes: &bytes("ffffffff 00000000") };
        assert_eq!(fields.buffer("data"), Ok(None));
        assert_eq!(fields.buffer("data"), Ok(Some(&b""[..])));
        let mut fields = Fields { bytes: &bytes("fffffffe") };
        assert!(fields.buffer("data").unwrap_err().contains("negative"));
        let mut fields = Fields { bytes: &bytes("00000005 6162") };
        assert!(fields.buffer("data").unwrap_err().contains("cut short"));
    }

    #[test]
    fn connect_responses() {
        // protocol 0, timeout 4000, session 0x0100000abc, 16-byte password, read-only false.
        let frame = bytes("00000000 00000fa0 000000010000 0abc 00000010 0102030405060708090a0b0c0d0e0f10 00");
        assert_eq!(decode_connect(&frame), Ok(Connected { timeout_ms: 4000, session_id: 0x01_0000_0abc }));
        // Without the trailing flag (older servers) too.
        assert!(decode_connect(&frame[..frame.len() - 1]).is_ok());
        // A refused (expired) session: timeout 0.
        let refused = bytes("00000000 00000000 0000000000000000 00000010 00000000000000000000000000000000");
        assert!(decode_connect(&refused).unwrap_err().contains("refused"));
        assert!(decode_connect(&bytes("00000000 0000")).is_err());
    }

    fn stat_bytes() -> Vec<u8> {
        bytes(
            "0000000000000010 0000000000000020 0000000000000001 0000000000000002 \
             00000005 00000000 00000000 0000000000000000 00000002 00000000 0000000000000010",
        )
    }

    #[test]
    fn replies() {
        // getData's answer: header (xid 3, zxid 0x20, err 0), data "ok", stat.
        let mut frame = bytes("00000003 0000000000000020 00000000 00000002 6f6b");
        frame.extend(stat_bytes());
        let Reply::Answer { xid: 3, zxid: 0x20, err: 0, body } = decode_reply(&frame).unwrap() else { panic!() };
        let Node { data, stat } = decode_data(&body).unwrap();
        assert_eq!(data.as_deref(), Some(&b"ok"[..]));
        assert_eq!((stat.czxid, stat.mzxid, stat.version, stat.data_length, stat.pzxid), (0x10, 0x20, 5, 2, 0x10));
        assert!(decode_data(&body[..body.len() - 1]).is_err(), "a stat cut short");

        // An error answer: BADVERSION, no record.
        let frame = bytes("00000004 0000000000000021 ffffff99");
        let Reply::Answer { xid: 4, err, body, .. } = decode_reply(&frame).unwrap() else { panic!() };
        assert!(body.is_empty());
        assert_eq!(err, -103);
        assert_eq!(Error::Server(err).class(), Class::Conflict);
        assert_eq!(Error::Server(err).to_string(), "ZooKeeper answered BADVERSION (-103)");

        // A pong, and a notification: NodeDataChanged (3), SyncConnected (3), "/a".
        assert_eq!(decode_reply(&bytes("fffffffe 0000000000000021 00000000")), Ok(Reply::Pong));
        let frame = bytes("ffffffff ffffffffffffffff 00000000 00000003 00000003 00000002 2f61");
        let Reply::Notification(notification) = decode_reply(&frame).unwrap() else { panic!() };
        assert_eq!(notification, Notification { kind: 3, state: 3, path: "/a".into() });
        assert!(notification.changes("/a") && !notification.changes("/b") && !notification.ends_session());
        let expired = Notification { kind: event::NONE, state: -112, path: String::new() };
        assert!(expired.ends_session() && !expired.changes(""));
        assert!(decode_reply(&bytes("00000001 00")).is_err());
    }

    #[test]
    fn the_error_table_classifies_each_code_once() {
        for (code, class) in [(-101, Class::Absent), (-103, Class::Conflict), (-110, Class::Conflict)] {
            assert_eq!(Error::Server(code).class(), class);
        }
        for code in [-4, -112, -1, -999] {
            assert_eq!(Error::Server(code).class(), Class::Lost, "{code}");
        }
        assert_eq!(Error::Server(-102).class(), Class::Refused);
        let mut codes: Vec<i32> = ERRORS.iter().map(|(code, _, _)| *code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ERRORS.len());
    }

    #[test]
    fn frames_are_split_whatever_the_reads_and_bounded_before_allocation() {
        let mut frames = Frames::default();
        let stream = [ping_request(), get_data_request(1, "/a", true)].concat();
        for &byte in &stream[..stream.len() - 1] {
            frames.push(&[byte]);
        }
        assert_eq!(frames.next_frame(), Ok(Some(ping_request()[4..].to_vec())));
        assert_eq!(frames.next_frame(), Ok(None), "one byte missing");
        frames.push(&stream[stream.len() - 1..]);
        assert_eq!(frames.next_frame(), Ok(Some(get_data_request(1, "/a", true)[4..].to_vec())));
        assert_eq!(frames.next_frame(), Ok(None));

        for head in ["ffffffff", "7fffffff", &format!("{:08x}", MAX_BODY + 1)] {
            let mut frames = Frames::default();
            frames.push(&bytes(head));
            assert!(frames.next_frame().unwrap_err().contains("a frame of"), "{head}");
        }
    }

    #[test]
    fn a_waiting_session_pings_then_gives_the_member_up() {
        let (ping, timeout) = (Duration::from_millis(1000), Duration::from_millis(4000));
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        assert_eq!(next_step(at(500), t0, t0, ping, timeout), Step::Wait(at(1000)));
        assert_eq!(next_step(at(1000), t0, t0, ping, timeout), Step::Ping);
        assert_eq!(next_step(at(3500), at(3000), t0, ping, timeout), Step::Wait(at(4000)));
        assert_eq!(next_step(at(4000), at(3000), t0, ping, timeout), Step::Lost);
        assert_eq!(next_step(at(4000), at(3000), at(3100), ping, timeout), Step::Ping);
    }

    #[test]
    fn members_and_paths() {
        assert_eq!(parse_host("zk1:2182"), Ok(("zk1".into(), 2182)));
        assert_eq!(parse_host(" zk1 "), Ok(("zk1".into(), 2181)));
        assert_eq!(parse_host("[::1]:2181"), Ok(("::1".into(), 2181)));
        assert_eq!(parse_host("::1"), Ok(("::1".into(), 2181)));
        assert!(parse_host("zk:x").is_err());
        assert!(parse_host(":2181").is_err());
        for good in ["/", "/a", "/a/b.c", "/shardroute/topology"] {
            assert_eq!(check_path(good), Ok(()), "{good}");
        }
        for bad in ["", "a", "/a/", "//a", "/a/./b", "/.."] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }
}
