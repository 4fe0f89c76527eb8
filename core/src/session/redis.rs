//! The Redis Cluster command session: what a smart client does around routing, decided
//! once, for every language.
//!
//! The session never opens a socket and never reads a clock (the model is h11's
//! `Connection` and quinn-proto's `Connection`). The shell asks it where to send a
//! command ([`ClusterSession::poll`]), sends it there, and hands back what happened with
//! the time it happened ([`ClusterSession::succeeded`], [`ClusterSession::failed`]); the
//! session answers with the next [`Action`]: send (again) where, wait until when, refresh
//! the table, or give up with which code. Replies and `now_ms` are the only inputs, so a
//! scenario of replies and times gives the same actions in every language: the
//! conformance vectors of `conformance/vectors/session_redis.json` are such scenarios.
//!
//! What the session decides (the Redis Cluster specification's client rules, and the
//! table of [`reply`](super::reply)):
//!
//! * **MOVED** updates that slot at once (the next epoch, the router [`Router::moved`]
//!   gives; a slot moving to a node the table has is one entry written in place),
//!   resends there, and asks for a full refresh at most once per
//!   [`ClusterConfig::refresh_interval_ms`] (a reshard's burst of MOVEDs costs one
//!   refresh). The refresh is handed to the next command ([`Action::Refresh`]), never
//!   between a MOVED and its resend; once it runs
//!   ([`refresh_sent`](ClusterSession::refresh_sent), until
//!   [`refreshed`](ClusterSession::refreshed) or
//!   [`refresh_failed`](ClusterSession::refresh_failed)) it holds no command whose slot
//!   the table knows, that one included if the shell polls it again (ioredis refreshes
//!   in the background after a MOVED): only a missing table or a refresh asked for at
//!   once (a lost connection, a demoted master) holds commands. A MOVED to an address
//!   the table lacks adds that node; a node a MOVED leaves
//!   with no slot (master or replica of no range) leaves the table, so a stream of MOVEDs
//!   to ever new addresses keeps it at most the last refresh's nodes plus one per slot.
//! * **ASK** resends this command once to the migration's target after `ASKING`, and
//!   changes nothing.
//! * A command follows at most [`ClusterConfig::max_redirects`] redirects, then fails
//!   with `too_many_redirects`: two nodes that disagree cannot bounce it forever.
//! * **Busy** replies (`TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`, `LOADING`), a **demoted**
//!   master (`READONLY`, `UNBLOCKED`) and a node that cannot be reached back off
//!   ([`ClusterConfig::backoff_first_ms`] doubling to [`ClusterConfig::backoff_max_ms`])
//!   and retry, refreshing first where the table may be wrong, until
//!   [`ClusterConfig::retry_budget_ms`] from the first such failure; then `unavailable`.
//! * A refresh asks the known nodes and the startup nodes in turn, the nodes that just
//!   failed last ([`ClusterSession::refresh_candidates`]). A reply that does not make a
//!   whole table (empty, garbage, slots uncovered) is refused and the table kept, with
//!   the slots MOVED already updated.
//! * Replica reads take the slot's replicas in turn; the turn is a `u32` that wraps.
//! * Multi-key commands must share a slot (`cross_slot`); batches are grouped by the node
//!   and the slot ([`ClusterSession::plan`]).
//! * **Auto-pipelining**: a command that finds its node's connection idle is written at
//!   once, alone; commands issued after it in one event-loop turn, or while the
//!   connection has a write out, go to that node in one write, at most
//!   [`ClusterConfig::pipeline_max_commands`] a write and
//!   [`ClusterConfig::pipeline_max_writes`] writes in flight
//!   ([`ClusterSession::pipeline_queued`], [`pipeline_take`](ClusterSession::pipeline_take),
//!   [`pipeline_done`](ClusterSession::pipeline_done)); nothing waits on a timer. Each
//!   command of a pipeline is its own [`Command`]: its reply, its MOVED, its stall and its
//!   lost connection are decided as for a command written alone.
//!
//! Cost: [`poll`](ClusterSession::poll) and [`succeeded`](ClusterSession::succeeded) on
//! the steady path are a slot lookup and a counter, well under a microsecond; a MOVED to
//! a node of the table writes the slot's entry and cuts its range in place (a binary
//! search and at most one insertion among the ranges, a few allocations: under a
//! microsecond over 3 or 100 masters, `cargo bench -p shardroute --bench moved`), and
//! rebuilds the router only when it adds a node or takes a node's last slot; a refresh
//! imports the reply (linear in
//! it: ids found in maps, every count checked before the work, see
//! [`import`](crate::strategy::compat::redis_cluster::import));
//! [`refresh_candidates`](ClusterSession::refresh_candidates) is `n log n` in the nodes;
//! auto-pipelining's calls are a lookup among the connections with work, 30-50 ns a
//! command (`cargo bench -p shardroute --bench pipeline`).

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use super::endpoint::Endpoint;
use super::pipeline::{Limits, Pipelines};
use super::reply::{classify, Outcome, Transport};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::ops::Op;
use crate::router::Router;
use crate::strategy::compat::redis_cluster::import::read_shards;
use crate::strategy::compat::redis_cluster::{key_slot, RedisClusterSpec, SlotRange, SlotTable, SLOTS};
use crate::strategy::spec::chain_replica;
use crate::strategy::{Strategy, Variant as _};
use crate::topology::Topology;

/// The defaults every shell uses: each is a field of [`ClusterConfig`], and the bindings
/// re-export them (Python `shardroute.session.DEFAULTS`, JS `sessionDefaults()`).
pub mod defaults {
    /// Redirects one command may follow.
    pub const MAX_REDIRECTS: u32 = 5;
    /// The shortest time between two refreshes asked for by MOVED or a busy cluster.
    pub const REFRESH_INTERVAL_MS: u64 = 200;
    /// How long a command keeps retrying after its first retryable failure.
    pub const RETRY_BUDGET_MS: u64 = 20_000;
    /// The first backoff.
    pub const BACKOFF_FIRST_MS: u64 = 20;
    /// The longest backoff (each one doubles up to it).
    pub const BACKOFF_MAX_MS: u64 = 500;
    /// How long a shell waits for a connection.
    pub const CONNECT_TIMEOUT_MS: u64 = 1_000;
    /// How long a shell waits for a reply.
    pub const COMMAND_TIMEOUT_MS: u64 = 5_000;
    /// How long a shell waits for a reply before it tells the session the command
    /// stalled ([`ClusterSession::stalled`](super::ClusterSession::stalled)).
    pub const STALL_MS: u64 = 500;
    /// How long a write waits for its replicas' acknowledgement (`WAIT`'s timeout, on the
    /// server): the shells' `set_and_wait`.
    pub const WAIT_TIMEOUT_MS: u64 = 500;
    /// Commands issued in one event-loop turn (or while their node's connection is busy)
    /// go to that node in one write ([`ClusterSession::pipeline_queued`](super::ClusterSession::pipeline_queued)).
    pub const AUTO_PIPELINE: bool = true;
    /// The most commands one write carries. 256 small commands (a `GET` or a `SET` of a
    /// short value is 30-60 bytes) are 8-16 KB: one socket write and, for the replies,
    /// one or two reads of a 16 KB buffer, within Redis' 16 KB query-buffer read. The
    /// per-command cost of a pipeline is flat long before that (the round trip is shared
    /// by all), while a larger write only holds more commands behind one slow reply.
    pub const PIPELINE_MAX_COMMANDS: u32 = 256;
    /// Writes in flight at once on one connection. One: while a write is out, what the
    /// shell issues gathers for the next one, so under load each round trip carries
    /// everything issued during the last (the batching that makes auto-pipelining win);
    /// a command waits for at most one write ahead of it. A command that finds its
    /// connection idle is written at once, alone
    /// ([`PipelineQueued::Write`](super::PipelineQueued::Write)), so the burst behind it
    /// waits for that reply; 2 lets the burst go at the end of the turn instead (not
    /// faster at 50 in flight in Node on loopback, measured for issue 37).
    pub const PIPELINE_MAX_WRITES: u32 = 1;
    /// The largest `pipeline_max_commands` a config may set.
    pub const PIPELINE_MAX_COMMANDS_LIMIT: u32 = 1 << 16;
    /// The largest `pipeline_max_writes` a config may set.
    pub const PIPELINE_MAX_WRITES_LIMIT: u32 = 1 << 10;
}

pub use super::pipeline::PipelineQueued;

/// A session's settings; [`ClusterConfig::default`] is [`defaults`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    /// Redirects (MOVED or ASK) one command may follow before `too_many_redirects`.
    pub max_redirects: u32,
    /// The shortest time between two throttled refreshes (after MOVED, a busy cluster).
    pub refresh_interval_ms: u64,
    /// How long a command retries after its first retryable failure, then `unavailable`.
    pub retry_budget_ms: u64,
    /// The first backoff of a command.
    pub backoff_first_ms: u64,
    /// The longest backoff.
    pub backoff_max_ms: u64,
    /// For the shell: how long to wait for a connection (the session does not time).
    pub connect_timeout_ms: u64,
    /// How long an attempt (its connection, handshake and reply) or a refresh request may
    /// last: the last of its deadlines ([`ClusterSession::deadline`],
    /// [`ClusterSession::reply_deadline`]; 0: none).
    pub command_timeout_ms: u64,
    /// How long an attempt or a refresh request waits for a reply before the session looks
    /// again ([`ClusterSession::deadline`], [`ClusterSession::on_deadline`]; 0: never).
    pub stall_ms: u64,
    /// The timeout a write that waits for its replicas sends with `WAIT` (the shells'
    /// `set_and_wait`; the server blocks for at most this long).
    pub wait_timeout_ms: u64,
    /// Reads go to the slot's replicas in turn (connections that sent `READONLY`).
    pub read_from_replicas: bool,
    /// Auto-pipelining: commands queued for one node's connection go out together
    /// ([`ClusterSession::pipeline_queued`]). `false`: every command is written on its own
    /// (the shells then take their path without a queue).
    pub auto_pipeline: bool,
    /// The most commands one write of auto-pipelining carries (1..=2^16).
    pub pipeline_max_commands: u32,
    /// Writes of auto-pipelining in flight at once on one connection (1..=1024).
    pub pipeline_max_writes: u32,
}

impl Default for ClusterConfig {
    fn default() -> ClusterConfig {
        ClusterConfig {
            max_redirects: defaults::MAX_REDIRECTS,
            refresh_interval_ms: defaults::REFRESH_INTERVAL_MS,
            retry_budget_ms: defaults::RETRY_BUDGET_MS,
            backoff_first_ms: defaults::BACKOFF_FIRST_MS,
            backoff_max_ms: defaults::BACKOFF_MAX_MS,
            connect_timeout_ms: defaults::CONNECT_TIMEOUT_MS,
            command_timeout_ms: defaults::COMMAND_TIMEOUT_MS,
            stall_ms: defaults::STALL_MS,
            wait_timeout_ms: defaults::WAIT_TIMEOUT_MS,
            read_from_replicas: false,
            auto_pipeline: defaults::AUTO_PIPELINE,
            pipeline_max_commands: defaults::PIPELINE_MAX_COMMANDS,
            pipeline_max_writes: defaults::PIPELINE_MAX_WRITES,
        }
    }
}

impl ClusterConfig {
    /// The defaults with the fields of `object` (snake_case names as above) in their
    /// place: how every binding passes its options.
    ///
    /// # Errors
    /// `invalid_argument` for an unknown field, a wrong type, `max_redirects` over 1000,
    /// a time over 2^53 ms or zero `backoff_first_ms`, `backoff_max_ms` below it, or
    /// `pipeline_max_commands` outside 1..=2^16 or `pipeline_max_writes` outside 1..=1024
    /// ([`defaults::PIPELINE_MAX_COMMANDS_LIMIT`], [`defaults::PIPELINE_MAX_WRITES_LIMIT`]).
    ///
    /// # Example
    /// ```
    /// use shardroute::session::ClusterConfig;
    /// let config = ClusterConfig::from_value(&serde_json::json!({"max_redirects": 2}))?;
    /// assert_eq!(config.max_redirects, 2);
    /// assert_eq!(config.refresh_interval_ms, ClusterConfig::default().refresh_interval_ms);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn from_value(object: &Value) -> Result<ClusterConfig> {
        let Value::Object(fields) = object else {
            return Err(Error::argument("config: expected an object"));
        };
        let mut config = ClusterConfig::default();
        for (name, value) in fields {
            let time = || {
                value.as_u64().filter(|&ms| ms <= 1 << 53).ok_or_else(|| {
                    Error::argument(format!("config.{name}: expected milliseconds, an integer in 0..=2^53"))
                })
            };
            let count = |most: u32| {
                value
                    .as_u64()
                    .filter(|&n| (1..=u64::from(most)).contains(&n))
                    .map(|n| n as u32)
                    .ok_or_else(|| Error::argument(format!("config.{name}: expected an integer in 1..={most}")))
            };
            match name.as_str() {
                "max_redirects" => {
                    config.max_redirects = value
                        .as_u64()
                        .filter(|&n| n <= 1000)
                        .ok_or_else(|| Error::argument("config.max_redirects: expected an integer in 0..=1000"))?
                        as u32
                }
                "refresh_interval_ms" => config.refresh_interval_ms = time()?,
                "retry_budget_ms" => config.retry_budget_ms = time()?,
                "backoff_first_ms" => config.backoff_first_ms = time()?,
                "backoff_max_ms" => config.backoff_max_ms = time()?,
                "connect_timeout_ms" => config.connect_timeout_ms = time()?,
                "command_timeout_ms" => config.command_timeout_ms = time()?,
                "stall_ms" => config.stall_ms = time()?,
                "wait_timeout_ms" => config.wait_timeout_ms = time()?,
                "read_from_replicas" => {
                    config.read_from_replicas = value
                        .as_bool()
                        .ok_or_else(|| Error::argument("config.read_from_replicas: expected a boolean"))?
                }
                "auto_pipeline" => {
                    config.auto_pipeline =
                        value.as_bool().ok_or_else(|| Error::argument("config.auto_pipeline: expected a boolean"))?
                }
                "pipeline_max_commands" => config.pipeline_max_commands = count(defaults::PIPELINE_MAX_COMMANDS_LIMIT)?,
                "pipeline_max_writes" => config.pipeline_max_writes = count(defaults::PIPELINE_MAX_WRITES_LIMIT)?,
                other => {
                    return Err(Error::argument(format!(
                        "config: unknown field {other:?} (max_redirects, refresh_interval_ms, retry_budget_ms, \
                         backoff_first_ms, backoff_max_ms, connect_timeout_ms, command_timeout_ms, stall_ms, \
                         wait_timeout_ms, read_from_replicas, auto_pipeline, pipeline_max_commands, \
                         pipeline_max_writes)"
                    )))
                }
            }
        }
        if config.backoff_first_ms == 0 || config.backoff_max_ms < config.backoff_first_ms {
            return Err(Error::argument("config: backoff_first_ms must be at least 1 and at most backoff_max_ms"));
        }
        Ok(config)
    }

    /// This config as a JSON object (every field).
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "max_redirects": self.max_redirects,
            "refresh_interval_ms": self.refresh_interval_ms,
            "retry_budget_ms": self.retry_budget_ms,
            "backoff_first_ms": self.backoff_first_ms,
            "backoff_max_ms": self.backoff_max_ms,
            "connect_timeout_ms": self.connect_timeout_ms,
            "command_timeout_ms": self.command_timeout_ms,
            "stall_ms": self.stall_ms,
            "wait_timeout_ms": self.wait_timeout_ms,
            "read_from_replicas": self.read_from_replicas,
            "auto_pipeline": self.auto_pipeline,
            "pipeline_max_commands": self.pipeline_max_commands,
            "pipeline_max_writes": self.pipeline_max_writes,
        })
    }
}

/// Whether a command reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A read: served by a replica when [`ClusterConfig::read_from_replicas`].
    Read,
    /// A write: always the slot's master.
    Write,
}

impl Access {
    /// `"read"` or `"write"`.
    pub fn from_name(name: &str) -> Result<Access> {
        match name {
            "read" => Ok(Access::Read),
            "write" => Ok(Access::Write),
            other => Err(Error::argument(format!("access: expected \"read\" or \"write\", got {other:?}"))),
        }
    }
}

/// Where to send a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The node's endpoint.
    pub endpoint: Endpoint,
    /// Send `ASKING` first, on the same connection (after an `ASK`).
    pub asking: bool,
    /// Use a connection that sent `READONLY` (a replica read).
    pub readonly: bool,
}

/// What the shell does next for a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send the command to this target now.
    Send(Target),
    /// Sleep until `until_ms` (`delay_ms` from the time given), then [`poll`](ClusterSession::poll).
    Wait {
        /// When to poll again.
        until_ms: u64,
        /// `until_ms` less the time given, for a shell's `sleep`.
        delay_ms: u32,
    },
    /// Refresh the table ([`refresh_candidates`](ClusterSession::refresh_candidates), then
    /// [`refreshed`](ClusterSession::refreshed) or
    /// [`refresh_failed`](ClusterSession::refresh_failed)), then [`poll`](ClusterSession::poll).
    Refresh,
    /// The last outcome stands: return the reply, or raise the command's own error as the
    /// client library raised it.
    Done,
    /// Give up: raise an error with this code (`too_many_redirects`, `unavailable`).
    Fail(Error),
}

impl Action {
    /// The action as JSON, as the vectors write it: `{"send": {"address", "host", "port",
    /// "asking", "readonly"}}`, `{"wait": {"until_ms", "delay_ms"}}`, `{"refresh": {}}`,
    /// `{"done": {}}`, `{"fail": {"code"}}`; `until_ms` as a decimal string (a u64, as the
    /// vectors write every u64), `delay_ms` and `port` as integers.
    pub fn to_value(&self) -> Value {
        match self {
            Action::Send(target) => serde_json::json!({"send": {
                "address": target.endpoint.address(),
                "host": target.endpoint.host(),
                "port": target.endpoint.port(),
                "asking": target.asking,
                "readonly": target.readonly,
            }}),
            Action::Wait { until_ms, delay_ms } => {
                serde_json::json!({"wait": {"until_ms": until_ms.to_string(), "delay_ms": delay_ms}})
            }
            Action::Refresh => serde_json::json!({"refresh": {}}),
            Action::Done => serde_json::json!({"done": {}}),
            Action::Fail(error) => serde_json::json!({"fail": {"code": error.code()}}),
        }
    }
}

/// An [`Action`] as flat fields, as the bindings hand it to their languages: `kind`,
/// then the fields of that kind, `None` for the fields of the other kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionFields {
    /// `send`, `wait`, `refresh`, `done` or `fail`.
    pub kind: &'static str,
    /// `send`: the node's `host:port` (an IPv6 host bracketed).
    pub address: Option<String>,
    /// `send`: the node's host.
    pub host: Option<String>,
    /// `send`: the node's port.
    pub port: Option<u16>,
    /// `send`: `ASKING` first.
    pub asking: Option<bool>,
    /// `send`: over a `READONLY` connection.
    pub readonly: Option<bool>,
    /// `wait`: when to poll again, on the shell's clock.
    pub until_ms: Option<u64>,
    /// `wait`: how long from the time given.
    pub delay_ms: Option<u32>,
    /// `fail`: the error's code.
    pub code: Option<&'static str>,
    /// `fail`: the error's message.
    pub message: Option<String>,
}

impl From<Action> for ActionFields {
    fn from(action: Action) -> ActionFields {
        let mut fields = ActionFields {
            kind: "done",
            address: None,
            host: None,
            port: None,
            asking: None,
            readonly: None,
            until_ms: None,
            delay_ms: None,
            code: None,
            message: None,
        };
        match action {
            Action::Send(target) => {
                fields.kind = "send";
                fields.address = Some(target.endpoint.address());
                fields.host = Some(target.endpoint.host().to_string());
                fields.port = Some(target.endpoint.port());
                fields.asking = Some(target.asking);
                fields.readonly = Some(target.readonly);
            }
            Action::Wait { until_ms, delay_ms } => {
                fields.kind = "wait";
                fields.until_ms = Some(until_ms);
                fields.delay_ms = Some(delay_ms);
            }
            Action::Refresh => fields.kind = "refresh",
            Action::Done => fields.kind = "done",
            Action::Fail(error) => {
                fields.kind = "fail";
                fields.code = Some(error.code());
                fields.message = Some(error.message().to_string());
            }
        }
        fields
    }
}

/// One command's progress: its slot, its redirects and its retries. Made by
/// [`ClusterSession::command`]; every call about it goes through the session.
#[derive(Clone, Debug)]
pub struct Command {
    slot: u32,
    access: Access,
    redirects: u32,
    /// The ASK target of the next attempt (one-shot).
    asking: Option<Endpoint>,
    /// A MOVED was just followed: resend before any refresh.
    redirected: bool,
    /// Where the last attempt went (an empty-host redirect keeps its host).
    sent_to: Option<Endpoint>,
    /// A node this command found silent (it stalled there, or timed out): an attempt
    /// sent there again is checked at the refresh pace, not after `stall_ms`.
    silent: Option<Endpoint>,
    retry_deadline_ms: Option<u64>,
    next_backoff_ms: u64,
    wait_until_ms: Option<u64>,
    /// [`ClusterSession::stalled`] asked for a refresh and is waiting to compare.
    stall_refresh_asked: bool,
    /// The attempt in flight: when the session must next look at it (a stall check, or
    /// its command timeout), and when its command timeout ends it.
    check_at_ms: Option<u64>,
    attempt_deadline_ms: Option<u64>,
    finished: bool,
}

impl Command {
    /// The command's slot.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Redirects followed so far.
    pub fn redirects(&self) -> u32 {
        self.redirects
    }

    /// Whether an attempt the session sent is in flight and its reply still wanted: true
    /// from an [`Action::Send`] until its outcome, or until
    /// [`on_deadline`](ClusterSession::on_deadline) gave it up (its command timeout).
    /// After `on_deadline`, a shell whose attempt is no longer in flight abandons it.
    /// With neither `stall_ms` nor `command_timeout_ms` set, an attempt has no deadline
    /// and this is false: the shell waits for its outcome and never calls `on_deadline`.
    pub fn in_flight(&self) -> bool {
        self.check_at_ms.is_some()
    }
}

/// What a session has seen: counters for a shell's `stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Commands begun.
    pub commands: u64,
    /// MOVED replies followed.
    pub moved: u64,
    /// ASK replies followed.
    pub ask: u64,
    /// Tables installed by a refresh.
    pub refreshes: u64,
    /// Refreshes that found no node with a usable reply.
    pub refresh_failures: u64,
    /// Replies refused by a refresh (empty, garbage, uncovered slots).
    pub refused_replies: u64,
    /// Backoffs taken.
    pub retries: u64,
    /// Commands given up (`too_many_redirects`, `unavailable`).
    pub failed: u64,
    /// The longest redirect chain of one command.
    pub longest_redirect_chain: u32,
    /// Commands found still waiting for their node ([`ClusterSession::stalled`]).
    pub stalls: u64,
    /// Stalled commands sent again to the slot's new owner.
    pub stall_resends: u64,
    /// Retryable failures by [`Outcome::name`] (`try_again`, `timeout`, ...), sorted by name.
    pub errors: Vec<(&'static str, u64)>,
}

impl SessionStats {
    fn count(&mut self, name: &'static str) {
        match self.errors.binary_search_by(|(known, _)| known.cmp(&name)) {
            Ok(index) => self.errors[index].1 += 1,
            Err(index) => self.errors.insert(index, (name, 1)),
        }
    }

    /// The counters as a JSON object (`errors` as an object name -> count).
    pub fn to_value(&self) -> Value {
        let errors: serde_json::Map<String, Value> =
            self.errors.iter().map(|(name, count)| ((*name).to_string(), Value::from(*count))).collect();
        serde_json::json!({
            "commands": self.commands, "moved": self.moved, "ask": self.ask,
            "refreshes": self.refreshes, "refresh_failures": self.refresh_failures,
            "refused_replies": self.refused_replies, "retries": self.retries, "failed": self.failed,
            "longest_redirect_chain": self.longest_redirect_chain, "stalls": self.stalls,
            "stall_resends": self.stall_resends, "errors": Value::Object(errors),
        })
    }
}

/// The table a session routes by: the router, its slot index and each node's endpoint.
#[derive(Clone, Debug)]
struct Table {
    router: Router,
    slots: SlotTable,
    endpoints: Vec<Endpoint>,
    /// A `MOVED` to a node of the table edits it in place ([`Table::moved_in_place`]):
    /// no two neighbouring slot ranges share a chain (what a rebuild leaves, and what an
    /// edit keeps), and nothing else in the topology names nodes or carries the epoch.
    in_place: bool,
}

impl Table {
    fn new(router: Router) -> Result<Table> {
        let Strategy::RedisCluster(spec) = router.strategy() else {
            return Err(Error::argument("a Redis Cluster session needs a redis_cluster topology"));
        };
        let slots = SlotTable::new(spec.ranges(router.nodes().len() as u32));
        let in_place = spec.is_joined() && router.moves_in_place();
        let endpoints = router
            .nodes()
            .iter()
            .map(|node| Endpoint::parse_with_host(node.address.as_deref().unwrap_or(&node.id)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Table { router, slots, endpoints, in_place })
    }

    /// `MOVED <slot> <address>` for a node the table has, when no node of the slot's
    /// chain is left without a slot: the slot's entry written in the router's slot table
    /// and in the session's, its range cut in the topology, the epoch advanced; the nodes
    /// and their endpoints stay. `false`, with nothing changed, for every other case (the
    /// rebuild of [`ClusterSession::follow_moved`] does it).
    fn moved_in_place(&mut self, slot: u32, endpoint: &Endpoint, address: &str) -> bool {
        if !self.in_place {
            return false;
        }
        let Some(target) = self.node_at(endpoint, address) else { return false };
        // The slot is its chain's last: a node of the chain that serves no other slot
        // leaves the table, which renumbers the nodes.
        if self.slots.chain_uses(slot) == 1
            && self.slots.chain(slot).iter().any(|&node| node != target && !self.slots.serves_beyond(node, slot))
        {
            return false;
        }
        if !matches!(self.router.move_slot_in_place(slot, target), Ok(true)) {
            return false;
        }
        if !self.slots.move_slot(slot, target) {
            // Not reached: the two tables are built alike and edited alike.
            if let Strategy::RedisCluster(spec) = self.router.strategy() {
                self.slots = SlotTable::new(spec.ranges(self.router.nodes().len() as u32));
            }
        }
        true
    }

    /// The node a `MOVED` to `endpoint` (whose text is `address`) names, as the router
    /// finds it (the first node with that address, else the first without an address whose
    /// id it is: `node_index`), looking only at the nodes whose endpoint has its port: the
    /// endpoint of such a node is read from that very text, so it has the port.
    fn node_at(&self, endpoint: &Endpoint, address: &str) -> Option<u32> {
        let port = endpoint.port();
        let nodes = self.router.nodes();
        let candidates =
            || (0u32..).zip(self.endpoints.iter().zip(nodes)).filter(move |(_, (seen, _))| seen.port() == port);
        candidates()
            .find(|(_, (_, node))| node.address.as_deref() == Some(address))
            .or_else(|| candidates().find(|(_, (_, node))| node.address.is_none() && node.id == address))
            .map(|(index, _)| index)
    }
}

/// A Redis Cluster client's decisions (see the module docs).
#[derive(Clone, Debug)]
pub struct ClusterSession {
    config: ClusterConfig,
    seeds: Vec<Endpoint>,
    table: Option<Table>,
    /// When the last refresh ended (installed or failed).
    last_refresh_ms: Option<u64>,
    /// A throttled refresh was asked for.
    refresh_soon: bool,
    /// A refresh was asked for that does not wait for the interval.
    refresh_now: bool,
    /// A refresh is running: [`ClusterSession::refresh_sent`] was called and neither
    /// [`ClusterSession::refreshed`] (installed) nor [`ClusterSession::refresh_failed`]
    /// has ended it. A throttled refresh then holds no command whose slot is known.
    refresh_running: bool,
    /// Endpoints that failed, stalled or timed out and have not answered since: asked
    /// last. Kept across refreshes (a paused node stays silent through many), dropped
    /// when the node answers (a command's reply, a refresh's) or leaves the table, and
    /// cleared when a refresh found no candidate that answered.
    suspects: BTreeSet<Endpoint>,
    /// Rotates the refresh candidates, so refreshes spread over the nodes.
    refresh_turn: u32,
    /// The refresh request in flight ([`ClusterSession::refresh_sent`]): its node, its
    /// stall deadline, and its whole-request deadline.
    refreshing: Option<(Endpoint, u64, Option<u64>)>,
    /// Before the first table: no refresh until then (the last one failed).
    no_table_until_ms: Option<u64>,
    /// The next wait before the first table.
    no_table_backoff_ms: u64,
    turn: u32,
    /// Advances on each new table ([`ClusterSession::endpoints_version`]).
    endpoints_version: u64,
    stats: SessionStats,
    /// Auto-pipelining's counts per connection ([`ClusterSession::pipeline_queued`]).
    pipelines: Pipelines,
}

impl ClusterSession {
    /// A session with no table yet, which will read one from `seeds` (`host:port`, at
    /// least one): the first [`poll`](ClusterSession::poll) asks for a refresh.
    ///
    /// # Errors
    /// `invalid_argument` for no seeds or a seed that is not `host:port` with a host.
    ///
    /// # Example
    /// ```
    /// use shardroute::session::{Action, Access, ClusterConfig, ClusterSession};
    /// let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default())?;
    /// let mut command = session.command(&["user:1".into()], Access::Write, 0)?;
    /// assert_eq!(session.poll(&mut command, 0), Action::Refresh);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn new(seeds: &[&str], config: ClusterConfig) -> Result<ClusterSession> {
        if seeds.is_empty() {
            return Err(Error::argument("seeds: give at least one host:port"));
        }
        let seeds = seeds.iter().map(|seed| Endpoint::parse_with_host(seed)).collect::<Result<Vec<_>>>()?;
        Ok(ClusterSession {
            no_table_backoff_ms: config.backoff_first_ms,
            config,
            seeds,
            table: None,
            last_refresh_ms: None,
            refresh_soon: false,
            refresh_now: false,
            refresh_running: false,
            suspects: BTreeSet::new(),
            refresh_turn: 0,
            refreshing: None,
            no_table_until_ms: None,
            turn: 0,
            endpoints_version: 0,
            stats: SessionStats::default(),
            pipelines: Pipelines::default(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// The current router (a `redis_cluster` topology), or `None` before the first table.
    pub fn router(&self) -> Option<&Router> {
        self.table.as_ref().map(|table| &table.router)
    }

    /// The counters.
    pub fn stats(&self) -> &SessionStats {
        &self.stats
    }

    /// Zeroes the counters.
    pub fn reset_stats(&mut self) {
        self.stats = SessionStats::default();
    }

    /// Begins a command on `keys` (one key, or the keys of a multi-key command), at
    /// `now_ms` on the shell's monotonic clock.
    ///
    /// # Errors
    /// `invalid_argument` for no keys; `cross_slot` when the keys are in different slots
    /// (the message names the first key that differs); `invalid_key` as routing does.
    pub fn command(&mut self, keys: &[Key<'_>], access: Access, now_ms: u64) -> Result<Command> {
        let _ = now_ms;
        let slot = same_slot(keys)?;
        self.stats.commands += 1;
        Ok(self.fresh_command(slot, access, None))
    }

    /// The steady path of a command in one call, for a shell that pays for each call into
    /// the core (a JavaScript engine's native boundary costs a microsecond a call): when a
    /// new command on `keys` would be sent at once (a table, no refresh due: the
    /// [`Action::Send`] that [`command`](ClusterSession::command) then
    /// [`poll`](ClusterSession::poll) would give, its replica turn taken the same way), the
    /// command is counted and its target is returned as the index of its node in
    /// [`endpoints`](ClusterSession::endpoints) and whether the connection is `READONLY`.
    /// Otherwise `Ok(None)`, and nothing changed: begin it with `command` and `poll`.
    ///
    /// A reply ends such a command: there is nothing to call. For any other outcome the
    /// shell makes its [`Command`] with [`command_sent`](ClusterSession::command_sent) and
    /// goes on as after `poll`; a shell that waits under the session's deadlines takes
    /// [`send_now_timed`](ClusterSession::send_now_timed) and
    /// [`command_sent_at`](ClusterSession::command_sent_at).
    ///
    /// # Errors
    /// As [`command`](ClusterSession::command).
    ///
    /// # Example
    /// ```
    /// use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
    /// let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default())?;
    /// // No table yet: the general path (command, then poll: a refresh).
    /// assert_eq!(session.send_now(&["user:1".into()], Access::Write, 0)?, None);
    /// assert_eq!(session.stats().commands, 0);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn send_now(&mut self, keys: &[Key<'_>], access: Access, now_ms: u64) -> Result<Option<(u32, bool)>> {
        Ok(self.send_now_timed(keys, access, now_ms)?.map(|(node, readonly, _)| (node, readonly)))
    }

    /// [`send_now`](ClusterSession::send_now), with the attempt's deadline: the
    /// [`deadline`](ClusterSession::deadline) of the command that
    /// [`command`](ClusterSession::command) then `poll` at `now_ms` would have made (its
    /// stall check, or its command timeout when sooner; `None` when both are 0). A reply before it ends the command; at it, the shell makes
    /// the [`Command`] with [`command_sent_at`](ClusterSession::command_sent_at) and calls
    /// [`on_deadline`](ClusterSession::on_deadline), as on the general path.
    ///
    /// # Errors
    /// As [`command`](ClusterSession::command).
    ///
    /// # Example
    /// ```
    /// use serde_json::json;
    /// use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
    /// let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default())?;
    /// let shards = json!([{"slots": [0, 16383], "nodes": [{"id": "a", "ip": "127.0.0.1", "port": 7000, "role": "master"}]}]);
    /// session.refreshed(&shards, 0)?;
    /// let (_, _, deadline) = session.send_now_timed(&["user:1".into()], Access::Write, 10)?.unwrap();
    /// let mut command = session.command(&["user:1".into()], Access::Write, 10)?;
    /// assert!(matches!(session.poll(&mut command, 10), Action::Send(_)));
    /// assert_eq!(deadline, session.deadline(&command));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn send_now_timed(
        &mut self,
        keys: &[Key<'_>],
        access: Access,
        now_ms: u64,
    ) -> Result<Option<(u32, bool, Option<u64>)>> {
        let slot = same_slot(keys)?;
        if self.refresh_due(now_ms) {
            return Ok(None);
        }
        let Some((node, readonly)) = self.target_node(slot, access) else {
            return Ok(None);
        };
        self.stats.commands += 1;
        Ok(Some((node, readonly, self.attempt_times(now_ms).1)))
    }

    /// The [`Command`] of an attempt [`send_now`](ClusterSession::send_now) sent to
    /// `sent_to` (the `address` of the endpoint it gave), as `poll` would have left it:
    /// for [`failed`](ClusterSession::failed), [`unreachable`](ClusterSession::unreachable)
    /// or [`stalled`](ClusterSession::stalled). Not counted again.
    ///
    /// # Errors
    /// As [`command`](ClusterSession::command); `invalid_argument` when `sent_to` is not
    /// `host:port`.
    pub fn command_sent(&mut self, keys: &[Key<'_>], access: Access, sent_to: &str) -> Result<Command> {
        let slot = same_slot(keys)?;
        let endpoint = Endpoint::parse_with_host(sent_to)?;
        Ok(self.fresh_command(slot, access, Some(endpoint)))
    }

    /// [`command_sent`](ClusterSession::command_sent) for an attempt
    /// [`send_now_timed`](ClusterSession::send_now_timed) sent at `sent_ms`: its stall
    /// check and command timeout run from then, as `poll` would have left them (its
    /// [`deadline`](ClusterSession::deadline) is the one `send_now_timed` gave).
    ///
    /// # Errors
    /// As [`command_sent`](ClusterSession::command_sent).
    pub fn command_sent_at(
        &mut self,
        keys: &[Key<'_>],
        access: Access,
        sent_to: &str,
        sent_ms: u64,
    ) -> Result<Command> {
        let mut command = self.command_sent(keys, access, sent_to)?;
        self.attempt_started(&mut command, sent_ms);
        Ok(command)
    }

    /// The command timeout of an attempt [`send_now_timed`](ClusterSession::send_now_timed)
    /// sent at `sent_ms` (`None` when `command_timeout_ms` is 0): a reply already arriving
    /// is read until then, as [`reply_deadline`](ClusterSession::reply_deadline) gives for
    /// a command `poll` sent at `sent_ms`. For a shell that reads a reply begun by the stall
    /// check on to its end (the Python shells), without making the [`Command`].
    ///
    /// ```
    /// use shardroute::session::{ClusterConfig, ClusterSession};
    /// let session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default())?;
    /// assert_eq!(session.sent_reply_deadline(10), Some(10 + ClusterConfig::default().command_timeout_ms));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn sent_reply_deadline(&self, sent_ms: u64) -> Option<u64> {
        self.attempt_times(sent_ms).0
    }

    /// A command on `slot` with no attempt yet, or the one `send_now` made to `sent_to`.
    fn fresh_command(&self, slot: u32, access: Access, sent_to: Option<Endpoint>) -> Command {
        Command {
            slot,
            access,
            redirects: 0,
            asking: None,
            redirected: false,
            sent_to,
            silent: None,
            retry_deadline_ms: None,
            next_backoff_ms: self.config.backoff_first_ms,
            wait_until_ms: None,
            stall_refresh_asked: false,
            check_at_ms: None,
            attempt_deadline_ms: None,
            finished: false,
        }
    }

    /// The endpoints of the current table's nodes, in node order (the indices
    /// [`send_now`](ClusterSession::send_now) gives); empty before the first table. They
    /// change only when the table's nodes do: after `refreshed`, or a `MOVED` that added
    /// or removed a node ([`endpoints_version`](ClusterSession::endpoints_version) says
    /// when).
    pub fn endpoints(&self) -> &[Endpoint] {
        self.table.as_ref().map_or(&[], |table| table.endpoints.as_slice())
    }

    /// A number that changes whenever [`endpoints`](ClusterSession::endpoints) may have
    /// (a refresh installed a table, a `MOVED` added or removed a node), and only then: a
    /// `MOVED` to a node of the table leaves it. A shell that keeps something per endpoint
    /// (a target object per node index) keeps it while this number stays.
    pub fn endpoints_version(&self) -> u64 {
        self.endpoints_version
    }

    /// What to do now for `command`: usually [`Action::Send`]; [`Action::Refresh`] when
    /// there is no table yet or a refresh is due; [`Action::Wait`] while a backoff runs.
    pub fn poll(&mut self, command: &mut Command, now_ms: u64) -> Action {
        if command.finished {
            return Action::Fail(Error::argument("this command is finished: begin a new one"));
        }
        if let Some(until_ms) = command.wait_until_ms {
            if now_ms < until_ms {
                return Action::Wait { until_ms, delay_ms: delay(until_ms, now_ms) };
            }
            command.wait_until_ms = None;
        }
        if self.table.is_none() {
            return self.poll_without_table(command, now_ms);
        }
        if let Some(endpoint) = command.asking.clone() {
            command.sent_to = Some(endpoint.clone());
            self.attempt_started(command, now_ms);
            return Action::Send(Target { endpoint, asking: true, readonly: false });
        }
        if !command.redirected && self.refresh_due(now_ms) {
            return Action::Refresh;
        }
        command.redirected = false;
        match self.target(command.slot, command.access) {
            Some(target) => {
                command.sent_to = Some(target.endpoint.clone());
                self.attempt_started(command, now_ms);
                Action::Send(target)
            }
            None => Action::Refresh,
        }
    }

    /// Before the first table: refresh, or wait while the last refresh's backoff runs
    /// (the command's retry budget counts from its first wait).
    fn poll_without_table(&mut self, command: &mut Command, now_ms: u64) -> Action {
        match self.no_table_until_ms {
            Some(until_ms) if now_ms < until_ms => {
                let deadline =
                    *command.retry_deadline_ms.get_or_insert(now_ms.saturating_add(self.config.retry_budget_ms));
                if now_ms >= deadline {
                    return self.give_up(
                        command,
                        ErrorKind::Unavailable,
                        format!("no startup node answered CLUSTER SHARDS within {} ms", self.config.retry_budget_ms),
                    );
                }
                let until_ms = until_ms.min(deadline);
                command.wait_until_ms = Some(until_ms);
                Action::Wait { until_ms, delay_ms: delay(until_ms, now_ms) }
            }
            _ => Action::Refresh,
        }
    }

    /// The attempt answered: the reply stands ([`Action::Done`]).
    pub fn succeeded(&mut self, command: &mut Command, now_ms: u64) -> Action {
        let _ = now_ms;
        if let Some(answered) = &command.sent_to {
            self.suspects.remove(answered);
        }
        command.finished = true;
        command.check_at_ms = None;
        command.attempt_deadline_ms = None;
        Action::Done
    }

    /// The attempt failed with `text` (a Redis error reply, or a connection error's
    /// message) whose library class names or error codes are `names` (most derived
    /// first; may be empty): the next action, by the table of [`reply`](super::reply).
    pub fn failed(&mut self, command: &mut Command, text: &str, names: &[&str], now_ms: u64) -> Action {
        let outcome = classify(text, names);
        self.handle(command, outcome, now_ms)
    }

    /// The attempt could not reach its node: as [`failed`](ClusterSession::failed) with
    /// that transport outcome.
    pub fn unreachable(&mut self, command: &mut Command, why: Transport, now_ms: u64) -> Action {
        self.handle(command, Outcome::Transport(why), now_ms)
    }

    /// The attempt has had no reply for [`ClusterConfig::stall_ms`] (or since the last
    /// [`Action::Wait`] this returned), and is still waiting: is its node still the slot's?
    ///
    /// A primary that stops answering (paused, partitioned) is failed over by the cluster
    /// long before a command timeout would tell the shell. So the session checks, while the
    /// attempt waits: [`Action::Refresh`] first (the silent node is asked last; at most one
    /// refresh per [`ClusterConfig::refresh_interval_ms`], shared by every stalled command),
    /// then, on the next call, [`Action::Send`] to the slot's new owner if the table moved
    /// it (the shell abandons the silent attempt: its late reply is not used), or
    /// [`Action::Wait`]: keep waiting for the reply until `until_ms` (when the table may be
    /// read again: one refresh interval after the last refresh, whichever command asked
    /// for it), then call again. The
    /// shell's command timeout still ends the attempt ([`ClusterSession::unreachable`]).
    ///
    /// An attempt after `ASK` is not moved: the migration's target is not in the table.
    /// Resending can run a write twice only if the old node both executes the abandoned
    /// attempt and stays the slot's owner, which the table has just shown it is not.
    pub fn stalled(&mut self, command: &mut Command, now_ms: u64) -> Action {
        if command.finished {
            return Action::Fail(Error::argument("this command is finished: begin a new one"));
        }
        let Some(sent_to) = command.sent_to.clone() else {
            return Action::Fail(Error::argument("stalled: this command has no attempt in flight"));
        };
        // Until the table may be read again: one refresh interval after the last refresh
        // (a refresh another command asked for counts), so that a failover is seen at
        // most one interval after the table shows it.
        // (An attempt that no refresh can move, after ASK or before any table, waits one
        // whole interval.)
        let keep_waiting = |session: &ClusterSession, movable: bool| {
            let interval = session.config.refresh_interval_ms.max(1);
            let next_refresh = match session.last_refresh_ms {
                Some(last) if movable => last.saturating_add(interval),
                _ => now_ms.saturating_add(interval),
            };
            let until_ms = next_refresh.clamp(now_ms.saturating_add(1), now_ms.saturating_add(interval));
            Action::Wait { until_ms, delay_ms: delay(until_ms, now_ms) }
        };
        if !command.stall_refresh_asked {
            self.stats.stalls += 1;
            self.suspects.insert(sent_to.clone());
            command.silent = Some(sent_to.clone());
        }
        if command.asking.is_some() || self.table.is_none() {
            return keep_waiting(self, false);
        }
        let may_refresh =
            self.last_refresh_ms.is_none_or(|last| now_ms.saturating_sub(last) >= self.config.refresh_interval_ms);
        if !command.stall_refresh_asked && may_refresh {
            command.stall_refresh_asked = true;
            return Action::Refresh;
        }
        command.stall_refresh_asked = false;
        let table = self.table.as_ref().expect("checked above");
        let chain = table.slots.chain(command.slot);
        // A replica read stays while its node is among the slot's replicas; anything else
        // while its node is the slot's master (a failed master is listed as a replica).
        let replica_read = command.access == Access::Read && self.config.read_from_replicas && chain.len() > 1;
        let still_serves = table.endpoints[chain[0] as usize] == sent_to
            || (replica_read && chain[1..].iter().any(|&node| table.endpoints[node as usize] == sent_to));
        if still_serves {
            return keep_waiting(self, true);
        }
        match self.target(command.slot, command.access) {
            Some(target) => {
                self.stats.stall_resends += 1;
                command.sent_to = Some(target.endpoint.clone());
                self.attempt_started(command, now_ms);
                Action::Send(target)
            }
            None => keep_waiting(self, true),
        }
    }

    /// When the shell must next ask about `command` ([`on_deadline`](ClusterSession::on_deadline)),
    /// if nothing about it happens first: the end of its backoff ([`Action::Wait`] from
    /// `poll` or an outcome), or for an attempt in flight (an [`Action::Send`] the session
    /// gave, counted from the `now_ms` of that call: the connection, its handshake and the
    /// reply are one attempt) the next stall check ([`ClusterConfig::stall_ms`] after the
    /// send, then each wait [`on_deadline`](ClusterSession::on_deadline) gives) or its
    /// command timeout ([`ClusterConfig::command_timeout_ms`]), whichever is first;
    /// right away (the `now_ms` of the last call) after a stall asked for a refresh.
    /// `None` when the command is finished or has nothing in flight and nothing to wait
    /// for; a zero `stall_ms` or `command_timeout_ms` sets no such deadline.
    ///
    /// With [`next_deadline`](ClusterSession::next_deadline) (the session's own requests),
    /// this is the shell's one timer: it computes no timeout, stall or backoff itself
    /// (quinn-proto's `poll_timeout`).
    ///
    /// # Example
    /// ```
    /// use serde_json::json;
    /// use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
    /// let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default())?;
    /// let shards = json!([{"slots": [0, 16383], "nodes": [{"id": "a", "ip": "127.0.0.1", "port": 7000, "role": "master"}]}]);
    /// session.refreshed(&shards, 0)?;
    /// let mut command = session.command(&["user:1".into()], Access::Write, 10)?;
    /// assert!(matches!(session.poll(&mut command, 10), Action::Send(_)));
    /// assert_eq!(session.deadline(&command), Some(510)); // the stall check: stall_ms after the send
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn deadline(&self, command: &Command) -> Option<u64> {
        if command.finished {
            return None;
        }
        command.wait_until_ms.or(command.check_at_ms)
    }

    /// The command timeout of `command`'s attempt in flight (from its send), or `None`:
    /// a reply already arriving is read until then (a stall check at
    /// [`deadline`](ClusterSession::deadline) only asks whether the node still serves the
    /// slot; a node that drips its reply is cut off here).
    pub fn reply_deadline(&self, command: &Command) -> Option<u64> {
        command.attempt_deadline_ms.filter(|_| !command.finished)
    }

    /// `command`'s [`deadline`](ClusterSession::deadline) came (`now_ms` at or after it;
    /// earlier, the answer is to wait on until it): the next action.
    ///
    /// * A backoff ended: as [`poll`](ClusterSession::poll).
    /// * The attempt in flight passed its command timeout: it is given up as a
    ///   `timeout` ([`unreachable`](ClusterSession::unreachable)); the shell closes its
    ///   connection and does what the action says.
    /// * The attempt had no reply by its stall check: as
    ///   [`stalled`](ClusterSession::stalled), whose [`Action::Wait`] ("keep waiting for
    ///   the reply") ends at the command timeout at the latest; after
    ///   [`Action::Refresh`] the deadline is now: call again once the refresh ended.
    /// * Nothing in flight, nothing to wait for: as `poll`.
    pub fn on_deadline(&mut self, command: &mut Command, now_ms: u64) -> Action {
        if command.finished {
            return Action::Fail(Error::argument("this command is finished: begin a new one"));
        }
        if command.wait_until_ms.is_some() || command.check_at_ms.is_none() {
            return self.poll(command, now_ms);
        }
        let check_at = command.check_at_ms.unwrap_or(now_ms);
        if now_ms < check_at {
            return Action::Wait { until_ms: check_at, delay_ms: delay(check_at, now_ms) };
        }
        if command.attempt_deadline_ms.is_some_and(|end| now_ms >= end) {
            return self.handle(command, Outcome::Transport(Transport::Timeout), now_ms);
        }
        match self.stalled(command, now_ms) {
            Action::Refresh => {
                command.check_at_ms = Some(now_ms);
                Action::Refresh
            }
            Action::Wait { until_ms, .. } => {
                let until_ms = command.attempt_deadline_ms.map_or(until_ms, |end| until_ms.min(end));
                command.check_at_ms = Some(until_ms);
                Action::Wait { until_ms, delay_ms: delay(until_ms, now_ms) }
            }
            other => other,
        }
    }

    /// A send's attempt begins at `now_ms`: its stall check and its command timeout.
    ///
    /// An attempt sent again to a node this command already found silent (it stalled
    /// there, or timed out) is checked after the refresh interval when that is sooner than
    /// `stall_ms`: that node may be paused, and a shell that is held by it (a blocking
    /// connect and handshake) must be let go at the pace the table is read, so that a
    /// failover is followed within one refresh interval of the table showing it, not one
    /// `stall_ms` later.
    fn attempt_started(&self, command: &mut Command, now_ms: u64) {
        (command.attempt_deadline_ms, command.check_at_ms) = self.attempt_times(now_ms);
        if command.silent.is_some() && command.silent == command.sent_to && self.config.stall_ms > 0 {
            let pace = now_ms.saturating_add(self.config.refresh_interval_ms.max(1));
            command.check_at_ms = command.check_at_ms.map(|check| check.min(pace));
        }
    }

    /// The command timeout and the first stall check of an attempt sent at `now_ms`.
    fn attempt_times(&self, now_ms: u64) -> (Option<u64>, Option<u64>) {
        let after = |ms: u64| (ms > 0).then(|| now_ms.saturating_add(ms));
        let end = after(self.config.command_timeout_ms);
        let check = match (after(self.config.stall_ms), end) {
            (Some(stall), Some(end)) => Some(stall.min(end)),
            (stall, end) => stall.or(end),
        };
        (end, check)
    }

    /// The shell is asking `address` (one of the
    /// [`refresh_candidates`](ClusterSession::refresh_candidates)) for `CLUSTER SHARDS`
    /// at `now_ms`: connecting, its handshake and the reply are one request under the stall
    /// rule, as a command's attempt: no reply begun by its deadline (`stall_ms` later, or
    /// `command_timeout_ms` when sooner or when `stall_ms` is 0; `None` when both are 0)
    /// and the node is given up; a reply begun is read until
    /// [`refresh_reply_deadline`](ClusterSession::refresh_reply_deadline). The deadline is
    /// returned, and
    /// [`next_deadline`](ClusterSession::next_deadline) gives until
    /// [`refreshed`](ClusterSession::refreshed) (either way),
    /// [`refresh_failed`](ClusterSession::refresh_failed), the next `refresh_sent`, or
    /// [`timeout`](ClusterSession::timeout).
    ///
    /// From the first `refresh_sent` until the refresh ends (a table installed by
    /// `refreshed`, or `refresh_failed`: a shell ends every refresh it begins), the refresh
    /// runs: a throttled refresh (after MOVED) holds no command whose slot is known, so
    /// [`poll`](ClusterSession::poll) sends it, also the command that was handed the
    /// [`Action::Refresh`] and polls again instead of waiting.
    ///
    /// # Errors
    /// `invalid_argument` when `address` is not `host:port`.
    pub fn refresh_sent(&mut self, address: &str, now_ms: u64) -> Result<Option<u64>> {
        let endpoint = Endpoint::parse_with_host(address)?;
        let after = |ms: u64| (ms > 0).then(|| now_ms.saturating_add(ms));
        let deadline = match (after(self.config.stall_ms), after(self.config.command_timeout_ms)) {
            (Some(stall), Some(end)) => Some(stall.min(end)),
            (stall, end) => stall.or(end),
        };
        let whole = after(self.config.command_timeout_ms);
        self.refreshing = deadline.map(|deadline| (endpoint, deadline, whole));
        self.refresh_running = true;
        Ok(deadline)
    }

    /// The command timeout of the refresh request in flight (from
    /// [`refresh_sent`](ClusterSession::refresh_sent)), or `None`: a `CLUSTER SHARDS`
    /// reply already arriving is read until then.
    pub fn refresh_reply_deadline(&self) -> Option<u64> {
        self.refreshing.as_ref().and_then(|(_, _, whole)| *whole)
    }

    /// When the session's own request in flight (a refresh's `CLUSTER SHARDS`, see
    /// [`refresh_sent`](ClusterSession::refresh_sent)) must be given up: call
    /// [`timeout`](ClusterSession::timeout) then. `None` when there is none. A command's
    /// times are [`deadline`](ClusterSession::deadline)'s.
    pub fn next_deadline(&self) -> Option<u64> {
        self.refreshing.as_ref().map(|(_, deadline, _)| *deadline)
    }

    /// The [`next_deadline`](ClusterSession::next_deadline) came: the refresh request in
    /// flight is given up (its node is asked last from now on) and the shell asks the
    /// next candidate (or calls [`refresh_failed`](ClusterSession::refresh_failed) after
    /// the last). True when a request was given up; false when none was due at `now_ms`.
    pub fn timeout(&mut self, now_ms: u64) -> bool {
        match self.refreshing.take() {
            Some((endpoint, deadline, _)) if now_ms >= deadline => {
                self.suspects.insert(endpoint);
                true
            }
            other => {
                self.refreshing = other;
                false
            }
        }
    }

    /// The `host:port` of the node `id` in the current table (its address, or its id when
    /// it has none); `None` for an id the table lacks or before the first table. What a
    /// shell connects to, without reading the router's JSON.
    pub fn address_of(&self, id: &str) -> Option<String> {
        let table = self.table.as_ref()?;
        let index = table.router.nodes().iter().position(|node| node.id == id)?;
        table.endpoints.get(index).map(Endpoint::address)
    }

    fn handle(&mut self, command: &mut Command, outcome: Outcome, now_ms: u64) -> Action {
        if command.finished {
            return Action::Fail(Error::argument("this command is finished: begin a new one"));
        }
        // A command sent by a batch (a pipeline's entry) was sent where its slot's master is.
        let origin = command.sent_to.take().or_else(|| self.master_endpoint(command.slot));
        command.asking = None;
        command.check_at_ms = None;
        command.attempt_deadline_ms = None;
        let rule = outcome.rule();
        let timed_out = outcome == Outcome::Transport(Transport::Timeout);
        match outcome {
            Outcome::Application => {
                command.finished = true;
                return Action::Done;
            }
            Outcome::Unreadable(error) => return self.give_up(command, error.kind(), error.message().to_string()),
            Outcome::Moved(redirect) | Outcome::Ask(redirect) if command.redirects >= self.config.max_redirects => {
                command.redirects += 1;
                self.note_chain(command.redirects);
                return self.give_up(
                    command,
                    ErrorKind::TooManyRedirects,
                    format!(
                        "more than {} redirects; the last was {} {} {}",
                        self.config.max_redirects,
                        redirect.kind.as_str(),
                        redirect.slot,
                        redirect.address
                    ),
                );
            }
            Outcome::Moved(redirect) => {
                command.redirects += 1;
                self.note_chain(command.redirects);
                self.stats.moved += 1;
                let endpoint = match self.redirect_endpoint(&redirect.address, origin.as_ref()) {
                    Ok(endpoint) => endpoint,
                    Err(error) => return self.give_up(command, error.kind(), error.message().to_string()),
                };
                self.follow_moved(redirect.slot, &endpoint);
                command.redirected = true;
            }
            Outcome::Ask(redirect) => {
                command.redirects += 1;
                self.note_chain(command.redirects);
                self.stats.ask += 1;
                match self.redirect_endpoint(&redirect.address, origin.as_ref()) {
                    Ok(endpoint) => command.asking = Some(endpoint),
                    Err(error) => return self.give_up(command, error.kind(), error.message().to_string()),
                }
            }
            ref other => {
                self.stats.count(other.name());
                if let (Outcome::Transport(why), Some(origin)) = (other, origin) {
                    if *why == Transport::Timeout {
                        command.silent = Some(origin.clone());
                    }
                    self.suspects.insert(origin);
                }
            }
        }
        self.refresh_soon |= rule.refresh_soon;
        self.refresh_now |= rule.refresh_now;
        if rule.backoff {
            let deadline = *command.retry_deadline_ms.get_or_insert(now_ms.saturating_add(self.config.retry_budget_ms));
            if now_ms >= deadline {
                return self.give_up(
                    command,
                    ErrorKind::Unavailable,
                    format!(
                        "slot {}: no answer within the retry budget of {} ms",
                        command.slot, self.config.retry_budget_ms
                    ),
                );
            }
            self.stats.retries += 1;
            // A timeout has already waited (until its attempt's deadline): it is retried
            // after the refresh it asks for, without a backoff on top, and the backoff does
            // not grow. A sync shell held by a paused node's handshake until the stall
            // check would otherwise sleep a doubled backoff after each check, and follow
            // the failover up to `backoff_max_ms` late.
            if timed_out {
                return self.poll(command, now_ms);
            }
            let until_ms = now_ms.saturating_add(command.next_backoff_ms).min(deadline);
            command.next_backoff_ms = command.next_backoff_ms.saturating_mul(2).min(self.config.backoff_max_ms);
            command.wait_until_ms = Some(until_ms);
            return Action::Wait { until_ms, delay_ms: delay(until_ms, now_ms) };
        }
        self.poll(command, now_ms)
    }

    fn give_up(&mut self, command: &mut Command, kind: ErrorKind, message: String) -> Action {
        command.finished = true;
        command.check_at_ms = None;
        command.attempt_deadline_ms = None;
        self.stats.failed += 1;
        Action::Fail(Error::new(kind, message))
    }

    fn note_chain(&mut self, redirects: u32) {
        self.stats.longest_redirect_chain = self.stats.longest_redirect_chain.max(redirects);
    }

    fn redirect_endpoint(&self, address: &str, origin: Option<&Endpoint>) -> Result<Endpoint> {
        let endpoint = Endpoint::parse(address)?;
        match origin {
            Some(origin) => Ok(endpoint.or_host_of(origin)),
            None if endpoint.host().is_empty() => {
                Err(Error::argument(format!("redirect to {address:?}: no host, and no node it came from")))
            }
            None => Ok(endpoint),
        }
    }

    fn follow_moved(&mut self, slot: u32, endpoint: &Endpoint) {
        let address = endpoint.address();
        let Some(table) = &mut self.table else { return };
        let owner = table.slots.chain(slot)[0] as usize;
        if table.endpoints.get(owner) == Some(endpoint) {
            return;
        }
        // The common case, a slot moving to a node the table has: one entry written.
        if table.moved_in_place(slot, endpoint, &address) {
            return;
        }
        // A node the table lacks joins with its address as its id; a node of the slot's
        // old chain that no range names any more leaves (the table stays bounded by the
        // slots, however many addresses MOVED names).
        let old_chain = table.slots.chain(slot).to_vec();
        if let Ok(next) = table
            .router
            .moved(slot, &address)
            .and_then(|router| unserved_dropped(router, &old_chain))
            .and_then(Table::new)
        {
            self.table = Some(next);
            self.endpoints_version = self.endpoints_version.wrapping_add(1);
        }
    }

    /// Whether a command must wait for a refresh before it is sent: no table, a refresh
    /// asked for at once (the table may be wrong), or a throttled one (after MOVED, a busy
    /// reply) whose interval has passed and that no one runs yet. A throttled refresh that
    /// runs ([`refresh_sent`](ClusterSession::refresh_sent) until it ends) holds no
    /// command whose slot the table knows: the table in use, with the slots MOVED already
    /// wrote, serves it meanwhile (ioredis' way: a MOVED's refresh runs in the background).
    fn refresh_due(&self, now_ms: u64) -> bool {
        if self.table.is_none() {
            return true;
        }
        if self.refresh_now {
            return true;
        }
        self.refresh_soon
            && !self.refresh_running
            && self.last_refresh_ms.is_none_or(|last| now_ms.saturating_sub(last) >= self.config.refresh_interval_ms)
    }

    /// Whether a refresh is due at `now_ms` (for a shell that refreshes between commands).
    pub fn wants_refresh(&self, now_ms: u64) -> bool {
        self.refresh_due(now_ms)
    }

    fn master_endpoint(&self, slot: u32) -> Option<Endpoint> {
        let table = self.table.as_ref()?;
        table.endpoints.get(table.slots.chain(slot)[0] as usize).cloned()
    }

    fn target(&mut self, slot: u32, access: Access) -> Option<Target> {
        let (node, readonly) = self.target_node(slot, access)?;
        let table = self.table.as_ref()?;
        Some(Target { endpoint: table.endpoints[node as usize].clone(), asking: false, readonly })
    }

    /// The node a command on `slot` goes to (its index in the table) and whether over
    /// `READONLY`: the master, or with replica reads the slot's replicas in turn.
    fn target_node(&mut self, slot: u32, access: Access) -> Option<(u32, bool)> {
        let table = self.table.as_ref()?;
        let chain = table.slots.chain(slot);
        if access == Access::Read && self.config.read_from_replicas && chain.len() > 1 {
            let turn = self.turn;
            self.turn = self.turn.wrapping_add(1);
            Some((chain_replica(chain, turn), true))
        } else {
            Some((chain[0], false))
        }
    }

    /// Where a refresh asks for `CLUSTER SHARDS`, in order: every known node and startup
    /// node once, rotated on each refresh so that refreshes spread, the nodes that failed,
    /// stalled or timed out and have not answered since last (a paused primary is not
    /// asked first by a refresh that other commands' stalls share). The shell asks each in turn until
    /// [`refreshed`](ClusterSession::refreshed) accepts a reply.
    pub fn refresh_candidates(&mut self) -> Vec<Endpoint> {
        // Each endpoint once, found in a set: a table of 65,536 nodes costs n log n.
        let mut seen: BTreeSet<&Endpoint> = BTreeSet::new();
        let mut all: Vec<Endpoint> = Vec::new();
        let known = self.table.iter().flat_map(|table| table.endpoints.iter());
        for endpoint in known.chain(self.seeds.iter()) {
            if seen.insert(endpoint) {
                all.push(endpoint.clone());
            }
        }
        if !all.is_empty() {
            let turn = self.refresh_turn as usize % all.len();
            all.rotate_left(turn);
        }
        self.refresh_turn = self.refresh_turn.wrapping_add(1);
        let (mut healthy, failed): (Vec<_>, Vec<_>) = all.into_iter().partition(|e| !self.suspects.contains(e));
        healthy.extend(failed);
        healthy
    }

    /// A `CLUSTER SHARDS` reply (as JSON: objects or RESP2 flat arrays) from one of the
    /// [`refresh_candidates`](ClusterSession::refresh_candidates): installs its table
    /// (the next epoch) at `now_ms`.
    ///
    /// # Errors
    /// `invalid_argument` for a reply that does not make a whole table (empty, malformed,
    /// slots not covered once, a node address that is not `host:port`): the table in use
    /// is kept, and the shell asks the next candidate.
    pub fn refreshed(&mut self, reply: &Value, now_ms: u64) -> Result<()> {
        let installed = read_shards(reply).and_then(|import| {
            let base = match &self.table {
                Some(table) => table.router.topology().clone(),
                None => empty_topology(),
            };
            let next = Op::ImportRedisClusterShards(import).apply(&base)?.topology;
            Table::new(Router::new(next)?)
        });
        let answered = self.refreshing.take().map(|(endpoint, _, _)| endpoint);
        match installed {
            Ok(table) => {
                if let Some(answered) = answered {
                    self.suspects.remove(&answered);
                }
                // Only nodes of the new table or seeds stay suspects: the set stays bounded.
                let known: BTreeSet<&Endpoint> = table.endpoints.iter().chain(self.seeds.iter()).collect();
                self.suspects.retain(|endpoint| known.contains(endpoint));
                self.table = Some(table);
                self.endpoints_version = self.endpoints_version.wrapping_add(1);
                self.no_table_until_ms = None;
                self.no_table_backoff_ms = self.config.backoff_first_ms;
                self.stats.refreshes += 1;
                self.refresh_ended(now_ms);
                Ok(())
            }
            Err(error) => {
                self.stats.refused_replies += 1;
                Err(Error::argument(format!("CLUSTER SHARDS reply refused, the table kept: {}", error.message())))
            }
        }
    }

    /// No candidate gave a usable reply: the table (with the slots MOVED updated) is
    /// kept, and the next refresh waits for the refresh interval.
    pub fn refresh_failed(&mut self, now_ms: u64) {
        self.refreshing = None;
        self.stats.refresh_failures += 1;
        self.refresh_ended(now_ms);
        // Every candidate was asked and none answered: none is known better than another.
        self.suspects.clear();
        if self.table.is_none() {
            self.no_table_until_ms = Some(now_ms.saturating_add(self.no_table_backoff_ms));
            self.no_table_backoff_ms = self.no_table_backoff_ms.saturating_mul(2).min(self.config.backoff_max_ms);
        }
        // Still wanted, at the throttled pace.
        self.refresh_soon = true;
    }

    fn refresh_ended(&mut self, now_ms: u64) {
        self.refresh_running = false;
        self.last_refresh_ms = Some(now_ms);
        self.refresh_soon = false;
        self.refresh_now = false;
    }

    /// Keys grouped for a batch (a pipeline, or one `MGET` per slot): one group per
    /// target node, in node order, each with its slots in slot order and each slot's
    /// key indices in input order. A replica read takes one turn per group.
    ///
    /// # Errors
    /// `invalid_argument` before the first table; `limit_exceeded` for 2^32 keys or more.
    pub fn plan(&mut self, keys: &[Key<'_>], access: Access) -> Result<Vec<Group>> {
        let groups = self.plan_flat(keys, access)?;
        Ok(groups
            .into_iter()
            .map(|group| Group {
                target: group.target,
                slots: group
                    .slots
                    .iter()
                    .zip(group.starts.windows(2))
                    .map(|(&slot, run)| (slot, group.indices[run[0] as usize..run[1] as usize].to_vec()))
                    .collect(),
            })
            .collect())
    }

    /// [`plan`](ClusterSession::plan)'s groups, each flat ([`FlatGroup`]): the same
    /// targets, slots and indices in the same order, in three vectors a group in place of
    /// one per slot, for a shell that builds a batch's commands from them (a
    /// thousand keys over a thousand slots are three allocations a node, not a thousand).
    ///
    /// # Errors
    /// As [`plan`](ClusterSession::plan).
    pub fn plan_flat(&mut self, keys: &[Key<'_>], access: Access) -> Result<Vec<FlatGroup>> {
        let Some(table) = &self.table else {
            return Err(Error::argument("no table yet: poll a command first"));
        };
        if u32::try_from(keys.len()).is_err() {
            return Err(Error::limit(format!("a batch of {} keys; at most 2^32 - 1", keys.len())));
        }
        // (master, slot, key index): one sort gives the node order, then slot order, then input order.
        let mut keyed: Vec<(u32, u32, u32)> = keys
            .iter()
            .zip(0u32..)
            .map(|(key, index)| {
                let slot = key_slot(*key);
                (table.slots.chain(slot)[0], slot, index)
            })
            .collect();
        keyed.sort_unstable();
        let mut groups: Vec<FlatGroup> = Vec::new();
        let mut start = 0;
        while start < keyed.len() {
            let node = keyed[start].0;
            let end = start + keyed[start..].iter().take_while(|entry| entry.0 == node).count();
            let target = self.target(keyed[start].1, access).ok_or_else(|| Error::argument("no table yet"))?;
            let run = &keyed[start..end];
            let mut group = FlatGroup {
                target,
                indices: run.iter().map(|&(_, _, index)| index).collect(),
                slots: Vec::new(),
                starts: Vec::new(),
            };
            for (&(_, slot, _), at) in run.iter().zip(0u32..) {
                if group.slots.last() != Some(&slot) {
                    group.slots.push(slot);
                    group.starts.push(at);
                }
            }
            // At most 2^32 - 1 keys (checked above): the run's length is a u32.
            group.starts.push(u32::try_from(run.len()).unwrap_or(u32::MAX));
            groups.push(group);
            start = end;
        }
        Ok(groups)
    }

    /// The deadline of one node's pipeline of a batch ([`plan`](ClusterSession::plan))
    /// sent at `now_ms`: the whole pipeline is one request of the command timeout
    /// (`None` when that is 0). An entry with no reply by then fails as a `timeout`, and
    /// takes a command's path from that error ([`failed`](ClusterSession::failed)).
    pub fn batch_deadline(&self, now_ms: u64) -> Option<u64> {
        (self.config.command_timeout_ms > 0).then(|| now_ms.saturating_add(self.config.command_timeout_ms))
    }

    fn pipeline_limits(&self) -> Limits {
        if self.config.auto_pipeline {
            Limits {
                enabled: true,
                commands: self.config.pipeline_max_commands.max(1),
                writes: self.config.pipeline_max_writes.max(1),
            }
        } else {
            Limits { enabled: false, commands: 1, writes: u32::MAX }
        }
    }

    /// Auto-pipelining: one command joined the shell's queue of the connection to
    /// `address` (the `address` of the [`Action::Send`] it got, or of
    /// [`endpoints`](ClusterSession::endpoints)), a `READONLY` one when `readonly`. The
    /// answer says what the shell does with it:
    /// * [`PipelineQueued::Write`]: the connection was idle (nothing queued, no write in
    ///   flight, no flush scheduled): write this command now, alone, as one write (no
    ///   flush); it is counted as one write in flight, ended by
    ///   [`pipeline_done`](ClusterSession::pipeline_done) as any other. One command at a
    ///   time thus pays no event-loop turn of deferral.
    /// * [`PipelineQueued::Flush`]: queued; schedule one flush of that connection at the end
    ///   of the current event-loop turn (asyncio's `loop.call_soon`, Node's
    ///   `process.nextTick`), which calls [`pipeline_take`](ClusterSession::pipeline_take).
    /// * [`PipelineQueued::Wait`]: queued; a flush is already scheduled, or
    ///   [`ClusterConfig::pipeline_max_writes`] writes are in flight and the queue waits for
    ///   [`pipeline_done`](ClusterSession::pipeline_done).
    ///
    /// Nothing waits on a timer: a flush writes only what is already queued. The queue is
    /// the shell's (its commands, in order); the session counts. The command itself is a
    /// [`Command`] as usual: its attempt began at its [`Action::Send`], so the time it
    /// waits in the queue counts toward its deadlines, as a connection's handshake does.
    /// With [`ClusterConfig::auto_pipeline`] off, every command is its own write: this is
    /// always [`PipelineQueued::Flush`] and each flush takes one command (a shell may
    /// instead write at once, without a queue).
    ///
    /// Cost: a lookup among the connections with work (`log n`), and one small allocation
    /// when an idle connection's command arrives; never fails, never panics.
    ///
    /// # Example
    /// ```
    /// use shardroute::session::redis::PipelineQueued::{Flush, Wait, Write};
    /// use shardroute::session::{ClusterConfig, ClusterSession};
    /// let config = ClusterConfig { pipeline_max_writes: 2, ..ClusterConfig::default() };
    /// let mut session = ClusterSession::new(&["127.0.0.1:7000"], config)?;
    /// // Three commands in one turn: the first written at once, the other two in one flush.
    /// assert_eq!(session.pipeline_queued("127.0.0.1:7000", false), Write);
    /// assert_eq!(session.pipeline_queued("127.0.0.1:7000", false), Flush);
    /// assert_eq!(session.pipeline_queued("127.0.0.1:7000", false), Wait);
    /// assert_eq!(session.pipeline_take("127.0.0.1:7000", false), 2);
    /// assert_eq!(session.pipeline_take("127.0.0.1:7000", false), 0); // two writes in flight
    /// // Two more while they are out: they wait for a write's replies, then go together.
    /// assert_eq!(session.pipeline_queued("127.0.0.1:7000", false), Wait);
    /// assert_eq!(session.pipeline_queued("127.0.0.1:7000", false), Wait);
    /// assert_eq!(session.pipeline_done("127.0.0.1:7000", false), 2);
    /// assert_eq!(session.pipeline_done("127.0.0.1:7000", false), 0);
    /// assert_eq!(session.pipeline_done("127.0.0.1:7000", false), 0);
    /// // Idle again: the next command goes at once.
    /// assert_eq!(session.pipeline_queued("127.0.0.1:7000", false), Write);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn pipeline_queued(&mut self, address: &str, readonly: bool) -> PipelineQueued {
        let limits = self.pipeline_limits();
        self.pipelines.queued(address, readonly, limits)
    }

    /// Auto-pipelining, at the flush of the connection to `address` (`readonly`): how many
    /// of the queued commands, from the front, go in the next write; 0: none now (the
    /// queue is empty, or [`ClusterConfig::pipeline_max_writes`] writes are in flight).
    /// Each answer above 0 is one write, counted in flight until its
    /// [`pipeline_done`](ClusterSession::pipeline_done): call again until 0 (more than
    /// one write when more than [`ClusterConfig::pipeline_max_commands`] are queued and
    /// the write limit allows). Never fails.
    pub fn pipeline_take(&mut self, address: &str, readonly: bool) -> u32 {
        let limits = self.pipeline_limits();
        self.pipelines.take(address, readonly, limits)
    }

    /// Auto-pipelining: one write on the connection to `address` (`readonly`) ended: its
    /// replies are all read, or its connection failed or was closed (each command of it
    /// then has its own outcome: [`succeeded`](ClusterSession::succeeded),
    /// [`failed`](ClusterSession::failed), [`unreachable`](ClusterSession::unreachable)).
    /// The answer is the next write, as [`pipeline_take`](ClusterSession::pipeline_take)'s
    /// (how many queued commands to write now, from the front; 0: none, the queue is
    /// empty, a flush is scheduled and will write them, or the write limit still holds);
    /// at most one write. A call with no write in flight changes nothing but may start
    /// one. Never fails.
    pub fn pipeline_done(&mut self, address: &str, readonly: bool) -> u32 {
        let limits = self.pipeline_limits();
        self.pipelines.done(address, readonly, limits)
    }

    /// Auto-pipelining: `count` commands left the queue of the connection to `address`
    /// (`readonly`) before being written (abandoned, given up at their deadline, or sent
    /// elsewhere): they are no longer counted. More than are queued empties the count.
    pub fn pipeline_withdrawn(&mut self, address: &str, readonly: bool, count: u32) {
        self.pipelines.withdrawn(address, readonly, count);
    }

    /// Auto-pipelining's counts for the connection to `address` (`readonly`): the
    /// commands queued and not yet written, and the writes in flight; `(0, 0)` for a
    /// connection with no work.
    pub fn pipeline_pending(&self, address: &str, readonly: bool) -> (u32, u32) {
        self.pipelines.pending(address, readonly)
    }
}

/// One node's share of a batch ([`ClusterSession::plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Where the group goes.
    pub target: Target,
    /// `(slot, key indices)`, slots increasing, indices in input order.
    pub slots: Vec<(u32, Vec<u32>)>,
}

/// One node's share of a batch, flat ([`ClusterSession::plan_flat`]): slot `slots[i]`
/// has the key indices `indices[starts[i]..starts[i + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatGroup {
    /// Where the group goes.
    pub target: Target,
    /// The key indices, slot after slot (slots increasing), each slot's in input order.
    pub indices: Vec<u32>,
    /// The group's slots, increasing.
    pub slots: Vec<u32>,
    /// Where each slot's indices start in `indices`, and last `indices.len()`: one more
    /// than `slots`.
    pub starts: Vec<u32>,
}

fn delay(until_ms: u64, now_ms: u64) -> u32 {
    u32::try_from(until_ms.saturating_sub(now_ms)).unwrap_or(u32::MAX)
}

fn same_slot(keys: &[Key<'_>]) -> Result<u32> {
    let Some((first, rest)) = keys.split_first() else {
        return Err(Error::argument("a command needs at least one key"));
    };
    let slot = key_slot(*first);
    for (index, key) in rest.iter().enumerate() {
        let other = key_slot(*key);
        if other != slot {
            return Err(Error::new(
                ErrorKind::CrossSlot,
                format!("key {} is in slot {other}, key 0 in slot {slot}: the keys of one command must share a slot (use a hash tag)", index + 1),
            ));
        }
    }
    debug_assert!(slot < SLOTS);
    Ok(slot)
}

/// `router` without the nodes of `candidates` that no slot range names (a MOVED took
/// their last slot), its ranges renumbered; the same router when every candidate still
/// serves a range, or when the topology has anything else that names nodes by index.
///
/// The work is one pass over the ranges and the nodes, on a MOVED that rebuilds the
/// router anyway (a MOVED that leaves every node a slot edits the table in place and does
/// not come here); this keeps the node count at most the refreshed table's plus one node
/// per slot moved to a new address.
fn unserved_dropped(router: Router, candidates: &[u32]) -> Result<Router> {
    let Strategy::RedisCluster(spec) = router.strategy() else {
        return Ok(router);
    };
    let topology = router.topology();
    if topology.placement.is_some()
        || topology.hot_keys.is_some()
        || !topology.indexes.is_empty()
        || topology.tables.is_some()
    {
        return Ok(router);
    }
    let count = topology.nodes.len();
    let ranges = spec.ranges(count as u32);
    let mut serves = alloc::vec![false; count];
    for range in &ranges {
        for &node in &range.nodes {
            if let Some(flag) = serves.get_mut(node as usize) {
                *flag = true;
            }
        }
    }
    let gone: BTreeSet<u32> =
        candidates.iter().copied().filter(|&node| (node as usize) < count && !serves[node as usize]).collect();
    if gone.is_empty() || gone.len() >= count {
        return Ok(router);
    }
    // Old index -> new index (u32::MAX for a node that leaves).
    let mut renumber = alloc::vec![u32::MAX; count];
    let mut next_index = 0u32;
    for (old, slot) in renumber.iter_mut().enumerate() {
        if !gone.contains(&(old as u32)) {
            *slot = next_index;
            next_index += 1;
        }
    }
    let mut next = topology.clone();
    next.nodes = topology
        .nodes
        .iter()
        .enumerate()
        .filter(|(old, _)| !gone.contains(&(*old as u32)))
        .map(|(_, node)| node.clone())
        .collect();
    let ranges = ranges
        .into_iter()
        .map(|range| SlotRange { nodes: range.nodes.iter().map(|&node| renumber[node as usize]).collect(), ..range })
        .collect();
    next.strategy = RedisClusterSpec { slots: Some(ranges) }.into_strategy()?;
    next.check()?;
    Router::new(next)
}

/// The topology a first import replaces: only its epoch (0) carries over.
fn empty_topology() -> Topology {
    Topology {
        epoch: 0,
        hashing: crate::hashing::KeyHashing::default(),
        nodes: alloc::vec![crate::node::Node::new("none")],
        strategy: Strategy::RedisCluster(crate::strategy::compat::redis_cluster::RedisClusterSpec { slots: None }),
        placement: None,
        hot_keys: None,
        indexes: alloc::vec::Vec::new(),
        tables: None,
        checksummed: false,
    }
}

#[cfg(test)]
mod tests {
    //! A `MOVED` edits the table in place: the same router, node for node and range for
    //! range, as the rebuild it replaces (`Router::moved_rebuilt`, then `unserved_dropped`),
    //! and the same storage.

    use super::*;
    use proptest::prelude::{any, prop, prop_assert_eq, prop_oneof, proptest, ProptestConfig};
    use proptest::strategy::Strategy as _;
    use serde_json::json;

    /// A `CLUSTER SHARDS` reply: three masters on 7000-7002 with a replica each on
    /// 7003-7005, `shift` moving the boundaries.
    fn shards(shift: u32) -> Value {
        let node = |port: u32, role: &str| {
            json!({"id": format!("{port:040}"), "endpoint": "127.0.0.1", "ip": "127.0.0.1", "port": port,
                   "role": role, "health": "online", "replication-offset": 0})
        };
        let bounds = [0, 5461 + shift, 10923 + shift, 16384];
        Value::Array(
            (0..3)
                .map(|i| {
                    json!({"slots": [bounds[i], bounds[i + 1] - 1],
                           "nodes": [node(7000 + i as u32, "master"), node(7003 + i as u32, "replica")]})
                })
                .collect(),
        )
    }

    fn session(shift: u32) -> ClusterSession {
        let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
        session.refreshed(&shards(shift), 0).unwrap();
        session
    }

    /// The session's `follow_moved` before the in-place edit: a rebuilt router.
    fn rebuilt(router: &Router, slot: u32, endpoint: &Endpoint) -> Router {
        let table =
            SlotTable::new(router.strategy().spec::<RedisClusterSpec>().unwrap().ranges(router.nodes().len() as u32));
        let owner = table.chain(slot)[0] as usize;
        let endpoints: Vec<Endpoint> = router
            .nodes()
            .iter()
            .map(|node| Endpoint::parse_with_host(node.address.as_deref().unwrap_or(&node.id)).unwrap())
            .collect();
        if endpoints.get(owner) == Some(endpoint) {
            return router.clone();
        }
        let spec = router.strategy().spec::<RedisClusterSpec>().unwrap();
        router
            .moved_rebuilt(spec, slot, &endpoint.address())
            .and_then(|next| unserved_dropped(next, table.chain(slot)))
            .unwrap_or_else(|_| router.clone())
    }

    /// Every slot's chain, in the router's compiled table and in `slots`, is the one a
    /// router compiled from `expected`'s topology gives.
    fn same_tables(router: &Router, slots: &SlotTable, expected: &Router) {
        let fresh = Router::new(expected.topology().clone()).unwrap();
        let (ours, theirs) = (router.slot_table().unwrap(), fresh.slot_table().unwrap());
        for slot in 0..SLOTS {
            assert_eq!(ours.chain(slot), theirs.chain(slot), "slot {slot}");
            assert_eq!(slots.chain(slot), theirs.chain(slot), "slot {slot}");
        }
        assert_eq!(router.max_replica_count(), fresh.max_replica_count());
    }

    /// Slots near the boundaries (where ranges join and split) or anywhere.
    fn slot() -> impl proptest::strategy::Strategy<Value = u32> {
        prop_oneof![
            (0u32..12)
                .prop_map(|near| [0, 1, 5460, 5461, 5462, 10922, 10923, 10924, 16382, 16383, 2, 3][near as usize]),
            0u32..SLOTS,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// MOVEDs to masters, replicas and new addresses, runs of neighbouring slots among
        /// them: the session's router equals the rebuilt one after each, its tables agree
        /// slot for slot, and its endpoints are its nodes'.
        #[test]
        fn moved_in_place_is_the_rebuild(
            shift in 0u32..50,
            moves in prop::collection::vec((slot(), 7000u32..7009, 0u32..4), 1..40),
        ) {
            let mut session = session(shift);
            let mut expected = session.router().unwrap().clone();
            for (slot, port, run) in moves {
                let endpoint = Endpoint::parse(&format!("127.0.0.1:{port}")).unwrap();
                for slot in slot..(slot + run).min(SLOTS) {
                    expected = rebuilt(&expected, slot, &endpoint);
                    session.follow_moved(slot, &endpoint);
                    let table = session.table.as_ref().unwrap();
                    prop_assert_eq!(table.router.topology(), expected.topology());
                    prop_assert_eq!(table.slots.chain(slot), table.router.slot_table().unwrap().chain(slot));
                }
            }
            let table = session.table.as_ref().unwrap();
            same_tables(&table.router, &table.slots, &expected);
            let endpoints: Vec<String> = table.endpoints.iter().map(Endpoint::address).collect();
            let addresses: Vec<String> = table.router.nodes().iter().map(|node| node.address.clone().unwrap()).collect();
            prop_assert_eq!(endpoints, addresses);
        }

        /// `Router::moved` edits a copy in place: the router `moved_rebuilt` gives, also from
        /// a table whose neighbouring ranges share a chain (which the rebuild joins).
        #[test]
        fn router_moved_is_the_rebuild(
            joined in any::<bool>(),
            moves in prop::collection::vec((slot(), 0u32..5), 1..30),
        ) {
            let split = if joined { "" } else { r#"{"start": 0, "end": 99, "nodes": ["a"]}, {"start": 100, "end": 5460, "nodes": ["a"]},"# };
            let first = if joined { r#"{"start": 0, "end": 5460, "nodes": ["a"]},"# } else { "" };
            let mut router = Router::from_json(&format!(r#"{{"format": "shardroute/1", "epoch": 1,
                "nodes": [{{"id": "a", "address": "10.0.0.1:6379"}}, {{"id": "b", "address": "10.0.0.2:6379"}},
                          {{"id": "c", "address": "10.0.0.3:6379"}}, {{"id": "10.0.0.4:6379"}}],
                "strategy": {{"type": "redis_cluster", "slots": [{first}{split}
                    {{"start": 5461, "end": 10922, "nodes": ["b", "c"]}},
                    {{"start": 10923, "end": 16383, "nodes": ["c", "b"]}}]}}}}"#)).unwrap();
            for (slot, node) in moves {
                let address = format!("10.0.0.{}:6379", node + 1);
                let spec = router.strategy().spec::<RedisClusterSpec>().unwrap();
                let expected = router.moved_rebuilt(spec, slot, &address).unwrap();
                router = router.moved(slot, &address).unwrap();
                prop_assert_eq!(router.topology(), expected.topology());
                prop_assert_eq!(router.max_replica_count(), expected.max_replica_count());
                let fresh = Router::new(expected.topology().clone()).unwrap();
                prop_assert_eq!(router.slot_table().unwrap().chain(slot), fresh.slot_table().unwrap().chain(slot));
            }
            let expected = Router::new(router.topology().clone()).unwrap();
            let slots = SlotTable::new(router.strategy().spec::<RedisClusterSpec>().unwrap().ranges(router.nodes().len() as u32));
            same_tables(&router, &slots, &expected);
        }
    }

    /// A MOVED's refresh is handed to the next command; once it runs it holds no command
    /// whose slot is known (that one, polled again, included), until it ends; a refresh
    /// asked for at once (a lost connection) still holds commands while it runs.
    #[test]
    fn a_running_refresh_after_moved_holds_no_command() {
        let mut session = session(0);
        let keys: [Key<'_>; 1] = ["user:1".into()];
        let mut first = session.command(&keys, Access::Write, 0).unwrap();
        assert!(matches!(session.poll(&mut first, 0), Action::Send(_)));
        let Action::Send(target) = session.failed(&mut first, "MOVED 10778 127.0.0.1:7001", &["ReplyError"], 300)
        else {
            panic!("a MOVED is resent at once")
        };
        assert_eq!(target.endpoint.port(), 7001);
        // The next command is handed the refresh (the interval has passed) ...
        let mut next = session.command(&keys, Access::Write, 300).unwrap();
        assert_eq!(session.poll(&mut next, 300), Action::Refresh);
        assert_eq!(session.send_now_timed(&keys, Access::Write, 300).unwrap(), None);
        // ... and once it runs, it is sent by the table in use, as is every other command.
        session.refresh_sent("127.0.0.1:7002", 300).unwrap();
        assert!(matches!(session.poll(&mut next, 300), Action::Send(_)));
        assert!(session.send_now_timed(&keys, Access::Read, 301).unwrap().is_some());
        assert!(!session.wants_refresh(301));
        // Refused replies do not end it; a table does.
        assert!(session.refreshed(&json!([]), 302).is_err());
        assert!(session.send_now_timed(&keys, Access::Read, 302).unwrap().is_some());
        session.refreshed(&shards(0), 303).unwrap();
        assert_eq!(session.stats().refreshes, 2);
        // A refresh that failed is wanted again at the throttled pace, and held by none once it runs.
        let mut moved = session.command(&keys, Access::Write, 600).unwrap();
        assert!(matches!(session.poll(&mut moved, 600), Action::Send(_)));
        let _ = session.failed(&mut moved, "MOVED 10778 127.0.0.1:7001", &["ReplyError"], 600);
        session.refresh_sent("127.0.0.1:7000", 600).unwrap();
        session.refresh_failed(601);
        assert!(session.send_now_timed(&keys, Access::Write, 700).unwrap().is_some(), "within the interval");
        assert_eq!(session.send_now_timed(&keys, Access::Write, 801).unwrap(), None, "due again");
        // A lost connection asks for a refresh at once: it holds commands while it runs.
        let mut lost = session.command(&keys, Access::Write, 900).unwrap();
        assert!(matches!(session.poll(&mut lost, 900), Action::Refresh));
        session.refresh_sent("127.0.0.1:7000", 900).unwrap();
        session.refreshed(&shards(0), 901).unwrap();
        assert!(matches!(session.poll(&mut lost, 901), Action::Send(_)));
        let _ = session.unreachable(&mut lost, Transport::Reset, 902);
        session.refresh_sent("127.0.0.1:7000", 903).unwrap();
        assert_eq!(session.send_now_timed(&keys, Access::Write, 903).unwrap(), None);
        let mut held = session.command(&keys, Access::Write, 903).unwrap();
        assert_eq!(session.poll(&mut held, 903), Action::Refresh);
    }

    /// A MOVED to a node of the table writes the slot's entry: the router's nodes, the
    /// session's endpoints and both slot tables keep their storage (a rebuild, the old way,
    /// allocated all of them anew while the old table was still alive), and the epoch is
    /// the next one.
    #[test]
    fn moved_to_a_known_node_keeps_the_tables_storage() {
        let mut session = session(0);
        let before = session.table.as_ref().unwrap();
        let storage = |table: &Table| {
            (
                table.router.nodes().as_ptr(),
                table.endpoints.as_ptr(),
                table.router.slot_table().unwrap().chain(0).as_ptr(),
                table.slots.chain(0).as_ptr(),
            )
        };
        let (kept, epoch, version) = (storage(before), before.router.epoch(), session.endpoints_version());
        // Slot 100 (of 7000) to 7001, then slot 101 after it: one range grows.
        for (slot, round) in [(100u32, 1u64), (101, 2), (100, 3)] {
            let port = if round == 3 { 7000 } else { 7001 };
            session.follow_moved(slot, &Endpoint::parse(&format!("127.0.0.1:{port}")).unwrap());
            let table = session.table.as_ref().unwrap();
            assert_eq!(storage(table), kept, "round {round}");
            assert_eq!(table.router.epoch(), epoch + round);
            assert_eq!(table.endpoints[table.slots.chain(slot)[0] as usize].port(), port as u16);
            assert_eq!(session.endpoints_version(), version, "the nodes stay");
        }
        // A MOVED to a new address adds a node: the endpoints change, and say so.
        session.follow_moved(100, &Endpoint::parse("127.0.0.1:7042").unwrap());
        assert_eq!(session.endpoints().len(), 7);
        assert_ne!(session.endpoints_version(), version);
        // A MOVED that takes a node's last slot rebuilds: the node leaves the table.
        let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
        let lone = json!([{"slots": [0, 0], "nodes": [{"id": "x", "endpoint": "127.0.0.1", "port": 7009, "role": "master"}]},
                          {"slots": [1, 16383], "nodes": [{"id": "y", "endpoint": "127.0.0.1", "port": 7000, "role": "master"}]}]);
        session.refreshed(&lone, 0).unwrap();
        session.follow_moved(0, &Endpoint::parse("127.0.0.1:7000").unwrap());
        assert_eq!(session.endpoints().len(), 1);
    }
}
