//! Sans-IO sessions: the decisions a client makes around routing, written once.
//!
//! A session never opens a socket and never reads a clock. A shell (Python's
//! `shardroute.redis`, Node's `shardroute/redis`) does the I/O: it asks the session what
//! to do, does it, and hands back what happened and when (`now_ms`, the shell's
//! monotonic clock in milliseconds). Replies and times in, actions out: so the same
//! scenario gives the same actions in every language, and the conformance vectors
//! (`conformance/vectors/session_*.json`) test behaviour the way they test routing.
//!
//! * [`redis`]: the Redis Cluster command session (MOVED, ASK, retries, refreshes,
//!   replica reads, batches), with [`reply`], the one table that says what each error
//!   means, and [`endpoint`], the one parser of `host:port` (the first two with the
//!   `redis_cluster` feature, whose strategy the session routes by);
//! * [`source`]: the source sessions (etcd, HTTP and, with the `zookeeper` feature,
//!   ZooKeeper over its own TCP protocol) that feed the follower;
//! * [`follower`]: the topology follower (documents from etcd, ZooKeeper or HTTP in, the
//!   router to use out; refusals counted; reconnect backoff; the publisher's CAS write);
//! * [`migration`]: the migration session (read and write plans under the fence epoch,
//!   the lazy move of a key, the background copy's resumable cursor, fence refusals).
//!
//! The models: h11's `Connection` (bytes in, events out), quinn-proto (datagrams and
//! `now` in, "send this, wake me at T" out), rustls' core against its stream adapters.

pub mod endpoint;
#[cfg(feature = "etcd")]
pub mod etcd;
pub mod exchange;
pub mod follower;
pub mod http;
pub mod migration;
#[cfg(feature = "redis_cluster")]
mod pipeline;
pub mod source;
#[cfg(feature = "zookeeper")]
pub mod zookeeper;
// Its `let Strategy::RedisCluster(..) = .. else` cannot fail in a build whose only
// strategy is `redis_cluster`.
#[cfg(feature = "redis_cluster")]
#[allow(irrefutable_let_patterns)]
pub mod redis;
#[cfg(feature = "redis_cluster")]
pub mod reply;

/// JSON data (a session's config, a reply a shell serialized) as
/// `serde_json::from_str::<Value>` reads it: the same value, or the same error (the last
/// of a repeated field wins; nesting limited only by serde_json's recursion limit). It
/// runs the document reader's code (`Router::from_json`) without that reader's two
/// refusals, so that a WebAssembly module has one JSON reader instead of two.
///
/// # Errors
/// serde_json's, word for word, for text that is not JSON.
pub fn json_data(text: &str) -> core::result::Result<serde_json::Value, serde_json::Error> {
    crate::json::parse_lenient(text)
}

pub use endpoint::Endpoint;
pub use follower::{Follower, FollowerConfig, FollowerStats, Offered, Publish};
pub use migration::{
    CopyBatch, Fenced, LazyGroup, LazySteps, MigrationAction, MigrationSession, Mode, Pace, WritePlan,
};
#[cfg(feature = "redis_cluster")]
pub use redis::{
    defaults, Access, Action, ActionFields, ClusterConfig, ClusterSession, Command, FlatGroup, Group, PipelineQueued,
    SessionStats, Target,
};
#[cfg(feature = "redis_cluster")]
pub use reply::{classify, Busy, Demoted, Outcome, Rule, Transport};
pub use source::{Action as SourceAction, Request as SourceRequest, SourceError, SourceSession};
