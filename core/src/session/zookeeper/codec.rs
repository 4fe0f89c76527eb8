//! Just enough of ZooKeeper's client protocol for a follower and a publisher, written
//! once (it was the CLI's): pure encoders and decoders, no I/O.
//!
//! The protocol is jute records in frames: a 4-byte big-endian length and that many bytes.
//! Jute writes an int as 4 bytes big-endian, a long as 8, a bool as 1 byte, a buffer or
//! string as an int length and its bytes (-1: null), a vector as an int count and its items.
//! A session opens with a `ConnectRequest` answered by a `ConnectResponse`; then each
//! request is a `RequestHeader {xid, type}` and its record, each reply a
//! `ReplyHeader {xid, zxid, err}` and, when `err` is 0, its record. Three xids are the
//! server's own: -2 answers a ping, -4 an authentication, and -1 carries a watch
//! notification (`WatcherEvent {type, state, path}`).
//!
//! Every session is new (`sessionId` 0). Every decoder takes what the network gave and
//! never panics; a frame longer than [`MAX_ANSWER_BYTES`] (or of a negative length) is
//! refused from its 4-byte head, before its body is buffered. The reply encoders
//! (`connect_response`, `reply`, ...) are the server's side, for tests and vectors; the
//! unit tests check them against bytes captured from a real ZooKeeper 3.8.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::limits::MAX_ANSWER_BYTES;

/// ZooKeeper's port when a member names none.
pub const DEFAULT_PORT: u16 = 2181;

/// Request types (`ZooDefs.OpCode`).
pub mod op {
    /// `create`.
    pub const CREATE: i32 = 1;
    /// `exists`.
    pub const EXISTS: i32 = 3;
    /// `getData`.
    pub const GET_DATA: i32 = 4;
    /// `setData`.
    pub const SET_DATA: i32 = 5;
    /// A ping.
    pub const PING: i32 = 11;
    /// `auth`.
    pub const AUTH: i32 = 100;
    /// `closeSession`.
    pub const CLOSE_SESSION: i32 = -11;
}

/// The xid of a watch notification.
pub const XID_NOTIFICATION: i32 = -1;
/// The xid of a ping and of its answer.
pub const XID_PING: i32 = -2;
/// The xid of an authentication and of its answer.
pub const XID_AUTH: i32 = -4;

/// Watch event types (`Watcher.Event.EventType`).
pub mod event {
    /// No node event: a change of the session's state.
    pub const NONE: i32 = -1;
    /// The node was created.
    pub const NODE_CREATED: i32 = 1;
    /// The node was deleted.
    pub const NODE_DELETED: i32 = 2;
    /// The node's data changed.
    pub const NODE_DATA_CHANGED: i32 = 3;
}

/// Session states a notification may carry (`Watcher.Event.KeeperState`).
pub mod state {
    /// Disconnected.
    pub const DISCONNECTED: i32 = 0;
    /// Connected.
    pub const SYNC_CONNECTED: i32 = 3;
    /// Authentication failed.
    pub const AUTH_FAILED: i32 = 4;
    /// The session expired.
    pub const EXPIRED: i32 = -112;
    /// Closed.
    pub const CLOSED: i32 = 7;
}

/// Error codes (`KeeperException.Code`) the session tells apart.
pub mod code {
    /// No error.
    pub const OK: i32 = 0;
    /// The node does not exist (for a create: its parent).
    pub const NONODE: i32 = -101;
    /// Not authorized by the node's ACL.
    pub const NOAUTH: i32 = -102;
    /// A compare-and-swap on the version lost.
    pub const BADVERSION: i32 = -103;
    /// The node exists already.
    pub const NODEEXISTS: i32 = -110;
    /// The session expired.
    pub const SESSIONEXPIRED: i32 = -112;
    /// The authentication was refused.
    pub const AUTHFAILED: i32 = -115;
}

/// ACL permissions: read, write, create, delete, admin.
pub const PERMS_ALL: i32 = 31;

/// What an error code means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The node does not exist (for a create: its parent).
    Absent,
    /// A compare-and-swap lost: the node changed or appeared since it was read.
    Conflict,
    /// The session or the member is lost: a new session (on the next member) may do.
    Lost,
    /// Not authorized (`NOAUTH`, `AUTHFAILED`): `unauthenticated`, not retried elsewhere.
    Unauthenticated,
    /// The server refuses the request as asked (arguments, ACLs); retrying will not help.
    Refused,
}

/// ZooKeeper's error codes this session tells apart: code, name, class. Any other code
/// is [`Class::Lost`] (`SYSTEMERROR` and the like: try again elsewhere).
pub const ERRORS: &[(i32, &str, Class)] = &[
    (-4, "CONNECTIONLOSS", Class::Lost),
    (-7, "OPERATIONTIMEOUT", Class::Lost),
    (-8, "BADARGUMENTS", Class::Refused),
    (-101, "NONODE", Class::Absent),
    (-102, "NOAUTH", Class::Unauthenticated),
    (-103, "BADVERSION", Class::Conflict),
    (-108, "NOTEMPTY", Class::Refused),
    (-110, "NODEEXISTS", Class::Conflict),
    (-112, "SESSIONEXPIRED", Class::Lost),
    (-114, "INVALIDACL", Class::Refused),
    (-115, "AUTHFAILED", Class::Unauthenticated),
    (-118, "SESSIONMOVED", Class::Lost),
    (-119, "NOTREADONLY", Class::Lost),
];

/// The class of an error code ([`ERRORS`]).
pub fn class(err: i32) -> Class {
    ERRORS.iter().find(|(c, _, _)| *c == err).map_or(Class::Lost, |&(_, _, class)| class)
}

/// `ZooKeeper answered NAME (code)`.
pub fn describe(err: i32) -> String {
    match ERRORS.iter().find(|(c, _, _)| *c == err) {
        Some((_, name, _)) => format!("ZooKeeper answered {name} ({err})"),
        None => format!("ZooKeeper answered error {err}"),
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

    /// A buffer, or null (length -1). A buffer over `i32::MAX` bytes is written with
    /// length `i32::MAX` (never sent: documents are far below).
    fn buffer(self, value: Option<&[u8]>) -> Record {
        match value {
            None => self.int(-1),
            Some(bytes) => {
                let mut record = self.int(i32::try_from(bytes.len()).unwrap_or(i32::MAX));
                record.0.extend_from_slice(bytes);
                record
            }
        }
    }

    fn string(self, value: &str) -> Record {
        self.buffer(Some(value.as_bytes()))
    }

    fn bytes(mut self, value: &[u8]) -> Record {
        self.0.extend_from_slice(value);
        self
    }

    /// The record as one frame: its length, then its bytes.
    fn framed(self) -> Vec<u8> {
        let mut frame = Vec::with_capacity(4 + self.0.len());
        frame.extend_from_slice(&i32::try_from(self.0.len()).unwrap_or(i32::MAX).to_be_bytes());
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
        let raw = self.take(4, what)?;
        Ok(i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    fn long(&mut self, what: &str) -> Result<i64, String> {
        let raw = self.take(8, what)?;
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(raw);
        Ok(i64::from_be_bytes(bytes))
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
    /// When it was created (ms since the epoch).
    pub ctime: i64,
    /// When its data was last written.
    pub mtime: i64,
    /// How many times its data was written: what `setData` compares.
    pub version: i32,
    /// Changes to its children.
    pub cversion: i32,
    /// Changes to its ACL.
    pub aversion: i32,
    /// The session of an ephemeral node (0: persistent).
    pub ephemeral_owner: i64,
    /// The length of its data.
    pub data_length: i32,
    /// How many children it has.
    pub num_children: i32,
    /// The zxid of the last change to its children.
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

    /// The stat as jute (the server's side).
    pub fn encode(&self) -> Vec<u8> {
        Record::default()
            .long(self.czxid)
            .long(self.mzxid)
            .long(self.ctime)
            .long(self.mtime)
            .int(self.version)
            .int(self.cversion)
            .int(self.aversion)
            .long(self.ephemeral_owner)
            .int(self.data_length)
            .int(self.num_children)
            .long(self.pzxid)
            .0
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

/// `create`: a persistent node with one ACL, all permissions: `world:anyone`, or with
/// `auth` the `auth` scheme (the authenticated user only); `NODEEXISTS` if it is there.
pub fn create_request(xid: i32, path: &str, data: &[u8], auth: bool) -> Vec<u8> {
    let (scheme, id) = if auth { ("auth", "") } else { ("world", "anyone") };
    request(xid, op::CREATE)
        .string(path)
        .buffer(Some(data))
        .int(1)
        .int(PERMS_ALL)
        .string(scheme)
        .string(id)
        .int(0)
        .framed()
}

/// `AuthPacket {type 0, scheme "digest", auth "user:password"}`.
pub fn auth_request(user: &str, password: &str) -> Vec<u8> {
    let auth = format!("{user}:{password}");
    request(XID_AUTH, op::AUTH).int(0).string("digest").string(&auth).framed()
}

/// A ping: keeps the session while nothing else is sent.
pub fn ping_request() -> Vec<u8> {
    request(XID_PING, op::PING).framed()
}

/// Ends the session at once (instead of when its timeout passes).
pub fn close_request(xid: i32) -> Vec<u8> {
    request(xid, op::CLOSE_SESSION).framed()
}

// -- replies (the server's side: tests and vectors) ----------------------------------------

/// A `ConnectResponse` frame: protocol 0, `timeout_ms` granted, the session id, its
/// 16-byte password, not read-only.
pub fn connect_response(timeout_ms: i32, session_id: i64, password: &[u8; 16]) -> Vec<u8> {
    Record::default().int(0).int(timeout_ms).long(session_id).buffer(Some(password)).bool(false).framed()
}

/// A reply frame: its header and `body` (a record, or nothing for an error).
pub fn reply(xid: i32, zxid: i64, err: i32, body: &[u8]) -> Vec<u8> {
    Record::default().int(xid).long(zxid).int(err).bytes(body).framed()
}

/// A `getData` answer's record: the data (`None`: null) and the stat.
pub fn data_body(data: Option<&[u8]>, stat: &Stat) -> Vec<u8> {
    let mut record = Record::default().buffer(data);
    record.0.extend_from_slice(&stat.encode());
    record.0
}

/// A `create` answer's record: the path created.
pub fn path_body(path: &str) -> Vec<u8> {
    Record::default().string(path).0
}

/// A watch notification frame (xid -1, zxid -1).
pub fn notification(kind: i32, state: i32, path: &str) -> Vec<u8> {
    Record::default().int(XID_NOTIFICATION).long(-1).int(0).int(kind).int(state).string(path).framed()
}

// -- decoding -------------------------------------------------------------------------------

/// Splits a byte stream into frames. A length that is negative or over
/// [`MAX_ANSWER_BYTES`] is an error as soon as its 4 bytes are in, before anything is
/// buffered for its body.
#[derive(Clone, Debug, Default)]
pub struct Frames {
    pending: Vec<u8>,
    /// Where the next frame starts in `pending` (frames taken are drained lazily).
    start: usize,
}

impl Frames {
    /// Bytes as they arrive (one read of the shell's). Fails, and keeps nothing, as soon
    /// as a frame's head is refused: its body is never gathered.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        if self.start > 0 {
            self.pending.drain(..self.start);
            self.start = 0;
        }
        self.pending.extend_from_slice(bytes);
        self.check()
    }

    /// Refuses the first head that is out of bounds among the complete heads held.
    fn check(&mut self) -> Result<(), String> {
        let mut at = self.start;
        while let Some(head) = self.pending.get(at..at + 4) {
            let length = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            if length < 0 || length as u64 > MAX_ANSWER_BYTES {
                self.pending = Vec::new();
                self.start = 0;
                return Err(format!("a frame of {length} bytes (at most {MAX_ANSWER_BYTES})"));
            }
            at += 4 + length as usize;
        }
        Ok(())
    }

    /// The next whole frame (without its length), `None` until all of it is in.
    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        let head = self.pending.get(self.start..self.start + 4)?;
        let length = i32::from_be_bytes([head[0], head[1], head[2], head[3]]).max(0) as usize;
        let end = self.start + 4 + length;
        let frame = self.pending.get(self.start + 4..end)?.to_vec();
        self.start = end;
        Some(frame)
    }

    /// Bytes held (a frame being read).
    pub fn held(&self) -> usize {
        self.pending.len() - self.start
    }
}

/// A `ConnectResponse`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connected {
    /// The session timeout granted (0: refused).
    pub timeout_ms: i32,
    /// The session's id.
    pub session_id: i64,
}

/// Reads a `ConnectResponse` (its trailing read-only flag is optional: older servers send
/// none). A timeout of 0 or less is a session refused (the caller's to tell).
pub fn decode_connect(frame: &[u8]) -> Result<Connected, String> {
    let mut fields = Fields { bytes: frame };
    let _protocol_version = fields.int("protocol version")?;
    let timeout_ms = fields.int("timeout")?;
    let session_id = fields.long("session id")?;
    let _password = fields.buffer("password")?;
    let _read_only = !fields.bytes.is_empty() && fields.bool("read-only flag")?;
    Ok(Connected { timeout_ms, session_id })
}

/// A watch notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// An [`event`] type.
    pub kind: i32,
    /// The session's state (3: connected).
    pub state: i32,
    /// The node's path (empty for a state event).
    pub path: String,
}

impl Notification {
    /// A node event for `path` that asks for a new read (and a new watch): created,
    /// changed or deleted.
    pub fn changes(&self, path: &str) -> bool {
        self.path == path && matches!(self.kind, event::NODE_CREATED | event::NODE_DATA_CHANGED | event::NODE_DELETED)
    }

    /// A change of state that ends the session (expired, authentication failed,
    /// disconnected, closed).
    pub fn ends_session(&self) -> bool {
        self.kind == event::NONE
            && matches!(self.state, state::DISCONNECTED | state::EXPIRED | state::CLOSED | state::AUTH_FAILED)
    }
}

/// A frame from the server after the connect response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The answer to request `xid`: its record when `err` is 0.
    Answer {
        /// The request's xid.
        xid: i32,
        /// The server's last zxid.
        zxid: i64,
        /// The error code (0: none).
        err: i32,
        /// The record.
        body: Vec<u8>,
    },
    /// The answer to a ping.
    Pong,
    /// The answer to an authentication (`err` 0: accepted).
    Auth {
        /// The error code.
        err: i32,
    },
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
        XID_AUTH => Ok(Reply::Auth { err }),
        XID_NOTIFICATION => Ok(Reply::Notification(Notification {
            kind: fields.int("event")?,
            state: fields.int("event")?,
            path: fields.string("event path")?,
        })),
        _ => Ok(Reply::Answer { xid, zxid, err, body: fields.bytes.to_vec() }),
    }
}

/// A node as `getData` reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Its data, `None` when null.
    pub data: Option<Vec<u8>>,
    /// Its stat.
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
    if host.is_empty()
        || host.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b"/?#@\\[]".contains(&b))
    {
        return Err(format!("{member:?}: no host"));
    }
    Ok((host.to_string(), port))
}

/// An absolute node path as ZooKeeper takes it: `/`, or `/`-separated names, none empty,
/// `.` or `..`, no trailing `/`, no NUL.
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

/// The ancestors of `path` to create before it, from the top (`/a/b/c`: `/a`, `/a/b`).
pub fn parents(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, byte) in path.bytes().enumerate().skip(1) {
        if byte == b'/' {
            out.push(path[..at].to_string());
        }
    }
    out
}
