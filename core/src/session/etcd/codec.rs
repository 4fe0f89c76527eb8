//! etcd's JSON gateway codec, written once: keys and values in base64, revisions as
//! decimal strings, the answers of `range`, `txn`, `put`, `deleterange` and
//! `auth/authenticate`, what an error answer means (the one table of member rotation and
//! of authentication), and the lines of a watch stream. Every function takes what the
//! network gave and never panics: an answer that is not etcd's is `malformed`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Value};

use crate::session::exchange::SourceError;

/// `bytes` in standard base64 with padding (Go's `encoding/json` form of `[]byte`): the
/// sessions' one encoder.
pub use crate::session::exchange::b64;

fn sextet(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// The bytes of standard base64 `text` (padding optional); `None` for anything else.
pub fn unb64(text: &str) -> Option<Vec<u8>> {
    let raw = text.as_bytes();
    let body = raw.strip_suffix(b"==").or_else(|| raw.strip_suffix(b"=")).unwrap_or(raw);
    if body.len() % 4 == 1 || (body.len() != raw.len() && !raw.len().is_multiple_of(4)) {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for group in body.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in group.iter().enumerate() {
            n |= sextet(c)? << (18 - 6 * i as u32);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..group.len() - 1]);
    }
    Some(out)
}

/// The end of the range of keys that start with `prefix` (etcd's `range_end`): its last
/// byte below 0xFF raised by one (`\0`, every key, for an empty or all-0xFF prefix).
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut raw = prefix.to_vec();
    while raw.last() == Some(&0xFF) {
        raw.pop();
    }
    match raw.last_mut() {
        None => alloc::vec![0],
        Some(last) => {
            *last += 1;
            raw
        }
    }
}

/// A revision as etcd's gateway writes it (a decimal string; a number accepted too).
pub fn revision(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::String(text) if !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()) => {
            text.parse().ok()
        }
        Value::Number(number) => number.as_u64(),
        _ => None,
    }
}

/// An answer that is not etcd's.
pub fn malformed(where_: &str, why: &str) -> SourceError {
    SourceError::new("malformed", format!("etcd {where_}: an answer that is not etcd's ({why})"))
}

/// A 200 answer's body as a JSON object.
pub fn object(where_: &str, body: &[u8]) -> Result<serde_json::Map<String, Value>, SourceError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(malformed(where_, "not a JSON object")),
        Err(_) => Err(malformed(where_, &format!("not JSON: {}", preview(body)))),
    }
}

/// The store's revision of an answer (`header.revision`).
pub fn header_revision(where_: &str, answer: &serde_json::Map<String, Value>) -> Result<u64, SourceError> {
    revision(answer.get("header").and_then(|header| header.get("revision")))
        .ok_or_else(|| malformed(where_, "no header.revision"))
}

/// One key's entry: `(value, mod_revision)`, `None` when absent.
pub type Entry = Option<(Vec<u8>, u64)>;

/// The first kv of a range answer (`kvs`), `None` for none.
pub fn entry(where_: &str, range: &Value) -> Result<Entry, SourceError> {
    let kvs = match range.get("kvs") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(kvs)) => kvs,
        Some(_) => return Err(malformed(where_, "kvs is not an array")),
    };
    let Some(kv) = kvs.first() else { return Ok(None) };
    let value = match kv.get("value") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => unb64(text).ok_or_else(|| malformed(where_, "a value is not base64"))?,
        Some(_) => return Err(malformed(where_, "a value is not a string")),
    };
    let mod_revision = revision(kv.get("mod_revision")).ok_or_else(|| malformed(where_, "no kv mod_revision"))?;
    Ok(Some((value, mod_revision)))
}

/// The entries of a txn of range requests (`responses[i].response_range`), one per key
/// asked, and the store's revision.
pub fn ranges(where_: &str, body: &[u8], count: usize) -> Result<(Vec<Entry>, u64), SourceError> {
    let answer = object(where_, body)?;
    let revision = header_revision(where_, &answer)?;
    let responses = match answer.get("responses") {
        Some(Value::Array(responses)) => responses.as_slice(),
        None if count == 0 => &[],
        _ => return Err(malformed(where_, "no responses")),
    };
    if responses.len() != count {
        return Err(malformed(where_, "not one response per key"));
    }
    let entries = responses
        .iter()
        .map(|response| match response.get("response_range") {
            Some(range @ Value::Object(_)) => entry(where_, range),
            _ => Err(malformed(where_, "a response is not a response_range")),
        })
        .collect::<Result<Vec<Entry>, SourceError>>()?;
    Ok((entries, revision))
}

/// A txn's outcome: `Some(revision)` when it succeeded, `None` when a compare failed.
pub fn txn(where_: &str, body: &[u8]) -> Result<Option<u64>, SourceError> {
    let answer = object(where_, body)?;
    let revision = header_revision(where_, &answer)?;
    match answer.get("succeeded") {
        Some(Value::Bool(true)) => Ok(Some(revision)),
        None | Some(Value::Bool(false)) => Ok(None),
        Some(_) => Err(malformed(where_, "succeeded is not a boolean")),
    }
}

/// The `deleted` count of a deleterange answer (absent: 0).
pub fn deleted(where_: &str, body: &[u8]) -> Result<u64, SourceError> {
    let answer = object(where_, body)?;
    header_revision(where_, &answer)?;
    match answer.get("deleted") {
        None => Ok(0),
        some => revision(some).ok_or_else(|| malformed(where_, "deleted is not a count")),
    }
}

/// The token of an `auth/authenticate` answer.
pub fn token(where_: &str, body: &[u8]) -> Result<String, SourceError> {
    match object(where_, body)?.get("token") {
        Some(Value::String(token)) if !token.is_empty() => Ok(token.clone()),
        _ => Err(malformed(where_, "no token")),
    }
}

/// The most bytes of an answer a message shows.
const PREVIEW_BYTES: usize = 200;

/// The first bytes of `body`, for a message: UTF-8 text as it is, any byte that is not
/// part of it written `\xNN` (never replaced with U+FFFD, so every language shows the
/// same bytes), cut after [`PREVIEW_BYTES`] bytes.
pub fn preview(body: &[u8]) -> String {
    let mut rest = &body[..body.len().min(PREVIEW_BYTES)];
    let mut out = String::with_capacity(rest.len());
    while !rest.is_empty() {
        match core::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                break;
            }
            Err(err) => {
                let (good, bad) = rest.split_at(err.valid_up_to());
                out.push_str(core::str::from_utf8(good).unwrap_or_default());
                let skip = err.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
                for byte in &bad[..skip] {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
                rest = &bad[skip..];
            }
        }
    }
    out
}

/// What a failed exchange means for the member and for the token: the one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// The member cannot serve now (unreachable, too slow, 503, gRPC 14, no leader):
    /// the same request goes to the next member.
    Unavailable,
    /// The token is invalid or expired: authenticate again, resend once.
    BadToken,
    /// etcd refused the user, the password or the missing token.
    Unauthenticated,
    /// The history asked for is compacted.
    Compacted,
    /// Any other error: given up, not retried.
    Other,
}

/// gRPC UNAVAILABLE (a member shutting down or restarting, or without a leader).
pub const GRPC_UNAVAILABLE: i64 = 14;
/// gRPC UNAUTHENTICATED (a token invalid or expired).
pub const GRPC_UNAUTHENTICATED: i64 = 16;
/// HTTP 503, the gateway's status for gRPC UNAVAILABLE.
pub const HTTP_UNAVAILABLE: u16 = 503;

/// The gRPC code and the message of an error body (`{"error", "message", "code"}` as the
/// gateway writes it for a request; `{"grpc_code", "http_code", "message"}` inside a
/// stream's `error` line).
pub fn error_fields(error: &Value) -> (Option<i64>, String) {
    let code = error.get("code").or_else(|| error.get("grpc_code")).and_then(Value::as_i64);
    let message = error
        .get("message")
        .or_else(|| error.get("error"))
        .and_then(Value::as_str)
        .map_or_else(String::new, ToString::to_string);
    (code, message)
}

/// What an error with HTTP `status`, gRPC `code` and `message` means.
pub fn meaning(status: Option<u16>, code: Option<i64>, message: &str) -> Meaning {
    if status == Some(HTTP_UNAVAILABLE)
        || code == Some(GRPC_UNAVAILABLE)
        || message.contains("etcdserver: no leader")
        || message.contains("etcdserver: leader changed")
    {
        Meaning::Unavailable
    } else if code == Some(GRPC_UNAUTHENTICATED) || message.contains("invalid auth token") {
        Meaning::BadToken
    } else if message.contains("authentication failed") || message.contains("user name is empty") {
        Meaning::Unauthenticated
    } else if message.contains("required revision has been compacted") {
        Meaning::Compacted
    } else {
        Meaning::Other
    }
}

/// The error of a non-200 answer and what it means.
pub fn http_error(where_: &str, status: u16, body: &[u8]) -> (SourceError, Meaning) {
    let (code, message) = match serde_json::from_slice::<Value>(body) {
        Ok(value @ Value::Object(_)) => error_fields(&value),
        _ => (None, String::new()),
    };
    let meaning = meaning(Some(status), code, &message);
    let shown = if message.is_empty() { preview(body) } else { message };
    let code = if meaning == Meaning::Unauthenticated { "unauthenticated" } else { "http" };
    (SourceError { code, message: format!("etcd {where_}: HTTP {status}: {shown}"), status: Some(status) }, meaning)
}

/// One line of a watch stream, as the follower acts on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchLine {
    /// `created`, a progress notification, or anything without events: nothing to do.
    Quiet,
    /// Keys in the range changed: the events as etcd sent them (read by [`event`] when
    /// they are offered directly, else answered by a read).
    Events(Vec<Value>),
    /// etcd cancelled the watch: its start revision was compacted (at this revision).
    Compacted(u64),
    /// etcd cancelled the watch because the token is not valid any more.
    BadToken(String),
    /// The stream is lost: an `error` line, any other cancellation, or a line that is not
    /// etcd's; with what the line's error means for the member.
    Lost(SourceError, Meaning),
}

/// What one (non-empty) line of a watch stream says.
pub fn watch_line(where_: &str, line: &[u8]) -> WatchLine {
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value @ Value::Object(_)) => value,
        _ => return WatchLine::Lost(malformed(where_, &format!("a watch line: {}", preview(line))), Meaning::Other),
    };
    if let Some(error) = value.get("error") {
        let (code, message) = error_fields(error);
        let status = error.get("http_code").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
        let meaning = meaning(status, code, &message);
        let shown = if message.is_empty() { error.to_string() } else { message };
        return WatchLine::Lost(
            SourceError { code: "http", message: format!("etcd {where_}: {shown}"), status },
            meaning,
        );
    }
    let Some(result @ Value::Object(_)) = value.get("result") else {
        return WatchLine::Lost(malformed(where_, "a watch line without result"), Meaning::Other);
    };
    if result.get("canceled") == Some(&Value::Bool(true)) {
        let reason = result.get("cancel_reason").and_then(Value::as_str).unwrap_or("");
        if reason.contains("invalid auth token") || reason.contains("Unauthenticated") {
            return WatchLine::BadToken(format!("etcd {where_}: watch canceled: {reason}"));
        }
        if let Some(at) = revision(result.get("compact_revision")).filter(|&at| at > 0) {
            return WatchLine::Compacted(at);
        }
        let why = if reason.is_empty() { "no reason given" } else { reason };
        return WatchLine::Lost(
            SourceError::new("unreachable", format!("etcd {where_}: watch canceled: {why}")),
            Meaning::Other,
        );
    }
    match result.get("events") {
        None | Some(Value::Null) => WatchLine::Quiet,
        Some(Value::Array(events)) if events.is_empty() => WatchLine::Quiet,
        Some(Value::Array(events)) => WatchLine::Events(events.clone()),
        Some(_) => WatchLine::Lost(malformed(where_, "events is not an array"), Meaning::Other),
    }
}

/// One event of a watch line: the key, its value (`None`: deleted) and the revision of
/// the change (`kv.mod_revision`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The key changed.
    pub key: Vec<u8>,
    /// The value put (empty when etcd leaves it out), or `None` for a DELETE.
    pub value: Option<Vec<u8>>,
    /// The revision of the change.
    pub revision: u64,
}

/// One event of a watch line's `events` (`type` absent or `PUT`, or `DELETE`).
pub fn event(where_: &str, event: &Value) -> Result<Event, SourceError> {
    let deleted = match event.get("type") {
        None | Some(Value::Null) => false,
        Some(Value::String(kind)) if kind == "PUT" => false,
        Some(Value::String(kind)) if kind == "DELETE" => true,
        Some(_) => return Err(malformed(where_, "an event type that is neither PUT nor DELETE")),
    };
    let Some(kv @ Value::Object(_)) = event.get("kv") else {
        return Err(malformed(where_, "an event without kv"));
    };
    let key = match kv.get("key") {
        Some(Value::String(text)) => unb64(text).ok_or_else(|| malformed(where_, "an event key is not base64"))?,
        _ => return Err(malformed(where_, "an event without kv.key")),
    };
    let revision =
        revision(kv.get("mod_revision")).ok_or_else(|| malformed(where_, "an event without kv.mod_revision"))?;
    let value = if deleted {
        None
    } else {
        Some(match kv.get("value") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(text)) => unb64(text).ok_or_else(|| malformed(where_, "a value is not base64"))?,
            Some(_) => return Err(malformed(where_, "a value is not a string")),
        })
    };
    Ok(Event { key, value, revision })
}

/// The body of a watch's create request: `[key, range_end)` from `start_revision`.
pub fn watch_create(key: &[u8], range_end: &[u8], start_revision: u64) -> String {
    json!({"create_request": {"key": b64(key), "range_end": b64(range_end), "start_revision": start_revision.to_string()}})
        .to_string()
}

/// The body of a txn of one range request per key (one revision for all).
pub fn range_txn(keys: &[String]) -> String {
    let success: Vec<Value> = keys.iter().map(|key| json!({"request_range": {"key": b64(key.as_bytes())}})).collect();
    json!({ "success": success }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_refuses_garbage() {
        for text in ["", "a", "ab", "abc", "abcd", "/t", "{\"epoch\":1}"] {
            assert_eq!(unb64(&b64(text.as_bytes())).as_deref(), Some(text.as_bytes()), "{text}");
        }
        assert_eq!(b64(b"/t"), "L3Q=");
        assert_eq!(unb64("eyJlcG9jaCI6MX0=").as_deref(), Some(&b"{\"epoch\":1}"[..]));
        assert_eq!(unb64("L3Q").as_deref(), Some(&b"/t"[..]));
        for bad in ["A", "L3Q=x", "L3Q*", "====", "L=Q=", "é"] {
            assert_eq!(unb64(bad), None, "{bad}");
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unb64(&b64(&all)), Some(all));
    }

    #[test]
    fn prefix_end_is_etcds() {
        assert_eq!(prefix_end(b"/p/"), b"/p0".to_vec());
        assert_eq!(prefix_end(b""), alloc::vec![0]);
        assert_eq!(prefix_end(&[0x61, 0xFF]), alloc::vec![0x62]);
        assert_eq!(prefix_end(&[0xFF, 0xFF]), alloc::vec![0]);
    }

    #[test]
    fn revisions_are_decimal_strings() {
        assert_eq!(revision(Some(&json!("18446744073709551615"))), Some(u64::MAX));
        assert_eq!(revision(Some(&json!("18446744073709551616"))), None);
        assert_eq!(revision(Some(&json!("-1"))), None);
        assert_eq!(revision(Some(&json!(""))), None);
        assert_eq!(revision(Some(&json!(7))), Some(7));
        assert_eq!(revision(Some(&json!(-7))), None);
        assert_eq!(revision(None), None);
    }

    #[test]
    fn the_error_table() {
        let (e, m) = http_error("x", 503, br#"{"error":"etcdserver: server stopped","code":14}"#);
        assert_eq!((e.code, m, e.status), ("http", Meaning::Unavailable, Some(503)));
        assert_eq!(http_error("x", 500, br#"{"code":14,"message":"m"}"#).1, Meaning::Unavailable);
        assert_eq!(http_error("x", 500, br#"{"code":2,"message":"etcdserver: no leader"}"#).1, Meaning::Unavailable);
        assert_eq!(
            http_error("x", 401, br#"{"code":16,"message":"etcdserver: invalid auth token"}"#).1,
            Meaning::BadToken
        );
        let (e, m) = http_error(
            "x",
            400,
            br#"{"code":3,"message":"etcdserver: authentication failed, invalid user ID or password"}"#,
        );
        assert_eq!((e.code, m), ("unauthenticated", Meaning::Unauthenticated));
        assert_eq!(http_error("x", 400, b"\xff garbage").1, Meaning::Other);
        assert_eq!(http_error("x", 404, b"").0.code, "http");
    }

    #[test]
    fn a_preview_escapes_bytes_that_are_not_utf8_never_replaces_them() {
        assert_eq!(preview(b"<html>"), "<html>");
        assert_eq!(preview(b"a\xffb\xc3\xa9\xe2\x82"), "a\\xffb\u{e9}\\xe2\\x82");
        assert!(!preview(&[0xff; 300]).contains('\u{fffd}'));
        assert_eq!(preview(&[0xff; 300]).len(), PREVIEW_BYTES * 4);
        // A character cut by the limit is shown as its bytes.
        let mut long = alloc::vec![b'x'; PREVIEW_BYTES - 1];
        long.extend_from_slice("é".as_bytes());
        assert!(preview(&long).ends_with("x\\xc3"));
        let (error, _) = http_error("x", 502, b"bad \xff gateway");
        assert!(
            error.message.contains("bad \\xff gateway") && !error.message.contains('\u{fffd}'),
            "{}",
            error.message
        );
    }

    #[test]
    fn watch_lines() {
        let created = br#"{"result":{"header":{"revision":"5"},"created":true}}"#;
        assert_eq!(watch_line("w", created), WatchLine::Quiet);
        let events = br#"{"result":{"header":{"revision":"6"},"events":[{"kv":{"key":"L3Q=","mod_revision":"6"}}]}}"#;
        let WatchLine::Events(list) = watch_line("w", events) else { panic!("events") };
        assert_eq!(list.len(), 1);
        assert_eq!(event("w", &list[0]), Ok(Event { key: b"/t".to_vec(), value: Some(Vec::new()), revision: 6 }));
        let put = json!({"kv": {"key": "L3Q=", "mod_revision": "7", "value": "eyJlcG9jaCI6MX0="}});
        assert_eq!(event("w", &put).unwrap().value.as_deref(), Some(&b"{\"epoch\":1}"[..]));
        let delete = json!({"type": "DELETE", "kv": {"key": "L3Q=", "mod_revision": "8"}});
        assert_eq!(event("w", &delete), Ok(Event { key: b"/t".to_vec(), value: None, revision: 8 }));
        for bad in [
            json!({"kv": {"key": "L3Q="}}),
            json!({"kv": {"mod_revision": "8"}}),
            json!({"type": "EXPIRE", "kv": {"key": "L3Q=", "mod_revision": "8"}}),
            json!({"kv": {"key": "L3Q=", "mod_revision": "8", "value": "*"}}),
            json!({}),
        ] {
            assert!(matches!(event("w", &bad), Err(SourceError { code: "malformed", .. })), "{bad}");
        }
        let compacted = br#"{"result":{"header":{},"canceled":true,"compact_revision":"3"}}"#;
        assert_eq!(watch_line("w", compacted), WatchLine::Compacted(3));
        assert!(matches!(watch_line("w", b"nope"), WatchLine::Lost(SourceError { code: "malformed", .. }, _)));
        assert!(matches!(
            watch_line("w", br#"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: server stopped"}}"#),
            WatchLine::Lost(SourceError { code: "http", status: Some(503), .. }, Meaning::Unavailable)
        ));
        assert!(matches!(watch_line("w", br#"{"result":{"events":3}}"#), WatchLine::Lost(_, _)));
    }
}
