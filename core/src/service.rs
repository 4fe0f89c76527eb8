//! The routing service: what `GET /route?key=...` and `POST /route` answer, sans-IO.
//!
//! A client in a language no package of ours reaches asks an HTTP routing tier "which
//! shard, which node?" instead of loading the document itself. Every decision of that
//! conversation is made here, as a pure function of the current [`Router`] and one
//! request (method, target, `If-None-Match`, a body the shell already bounded to
//! [`MAX_SERVICE_BODY_BYTES`]); the shells (`shardroute serve`, the Python and Node
//! handlers) only move bytes, so every tier answers the same request with the same bytes.
//!
//! * `GET /route?key=K[&form=text|hex|u64]`: one key. The query is form-urlencoded
//!   (`+` is a space, `%2B` a plus). `form=text` (the default) routes the key's UTF-8
//!   bytes, refused as `invalid_key` when they are not UTF-8 (as every binding refuses text
//!   that is not Unicode); `hex` routes any bytes written in hexadecimal; `u64` routes a
//!   decimal integer (`invalid_key` outside `0..=u64::MAX`). Under the document's
//!   `"hashing": {"keys": "u64"}` a text key is read as its integer, as by the router.
//!   Answers `{"address": "10.0.0.2:5432", "epoch": 7, "node": "db-1", "shard": 3}`
//!   (fields in name order; `address` only when the document gives the node one), with the service's
//!   [`etag`](Service::etag), and `304` when `If-None-Match` names it: an answer is a
//!   function of its URL and the document, so a cache may keep it until the epoch moves.
//! * `POST /route` with `{"keys": [...], "form": "text"}`: up to [`MAX_SERVICE_KEYS`] keys
//!   in one body, answered in order as `{"epoch": 7, "answers": [{"shard": ..., "node":
//!   ..., "address": ...}, ...]}`. Under `form: "text"` a string is a text key and an
//!   integer a `u64` key (the integer `7` and the text `"7"` are different keys, as in the
//!   packages); under `"hex"` every key is a hex string, under `"u64"` an integer or its
//!   decimal text. A batch is answered whole or refused whole, naming the first bad key
//!   (`keys[2]: ...`), as the packages' batch calls refuse theirs.
//!
//! Refusals are JSON, `{"error": {"code": "invalid_key", "message": "..."}, "epoch": 7}`,
//! with the core's stable [`code`](crate::ErrorKind::code) and one status per case:
//! `400` for a bad key or argument, `404` for another path, `405` (with `Allow`) for
//! another method, `413` for a body or batch past its limit (`limit_exceeded`), `503`
//! (`unavailable`, with `Retry-After`) before the first document, or `no_nodes` for a
//! key whose shard has no active node. No input panics.
//!
//! Cost: one [`Router::route`] per key and one JSON value per answer; a batch body of
//! [`MAX_SERVICE_BODY_BYTES`] is parsed into memory whole (bounded first by its length).
//!
//! # Example
//! ```
//! use shardroute::service::{Request, Service};
//! let router = shardroute::Router::from_json(r#"{"format": "shardroute/1", "epoch": 7,
//!     "nodes": [{"id": "a", "address": "10.0.0.1:5432"}, {"id": "b"}], "strategy": {"type": "jump"}}"#)?;
//! let service = Service::new(router.clone());
//! let answer = service.answer(&Request::get("/route?key=user%3A42"));
//! assert_eq!(answer.status, 200);
//! let body: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
//! assert_eq!(body["shard"], router.route("user:42")?);
//! assert_eq!(body["node"], router.node("user:42")?);
//! assert_eq!(body["epoch"], 7);
//! assert_eq!(answer.header("etag"), Some(service.etag()));
//!
//! let batch = service.answer(&Request::post("/route", br#"{"keys": ["user:42", 42]}"#));
//! assert_eq!(batch.status, 200);
//! let refused = service.answer(&Request::get("/route?key=%FF"));
//! assert_eq!((refused.status, refused.code()), (400, Some("invalid_key")));
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::argument::at_index;
use crate::error::{Error, ErrorKind, Result};
use crate::json::{self, Put};
use crate::key::Key;
use crate::limits::{MAX_SERVICE_BODY_BYTES, MAX_SERVICE_KEYS};
use crate::router::Router;

/// The path the service answers; every other path is `404` (or, in `shardroute serve`,
/// the document, as before the service).
pub const PATH: &str = "/route";

/// How long a shell waits for a whole `POST` body after the request's head, in
/// milliseconds (one deadline for the body, not one per read): a client dripping it is
/// closed at it, with no answer. `shardroute serve` and the packages' handlers hold it.
pub const BODY_TIMEOUT_MS: u64 = 10_000;

/// The methods the service answers, as its `405` answers' `Allow` header says them.
pub const ALLOW: &str = "GET, POST";

/// One request, as the shell read it.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The method, as sent (`GET`, `POST`; methods are case-sensitive).
    pub method: &'a str,
    /// The request target: the path and its query, `/route?key=user%3A42`.
    pub target: &'a str,
    /// The `If-None-Match` header, when sent (several fields joined with `, `).
    pub if_none_match: Option<&'a str>,
    /// The body; the shell reads at most [`MAX_SERVICE_BODY_BYTES`] of it and answers
    /// [`body_too_large`] past that without reading on (this refuses a longer one too).
    pub body: &'a [u8],
}

impl<'a> Request<'a> {
    /// A `GET` of `target` with no `If-None-Match`.
    pub fn get(target: &'a str) -> Request<'a> {
        Request { method: "GET", target, if_none_match: None, body: &[] }
    }

    /// A `POST` of `body` to `target`.
    pub fn post(target: &'a str, body: &'a [u8]) -> Request<'a> {
        Request { method: "POST", target, if_none_match: None, body }
    }
}

/// An answer: the status, the headers to send (the shell adds `Content-Length`) and the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// Header names (lower case) and values: `content-type`, `etag`, `cache-control`,
    /// `allow`, `retry-after` as the answer needs them.
    pub headers: Vec<(&'static str, String)>,
    /// The body: JSON, or empty for `304`.
    pub body: Vec<u8>,
}

impl Response {
    /// The stable error code of a refusal (`None` for an answer).
    pub fn code(&self) -> Option<&'static str> {
        if self.status < 400 {
            return None;
        }
        let value: Value = serde_json::from_slice(&self.body).ok()?;
        let code = value.get("error")?.get("code")?.as_str()?;
        ErrorKind::ALL.iter().map(|kind| kind.code()).find(|known| *known == code)
    }

    /// The value of header `name` (lower case), if the answer has it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| *key == name).map(|(_, value)| value.as_str())
    }
}

/// How a key's text is read: the `form` of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Text,
    Hex,
    U64,
}

const FORMS: &[(&str, Form)] = &[("text", Form::Text), ("hex", Form::Hex), ("u64", Form::U64)];

/// The routing service over one document: its router and the strong ETag of its answers.
#[derive(Clone, Debug)]
pub struct Service {
    router: Router,
    etag: String,
}

impl Service {
    /// The service of `router`. Computes the ETag once (the canonical JSON of the
    /// document is written and summed here, not per request).
    pub fn new(router: Router) -> Service {
        let checksum = crate::hash::crc32(router.to_json().as_bytes());
        let etag = format!("\"route-{}-{checksum:08x}\"", router.epoch());
        Service { router, etag }
    }

    /// The router answered from.
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// The strong ETag of every answer of this document, quoted:
    /// `"route-EPOCH-CRC32"`, the CRC-32 of the document's canonical JSON, so two
    /// documents with one epoch never share it.
    pub fn etag(&self) -> &str {
        &self.etag
    }

    /// The answer to `request`. Never panics; every refusal is a JSON error (see the
    /// [module docs](self)).
    pub fn answer(&self, request: &Request<'_>) -> Response {
        let epoch = Some(self.router.epoch());
        let (path, query) = split_target(request.target);
        if path != PATH {
            let error = Error::argument(format!("no endpoint at {:?}: the routing service answers {PATH}", path));
            return refusal(404, &error, epoch);
        }
        match request.method {
            "GET" => self.answer_get(query, request.if_none_match),
            "POST" => self.answer_post(query, request.body),
            other => {
                let error = Error::argument(format!("method {other:?} not allowed at {PATH}: {ALLOW}"));
                let mut response = refusal(405, &error, epoch);
                response.headers.push(("allow", ALLOW.to_string()));
                response
            }
        }
    }

    fn answer_get(&self, query: &str, if_none_match: Option<&str>) -> Response {
        let epoch = Some(self.router.epoch());
        if if_none_match.is_some_and(|held| matches_tag(held, &self.etag)) {
            return Response {
                status: 304,
                headers: alloc::vec![("etag", self.etag.clone()), ("cache-control", "no-cache".to_string())],
                body: Vec::new(),
            };
        }
        let answer = parse_query(query).and_then(|(key, form)| {
            let key = key_of_bytes(&key, form)?;
            self.place(key.as_key())
        });
        match answer {
            Ok(mut answer) => {
                answer.put("epoch", json::u64_value(self.router.epoch()));
                let mut response = ok(Value::Object(answer));
                response.headers.push(("etag", self.etag.clone()));
                response
            }
            Err(error) => refusal(status_of(&error), &error, epoch),
        }
    }

    fn answer_post(&self, query: &str, body: &[u8]) -> Response {
        let epoch = Some(self.router.epoch());
        if body.len() as u64 > MAX_SERVICE_BODY_BYTES {
            return body_too_large(body.len() as u64);
        }
        let answers = if query.is_empty() {
            parse_batch(body).and_then(|keys| {
                let mut answers = Vec::new();
                for (index, key) in keys.iter().enumerate() {
                    answers.push(Value::Object(self.place(key.as_key()).map_err(|err| at_index(index, err))?));
                }
                Ok(answers)
            })
        } else {
            Err(Error::argument(format!("POST {PATH} takes no query (the keys and their form are in the body)")))
        };
        match answers {
            Ok(answers) => {
                let mut body = Map::new();
                body.put("epoch", json::u64_value(self.router.epoch()));
                body.put("answers", Value::Array(answers));
                ok(Value::Object(body))
            }
            Err(error) => refusal(status_of(&error), &error, epoch),
        }
    }

    /// `{"shard", "node", "address"?}` of one key.
    fn place(&self, key: Key<'_>) -> Result<Map<String, Value>> {
        let shard = self.router.route(key)?;
        let index = self.router.shard_owner_index(shard)?;
        let node = &self.router.nodes()[index as usize];
        let mut answer = Map::new();
        answer.put("shard", shard.into());
        answer.put("node", Value::String(node.id.clone()));
        if let Some(address) = &node.address {
            answer.put("address", Value::String(address.clone()));
        }
        Ok(answer)
    }
}

/// Whether the path of `target` is the service's ([`PATH`]): what a shell that serves
/// other things too (the document) asks before handing a request over.
pub fn handles(target: &str) -> bool {
    split_target(target).0 == PATH
}

/// The `413` refusal of a body of `length` bytes, past [`MAX_SERVICE_BODY_BYTES`]: what a
/// shell answers from the `Content-Length` (or once the bytes read pass the limit)
/// without reading the rest.
pub fn body_too_large(length: u64) -> Response {
    let error = Error::limit(format!(
        "request body: {length} bytes exceeds the limit of {MAX_SERVICE_BODY_BYTES} (limits::MAX_SERVICE_BODY_BYTES)"
    ));
    refusal(413, &error, None)
}

/// The `503` answer before a shell has a document to route with.
pub fn unavailable() -> Response {
    let error = Error::new(ErrorKind::Unavailable, "no topology document yet: try again");
    let mut response = refusal(503, &error, None);
    response.headers.push(("retry-after", "1".to_string()));
    response
}

/// The `408` answer of a `POST` whose body did not arrive within [`BODY_TIMEOUT_MS`] of
/// its head, with `connection: close`: what a shell answers when it cannot close the
/// connection itself (a `fetch` handler in a worker or Deno, which must return a
/// response). Shells that own their socket (`shardroute serve`, the Node and Python
/// handlers) close it unanswered instead.
pub fn body_timed_out() -> Response {
    let error = Error::new(
        ErrorKind::Unavailable,
        format!(
            "request body: did not arrive within {BODY_TIMEOUT_MS} ms of the request's head (service::BODY_TIMEOUT_MS)"
        ),
    );
    let mut response = refusal(408, &error, None);
    response.headers.push(("connection", "close".to_string()));
    response
}

/// The status of a refusal by its kind: `413` for a limit, `503` for a shard with no
/// active node, else `400`.
fn status_of(error: &Error) -> u16 {
    match error.kind() {
        ErrorKind::LimitExceeded => 413,
        ErrorKind::NoNodes | ErrorKind::Unavailable => 503,
        _ => 400,
    }
}

fn ok(value: Value) -> Response {
    Response {
        status: 200,
        headers: alloc::vec![
            ("content-type", "application/json".to_string()),
            ("cache-control", "no-cache".to_string())
        ],
        body: value.to_string().into_bytes(),
    }
}

fn refusal(status: u16, error: &Error, epoch: Option<u64>) -> Response {
    let mut detail = Map::new();
    detail.put("code", error.code().into());
    detail.put("message", error.message().into());
    let mut body = Map::new();
    body.put("error", Value::Object(detail));
    if let Some(epoch) = epoch {
        body.put("epoch", json::u64_value(epoch));
    }
    Response {
        status,
        headers: alloc::vec![
            ("content-type", "application/json".to_string()),
            ("cache-control", "no-store".to_string())
        ],
        body: Value::Object(body).to_string().into_bytes(),
    }
}

/// The path and the query (empty when none) of a request target.
fn split_target(target: &str) -> (&str, &str) {
    target.split_once('?').unwrap_or((target, ""))
}

/// Whether an `If-None-Match` value names `tag` (or is `*`): RFC 9110's weak comparison,
/// over a comma-separated list.
fn matches_tag(held: &str, tag: &str) -> bool {
    held.split(',').map(str::trim).any(|each| each == "*" || each.strip_prefix("W/").unwrap_or(each) == tag)
}

/// The key's bytes and its form from a `GET` query.
fn parse_query(query: &str) -> Result<(Vec<u8>, Form)> {
    let (mut key, mut form) = (None, None);
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode_component(name)?;
        let slot = match name.as_slice() {
            b"key" => &mut key,
            b"form" => &mut form,
            other => {
                return Err(Error::argument(format!(
                    "unknown query parameter {:?}; expected key, form",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        if slot.is_some() {
            return Err(Error::argument(format!("query parameter {:?} given twice", String::from_utf8_lossy(&name))));
        }
        *slot = Some(decode_component(value)?);
    }
    let key = key.ok_or_else(|| Error::argument(format!("GET {PATH} needs a key: {PATH}?key=...")))?;
    let form = match form {
        None => Form::Text,
        Some(form) => form_named(core::str::from_utf8(&form).unwrap_or("\u{FFFD}"))?,
    };
    Ok((key, form))
}

fn form_named(name: &str) -> Result<Form> {
    FORMS
        .iter()
        .find(|(spelling, _)| *spelling == name)
        .map(|(_, form)| *form)
        .ok_or_else(|| Error::argument(format!("unknown form {name:?}; expected \"text\", \"hex\" or \"u64\"")))
}

/// Form-urlencoded decoding: `+` is a space, `%XX` a byte.
fn decode_component(text: &str) -> Result<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let byte =
                    bytes.get(i + 1..i + 3).and_then(|pair| Some(hex_digit(pair[0])? << 4 | hex_digit(pair[1])?));
                let byte = byte.ok_or_else(|| {
                    Error::argument(format!("query: a % at byte {i} is not followed by two hex digits"))
                })?;
                out.push(byte);
                i += 2;
            }
            other => out.push(other),
        }
        i += 1;
    }
    Ok(out)
}

fn hex_digit(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// A key owned while a request is answered.
enum OwnedKey {
    Bytes(Vec<u8>),
    U64(u64),
}

impl OwnedKey {
    fn as_key(&self) -> Key<'_> {
        match self {
            OwnedKey::Bytes(bytes) => Key::Bytes(bytes),
            OwnedKey::U64(value) => Key::U64(*value),
        }
    }
}

/// A key from its text's bytes under `form`.
fn key_of_bytes(bytes: &[u8], form: Form) -> Result<OwnedKey> {
    match form {
        Form::Text => match core::str::from_utf8(bytes) {
            Ok(_) => Ok(OwnedKey::Bytes(bytes.to_vec())),
            Err(err) => Err(Error::key(format!(
                "text key is not valid UTF-8 at byte {}; send other bytes with form=hex",
                err.valid_up_to()
            ))),
        },
        Form::Hex => hex_key(bytes),
        Form::U64 => {
            let text = core::str::from_utf8(bytes).unwrap_or("\u{FFFD}");
            crate::key::parse_u64(text).map(OwnedKey::U64)
        }
    }
}

fn hex_key(text: &[u8]) -> Result<OwnedKey> {
    let bad = || Error::key("a hex key must be an even number of hex digits (0-9, a-f, A-F)");
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    text.chunks(2)
        .map(|pair| Some(hex_digit(pair[0])? << 4 | hex_digit(pair[1])?))
        .collect::<Option<Vec<u8>>>()
        .map(OwnedKey::Bytes)
        .ok_or_else(bad)
}

const BATCH_FIELDS: &[&str] = &["keys", "form"];

/// The keys of a `POST` body, checked whole before any is routed.
fn parse_batch(body: &[u8]) -> Result<Vec<OwnedKey>> {
    let text = core::str::from_utf8(body).map_err(|err| {
        Error::key(format!(
            "request body is not UTF-8 at byte {}: JSON is UTF-8 and a text key Unicode (send other bytes with \"form\": \"hex\")",
            err.valid_up_to()
        ))
    })?;
    let value = json::parse(text, "the request body", ErrorKind::InvalidArgument).map_err(|err| {
        // serde_json refuses a string with a lone surrogate escape (`"\ud800"`) while
        // reading it ("lone leading surrogate in hex escape", "unexpected end of hex
        // escape"): text that is not Unicode, which every binding refuses as a key.
        let message = err.message();
        if err.kind() == ErrorKind::InvalidArgument && (message.contains("surrogate") || message.contains("hex escape"))
        {
            Error::key(format!("text key is not valid Unicode: {}", err.message()))
        } else {
            err
        }
    })?;
    let argument = |err: Error| match err.kind() {
        ErrorKind::InvalidTopology => Error::argument(err.message()),
        _ => err,
    };
    let object = json::Object::new("", &value, BATCH_FIELDS).map_err(argument)?;
    let form = object.choice("form", "form", Form::Text, FORMS).map_err(argument)?;
    let keys = json::array("keys", object.required("keys").map_err(argument)?).map_err(argument)?;
    if keys.len() > MAX_SERVICE_KEYS as usize {
        return Err(Error::limit(format!(
            "keys: {} keys exceeds the limit of {MAX_SERVICE_KEYS} (limits::MAX_SERVICE_KEYS)",
            keys.len()
        )));
    }
    keys.iter().enumerate().map(|(index, key)| batch_key(key, form).map_err(|err| at_index(index, err))).collect()
}

fn batch_key(value: &Value, form: Form) -> Result<OwnedKey> {
    match (value, form) {
        (Value::String(text), Form::Text) => Ok(OwnedKey::Bytes(text.as_bytes().to_vec())),
        (Value::String(text), Form::Hex) => hex_key(text.as_bytes()),
        (Value::String(text), Form::U64) => crate::key::parse_u64(text).map(OwnedKey::U64),
        (Value::Number(number), Form::Text | Form::U64) => number
            .as_u64()
            .map(OwnedKey::U64)
            .ok_or_else(|| Error::key(format!("number key {number} is not an integer in 0..=18446744073709551615"))),
        (other, _) => Err(Error::key(format!(
            "expected {}, found {}",
            match form {
                Form::Text => "a string or an integer",
                Form::Hex => "a hex string",
                Form::U64 => "an integer or its decimal text",
            },
            json::type_name(other)
        ))),
    }
}

#[cfg(test)]
mod tests;
