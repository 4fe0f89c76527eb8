//! The Rust side of `MigrationSession` that both JavaScript packages compile: each crate
//! includes this file (`#[path]` in its `src/lib.rs`, as `js_migration_session`), beside
//! `session.rs` (`js_session`) and `follower.rs` (`js_follower`), so that the two packages
//! refuse the migration session's arguments in one wording and name its results' fields
//! one way. Everything else a refusal says comes from the core.

use shardroute as sr;
use sr::argument::JsType;
use sr::session as ss;

use crate::js_session;

/// The field of a plan's fence epoch (a `bigint`): the core's `fence_epoch` in
/// `camelCase`, as the packages name a returned record's fields (docs/api.md, "The rule").
pub const FENCE_EPOCH: &str = "fenceEpoch";

/// The `invalid_argument` error of a `migration` argument that is not a `Migration` of
/// the package (a live one, for the WASM package).
pub fn not_a_migration(value: JsType<'_>) -> sr::Error {
    sr::Error::new(sr::ErrorKind::InvalidArgument, format!("migration must be a Migration, got {value}"))
}

/// A `minEpoch` argument (the epoch of a shard's fence): read as a time or a revision is
/// ([`js_session::unsigned`]).
///
/// # Errors
/// `invalid_argument`: `"minEpoch must be a u64, a safe non-negative integer or a bigint
/// in 0n..=18446744073709551615n, got the number 1.5"`.
pub fn min_epoch(value: JsType<'_>, bigint: impl FnOnce() -> Result<u64, bool>) -> sr::Result<u64> {
    js_session::unsigned("minEpoch", "a u64", value, bigint)
}

/// What a fence refusal means, as the package returns it: `'refresh'`.
pub fn fenced(fenced: ss::Fenced) -> &'static str {
    match fenced {
        ss::Fenced::Refresh => "refresh",
    }
}

/// A [`ss::WritePlan`] or [`ss::LazySteps`] as the fields of the package's plain object:
/// its node ids by field name, in the core's order, its names in `camelCase`, then
/// [`FENCE_EPOCH`].
pub struct FlatPlan<'a> {
    /// The node ids: `node`, or `readFrom`, `writeTo` and `retireFrom`.
    pub nodes: Vec<(&'static str, &'a str)>,
    /// The epoch the write runs under.
    pub fence_epoch: u64,
}

impl<'a> From<ss::WritePlan<'a>> for FlatPlan<'a> {
    fn from(plan: ss::WritePlan<'a>) -> FlatPlan<'a> {
        FlatPlan { nodes: vec![("node", plan.node)], fence_epoch: plan.fence_epoch }
    }
}

impl<'a> From<ss::LazySteps<'a>> for FlatPlan<'a> {
    fn from(steps: ss::LazySteps<'a>) -> FlatPlan<'a> {
        FlatPlan {
            nodes: vec![("readFrom", steps.read_from), ("writeTo", steps.write_to), ("retireFrom", steps.retire_from)],
            fence_epoch: steps.fence_epoch,
        }
    }
}

/// An `untilMs` argument (an expiration session's deadline, on the caller's clock), read
/// as a time is ([`js_session::milliseconds`]); `undefined` and `null` are absent.
///
/// # Errors
/// `invalid_argument`: `"untilMs must be milliseconds, a safe non-negative integer or a
/// bigint in 0n..=18446744073709551615n, got the number 1.5"`.
pub fn until_ms(value: JsType<'_>, bigint: impl FnOnce() -> Result<u64, bool>) -> sr::Result<Option<u64>> {
    match value {
        JsType::Undefined | JsType::Null => Ok(None),
        other => js_session::milliseconds("untilMs", other, bigint).map(Some),
    }
}

/// A `startedMs` or `finishedMs` argument of `resumeAt` (a step's start or end on the
/// caller's clock), read as a time is ([`js_session::milliseconds`]). (Unused by the WASM
/// route build, which leaves `resumeAt` out.)
///
/// # Errors
/// `invalid_argument`: `"startedMs must be milliseconds, a safe non-negative integer or a
/// bigint in 0n..=18446744073709551615n, got the number -1"`.
#[allow(dead_code)]
pub fn step_time(what: &str, value: JsType<'_>, bigint: impl FnOnce() -> Result<u64, bool>) -> sr::Result<u64> {
    js_session::milliseconds(what, value, bigint)
}

/// `resumeAt`'s pace ([`ss::Pace::of`]) from its optional `dutyPerMille` (a number, read
/// as a `u32`) and `minPauseMs` (a time): `undefined` or `null` for the core's default of
/// each. (Unused by the WASM route build.)
///
/// # Errors
/// `invalid_argument` for a `dutyPerMille` that is not an integer in `0..=2^32-1` or a
/// bad `minPauseMs`, and the core's (a duty outside `1..=1000`).
#[allow(dead_code)]
pub fn pace(
    duty_per_mille: JsType<'_>,
    min_pause_ms: JsType<'_>,
    bigint: impl FnOnce() -> Result<u64, bool>,
) -> sr::Result<ss::Pace> {
    let absent = |value: JsType<'_>| matches!(value, JsType::Undefined | JsType::Null);
    let duty = if absent(duty_per_mille) { None } else { Some(sr::argument::count("dutyPerMille", duty_per_mille)?) };
    let min_pause =
        if absent(min_pause_ms) { None } else { Some(js_session::milliseconds("minPauseMs", min_pause_ms, bigint)?) };
    ss::Pace::of(duty, min_pause)
}

/// The form of `MigrationSession.misplaced`'s `holder`: a node id (a string) or a shard
/// number (a number). (Unused by the WASM route build, which leaves `misplaced` out.)
#[allow(dead_code)]
pub enum HolderForm {
    /// A string: a node id.
    Node,
    /// A number: a shard number, read as a `u32`.
    Shard,
}

/// Which form a `holder` argument takes.
///
/// # Errors
/// `invalid_argument` for anything but a string or a number: `"holder must be a node id
/// (a string) or a shard number, got null"`.
#[allow(dead_code)]
pub fn holder_form(value: JsType<'_>) -> sr::Result<HolderForm> {
    match value {
        JsType::String => Ok(HolderForm::Node),
        JsType::Number(_) => Ok(HolderForm::Shard),
        other => Err(sr::Error::new(
            sr::ErrorKind::InvalidArgument,
            format!("holder must be a node id (a string) or a shard number, got {other}"),
        )),
    }
}
