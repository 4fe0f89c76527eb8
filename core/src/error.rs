//! The one error type of shardroute.
//!
//! Every fallible call in the crate returns [`Error`]. Its [`ErrorKind`] has a stable
//! string [`code`](ErrorKind::code) that the conformance vectors assert and that every
//! binding exposes unchanged: Python's `ShardrouteError.code`, JavaScript's `error.code`.
//! The message is for people and may improve between versions; the code is the contract.

use alloc::string::String;
use core::fmt;

/// What went wrong, as a stable category. New kinds may be added in minor versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The topology document (or a hashing spec) is malformed: bad JSON, an unknown
    /// or missing field, a wrong type, a duplicate node id, a table naming a missing
    /// node, or a parameter out of range. Code `invalid_topology`.
    InvalidTopology,
    /// A key cannot be routed: text that is not valid Unicode (lone surrogates),
    /// an integer outside `0..=u64::MAX`, or a value of an unsupported type.
    /// Code `invalid_key`.
    InvalidKey,
    /// There is nothing to route to: an empty node list, or zero buckets.
    /// Code `no_nodes`.
    NoNodes,
    /// A documented size limit was exceeded (see [`crate::limits`]).
    /// Code `limit_exceeded`.
    LimitExceeded,
    /// An argument to a call is out of range, such as asking for more replicas than
    /// the topology has nodes. Code `invalid_argument`.
    InvalidArgument,
    /// A newer topology was expected: replacing a router's topology with one whose epoch
    /// is lower (or equal but different). The message says which epoch the router holds,
    /// so a client can tell it is behind. Code `stale_epoch`.
    StaleEpoch,
    /// A write to a vbucket that is read-only (while it is being moved or frozen).
    /// Code `read_only`.
    ReadOnly,
    /// The keys of one multi-key command map to different shards (Redis: different
    /// slots, its `CROSSSLOT` error), so no single node can run it. Code `cross_slot`.
    CrossSlot,
    /// A client session followed more redirects (`MOVED`, `ASK`) for one command than
    /// its limit allows: two nodes that disagree. Code `too_many_redirects`.
    TooManyRedirects,
    /// A client session found no node to serve a command within its retry budget (nodes
    /// down, a cluster electing). Code `unavailable`.
    Unavailable,
}

impl ErrorKind {
    /// Every kind, in declaration order (bindings use it to build their error classes).
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::InvalidTopology,
        ErrorKind::InvalidKey,
        ErrorKind::NoNodes,
        ErrorKind::LimitExceeded,
        ErrorKind::InvalidArgument,
        ErrorKind::StaleEpoch,
        ErrorKind::ReadOnly,
        ErrorKind::CrossSlot,
        ErrorKind::TooManyRedirects,
        ErrorKind::Unavailable,
    ];

    /// The stable string code of this kind, e.g. `"invalid_topology"`.
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidTopology => "invalid_topology",
            ErrorKind::InvalidKey => "invalid_key",
            ErrorKind::NoNodes => "no_nodes",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::StaleEpoch => "stale_epoch",
            ErrorKind::ReadOnly => "read_only",
            ErrorKind::CrossSlot => "cross_slot",
            ErrorKind::TooManyRedirects => "too_many_redirects",
            ErrorKind::Unavailable => "unavailable",
        }
    }
}

/// An error from shardroute: a [`kind`](Error::kind) with a stable
/// [`code`](Error::code) and a message that names the offending field or value.
///
/// # Example
/// ```
/// let err = shardroute::Router::from_json("{}").unwrap_err();
/// assert_eq!(err.code(), "invalid_topology");
/// assert!(err.message().contains("format"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// Creates an error of `kind` with a human-readable message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    pub(crate) fn topology(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidTopology, message)
    }

    pub(crate) fn key(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidKey, message)
    }

    pub(crate) fn argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    pub(crate) fn limit(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::LimitExceeded, message)
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable string code, the same in every binding (`"invalid_key"`, ...).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The human-readable message, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Shorthand for `core::result::Result<T, shardroute::Error>`.
pub type Result<T, E = Error> = core::result::Result<T, E>;
