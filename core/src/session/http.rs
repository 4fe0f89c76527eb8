//! The HTTP source session: a topology document served at a URL, polled with
//! `If-None-Match` and long polls (`Prefer: wait=N`, RFC 7240), as requests out and
//! answers in (see [`crate::session::source`] for what a shell does with them).
//!
//! Config (`{"source": "http", ...}`, every field but `url` optional):
//! - `url`: an `http://` or `https://` URL (anything else: `invalid_argument`);
//! - `interval_ms` ([`defaults::POLL_INTERVAL_MS`]): how often the URL is asked when the
//!   server does not hold a request, counted from when the last request was sent (the
//!   interval minus the time the answer took, never a whole interval after it);
//! - `wait_s` ([`defaults::LONG_POLL_WAIT_S`]; 0: no long polls): once a validator
//!   (`ETag`) is known, each poll asks the server to hold it that long;
//! - `request_timeout_ms` ([`defaults::REQUEST_TIMEOUT_MS`], at least 1): a whole request
//!   (connect, send, the whole answer); a long poll's deadline adds `wait_s`;
//! - `reconnect_first_ms`, `reconnect_max_ms`: the follower's backoff
//!   ([`crate::session::follower::defaults`]).
//!
//! The poll: `GET url` with `accept: application/json, application/octet-stream`, and
//! `if-none-match` once an `ETag` is known (and `prefer: wait=N` then, unless `wait_s` is
//! 0). A `200` body is offered to the core's [`Follower`]: as a binary dictionary
//! ([`Follower::offer_dictionary`]) when its content type is `application/octet-stream`,
//! else as plain bytes ([`Follower::offer_bytes`]: a dictionary by its magic, or JSON text
//! that must be UTF-8, never decoded with replacements), with the count of bodies read as
//! its revision (HTTP has none of its own). A `304` changes nothing. The next poll goes out
//! at once after a body that installed a router, or after a long poll the server held (at
//! least half its wait, as a server that honours `Prefer: wait` holds it); otherwise at
//! `sent + interval_ms`. Any other status is the source lost with code `http` (and the
//! status), a request the shell could not complete (`unreachable`, `limit_exceeded`) or
//! one past its deadline (`unreachable`) likewise: [`Action::Lost`], and the next poll
//! when the follower's backoff ([`Follower::disconnected`]) says; an answer resets it.
//!
//! One call: `{"op": "refresh"}` asks now, without a long poll, beside the poll loop (which
//! it does not move): `Done` with `{"offered": <result> | null, "revision": "N" | null}`,
//! as etcd's refresh: `offered` what became of the body (the [`Action::Offered`] value's
//! `result`, the `Offered` action before it), `null` for a `304`; `revision` the count of
//! bodies read (`null` before the first); `Failed` with the error otherwise (code `closed`: a call
//! [`HttpSession::close`] ended, or one made after it).
//!
//! State: `{"revision": "N"|null, "epoch": "N"|null, "etag": str|null, "stats": {<the
//! follower's>, "requests": answers of any status, "not_modified": the 304s}}`.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::limits::MAX_DOCUMENT_BYTES;
use crate::session::exchange::{defaults, Action, Request, SourceError};
use crate::session::follower::{Follower, FollowerConfig, Offered};

/// What a poll accepts: a JSON document or a binary dictionary.
const ACCEPT: &str = "application/json, application/octet-stream";
/// The content type of a binary dictionary.
const DICTIONARY_TYPE: &str = "application/octet-stream";
/// The largest time in milliseconds (JavaScript's safe integers).
const MAX_MS: u64 = 1 << 53;

/// An HTTP session's settings ([`HttpConfig::from_value`]; the module docs say what each is).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpConfig {
    /// The URL of the document.
    pub url: String,
    /// The poll interval, from one request sent to the next.
    pub interval_ms: u64,
    /// How long a long poll asks the server to hold it (0: no long polls).
    pub wait_s: u64,
    /// A whole request's limit; a long poll's adds `wait_s`.
    pub request_timeout_ms: u64,
    /// The follower's backoff.
    pub follower: FollowerConfig,
}

impl HttpConfig {
    /// The config `object` describes, defaults for the fields it leaves out.
    ///
    /// # Errors
    /// `invalid_argument` for a config that is not an object, a `source` other than
    /// `"http"`, no `url` or one that is not `http://` or `https://` with a host, an
    /// unknown field, a time that is not an integer in `0..=2^53` (`wait_s`: whole seconds,
    /// at most 2^53 ms; `request_timeout_ms`: at least 1), or a refused backoff
    /// ([`FollowerConfig::from_value`]).
    pub fn from_value(object: &Value) -> Result<HttpConfig> {
        let Value::Object(fields) = object else {
            return Err(Error::argument("config: expected an object"));
        };
        let mut url = None;
        let mut config = HttpConfig {
            url: String::new(),
            interval_ms: defaults::POLL_INTERVAL_MS,
            wait_s: defaults::LONG_POLL_WAIT_S,
            request_timeout_ms: defaults::REQUEST_TIMEOUT_MS,
            follower: FollowerConfig::default(),
        };
        let mut backoff = Map::new();
        for (name, value) in fields {
            let number = |most: u64, unit: &str| {
                value
                    .as_u64()
                    .filter(|&n| n <= most)
                    .ok_or_else(|| Error::argument(format!("config.{name}: expected {unit}, an integer in 0..={most}")))
            };
            match name.as_str() {
                "source" if value.as_str() == Some("http") => {}
                "source" => return Err(Error::argument("config.source: expected \"http\"")),
                "url" => url = Some(value.as_str().ok_or_else(|| Error::argument("config.url: expected a string"))?),
                "interval_ms" => config.interval_ms = number(MAX_MS, "milliseconds")?,
                "wait_s" => config.wait_s = number(MAX_MS / 1000, "seconds")?,
                "request_timeout_ms" => config.request_timeout_ms = number(MAX_MS, "milliseconds")?,
                "reconnect_first_ms" | "reconnect_max_ms" => {
                    backoff.insert(name.clone(), value.clone());
                }
                other => {
                    return Err(Error::argument(format!(
                        "config: unknown field {other:?} (source, url, interval_ms, wait_s, request_timeout_ms, \
                         reconnect_first_ms, reconnect_max_ms)"
                    )))
                }
            }
        }
        let url = url.ok_or_else(|| Error::argument("config.url: required"))?;
        check_url(url)?;
        config.url = url.to_string();
        config.follower = FollowerConfig::from_value(&Value::Object(backoff))?;
        if config.request_timeout_ms == 0 {
            return Err(Error::argument("config.request_timeout_ms: at least 1 (every request is bounded)"));
        }
        Ok(config)
    }

    /// This config as a JSON object (every field).
    pub fn to_value(&self) -> Value {
        let mut value = json!({
            "source": "http", "url": self.url, "interval_ms": self.interval_ms, "wait_s": self.wait_s,
            "request_timeout_ms": self.request_timeout_ms,
        });
        if let (Value::Object(fields), Value::Object(backoff)) = (&mut value, self.follower.to_value()) {
            fields.extend(backoff);
        }
        value
    }
}

/// `url` is `http://` or `https://` (any case) with a host.
fn check_url(url: &str) -> Result<()> {
    let lower = url.to_ascii_lowercase();
    let rest = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://"));
    let authority = rest.map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
    let host = authority.map(|authority| authority.rsplit('@').next().unwrap_or(""));
    match host {
        Some(host) if !host.is_empty() && !host.starts_with(':') && !url.contains(char::is_whitespace) => Ok(()),
        _ => Err(Error::argument(format!("config.url: expected an http:// or https:// URL with a host, not {url:?}"))),
    }
}

/// Milliseconds as seconds for a message: `2000` is "2", `2500` "2.5".
fn seconds(ms: u64) -> String {
    let fraction = ms % 1000;
    if fraction == 0 {
        return (ms / 1000).to_string();
    }
    let digits = format!("{fraction:03}");
    format!("{}.{}", ms / 1000, digits.trim_end_matches('0'))
}

/// The poll loop.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Poll {
    /// Not started.
    Idle,
    /// The next poll goes out at this time (the interval's end, or the backoff's).
    Due(u64),
    /// A poll is out.
    Asking(Asked),
    /// Closed.
    Stopped,
}

/// A request out: the poll's, or a refresh call's.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Asked {
    id: u64,
    sent: u64,
    deadline: Option<u64>,
    /// Sent with `prefer: wait=N`.
    long: bool,
}

/// What an answer was.
enum Answer {
    NotModified,
    Body { offered: Offered, revision: u64 },
    Error(SourceError),
}

/// An HTTP source session (see the module docs).
#[derive(Debug)]
pub struct HttpSession {
    config: HttpConfig,
    /// Boxed: a router is large, and a [`crate::session::source::SourceSession`] is
    /// either kind.
    follower: Box<Follower>,
    /// The last request and call number given.
    last_id: u64,
    poll: Poll,
    /// Refresh calls out: (call, request).
    refreshes: Vec<(u64, Asked)>,
    /// The validator of the last body read.
    etag: Option<String>,
    /// Bodies read: the revision of the last one offered.
    bodies: u64,
    /// Answers of any status.
    requests: u64,
    /// `304` answers.
    not_modified: u64,
}

impl HttpSession {
    /// The session `config` describes ([`HttpConfig::from_value`]).
    ///
    /// # Errors
    /// As [`HttpConfig::from_value`].
    ///
    /// # Example
    /// ```
    /// use shardroute::session::source::{Action, SourceSession};
    /// let mut session = SourceSession::from_config(&serde_json::json!({
    ///     "source": "http", "url": "http://127.0.0.1:8080/topology.json"}))?;
    /// let actions = session.start(0);
    /// let Action::Request(get) = &actions[0] else { panic!() };
    /// assert_eq!((get.method, get.deadline), ("GET", Some(5_000)));
    /// let body = br#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}"#;
    /// let headers = serde_json::json!({"ETag": "\"1\"", "Content-Type": "application/json"});
    /// let actions = session.response(get.id, 20, 200, &headers, body);
    /// assert!(matches!(actions[0], Action::Offered { changed: true, revision: 1, .. }));
    /// // Installed: the next poll at once, a long poll now that the ETag is known.
    /// let Action::Request(poll) = &actions[1] else { panic!() };
    /// assert_eq!(poll.deadline, Some(20 + 5_000 + 30_000));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn from_config(config: &Value) -> Result<HttpSession> {
        let config = HttpConfig::from_value(config)?;
        Ok(HttpSession {
            follower: Box::new(Follower::new(config.follower.clone())),
            config,
            last_id: 0,
            poll: Poll::Idle,
            refreshes: Vec::new(),
            etag: None,
            bodies: 0,
            requests: 0,
            not_modified: 0,
        })
    }

    /// The config in use, every field.
    pub fn config(&self) -> Value {
        self.config.to_value()
    }

    /// Starts the poll loop: the first request at once (a long poll when a refresh
    /// already read an `ETag`). Again, or after [`Self::close`]: nothing.
    pub fn start(&mut self, now_ms: u64) -> Vec<Action> {
        if self.poll != Poll::Idle {
            return Vec::new();
        }
        vec![self.send_poll(now_ms)]
    }

    /// `{"op": "refresh"}`: one request now, without a long poll (see the module docs).
    ///
    /// # Errors
    /// `invalid_argument` for any other op.
    pub fn call(&mut self, op: &Value, now_ms: u64) -> Result<(u64, Vec<Action>)> {
        let refresh = op
            .as_object()
            .is_some_and(|fields| fields.len() == 1 && fields.get("op").and_then(Value::as_str) == Some("refresh"));
        if !refresh {
            return Err(Error::argument("op: an HTTP session has one call, {\"op\": \"refresh\"}"));
        }
        let call = self.next_id();
        if self.poll == Poll::Stopped {
            return Ok((call, vec![Action::Failed { call, error: self.closed_error() }]));
        }
        let (request, asked) = self.request(now_ms, false);
        self.refreshes.push((call, asked));
        Ok((call, vec![Action::Request(request)]))
    }

    /// The answer to request `id` (see [`crate::session::source::SourceSession::response`]).
    pub fn response(&mut self, id: u64, now_ms: u64, status: u16, headers: &Value, body: &[u8]) -> Vec<Action> {
        if let Some(index) = self.refreshes.iter().position(|(_, asked)| asked.id == id) {
            let (call, _) = self.refreshes.remove(index);
            return match self.answer(now_ms, status, headers, body) {
                Answer::NotModified => {
                    let revision = (self.bodies > 0).then(|| self.bodies.to_string());
                    vec![Action::Done { call, result: json!({"offered": null, "revision": revision}) }]
                }
                Answer::Body { offered, revision } => {
                    let changed = matches!(offered, Offered::Installed { .. });
                    let action = Action::Offered { offered, changed, revision };
                    let offered = action.to_value()["offered"]["result"].take();
                    vec![
                        action,
                        Action::Done { call, result: json!({"offered": offered, "revision": revision.to_string()}) },
                    ]
                }
                Answer::Error(error) => vec![Action::Failed { call, error }],
            };
        }
        let Poll::Asking(asked) = &self.poll else { return Vec::new() };
        if asked.id != id {
            return Vec::new();
        }
        let asked = asked.clone();
        let installed = match self.answer(now_ms, status, headers, body) {
            Answer::Error(error) => return vec![self.lost(now_ms, error)],
            Answer::NotModified => None,
            Answer::Body { offered, revision } => Some((offered, revision)),
        };
        self.follower.connected();
        let mut actions = Vec::new();
        let mut at_once = false;
        if let Some((offered, revision)) = installed {
            at_once = matches!(offered, Offered::Installed { .. });
            actions.push(Action::Offered { offered, changed: at_once, revision });
        }
        // A long poll the server held: it answers when the document changes, so ask again
        // at once. Half the wait tells a held request from one answered at once.
        let held = asked.long && now_ms.saturating_sub(asked.sent).saturating_mul(2) >= self.config.wait_s * 1000;
        let at = if at_once || held { now_ms } else { asked.sent.saturating_add(self.config.interval_ms) };
        if at <= now_ms {
            actions.push(self.send_poll(now_ms));
        } else {
            self.poll = Poll::Due(at);
        }
        actions
    }

    /// An HTTP session has no streams: nothing.
    pub fn chunk(&mut self, id: u64, now_ms: u64, data: &[u8]) -> Vec<Action> {
        let _ = (id, now_ms, data);
        Vec::new()
    }

    /// Request `id` could not be completed: the source lost (a poll) or the call failed
    /// (a refresh), with code `limit_exceeded` for that code and `unreachable` for any other.
    pub fn failed(&mut self, id: u64, now_ms: u64, code: &str, message: &str) -> Vec<Action> {
        let code = if code == "limit_exceeded" { "limit_exceeded" } else { "unreachable" };
        let error = SourceError::new(code, format!("GET {}: {message}", self.config.url));
        if let Some(index) = self.refreshes.iter().position(|(_, asked)| asked.id == id) {
            let (call, _) = self.refreshes.remove(index);
            return vec![Action::Failed { call, error }];
        }
        match &self.poll {
            Poll::Asking(asked) if asked.id == id => vec![self.lost(now_ms, error)],
            _ => Vec::new(),
        }
    }

    /// The deadline passed: requests past theirs are cancelled (a refresh failed, the poll
    /// lost, `unreachable`), and a poll that is due goes out.
    pub fn timer(&mut self, now_ms: u64) -> Vec<Action> {
        let mut actions = Vec::new();
        let mut index = 0;
        while index < self.refreshes.len() {
            let (call, asked) = &self.refreshes[index];
            if asked.deadline.is_some_and(|deadline| deadline <= now_ms) {
                let error = self.timed_out(asked);
                actions.push(Action::Cancel { id: asked.id });
                actions.push(Action::Failed { call: *call, error });
                self.refreshes.remove(index);
            } else {
                index += 1;
            }
        }
        match &self.poll {
            Poll::Asking(asked) if asked.deadline.is_some_and(|deadline| deadline <= now_ms) => {
                let error = self.timed_out(asked);
                actions.push(Action::Cancel { id: asked.id });
                actions.push(self.lost(now_ms, error));
            }
            Poll::Due(at) if *at <= now_ms => actions.push(self.send_poll(now_ms)),
            _ => {}
        }
        actions
    }

    /// Stops: the requests out cancelled, the refresh calls failed (`closed`), and
    /// nothing more asked.
    pub fn close(&mut self, now_ms: u64) -> Vec<Action> {
        let _ = now_ms;
        let mut actions = Vec::new();
        if let Poll::Asking(asked) = &self.poll {
            actions.push(Action::Cancel { id: asked.id });
        }
        self.poll = Poll::Stopped;
        for (call, asked) in core::mem::take(&mut self.refreshes) {
            actions.push(Action::Cancel { id: asked.id });
            actions.push(Action::Failed { call, error: self.closed_error() });
        }
        actions
    }

    /// The one time to call [`Self::timer`] at: the next poll, or the earliest deadline of
    /// a request out.
    pub fn deadline(&self) -> Option<u64> {
        let poll = match &self.poll {
            Poll::Due(at) => Some(*at),
            Poll::Asking(asked) => asked.deadline,
            Poll::Idle | Poll::Stopped => None,
        };
        self.refreshes.iter().filter_map(|(_, asked)| asked.deadline).chain(poll).min()
    }

    /// The core follower.
    pub fn follower(&self) -> Option<&Follower> {
        Some(&self.follower)
    }

    /// `{"revision", "epoch", "etag", "stats"}` (see the module docs).
    pub fn state(&self) -> Value {
        let mut stats = self.follower.stats().to_value();
        stats["requests"] = Value::from(self.requests);
        stats["not_modified"] = Value::from(self.not_modified);
        json!({
            "revision": self.follower.revision().map(|revision| revision.to_string()),
            "epoch": self.follower.router().map(|router| router.epoch().to_string()),
            "etag": self.etag,
            "stats": stats,
        })
    }

    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// A GET of the URL at `now_ms`: a long poll when `long` and an ETag is known (and
    /// `wait_s` is not 0).
    fn request(&mut self, now_ms: u64, long: bool) -> (Request, Asked) {
        let id = self.next_id();
        let mut headers = vec![("accept", ACCEPT.to_string())];
        if let Some(tag) = &self.etag {
            headers.push(("if-none-match", tag.clone()));
        }
        let long = long && self.etag.is_some() && self.config.wait_s > 0;
        if long {
            headers.push(("prefer", format!("wait={}", self.config.wait_s)));
        }
        let wait_ms = if long { self.config.wait_s * 1000 } else { 0 };
        let deadline = Some(now_ms.saturating_add(self.config.request_timeout_ms).saturating_add(wait_ms));
        let request = Request {
            id,
            method: "GET",
            url: self.config.url.clone(),
            headers,
            body: None,
            deadline,
            limit: MAX_DOCUMENT_BYTES,
            stream: false,
        };
        (request, Asked { id, sent: now_ms, deadline, long })
    }

    /// The poll loop's next request, now.
    fn send_poll(&mut self, now_ms: u64) -> Action {
        let (request, asked) = self.request(now_ms, true);
        self.poll = Poll::Asking(asked);
        Action::Request(request)
    }

    /// The source lost at `now_ms`: the next poll when the follower's backoff says.
    fn lost(&mut self, now_ms: u64, error: SourceError) -> Action {
        let retry_at = self.follower.disconnected(now_ms);
        self.poll = Poll::Due(retry_at);
        Action::Lost { error, retry_at }
    }

    fn timed_out(&self, asked: &Asked) -> SourceError {
        let allowed = asked.deadline.unwrap_or(asked.sent).saturating_sub(asked.sent);
        SourceError::new(
            "unreachable",
            format!("GET {}: no whole answer within {} s", self.config.url, seconds(allowed)),
        )
    }

    fn closed_error(&self) -> SourceError {
        SourceError::new("closed", format!("GET {}: the follower was closed", self.config.url))
    }

    /// One answer, counted; a body offered to the follower.
    fn answer(&mut self, now_ms: u64, status: u16, headers: &Value, body: &[u8]) -> Answer {
        self.requests += 1;
        match status {
            304 => {
                self.not_modified += 1;
                Answer::NotModified
            }
            200 if body.len() as u64 > MAX_DOCUMENT_BYTES => Answer::Error(SourceError::new(
                "limit_exceeded",
                format!("GET {}: {} bytes; the limit is {MAX_DOCUMENT_BYTES}", self.config.url, body.len()),
            )),
            200 => {
                self.etag = header(headers, "etag").map(str::to_string);
                self.bodies += 1;
                let dictionary = header(headers, "content-type").is_some_and(|kind| {
                    kind.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(DICTIONARY_TYPE)
                });
                let offered = if dictionary {
                    self.follower.offer_dictionary(body, self.bodies, now_ms)
                } else {
                    self.follower.offer_bytes(body, self.bodies, now_ms)
                };
                Answer::Body { offered, revision: self.bodies }
            }
            status => Answer::Error(SourceError {
                code: "http",
                message: format!("GET {}: HTTP {status}", self.config.url),
                status: Some(status),
            }),
        }
    }
}

/// The header `name` (lower case) of `headers`, names in any case; a value that is not a
/// string is absent.
fn header<'a>(headers: &'a Value, name: &str) -> Option<&'a str> {
    let fields = headers.as_object()?;
    fields.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).and_then(|(_, value)| value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(epoch: u64) -> String {
        format!(
            r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{{"id": "a"}}, {{"id": "b"}}], "strategy": {{"type": "jump"}}}}"#
        )
    }

    fn session(extra: Value) -> HttpSession {
        let mut config = json!({"source": "http", "url": "http://127.0.0.1:8080/topology.json"});
        if let (Value::Object(fields), Value::Object(extra)) = (&mut config, extra) {
            fields.extend(extra);
        }
        HttpSession::from_config(&config).unwrap()
    }

    fn request(actions: &[Action]) -> &Request {
        match actions.last() {
            Some(Action::Request(request)) => request,
            other => panic!("expected a request last, got {other:?}"),
        }
    }

    fn header_of<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
        request.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    fn json_headers(tag: &str) -> Value {
        json!({"ETag": tag, "Content-Type": "application/json"})
    }

    /// A session whose first GET (id 1, sent at 0) was answered at 10 with epoch 1 and ETag "1".
    fn following(extra: Value) -> (HttpSession, Request) {
        let mut session = session(extra);
        let first = request(&session.start(0)).clone();
        let actions = session.response(first.id, 10, 200, &json_headers("\"1\""), doc(1).as_bytes());
        assert!(matches!(actions[0], Action::Offered { offered: Offered::Installed { epoch: 1 }, changed: true, .. }));
        let poll = request(&actions).clone();
        (session, poll)
    }

    #[test]
    fn the_config_has_the_core_defaults_and_refuses_what_it_does_not_know() {
        let session = session(json!({}));
        assert_eq!(
            session.config(),
            json!({"source": "http", "url": "http://127.0.0.1:8080/topology.json", "interval_ms": 1000, "wait_s": 30,
                   "request_timeout_ms": 5000, "reconnect_first_ms": 100, "reconnect_max_ms": 5000})
        );
        for bad in [
            json!({"source": "http"}),
            json!({"source": "http", "url": "ftp://x/"}),
            json!({"source": "http", "url": "http:///path"}),
            json!({"source": "http", "url": "http://:80/"}),
            json!({"source": "http", "url": 5}),
            json!({"source": "etcd", "url": "http://x/"}),
            json!({"source": "http", "url": "http://x/", "interval": 5}),
            json!({"source": "http", "url": "http://x/", "wait_s": 1.5}),
            json!({"source": "http", "url": "http://x/", "interval_ms": -1}),
            json!({"source": "http", "url": "http://x/", "request_timeout_ms": (1u64 << 53) + 1}),
            json!({"source": "http", "url": "http://x/", "reconnect_first_ms": 0}),
            json!({"source": "http", "url": "http://x/", "request_timeout_ms": 0}),
            json!([]),
        ] {
            let refused = HttpSession::from_config(&bad).unwrap_err();
            assert_eq!(refused.code(), "invalid_argument", "{bad}");
        }
        assert!(HttpSession::from_config(&json!({"url": "HTTPS://example.com"})).is_ok());
    }

    #[test]
    fn the_first_get_asks_plainly_and_a_change_is_asked_after_at_once_with_a_long_poll() {
        let mut session = session(json!({}));
        let actions = session.start(0);
        let first = request(&actions);
        assert_eq!(actions.len(), 1);
        assert_eq!((first.id, first.method, first.body.as_deref(), first.stream), (1, "GET", None, false));
        assert_eq!(first.headers, vec![("accept", ACCEPT.to_string())]);
        assert_eq!((first.deadline, first.limit), (Some(5_000), MAX_DOCUMENT_BYTES));
        assert_eq!(session.deadline(), Some(5_000));
        assert!(session.start(1).is_empty(), "started once");
        let (session, poll) = following(json!({}));
        assert_eq!(poll.id, 2);
        assert_eq!(header_of(&poll, "if-none-match"), Some("\"1\""));
        assert_eq!(header_of(&poll, "prefer"), Some("wait=30"));
        // One request timeout, plus the wait of a long poll.
        assert_eq!(poll.deadline, Some(10 + 5_000 + 30_000));
        assert_eq!(session.state()["etag"], "\"1\"");
        assert_eq!(session.state()["epoch"], "1");
        assert_eq!(session.state()["revision"], "1");
    }

    #[test]
    fn a_304_answered_at_once_waits_the_interval_minus_the_time_it_took() {
        let (mut session, poll) = following(json!({}));
        // Sent at 10, answered at 310: the next poll at 10 + 1000, not 310 + 1000.
        let actions = session.response(poll.id, 310, 304, &json!({}), b"");
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!(session.deadline(), Some(1_010));
        assert!(session.timer(1_009).is_empty());
        let next = session.timer(1_010);
        assert_eq!(request(&next).id, 3);
        assert_eq!(session.state()["stats"]["not_modified"], 1);
        assert_eq!(session.state()["stats"]["requests"], 2);
    }

    #[test]
    fn an_answer_slower_than_the_interval_is_followed_at_once() {
        let (mut session, poll) = following(json!({"wait_s": 0}));
        assert_eq!(header_of(&poll, "prefer"), None, "wait_s 0: no long polls");
        assert_eq!(poll.deadline, Some(10 + 5_000));
        let actions = session.response(poll.id, 2_000, 304, &json!({}), b"");
        assert_eq!(request(&actions).id, 3);
    }

    #[test]
    fn a_long_poll_the_server_held_is_followed_at_once() {
        let (mut session, poll) = following(json!({"interval_ms": 30_000, "wait_s": 10}));
        // Held 5 s of a 10 s wait: a server that holds requests.
        let actions = session.response(poll.id, 5_010, 304, &json!({}), b"");
        assert_eq!(request(&actions).id, 3);
        // Answered at once (a server without long polls): the interval.
        let next = request(&actions).clone();
        assert!(session.response(next.id, 5_020, 304, &json!({}), b"").is_empty());
        assert_eq!(session.deadline(), Some(5_010 + 30_000));
    }

    #[test]
    fn the_same_body_again_is_not_asked_for_in_a_loop() {
        // A server that ignores If-None-Match: 200 with the same document, at once.
        let (mut session, poll) = following(json!({}));
        let actions = session.response(poll.id, 20, 200, &json_headers("\"1\""), doc(1).as_bytes());
        assert!(matches!(actions[..], [Action::Offered { offered: Offered::Unchanged, changed: false, revision: 2 }]));
        assert_eq!(session.deadline(), Some(10 + 1_000));
    }

    #[test]
    fn a_request_past_its_deadline_is_cancelled_and_the_source_lost_with_the_backoff() {
        let (mut session, poll) = following(json!({"request_timeout_ms": 2000, "wait_s": 1}));
        assert_eq!(poll.deadline, Some(10 + 2_000 + 1_000));
        assert!(session.timer(3_009).is_empty());
        let actions = session.timer(3_010);
        assert_eq!(actions[0], Action::Cancel { id: poll.id });
        let Action::Lost { error, retry_at } = &actions[1] else { panic!("{actions:?}") };
        assert_eq!((error.code, *retry_at), ("unreachable", 3_010 + 100));
        assert!(error.message.ends_with("no whole answer within 3 s"), "{}", error.message);
        // The answer after the cancel is not read.
        assert!(session.response(poll.id, 3_020, 200, &json_headers("\"2\""), doc(2).as_bytes()).is_empty());
        // The retry, and the backoff doubling while the source stays lost.
        let retry = request(&session.timer(3_110)).clone();
        let actions = session.failed(retry.id, 3_120, "unreachable", "connection refused");
        let Action::Lost { error, retry_at } = &actions[0] else { panic!("{actions:?}") };
        assert_eq!(
            (error.code, error.message.as_str(), *retry_at),
            ("unreachable", "GET http://127.0.0.1:8080/topology.json: connection refused", 3_120 + 200)
        );
        // An answer resets the backoff.
        let retry = request(&session.timer(3_320)).clone();
        session.response(retry.id, 3_330, 304, &json!({}), b"");
        let next = request(&session.timer(4_320)).clone();
        let actions = session.failed(next.id, 4_400, "closed", "reset");
        assert!(matches!(actions[0], Action::Lost { retry_at: 4_500, .. }));
        assert_eq!(session.state()["stats"]["disconnects"], 3);
    }

    #[test]
    fn an_error_status_is_http_with_its_status_and_the_backoff() {
        let (mut session, poll) = following(json!({}));
        let actions = session.response(poll.id, 50, 503, &json!({}), b"unavailable");
        let Action::Lost { error, retry_at } = &actions[0] else { panic!("{actions:?}") };
        assert_eq!((error.code, error.status, *retry_at), ("http", Some(503), 150));
        assert_eq!(
            actions[0].to_value(),
            json!({"lost": {"error": {"code": "http", "status": 503,
                   "message": "GET http://127.0.0.1:8080/topology.json: HTTP 503"}, "retry_at": 150}})
        );
        assert_eq!(session.deadline(), Some(150));
        // A redirect is not followed: an error too.
        let retry = request(&session.timer(150)).clone();
        let actions = session.response(retry.id, 160, 302, &json!({"Location": "/elsewhere"}), b"");
        assert!(matches!(&actions[0], Action::Lost { error, .. } if error.status == Some(302)));
    }

    #[test]
    fn the_content_type_decides_how_a_body_is_offered() {
        // JSON served as a dictionary is not a dictionary.
        let mut session = session(json!({}));
        let get = request(&session.start(0)).clone();
        let actions = session.response(
            get.id,
            5,
            200,
            &json!({"content-type": "Application/Octet-Stream; x=y"}),
            doc(1).as_bytes(),
        );
        assert!(
            matches!(&actions[0], Action::Offered { offered: Offered::Refused(e), .. } if e.code() == "invalid_topology")
        );
        // A dictionary served with no type is told by its magic.
        let dictionary = crate::dictionary::encode(
            &crate::topology::Topology::from_json(
                r#"{"format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b"}],
                    "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]]}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let mut session = self::session(json!({}));
        let get = request(&session.start(0)).clone();
        let actions = session.response(get.id, 5, 200, &json!({}), &dictionary);
        assert!(matches!(actions[0], Action::Offered { offered: Offered::Installed { epoch: 2 }, .. }));
        assert_eq!(session.state()["etag"], Value::Null, "no ETag: none sent");
        assert_eq!(header_of(request(&actions), "if-none-match"), None);
        assert_eq!(header_of(request(&actions), "prefer"), None, "no ETag: no long poll");
    }

    #[test]
    fn a_body_that_is_not_utf8_is_refused_never_replaced_and_the_router_kept() {
        let (mut session, poll) = following(json!({}));
        let bad = doc(2).replace("\"a\"", "\"a\u{fffd}\"").into_bytes();
        let mut bad: Vec<u8> = bad.iter().copied().filter(|&b| b < 0x80 || b == 0xef).collect();
        bad.push(0xff);
        let actions = session.response(poll.id, 20, 200, &json_headers("\"2\""), &bad);
        let Action::Offered { offered: Offered::Refused(error), changed: false, revision: 2 } = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(error.code(), "invalid_topology");
        assert!(!actions.iter().any(|action| matches!(action, Action::Lost { .. })), "a refusal, not a lost source");
        assert_eq!(session.state()["epoch"], "1");
        assert_eq!(session.state()["stats"]["refused"], json!({"invalid_topology": 1}));
    }

    #[test]
    fn a_body_past_the_limit_is_limit_exceeded() {
        let (mut session, poll) = following(json!({}));
        let actions = session.failed(poll.id, 20, "limit_exceeded", "more than 67108864 bytes");
        assert!(matches!(&actions[0], Action::Lost { error, .. } if error.code == "limit_exceeded"));
        let retry = request(&session.timer(120)).clone();
        let huge = vec![b' '; MAX_DOCUMENT_BYTES as usize + 1];
        let actions = session.response(retry.id, 130, 200, &json!({}), &huge);
        assert!(matches!(&actions[0], Action::Lost { error, .. } if error.code == "limit_exceeded"));
        assert_eq!(session.state()["stats"]["offered"], 1, "never offered");
    }

    #[test]
    fn a_refresh_asks_beside_the_loop_and_ends_with_what_became_of_the_body() {
        let (mut session, poll) = following(json!({}));
        let (call, actions) = session.call(&json!({"op": "refresh"}), 100).unwrap();
        let get = request(&actions).clone();
        assert_eq!((call, get.id), (3, 4));
        assert_eq!(header_of(&get, "prefer"), None, "a refresh is no long poll");
        assert_eq!(get.deadline, Some(5_100));
        assert_eq!(session.deadline(), Some(5_100), "the refresh's deadline is before the long poll's");
        let actions = session.response(get.id, 120, 200, &json_headers("\"2\""), doc(2).as_bytes());
        assert_eq!(actions.len(), 2);
        assert_eq!(
            actions[1].to_value(),
            json!({"done": {"call": 3, "result": {"offered": {"installed": {"epoch": "2"}}, "revision": "2"}}})
        );
        // 304, then a failure.
        let (call, actions) = session.call(&json!({"op": "refresh"}), 200).unwrap();
        let get = request(&actions).clone();
        assert_eq!(
            session.response(get.id, 210, 304, &json!({}), b""),
            vec![Action::Done { call, result: json!({"offered": null, "revision": "2"}) }]
        );
        let (call, actions) = session.call(&json!({"op": "refresh"}), 300).unwrap();
        let get = request(&actions).clone();
        let actions = session.response(get.id, 310, 500, &json!({}), b"");
        assert!(matches!(&actions[..], [Action::Failed { call: c, error }] if *c == call && error.status == Some(500)));
        // A refresh past its deadline fails; the loop is not lost for it.
        let (call, actions) = session.call(&json!({"op": "refresh"}), 400).unwrap();
        let get = request(&actions).clone();
        let actions = session.timer(5_400);
        assert_eq!(actions[0], Action::Cancel { id: get.id });
        assert!(matches!(&actions[1], Action::Failed { call: c, error } if *c == call && error.code == "unreachable"));
        assert_eq!(session.state()["stats"]["disconnects"], 0);
        assert_eq!(session.deadline(), Some(10 + 35_000), "the long poll still out");
        let _ = poll;
        assert_eq!(session.call(&json!({"op": "get"}), 0).unwrap_err().code(), "invalid_argument");
        assert_eq!(session.call(&json!({"op": "refresh", "x": 1}), 0).unwrap_err().code(), "invalid_argument");
    }

    #[test]
    fn close_cancels_everything_and_asks_no_more() {
        let (mut session, poll) = following(json!({}));
        let (call, actions) = session.call(&json!({"op": "refresh"}), 100).unwrap();
        let get = request(&actions).clone();
        let actions = session.close(200);
        assert_eq!(actions[0], Action::Cancel { id: poll.id });
        assert_eq!(actions[1], Action::Cancel { id: get.id });
        assert!(matches!(&actions[2], Action::Failed { call: c, error } if *c == call && error.code == "closed"));
        assert_eq!(session.deadline(), None);
        assert!(session.timer(1_000_000).is_empty());
        assert!(session.start(1_000_000).is_empty());
        assert!(session.response(poll.id, 300, 304, &json!({}), b"").is_empty());
        assert!(session.close(300).is_empty());
        let (call, actions) = session.call(&json!({"op": "refresh"}), 400).unwrap();
        assert!(matches!(&actions[..], [Action::Failed { call: c, error }] if *c == call && error.code == "closed"));
        assert_eq!(session.state()["epoch"], "1", "the router stays to read");
    }

    #[test]
    fn seconds_are_written_plainly() {
        assert_eq!([seconds(2_000), seconds(2_500), seconds(10), seconds(0)], ["2", "2.5", "0.01", "0"]);
    }
}
