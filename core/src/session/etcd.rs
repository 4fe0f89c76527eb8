//! The etcd source session: following a topology kept in etcd, and the calls of a
//! publisher (`get`, `get_many`, `put`, `delete_prefix`, `txn`, `publish`), over etcd's
//! v3 JSON gateway (etcd 3.4 and later), as requests out and answers in (sans-IO).
//!
//! A shell performs the [`Action`]s (see [`source`](crate::session::source) for the
//! driver loop); this module decides everything else, once for every language:
//!
//! * **Members.** A request goes to the member in use. When it cannot be reached, its
//!   deadline passes, it answers HTTP 503 or a body of gRPC code 14 (UNAVAILABLE), or
//!   etcd says `etcdserver: no leader` / `etcdserver: leader changed`, the same request
//!   goes to the next member, round the list once, then fails with the last member's
//!   error. The in-use member moves only if it is still the one that failed (a concurrent
//!   request that already moved it does not make this one skip a member). Any other
//!   error status is `http` with its status, not retried.
//! * **Authentication** (`user` and `password`): the first request is
//!   `/v3/auth/authenticate`; every request carries its token (`authorization`). A token
//!   etcd calls invalid or expired (gRPC 16, "invalid auth token") is renewed once per
//!   request, which is then resent; a refused user or password is `unauthenticated`.
//! * **Following** ([`EtcdSession::start`]): one txn reads the key and its companions at
//!   one revision and offers the key's value to the core's [`Follower`] (as bytes: a
//!   value that is not UTF-8 is refused by the follower, never replaced); then a watch
//!   opens from that revision + 1 over the smallest range holding every key. A key with
//!   no companions (`also` empty) takes a line's events as they come, in order, with no
//!   read: a PUT's `kv.value` is offered at its `kv.mod_revision` as a read's value is
//!   (the same [`Action::Offered`]), a DELETE is what a read that finds the key absent
//!   is (nothing offered); an event at or below a revision offered already (a read's or
//!   an event's) is skipped. A read in flight when an event is offered (a refresh's,
//!   say), whose revision is at or below that event's, is not offered (no refusal, no
//!   callback: its value is older or the same); a refresh it answers gets what a read
//!   of the newest event's value would have given: `{"unchanged": {}}`, that value's
//!   refusal, or `null` after a DELETE. A read sent after the event is offered as any. With companions (the events of one txn may not
//!   carry every companion), a line with events asks for a read (one at a time: events
//!   during a read make one more read after it). A watch quiet for `idle_ms` is cancelled and answered by a read and a new
//!   watch, with no backoff and no disconnect counted (a quiet source is not a lost one).
//!   A watch cancelled for compaction reads again at once. An `error` line, a closed
//!   stream, a failed read or a watch that cannot open loses the source: the follower's
//!   backoff ([`Follower::disconnected`]) says when to read again
//!   ([`Action::Lost`]), and the read that succeeds reconnects it and opens a new watch.
//!   A companion value must be UTF-8 text: one that is not makes the read `malformed`
//!   (the document is not offered; a lost source as any malformed answer), never decoded
//!   with replacements.
//! * **Refreshing** (`{"op": "refresh"}`): the follow policy's read, now, for a caller
//!   that wants the follower to have seen the store as it is (after its own write). It
//!   shares the one read in flight (reads are offered in the order they were sent): the
//!   next read that starts answers it, at once when none is in flight. Its document is
//!   offered as any read's; a success counts for the follow policy as any read does; a
//!   failure fails the call and nothing else (no loss, no backoff) unless the policy was
//!   relying on that read too.
//! * **Publishing** (`{"op": "publish"}`): the stored value is read and offered to a
//!   fresh follower; the new document must be the one it would install next (epoch + 1),
//!   written with a compare-and-swap on the stored `mod_revision`. A stored value the
//!   follower refuses is not overwritten unless `replace` is asked, and then only by a
//!   valid document whose epoch is above both the stored value's `epoch` field and the
//!   epoch of the newest earlier revision a follower would install (read back through
//!   the key's history, at most [`MAX_PUBLISH_HISTORY_STEPS`](crate::limits::MAX_PUBLISH_HISTORY_STEPS) revisions). A write whose
//!   outcome is unknown (no answer) is read back: our document there means done.
//!
//! Every answer is bounded by [`MAX_ANSWER_BYTES`] (a watch line while it is buffered);
//! an answer that is not etcd's is `malformed`. Times are the shell's `now_ms`; no
//! clock is read, no socket opened, and no input panics.

mod calls;
mod codec;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use self::calls::Call;
use self::codec::{Entry, Meaning, WatchLine};
use crate::error::{Error, Result};
use crate::limits::MAX_ANSWER_BYTES;
use crate::session::exchange::{defaults, Action, Request, SourceError};
use crate::session::follower::{Follower, FollowerConfig, FollowerStats, Offered};

pub use self::codec::prefix_end;

#[cfg(test)]
mod tests;

/// How [`EtcdSession::config`] shows a password; never taken as one by `from_config`.
const PASSWORD_MASK: &str = "***";

/// A password or a token: its `Debug` prints `"***"`, so no `{:?}` of a session, its
/// config or an exchange in flight shows it.
#[derive(Clone, PartialEq, Eq)]
struct Secret(String);

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("\"***\"")
    }
}

/// The settings of an etcd session, from its JSON config (see [`EtcdSession::from_config`]).
#[derive(Clone, Debug, PartialEq, Eq)]
struct EtcdConfig {
    members: Vec<String>,
    key: Option<String>,
    also: Vec<String>,
    request_timeout_ms: u64,
    idle_ms: u64,
    follower: FollowerConfig,
    user: Option<String>,
    password: Option<Secret>,
}

/// Milliseconds, an integer in `0..=2^53`.
fn ms_field(name: &str, value: &Value) -> Result<u64> {
    value
        .as_u64()
        .filter(|&ms| ms <= 1 << 53)
        .ok_or_else(|| Error::argument(format!("config.{name}: expected milliseconds, an integer in 0..=2^53")))
}

fn text_field(name: &str, value: &Value) -> Result<String> {
    value.as_str().map(ToString::to_string).ok_or_else(|| Error::argument(format!("config.{name}: expected a string")))
}

/// A member's URL checked: `http://host[:port]` or `https://...`, trailing `/` dropped.
fn member_url(url: &str) -> Result<String> {
    let bad =
        || Error::argument(format!("config.members: expected http://host:port or https://host:port, got {url:?}"));
    let trimmed = url.trim_end_matches('/');
    let rest = trimmed.strip_prefix("http://").or_else(|| trimmed.strip_prefix("https://")).ok_or_else(bad)?;
    let host_ok = !rest.is_empty()
        && !rest.starts_with(':')
        && !rest.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b"/?#@\\".contains(&b));
    if host_ok {
        Ok(trimmed.to_string())
    } else {
        Err(bad())
    }
}

impl EtcdConfig {
    fn from_value(config: &Value) -> Result<EtcdConfig> {
        let Value::Object(fields) = config else {
            return Err(Error::argument("config: expected an object"));
        };
        let mut out = EtcdConfig {
            members: Vec::new(),
            key: None,
            also: Vec::new(),
            request_timeout_ms: defaults::REQUEST_TIMEOUT_MS,
            idle_ms: defaults::WATCH_IDLE_MS,
            follower: FollowerConfig::default(),
            user: None,
            password: None,
        };
        let mut follower = Map::new();
        for (name, value) in fields {
            match name.as_str() {
                "source" => {}
                "members" => {
                    let list =
                        value.as_array().ok_or_else(|| Error::argument("config.members: expected a list of URLs"))?;
                    for each in list {
                        out.members.push(member_url(&text_field("members", each)?)?);
                    }
                }
                // An optional field given as null is left out (as `config()` writes it).
                "key" | "also" | "user" | "password" if value.is_null() => {}
                "key" => out.key = Some(text_field("key", value)?),
                "also" => {
                    let list =
                        value.as_array().ok_or_else(|| Error::argument("config.also: expected a list of keys"))?;
                    out.also = list.iter().map(|key| text_field("also", key)).collect::<Result<_>>()?;
                }
                "request_timeout_ms" => out.request_timeout_ms = ms_field(name, value)?,
                "idle_ms" => out.idle_ms = ms_field(name, value)?,
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
                        "config: unknown field {other:?} (source, members, key, also, request_timeout_ms, idle_ms, \
                         reconnect_first_ms, reconnect_max_ms, user, password)"
                    )))
                }
            }
        }
        if out.members.is_empty() {
            return Err(Error::argument("config.members: at least one member URL"));
        }
        if out.request_timeout_ms == 0 {
            return Err(Error::argument("config.request_timeout_ms: at least 1"));
        }
        if out.user.is_some() != out.password.is_some() {
            return Err(Error::argument("config: user and password go together"));
        }
        if out.key.is_none() && !out.also.is_empty() {
            return Err(Error::argument("config.also: companions of no key"));
        }
        out.follower = FollowerConfig::from_value(&Value::Object(follower))?;
        Ok(out)
    }

    fn to_value(&self) -> Value {
        json!({
            "source": "etcd", "members": self.members, "key": self.key, "also": self.also,
            "request_timeout_ms": self.request_timeout_ms, "idle_ms": self.idle_ms,
            "reconnect_first_ms": self.follower.reconnect_first_ms, "reconnect_max_ms": self.follower.reconnect_max_ms,
            "user": self.user, "password": self.password.as_ref().map(|_| PASSWORD_MASK),
        })
    }
}

/// Who waits for an exchange's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// A call (its number).
    Call(u64),
    /// The follower's read of its keys.
    Read,
    /// The follower's watch opening.
    Watch,
    /// `/v3/auth/authenticate`.
    Auth,
}

/// One logical request: sent to the member in use, resent to the next as the table says.
/// Its `Debug` hides an authentication's body (the user's password).
#[derive(Clone)]
struct Exchange {
    purpose: Purpose,
    path: &'static str,
    body: String,
    stream: bool,
    /// The member it was sent to last.
    member: usize,
    /// Members it was sent to before this one.
    tried: usize,
    /// It was resent once already after a token renewal.
    reauthed: bool,
    /// The token generation it was sent with.
    token_generation: u64,
    /// A write whose outcome is unknown without an answer is not resent (publish's CAS).
    not_resent_blind: bool,
    deadline: Option<u64>,
}

impl core::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let body: &dyn core::fmt::Debug =
            if self.purpose == Purpose::Auth { &Secret(String::new()) } else { &self.body };
        f.debug_struct("Exchange")
            .field("purpose", &self.purpose)
            .field("path", &self.path)
            .field("body", body)
            .field("stream", &self.stream)
            .field("member", &self.member)
            .field("tried", &self.tried)
            .field("reauthed", &self.reauthed)
            .field("token_generation", &self.token_generation)
            .field("not_resent_blind", &self.not_resent_blind)
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl Exchange {
    fn new(purpose: Purpose, path: &'static str, body: String) -> Exchange {
        Exchange {
            purpose,
            path,
            body,
            stream: false,
            member: 0,
            tried: 0,
            reauthed: false,
            token_generation: 0,
            not_resent_blind: false,
            deadline: None,
        }
    }
}

/// A failure of an exchange: the error, what it means, and whether the request may
/// have been carried out (no answer came).
struct Failure {
    error: SourceError,
    meaning: Meaning,
    blind: bool,
}

/// The follower's open watch stream.
#[derive(Clone, Debug)]
struct Watch {
    id: u64,
    member: usize,
    /// The line being read (bounded by MAX_ANSWER_BYTES).
    pending: Vec<u8>,
    idle_at: Option<u64>,
    reauthed: bool,
}

#[derive(Clone, Debug, Default)]
struct Follow {
    keys: Vec<String>,
    low: Vec<u8>,
    high: Vec<u8>,
    /// A read is in flight (one at a time: the policy's or a refresh's).
    reading: bool,
    /// The follow policy relies on the read in flight: its failure loses the source (a
    /// read only refresh calls asked for fails them alone).
    needed: bool,
    /// The policy wants one more read after the one in flight (events arrived).
    dirty: bool,
    /// The refresh calls the read in flight answers.
    serving: Vec<u64>,
    /// The refresh calls waiting for the next read (one that starts after them).
    queued: Vec<u64>,
    read_revision: u64,
    /// The key has no companions: a watch line's events for it are offered directly.
    direct: bool,
    /// The highest revision offered from a watch event (0: none): a read during which it
    /// rose is not offered when its revision is at or below it.
    event_revision: u64,
    /// `event_revision` when the read in flight was sent.
    event_revision_at_read: u64,
    /// What a read of the newest event's value would answer a refresh call: `null` for a
    /// DELETE, `{"unchanged": {}}` for a value offered and kept, its refusal for one
    /// refused.
    event_offered: Value,
    /// The revision of the document refused last and its refusal: the policy's read that
    /// finds the same revision (an idle watch's read, every `idle_ms`) tells the
    /// application nothing new (the refusal was said once).
    refused: Option<(u64, Value)>,
    watch: Option<Watch>,
    retry_at: Option<u64>,
    /// Lost until a read succeeds.
    lost: bool,
    /// The next watch opened is a restart (after a loss or a compaction of one opened).
    restart: bool,
    /// A watch was asked for before.
    watched: bool,
    companions: BTreeMap<String, Option<String>>,
    reads: u64,
    watch_restarts: u64,
}

/// The etcd source session (see the module docs). Made from a config
/// ([`EtcdSession::from_config`]): `{"source": "etcd", "members": [urls], "key"?,
/// "also"?, "request_timeout_ms"?, "idle_ms"?, "reconnect_first_ms"?,
/// "reconnect_max_ms"?, "user"?, "password"?}`.
#[derive(Debug)]
pub struct EtcdSession {
    config: Box<EtcdConfig>,
    in_use: usize,
    next_id: u64,
    token: Option<Secret>,
    token_generation: u64,
    authenticating: bool,
    exchanges: BTreeMap<u64, Exchange>,
    waiting: Vec<Exchange>,
    calls: BTreeMap<u64, Call>,
    follow: Option<Box<Follow>>,
    follower: Option<Box<Follower>>,
    started: bool,
    closed: bool,
    /// The most bytes of an answer, and of a watch line ([`MAX_ANSWER_BYTES`]).
    limit: u64,
}

/// A call's result value: a revision as a decimal string.
pub(crate) fn rev(revision: u64) -> Value {
    Value::String(revision.to_string())
}

impl EtcdSession {
    /// The session `config` describes (its fields in the module docs and in
    /// [`defaults`]).
    /// `key`, `also`, `user` and `password` may be `null` (left out, as [`Self::config`]
    /// writes them); `password` may not be `"***"` (the mask `config()` writes).
    ///
    /// # Errors
    /// `invalid_argument` for an unknown field, a field of the wrong type, no member, a
    /// member URL that is not `http://` or `https://` with a host, a user without a
    /// password (or the reverse), or companions without a key.
    pub fn from_config(config: &Value) -> Result<EtcdSession> {
        let config = EtcdConfig::from_value(config)?;
        let (follow, follower) = match &config.key {
            None => (None, None),
            Some(key) => {
                let mut keys = Vec::with_capacity(1 + config.also.len());
                keys.push(key.clone());
                keys.extend(config.also.iter().cloned());
                let mut raw: Vec<&[u8]> = keys.iter().map(String::as_bytes).collect();
                raw.sort_unstable();
                let low = raw.first().map_or_else(Vec::new, |k| k.to_vec());
                let mut high = raw.last().map_or_else(Vec::new, |k| k.to_vec());
                high.push(0);
                let companions = config.also.iter().map(|name| (name.clone(), None)).collect();
                let direct = config.also.is_empty();
                let follow = Follow { keys, low, high, companions, direct, ..Follow::default() };
                (Some(Box::new(follow)), Some(Box::new(Follower::new(config.follower.clone()))))
            }
        };
        Ok(EtcdSession {
            config: Box::new(config),
            in_use: 0,
            next_id: 0,
            token: None,
            token_generation: 0,
            authenticating: false,
            exchanges: BTreeMap::new(),
            waiting: Vec::new(),
            calls: BTreeMap::new(),
            follow,
            follower,
            started: false,
            closed: false,
            limit: MAX_ANSWER_BYTES,
        })
    }

    /// The config in use, every field (defaults filled in; a password shown as `"***"`).
    /// It reads back through [`Self::from_config`] as the same config when no password is
    /// set; with one, `"***"` is refused there (`invalid_argument`) until the caller puts
    /// the password back: never a session that authenticates with the mask.
    pub fn config(&self) -> Value {
        self.config.to_value()
    }

    /// Starts following: the first read. Nothing for a calls-only session, a second
    /// start, or a closed session.
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
    /// * `{"op": "get", "key"}` → `{"value": str|null, "mod_revision": "N"}` (absent:
    ///   `null` and `"0"`);
    /// * `{"op": "get_many", "keys": [...]}` → `{"values": {key: {"value",
    ///   "mod_revision"}}, "revision": "N"}` (one txn, one revision);
    /// * `{"op": "put", "key", "value"}` → `{"revision": "N"}`;
    /// * `{"op": "delete_prefix", "prefix"}` → `{"deleted": n}`;
    /// * `{"op": "txn", "compare": [{"key", "target": "mod"|"value", "mod_revision"?,
    ///   "value"?}], "puts"?: {key: value}, "deletes"?: [keys]}` → `{"revision": "N"}`,
    ///   failed `conflict` when a compare failed;
    /// * `{"op": "publish", "key", "document", "also"?: {key: value}, "replace"?: bool}`
    ///   → `{"revision": "N", "epoch": "N"}` (see the module docs);
    /// * `{"op": "refresh"}` (a session with a `key` only): reads the key and its
    ///   companions now, with the follow policy's one txn, and offers the document to the
    ///   session's follower as a follow read does (the same [`Action::Offered`]) →
    ///   `{"offered": <the Offered result> | null, "revision": "N"}` (`null`: the key is
    ///   absent; `revision`: the store's revision of the read). It shares the follow
    ///   policy's one read in flight: with none in flight its read is sent at once, else
    ///   it is answered by the next read, sent as soon as the one in flight ends (a read
    ///   that started before the call cannot answer it, and reads are offered in the
    ///   order they were sent; for a key with no companions, a read during which a
    ///   watch event at or above its revision was offered answers with what a read of
    ///   that event's value would have: `{"unchanged": {}}`, its refusal, or `null` after
    ///   a DELETE, the read's own value not offered). A successful read counts for the follow policy as any
    ///   read does (it reconnects a lost follower and opens the watch); a read only
    ///   refresh calls asked for that fails fails them with its error and nothing else
    ///   (no loss, no backoff).
    ///
    /// # Errors
    /// `invalid_argument` for an unknown op, a field missing or of the wrong type, a field
    /// the op does not have (`{"op": "refresh", "extra": 1}`), and `refresh` on a session
    /// with no `key`.
    pub fn call(&mut self, op: &Value, now_ms: u64) -> Result<(u64, Vec<Action>)> {
        let parsed = if op.get("op").and_then(Value::as_str) == Some("refresh") {
            calls::known_fields(op, "op refresh", &["op"])?;
            if self.follow.is_none() {
                return Err(Error::argument("op refresh: a session with a key to follow (config.key)"));
            }
            None
        } else {
            Some(Self::parse_call(op)?)
        };
        let number = self.next();
        let mut out = Vec::new();
        if self.closed {
            out.push(Action::Failed { call: number, error: SourceError::new("closed", "the etcd session is closed") });
            return Ok((number, out));
        }
        match parsed {
            Some((call, path, body)) => {
                self.calls.insert(number, call);
                self.send(Exchange::new(Purpose::Call(number), path, body), now_ms, &mut out);
            }
            None => {
                self.calls.insert(number, Call::Refresh);
                self.refresh(number, now_ms, &mut out);
            }
        }
        Ok((number, out))
    }

    /// The answer to request `id` (a stream's head: status 200 and an empty body).
    pub fn response(&mut self, id: u64, now_ms: u64, status: u16, headers: &Value, body: &[u8]) -> Vec<Action> {
        let _ = headers;
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        let Some(exchange) = self.exchanges.remove(&id) else { return out };
        let where_ = self.where_(&exchange);
        if body.len() as u64 > self.limit {
            let error = SourceError::new(
                "limit_exceeded",
                format!("etcd {where_}: an answer of {} bytes; the limit is {}", body.len(), self.limit),
            );
            self.finish_failed(exchange, Failure { error, meaning: Meaning::Other, blind: false }, now_ms, &mut out);
        } else if status == 200 && exchange.stream {
            self.watch_opened(id, exchange, now_ms, &mut out);
        } else if status == 200 {
            self.finish_ok(exchange, body, now_ms, &mut out);
        } else {
            let (error, meaning) = codec::http_error(&where_, status, body);
            self.exchange_failed(exchange, Failure { error, meaning, blind: false }, now_ms, &mut out);
        }
        out
    }

    /// The next piece of stream `id` (the follower's watch).
    pub fn chunk(&mut self, id: u64, now_ms: u64, data: &[u8]) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        let (idle_ms, limit) = (self.config.idle_ms, self.limit);
        let where_ = format!("{}/v3/watch", self.member_url(self.watch_member(id).unwrap_or(self.in_use)));
        let Some(watch) = self.follow.as_mut().and_then(|follow| follow.watch.as_mut()).filter(|watch| watch.id == id)
        else {
            return out;
        };
        watch.idle_at = (idle_ms > 0).then(|| now_ms.saturating_add(idle_ms));
        let mut lines = Vec::new();
        let mut rest = data;
        let mut too_long = false;
        loop {
            let (piece, next) = match rest.iter().position(|&b| b == b'\n') {
                Some(at) => (&rest[..at], Some(&rest[at + 1..])),
                None => (rest, None),
            };
            if (watch.pending.len() as u64).saturating_add(piece.len() as u64) > limit {
                too_long = true;
                break;
            }
            watch.pending.extend_from_slice(piece);
            match next {
                Some(next) => {
                    lines.push(core::mem::take(&mut watch.pending));
                    rest = next;
                }
                None => break,
            }
        }
        for line in lines {
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let watching = self.follow.as_ref().and_then(|f| f.watch.as_ref()).is_some_and(|w| w.id == id);
            if !watching {
                return out;
            }
            match codec::watch_line(&where_, text) {
                WatchLine::Quiet => {}
                WatchLine::Events(events) => self.changed(&where_, &events, now_ms, &mut out),
                WatchLine::Compacted(_) => self.compacted(now_ms, &mut out),
                WatchLine::BadToken(message) => self.watch_bad_token(message, now_ms, &mut out),
                WatchLine::Lost(error, meaning) => {
                    if meaning == Meaning::Unavailable {
                        if let Some(member) = self.watch_member(id) {
                            self.leave(member);
                        }
                    }
                    self.lose(error, now_ms, &mut out);
                }
            }
        }
        let watching = self.follow.as_ref().and_then(|f| f.watch.as_ref()).is_some_and(|w| w.id == id);
        if too_long && watching {
            let error =
                SourceError::new("limit_exceeded", format!("etcd {where_}: a watch line longer than {limit} bytes"));
            self.lose(error, now_ms, &mut out);
        }
        out
    }

    /// Request `id` could not be completed (`unreachable`, `closed`, `limit_exceeded`).
    pub fn failed(&mut self, id: u64, now_ms: u64, code: &str, message: &str) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        if let Some(member) = self.watch_member(id) {
            let url = self.member_url(member);
            let error = if code == "limit_exceeded" {
                SourceError::new("limit_exceeded", format!("etcd {url}/v3/watch: {message}"))
            } else {
                let why = if code == "closed" { "the server closed the stream" } else { message };
                SourceError::new("unreachable", format!("etcd {url}/v3/watch: {why}"))
            };
            // Ended already: nothing to cancel.
            if let Some(follow) = self.follow.as_mut() {
                follow.watch = None;
            }
            self.lose(error, now_ms, &mut out);
            return out;
        }
        let Some(exchange) = self.exchanges.remove(&id) else { return out };
        let where_ = self.where_(&exchange);
        let failure = if code == "limit_exceeded" {
            Failure {
                error: SourceError::new("limit_exceeded", format!("etcd {where_}: {message}")),
                meaning: Meaning::Other,
                blind: false,
            }
        } else {
            Failure {
                error: SourceError::new("unreachable", format!("etcd {where_}: {message}")),
                meaning: Meaning::Unavailable,
                blind: true,
            }
        };
        self.exchange_failed(exchange, failure, now_ms, &mut out);
        out
    }

    /// The deadline passed: requests past theirs are cancelled and sent to the next
    /// member, a quiet watch is answered by a read, a backoff's end reads again.
    pub fn timer(&mut self, now_ms: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        let late: Vec<u64> = self
            .exchanges
            .iter()
            .filter(|(_, ex)| ex.deadline.is_some_and(|at| at <= now_ms))
            .map(|(id, _)| *id)
            .collect();
        for id in late {
            let Some(exchange) = self.exchanges.remove(&id) else { continue };
            out.push(Action::Cancel { id });
            let where_ = self.where_(&exchange);
            let error = SourceError::new(
                "unreachable",
                format!("etcd {where_}: no answer within {} ms", self.config.request_timeout_ms),
            );
            self.exchange_failed(
                exchange,
                Failure { error, meaning: Meaning::Unavailable, blind: true },
                now_ms,
                &mut out,
            );
        }
        let idle = self
            .follow
            .as_ref()
            .and_then(|f| f.watch.as_ref())
            .is_some_and(|w| w.idle_at.is_some_and(|at| at <= now_ms));
        if idle {
            // Quiet, or a member that stopped answering: a read says which (moving to
            // another member if it must), then a new watch. Not a loss.
            if let Some(watch) = self.follow.as_mut().and_then(|f| f.watch.take()) {
                out.push(Action::Cancel { id: watch.id });
            }
            self.rely_on_read(now_ms, &mut out);
        }
        let retry = self.follow.as_ref().and_then(|f| f.retry_at).is_some_and(|at| at <= now_ms);
        if retry {
            if let Some(follow) = self.follow.as_mut() {
                follow.retry_at = None;
            }
            self.rely_on_read(now_ms, &mut out);
        }
        out
    }

    /// Stops everything: requests cancelled, calls failed (`closed`), no more actions.
    pub fn close(&mut self, now_ms: u64) -> Vec<Action> {
        let _ = now_ms;
        let mut out = Vec::new();
        if self.closed {
            return out;
        }
        self.closed = true;
        let mut ids: Vec<u64> = self.exchanges.keys().copied().collect();
        if let Some(watch) = self.follow.as_mut().and_then(|f| f.watch.take()) {
            ids.push(watch.id);
        }
        ids.sort_unstable();
        ids.dedup();
        out.extend(ids.into_iter().map(|id| Action::Cancel { id }));
        self.exchanges.clear();
        self.waiting.clear();
        for call in core::mem::take(&mut self.calls).into_keys() {
            out.push(Action::Failed { call, error: SourceError::new("closed", "the etcd session was closed") });
        }
        if let Some(follow) = self.follow.as_mut() {
            follow.retry_at = None;
            follow.reading = false;
            follow.needed = false;
            follow.dirty = false;
            follow.serving.clear();
            follow.queued.clear();
        }
        out
    }

    /// The one time the shell must call [`Self::timer`] at: the earliest request
    /// deadline, the watch's idle deadline, or the end of a backoff.
    pub fn deadline(&self) -> Option<u64> {
        if self.closed {
            return None;
        }
        let requests = self.exchanges.values().filter_map(|ex| ex.deadline);
        let follow = self.follow.as_ref();
        let idle = follow.and_then(|f| f.watch.as_ref()).and_then(|w| w.idle_at);
        let retry = follow.and_then(|f| f.retry_at);
        requests.chain(idle).chain(retry).min()
    }

    /// The core follower (None for a calls-only session).
    pub fn follower(&self) -> Option<&Follower> {
        self.follower.as_deref()
    }

    /// `{"revision": "N"|null, "epoch": "N"|null, "companions": {key: str|null},
    /// "member": url, "stats": {<follower stats>, "reads": n, "watch_restarts": n}}`.
    pub fn state(&self) -> Value {
        let follower = self.follower.as_deref();
        let mut stats = follower.map_or_else(|| FollowerStats::default().to_value(), |f| f.stats().to_value());
        let (reads, restarts, companions) = match &self.follow {
            Some(follow) => (follow.reads, follow.watch_restarts, follow.companions.clone()),
            None => (0, 0, BTreeMap::new()),
        };
        stats["reads"] = Value::from(reads);
        stats["watch_restarts"] = Value::from(restarts);
        json!({
            "revision": follower.and_then(Follower::revision).map(rev),
            "epoch": follower.and_then(Follower::router).map(|router| rev(router.epoch())),
            "companions": companions,
            "member": self.member_url(self.in_use),
            "stats": stats,
        })
    }

    // -- members, requests and the one table ------------------------------------------

    fn next(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn member_url(&self, member: usize) -> &str {
        self.config.members.get(member).map_or("", String::as_str)
    }

    fn where_(&self, exchange: &Exchange) -> String {
        format!("{}{}", self.member_url(exchange.member), exchange.path)
    }

    fn watch_member(&self, id: u64) -> Option<usize> {
        self.follow.as_ref().and_then(|f| f.watch.as_ref()).filter(|w| w.id == id).map(|w| w.member)
    }

    /// Moves past `member`, unless another request moved past it already.
    fn leave(&mut self, member: usize) {
        if self.in_use == member {
            self.in_use = (member + 1) % self.config.members.len().max(1);
        }
    }

    /// Sends `exchange` to the member in use (after authenticating when it must).
    fn send(&mut self, mut exchange: Exchange, now_ms: u64, out: &mut Vec<Action>) {
        if exchange.purpose != Purpose::Auth && self.config.user.is_some() && self.token.is_none() {
            self.waiting.push(exchange);
            self.authenticate(now_ms, out);
            return;
        }
        let id = self.next();
        exchange.member = self.in_use;
        exchange.deadline = Some(now_ms.saturating_add(self.config.request_timeout_ms));
        exchange.token_generation = self.token_generation;
        let mut headers = alloc::vec![("content-type", String::from("application/json"))];
        if let (Some(token), false) = (&self.token, exchange.purpose == Purpose::Auth) {
            headers.push(("authorization", token.0.clone()));
        }
        out.push(Action::Request(Request {
            id,
            method: "POST",
            url: format!("{}{}", self.member_url(exchange.member), exchange.path),
            headers,
            body: Some(exchange.body.clone()),
            deadline: exchange.deadline,
            limit: self.limit,
            stream: exchange.stream,
        }));
        self.exchanges.insert(id, exchange);
    }

    fn authenticate(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        if self.authenticating {
            return;
        }
        let (Some(user), Some(password)) = (&self.config.user, &self.config.password) else { return };
        self.authenticating = true;
        let body = json!({"name": user, "password": password.0}).to_string();
        self.send(Exchange::new(Purpose::Auth, "/v3/auth/authenticate", body), now_ms, out);
    }

    /// What the one table says about a failed exchange: the next member, a new token,
    /// or the end.
    fn exchange_failed(&mut self, mut exchange: Exchange, failure: Failure, now_ms: u64, out: &mut Vec<Action>) {
        match failure.meaning {
            Meaning::Unavailable if failure.blind && exchange.not_resent_blind => {
                self.finish_failed(exchange, failure, now_ms, out);
            }
            Meaning::Unavailable if exchange.tried + 1 < self.config.members.len() => {
                self.leave(exchange.member);
                exchange.tried += 1;
                self.send(exchange, now_ms, out);
            }
            Meaning::Unavailable => {
                self.leave(exchange.member);
                self.finish_failed(exchange, failure, now_ms, out);
            }
            Meaning::BadToken
                if exchange.purpose != Purpose::Auth && self.config.user.is_some() && !exchange.reauthed =>
            {
                exchange.reauthed = true;
                if self.token.is_none() || exchange.token_generation == self.token_generation {
                    self.token = None;
                }
                self.send(exchange, now_ms, out);
            }
            Meaning::BadToken => {
                let error = SourceError { code: "unauthenticated", ..failure.error };
                self.finish_failed(exchange, Failure { error, ..failure }, now_ms, out);
            }
            _ => self.finish_failed(exchange, failure, now_ms, out),
        }
    }

    fn finish_ok(&mut self, exchange: Exchange, body: &[u8], now_ms: u64, out: &mut Vec<Action>) {
        let where_ = self.where_(&exchange);
        match exchange.purpose {
            Purpose::Auth => {
                self.authenticating = false;
                match codec::token(&where_, body) {
                    Ok(token) => {
                        self.token = Some(Secret(token));
                        self.token_generation += 1;
                        for waiting in core::mem::take(&mut self.waiting) {
                            self.send(waiting, now_ms, out);
                        }
                    }
                    Err(error) => self.auth_failed(error, now_ms, out),
                }
            }
            Purpose::Read => match self.read_answer(&where_, body) {
                Ok((document, companions, revision)) => self.read_ok(document, companions, revision, now_ms, out),
                Err(error) => self.read_failed(error, now_ms, out),
            },
            Purpose::Watch => {}
            Purpose::Call(call) => self.call_ok(call, &exchange, &where_, body, now_ms, out),
        }
    }

    fn finish_failed(&mut self, exchange: Exchange, failure: Failure, now_ms: u64, out: &mut Vec<Action>) {
        match exchange.purpose {
            Purpose::Auth => {
                self.authenticating = false;
                let error = match failure.meaning {
                    Meaning::BadToken | Meaning::Unauthenticated => {
                        SourceError { code: "unauthenticated", ..failure.error }
                    }
                    _ => failure.error,
                };
                self.auth_failed(error, now_ms, out);
            }
            Purpose::Read => self.read_failed(failure.error, now_ms, out),
            Purpose::Watch => self.lose(failure.error, now_ms, out),
            Purpose::Call(call) => self.call_failed(call, failure, now_ms, out),
        }
    }

    /// Every request waiting for a token fails as the authentication did.
    fn auth_failed(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        for waiting in core::mem::take(&mut self.waiting) {
            let failure = Failure { error: error.clone(), meaning: Meaning::Other, blind: false };
            self.finish_failed(waiting, failure, now_ms, out);
        }
    }

    // -- following ---------------------------------------------------------------------

    /// The follow policy's read: sent now, or (one at a time) once more after the read
    /// in flight.
    fn read(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        if follow.reading {
            follow.dirty = true;
            return;
        }
        self.send_read(true, now_ms, out);
    }

    /// The follow policy relies on a read: the one in flight (its failure is a loss now),
    /// or a new one.
    fn rely_on_read(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        if follow.reading {
            follow.needed = true;
        } else {
            self.send_read(true, now_ms, out);
        }
    }

    /// Sends the one txn that reads the key and its companions; it answers every refresh
    /// call queued.
    fn send_read(&mut self, needed: bool, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        follow.reading = true;
        follow.needed = needed;
        follow.serving = core::mem::take(&mut follow.queued);
        follow.event_revision_at_read = follow.event_revision;
        let body = codec::range_txn(&follow.keys);
        self.send(Exchange::new(Purpose::Read, "/v3/kv/txn", body), now_ms, out);
    }

    /// A refresh call: answered by the next read that starts (now, unless one is in
    /// flight).
    fn refresh(&mut self, number: u64, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        follow.queued.push(number);
        if !follow.reading {
            self.send_read(false, now_ms, out);
        }
    }

    /// A read ended without a loss: the read the policy still wants, else the one queued
    /// refresh calls wait for.
    fn next_read(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        if follow.reading {
            return;
        }
        if core::mem::take(&mut follow.dirty) {
            self.send_read(true, now_ms, out);
        } else if !follow.queued.is_empty() {
            self.send_read(false, now_ms, out);
        }
    }

    /// A watch line with events. With companions: a read, or one more after the read in
    /// flight. Without: the newest event for the key in the line is offered as a read's
    /// value is (a PUT's value at its `mod_revision`; a DELETE as a read that finds the key
    /// absent: nothing offered), unless a read or an event at or above its revision was
    /// offered already. Older events of the same line are superseded, as a read coalesces
    /// them: one line is at most one offer, so the router a shell reads after it is the
    /// one that offer installed. An event that is not etcd's loses the source (`malformed`).
    fn changed(&mut self, where_: &str, events: &[Value], now_ms: u64, out: &mut Vec<Action>) {
        if !self.follow.as_ref().is_some_and(|follow| follow.direct) {
            self.read(now_ms, out);
            return;
        }
        let mut newest = None;
        for each in events {
            let event = match codec::event(where_, each) {
                Ok(event) => event,
                Err(error) => {
                    self.lose(error, now_ms, out);
                    return;
                }
            };
            let Some(follow) = self.follow.as_ref() else { return };
            let key = follow.keys.first().map_or(&[][..], |key| key.as_bytes());
            let floor = follow.read_revision.max(follow.event_revision);
            let newer = newest.as_ref().map_or(floor, |held: &codec::Event| held.revision.max(floor));
            if event.key == key && event.revision > newer {
                newest = Some(event);
            }
        }
        let (Some(event), Some(follow), Some(follower)) = (newest, self.follow.as_mut(), self.follower.as_mut()) else {
            return;
        };
        follow.event_revision = event.revision;
        follow.event_offered = Value::Null;
        if let Some(value) = event.value {
            let offered = follower.offer_bytes(&value, event.revision, now_ms);
            let changed = matches!(offered, Offered::Installed { .. });
            let refused = matches!(offered, Offered::Refused(_));
            let action = Action::Offered { offered, changed, revision: event.revision };
            follow.event_offered =
                if refused { action.to_value()["offered"]["result"].take() } else { Offered::Unchanged.to_value() };
            if refused {
                follow.refused = Some((event.revision, follow.event_offered.clone()));
            }
            out.push(action);
        }
    }

    /// A read's answer: the key's entry, the companions' values (each UTF-8 text or
    /// absent) and the store's revision. A companion that is not UTF-8 makes the whole
    /// answer `malformed` (never decoded with replacements; the document is not offered).
    fn read_answer(
        &self,
        where_: &str,
        body: &[u8],
    ) -> core::result::Result<(Entry, Vec<Option<String>>, u64), SourceError> {
        let keys = self.follow.as_ref().map_or(&[][..], |f| f.keys.as_slice());
        let (entries, revision) = codec::ranges(where_, body, keys.len())?;
        let mut entries = entries.into_iter();
        let document = entries.next().flatten();
        let mut companions = Vec::with_capacity(keys.len().saturating_sub(1));
        for (name, entry) in keys.iter().skip(1).zip(entries) {
            companions.push(match entry {
                None => None,
                Some((value, _)) => Some(String::from_utf8(value).map_err(|err| {
                    SourceError::new(
                        "malformed",
                        format!(
                            "etcd {where_}: the value of companion {name:?} is not UTF-8 (at byte {})",
                            err.utf8_error().valid_up_to()
                        ),
                    )
                })?),
            });
        }
        Ok((document, companions, revision))
    }

    fn read_ok(
        &mut self,
        document: Entry,
        companions: Vec<Option<String>>,
        revision: u64,
        now_ms: u64,
        out: &mut Vec<Action>,
    ) {
        let started = self.started;
        let (Some(follow), Some(follower)) = (self.follow.as_mut(), self.follower.as_mut()) else { return };
        follow.reading = false;
        follow.reads += 1;
        follow.read_revision = follow.read_revision.max(revision);
        let mut offered_value = Value::Null;
        // An event offered while this read was in flight is as new as its answer or newer:
        // the read's value is not offered again, and a refresh it answers says what a read
        // of the newest event's value would have. (A read sent after the newest event
        // offered reads the store as it is now: offered as any read.)
        let stale =
            follow.direct && follow.event_revision > follow.event_revision_at_read && revision <= follow.event_revision;
        if stale {
            offered_value = follow.event_offered.clone();
        } else if let Some((_, said)) = follow.refused.as_ref().filter(|(at, _)| {
            follow.serving.is_empty() && document.as_ref().is_some_and(|(_, mod_revision)| mod_revision == at)
        }) {
            // The policy's own read (an idle watch's, every `idle_ms`) of a revision refused
            // before: the refusal was said once. (A refresh call's read offers it again.)
            offered_value = said.clone();
        } else if let Some((value, mod_revision)) = document {
            let offered = follower.offer_bytes(&value, mod_revision, now_ms);
            let mut changed = matches!(offered, Offered::Installed { .. });
            if !matches!(offered, Offered::Refused(_)) {
                for (name, text) in follow.keys.iter().skip(1).zip(companions) {
                    if follow.companions.get(name) != Some(&text) {
                        follow.companions.insert(name.clone(), text);
                        changed = true;
                    }
                }
            }
            let refused = matches!(offered, Offered::Refused(_));
            let action = Action::Offered { offered, changed, revision: mod_revision };
            offered_value = action.to_value()["offered"]["result"].take();
            if refused {
                follow.refused = Some((mod_revision, offered_value.clone()));
            }
            out.push(action);
        }
        for call in core::mem::take(&mut follow.serving) {
            self.calls.remove(&call);
            out.push(Action::Done { call, result: json!({"offered": offered_value, "revision": rev(revision)}) });
        }
        // A read that succeeds, whoever asked for it, reconnects a lost follower.
        if follow.lost {
            follow.lost = false;
            follow.retry_at = None;
            follower.connected();
        }
        let dirty = follow.dirty;
        let unwatched = follow.watch.is_none();
        if !dirty && started && unwatched && !self.watch_pending() {
            self.open_watch(now_ms, out);
        }
        self.next_read(now_ms, out);
    }

    fn watch_pending(&self) -> bool {
        self.exchanges.values().chain(self.waiting.iter()).any(|ex| ex.purpose == Purpose::Watch)
    }

    fn open_watch(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        if follow.restart {
            follow.restart = false;
            follow.watch_restarts += 1;
        }
        follow.watched = true;
        let body = codec::watch_create(&follow.low, &follow.high, follow.read_revision.saturating_add(1));
        let mut exchange = Exchange::new(Purpose::Watch, "/v3/watch", body);
        exchange.stream = true;
        self.send(exchange, now_ms, out);
    }

    fn watch_opened(&mut self, id: u64, exchange: Exchange, now_ms: u64, out: &mut Vec<Action>) {
        let idle_ms = self.config.idle_ms;
        let Some(follow) = self.follow.as_mut() else {
            out.push(Action::Cancel { id });
            return;
        };
        if let Some(old) = follow.watch.take() {
            out.push(Action::Cancel { id: old.id });
        }
        follow.watch = Some(Watch {
            id,
            member: exchange.member,
            pending: Vec::new(),
            idle_at: (idle_ms > 0).then(|| now_ms.saturating_add(idle_ms)),
            reauthed: exchange.reauthed,
        });
    }

    /// A read failed: the refresh calls it answers fail with its error; the source is
    /// lost only when the follow policy relied on that read.
    fn read_failed(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        follow.reading = false;
        let needed = core::mem::take(&mut follow.needed);
        for call in core::mem::take(&mut follow.serving) {
            self.calls.remove(&call);
            out.push(Action::Failed { call, error: error.clone() });
        }
        if needed {
            self.lose(error, now_ms, out);
        } else {
            self.next_read(now_ms, out);
        }
    }

    /// The source is lost: everything of the follower's stops, and the follower's backoff
    /// says when to read again. A read in flight that refresh calls wait for goes on for
    /// them (its failure is theirs alone now); queued refresh calls get their read now.
    fn lose(&mut self, error: SourceError, now_ms: u64, out: &mut Vec<Action>) {
        let (Some(follow), Some(follower)) = (self.follow.as_mut(), self.follower.as_mut()) else { return };
        if let Some(watch) = follow.watch.take() {
            out.push(Action::Cancel { id: watch.id });
        }
        let keep_read = follow.reading && !follow.serving.is_empty();
        let stops = |purpose: Purpose| purpose == Purpose::Watch || (purpose == Purpose::Read && !keep_read);
        let ours: Vec<u64> = self.exchanges.iter().filter(|(_, ex)| stops(ex.purpose)).map(|(id, _)| *id).collect();
        for id in ours {
            self.exchanges.remove(&id);
            out.push(Action::Cancel { id });
        }
        self.waiting.retain(|ex| !stops(ex.purpose));
        follow.reading = keep_read;
        follow.needed = false;
        follow.dirty = false;
        follow.lost = true;
        follow.restart = follow.watched;
        let retry_at = follower.disconnected(now_ms);
        follow.retry_at = Some(retry_at);
        out.push(Action::Lost { error, retry_at });
        self.next_read(now_ms, out);
    }

    /// etcd cancelled the watch for compaction: a read at once, then a new watch from
    /// its revision (no backoff).
    fn compacted(&mut self, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        if let Some(watch) = follow.watch.take() {
            out.push(Action::Cancel { id: watch.id });
        }
        follow.restart = true;
        self.rely_on_read(now_ms, out);
    }

    /// etcd cancelled the watch for its token: a new token and a new watch, once.
    fn watch_bad_token(&mut self, message: String, now_ms: u64, out: &mut Vec<Action>) {
        let Some(follow) = self.follow.as_mut() else { return };
        let Some(watch) = follow.watch.take() else { return };
        out.push(Action::Cancel { id: watch.id });
        if watch.reauthed || self.config.user.is_none() {
            self.lose(SourceError::new("unauthenticated", message), now_ms, out);
            return;
        }
        let body = codec::watch_create(&follow.low, &follow.high, follow.read_revision.saturating_add(1));
        let mut exchange = Exchange::new(Purpose::Watch, "/v3/watch", body);
        exchange.stream = true;
        exchange.reauthed = true;
        self.token = None;
        self.send(exchange, now_ms, out);
    }
}
