//! Scatter/gather plans: the shards a query beyond one key visits, one node each, and how
//! their answers merge (DDIA chapter 6, "partitioning and secondary indexes": a local index
//! is queried by scattering to every partition; cross-shard aggregations run in parallel,
//! one request per shard).
//!
//! One call per query: [`Router::scatter`] takes the [`Scope`] (every shard, a key range,
//! or a set of keys) and the [`ReadFrom`] policy, and returns a [`ScatterPlan`]: each shard
//! to visit once, in order, with the node that serves it under the policy and, for a set of
//! keys, the indices of the keys it holds; and the [`Gather`] rule for the answers.
//!
//! The node of a shard under each policy is the single-key rule applied to the shard:
//! * [`ReadFrom::Primary`]: the shard's owner ([`Router::shard_owner`]; for a vbucket in
//!   motion, the node still active, which serves its reads);
//! * [`ReadFrom::Replicas`]: a replica of the shard's chain, picked by `turn` plus the
//!   shard's position in the plan (so one query spreads over the replicas; a caller's
//!   growing `turn` rotates them between queries), or the owner when the chain has none.
//!   Strategies without replica chains (the hashed ones) answer the owner, as
//!   [`Router::read_replica`] does;
//! * [`ReadFrom::Zone`]: the first node of the shard's chain whose `zone` is the one
//!   given, else the owner.

use alloc::string::ToString;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::router::Router;

/// What a query covers.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a, 'k> {
    /// Every shard: a local (document-partitioned) secondary index, an aggregation.
    Every,
    /// Keys in `[start, end)` (`end` `None`: to the end of the key space), as
    /// [`Router::shards_for_range`] reads them.
    Range {
        /// The first key of the range.
        start: Key<'k>,
        /// The first key after it, or `None`.
        end: Option<Key<'k>>,
    },
    /// A set of keys (a multi-get): the shards that hold them, each with its keys.
    Keys(&'a [Key<'k>]),
}

/// Which node of each shard a query reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFrom<'z> {
    /// The owner.
    Primary,
    /// The replicas in turn (the owner where there are none).
    Replicas {
        /// The caller's turn: shard `i` of the plan reads replica `turn + i`.
        turn: u32,
    },
    /// A node in this zone when the shard's chain has one, else the owner.
    Zone(&'z str),
}

impl<'z> ReadFrom<'z> {
    /// The policy by name, as every binding passes it: `"primary"`, `"replicas"` (with
    /// `turn`) or `"zone"` (with `zone`).
    ///
    /// # Errors
    /// `invalid_argument` for another name, or `"zone"` without a zone.
    pub fn from_name(name: &str, turn: u32, zone: Option<&'z str>) -> Result<ReadFrom<'z>> {
        match (name, zone) {
            ("primary", _) => Ok(ReadFrom::Primary),
            ("replicas", _) => Ok(ReadFrom::Replicas { turn }),
            ("zone", Some(zone)) => Ok(ReadFrom::Zone(zone)),
            ("zone", None) => Err(Error::argument("read_from \"zone\" needs a zone")),
            (other, _) => Err(Error::argument(alloc::format!(
                "read_from: expected \"primary\", \"replicas\" or \"zone\", got {other:?}"
            ))),
        }
    }
}

/// How the answers of a plan's shards merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gather {
    /// In any order: every shard's answer is a part of the whole (every shard; a set of
    /// keys, each answer addressed by its key).
    Union,
    /// Concatenated in the plan's order: each shard holds one contiguous stretch of the
    /// range, and the plan lists them in key order (range-partitioned strategies).
    Concat,
    /// Merged by key, each shard's answer sorted: the range's keys are spread over the
    /// shards (hashed strategies, and any whose shards are not contiguous in key order).
    Merge,
}

impl Gather {
    /// `"union"`, `"concat"` or `"merge"`.
    pub fn name(self) -> &'static str {
        match self {
            Gather::Union => "union",
            Gather::Concat => "concat",
            Gather::Merge => "merge",
        }
    }
}

/// One shard of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visit {
    /// The shard.
    pub shard: u32,
    /// The node to ask, as an index into the router's nodes.
    pub node: u32,
    /// For [`Scope::Keys`], the indices of the keys this shard holds, increasing; empty
    /// otherwise.
    pub keys: Vec<u32>,
}

/// Where a query goes and how its answers merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScatterPlan {
    /// Each shard once: in shard order for [`Scope::Every`], key order for
    /// [`Scope::Range`], first-key order for [`Scope::Keys`].
    pub visits: Vec<Visit>,
    /// How the answers merge.
    pub gather: Gather,
}

impl ScatterPlan {
    /// The plan as JSON, as the vectors write it: `{"gather", "visits": [{"shard", "node",
    /// "keys"}]}`, `node` the node's id.
    pub fn to_value(&self, router: &Router) -> serde_json::Value {
        let visits: Vec<serde_json::Value> = self
            .visits
            .iter()
            .map(|visit| {
                serde_json::json!({
                    "shard": visit.shard,
                    "node": router.nodes()[visit.node as usize].id.to_string(),
                    "keys": visit.keys,
                })
            })
            .collect();
        serde_json::json!({"gather": self.gather.name(), "visits": visits})
    }
}

impl Router {
    /// The scatter/gather plan of a query: see the [module docs](crate::scatter).
    ///
    /// # Errors
    /// As [`shards_for_range`](Router::shards_for_range) for a range, as
    /// [`route`](Router::route) for a key (naming its index); `limit_exceeded` for 2^32
    /// keys or more; `no_nodes` for a shard without an owner (a Couchbase row of `-1`).
    ///
    /// # Example
    /// ```
    /// use shardroute::scatter::{Gather, ReadFrom, Scope};
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
    ///     "strategy": {"type": "key_range", "boundaries": [{"utf8": "h"}, {"utf8": "p"}]}}"#)?;
    /// let plan = router.scatter(Scope::Range { start: "i".into(), end: Some("z".into()) }, ReadFrom::Primary)?;
    /// assert_eq!(plan.gather, Gather::Concat);
    /// assert_eq!(plan.visits.iter().map(|visit| visit.shard).collect::<Vec<_>>(), [1, 2]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn scatter(&self, scope: Scope<'_, '_>, read_from: ReadFrom<'_>) -> Result<ScatterPlan> {
        let (visits, gather) = match scope {
            Scope::Every => (self.shard_range().map(|shard| (shard, Vec::new())).collect(), Gather::Union),
            Scope::Range { start, end } => {
                let shards = self.shards_for_range(start, end)?;
                // Shard after shard is key order only when ranges hold whole keys: a
                // `partition_key` rule need not keep key order.
                let ordered = self.placement().range_is_contiguous()
                    && self.hashing().partition_key == crate::hashing::PartitionKey::Whole;
                let gather = if ordered { Gather::Concat } else { Gather::Merge };
                (shards.into_iter().map(|shard| (shard, Vec::new())).collect(), gather)
            }
            Scope::Keys(keys) => (self.shards_of_keys(keys)?, Gather::Union),
        };
        let mut chain = Vec::new();
        let visits = visits
            .into_iter()
            .zip(0u32..)
            .map(|((shard, keys), position)| {
                let node = self.node_of_shard(shard, read_from, position, &mut chain)?;
                Ok(Visit { shard, node, keys })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ScatterPlan { visits, gather })
    }

    /// Each distinct shard of `keys` in the order of its first key, with its key indices.
    fn shards_of_keys(&self, keys: &[Key<'_>]) -> Result<Vec<(u32, Vec<u32>)>> {
        if u32::try_from(keys.len()).is_err() {
            return Err(Error::limit(alloc::format!("{} keys; at most 2^32 - 1", keys.len())));
        }
        // Route every key, then one sort by (shard, key index): each run is a shard with
        // its keys in input order, and a second sort by first key gives the plan's order.
        // O(n log n) in the keys, whatever the number of shards or the order of the keys.
        let mut routed: Vec<(u32, u32)> = Vec::with_capacity(keys.len());
        for (key, index) in keys.iter().zip(0u32..) {
            routed.push((self.route(*key)?, index));
        }
        routed.sort_unstable();
        let mut shards: Vec<(u32, Vec<u32>)> = Vec::new();
        for run in routed.chunk_by(|a, b| a.0 == b.0) {
            shards.push((run[0].0, run.iter().map(|&(_, index)| index).collect()));
        }
        shards.sort_unstable_by_key(|(_, indices)| indices[0]);
        Ok(shards)
    }

    /// The node a plan reads `shard` from (its `position` in the plan spreads replica reads).
    fn node_of_shard(&self, shard: u32, read_from: ReadFrom<'_>, position: u32, chain: &mut Vec<u32>) -> Result<u32> {
        // The owner first: `shard_owner` checks the shard and refuses an empty row.
        let owner = self.shard_owner_index(shard)?;
        if read_from == ReadFrom::Primary {
            return Ok(owner);
        }
        chain.clear();
        self.placement().shard_chain(shard, chain);
        Ok(match read_from {
            ReadFrom::Primary => owner,
            ReadFrom::Replicas { turn } => match chain.as_slice() {
                [_, replicas @ ..] if !replicas.is_empty() => {
                    replicas[(turn.wrapping_add(position) as usize) % replicas.len()]
                }
                _ => owner,
            },
            ReadFrom::Zone(zone) => chain
                .iter()
                .copied()
                .find(|&node| self.nodes()[node as usize].zone.as_deref() == Some(zone))
                .unwrap_or(owner),
        })
    }
}
