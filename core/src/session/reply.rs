//! What a Redis Cluster node's answer means: the one classification table.
//!
//! A shell hands the session every failed attempt as it got it: the error's text and,
//! where its client library has them, the names of the error's class and its bases
//! (Python: the exception's MRO) or its error code (Node: `err.code`, `err.name`).
//! [`classify`] turns that into an [`Outcome`], and [`Outcome::rule`] says what a client
//! does with it. Nothing else anywhere decides which error is a redirect, which is
//! retried, or which means the table is stale.
//!
//! | reply | outcome | what the session does |
//! |---|---|---|
//! | `MOVED <slot> <host:port>` | [`Outcome::Moved`] | the slot has a new master: update that slot at once, retry there, refresh the table soon (throttled) |
//! | `ASK <slot> <host:port>` | [`Outcome::Ask`] | this command only: resend to that node after `ASKING`; nothing changes |
//! | `TRYAGAIN` | [`Outcome::Busy`] | a multi-key command during a slot migration: back off, retry |
//! | `CLUSTERDOWN`, `MASTERDOWN`, `LOADING` | [`Outcome::Busy`] | the cluster is electing or a node is loading: back off, refresh, retry |
//! | `READONLY` (a write to a replica), `UNBLOCKED` (a blocked `WAIT` whose node turned replica) | [`Outcome::Demoted`] | the node is no longer the master: refresh now, back off, retry |
//! | connection refused, reset, timed out | [`Outcome::Transport`] | the node may be down: refresh now (it is tried last), back off, retry (after a timeout, no backoff: the attempt has waited already) |
//! | `MOVED` or `ASK` (the word, or a library's redirect class) whose text is not `<slot> <host:port>` | [`Outcome::Unreadable`] | the command fails with the text's refusal (`invalid_argument`), never a library's parse error |
//! | anything else | [`Outcome::Application`] | the command's own answer: the shell raises it as its library does |
//!
//! Client libraries wrap these texts. redis-py keeps only `<slot> <host:port>` in a
//! `MovedError`/`AskError`, and prefixes errors inside a pipeline with `Command # 1 (SET
//! k v) of pipeline caused error: `; so the class names are read too ([`CLASS_TABLE`]),
//! and a known wrapper prefix is looked through ([`WRAPPERS`]); `redis.asyncio` writes the
//! wrapped error as a Python tuple, `('<slot> <host:port>',)`, which is looked through too. ioredis reports a lost
//! connection or a command timeout as a plain `Error` with a fixed text ([`TEXT_TABLE`]).
//!
//! Sources: the Redis Cluster specification (redirection and resharding, failover), the
//! error replies of Redis 7 (`cluster.c`, `replication.c`: `-UNBLOCKED force unblock from
//! blocking operation, instance state changed (master -> replica?)`), redis-py 8's
//! exception classes and ioredis 5's error codes.

use crate::error::Error;
use crate::strategy::compat::redis_cluster::redirect::{Redirect, RedirectKind};

/// Why a node could not be reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Connection refused: nothing listens there (a killed node).
    Refused,
    /// The connection was reset or closed mid-command.
    Reset,
    /// No answer in time (a paused or partitioned node).
    Timeout,
}

impl Transport {
    /// `"refused"`, `"reset"` or `"timeout"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Transport::Refused => "refused",
            Transport::Reset => "reset",
            Transport::Timeout => "timeout",
        }
    }

    /// The transport failure named `name` (as [`as_str`](Transport::as_str) writes it).
    pub fn from_name(name: &str) -> Option<Transport> {
        match name {
            "refused" => Some(Transport::Refused),
            "reset" => Some(Transport::Reset),
            "timeout" => Some(Transport::Timeout),
            _ => None,
        }
    }
}

/// A busy or electing cluster, by the error's first word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Busy {
    /// `TRYAGAIN`: a multi-key command whose keys are split by a migration.
    TryAgain,
    /// `CLUSTERDOWN`: the cluster (or this slot) is not served.
    ClusterDown,
    /// `MASTERDOWN`: a replica whose link to its master is down.
    MasterDown,
    /// `LOADING`: the node is loading its data set.
    Loading,
}

/// A node that answered as a master no longer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Demoted {
    /// `READONLY`: a write reached a replica.
    ReadOnly,
    /// `UNBLOCKED`: a blocked command (`WAIT`) was released because the node turned replica.
    Unblocked,
}

/// What one failed attempt means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `MOVED`: the slot has a new master. The address may have an empty host.
    Moved(Redirect),
    /// `ASK`: this command, once, to the migration's target.
    Ask(Redirect),
    /// Retried after a backoff.
    Busy(Busy),
    /// The node is no longer the slot's master.
    Demoted(Demoted),
    /// The node could not be reached.
    Transport(Transport),
    /// A `MOVED` or `ASK` whose text is not a redirect: [`Redirect::parse`]'s refusal of
    /// it (`invalid_argument`), which the command fails with. A shell never reads a
    /// redirect's text itself.
    Unreadable(Error),
    /// The command's own error: not the session's business.
    Application,
}

/// What a client does with an [`Outcome`] (one row of the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Retry the command after a backoff (within the retry budget).
    pub backoff: bool,
    /// Refresh the table before the retry, whatever the refresh interval says.
    pub refresh_now: bool,
    /// Refresh the table soon: at most once per refresh interval.
    pub refresh_soon: bool,
}

impl Outcome {
    /// The stable name of this outcome, as the session's counters and the vectors write
    /// it: `moved`, `ask`, `try_again`, `cluster_down`, `master_down`, `loading`,
    /// `read_only`, `unblocked`, `refused`, `reset`, `timeout`, `unreadable_redirect`,
    /// `application`.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Moved(_) => "moved",
            Outcome::Ask(_) => "ask",
            Outcome::Busy(Busy::TryAgain) => "try_again",
            Outcome::Busy(Busy::ClusterDown) => "cluster_down",
            Outcome::Busy(Busy::MasterDown) => "master_down",
            Outcome::Busy(Busy::Loading) => "loading",
            Outcome::Demoted(Demoted::ReadOnly) => "read_only",
            Outcome::Demoted(Demoted::Unblocked) => "unblocked",
            Outcome::Transport(transport) => transport.as_str(),
            Outcome::Unreadable(_) => "unreadable_redirect",
            Outcome::Application => "application",
        }
    }

    /// What a client does with this outcome.
    pub fn rule(&self) -> Rule {
        let (backoff, refresh_now, refresh_soon) = match self {
            Outcome::Moved(_) => (false, false, true),
            Outcome::Ask(_) | Outcome::Unreadable(_) | Outcome::Application => (false, false, false),
            Outcome::Busy(Busy::TryAgain) => (true, false, false),
            Outcome::Busy(_) => (true, false, true),
            Outcome::Demoted(_) | Outcome::Transport(_) => (true, true, false),
        };
        Rule { backoff, refresh_now, refresh_soon }
    }
}

/// Error words (the first word of a Redis error reply) and what they mean, redirects
/// aside (`MOVED` and `ASK` carry a slot and an address, read by [`Redirect::parse`]).
pub const WORD_TABLE: &[(&str, Outcome)] = &[
    ("TRYAGAIN", Outcome::Busy(Busy::TryAgain)),
    ("CLUSTERDOWN", Outcome::Busy(Busy::ClusterDown)),
    ("MASTERDOWN", Outcome::Busy(Busy::MasterDown)),
    ("LOADING", Outcome::Busy(Busy::Loading)),
    ("READONLY", Outcome::Demoted(Demoted::ReadOnly)),
    ("UNBLOCKED", Outcome::Demoted(Demoted::Unblocked)),
];

/// What a class name or error code says when the text alone does not. Redirect classes
/// map to the redirect's word, which is put back before the text is read.
pub enum ClassMeaning {
    /// The text is `<slot> <host:port>` of a redirect of this kind.
    Redirect(RedirectKind),
    /// This outcome, whatever the text.
    Is(Outcome),
}

/// Client libraries' error classes and codes, checked in the order the shell lists the
/// names (the most derived class first), after the text: redis-py's exception classes,
/// and the errno codes Node's sockets (ioredis) report.
pub const CLASS_TABLE: &[(&str, ClassMeaning)] = &[
    // redis-py (redis.exceptions): the redirect classes keep only "<slot> <host:port>".
    ("MovedError", ClassMeaning::Redirect(RedirectKind::Moved)),
    ("AskError", ClassMeaning::Redirect(RedirectKind::Ask)),
    ("TryAgainError", ClassMeaning::Is(Outcome::Busy(Busy::TryAgain))),
    ("MasterDownError", ClassMeaning::Is(Outcome::Busy(Busy::MasterDown))),
    ("ClusterDownError", ClassMeaning::Is(Outcome::Busy(Busy::ClusterDown))),
    ("BusyLoadingError", ClassMeaning::Is(Outcome::Busy(Busy::Loading))),
    ("ReadOnlyError", ClassMeaning::Is(Outcome::Demoted(Demoted::ReadOnly))),
    ("TimeoutError", ClassMeaning::Is(Outcome::Transport(Transport::Timeout))),
    ("ConnectionRefusedError", ClassMeaning::Is(Outcome::Transport(Transport::Refused))),
    // redis-py wraps socket errors in redis.ConnectionError; asyncio's are OSError.
    ("ConnectionError", ClassMeaning::Is(Outcome::Transport(Transport::Reset))),
    // Node.js socket errors (err.code) as ioredis passes them on.
    ("ECONNREFUSED", ClassMeaning::Is(Outcome::Transport(Transport::Refused))),
    ("ECONNRESET", ClassMeaning::Is(Outcome::Transport(Transport::Reset))),
    ("EPIPE", ClassMeaning::Is(Outcome::Transport(Transport::Reset))),
    ("ETIMEDOUT", ClassMeaning::Is(Outcome::Transport(Transport::Timeout))),
    ("EHOSTUNREACH", ClassMeaning::Is(Outcome::Transport(Transport::Timeout))),
];

/// Connection failures that a client library reports by their text alone (ioredis
/// rejects with a plain `Error`), matched at the start of the text.
pub const TEXT_TABLE: &[(&str, Outcome)] = &[
    // ioredis: `commandTimeout` elapsed; the socket closed; a write with no connection.
    ("Command timed out", Outcome::Transport(Transport::Timeout)),
    ("Connection is closed", Outcome::Transport(Transport::Reset)),
    ("Stream isn't writeable", Outcome::Transport(Transport::Reset)),
    // ioredis (an `AbortError`): the command was sent, and its connection closed before
    // the reply (a primary killed in a failover).
    ("Command aborted due to connection close", Outcome::Transport(Transport::Reset)),
    // ioredis with `maxRetriesPerRequest: 0` (as shardroute/redis connects): a command
    // queued while its connection was being re-established.
    ("Reached the max retries per request limit", Outcome::Transport(Transport::Reset)),
];

/// Text that client libraries put before a node's error; the error follows it.
pub const WRAPPERS: &[&str] = &[
    // redis-py, an error inside a pipeline or transaction.
    " of pipeline caused error: ",
];

/// What the failed attempt `text` (with its library's class names or error codes,
/// most derived first) means. Never fails: what is not recognised is
/// [`Outcome::Application`].
///
/// # Example
/// ```
/// use shardroute::session::{classify, Outcome, Busy};
/// let moved = classify("MOVED 3999 127.0.0.1:6381", &[]);
/// assert!(matches!(moved, Outcome::Moved(ref r) if r.slot == 3999));
/// // redis-py inside a pipeline: the class says MOVED, the text lost the word.
/// let wrapped = classify("Command # 1 (SET k v) of pipeline caused error: 3999 127.0.0.1:6381", &["MovedError", "ResponseError"]);
/// assert_eq!(wrapped, moved);
/// assert_eq!(classify("TRYAGAIN Multiple keys request during rehashing of slot", &[]), Outcome::Busy(Busy::TryAgain));
/// assert_eq!(classify("WRONGTYPE Operation against a key holding the wrong kind of value", &[]), Outcome::Application);
/// ```
pub fn classify(text: &str, names: &[&str]) -> Outcome {
    let mut body = text.trim();
    for wrapper in WRAPPERS {
        if let Some((_, after)) = body.split_once(wrapper) {
            body = after.trim();
        }
    }
    // redis.asyncio writes the wrapped error's `args` tuple: `('MOVED 1 h:1',)`.
    for (open, close) in [("('", "',)"), ("(\"", "\",)")] {
        if let Some(inner) = body.strip_prefix(open).and_then(|rest| rest.strip_suffix(close)) {
            body = inner.trim();
        }
    }
    let body = body.strip_prefix('-').unwrap_or(body);
    let word = body.split(' ').next().unwrap_or("");
    if word == "MOVED" || word == "ASK" {
        return Redirect::parse(body).map_or_else(Outcome::Unreadable, redirect_outcome);
    }
    if let Some((_, outcome)) = WORD_TABLE.iter().find(|(known, _)| *known == word) {
        return outcome.clone();
    }
    if let Some((_, outcome)) = TEXT_TABLE.iter().find(|(known, _)| body.starts_with(known)) {
        return outcome.clone();
    }
    for name in names {
        match CLASS_TABLE.iter().find(|(known, _)| known == name).map(|(_, meaning)| meaning) {
            Some(ClassMeaning::Redirect(kind)) => {
                let line = alloc::format!("{} {body}", kind.as_str());
                return Redirect::parse(&line).map_or_else(Outcome::Unreadable, redirect_outcome);
            }
            Some(ClassMeaning::Is(outcome)) => return outcome.clone(),
            None => {}
        }
    }
    Outcome::Application
}

fn redirect_outcome(redirect: Redirect) -> Outcome {
    match redirect.kind {
        RedirectKind::Moved => Outcome::Moved(redirect),
        RedirectKind::Ask => Outcome::Ask(redirect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_classes_and_wrappers() {
        let moved = classify("-MOVED 1 :7001", &[]);
        assert!(matches!(moved, Outcome::Moved(ref r) if r.address == ":7001"));
        assert_eq!(classify("Command # 3 (SET a b) of pipeline caused error: MOVED 1 :7001", &[]), moved);
        assert_eq!(classify("1 :7001", &["MovedError"]), moved);
        assert_eq!(classify("Command # 1 (SET a b) of pipeline caused error: ('1 :7001',)", &["MovedError"]), moved);
        assert!(matches!(classify("2 10.0.0.1:7000", &["AskError", "ResponseError"]), Outcome::Ask(_)));
        assert_eq!(
            classify(
                "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
                &["ResponseError"]
            ),
            Outcome::Demoted(Demoted::Unblocked)
        );
        assert_eq!(
            classify("You can't write against a read only replica.", &["ReadOnlyError", "ResponseError"]),
            Outcome::Demoted(Demoted::ReadOnly)
        );
        assert_eq!(
            classify("Loading the dataset in memory", &["BusyLoadingError", "ConnectionError"]),
            Outcome::Busy(Busy::Loading)
        );
        assert_eq!(
            classify("Error 111 connecting to 127.0.0.1:7000. Connection refused.", &["ConnectionError", "RedisError"]),
            Outcome::Transport(Transport::Reset)
        );
        assert_eq!(
            classify("connect ECONNREFUSED 127.0.0.1:7000", &["ECONNREFUSED", "Error"]),
            Outcome::Transport(Transport::Refused)
        );
        assert_eq!(classify("Command timed out", &["TimeoutError"]), Outcome::Transport(Transport::Timeout));
        assert_eq!(classify("Command timed out", &["Error"]), Outcome::Transport(Transport::Timeout));
        assert_eq!(classify("Connection is closed.", &["Error"]), Outcome::Transport(Transport::Reset));
        // A MOVED word without a valid slot is refused, as is a redirect class with a bad
        // text: with the words Redirect::parse refuses the line with.
        let refused = |line: &str| Outcome::Unreadable(Redirect::parse(line).unwrap_err());
        assert_eq!(classify("MOVED 99999 h:1", &[]), refused("MOVED 99999 h:1"));
        assert_eq!(classify("nonsense", &["MovedError"]), refused("MOVED nonsense"));
        assert_eq!(classify("1 nohost", &["AskError"]), refused("ASK 1 nohost"));
        assert!(
            matches!(classify("MOVED 99999 h:1", &[]), Outcome::Unreadable(ref e) if e.code() == "invalid_argument")
        );
        assert_eq!(classify("MOVEDX 1 h:1", &[]), Outcome::Application);
        assert_eq!(classify("", &[]), Outcome::Application);
    }

    #[test]
    fn every_outcome_has_a_rule_and_a_distinct_name() {
        let mut names: alloc::vec::Vec<&str> = WORD_TABLE.iter().map(|(_, outcome)| outcome.name()).collect();
        names.extend(["refused", "reset", "timeout"]);
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert!(Outcome::Transport(Transport::Timeout).rule().refresh_now);
        assert!(!Outcome::Busy(Busy::TryAgain).rule().refresh_soon);
    }
}
