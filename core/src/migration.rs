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
//! * [`read_targets`](Migration::read_targets): where a read looks: the old owner while
//!   the key's data may still be there (`moved` false), then the new owner, so a read
//!   sees rows written before the move (old owner) and after it (new owner), and a row
//!   copied between the two reads is found on the new owner, read last;
//! * [`moving_shards`](Migration::moving_shards): the units a background copy job works
//!   through, for topologies whose shards are fixed partitions (vbuckets, slots,
//!   partitions, buckets): each shard whose owner changes, with both owners; and
//!   [`moving_keys`](Migration::moving_keys) for a caller's list of keys otherwise.
//!
//! Both ways of moving a messages table fit: **background** (a copy job copies
//! each moving unit, then marks it moved; services read old then new until then) and
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
//! // The messages table's `id % n ?: n`: user 7 lives on shard 2 of 5, then on shard 7 of 10.
//! assert_eq!(migration.moves(7u64)?, Some(("shard_2", "shard_7")));
//! assert_eq!(migration.write_target(7u64)?, "shard_7");
//! assert_eq!(migration.read_targets(7u64, false)?, ["shard_2", "shard_7"]);
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
use crate::strategy::hashed::jump::JumpSpec;
use crate::strategy::hashed::modulo::ModuloSpec;
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

    /// Where a read of the key looks, in order: the old owner, then the new one; only
    /// the new one when the key's data has `moved` (or the key does not move at all). A
    /// read that looks at both merges what it finds by the rows' identity (rows are in
    /// one place or the other, or both while a copy is under way).
    ///
    /// The order is the one every reader must follow, decided here once: **old owner
    /// first**. Data leaves the old owner by a copy to the new owner and then a delete
    /// (the background copy of a unit, the lazy move of a key); writes go to the new
    /// owner only. Reading the new owner first can miss a row: the new owner is read
    /// before the copy lands, the old one after the delete. Reading the old owner first
    /// cannot: if that read came after the delete, the copy had committed, and the later
    /// read of the new owner finds it (as [`scan_nodes`](Migration::scan_nodes) reads
    /// sources before targets).
    ///
    /// # Errors
    /// As [`Router::route`] for either topology.
    pub fn read_targets<'k>(&self, key: impl Into<Key<'k>>, moved: bool) -> Result<Vec<&str>> {
        let key = key.into();
        let to = self.after.node(key)?;
        let from = self.before.node(key)?;
        // Old owner first: see above (a copy-then-delete between two reads is seen on the
        // new owner, read last).
        Ok(if moved || from == to { alloc::vec![to] } else { alloc::vec![from, to] })
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

    /// Why a copy of whole units (vbuckets, slots) would miss keys: the reason some keys
    /// change unit between the two sides, or `None` when every key keeps its unit and only
    /// units change owner. A key changes unit when the key hashing differs (every key), the
    /// tenant entries differ (a spread tenant's keys) or the vbucket overrides differ (the
    /// listed keys); [`moving_shards`](Migration::moving_shards) sees none of these, since
    /// it compares the units' owners.
    pub fn units_differ(&self) -> Option<&'static str> {
        if self.before.hashing() != self.after.hashing() {
            return Some("the key hashing differs, so every key may change unit");
        }
        if self.before.topology().tenants() != self.after.topology().tenants() {
            return Some("the tenant entries differ, so a spread tenant's keys change unit");
        }
        fn overrides(router: &Router) -> Option<&[(crate::key::OwnedKey, u32)]> {
            router.strategy().spec::<VbucketSpec>().map(|spec| spec.overrides.as_slice())
        }
        if overrides(&self.before) != overrides(&self.after) {
            return Some("the vbucket overrides differ, so the keys they list change unit");
        }
        None
    }

    /// The shards whose owner changes, in shard order, for topologies whose shards are
    /// the same fixed partitions on both sides (vbuckets, slots, partitions, buckets of
    /// the same strategy and count): the units a background copy job moves.
    ///
    /// It compares the units' owners only: keys that change unit between the two (another
    /// hashing, other tenant entries, other vbucket overrides) move too, unlisted here;
    /// [`units_differ`](Migration::units_differ) says whether any do (a background copy
    /// session refuses such a pair).
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
    /// while it is copied.
    ///
    /// A row moves by a copy to its new node and then a delete from the old one. Read
    /// the old node first, then the new one: if the read of the old node came after the
    /// delete, the copy had already committed, and the later read of the new node finds
    /// it (the reason [`read_targets`](Migration::read_targets) reads the old owner
    /// first). So the order must put some read of every move's source before some read
    /// of its target. When the moves between nodes are known, every node that owns a
    /// shard on either side is **read once**, sources before targets (a topological
    /// order; ties by node order, *before*'s nodes first, then the nodes only *after*
    /// has). The moves are known:
    ///
    /// * for fixed partitions ([`moving_shards`](Migration::moving_shards): vbuckets,
    ///   slots, partitions) hashed alike on both sides: the shards whose owner changes,
    ///   and the keys a vbucket override sends elsewhere;
    /// * for modulo on both sides, hashed alike: shard `s` of *n* can send keys to shard
    ///   `t` of *m* only when `s ≡ t (mod gcd(n, m))` (5 → 10: node *k* to node *k + 5*
    ///   only, so each of the 10 nodes is read once);
    /// * for jump on both sides, hashed alike: growing, keys go only to the new buckets;
    ///   shrinking, only from the removed ones.
    ///
    /// (At most [`MAX_SCAN_PAIRS`](crate::limits::MAX_SCAN_PAIRS) shard pairs are weighed for modulo and jump; past that,
    /// the moves count as unknown.) When moves go both ways between nodes (a cycle), or
    /// are not known (rings, ranges, a change of key hashing or of strategy), reading
    /// each node once cannot be made safe: then every node that owns a shard under
    /// *before*, then every one under *after*, or, for a cycle, every node once and then
    /// every target again, whichever is shorter (the first on a tie). A node on both
    /// sides is then read twice.
    ///
    /// Each read must itself see one moment of its node (one statement, or one
    /// snapshot). A node that owns no shard on either side is not read.
    ///
    /// ```
    /// use shardroute::{migration::Migration, Router};
    /// let doc = |n: u32, epoch: u64, strategy: &str| {
    ///     let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "s{i}"}}"#)).collect();
    ///     format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{}],
    ///         "strategy": {{"type": "{strategy}"}}}}"#, nodes.join(","))
    /// };
    /// let grow = |a, b, strategy| Migration::new(Router::from_json(&doc(a, 1, strategy))?, Router::from_json(&doc(b, 2, strategy))?);
    /// // Modulo 2 -> 4: s1 -> s3 and s2 -> s4 only; each node once.
    /// assert_eq!(grow(2, 4, "modulo")?.scan_nodes(), ["s1", "s2", "s3", "s4"]);
    /// // Modulo 2 -> 3: keys move both ways between s1 and s2; both are read twice.
    /// assert_eq!(grow(2, 3, "modulo")?.scan_nodes(), ["s1", "s2", "s1", "s2", "s3"]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn scan_nodes(&self) -> Vec<&str> {
        let before = owner_ids(&self.before);
        let after = owner_ids(&self.after);
        let both_sides = || before.iter().chain(&after).copied().collect::<Vec<&str>>();
        let Some(moves) = self.known_moves() else {
            return both_sides();
        };
        // The nodes of both sides once, before's first: the order ties follow.
        let mut seen: alloc::collections::BTreeSet<&str> = before.iter().copied().collect();
        let mut listed = before.clone();
        listed.extend(after.iter().copied().filter(|&id| seen.insert(id)));
        let mut sorted: Vec<(&str, u32)> = listed.iter().copied().zip(0u32..).collect();
        sorted.sort_unstable();
        let position = |id: &str| sorted.binary_search_by(|(listed, _)| (*listed).cmp(id)).map(|at| sorted[at].1).ok();
        let mut edges: Vec<(u32, u32)> =
            moves.iter().filter_map(|&(from, to)| Some((position(from)?, position(to)?))).collect();
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
        // A cycle: every node, then every target again, or both sides, whichever is shorter.
        let mut target = alloc::vec![false; listed.len()];
        for &(_, to) in &edges {
            target[to as usize] = true;
        }
        let again = listed.iter().zip(target).filter_map(|(&id, target)| target.then_some(id));
        let cycle: Vec<&str> = listed.iter().copied().chain(again).collect();
        let sides = both_sides();
        if sides.len() <= cycle.len() {
            sides
        } else {
            cycle
        }
    }

    /// Every (old node, new node) pair keys may move between, a superset of the real
    /// moves, when it is known without the keys (see [`scan_nodes`](Migration::scan_nodes)).
    fn known_moves(&self) -> Option<Vec<(&str, &str)>> {
        if self.before.hashing() != self.after.hashing() {
            return None;
        }
        // A placed tenant's keys route over its group, not by the shard patterns below
        // (and a spread tenant's by a salted key): no shortcut then.
        if self.before.topology().tenants().is_some() || self.after.topology().tenants().is_some() {
            return None;
        }
        if let Ok(moving) = self.moving_shards() {
            let mut moves: Vec<(&str, &str)> = moving.iter().map(|shard| (shard.from, shard.to)).collect();
            // A key a vbucket override sends to another vbucket moves too, whatever its
            // shards' owners do: each such key is one more move.
            let overridden = [&self.before, &self.after]
                .into_iter()
                .filter_map(|router| router.strategy().spec::<VbucketSpec>())
                .flat_map(|spec| spec.overrides.iter().map(|(key, _)| key));
            for key in overridden {
                if let Ok(Some(pair)) = self.moves(key.as_key()) {
                    moves.push(pair);
                }
            }
            return Some(moves);
        }
        let (before, after) = (self.before.shard_range(), self.after.shard_range());
        let (n, m) = (before.len() as u64, after.len() as u64);
        let both = |is: fn(&Strategy) -> bool| is(self.before.strategy()) && is(self.after.strategy());
        let may_move: &dyn Fn(u32, u32) -> bool = if both(|s| s.spec::<ModuloSpec>().is_some()) {
            // A key's shard is its hash modulo the count (1-based shards too: n ≡ 0), so
            // shard s of n and shard t of m share keys only when s ≡ t (mod gcd(n, m)).
            let g = gcd(n, m);
            &move |s, t| u64::from(s) % g == u64::from(t) % g
        } else if both(|s| s.spec::<JumpSpec>().is_some()) {
            // Jump moves keys only into new buckets (growing) or out of removed ones.
            &move |s, t| s == t || (m > n && u64::from(t) >= n) || (m < n && u64::from(s) >= m)
        } else {
            return None;
        };
        if n.saturating_mul(m) > crate::limits::MAX_SCAN_PAIRS {
            return None;
        }
        let mut moves = Vec::new();
        for s in before {
            for t in after.clone() {
                if may_move(s, t) {
                    let (from, to) = (self.before.shard_owner(s).ok()?, self.after.shard_owner(t).ok()?);
                    if from != to {
                        moves.push((from, to));
                    }
                }
            }
        }
        Some(moves)
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

/// Where keys were found: a node (by id) or a shard (by number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder<'a> {
    /// A node id of the topology.
    Node(&'a str),
    /// A shard number in the topology's [`shard_range`](Router::shard_range).
    Shard(u32),
}

/// The answer of [`misplaced`]: the keys their holder does not own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misplaced {
    /// The indices of the misplaced keys in the list given, in order.
    pub indices: Vec<u32>,
    /// How many keys were checked (the list's length).
    pub checked: u32,
}

impl Misplaced {
    /// How many keys are misplaced (`indices.len()`).
    pub fn count(&self) -> u32 {
        self.indices.len() as u32
    }
}

/// The consistency check: of `keys` found on `holder` (every key read from a node or a
/// shard, or a sample of them), those that `holder` does not own under `router` (an
/// epoch's topology), by index, with the number checked. A row whose key is listed is on
/// a node (or shard) that does not own it: a copy left behind by a move, or a write
/// routed under an older epoch. Each key is routed as it is stored (a hot key's salted
/// form as the salted key); a node is compared by id with [`Router::node`], a shard by
/// number with [`Router::route`]. The same as
/// `keys.filter(|key| router.node(key) != holder)`, with the refusals below.
///
/// Used after a move (0 misplaced on every node under the final epoch), before retiring
/// a node (every key it still holds is misplaced: a lazy move is over when none is
/// left), and on a sample, as a periodic check.
///
/// # Errors
/// `invalid_argument` for a node id the topology does not list, or a shard outside its
/// [`shard_range`](Router::shard_range) (a typo would otherwise report every key);
/// `limit_exceeded` for more than [`MAX_SAMPLE_KEYS`](crate::limits::MAX_SAMPLE_KEYS)
/// keys (checked before any is routed); as [`Router::route`] for a key (`invalid_key`).
///
/// # Example
/// ```
/// use shardroute::{migration::{misplaced, Holder}, Router};
/// let nodes: Vec<String> = (1..=10).map(|i| format!(r#"{{"id": "shard_{i}"}}"#)).collect();
/// let ten = Router::from_json(&format!(r#"{{"format": "shardroute/1", "epoch": 2, "hashing": {{"integers": "identity"}},
///     "nodes": [{}], "strategy": {{"type": "modulo", "one_based": true}}}}"#, nodes.join(",")))?;
/// // Users found on shard_2 after 5 -> 10: 2 and 12 belong there, 7 belongs on shard_7.
/// let found = misplaced(&ten, Holder::Node("shard_2"), [2u64, 7, 12])?;
/// assert_eq!((found.indices, found.checked), (vec![1], 3));
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn misplaced<'k, I>(router: &Router, holder: Holder<'_>, keys: I) -> Result<Misplaced>
where
    I: IntoIterator,
    I::Item: Into<Key<'k>>,
{
    let mut check = MisplacedCheck::new(router, holder)?;
    let keys = keys.into_iter();
    if keys.size_hint().0 > crate::limits::MAX_SAMPLE_KEYS as usize {
        return Err(too_many_keys());
    }
    for key in keys {
        check.check(key)?;
    }
    Ok(check.finish())
}

/// [`misplaced`] one key at a time, for a caller that streams the keys it reads (a
/// binding converting a large iterable in chunks): the same refusals, the same answer.
#[derive(Clone, Debug)]
pub struct MisplacedCheck<'a> {
    router: &'a Router,
    holder: Holder<'a>,
    found: Misplaced,
}

impl<'a> MisplacedCheck<'a> {
    /// A check of the keys found on `holder` under `router`.
    ///
    /// # Errors
    /// `invalid_argument` as [`misplaced`] (a node the topology does not list, a shard
    /// outside its range).
    pub fn new(router: &'a Router, holder: Holder<'a>) -> Result<MisplacedCheck<'a>> {
        match holder {
            Holder::Node(id) if !router.nodes().iter().any(|node| node.id == id) => {
                return Err(Error::argument(format!("misplaced: node {id:?} is not a node of the topology")));
            }
            Holder::Shard(shard) if !router.shard_range().contains(&shard) => {
                let range = router.shard_range();
                return Err(Error::argument(format!(
                    "misplaced: shard {shard} is not in {}..{}",
                    range.start, range.end
                )));
            }
            _ => {}
        }
        Ok(MisplacedCheck { router, holder, found: Misplaced { indices: Vec::new(), checked: 0 } })
    }

    /// Checks the next key: `true` when the holder does not own it (its index is then
    /// listed).
    ///
    /// # Errors
    /// `limit_exceeded` past [`MAX_SAMPLE_KEYS`](crate::limits::MAX_SAMPLE_KEYS) keys; as
    /// [`Router::route`] for the key.
    pub fn check<'k>(&mut self, key: impl Into<Key<'k>>) -> Result<bool> {
        if self.found.checked == crate::limits::MAX_SAMPLE_KEYS {
            return Err(too_many_keys());
        }
        let key = key.into();
        let owns = match self.holder {
            Holder::Node(id) => self.router.node(key)? == id,
            Holder::Shard(shard) => self.router.route(key)? == shard,
        };
        if !owns {
            self.found.indices.push(self.found.checked);
        }
        self.found.checked += 1;
        Ok(!owns)
    }

    /// The answer so far.
    pub fn finish(self) -> Misplaced {
        self.found
    }
}

fn too_many_keys() -> Error {
    let limit = crate::limits::MAX_SAMPLE_KEYS;
    Error::new(
        ErrorKind::LimitExceeded,
        format!("misplaced: more than {limit} keys (MAX_SAMPLE_KEYS); check a sample, or in batches"),
    )
}

/// Greatest common divisor (`gcd(0, m) = m`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The ids of the nodes that own a shard, in the router's node order.
pub(crate) fn owner_ids(router: &Router) -> Vec<&str> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    fn hashed(strategy: &str, n: u32, epoch: u64, one_based: bool) -> Router {
        let nodes: Vec<String> = (1..=n).map(|i| format!(r#"{{"id": "s{i}"}}"#)).collect();
        let extra = if one_based { r#", "one_based": true"# } else { "" };
        Router::from_json(&format!(
            r#"{{"format": "shardroute/1", "epoch": {epoch}, "hashing": {{"integers": "identity"}},
                "nodes": [{}], "strategy": {{"type": "{strategy}"{extra}}}}}"#,
            nodes.join(",")
        ))
        .unwrap()
    }

    /// Every key that moves has a read of its old node before a read of its new one, for
    /// modulo and jump between 1 and 12 nodes (both numberings for modulo), and the nodes
    /// are read once whenever no two nodes trade keys both ways.
    #[test]
    fn scan_nodes_reads_sources_before_targets() {
        for (strategy, one_based) in [("modulo", false), ("modulo", true), ("jump", false)] {
            for n in 1..=12u32 {
                for m in 1..=12u32 {
                    if n == m {
                        continue;
                    }
                    let migration =
                        Migration::new(hashed(strategy, n, 1, one_based), hashed(strategy, m, 2, one_based)).unwrap();
                    let order = migration.scan_nodes();
                    let mut pairs = alloc::collections::BTreeSet::new();
                    for key in 0..5_000u64 {
                        if let Some((from, to)) = migration.moves(key).unwrap() {
                            let first = order.iter().position(|&id| id == from).unwrap();
                            let last = order.iter().rposition(|&id| id == to).unwrap();
                            assert!(first < last, "{strategy} {n} -> {m}: key {key} {from} -> {to} in {order:?}");
                            pairs.insert((from, to));
                        }
                    }
                    let cycle = pairs.iter().any(|&(a, b)| pairs.contains(&(b, a)));
                    let nodes = n.max(m) as usize;
                    if !cycle && strategy == "jump" {
                        assert_eq!(order.len(), nodes, "{strategy} {n} -> {m}: {order:?}");
                    }
                    if n * 2 == m || m * 2 == n {
                        assert_eq!(order.len(), nodes, "{strategy} {n} -> {m}: each node once: {order:?}");
                    }
                }
            }
        }
    }

    /// The consistency check against its naive equivalent, by node and by shard, and
    /// its refusals.
    #[test]
    fn misplaced_is_the_keys_the_holder_does_not_own() {
        let ten = hashed("modulo", 10, 2, true);
        let keys: Vec<u64> = (0..200).collect();
        for node in ["s1", "s4", "s10"] {
            let found = misplaced(&ten, Holder::Node(node), keys.iter().copied()).unwrap();
            let naive: Vec<u32> =
                (0u32..).zip(&keys).filter(|(_, &k)| ten.node(k).unwrap() != node).map(|(i, _)| i).collect();
            assert_eq!(found, Misplaced { indices: naive, checked: 200 });
        }
        let found = misplaced(&ten, Holder::Shard(3), [3u64, 13, 4]).unwrap();
        assert_eq!((found.count(), found.indices), (1, alloc::vec![2]));
        assert_eq!(misplaced(&ten, Holder::Node("s11"), [1u64]).unwrap_err().code(), "invalid_argument");
        // One-based modulo numbers its shards 1..=10.
        assert_eq!(ten.shard_range(), 1..11);
        for outside in [0, 11] {
            assert_eq!(misplaced(&ten, Holder::Shard(outside), [1u64]).unwrap_err().code(), "invalid_argument");
        }
        // Refused before routing when the count is known, at the first key past the limit
        // when it is not (an iterator of unknown length).
        let too_many = || core::iter::repeat_n(1u64, crate::limits::MAX_SAMPLE_KEYS as usize + 1);
        assert_eq!(misplaced(&ten, Holder::Node("s1"), too_many()).unwrap_err().code(), "limit_exceeded");
        let unknown_length = too_many().filter(|_| true);
        assert_eq!(misplaced(&ten, Holder::Node("s1"), unknown_length).unwrap_err().code(), "limit_exceeded");
    }

    /// The read plan puts the old owner first: the reason is in `read_targets`' docs.
    #[test]
    fn read_targets_old_owner_first() {
        let migration = Migration::new(hashed("modulo", 5, 1, true), hashed("modulo", 10, 2, true)).unwrap();
        assert_eq!(migration.read_targets(7u64, false).unwrap(), ["s2", "s7"]);
    }
}
