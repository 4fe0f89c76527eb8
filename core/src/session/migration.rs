//! The migration session: what a service and a copy job do while data moves from one
//! topology to the next (seed 002's two ways), decided once, for every language.
//!
//! Built on a [`Migration`] (any two topologies, or a vbucket dictionary in motion), in
//! one of two [`Mode`]s:
//!
//! * **background**: a copy job moves the moving units (vbuckets, slots, partitions) one
//!   batch at a time from a cursor it stores ([`MigrationSession::copy_batch`]: resumable
//!   after a crash from the stored cursor), marking each unit moved; services read the new
//!   owner, then the old one until the unit is marked;
//! * **lazy**: nothing is copied ahead; the first read of a key under the new topology
//!   moves that key ([`MigrationSession::lazy_steps`]: read the old owner, write the new
//!   one, retire the old copy), and marks it moved.
//!
//! Either way a write goes to the new owner under the **fence epoch** (the epoch of the
//! published document that describes the move: the new topology, or the dictionary in
//! motion itself): a shard that holds a fence `min_epoch` refuses a write routed under
//! an older epoch, and [`MigrationSession::fenced`] says what such a refusal means
//! (follow the topology, re-plan, retry). The session keeps no state: the `moved` marks and
//! the cursor live where the data lives.

use alloc::format;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::migration::{Migration, MovingShard};

/// How the data moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A copy job moves every moving unit ahead of the services.
    Background,
    /// The first read of a key under the new topology moves it.
    Lazy,
}

impl Mode {
    /// `"background"` or `"lazy"`.
    ///
    /// # Errors
    /// `invalid_argument` for anything else.
    pub fn from_name(name: &str) -> Result<Mode> {
        match name {
            "background" => Ok(Mode::Background),
            "lazy" => Ok(Mode::Lazy),
            other => Err(Error::argument(format!("mode: expected \"background\" or \"lazy\", got {other:?}"))),
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

/// A migration in one mode (see the module docs).
#[derive(Clone, Debug)]
pub struct MigrationSession {
    migration: Migration,
    mode: Mode,
}

impl MigrationSession {
    /// The session of `migration` in `mode`.
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
    /// let session = MigrationSession::new(migration, Mode::Lazy);
    /// let steps = session.lazy_steps(7u64)?.expect("user 7 moves");
    /// assert_eq!((steps.read_from, steps.write_to, steps.fence_epoch), ("shard_2", "shard_7", 2));
    /// assert_eq!(session.lazy_steps(12u64)?, None);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn new(migration: Migration, mode: Mode) -> MigrationSession {
        MigrationSession { migration, mode }
    }

    /// The migration.
    pub fn migration(&self) -> &Migration {
        &self.migration
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The epoch writes run under: that of the published document describing the move
    /// ([`Migration::published_epoch`]: the new topology's, or a dictionary in motion's own).
    pub fn fence_epoch(&self) -> u64 {
        self.migration.published_epoch()
    }

    /// Where a read of `key` looks, in order: the new owner, then the old one unless the
    /// key (background: its unit) is marked `moved`.
    ///
    /// # Errors
    /// As [`Migration::read_targets`].
    pub fn read_plan<'k>(&self, key: impl Into<Key<'k>>, moved: bool) -> Result<Vec<&str>> {
        self.migration.read_targets(key, moved)
    }

    /// Where a write of `key` goes, under the fence epoch.
    ///
    /// # Errors
    /// As [`Migration::write_target`].
    pub fn write_plan<'k>(&self, key: impl Into<Key<'k>>) -> Result<WritePlan<'_>> {
        Ok(WritePlan { node: self.migration.write_target(key)?, fence_epoch: self.fence_epoch() })
    }

    /// The lazy move of `key` when it changes node (its first read under the new
    /// topology), or `None` when it stays.
    ///
    /// # Errors
    /// `invalid_argument` in background mode (the copy job moves units); otherwise as
    /// [`Migration::moves`].
    pub fn lazy_steps<'k>(&self, key: impl Into<Key<'k>>) -> Result<Option<LazySteps<'_>>> {
        if self.mode != Mode::Lazy {
            return Err(Error::argument("lazy_steps: a background migration moves units (copy_batch), not keys"));
        }
        let fence_epoch = self.fence_epoch();
        Ok(self.migration.moves(key)?.map(|(from, to)| LazySteps {
            read_from: from,
            write_to: to,
            retire_from: from,
            fence_epoch,
        }))
    }

    /// The next `max` units a background copy moves, from the stored `cursor` (0 to
    /// start); store the batch's `next` once its units are copied and marked.
    ///
    /// # Errors
    /// `invalid_argument` in lazy mode, for `max` 0, for a cursor past the number of
    /// moving units, and when the two topologies' shards are not the same fixed units
    /// ([`Migration::moving_shards`]).
    pub fn copy_batch(&self, cursor: u32, max: u32) -> Result<CopyBatch<'_>> {
        if self.mode != Mode::Background {
            return Err(Error::argument("copy_batch: a lazy migration moves keys on first read (lazy_steps)"));
        }
        if max == 0 {
            return Err(Error::argument("copy_batch: max must be at least 1"));
        }
        let moving = self.migration.moving_shards()?;
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
