//! Consistent-hash ring with virtual nodes (Karger et al., "Consistent Hashing and
//! Random Trees", STOC 1997; virtual nodes as in Dynamo and libketama).
//!
//! **Algorithm.** Each node places `round(points_per_node * weight)` points (at least
//! one) on a 64-bit circle; point `j` of node `id` sits at `hash("{id}#{j}")` under the
//! topology's hash function. A key belongs to the first point at or after its hash,
//! wrapping past the top to the first point. Replicas continue clockwise to the next
//! points owned by nodes not yet chosen.
//!
//! **Tie-break.** Points are sorted by `(position, node index, point number)`; a key
//! whose hash equals several points' position goes to the first of them, so two nodes
//! whose labels collide resolve to the one listed first in the document.
//!
//! **Guarantees.** Adding a node moves only the keys that now land on its points
//! (about `w_new / w_total` of them), each from the node that owned the arc before.
//! Removing a node moves only its own keys. Balance improves with points: with 160
//! points per node the heaviest of 10 nodes carries within about 25% of the mean.
//!
//! **Cost.** Build: one hash per point and a bucket sort, linear in the `P` points on
//! hashed positions ([`crate::strategy`]'s `points` module). Lookup is one read of a bucket
//! table and a search of one bucket: the table has `2^b` entries for `b = floor(log2 P)`
//! (at most 2^20), indexed by the `b` hash bits just below the leading zeros that every
//! position shares, and entry `i` is the number of points whose index bits are below
//! `i`. So a bucket holds one or two points on average and a lookup costs two or three
//! memory reads however large the ring, instead of the `log2 P` dependent reads of a
//! binary search over all points (17 at 160 points x 1,000 nodes). The same search on
//! a well-mixed hash family is the "bucketed" or interpolation index of learned-index
//! work; on a skewed one (CRC32 positions fill only the low 32 bits, hence the shared
//! leading zeros) it degrades to a binary search within the bucket, never worse.
//! Memory: 12 bytes per point (positions and owners in separate arrays so the search
//! touches only positions) plus 4 bytes per bucket, between 2 and 4 bytes per point.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::Hit;
use crate::hashing::KeyHashing;
use crate::json::{Object, Put as _};
use crate::limits;
use crate::node::Node;
use crate::strategy::points::{shift_right, sort_points, SortedPoints};
use crate::strategy::spec::{count_param, distinct_successors, NodeFromHash, Spec};

/// Default points per unit of weight: libketama's 160.
pub const DEFAULT_POINTS_PER_NODE: u32 = 160;

/// `{"type": "ring", "points_per_node": 160}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingSpec {
    /// Points per unit of node weight, in `1..=`[`limits::MAX_POINTS_PER_NODE`].
    pub points_per_node: u32,
}

impl Spec for RingSpec {
    const TYPE: &'static str = "ring";
    const FIELDS: &'static [&'static str] = &["type", "points_per_node"];
    const WEIGHTED: bool = true;
    type Placement = Ring;

    fn parse(object: &Object<'_>, _nodes: &[Node]) -> Result<RingSpec> {
        let points_per_node =
            count_param(object, "points_per_node", DEFAULT_POINTS_PER_NODE, limits::MAX_POINTS_PER_NODE)?;
        Ok(RingSpec { points_per_node })
    }

    fn write(&self, object: &mut Map<String, Value>, _nodes: &[Node]) {
        object.put("points_per_node", self.points_per_node.into());
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        check_total(nodes, self.points_per_node).map(drop)
    }

    fn follows_node_list(&self) -> bool {
        true
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Ring> {
        Ring::build(hashing, nodes, self.points_per_node)
    }
}

/// A built ring: sorted point positions and, in parallel, the node index owning each,
/// behind a bucket table over the top hash bits (see the module docs).
#[derive(Clone, Debug)]
pub struct Ring {
    positions: Vec<u64>,
    owners: Vec<u32>,
    node_count: u32,
    /// `starts[i]`: the number of points whose bucket (`position >> shift`) is below `i`;
    /// `2^b + 1` entries, so bucket `i` is `positions[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// `64 - (leading zeros shared by every position) - b`: a hash's bucket is `hash >> shift`.
    shift: u32,
}

/// The number of points a node of `weight` gets: `round(points_per_node * weight)`, at least 1.
///
/// IEEE multiplication is exact-rounded everywhere and `libm::round` is software, so
/// every platform derives the same count.
pub(crate) fn points_for(points_per_node: u32, weight: f64) -> u64 {
    let scaled = libm::round(f64::from(points_per_node) * weight);
    if scaled < 1.0 {
        1
    } else {
        scaled as u64
    }
}

/// The points of a ring over `nodes`, refused past [`limits::MAX_RING_POINTS`] before
/// anything is built (`limit_exceeded` naming `strategy.points_per_node`).
fn check_total(nodes: &[Node], points_per_node: u32) -> Result<u64> {
    let total: u64 = nodes.iter().map(|node| points_for(points_per_node, node.weight)).sum();
    if total > limits::MAX_RING_POINTS {
        return Err(Error::limit(format!(
            "strategy.points_per_node: the ring would hold {total} points ({} nodes, weights included); the limit \
             is {} in all",
            nodes.len(),
            limits::MAX_RING_POINTS
        )));
    }
    Ok(total)
}

impl Ring {
    /// Builds the ring of `nodes` with `points_per_node` points per unit of weight.
    ///
    /// # Errors
    /// `limit_exceeded` when the ring would hold more than [`limits::MAX_RING_POINTS`] points.
    pub fn build(hashing: &KeyHashing, nodes: &[Node], points_per_node: u32) -> Result<Ring> {
        let total = check_total(nodes, points_per_node)?;
        let mut points: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
        let mut label = Vec::new();
        for (index, node) in nodes.iter().enumerate() {
            for point in 0..points_for(points_per_node, node.weight) as u32 {
                label.clear();
                label.extend_from_slice(node.id.as_bytes());
                label.push(b'#');
                crate::key::push_decimal(&mut label, u64::from(point));
                points.push((hashing.hash_bytes(&label), index as u32));
            }
        }
        // Generated in (node index, point number) order and sorted stably by position:
        // the documented (position, node index, point number) order.
        Ok(Ring::from_points(points, nodes.len() as u32))
    }

    /// The ring of `(position, owner)` points given in tie-break order.
    fn from_points(points: Vec<(u64, u32)>, node_count: u32) -> Ring {
        let SortedPoints { positions, owners, starts, shift } = sort_points(points, |_, _| Ordering::Equal);
        Ring { positions, owners, node_count, starts, shift }
    }

    /// The index of the point owning `hash`: the first position `>= hash`, wrapping to 0.
    ///
    /// The same as `positions.partition_point(|&p| p < hash)` (then 0 past the end):
    /// every point of an earlier bucket is below `hash` and every point of a later one
    /// above it, so only `hash`'s own bucket is searched.
    #[inline]
    fn point_of(&self, hash: u64) -> usize {
        let bucket = shift_right(hash, self.shift);
        // A bucket past the table: `hash` is above every position, so the ring wraps.
        // (`starts` has at least two entries: one bucket and its end.)
        if bucket >= (self.starts.len() - 1) as u64 {
            return 0;
        }
        let bucket = bucket as usize;
        let (start, end) = (self.starts[bucket] as usize, self.starts[bucket + 1] as usize);
        let index = start + self.positions[start..end].partition_point(|&position| position < hash);
        if index == self.positions.len() {
            0
        } else {
            index
        }
    }

    /// The node index owning `hash`.
    #[inline]
    pub fn node_of(&self, hash: u64) -> u32 {
        self.owners[self.point_of(hash)]
    }

    /// The first `count` distinct nodes clockwise from `hash`, into `out` (cleared first).
    /// `count` must not exceed the node count (checked by the router).
    pub fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        distinct_successors(&self.owners, self.point_of(hash), count.min(self.node_count) as usize, out);
    }

    /// The number of points on the ring.
    #[allow(clippy::len_without_is_empty)]
    pub fn point_count(&self) -> usize {
        self.positions.len()
    }
}

impl NodeFromHash for Ring {
    #[inline]
    fn node_of(&self, hash: u64) -> u32 {
        Ring::node_of(self, hash)
    }

    fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        Ring::replicas_of(self, hash, count, out);
    }

    fn node_count(&self) -> u32 {
        self.node_count
    }

    fn hit(&self, hash: u64) -> Hit {
        Hit::Point { point: self.positions[self.point_of(hash)] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::HashFunction;
    use crate::strategy::hashed::rendezvous::fmix64;

    fn nodes(count: usize, weight: impl Fn(usize) -> f64) -> Vec<Node> {
        (0..count)
            .map(|i| Node {
                id: format!("node-{i}"),
                address: None,
                weight: weight(i),
                zone: None,
                state: Default::default(),
            })
            .collect()
    }

    /// The lookup before the bucket table: a binary search over every position.
    fn naive_point_of(ring: &Ring, hash: u64) -> usize {
        let index = ring.positions.partition_point(|&position| position < hash);
        if index == ring.positions.len() {
            0
        } else {
            index
        }
    }

    /// Every position, its neighbours, the extremes, and pseudo-random hashes.
    fn probes(ring: &Ring) -> Vec<u64> {
        let mut probes = alloc::vec![0, 1, u64::MAX, u64::MAX - 1, u64::from(u32::MAX), 1 << 32];
        for &position in &ring.positions {
            probes.extend([position, position.wrapping_sub(1), position.wrapping_add(1)]);
        }
        probes.extend((0..20_000u64).map(fmix64));
        // Hashes confined to the low 32 bits, where CRC32 positions live.
        probes.extend((0..20_000u64).map(|i| fmix64(i) >> 32));
        probes
    }

    fn check(ring: &Ring) {
        assert_eq!(ring.starts.len(), (ring.starts.len() - 1).next_power_of_two() + 1);
        assert_eq!(*ring.starts.last().unwrap() as usize, ring.point_count());
        for hash in probes(ring) {
            assert_eq!(ring.point_of(hash), naive_point_of(ring, hash), "hash {hash:#x}");
        }
    }

    #[test]
    fn bucket_table_matches_binary_search_at_160_points_by_1000_nodes() {
        let ring = Ring::build(&KeyHashing::default(), &nodes(1000, |_| 1.0), 160).unwrap();
        assert_eq!(ring.point_count(), 160_000);
        assert_eq!(ring.starts.len(), (1 << 17) + 1, "floor(log2(160000)) = 17 index bits");
        check(&ring);
    }

    #[test]
    fn bucket_table_matches_binary_search_on_crc32_positions() {
        // CRC32 positions fill only the low 32 bits: the index uses the bits below.
        let hashing = KeyHashing { function: HashFunction::Crc32, ..KeyHashing::default() };
        let ring = Ring::build(&hashing, &nodes(50, |i| 0.5 + (i % 3) as f64), 40).unwrap();
        assert!(ring.shift <= 32 - 11, "shift {}", ring.shift);
        check(&ring);
    }

    #[test]
    fn bucket_table_matches_binary_search_on_small_rings() {
        for count in 1..6 {
            for points in [1, 2, 3, 7] {
                check(&Ring::build(&KeyHashing::default(), &nodes(count, |_| 1.0), points).unwrap());
            }
        }
    }

    #[test]
    fn bucket_table_handles_degenerate_positions() {
        // Hand-made position sets: all zero, all at the top, duplicates, one point.
        for positions in [
            alloc::vec![0u64],
            alloc::vec![u64::MAX],
            alloc::vec![0, 0, 0, 5],
            alloc::vec![7, 7, u64::MAX, u64::MAX],
            (0..1000u64).collect(),
            (0..1000u64).map(|i| i << 54).collect(),
        ] {
            let points = positions.iter().enumerate().map(|(i, &p)| (p, i as u32)).collect();
            let ring = Ring::from_points(points, 1);
            check(&ring);
        }
    }
}
