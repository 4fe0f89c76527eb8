//! What every strategy implements ([`Spec`]: read, write, compile; [`Place`]: answer
//! per key) and the small rules several strategies share.

use alloc::format;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object};
use crate::key::Key;
use crate::node::Node;

/// The parsed parameters of one strategy type: how its `strategy` object is read and
/// written, and what it compiles into.
pub(crate) trait Spec: Sized {
    /// The `type` name in the document.
    const TYPE: &'static str;
    /// Every field the strategy object may have, `type` included.
    const FIELDS: &'static [&'static str];
    /// Whether node weights mean something to this strategy (most ignore them). If not,
    /// a document that sets a weight other than 1 is rejected rather than silently
    /// ignored.
    const WEIGHTED: bool = false;
    /// The compiled form that answers lookups.
    type Placement: Place;
    /// Reads the strategy object (unknown fields are already rejected).
    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<Self>;
    /// Writes the parameters (every one, defaults included) into the canonical object;
    /// `type` is written by the caller.
    fn write(&self, object: &mut Map<alloc::string::String, Value>, nodes: &[Node]);
    /// Builds the placement.
    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Self::Placement>;
    /// The rules between this spec and a node list that a typed value can break (a table
    /// naming a node index past the list, a count the list cannot fill): checked after
    /// [`parse`](Spec::parse) and after every edit, with the document paths parsing
    /// reports. The default has none: the spec does not depend on the list's length.
    fn check(&self, _nodes: &[Node]) -> Result<()> {
        Ok(())
    }
    /// Whether the placement is derived from the node list, so that appending or removing
    /// a node is the whole change (`add_node`, `remove_node`). Table-driven strategies
    /// (the default) are edited through their own operations instead.
    fn follows_node_list(&self) -> bool {
        false
    }
    /// Follows `nodes[index]` leaving the list (`nodes` is the list before): node indices
    /// above it shift down by one. `invalid_topology` when the spec still names the node
    /// (a range it owns), with the path parsing would report. The default has nothing to
    /// renumber.
    fn node_removed(&mut self, _index: u32, _nodes: &[Node]) -> Result<()> {
        Ok(())
    }
}

/// A compiled strategy: what a router asks per key.
pub(crate) trait Place {
    /// The shard of a key.
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32>;
    /// The node index owning a shard returned by [`Place::shard`].
    fn owner(&self, shard: u32) -> u32;
    /// The most replicas every key can get.
    fn max_replicas(&self) -> u32;
    /// The first `count` distinct node indices for a key, owner first, into `out`
    /// (already cleared; `1 <= count <= node count` is checked by the router). The
    /// default is the rule of placements without their own second choice (modulo, jump,
    /// id layouts, range and partition tables): the owner, then the next nodes in list
    /// order, wrapping, over the [`max_replicas`](Place::max_replicas) nodes.
    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        successors(self.owner(self.shard(hashing, key)?), count, self.max_replicas(), out);
        Ok(())
    }
    /// The shard numbers this placement can return (`0..n`, `1..n+1` for 1-based modulo).
    fn shard_range(&self) -> core::ops::Range<u32>;
    /// The shards a scan over keys in `[start, end)` must visit, in key order (`end`
    /// `None`: to the end of the key space). Placements that hash keys scatter every
    /// range over every shard, which is the default; range-partitioned placements
    /// override it.
    fn shards_for_range(&self, _hashing: &KeyHashing, _start: Key<'_>, _end: Option<Key<'_>>) -> Result<Vec<u32>> {
        Ok(self.shard_range().collect())
    }
    /// The node that serves reads of a key: the owner, except where a placement in
    /// motion says otherwise.
    fn read_node(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.owner(self.shard(hashing, key)?))
    }
    /// A replica to read a key from, picked by `turn` among the key's replicas, or the
    /// owner when it has none (placements with replica chains override it; the others
    /// read from the owner).
    fn read_replica(&self, hashing: &KeyHashing, key: Key<'_>, _turn: u32) -> Result<u32> {
        Ok(self.owner(self.shard(hashing, key)?))
    }
    /// The nodes of a shard's chain, owner first, into `out` (empty): what a query plan
    /// reads the shard from ([`crate::scatter`]). Placements with replica chains override
    /// it (the same chains [`read_replica`](Place::read_replica) picks from); the others
    /// give the owner alone.
    fn shard_chain(&self, shard: u32, out: &mut Vec<u32>) {
        out.push(self.owner(shard));
    }
    /// Whether each shard holds one contiguous stretch of the key order, and
    /// [`shards_for_range`](Place::shards_for_range) lists them in that order: a range
    /// query's answers then concatenate ([`crate::scatter::Gather::Concat`]); otherwise
    /// they merge by key.
    fn range_is_contiguous(&self) -> bool {
        false
    }
    /// The nodes a write of a key goes to, first the one that decides (`out` is empty).
    fn write_nodes(&self, hashing: &KeyHashing, key: Key<'_>, out: &mut Vec<u32>) -> Result<()> {
        out.push(self.owner(self.shard(hashing, key)?));
        Ok(())
    }
    /// Whether this placement routes a batch of keys by their hashes alone, faster than
    /// one [`shard`](Place::shard) per key (jump runs many keys through its loop at
    /// once); the router's batch calls then hash the keys and hand the hashes over to
    /// [`shards_of_hashes`](Place::shards_of_hashes). Placements that can refuse a key
    /// must not claim it. The default routes key by key.
    fn batches_hashes(&self) -> bool {
        false
    }
    /// The shards of a stream of key hashes, into `out` (cleared first); called only when
    /// [`batches_hashes`](Place::batches_hashes).
    fn shards_of_hashes<I: Iterator<Item = u64>>(&self, _hashes: I, out: &mut Vec<u32>)
    where
        Self: Sized,
    {
        out.clear();
    }
    /// As [`shards_of_hashes`](Place::shards_of_hashes) for hashes in a slice (integer
    /// keys that are their own hash).
    fn shards_of_hash_slice(&self, hashes: &[u64], out: &mut Vec<u32>)
    where
        Self: Sized,
    {
        self.shards_of_hashes(hashes.iter().copied(), out);
    }
    /// Whether every shard is the index of the node owning it (`owner(s) == s`), so a
    /// batch of shards is a batch of node indices.
    fn shard_is_node(&self) -> bool {
        false
    }
    /// What a lookup of `key` hashed and hit, for [`Router::explain`](crate::Router::explain):
    /// the shard must be [`shard`](Place::shard)'s. The default is the topology's key
    /// hashing and no detail beyond the shard; strategies that hash keys themselves or
    /// read them unhashed override it, and the others where their detail is cheap.
    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        Ok((Some(Hashed::of(hashing, key)), Hit::Shard, self.shard(hashing, key)?))
    }
    /// Decodes an id that carries its shard (id strategies override it).
    fn decode_id(&self, _id: u64) -> Result<DecodedId> {
        Err(Error::argument("this strategy's ids do not carry a shard; decode_id needs an id strategy"))
    }
}

/// An id decoded by a strategy whose ids carry their shard: the shard, and the id's
/// other fields by name (`timestamp`, `sequence`, `local`, `cell`, ...), in layout order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedId {
    /// The shard the id routes to.
    pub shard: u32,
    /// The id's other fields, most significant first.
    pub fields: Vec<(&'static str, u64)>,
}

/// A placement that picks a node from the key's hash alone (ring, maglev, rendezvous,
/// token ring): its shards are node indices and its replicas the next distinct choices
/// for the same hash. Implementing it is the whole [`Place`].
pub(crate) trait NodeFromHash {
    /// The node owning `hash`.
    fn node_of(&self, hash: u64) -> u32;
    /// The first `count` distinct nodes for `hash` (at most the node count), owner
    /// first, into `out`.
    fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>);
    /// How many nodes the placement spreads keys over.
    fn node_count(&self) -> u32;
    /// What `hash` hits (a ring point, a table entry, a token), for
    /// [`Place::explain`]; the default has no detail.
    fn hit(&self, _hash: u64) -> Hit {
        Hit::Shard
    }
}

impl<T: NodeFromHash> Place for T {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.node_of(hashing.hash(key)))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        shard
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        self.replicas_of(hashing.hash(key), count, out);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.node_count()
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.node_count()
    }

    fn shard_is_node(&self) -> bool {
        true
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hashed = Hashed::of(hashing, key);
        let hit = self.hit(hashed.value);
        Ok((Some(hashed), hit, self.node_of(hashing.hash(key))))
    }
}

/// The first `wanted` distinct owners met walking a circular table (ring points, a
/// Maglev table, tokens) clockwise from `start`, into `out` (cleared first): the
/// successor rule of replicas on rings.
pub(crate) fn distinct_successors(owners: &[u32], start: usize, wanted: usize, out: &mut Vec<u32>) {
    out.clear();
    let len = owners.len();
    for step in 0..len {
        if out.len() == wanted {
            break;
        }
        let owner = owners[(start + step) % len];
        if !out.contains(&owner) {
            out.push(owner);
        }
    }
}

/// The replica of a chain `[owner, replicas...]` that read number `turn` goes to, or the
/// owner when there is none.
pub(crate) fn chain_replica(chain: &[u32], turn: u32) -> u32 {
    match chain {
        [owner] => *owner,
        [_, replicas @ ..] => replicas[(turn as usize) % replicas.len()],
        [] => 0,
    }
}

/// Replicas as "the owner, then the next nodes in list order, wrapping": the rule of
/// strategies without their own notion of a second choice (modulo, jump).
pub(crate) fn successors(owner: u32, count: u32, node_count: u32, out: &mut Vec<u32>) {
    out.extend((0..count).map(|step| ((u64::from(owner) + u64::from(step)) % u64::from(node_count)) as u32));
}

/// Refuses a `hashing` section other than the default for a compatibility profile,
/// which hashes keys itself exactly as its system does (`invalid_topology` at
/// `hashing`): a SipHash seed must never look as if it changed a Redis slot.
pub(crate) fn require_default_hashing(kind: &str, how: &str, hashing: &KeyHashing) -> Result<()> {
    if *hashing == KeyHashing::default() {
        Ok(())
    } else {
        Err(json::at(
            "hashing",
            format_args!("the {kind} profile hashes keys {how}, as the real system does; remove the hashing section (it would change nothing)"),
        ))
    }
}

/// A count parameter: 0 is out of range (`invalid_topology`), above `max` a limit.
pub(crate) fn count_param(object: &Object<'_>, name: &str, default: u32, max: u32) -> Result<u32> {
    let Some(value) = object.optional(name) else { return Ok(default) };
    json::u32_capped(&object.path_of(name), value, 1, max)
}

pub(crate) fn check_weights(kind: &str, weighted: bool, nodes: &[Node]) -> Result<()> {
    if weighted {
        return Ok(());
    }
    match nodes.iter().position(|node| node.weight != 1.0) {
        Some(index) => Err(json::at(
            &format!("nodes[{index}].weight"),
            format_args!("the {kind} strategy does not support weights (leave weight at 1)"),
        )),
        None => Ok(()),
    }
}

/// Renumbers node indices after `nodes[removed]` left the list: those above it shift down
/// by one. `Err(position)` names the first index that *is* the removed node (the caller
/// refuses with its own path); the slice may then be partly renumbered.
pub(crate) fn renumber(indices: &mut [u32], removed: u32) -> core::result::Result<(), usize> {
    for (position, index) in indices.iter_mut().enumerate() {
        match (*index).cmp(&removed) {
            core::cmp::Ordering::Equal => return Err(position),
            core::cmp::Ordering::Greater => *index -= 1,
            core::cmp::Ordering::Less => {}
        }
    }
    Ok(())
}

/// The error of a table that still names a node being removed: what parsing the
/// document without the node would say at `path`.
pub(crate) fn still_named(path: &str, nodes: &[Node], index: u32) -> Error {
    json::at(path, format_args!("names node {:?}, which is not in nodes", nodes[index as usize].id))
}
