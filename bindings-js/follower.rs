//! The Rust side of `TopologyFollower` that both JavaScript packages compile: each crate
//! includes this file (`#[path]` in its `src/lib.rs`, as `js_follower`), beside
//! `session.rs` (`js_session`), so that the two packages refuse the follower's arguments
//! in one wording and flatten its results one way. Everything else a refusal says comes
//! from the core.

use shardroute as sr;
use sr::argument::JsType;
use sr::session as ss;

use crate::js_session;

/// The class name in the refusal of a call made while another runs ([`busy`]).
const CLASS: &str = "TopologyFollower";

/// A `revision` argument (the source's revision: etcd's `mod_revision`, ZooKeeper's
/// `mzxid`): read as a time is ([`js_session::unsigned`]).
///
/// # Errors
/// `invalid_argument`: `"revision must be a u64, a safe non-negative integer or a bigint
/// in 0n..=18446744073709551615n, got the number 1.5"`.
pub fn revision(value: JsType<'_>, bigint: impl FnOnce() -> Result<u64, bool>) -> sr::Result<u64> {
    js_session::unsigned("revision", "a u64", value, bigint)
}

/// The follower's settings from `config`'s JSON text (written by `documentToJson`); the
/// defaults for `None` (`undefined` or `null`).
///
/// # Errors
/// `invalid_argument` as [`ss::FollowerConfig::from_value`].
pub fn config(text: Option<&str>) -> sr::Result<ss::FollowerConfig> {
    match text {
        Some(text) => ss::FollowerConfig::from_value(&js_session::json(text, "config")?),
        None => Ok(ss::FollowerConfig::default()),
    }
}

/// The `invalid_argument` error of the follower when a call is made on it while another
/// runs (neither package lets JavaScript run then: not reached).
pub fn busy() -> sr::Error {
    js_session::in_use(CLASS)
}

/// The `u64` counters of [`ss::FollowerStats`], by the core's names
/// ([`ss::FollowerStats::to_value`]), in its order; `refused` (code to count) is apart.
pub fn counters(stats: &ss::FollowerStats) -> [(&'static str, u64); 4] {
    [
        ("offered", stats.offered),
        ("installed", stats.installed),
        ("unchanged", stats.unchanged),
        ("disconnects", stats.disconnects),
    ]
}

/// An [`ss::Offered`] as the fields of the package's `Offered` (`bindings-js/shared.mjs`),
/// in its constructor's order; `None` (`null`) for those of other kinds.
pub struct FlatOffered {
    /// `installed`, `unchanged` or `refused`.
    pub kind: &'static str,
    /// `installed`: the new router's epoch.
    pub epoch: Option<u64>,
    /// `refused`: the error's code.
    pub code: Option<&'static str>,
    /// `refused`: the error's message.
    pub message: Option<String>,
}

impl From<ss::Offered> for FlatOffered {
    fn from(offered: ss::Offered) -> FlatOffered {
        match offered {
            ss::Offered::Installed { epoch } => {
                FlatOffered { kind: "installed", epoch: Some(epoch), code: None, message: None }
            }
            ss::Offered::Unchanged => FlatOffered { kind: "unchanged", epoch: None, code: None, message: None },
            ss::Offered::Refused(error) => FlatOffered {
                kind: "refused",
                epoch: None,
                code: Some(error.code()),
                message: Some(error.message().to_owned()),
            },
        }
    }
}
