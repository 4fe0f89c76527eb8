//! The topology follower: what a client does with the topology documents a source (etcd,
//! ZooKeeper, an HTTP endpoint) hands it, decided once, for every language.
//!
//! A shell watches its source and hands the follower each value it sees, as JSON text
//! ([`Follower::offer`]) or as a binary dictionary ([`Follower::offer_dictionary`]), with
//! the source's revision (etcd's `mod_revision`, ZooKeeper's `mzxid`, a counter for HTTP)
//! and the time. The follower:
//!
//! * installs a document whose epoch is newer than the one it holds
//!   ([`Offered::Installed`]); the same document again changes nothing
//!   ([`Offered::Unchanged`]);
//! * refuses, with the error a [`Router`] gives, a document that is not valid
//!   (`invalid_topology`, `limit_exceeded`, `no_nodes`), one with a lower epoch or the same
//!   epoch with other content (`stale_epoch`), and a revision older than the one it
//!   installed (`stale_epoch`: a source replaying old events) — and keeps the last good
//!   router, counting every refusal by its code ([`FollowerStats`]);
//! * says when to reconnect after the source is lost ([`Follower::disconnected`]:
//!   [`FollowerConfig::reconnect_first_ms`] doubling to
//!   [`FollowerConfig::reconnect_max_ms`], reset by [`Follower::connected`]);
//! * builds a publisher's compare-and-swap write ([`Follower::publish`]): the next
//!   document must be one the follower would install, with exactly the held epoch + 1, and
//!   the write expects the held revision.
//!
//! Time and revisions are inputs; no clock is read and no socket opened. The scenarios of
//! `conformance/vectors/session_follower.json` are the contract.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::router::Router;

/// The follower's defaults (each a field of [`FollowerConfig`]).
pub mod defaults {
    /// The first wait before reconnecting to a lost source.
    pub const RECONNECT_FIRST_MS: u64 = 100;
    /// The longest wait before reconnecting (each one doubles up to it).
    pub const RECONNECT_MAX_MS: u64 = 5_000;
}

/// A follower's settings; [`FollowerConfig::default`] is [`defaults`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowerConfig {
    /// The first wait before reconnecting.
    pub reconnect_first_ms: u64,
    /// The longest wait before reconnecting.
    pub reconnect_max_ms: u64,
}

impl Default for FollowerConfig {
    fn default() -> FollowerConfig {
        FollowerConfig {
            reconnect_first_ms: defaults::RECONNECT_FIRST_MS,
            reconnect_max_ms: defaults::RECONNECT_MAX_MS,
        }
    }
}

impl FollowerConfig {
    /// The defaults with the fields of `object` in their place.
    ///
    /// # Errors
    /// `invalid_argument` for an unknown field, a value that is not an integer in
    /// `0..=2^53`, a zero first wait, or a longest wait below the first.
    pub fn from_value(object: &Value) -> Result<FollowerConfig> {
        let Value::Object(fields) = object else {
            return Err(Error::argument("config: expected an object"));
        };
        let mut config = FollowerConfig::default();
        for (name, value) in fields {
            let ms = value.as_u64().filter(|&ms| ms <= 1 << 53).ok_or_else(|| {
                Error::argument(format!("config.{name}: expected milliseconds, an integer in 0..=2^53"))
            });
            match name.as_str() {
                "reconnect_first_ms" => config.reconnect_first_ms = ms?,
                "reconnect_max_ms" => config.reconnect_max_ms = ms?,
                other => {
                    return Err(Error::argument(format!(
                        "config: unknown field {other:?} (reconnect_first_ms, reconnect_max_ms)"
                    )))
                }
            }
        }
        if config.reconnect_first_ms == 0 || config.reconnect_max_ms < config.reconnect_first_ms {
            return Err(Error::argument("config: reconnect_first_ms must be at least 1 and at most reconnect_max_ms"));
        }
        Ok(config)
    }

    /// This config as a JSON object (every field).
    pub fn to_value(&self) -> Value {
        serde_json::json!({"reconnect_first_ms": self.reconnect_first_ms, "reconnect_max_ms": self.reconnect_max_ms})
    }
}

/// What became of an offered document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offered {
    /// It is the follower's router now.
    Installed {
        /// Its epoch.
        epoch: u64,
    },
    /// The document the follower holds, again.
    Unchanged,
    /// Refused; the follower keeps the router it had.
    Refused(Error),
}

impl Offered {
    /// As the vectors write it: `{"installed": {"epoch": "N"}}`, `{"unchanged": {}}` or
    /// `{"refused": {"code"}}` (the epoch a decimal string, a u64).
    pub fn to_value(&self) -> Value {
        match self {
            Offered::Installed { epoch } => serde_json::json!({"installed": {"epoch": epoch.to_string()}}),
            Offered::Unchanged => serde_json::json!({"unchanged": {}}),
            Offered::Refused(error) => serde_json::json!({"refused": {"code": error.code()}}),
        }
    }
}

/// A publisher's compare-and-swap write ([`Follower::publish`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publish {
    /// The revision the write expects the source to hold: the follower's, or `None` to
    /// create the value (the follower holds none).
    pub expected_revision: Option<u64>,
    /// The epoch written: the held epoch + 1.
    pub epoch: u64,
    /// The document to write, in its canonical form.
    pub document: String,
}

/// What a follower has seen (counters for a shell's `stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FollowerStats {
    /// Documents offered.
    pub offered: u64,
    /// Documents installed.
    pub installed: u64,
    /// The held document offered again.
    pub unchanged: u64,
    /// Sources lost.
    pub disconnects: u64,
    /// Refusals by error code (`invalid_topology`, `stale_epoch`, ...), sorted by code.
    pub refused: Vec<(&'static str, u64)>,
}

impl FollowerStats {
    /// The counters as a JSON object (`refused` as an object code -> count).
    pub fn to_value(&self) -> Value {
        let refused: serde_json::Map<String, Value> =
            self.refused.iter().map(|(code, count)| ((*code).to_string(), Value::from(*count))).collect();
        serde_json::json!({
            "offered": self.offered, "installed": self.installed, "unchanged": self.unchanged,
            "disconnects": self.disconnects, "refused": Value::Object(refused),
        })
    }
}

/// A topology follower (see the module docs).
#[derive(Clone, Debug)]
pub struct Follower {
    config: FollowerConfig,
    router: Option<Router>,
    revision: Option<u64>,
    next_reconnect_ms: u64,
    /// When the source lost last is to be reconnected ([`Follower::next_deadline`]).
    reconnect_at_ms: Option<u64>,
    stats: FollowerStats,
}

impl Follower {
    /// A follower that holds no router yet.
    ///
    /// # Example
    /// ```
    /// use shardroute::session::{Follower, FollowerConfig, Offered};
    /// let doc = |epoch: u64| format!(r#"{{"format": "shardroute/1", "epoch": {epoch},
    ///     "nodes": [{{"id": "a"}}, {{"id": "b"}}], "strategy": {{"type": "jump"}}}}"#);
    /// let mut follower = Follower::new(FollowerConfig::default());
    /// assert_eq!(follower.offer(&doc(3), 10, 0), Offered::Installed { epoch: 3 });
    /// assert!(matches!(follower.offer(&doc(2), 11, 1), Offered::Refused(ref e) if e.code() == "stale_epoch"));
    /// assert_eq!(follower.router().map(|r| r.epoch()), Some(3));
    /// let write = follower.publish(&doc(4))?;
    /// assert_eq!((write.expected_revision, write.epoch), (Some(10), 4));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn new(config: FollowerConfig) -> Follower {
        Follower {
            next_reconnect_ms: config.reconnect_first_ms,
            reconnect_at_ms: None,
            config,
            router: None,
            revision: None,
            stats: FollowerStats::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &FollowerConfig {
        &self.config
    }

    /// The router installed last, or `None` before the first.
    pub fn router(&self) -> Option<&Router> {
        self.router.as_ref()
    }

    /// The source revision of the document installed last.
    pub fn revision(&self) -> Option<u64> {
        self.revision
    }

    /// The counters.
    pub fn stats(&self) -> &FollowerStats {
        &self.stats
    }

    /// A document (JSON text) from the source at `revision`, seen at `now_ms`.
    pub fn offer(&mut self, document: &str, revision: u64, now_ms: u64) -> Offered {
        let _ = now_ms;
        self.stats.offered += 1;
        let outcome = self.check_revision(revision).and_then(|()| Router::from_json(document));
        self.consider(outcome, revision)
    }

    /// A binary dictionary (`encode_dictionary`'s form) from the source at `revision`.
    pub fn offer_dictionary(&mut self, bytes: &[u8], revision: u64, now_ms: u64) -> Offered {
        let _ = now_ms;
        self.stats.offered += 1;
        let outcome =
            self.check_revision(revision).and_then(|()| crate::dictionary::decode(bytes)).and_then(Router::new);
        self.consider(outcome, revision)
    }

    /// A value from a source that holds plain bytes (a ZooKeeper node, an HTTP body of no
    /// known type): a binary dictionary when it starts with the dictionary's magic
    /// ([`looks_like_dictionary`](crate::dictionary::looks_like_dictionary)), otherwise
    /// JSON text that must be valid UTF-8. Bytes that are not are refused
    /// (`invalid_topology`, counted), never decoded with replacements.
    pub fn offer_bytes(&mut self, bytes: &[u8], revision: u64, now_ms: u64) -> Offered {
        if crate::dictionary::looks_like_dictionary(bytes) {
            return self.offer_dictionary(bytes, revision, now_ms);
        }
        match core::str::from_utf8(bytes) {
            Ok(text) => self.offer(text, revision, now_ms),
            Err(err) => {
                self.stats.offered += 1;
                let refused = self.check_revision(revision).and_then(|()| {
                    Err(Error::new(
                        ErrorKind::InvalidTopology,
                        format!("the document is not valid UTF-8 (at byte {})", err.valid_up_to()),
                    ))
                });
                self.consider(refused, revision)
            }
        }
    }

    fn check_revision(&self, revision: u64) -> Result<()> {
        match self.revision {
            Some(held) if revision < held => Err(Error::new(
                ErrorKind::StaleEpoch,
                format!("revision {revision} is older than the installed document's, {held}"),
            )),
            _ => Ok(()),
        }
    }

    fn consider(&mut self, offered: Result<Router>, revision: u64) -> Offered {
        let next = offered.and_then(|next| match &self.router {
            Some(held) => held.replace(next),
            None => Ok(next),
        });
        match next {
            Ok(next) => {
                self.revision = Some(revision);
                if self.router.as_ref().is_some_and(|held| held.epoch() == next.epoch()) {
                    self.stats.unchanged += 1;
                    return Offered::Unchanged;
                }
                let epoch = next.epoch();
                self.router = Some(next);
                self.stats.installed += 1;
                Offered::Installed { epoch }
            }
            Err(error) => {
                let code = error.code();
                match self.stats.refused.binary_search_by(|(known, _)| known.cmp(&code)) {
                    Ok(index) => self.stats.refused[index].1 += 1,
                    Err(index) => self.stats.refused.insert(index, (code, 1)),
                }
                Offered::Refused(error)
            }
        }
    }

    /// The source was lost at `now_ms`: when to reconnect (the wait doubles each time
    /// until [`connected`](Follower::connected)).
    pub fn disconnected(&mut self, now_ms: u64) -> u64 {
        self.stats.disconnects += 1;
        let wait = self.next_reconnect_ms;
        self.next_reconnect_ms = wait.saturating_mul(2).min(self.config.reconnect_max_ms);
        let at = now_ms.saturating_add(wait);
        self.reconnect_at_ms = Some(at);
        at
    }

    /// The source answers again: the next loss waits the first backoff, and no reconnect
    /// is pending ([`next_deadline`](Follower::next_deadline) is `None`).
    pub fn connected(&mut self) {
        self.next_reconnect_ms = self.config.reconnect_first_ms;
        self.reconnect_at_ms = None;
    }

    /// When the shell must next act for this follower: the reconnect time the last
    /// [`disconnected`](Follower::disconnected) gave, until
    /// [`connected`](Follower::connected); `None` while the source is connected. A shell
    /// keeps one timer, set from this (quinn-proto's `poll_timeout`), and reconnects when
    /// it fires: it computes no backoff of its own.
    ///
    /// # Example
    /// ```
    /// use shardroute::session::{Follower, FollowerConfig};
    /// let mut follower = Follower::new(FollowerConfig::default());
    /// assert_eq!(follower.next_deadline(), None);
    /// let at = follower.disconnected(1_000);
    /// assert_eq!(follower.next_deadline(), Some(at));
    /// follower.connected();
    /// assert_eq!(follower.next_deadline(), None);
    /// ```
    pub fn next_deadline(&self) -> Option<u64> {
        self.reconnect_at_ms
    }

    /// The compare-and-swap write of `next` (JSON text): what a publisher sends.
    ///
    /// # Errors
    /// As [`Router::from_json`] for a document the follower would refuse;
    /// `stale_epoch` unless its epoch is the held one + 1 (any epoch when none is held).
    pub fn publish(&self, next: &str) -> Result<Publish> {
        let router = Router::from_json(next)?;
        if let Some(held) = &self.router {
            let wanted = held
                .epoch()
                .checked_add(1)
                .ok_or_else(|| Error::new(ErrorKind::StaleEpoch, "the held epoch is the last"))?;
            if router.epoch() != wanted {
                return Err(Error::new(
                    ErrorKind::StaleEpoch,
                    format!(
                        "the follower holds epoch {}; a publisher writes epoch {wanted}, not {}",
                        held.epoch(),
                        router.epoch()
                    ),
                ));
            }
        }
        Ok(Publish { expected_revision: self.revision, epoch: router.epoch(), document: router.to_json() })
    }
}
