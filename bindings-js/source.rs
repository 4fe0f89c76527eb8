//! The Rust side of `SourceSession` that both JavaScript packages compile: each crate
//! includes this file (`#[path]` in its `src/lib.rs`, as `js_source`), beside
//! `session.rs` (`js_session`), so that the two packages refuse the source session's
//! arguments in one wording and hand its actions over one way: as the JSON of
//! [`ss::source::Action::to_value`], which the vectors write too. Times, deadlines and ids
//! are numbers (the core keeps them at or below 2^53); revisions and epochs are decimal
//! strings. Everything else a refusal says comes from the core.

use shardroute as sr;
use sr::argument::JsType;
use sr::session as ss;

use crate::js_session;

/// The class name in the refusal of a call made while another runs ([`busy`]).
const CLASS: &str = "SourceSession";

/// The session `config`'s JSON text (written by `documentToJson`) describes.
///
/// # Errors
/// `invalid_argument` as [`ss::SourceSession::from_config`].
pub fn session(config: &str) -> sr::Result<ss::SourceSession> {
    ss::SourceSession::from_config(&js_session::json(config, "config")?)
}

/// JSON data (`op`, `headers`) from its text ([`js_session::json`]).
///
/// # Errors
/// `invalid_argument` for text that is not JSON.
pub fn data(text: &str, what: &str) -> sr::Result<serde_json::Value> {
    js_session::json(text, what)
}

/// A request or connection `id` argument (a number the session gave; a `bigint` too), read
/// as a time is ([`js_session::unsigned`]): `response`, `chunk`, `opened` and `failed` refuse
/// a bad one in the same words.
///
/// # Errors
/// `invalid_argument`: `"id must be a request id, a safe non-negative integer or a bigint
/// in 0n..=18446744073709551615n, got the string \"1\""`.
pub fn id(value: JsType<'_>, bigint: impl FnOnce() -> Result<u64, bool>) -> sr::Result<u64> {
    js_session::unsigned("id", "a request id", value, bigint)
}

/// An HTTP `status` argument: an integer `number` in `0..=65535`.
///
/// # Errors
/// `invalid_argument`: `"status must be an HTTP status, an integer in 0..=65535, got the
/// number 99999"`.
pub fn status(value: JsType<'_>) -> sr::Result<u16> {
    if let JsType::Number(number) = value {
        if let Ok(status) = sr::key::u64_from_js_number(number) {
            if let Ok(status) = u16::try_from(status) {
                return Ok(status);
            }
        }
    }
    Err(sr::Error::new(
        sr::ErrorKind::InvalidArgument,
        format!("status must be an HTTP status, an integer in 0..=65535, got {value}"),
    ))
}

/// The `invalid_argument` error of the session when a call is made on it while another
/// runs (neither package lets JavaScript run then: not reached).
pub fn busy() -> sr::Error {
    js_session::in_use(CLASS)
}

/// The actions as JSON data: an array of [`ss::source::Action::to_value`].
pub fn actions(actions: &[ss::SourceAction]) -> serde_json::Value {
    ss::source::actions_value(actions)
}

/// A call's number and actions as JSON data: `{call, actions}`.
pub fn called(call: u64, list: &[ss::SourceAction]) -> serde_json::Value {
    serde_json::json!({"call": call, "actions": actions(list)})
}

/// A deadline as a JavaScript number (`None`: `null`). The core's times are at or below
/// 2^53, which a number holds exactly.
pub fn deadline(deadline: Option<u64>) -> Option<f64> {
    // The core keeps every time at or below 2^53 (source.rs): exact as a number.
    #[allow(clippy::cast_precision_loss)]
    deadline.map(|ms| ms as f64)
}

/// The counters of the session's state (`state.stats`), `null` when it has none.
pub fn stats(state: &serde_json::Value) -> serde_json::Value {
    state.get("stats").cloned().unwrap_or(serde_json::Value::Null)
}
