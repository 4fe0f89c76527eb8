//! Hash-range sharding: sorted boundaries over the 64-bit hash space, as in DynamoDB's
//! partitions (DeCandia et al., SOSP 2007, and the DynamoDB paper, USENIX ATC 2022),
//! YugabyteDB's hash-sharded tablets and Cassandra's token ranges.
//!
//! **Algorithm.** A key is hashed with the topology's `hashing` (hash tags and the
//! integer rule apply), and `N` strictly increasing boundaries cut the hash space
//! `0..2^64` into `N + 1` ranges `[0, b0), [b0, b1), ..., [b(N-1), 2^64)`; `ranges[i]`
//! names the node that owns range `i` (a node may own many). The shard of a key is its
//! range index, the number of boundaries at or below its hash, by binary search.
//!
//! **Guarantees.** Balance: a well-mixed hash spreads any key distribution, sequential
//! ids included, over ranges in proportion to their width, so equal-width ranges (the
//! default, [`uniform_boundaries`]) hold equal shares of keys in expectation, and no
//! range is hot because keys are adjacent. The price is locality: a range scan over
//! keys visits every shard ([`Router::shards_for_range`](crate::Router::shards_for_range)
//! returns them all, as for the other hashed strategies). What moves is what operations move (see [`ranges`]):
//! splitting a range moves nothing unless its upper half gets another node, then only
//! the keys hashing at or above the split point; a merge moves only the second range's
//! keys; adding or removing a node moves nothing by itself.
//!
//! **Replicas** are the owner, then the next nodes in node-list order, wrapping (as for
//! `modulo`), so operations on other ranges never change a range's replicas. Every key
//! gets up to the node count of replicas. Weights are not supported (ranges are
//! assigned explicitly).
//!
//! **The document.**
//!
//! ```json
//! {"type": "hash_range", "boundaries": [4611686018427387904, "9223372036854775808"], "ranges": ["a", "b", "c"]}
//! ```
//!
//! | field | type | default | meaning |
//! |---|---|---|---|
//! | `boundaries` | array of u64 (number or decimal string), at most 2^20 - 1 | equal widths: `floor(i * 2^64 / R)` for `i` in `1..R` | strictly increasing, not 0 (range 0 would be empty) |
//! | `ranges` | array of node ids, one more than `boundaries` | round-robin over `nodes`; with no `boundaries` either, one range per node (`R` = node count) | the owner of each range |
//!
//! So `{"type": "hash_range"}` gives each node one equal slice of the hash space, in
//! list order. The canonical form writes both fields, boundaries above 2^53 - 1 as
//! decimal strings.
//!
//! **Cost.** One hash and `O(log N)` integer comparisons per key, no allocation; memory
//! 12 bytes per range.
//!
//! # Example
//! ```
//! use shardroute::Router;
//! let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
//!     "hashing": {"integers": "identity"},
//!     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}],
//!     "strategy": {"type": "hash_range"}}"#)?;
//! // Four equal ranges; with identity hashing an integer key is its own hash.
//! assert_eq!(router.route(0u64)?, 0);
//! assert_eq!(router.node(1u64 << 62)?, "b");
//! assert_eq!(router.node(u64::MAX)?, "d");
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::node::Node;
use crate::strategy::partitioned::key_range::owner_ids;
use crate::strategy::partitioned::ranges::{self, Position, RangePoint};
use crate::strategy::spec::{renumber, still_named, Place, Spec};

/// `{"type": "hash_range", "boundaries": [...], "ranges": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashRangeSpec {
    /// The `N` boundary hashes, strictly increasing, the first above 0.
    pub boundaries: Vec<u64>,
    /// The owner (node index) of each of the `N + 1` ranges.
    pub ranges: Vec<u32>,
}

impl HashRangeSpec {
    fn check_table(&self, node_count: usize) -> Result<()> {
        ranges::check_table(self.boundaries.len(), &self.ranges, node_count, |i| self.boundaries[i], |a, b| a < b, &0)
    }
}

/// The `ranges - 1` boundaries that cut `0..2^64` into `ranges` intervals of equal width:
/// boundary `i` is `floor(i * 2^64 / ranges)`, so widths differ by at most one. Empty for
/// `ranges <= 1`.
///
/// # Example
/// ```
/// use shardroute::strategy::partitioned::hash_range::uniform_boundaries;
/// assert_eq!(uniform_boundaries(4), [1 << 62, 1 << 63, 3 << 62]);
/// assert_eq!(uniform_boundaries(3), [6148914691236517205, 12297829382473034410]);
/// assert!(uniform_boundaries(1).is_empty());
/// ```
pub fn uniform_boundaries(ranges: u32) -> Vec<u64> {
    (1..u128::from(ranges.max(1))).map(|i| ((i << 64) / u128::from(ranges)) as u64).collect()
}

impl Spec for HashRangeSpec {
    const TYPE: &'static str = "hash_range";
    const FIELDS: &'static [&'static str] = &["type", "boundaries", "ranges"];
    type Placement = HashRanges;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<HashRangeSpec> {
        let owners = match object.optional("ranges") {
            Some(value) => Some(ranges::parse_owner_ids(&object.path_of("ranges"), value, nodes)?),
            None => None,
        };
        let boundaries = match object.optional("boundaries") {
            Some(value) => Some(ranges::parse_boundaries(&object.path_of("boundaries"), value, json::u64)?),
            None => None,
        };
        let (boundaries, ranges) = match (boundaries, owners) {
            (Some(boundaries), Some(owners)) => (boundaries, owners),
            (Some(boundaries), None) => {
                let owners = ranges::round_robin(boundaries.len() + 1, nodes.len());
                (boundaries, owners)
            }
            (None, Some(owners)) => (uniform_boundaries(owners.len() as u32), owners),
            (None, None) => (uniform_boundaries(nodes.len() as u32), (0..nodes.len() as u32).collect()),
        };
        let spec = HashRangeSpec { boundaries, ranges };
        Ok(spec)
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        self.check_table(nodes.len())
    }

    fn follows_node_list(&self) -> bool {
        // Tables name nodes by id: a new node owns nothing until a range moves to it.
        true
    }

    fn node_removed(&mut self, index: u32, nodes: &[Node]) -> Result<()> {
        renumber(&mut self.ranges, index)
            .map_err(|range| still_named(&format!("strategy.ranges[{range}]"), nodes, index))
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("boundaries", Value::Array(self.boundaries.iter().map(|&b| json::u64_value(b)).collect()));
        object.put("ranges", owner_ids(&self.ranges, nodes));
    }

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<HashRanges> {
        self.check_table(nodes.len())?;
        Ok(HashRanges {
            boundaries: self.boundaries.clone(),
            owners: self.ranges.clone(),
            node_count: nodes.len() as u32,
        })
    }
}

impl Position for u64 {
    fn from_point(point: &RangePoint) -> Option<u64> {
        match point {
            RangePoint::Hash(hash) => Some(*hash),
            RangePoint::Key(_) => None,
        }
    }

    fn to_value(&self) -> Value {
        json::u64_value(*self)
    }

    fn lowest() -> u64 {
        0
    }

    fn of_key(hashing: &KeyHashing, key: Key<'_>) -> u64 {
        hashing.hash(key)
    }

    fn uniform(count: u32) -> Option<Vec<u64>> {
        Some(uniform_boundaries(count))
    }
}

/// A compiled hash-range table.
#[derive(Clone, Debug)]
pub struct HashRanges {
    boundaries: Vec<u64>,
    owners: Vec<u32>,
    node_count: u32,
}

impl HashRanges {
    /// The range holding `hash`: the number of boundaries `<= hash`.
    #[inline]
    pub fn range_of(&self, hash: u64) -> u32 {
        self.boundaries.partition_point(|&boundary| boundary <= hash) as u32
    }
}

impl Place for HashRanges {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.range_of(hashing.hash(key)))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hashed = Hashed::of(hashing, key);
        let range = self.range_of(hashed.value);
        let start = if range == 0 { 0 } else { self.boundaries[range as usize - 1] };
        let end = self.boundaries.get(range as usize).copied();
        Ok((Some(hashed), Hit::HashRange { range, start, end }, range))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.owners[shard as usize]
    }

    fn max_replicas(&self) -> u32 {
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.owners.len() as u32
    }

    // `shards_for_range` is the default: hashing scatters every key range over every
    // shard, so a scan visits all of them, as for the other hashed strategies.
}
