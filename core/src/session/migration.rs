//! The migration session: what a service and a copy job do while data moves from one
//! topology to the next (in the background or lazily), decided once, for every language.
//!
//! A [`MigrationSession`] is the routing in force: it answers the read plan, the write
//! plan under the fence epoch, a key's lazy move, the background copy's next batch and
//! the nodes a query over every key reads, in every [`Mode`], no migration included, so
//! a caller asks it the same questions whatever moves. Made from what a service holds
//! ([`MigrationSession::of_topology`]: the topology in force, the `previous` document
//! published with it, and the topology routed under just before), it decides the mode:
//!
//! * **plain**: nothing moves: reads and writes go to the topology's owner;
//! * **background**: a vbucket dictionary with a `forward_map`: a copy job moves the
//!   moving units one batch at a time from a cursor it stores
//!   ([`MigrationSession::copy_batch`]: resumable after a crash from the stored cursor),
//!   marking each unit moved; services read the old owner, then the new one, until the
//!   unit is marked;
//! * **lazy**: a `previous` topology one epoch older: nothing is copied ahead; the first
//!   read of a key under the new topology moves that key
//!   ([`MigrationSession::lazy_steps`]: read the old owner, write the new one, retire the
//!   old copy), and marks it moved;
//! * **expiration**: for data that expires by itself (a cache, rows under a TTL):
//!   nothing is ever copied; writes go to the new owner from the start, reads look at
//!   the old owner, then the new one (whose copy, written since the start, is the newer),
//!   until a deadline, the keys' TTL horizon ([`MigrationSession::expiration`]: every
//!   key written on the old owner before the move has expired by then); from the
//!   deadline on, reads go to the new owner alone. Time is an input
//!   ([`MigrationSession::read_plan_at`]) and the deadline an output
//!   ([`MigrationSession::next_deadline`]);
//! * **catch-up**: no `previous` yet, but the caller routed under a different topology
//!   one epoch older just before: reads look at the old owner, then the new one, and
//!   nobody moves anything (the moves belong to whoever holds `previous`).
//!
//! [`MigrationSession::new`] makes a background or lazy session of any [`Migration`],
//! and refuses one that cannot work (a background copy needs the same fixed partitions
//! on both sides) when it is made; [`MigrationSession::expiration`] makes an expiration
//! session with its deadline.
//!
//! Once the move is over, a node it emptied (one that owned a shard before and owns
//! none now) is no longer read by anyone: [`MigrationSession::actions`] then asks for
//! it to be retired ([`MigrationAction::Retire`]). The move is over at the deadline in
//! expiration mode, and when the caller says every moving unit or key is `moved` in
//! background and lazy modes (the copy job's last batch is marked; for a lazy move, a
//! [`misplaced`](crate::migration::misplaced) check of the old node finds nothing left).
//!
//! Writes go to the new owner under the **fence epoch** (the epoch of the published
//! document that describes the move: the new topology, or the dictionary in motion
//! itself; the topology's own with nothing moving): a shard that holds a fence
//! `min_epoch` refuses a write routed under an older epoch, and
//! [`MigrationSession::fenced`] says what such a refusal means (follow the topology,
//! re-plan, retry). The session keeps no state: the `moved` marks and the cursor live
//! where the data lives.
//!
//! **The copy job's pace.** A copy job (the background copy, a lazy move's sweep)
//! competes with the services for the same servers, so after each step of work it rests:
//! [`MigrationSession::resume_at`] takes the step's start and end on the caller's clock
//! (ms) and a [`Pace`] (the largest share of the wall time the job works, in thousandths,
//! 50 by default: 5%; and the shortest pause, 0 by default) and gives the time to start
//! the next step: `finished + max(min_pause, ceil(took * (1000 - duty) / duty))`, so the
//! job works at most its duty, in integers, saturating at `u64::MAX`. Time is an input and
//! the next start an output, as for [`MigrationSession::next_deadline`]. A job that moves
//! many keys lazily asks [`MigrationSession::lazy_groups`] for them grouped by their
//! [`LazySteps`], to move each group in one statement per step.

use alloc::format;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::migration::{Migration, MovingShard};
use crate::router::Router;
use crate::strategy::partitioned::vbucket::VbucketSpec;
use crate::topology::Topology;

/// How the data moves (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing moves: one owner per key.
    Plain,
    /// A copy job moves every moving unit ahead of the services.
    Background,
    /// The first read of a key under the new topology moves it.
    Lazy,
    /// Reads look at the topology routed under just before as well; nothing is moved.
    CatchUp,
    /// Nothing is copied: writes go to the new owner, reads look at the old owner too
    /// until a deadline (the keys' TTL horizon), then at the new owner alone.
    Expiration,
}

impl Mode {
    /// The mode a session is asked for by name ([`MigrationSession::of_mode`]):
    /// `"background"`, `"lazy"` or `"expiration"`.
    ///
    /// # Errors
    /// `invalid_argument` for anything else (`"plain"` and `"catch-up"` are decided by
    /// [`MigrationSession::of_topology`], not asked for).
    pub fn from_name(name: &str) -> Result<Mode> {
        match name {
            "background" => Ok(Mode::Background),
            "lazy" => Ok(Mode::Lazy),
            "expiration" => Ok(Mode::Expiration),
            other => Err(Error::argument(format!(
                "mode: expected \"background\", \"lazy\" or \"expiration\", got {other:?}"
            ))),
        }
    }

    /// `"plain"`, `"background"`, `"lazy"` or `"catch-up"`: the name every binding gives.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Background => "background",
            Mode::Lazy => "lazy",
            Mode::CatchUp => "catch-up",
            Mode::Expiration => "expiration",
        }
    }
}

/// Where a write goes, and under which epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WritePlan<'a> {
    /// The new owner.
    pub node: &'a str,
    /// The epoch the write runs under (the shard's fence must admit it).
    pub fence_epoch: u64,
}

/// The lazy move of one key: read it from `read_from`, write it to `write_to` under
/// `fence_epoch`, then delete it from `retire_from` and mark it moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LazySteps<'a> {
    /// The old owner, read first.
    pub read_from: &'a str,
    /// The new owner, written.
    pub write_to: &'a str,
    /// The old owner, whose copy is deleted last.
    pub retire_from: &'a str,
    /// The epoch the write runs under.
    pub fence_epoch: u64,
}

/// The lazy moves of several keys with the same [`LazySteps`]
/// ([`MigrationSession::lazy_groups`]): move them together, one statement per step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LazyGroup<'a> {
    /// The steps every key of the group takes.
    pub steps: LazySteps<'a>,
    /// The keys' indices in the list given, in increasing order.
    pub indices: Vec<u32>,
}

/// How a copy job paces itself ([`MigrationSession::resume_at`]): the largest share of
/// the wall time it works, in thousandths (`duty_per_mille`, 1 to 1000), and the shortest
/// pause between two steps (`min_pause_ms`).
///
/// # Example
/// ```
/// use shardroute::session::Pace;
/// let pace = Pace::default();
/// assert_eq!((pace.duty_per_mille(), pace.min_pause_ms()), (50, 0));
/// // A step of 10 ms at 5% rests 190 ms: 10 of every 200 ms.
/// assert_eq!(pace.next_start(1_000, 1_010)?, 1_200);
/// assert_eq!(Pace::new(0, 0).unwrap_err().code(), "invalid_argument");
/// # Ok::<(), shardroute::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pace {
    duty_per_mille: u32,
    min_pause_ms: u64,
}

impl Pace {
    /// The default duty: 50 thousandths (the job works at most 5% of the wall time).
    pub const DEFAULT_DUTY_PER_MILLE: u32 = 50;
    /// The default shortest pause: none (the duty alone decides).
    pub const DEFAULT_MIN_PAUSE_MS: u64 = 0;

    /// A pace of `duty_per_mille` thousandths of the wall time (1 to 1000: 1000 never
    /// rests but for `min_pause_ms`) and at least `min_pause_ms` between two steps.
    ///
    /// # Errors
    /// `invalid_argument` for a duty of 0 (a job that never works) or above 1000.
    pub fn new(duty_per_mille: u32, min_pause_ms: u64) -> Result<Pace> {
        if !(1..=1000).contains(&duty_per_mille) {
            return Err(Error::argument(format!(
                "duty_per_mille: the share of the wall time the job works, in thousandths, must be in 1..=1000, \
                 got {duty_per_mille}"
            )));
        }
        Ok(Pace { duty_per_mille, min_pause_ms })
    }

    /// [`new`](Pace::new) with the core's default for what is `None`
    /// ([`DEFAULT_DUTY_PER_MILLE`](Pace::DEFAULT_DUTY_PER_MILLE),
    /// [`DEFAULT_MIN_PAUSE_MS`](Pace::DEFAULT_MIN_PAUSE_MS)): the pace a binding makes of
    /// its optional arguments.
    ///
    /// # Errors
    /// As [`new`](Pace::new).
    pub fn of(duty_per_mille: Option<u32>, min_pause_ms: Option<u64>) -> Result<Pace> {
        Pace::new(
            duty_per_mille.unwrap_or(Pace::DEFAULT_DUTY_PER_MILLE),
            min_pause_ms.unwrap_or(Pace::DEFAULT_MIN_PAUSE_MS),
        )
    }

    /// The duty, in thousandths of the wall time (1 to 1000).
    pub fn duty_per_mille(self) -> u32 {
        self.duty_per_mille
    }

    /// The shortest pause between two steps, in ms.
    pub fn min_pause_ms(self) -> u64 {
        self.min_pause_ms
    }

    /// The rest after a step of `took_ms`: `max(min_pause_ms, ceil(took_ms * (1000 -
    /// duty) / duty))`, so that `took / (took + rest)` is at most the duty (rounded up:
    /// never over it), saturating at `u64::MAX`. Never panics.
    pub fn pause_ms(self, took_ms: u64) -> u64 {
        let duty = u128::from(self.duty_per_mille);
        let rest = (u128::from(took_ms) * (1000 - duty)).div_ceil(duty);
        u64::try_from(rest).unwrap_or(u64::MAX).max(self.min_pause_ms)
    }

    /// When to start the next step of a job whose last step ran from `started_ms` to
    /// `finished_ms` (the caller's clock, ms): `finished_ms` plus
    /// [`pause_ms`](Pace::pause_ms), saturating at `u64::MAX`.
    ///
    /// # Errors
    /// `invalid_argument` when `finished_ms` is before `started_ms` (two clocks, or one
    /// that is not monotonic: the step's length is unknown).
    pub fn next_start(self, started_ms: u64, finished_ms: u64) -> Result<u64> {
        let Some(took_ms) = finished_ms.checked_sub(started_ms) else {
            return Err(Error::argument(format!(
                "finished_ms {finished_ms} is before started_ms {started_ms}: a step ends after it starts \
                 (one monotonic clock for both)"
            )));
        };
        Ok(finished_ms.saturating_add(self.pause_ms(took_ms)))
    }
}

impl Default for Pace {
    /// [`DEFAULT_DUTY_PER_MILLE`](Pace::DEFAULT_DUTY_PER_MILLE) and
    /// [`DEFAULT_MIN_PAUSE_MS`](Pace::DEFAULT_MIN_PAUSE_MS).
    fn default() -> Pace {
        Pace { duty_per_mille: Pace::DEFAULT_DUTY_PER_MILLE, min_pause_ms: Pace::DEFAULT_MIN_PAUSE_MS }
    }
}

/// One batch of a background copy: the units to copy now, and the cursor to store once
/// they are copied (`None`: the copy is complete).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyBatch<'a> {
    /// The units, in shard order.
    pub units: Vec<MovingShard<'a>>,
    /// The cursor after this batch, or `None` when no unit is left.
    pub next: Option<u32>,
}

/// What a fenced write's refusal means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fenced {
    /// The shard is fenced at a newer epoch than this migration's: the topology moved on.
    /// Follow it (a newer document), plan the write again, and retry.
    Refresh,
}

/// What a session asks the caller to do once the move allows it
/// ([`MigrationSession::actions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationAction<'a> {
    /// The node owned a shard before the move and owns none now, and the move's reads of
    /// it are over: take it out of service (nothing routes to it and nobody reads it).
    Retire {
        /// The node's id.
        node: &'a str,
    },
}

impl<'a> MigrationAction<'a> {
    /// `"retire"`: the name every binding gives the action (its `kind`).
    pub fn kind(self) -> &'static str {
        match self {
            MigrationAction::Retire { .. } => "retire",
        }
    }

    /// The node the action is about.
    pub fn node(self) -> &'a str {
        match self {
            MigrationAction::Retire { node } => node,
        }
    }
}

/// The routing in force while data moves, or while nothing does (see the module docs).
#[derive(Clone, Debug)]
pub struct MigrationSession {
    /// The topology routed under (a migration's new side; for a dictionary in motion,
    /// the dictionary).
    router: Router,
    /// The move, in every mode but plain.
    migration: Option<Migration>,
    mode: Mode,
    /// Expiration mode: the deadline (ms, the caller's clock) from which reads go to the
    /// new owner alone; 0 in the other modes.
    until_ms: u64,
}

impl MigrationSession {
    /// The session of `migration` in `mode` (`Mode::Background` or `Mode::Lazy`).
    ///
    /// # Errors
    /// `invalid_argument`, naming what is missing, for a combination that cannot work: a
    /// background copy whose two topologies' shards are not the same fixed partitions
    /// (modulo, jump or rings number nodes, not units; or the partition counts differ):
    /// move such data lazily. `invalid_argument` too for `Mode::Plain` or
    /// `Mode::CatchUp`, which [`of_topology`](MigrationSession::of_topology) decides,
    /// and for `Mode::Expiration`, which needs its deadline
    /// ([`expiration`](MigrationSession::expiration)).
    ///
    /// # Example
    /// ```
    /// use shardroute::{migration::Migration, session::{MigrationSession, Mode}, Router};
    /// let doc = |n: u32, epoch: u64| {
    ///     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "shard_{i}"}}"#)).collect();
    ///     format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
    ///         "nodes": [{}], "strategy": {{"type": "modulo", "one_based": true}}}}"#, nodes.join(","))
    /// };
    /// let migration = Migration::new(Router::from_json(&doc(5, 1))?, Router::from_json(&doc(10, 2))?)?;
    /// // Modulo shards are node numbers, not units a copy job moves.
    /// let refused = MigrationSession::new(migration.clone(), Mode::Background).unwrap_err();
    /// assert_eq!(refused.code(), "invalid_argument");
    /// let session = MigrationSession::new(migration, Mode::Lazy)?;
    /// let steps = session.lazy_steps(7u64)?.expect("user 7 moves");
    /// assert_eq!((steps.read_from, steps.write_to, steps.fence_epoch), ("shard_2", "shard_7", 2));
    /// assert_eq!(session.lazy_steps(12u64)?, None);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn new(migration: Migration, mode: Mode) -> Result<MigrationSession> {
        match mode {
            Mode::Background => {
                // The copy moves whole units whose owner changes; keys that change unit
                // would be left behind on their old node, and then missed by every read.
                if let Some(reason) = migration.units_differ() {
                    return Err(Error::argument(format!(
                        "background: a copy job moves whole units whose owner changes, and here keys change \
                         unit between the two topologies ({reason}): move the data lazily (mode \"lazy\")"
                    )));
                }
                if migration.moving_shards().is_err() {
                    let (from, to) = (migration.before().strategy(), migration.after().strategy());
                    return Err(Error::argument(format!(
                        "background: a copy job moves fixed partitions (vbuckets, slots, partitions) that both \
                         topologies share, and {} to {} shares none (node numbers, or a different count): move \
                         the data lazily (mode \"lazy\")",
                        from.type_name(),
                        to.type_name()
                    )));
                }
            }
            Mode::Lazy => {}
            Mode::Expiration => {
                return Err(Error::argument(
                    "mode: \"expiration\" needs its deadline, the keys' TTL horizon (until_ms)",
                ))
            }
            Mode::Plain | Mode::CatchUp => {
                return Err(Error::argument(format!(
                    "mode: {:?} is decided by of_topology, not asked for; expected \"background\" or \"lazy\"",
                    mode.name()
                )))
            }
        }
        let router = if migration.published_epoch() == migration.after().epoch() {
            migration.after().clone()
        } else {
            // A dictionary in motion: clients route under the dictionary, at the epoch
            // before its settled forward map's. Its map is the migration's before side.
            migration.before().clone()
        };
        Ok(MigrationSession { router, migration: Some(migration), mode, until_ms: 0 })
    }

    /// The expiration session of `migration`: nothing is ever copied; writes go to the
    /// new owner from the start; reads look at the old owner, then the new one, until
    /// `until_ms` (the keys' TTL horizon on the caller's clock: the time by which every
    /// key written on an old owner before the move has expired), and at the new owner
    /// alone from then on ([`read_plan_at`](MigrationSession::read_plan_at)). Any two
    /// topologies will do (no unit is copied); a dictionary in motion is routed under its
    /// own epoch, as in [`new`](MigrationSession::new).
    ///
    /// # Errors
    /// None today; a `Result` as the other constructors.
    ///
    /// # Example
    /// ```
    /// use shardroute::{migration::Migration, session::MigrationSession, Router};
    /// let doc = |n: u32, epoch: u64| {
    ///     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "shard_{i}"}}"#)).collect();
    ///     Router::from_json(&format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
    ///         "nodes": [{}], "strategy": {{"type": "modulo", "one_based": true}}}}"#, nodes.join(",")))
    /// };
    /// let session = MigrationSession::expiration(Migration::new(doc(5, 1)?, doc(10, 2)?)?, 60_000)?;
    /// assert_eq!(session.write_plan(7u64)?.node, "shard_7");
    /// assert_eq!(session.read_plan_at(7u64, false, 59_999)?, ["shard_2", "shard_7"]);
    /// assert_eq!(session.next_deadline(59_999), Some(60_000));
    /// assert_eq!(session.read_plan_at(7u64, false, 60_000)?, ["shard_7"]);
    /// assert_eq!(session.next_deadline(60_000), None);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn expiration(migration: Migration, until_ms: u64) -> Result<MigrationSession> {
        let lazy = MigrationSession::new(migration, Mode::Lazy)?;
        Ok(MigrationSession { mode: Mode::Expiration, until_ms, ..lazy })
    }

    /// The session a binding makes from its arguments: `mode` with `until_ms` (the
    /// deadline, for `Mode::Expiration` only): [`expiration`](MigrationSession::expiration)
    /// or [`new`](MigrationSession::new).
    ///
    /// # Errors
    /// As those; `invalid_argument` for `Mode::Expiration` without `until_ms`, or an
    /// `until_ms` with any other mode (only an expiration session has a deadline).
    pub fn of_mode(migration: Migration, mode: Mode, until_ms: Option<u64>) -> Result<MigrationSession> {
        match (mode, until_ms) {
            (Mode::Expiration, Some(until_ms)) => MigrationSession::expiration(migration, until_ms),
            (_, None) => MigrationSession::new(migration, mode),
            (other, Some(_)) => Err(Error::argument(format!(
                "until_ms: only an \"expiration\" session has a deadline; this one is {:?}",
                other.name()
            ))),
        }
    }

    /// The routing a service uses, decided from what it holds: `topology`, the topology
    /// in force; `previous`, the document published with it as the one it replaces (or
    /// `None`); `held`, the topology the service routed under just before (or `None`).
    /// The first rule that applies decides the [`Mode`]:
    ///
    /// 1. `topology` is a vbucket dictionary with a `forward_map`: **background**, the
    ///    session of [`Migration::of_dictionary`] (a `previous` is not consulted: the
    ///    dictionary describes its own move);
    /// 2. `previous` is one epoch older than `topology`: **lazy**, of
    ///    `Migration::new(previous, topology)` (an older `previous` is stale: a
    ///    follower may keep it after it was deleted);
    /// 3. `held` is one epoch older than `topology`, differs from it by more than the
    ///    epoch, and `topology` is not a vbucket dictionary (whose moves are published in
    ///    the dictionary and copied before it settles): **catch-up**, reads of
    ///    `Migration::new(held, topology)` with no moves: the service has the new
    ///    topology before the `previous` published with it;
    /// 4. otherwise **plain**.
    ///
    /// # Errors
    /// As [`MigrationSession::new`] and [`Migration::of_dictionary`] (a dictionary whose
    /// map and forward map are not both valid).
    ///
    /// # Example
    /// ```
    /// use shardroute::{session::{MigrationSession, Mode}, Router};
    /// let doc = |n: u32, epoch: u64| {
    ///     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "shard_{i}"}}"#)).collect();
    ///     Router::from_json(&format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
    ///         "nodes": [{}], "strategy": {{"type": "modulo", "one_based": true}}}}"#, nodes.join(",")))
    /// };
    /// let plain = MigrationSession::of_topology(doc(5, 1)?, None, None)?;
    /// assert_eq!((plain.mode(), plain.read_plan(7u64, false)?), (Mode::Plain, vec!["shard_2"]));
    /// let lazy = MigrationSession::of_topology(doc(10, 2)?, Some(doc(5, 1)?), None)?;
    /// assert_eq!(lazy.mode(), Mode::Lazy);
    /// // Old owner first (see Migration::read_targets).
    /// assert_eq!(lazy.read_plan(7u64, false)?, ["shard_2", "shard_7"]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn of_topology(topology: Router, previous: Option<Router>, held: Option<Router>) -> Result<MigrationSession> {
        let next = |older: &Option<Router>| {
            older.as_ref().is_some_and(|older| older.epoch().checked_add(1) == Some(topology.epoch()))
        };
        let dictionary = topology.strategy().spec::<VbucketSpec>();
        if dictionary.is_some_and(|spec| spec.forward.is_some()) {
            let session = MigrationSession::new(Migration::of_dictionary(&topology)?, Mode::Background)?;
            return Ok(MigrationSession { router: topology, ..session });
        }
        if next(&previous) {
            let previous = previous.expect("checked by next");
            return MigrationSession::new(Migration::new(previous, topology)?, Mode::Lazy);
        }
        let same_but_epoch = |a: &Router, b: &Router| {
            Topology { epoch: 0, ..a.topology().clone() } == Topology { epoch: 0, ..b.topology().clone() }
        };
        if next(&held) && dictionary.is_none() {
            let held = held.expect("checked by next");
            if !same_but_epoch(&held, &topology) {
                let migration = Migration::new(held, topology.clone())?;
                return Ok(MigrationSession {
                    router: topology,
                    migration: Some(migration),
                    mode: Mode::CatchUp,
                    until_ms: 0,
                });
            }
        }
        Ok(MigrationSession { router: topology, migration: None, mode: Mode::Plain, until_ms: 0 })
    }

    /// The migration, in every mode but plain.
    pub fn migration(&self) -> Option<&Migration> {
        self.migration.as_ref()
    }

    /// The topology routed under: the topology in force (from
    /// [`new`](MigrationSession::new) of a dictionary in motion, its `map` side, at the
    /// dictionary's epoch).
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The epoch reads and writes run under: that of the published document describing
    /// the move ([`Migration::published_epoch`]: the new topology's, or a dictionary in
    /// motion's own); the topology's own in plain mode. Always the epoch of
    /// [`router`](MigrationSession::router).
    pub fn fence_epoch(&self) -> u64 {
        self.migration.as_ref().map_or(self.router.epoch(), Migration::published_epoch)
    }

    /// Where a read of `key` looks, in order ([`Migration::read_targets`]: the old
    /// owner, then the new one, unless the key (background: its unit) is marked
    /// `moved`; the reason for that order is written there); plain: the owner alone.
    ///
    /// # Errors
    /// As [`Migration::read_targets`] or [`Router::route`].
    pub fn read_plan<'k>(&self, key: impl Into<Key<'k>>, moved: bool) -> Result<Vec<&str>> {
        match &self.migration {
            Some(migration) => migration.read_targets(key, moved),
            None => Ok(alloc::vec![self.router.node(key)?]),
        }
    }

    /// [`read_plan`](MigrationSession::read_plan) at `now_ms` (the caller's clock): in
    /// expiration mode, the new owner alone from the deadline on (the old owner's copies
    /// have expired), else the old owner then the new one unless `moved`; in every other
    /// mode, `read_plan(key, moved)` (time changes nothing there).
    ///
    /// # Errors
    /// As [`read_plan`](MigrationSession::read_plan).
    pub fn read_plan_at<'k>(&self, key: impl Into<Key<'k>>, moved: bool, now_ms: u64) -> Result<Vec<&str>> {
        let expired = self.mode == Mode::Expiration && now_ms >= self.until_ms;
        self.read_plan(key, moved || expired)
    }

    /// The next time (ms, the caller's clock) at which the session's answers change
    /// without any other input, once `now_ms`: the deadline in expiration mode while
    /// `now_ms` is before it (wake then: reads stop looking at the old owner, and
    /// [`actions`](MigrationSession::actions) may retire nodes); `None` otherwise.
    pub fn next_deadline(&self, now_ms: u64) -> Option<u64> {
        (self.mode == Mode::Expiration && now_ms < self.until_ms).then_some(self.until_ms)
    }

    /// The deadline of an expiration session (`None` in the other modes).
    pub fn until_ms(&self) -> Option<u64> {
        (self.mode == Mode::Expiration).then_some(self.until_ms)
    }

    /// What to do at `now_ms`: a [`MigrationAction::Retire`] for each node the move
    /// emptied, in the old topology's node order, once the move's reads of it are over.
    /// Emptied: the node owns a shard under the old topology and none under the new one
    /// (and, when the new topology keeps replicas, it is not one of its nodes at all: a
    /// node listed there may hold replicas). Over: in expiration mode, from the deadline
    /// on; in background and lazy modes, when `moved` (the caller says every moving unit,
    /// or every key of the emptied nodes, has moved: the copy's last batch is marked, or
    /// a [`misplaced`](crate::migration::misplaced) check of the node finds nothing left).
    /// Plain and catch-up sessions ask for nothing (a catch-up session's moves belong to
    /// whoever holds `previous`). The session keeps no state: the same arguments give the
    /// same actions, so ask again after a crash.
    pub fn actions(&self, now_ms: u64, moved: bool) -> Vec<MigrationAction<'_>> {
        let over = match self.mode {
            Mode::Expiration => now_ms >= self.until_ms,
            Mode::Background | Mode::Lazy => moved,
            Mode::Plain | Mode::CatchUp => false,
        };
        let Some(migration) = self.migration.as_ref().filter(|_| over) else {
            return Vec::new();
        };
        let after = migration.after();
        let owners: alloc::collections::BTreeSet<&str> = crate::migration::owner_ids(after).into_iter().collect();
        let replicas = after.max_replica_count() > 1;
        let listed = |id: &str| after.nodes().iter().any(|node| node.id == id);
        crate::migration::owner_ids(migration.before())
            .into_iter()
            .filter(|id| !(owners.contains(id) || replicas && listed(id)))
            .map(|node| MigrationAction::Retire { node })
            .collect()
    }

    /// Where a write of `key` goes (the new owner; plain: the owner), under the fence epoch.
    ///
    /// # Errors
    /// As [`Migration::write_target`] or [`Router::route`].
    pub fn write_plan<'k>(&self, key: impl Into<Key<'k>>) -> Result<WritePlan<'_>> {
        let node = match &self.migration {
            Some(migration) => migration.write_target(key)?,
            None => self.router.node(key)?,
        };
        Ok(WritePlan { node, fence_epoch: self.fence_epoch() })
    }

    /// The lazy move of `key` when it changes node (its first read under the new
    /// topology); `None` when it stays, and in every mode but lazy (where no read moves
    /// a key), so a caller asks it on every read.
    ///
    /// # Errors
    /// As [`Migration::moves`].
    pub fn lazy_steps<'k>(&self, key: impl Into<Key<'k>>) -> Result<Option<LazySteps<'_>>> {
        let (Mode::Lazy, Some(migration)) = (self.mode, &self.migration) else {
            return Ok(None);
        };
        let fence_epoch = self.fence_epoch();
        Ok(migration.moves(key)?.map(|(from, to)| LazySteps {
            read_from: from,
            write_to: to,
            retire_from: from,
            fence_epoch,
        }))
    }

    /// The lazy moves of `keys` grouped by their [`LazySteps`]: one [`LazyGroup`] per
    /// distinct steps, in the order of each group's first key, with the indices of its
    /// keys in increasing order; keys that stay are left out. The same steps as
    /// [`lazy_steps`](MigrationSession::lazy_steps) gives key by key, so a job (a sweep, a
    /// service's pending moves) moves a group in one statement per step. Empty in every
    /// mode but lazy (where no read moves a key), as `lazy_steps` is `None` there.
    ///
    /// # Errors
    /// As [`lazy_steps`](MigrationSession::lazy_steps); `limit_exceeded` past `u32::MAX`
    /// keys (an index is a `u32`).
    ///
    /// # Example
    /// ```
    /// use shardroute::{migration::Migration, session::{MigrationSession, Mode}, Router};
    /// let doc = |n: u32, epoch: u64| {
    ///     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "shard_{i}"}}"#)).collect();
    ///     Router::from_json(&format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
    ///         "nodes": [{}], "strategy": {{"type": "modulo", "one_based": true}}}}"#, nodes.join(",")))
    /// };
    /// let session = MigrationSession::new(Migration::new(doc(5, 1)?, doc(10, 2)?)?, Mode::Lazy)?;
    /// // Users 7 and 17 go from shard 2 to shard 7, user 10 from shard 5 to shard 10; 12 stays.
    /// let groups = session.lazy_groups([7u64, 12, 10, 17])?;
    /// assert_eq!(groups.len(), 2);
    /// assert_eq!((groups[0].steps.read_from, groups[0].steps.write_to), ("shard_2", "shard_7"));
    /// assert_eq!(groups[0].indices, [0, 3]);
    /// assert_eq!((groups[1].steps.write_to, groups[1].indices.as_slice()), ("shard_10", &[2][..]));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn lazy_groups<'k, I>(&self, keys: I) -> Result<Vec<LazyGroup<'_>>>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        let (Mode::Lazy, Some(migration)) = (self.mode, &self.migration) else {
            return Ok(Vec::new());
        };
        let fence_epoch = self.fence_epoch();
        let mut groups: Vec<LazyGroup<'_>> = Vec::new();
        // (old owner, new owner) -> the group's place in `groups`.
        let mut by_move: alloc::collections::BTreeMap<(&str, &str), usize> = alloc::collections::BTreeMap::new();
        for (index, key) in keys.into_iter().enumerate() {
            let Some((from, to)) = migration.moves(key)? else { continue };
            let index = u32::try_from(index).map_err(|_| {
                Error::limit("lazy_groups: more than 4294967295 keys (an index is a u32); group in batches")
            })?;
            let at = *by_move.entry((from, to)).or_insert_with(|| {
                let steps = LazySteps { read_from: from, write_to: to, retire_from: from, fence_epoch };
                groups.push(LazyGroup { steps, indices: Vec::new() });
                groups.len() - 1
            });
            groups[at].indices.push(index);
        }
        Ok(groups)
    }

    /// When a copy job starts its next step, once the last one ran from `started_ms` to
    /// `finished_ms` (the caller's monotonic clock, ms): [`Pace::next_start`], the same in
    /// every mode (a background copy's batches, a lazy move's sweep). The job sleeps until
    /// then; the session keeps no state, so the job's own clock is the only timer.
    ///
    /// # Errors
    /// `invalid_argument` when `finished_ms` is before `started_ms`.
    ///
    /// # Example
    /// ```
    /// use shardroute::{session::{MigrationSession, Pace}, Router};
    /// let topology = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}],
    ///     "strategy": {"type": "modulo"}}"#)?;
    /// let session = MigrationSession::of_topology(topology, None, None)?;
    /// // 5%: a step of 10 ms rests 190 ms. 25% with a pause of at least 20 ms: a step of
    /// // 1 ms rests 20 ms (not 3).
    /// assert_eq!(session.resume_at(1_000, 1_010, Pace::default())?, 1_200);
    /// assert_eq!(session.resume_at(1_000, 1_001, Pace::new(250, 20)?)?, 1_021);
    /// assert_eq!(session.resume_at(1_010, 1_000, Pace::default()).unwrap_err().code(), "invalid_argument");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn resume_at(&self, started_ms: u64, finished_ms: u64, pace: Pace) -> Result<u64> {
        pace.next_start(started_ms, finished_ms)
    }

    /// The nodes a query over every key reads, in order, each once when that is safe
    /// ([`Migration::scan_nodes`]); plain: every node that owns a shard, once, in node
    /// order.
    pub fn scan_nodes(&self) -> Vec<&str> {
        match &self.migration {
            Some(migration) => migration.scan_nodes(),
            None => crate::migration::owner_ids(&self.router),
        }
    }

    /// The next `max` units a background copy moves, from the stored `cursor` (0 to
    /// start); store the batch's `next` once its units are copied and marked.
    ///
    /// # Errors
    /// `invalid_argument` in every mode but background (naming the mode), for `max` 0
    /// and for a cursor past the number of moving units.
    pub fn copy_batch(&self, cursor: u32, max: u32) -> Result<CopyBatch<'_>> {
        let (Mode::Background, Some(migration)) = (self.mode, &self.migration) else {
            return Err(Error::argument(format!(
                "copy_batch: only a background session copies units; this one is {}{}",
                self.mode.name(),
                match self.mode {
                    Mode::Lazy => " (it moves keys on first read: lazy_steps)",
                    Mode::Expiration => " (nothing is copied: the old copies expire)",
                    _ => "",
                }
            )));
        };
        if max == 0 {
            return Err(Error::argument("copy_batch: max must be at least 1"));
        }
        let moving = migration.moving_shards()?;
        let total = moving.len() as u32;
        if cursor > total {
            return Err(Error::argument(format!("copy_batch: cursor {cursor} is past the {total} moving units")));
        }
        let end = cursor.saturating_add(max).min(total);
        let units: Vec<MovingShard<'_>> =
            moving.into_iter().skip(cursor as usize).take((end - cursor) as usize).collect();
        Ok(CopyBatch { units, next: (end < total).then_some(end) })
    }

    /// What a write's refusal by a shard fenced at `min_epoch` means.
    ///
    /// # Errors
    /// `invalid_argument` when `min_epoch` admits the fence epoch: a fence did not refuse
    /// that write, so the refusal is something else.
    pub fn fenced(&self, min_epoch: u64) -> Result<Fenced> {
        if min_epoch > self.fence_epoch() {
            Ok(Fenced::Refresh)
        } else {
            Err(Error::argument(format!(
                "fenced: a fence at epoch {min_epoch} admits writes under epoch {}; the refusal is not the fence's",
                self.fence_epoch()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;
    use alloc::vec;

    fn modulo(n: u32, epoch: u64) -> Router {
        let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "s{i}"}}"#)).collect();
        Router::from_json(&format!(
            r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
                "nodes": [{}], "strategy": {{"type": "modulo"}}}}"#,
            nodes.join(",")
        ))
        .unwrap()
    }

    /// A background session of two modulo topologies is refused when it is made, naming
    /// what is missing, not at its first copy_batch.
    #[test]
    fn background_without_fixed_partitions_is_refused_when_made() {
        let migration = Migration::new(modulo(5, 1), modulo(10, 2)).unwrap();
        let err = MigrationSession::new(migration, Mode::Background).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.message().contains("fixed partitions"), "{}", err.message());
        assert!(err.message().contains("modulo to modulo"), "{}", err.message());
        assert!(err.message().contains("lazy"), "{}", err.message());
    }

    /// Expiration: reads look at the old owner until the deadline and not from it on;
    /// writes go to the new owner; nothing is copied; the deadline comes out; an
    /// emptied node is retired at the deadline, not before.
    #[test]
    fn expiration_reads_old_until_the_deadline_then_retires() {
        let shrink = Migration::new(modulo(10, 1), modulo(5, 2)).unwrap();
        let session = MigrationSession::expiration(shrink, 1_000).unwrap();
        assert_eq!(session.mode(), Mode::Expiration);
        // Key 7: s8 of 10, s3 of 5.
        assert_eq!(session.write_plan(7u64).unwrap(), WritePlan { node: "s3", fence_epoch: 2 });
        assert_eq!(session.read_plan_at(7u64, false, 999).unwrap(), ["s8", "s3"]);
        assert_eq!(session.read_plan_at(7u64, false, 1_000).unwrap(), ["s3"]);
        assert_eq!(session.next_deadline(0), Some(1_000));
        assert_eq!(session.next_deadline(1_000), None);
        assert_eq!(session.lazy_steps(7u64).unwrap(), None);
        assert!(session.copy_batch(0, 1).unwrap_err().message().contains("nothing is copied"));
        assert_eq!(session.actions(999, true), []);
        let retired: Vec<&str> =
            session.actions(1_000, false).into_iter().map(|MigrationAction::Retire { node }| node).collect();
        assert_eq!(retired, ["s6", "s7", "s8", "s9", "s10"]);
        // Only an expiration session has a deadline, and it needs one.
        let migration = || Migration::new(modulo(5, 1), modulo(10, 2)).unwrap();
        assert_eq!(MigrationSession::new(migration(), Mode::Expiration).unwrap_err().code(), "invalid_argument");
        let lazy_with_deadline = MigrationSession::of_mode(migration(), Mode::Lazy, Some(5)).unwrap_err();
        assert_eq!(lazy_with_deadline.code(), "invalid_argument");
        // Growing empties no node; a lazy session retires only once told every key moved.
        let lazy =
            MigrationSession::of_mode(Migration::new(modulo(10, 1), modulo(5, 2)).unwrap(), Mode::Lazy, None).unwrap();
        assert_eq!(lazy.actions(u64::MAX, false), []);
        assert_eq!(lazy.actions(0, true).len(), 5);
        assert_eq!(lazy.next_deadline(0), None);
        let grow = MigrationSession::expiration(migration(), 0).unwrap();
        assert_eq!(grow.actions(0, true), []);
    }

    /// The pace's arithmetic at its edges, each expected value worked from the rule
    /// `finished + max(min_pause, ceil(took * (1000 - duty) / duty))`.
    #[test]
    fn the_pace_rests_so_that_the_job_works_at_most_its_duty() {
        let pace = |duty: u32, min_pause: u64| Pace::new(duty, min_pause).unwrap();
        // 5%: 10 ms of work, 190 ms of rest (10 / 200 = 5%).
        assert_eq!(Pace::default().next_start(1_000, 1_010).unwrap(), 1_200);
        assert_eq!(Pace::default(), pace(50, 0));
        // 25%: 10 ms, then 30 ms.
        assert_eq!(pace(250, 0).next_start(0, 10).unwrap(), 40);
        // Duty 1000 never rests but for the shortest pause.
        assert_eq!(pace(1_000, 0).next_start(1_000, 1_500).unwrap(), 1_500);
        assert_eq!(pace(1_000, 20).next_start(1_000, 1_500).unwrap(), 1_520);
        // The shortest pause wins over a shorter rest: 1 ms at 5% is 19 ms, less than 20.
        assert_eq!(pace(50, 20).next_start(1_000, 1_001).unwrap(), 1_021);
        assert_eq!(pace(50, 20).next_start(1_000, 1_002).unwrap(), 1_040);
        // Rounded up, never over the duty: 1 ms at 3 per mille is 997 / 3 = 332.3 -> 333.
        assert_eq!(pace(3, 0).pause_ms(1), 333);
        // An empty step rests only the shortest pause.
        assert_eq!(pace(50, 0).next_start(5_000, 5_000).unwrap(), 5_000);
        // Saturation: the product past u64, the rest past u64, the sum past u64.
        assert_eq!(pace(1, 0).pause_ms(u64::MAX), u64::MAX);
        assert_eq!(pace(1, 0).next_start(0, u64::MAX).unwrap(), u64::MAX);
        assert_eq!(pace(2, 0).pause_ms(u64::MAX / 100), u64::MAX); // 499 x (2^64 / 100) > 2^64
        assert_eq!(pace(1_000, u64::MAX).next_start(1, 1).unwrap(), u64::MAX);
        assert_eq!(pace(50, 0).next_start(u64::MAX - 10, u64::MAX - 5).unwrap(), u64::MAX);
        // Refusals: a duty of 0 or over 1000; a step that ends before it starts.
        for duty in [0, 1_001, u32::MAX] {
            let err = Pace::new(duty, 0).unwrap_err();
            assert_eq!(err.code(), "invalid_argument");
            assert!(err.message().contains("1..=1000"), "{}", err.message());
        }
        assert_eq!(Pace::of(None, Some(7)).unwrap(), pace(50, 7));
        assert_eq!(Pace::of(Some(0), None).unwrap_err().code(), "invalid_argument");
        let err = Pace::default().next_start(1_010, 1_000).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.message().contains("before started_ms"), "{}", err.message());
        // The session's call is the pace's, in every mode.
        let plain = MigrationSession::of_topology(modulo(5, 1), None, None).unwrap();
        assert_eq!(plain.resume_at(1_000, 1_010, pace(50, 0)).unwrap(), 1_200);
    }

    /// Lazy groups: by steps, in first-seen order, indices increasing, staying keys out;
    /// empty in every mode but lazy.
    #[test]
    fn lazy_groups_group_keys_by_their_steps() {
        // Zero-based modulo 5 -> 10: key k from s(k % 5 + 1) to s(k % 10 + 1).
        let lazy = MigrationSession::new(Migration::new(modulo(5, 1), modulo(10, 2)).unwrap(), Mode::Lazy).unwrap();
        // 7: s3 -> s8; 12: stays on s3; 5: s1 -> s6; 17: s3 -> s8; 8: s4 -> s9; 0: stays on s1.
        let groups = lazy.lazy_groups([7u64, 12, 5, 17, 8, 0]).unwrap();
        let flat: Vec<(&str, &str, &str, u64, Vec<u32>)> = groups
            .into_iter()
            .map(|g| (g.steps.read_from, g.steps.write_to, g.steps.retire_from, g.steps.fence_epoch, g.indices))
            .collect();
        assert_eq!(
            flat,
            [("s3", "s8", "s3", 2, vec![0, 3]), ("s1", "s6", "s1", 2, vec![2]), ("s4", "s9", "s4", 2, vec![4])]
        );
        // Each group's steps are lazy_steps' for each of its keys.
        assert_eq!(lazy.lazy_groups([17u64]).unwrap()[0].steps, lazy.lazy_steps(17u64).unwrap().unwrap());
        assert_eq!(lazy.lazy_groups([12u64, 0]).unwrap(), []);
        assert_eq!(lazy.lazy_groups(core::iter::empty::<u64>()).unwrap(), []);
        let plain = MigrationSession::of_topology(modulo(5, 1), None, None).unwrap();
        assert_eq!(plain.lazy_groups([7u64]).unwrap(), []);
        let expiration = MigrationSession::expiration(Migration::new(modulo(5, 1), modulo(10, 2)).unwrap(), 9).unwrap();
        assert_eq!(expiration.lazy_groups([7u64]).unwrap(), []);
    }

    /// Every mode answers every question; the no-migration case needs no caller branch.
    #[test]
    fn of_topology_decides_the_mode() {
        let plain = MigrationSession::of_topology(modulo(5, 1), None, None).unwrap();
        assert_eq!(plain.mode(), Mode::Plain);
        assert_eq!(plain.read_plan(7u64, false).unwrap(), ["s3"]);
        assert_eq!(plain.write_plan(7u64).unwrap(), WritePlan { node: "s3", fence_epoch: 1 });
        assert_eq!(plain.lazy_steps(7u64).unwrap(), None);
        assert_eq!(plain.scan_nodes(), ["s1", "s2", "s3", "s4", "s5"]);
        let lazy = MigrationSession::of_topology(modulo(10, 2), Some(modulo(5, 1)), None).unwrap();
        assert_eq!(lazy.mode(), Mode::Lazy);
        assert_eq!(lazy.read_plan(7u64, false).unwrap(), ["s3", "s8"]);
        let catch_up = MigrationSession::of_topology(modulo(10, 2), None, Some(modulo(5, 1))).unwrap();
        assert_eq!(catch_up.mode(), Mode::CatchUp);
        assert_eq!(catch_up.lazy_steps(7u64).unwrap(), None);
        // A previous two epochs old is stale; a held topology equal but for its epoch is no move.
        let stale = MigrationSession::of_topology(modulo(10, 3), Some(modulo(5, 1)), Some(modulo(10, 2))).unwrap();
        assert_eq!(stale.mode(), Mode::Plain);
    }
}
