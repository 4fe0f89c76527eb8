//! Migrations: moving data from one topology to the next while the application runs.
//!
//! A [`Migration`] holds the router data moves from (*before*) and the router it moves
//! to (*after*), any two topologies (modulo 5 → 10, a vbucket dictionary and its
//! forward map, a ring that gained a node), and answers what a service and a copy job need while
//! both are live:
//!
//! * [`moves`](Migration::moves): whether a key changes node, from where to where;
//! * [`write_target`](Migration::write_target): where a write goes: the new owner,
//!   always, so nothing written during the move is left behind on the old one;
//! * [`read_targets`](Migration::read_targets): where a read looks: the new owner, then
//!   the old one while the key's data may still be there (`moved` false), so a read
//!   sees rows written before the move (old owner) and after it (new owner);
//! * [`moving_shards`](Migration::moving_shards): the units a background copy job works
//!   through, for topologies whose shards are fixed partitions (vbuckets, slots,
//!   partitions, buckets): each shard whose owner changes, with both owners; and
//!   [`moving_keys`](Migration::moving_keys) for a caller's list of keys otherwise.
//!
//! Both ways of moving the seed's messages table fit: **background** (a copy job copies
//! each moving unit, then marks it moved; services read new then old until then) and
//! **lazy** (nothing is copied ahead; the first read of a key under the new topology
//! copies that key's data from the old owner, then marks it moved). Either way a
//! `moved` flag per unit or per key, kept where the data lives, is what `read_targets`
//! asks for; the core keeps no state of its own.
//!
//! ```
//! use shardroute::{migration::Migration, Router};
//! let doc = |n: u32, epoch: u64| {
//!     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "shard_{i}"}}"#)).collect();
//!     format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
//!         "nodes": [{}], "strategy": {{"type": "modulo", "one_based": true}}}}"#, nodes.join(","))
//! };
//! let migration = Migration::new(Router::from_json(&doc(5, 1))?, Router::from_json(&doc(10, 2))?)?;
//! // The seed's `id % n ?: n`: user 7 lives on shard 2 of 5, then on shard 7 of 10.
//! assert_eq!(migration.moves(7u64)?, Some(("shard_2", "shard_7")));
//! assert_eq!(migration.write_target(7u64)?, "shard_7");
//! assert_eq!(migration.read_targets(7u64, false)?, ["shard_7", "shard_2"]);
//! assert_eq!(migration.read_targets(7u64, true)?, ["shard_7"]);
//! // User 12 stays on shard 2: one place to read and write.
//! assert_eq!(migration.moves(12u64)?, None);
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::format;
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::router::Router;
use crate::strategy::compat::couchbase::CouchbaseSpec;
use crate::strategy::compat::kafka::KafkaSpec;
use crate::strategy::compat::redis_cluster::RedisClusterSpec;
use crate::strategy::compat::vshard::VshardSpec;
use crate::strategy::partitioned::multilevel::MultilevelSpec;
use crate::strategy::partitioned::vbucket::VbucketSpec;
use crate::strategy::{Strategy, Variant};
use crate::topology::Topology;

/// A shard whose owner changes: its number (the same in both topologies) and both
/// owners' node ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovingShard<'a> {
    /// The shard (vbucket, slot, partition, bucket).
    pub shard: u32,
    /// The node that owns it in the old topology.
    pub from: &'a str,
    /// The node that owns it in the new one.
    pub to: &'a str,
}

/// A move from one topology to the next (see the module docs).
#[derive(Clone, Debug)]
pub struct Migration {
    before: Router,
    after: Router,
    /// The epoch of the published document that describes the move (see
    /// [`Migration::published_epoch`]).
    published_epoch: u64,
}

impl Migration {
    /// The migration from `before` to `after`.
    ///
    /// # Errors
    /// `stale_epoch` unless `after` has a higher epoch than `before`: a migration goes
    /// forward.
    pub fn new(before: Router, after: Router) -> Result<Migration> {
        if after.epoch() <= before.epoch() {
            return Err(Error::new(
                ErrorKind::StaleEpoch,
                format!(
                    "a migration goes to a newer topology: from epoch {}, to epoch {}",
                    before.epoch(),
                    after.epoch()
                ),
            ));
        }
        let published_epoch = after.epoch();
        Ok(Migration { before, after, published_epoch })
    }

    /// The migration a vbucket dictionary in motion describes: from its `map` to its
    /// `forward_map` (the new side gets the next epoch).
    ///
    /// # Errors
    /// `invalid_argument` for a topology that is not a vbucket dictionary with a
    /// `forward_map`.
    pub fn of_dictionary(router: &Router) -> Result<Migration> {
        let Some(spec) = router.strategy().spec::<VbucketSpec>() else {
            return Err(Error::argument(format!(
                "of_dictionary: needs a vbucket dictionary, not {}",
                router.strategy().type_name()
            )));
        };
        let Some(forward) = &spec.forward else {
            return Err(Error::argument("of_dictionary: the dictionary has no forward_map: nothing is moving"));
        };
        let topology = router.topology();
        let settled = |map, epoch| {
            let spec = VbucketSpec { map: Some(map), forward: None, states: Vec::new(), ..spec.clone() };
            Router::new(Topology { epoch, strategy: spec.into_strategy()?, ..topology.clone() })
        };
        let from = settled(spec.map.clone().unwrap_or_default(), topology.epoch)?;
        let to = settled(forward.clone(), topology.epoch.saturating_add(1))?;
        // The dictionary itself is what clients follow and shards are fenced at.
        Ok(Migration { published_epoch: topology.epoch, ..Migration::new(from, to)? })
    }

    /// The epoch of the published document that describes this move, the epoch shards
    /// are fenced at while it runs: the new topology's for [`Migration::new`], the
    /// dictionary's own for [`Migration::of_dictionary`] (whose `after` side, the
    /// forward map settled, is never published and carries the next epoch only to be
    /// ordered after `before`).
    pub fn published_epoch(&self) -> u64 {
        self.published_epoch
    }

    /// The router data moves from.
    pub fn before(&self) -> &Router {
        &self.before
    }

    /// The router data moves to.
    pub fn after(&self) -> &Router {
        &self.after
    }

    /// `Some((old node, new node))` when the key changes node, `None` when it stays.
    ///
    /// # Errors
    /// As [`Router::route`] for either topology.
    pub fn moves<'k>(&self, key: impl Into<Key<'k>>) -> Result<Option<(&str, &str)>> {
        let key = key.into();
        let (from, to) = (self.before.node(key)?, self.after.node(key)?);
        Ok((from != to).then_some((from, to)))
    }

    /// Where a write of the key goes during the move: the new owner.
    ///
    /// # Errors
    /// As [`Router::route`].
    pub fn write_target<'k>(&self, key: impl Into<Key<'k>>) -> Result<&str> {
        self.after.node(key)
    }

    /// Where a read of the key looks, in order: the new owner, then the old one unless
    /// the key's data has `moved` (or the key does not move at all). A read that looks
    /// at both merges what it finds (rows are in one place or the other, or both while a
    /// copy is under way).
    ///
    /// # Errors
    /// As [`Router::route`] for either topology.
    pub fn read_targets<'k>(&self, key: impl Into<Key<'k>>, moved: bool) -> Result<Vec<&str>> {
        let key = key.into();
        let to = self.after.node(key)?;
        let from = self.before.node(key)?;
        Ok(if moved || from == to { alloc::vec![to] } else { alloc::vec![to, from] })
    }

    /// The keys a read of `key` gathers while clients may hold either topology: every
    /// salted form of it under *after* (salt 0 first), then those under *before* that
    /// *after* lacks. A key that becomes hot is read unsalted as well as salted, because
    /// a client still on *before* writes it unsalted; a key that cools is read salted as
    /// well, until its salted rows are folded back. A key hot on neither side is itself
    /// alone. Each key is then read where [`read_targets`](Migration::read_targets) says.
    pub fn read_keys<'k>(&self, key: impl Into<Key<'k>>) -> Vec<crate::key::OwnedKey> {
        let key = key.into();
        // The salted forms only (no routing): the same keys `salted_keys` gives.
        let forms = |router: &Router| -> Vec<crate::key::OwnedKey> {
            (0..router.fanout(key)).map(|salt| router.salted_key(key, salt)).collect()
        };
        let mut keys = forms(&self.after);
        let order = |a: &crate::key::OwnedKey, b: &crate::key::OwnedKey| {
            crate::strategy::partitioned::key_table::key_order(a.as_key(), b.as_key())
        };
        let mut known = keys.clone();
        known.sort_unstable_by(order);
        keys.extend(
            forms(&self.before).into_iter().filter(|salted| known.binary_search_by(|k| order(k, salted)).is_err()),
        );
        keys
    }

    /// The key a write of `key` with `salt` goes to: its salted form under *after*
    /// ([`Router::salted_key`]), so that writes follow the newest hot-key list.
    pub fn write_key<'k>(&self, key: impl Into<Key<'k>>, salt: u32) -> crate::key::OwnedKey {
        self.after.salted_key(key, salt)
    }

    /// The shards whose owner changes, in shard order, for topologies whose shards are
    /// the same fixed partitions on both sides (vbuckets, slots, partitions, buckets of
    /// the same strategy and count): the units a background copy job moves.
    ///
    /// # Errors
    /// `invalid_argument` when the shards are not stable units between the two (node
    /// indices of modulo, jump or a ring, or different partition counts): then list the
    /// keys that move with [`moving_keys`](Migration::moving_keys).
    pub fn moving_shards(&self) -> Result<Vec<MovingShard<'_>>> {
        let fixed = fixed_partitions(self.before.strategy());
        let same_kind = self.before.strategy().type_name() == self.after.strategy().type_name();
        if !fixed || !same_kind || self.before.shard_range() != self.after.shard_range() {
            return Err(Error::argument(format!(
                "moving_shards: the shards of {} and {} are not the same fixed partitions; list the keys that move (moving_keys)",
                self.before.strategy().type_name(),
                self.after.strategy().type_name()
            )));
        }
        let mut moving = Vec::new();
        for shard in self.before.shard_range() {
            let (from, to) = (self.before.shard_owner(shard)?, self.after.shard_owner(shard)?);
            if from != to {
                moving.push(MovingShard { shard, from, to });
            }
        }
        Ok(moving)
    }

    /// The nodes a query over every key (a time range, a local index, an aggregation)
    /// reads while data moves, in the order to read them, so that no row in motion is
    /// missed. Merge what they return by the rows' identity: a row may be on two nodes
    /// while it is copied, and a node may be listed twice.
    ///
    /// A row moves by a copy to its new node and then a delete from the old one. Read
    /// the old node first, then the new one: if the read of the old node came after the
    /// delete, the copy had already committed, and the later read of the new node finds
    /// it. So the order must put some read of every move's source before some read of
    /// its target:
    ///
    /// * for fixed partitions ([`moving_shards`](Migration::moving_shards): vbuckets,
    ///   slots, partitions) hashed alike on both sides, the moves are known: the shards
    ///   whose owner changes, and the keys a vbucket override sends elsewhere. Every node
    ///   that owns a shard on either side is read once, sources before targets (a
    ///   topological order; ties by node order, *before*'s nodes first). When moves go
    ///   both ways between nodes (a cycle), every node is read once and then every target
    ///   again.
    /// * otherwise (modulo, jump, rings, ranges, or a change of key hashing: which nodes
    ///   lose keys to which is not known without the keys), every node that owns a shard
    ///   under *before*, then every one under *after*: a node on both sides is read
    ///   twice.
    ///
    /// Each read must itself see one moment of its node (one statement, or one
    /// snapshot). A node that owns no shard on either side is not read.
    ///
    /// ```
    /// use shardroute::{migration::Migration, Router};
    /// let doc = |n: u32, epoch: u64| {
    ///     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "s{i}"}}"#)).collect();
    ///     format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{}],
    ///         "strategy": {{"type": "modulo"}}}}"#, nodes.join(","))
    /// };
    /// let migration = Migration::new(Router::from_json(&doc(2, 1))?, Router::from_json(&doc(3, 2))?)?;
    /// assert_eq!(migration.scan_nodes(), ["s1", "s2", "s1", "s2", "s3"]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn scan_nodes(&self) -> Vec<&str> {
        let before = owner_ids(&self.before);
        let after = owner_ids(&self.after);
        // The moves are known per shard only when every key stays in its shard: the same
        // fixed partitions, hashed alike. A key a vbucket override sends to another vbucket
        // moves too, whatever its shards' owners do: each such key is one more move.
        let same_shards = self.before.hashing() == self.after.hashing();
        let (Ok(moving), true) = (self.moving_shards(), same_shards) else {
            return before.into_iter().chain(after).collect();
        };
        // The nodes of both sides once, before's first: the order ties follow.
        let mut seen: alloc::collections::BTreeSet<&str> = before.iter().copied().collect();
        let mut listed = before;
        listed.extend(after.into_iter().filter(|&id| seen.insert(id)));
        let mut sorted: Vec<(&str, u32)> = listed.iter().copied().zip(0u32..).collect();
        sorted.sort_unstable();
        let position = |id: &str| sorted.binary_search_by(|(listed, _)| (*listed).cmp(id)).map(|at| sorted[at].1).ok();
        let mut edges: Vec<(u32, u32)> =
            moving.iter().filter_map(|shard| Some((position(shard.from)?, position(shard.to)?))).collect();
        let overridden = [&self.before, &self.after]
            .into_iter()
            .filter_map(|router| router.strategy().spec::<VbucketSpec>())
            .flat_map(|spec| spec.overrides.iter().map(|(key, _)| key));
        for key in overridden {
            if let Ok(Some((from, to))) = self.moves(key.as_key()) {
                edges.extend(position(from).zip(position(to)));
            }
        }
        edges.sort_unstable();
        edges.dedup();
        // Kahn's algorithm, the smallest ready position first.
        let mut incoming = alloc::vec![0u32; listed.len()];
        for &(_, to) in &edges {
            incoming[to as usize] += 1;
        }
        let mut ready: alloc::collections::BTreeSet<u32> =
            (0u32..).zip(&incoming).filter_map(|(node, &count)| (count == 0).then_some(node)).collect();
        let mut order = Vec::with_capacity(listed.len());
        while let Some(node) = ready.pop_first() {
            order.push(listed[node as usize]);
            let first = edges.partition_point(|&(from, _)| from < node);
            for &(_, to) in edges[first..].iter().take_while(|&&(from, _)| from == node) {
                incoming[to as usize] -= 1;
                if incoming[to as usize] == 0 {
                    ready.insert(to);
                }
            }
        }
        if order.len() == listed.len() {
            return order;
        }
        // A cycle: every node, then every target again.
        let mut target = alloc::vec![false; listed.len()];
        for &(_, to) in &edges {
            target[to as usize] = true;
        }
        let again = listed.iter().zip(target).filter_map(|(&id, target)| target.then_some(id));
        listed.iter().copied().chain(again).collect()
    }

    /// The indices of the keys that change node, in order.
    ///
    /// # Errors
    /// As [`Router::route`] for either topology.
    pub fn moving_keys<'k, I>(&self, keys: I) -> Result<Vec<u32>>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        let mut moving = Vec::new();
        for (index, key) in keys.into_iter().enumerate() {
            let key = key.into();
            // By id: node indices differ between two node lists.
            if self.before.node(key)? != self.after.node(key)? {
                moving.push(index as u32);
            }
        }
        Ok(moving)
    }
}

/// The ids of the nodes that own a shard, in the router's node order.
fn owner_ids(router: &Router) -> Vec<&str> {
    let mut owns = alloc::vec![false; router.nodes().len()];
    for shard in router.shard_range() {
        // A shard without an owner (a Couchbase row of -1) is on no node.
        if let Ok(owner) = router.shard_owner_index(shard) {
            owns[owner as usize] = true;
        }
    }
    router.nodes().iter().zip(owns).filter_map(|(node, owns)| owns.then_some(node.id.as_str())).collect()
}

/// Whether a strategy's shards are fixed partitions (vbuckets, slots, partitions,
/// buckets), the units a background copy moves whole.
fn fixed_partitions(strategy: &Strategy) -> bool {
    strategy.spec::<VbucketSpec>().is_some()
        || strategy.spec::<CouchbaseSpec>().is_some()
        || strategy.spec::<RedisClusterSpec>().is_some()
        || strategy.spec::<MultilevelSpec>().is_some()
        || strategy.spec::<VshardSpec>().is_some()
        || strategy.spec::<KafkaSpec>().is_some()
}
