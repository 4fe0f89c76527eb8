//! The Rust side of `ClusterSession` that both JavaScript packages compile: each crate
//! includes this file (`#[path]` in its `src/session.rs`), so that the two packages refuse
//! the session's arguments in one wording and flatten its actions one way.
//!
//! The refusals belong in core's `shardroute::argument`, beside the other JavaScript
//! refusals (their `got ...` is its [`JsType`]); until they move there, they are written
//! once here. Everything else a refusal says comes from the core.

use shardroute as sr;
use sr::argument::JsType;
use sr::session as ss;

/// An `invalid_argument` error saying `message`.
fn argument(message: impl Into<String>) -> sr::Error {
    sr::Error::new(sr::ErrorKind::InvalidArgument, message.into())
}

/// A time argument (`nowMs`, the shell's monotonic clock): a `number` that is a safe
/// non-negative integer, or a `bigint` in `0n..2n ** 64n`. `value` is what the argument
/// is; `bigint` reads it when it is a `bigint`: its value, or `Err(negative)` when it is
/// out of range.
///
/// # Errors
/// `invalid_argument` for anything else: `"nowMs must be milliseconds, a safe non-negative
/// integer or a bigint in 0n..=18446744073709551615n, got the number 1.5"`.
pub fn milliseconds(what: &str, value: JsType<'_>, bigint: impl FnOnce() -> Result<u64, bool>) -> sr::Result<u64> {
    unsigned(what, "milliseconds", value, bigint)
}

/// A `u64` argument (a time, a follower's source revision, a fence's epoch), read as
/// [`milliseconds`] reads a time: a safe non-negative integer `number`, or a `bigint` in
/// `0n..2n ** 64n`.
///
/// # Errors
/// `invalid_argument` for anything else, saying that `what` must be `unit` (`"revision
/// must be a u64, a safe non-negative integer or a bigint in 0n..=18446744073709551615n,
/// got a negative bigint"`).
pub fn unsigned(
    what: &str,
    unit: &str,
    value: JsType<'_>,
    bigint: impl FnOnce() -> Result<u64, bool>,
) -> sr::Result<u64> {
    let got = match value {
        JsType::Number(number) => match sr::key::u64_from_js_number(number) {
            Ok(ms) => return Ok(ms),
            Err(_) => value.to_string(),
        },
        JsType::BigInt => match bigint() {
            Ok(ms) => return Ok(ms),
            Err(true) => String::from("a negative bigint"),
            Err(false) => String::from("a bigint of 2n ** 64n or more"),
        },
        other => other.to_string(),
    };
    Err(argument(format!(
        "{what} must be {unit}, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got {got}"
    )))
}

/// Why a node could not be reached (`unreachable`'s `why`), by its name.
///
/// # Errors
/// `invalid_argument` for another name.
pub fn transport(name: &str) -> sr::Result<ss::Transport> {
    ss::Transport::from_name(name)
        .ok_or_else(|| argument(format!("why must be \"refused\", \"reset\" or \"timeout\", got {name:?}")))
}

/// Auto-pipelining's connection flag (`readonly`): a boolean.
///
/// # Errors
/// `invalid_argument` for anything else: `"readonly must be a boolean, got undefined"`.
pub fn readonly(value: JsType<'_>) -> sr::Result<bool> {
    match value {
        JsType::Boolean(flag) => Ok(flag),
        other => Err(argument(format!("readonly must be a boolean, got {other}"))),
    }
}

/// The `invalid_argument` error of an argument that must be a `Command` of the package
/// (one its `ClusterSession.command` made, not freed).
pub fn not_a_command(what: &str, value: JsType<'_>) -> sr::Error {
    argument(format!("{what} must be a Command, got {value}"))
}

/// The `invalid_argument` error of an element of an array of strings (`seeds`, `names`)
/// whose getter or proxy trap threw.
pub fn unreadable_element(what: &str, index: usize) -> sr::Error {
    argument(format!("{what}[{index}] cannot be read (a getter or proxy trap threw)"))
}

/// The `invalid_argument` error of the session when a call is made on it while another
/// runs (neither package lets JavaScript run then: not reached).
pub fn busy() -> sr::Error {
    in_use("ClusterSession")
}

/// The `invalid_argument` error of an object of `class` (`ClusterSession`,
/// `TopologyFollower`) called while another call on it runs ([`busy`]).
pub fn in_use(class: &str) -> sr::Error {
    argument(format!("the {class} is in use by another call"))
}

/// JSON text of JavaScript data (`config`, `reply`: written by `documentToJson` in
/// `bindings-js/shared.mjs`, which refuses what JSON cannot hold) as a JSON value.
///
/// # Errors
/// `invalid_argument` for text that is not JSON (`documentToJson` never writes any).
pub fn json(text: &str, what: &str) -> sr::Result<serde_json::Value> {
    ss::json_data(text).map_err(|err| argument(format!("{what} is not JSON data: {err}")))
}

/// The session's settings from `config`'s JSON text ([`json`]); the defaults for `None`
/// (`undefined` or `null`).
///
/// # Errors
/// `invalid_argument` as [`ss::ClusterConfig::from_value`].
pub fn config(text: Option<&str>) -> sr::Result<ss::ClusterConfig> {
    match text {
        Some(text) => ss::ClusterConfig::from_value(&json(text, "config")?),
        None => Ok(ss::ClusterConfig::default()),
    }
}

/// An [`ss::Action`] as the fields of the package's `Action` (`bindings-js/shared.mjs`),
/// in its constructor's order: core's flat form.
pub type FlatAction = ss::ActionFields;

/// A record the core writes as JSON with `snake_case` field names (`Diff::to_value`,
/// `Stats::to_value`) with its fields renamed to `camelCase`, in objects at every depth:
/// the JavaScript packages return records with `camelCase` fields (docs/api.md, "The
/// rule"). Only for a record whose every object key is a field name, never one holding a
/// map keyed by data (a node id, an error code), whose keys it would rename too.
pub fn camel_fields(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(fields) => {
            // One insert at a time: `collect` sorts the entries first, code the WASM build
            // would carry for this alone.
            let mut renamed = serde_json::Map::new();
            for (name, value) in fields {
                renamed.insert(camel_case(&name), camel_fields(value));
            }
            serde_json::Value::Object(renamed)
        }
        serde_json::Value::Array(items) => serde_json::Value::Array(items.into_iter().map(camel_fields).collect()),
        other => other,
    }
}

/// `moved_ppm` as `movedPpm`: each `_` dropped, the letter after it upper-cased (ASCII:
/// the core's field names are; no Unicode case table in the WASM build for them).
fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else {
            out.push(if upper { c.to_ascii_uppercase() } else { c });
            upper = false;
        }
    }
    out
}
