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
//! **Cost.** Build `O(P log P)` for `P` points in total; lookup is a binary search,
//! `O(log P)`; memory 12 bytes per point (positions and owners in separate arrays so
//! the search touches only positions).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::{count_param, Place, Spec};
use crate::error::{Error, Result};
use crate::hashing::KeyHashing;
use crate::json::Object;
use crate::key::Key;
use crate::limits;
use crate::topology::Node;

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
        object.insert("points_per_node".into(), self.points_per_node.into());
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Ring> {
        Ring::build(hashing, nodes, self.points_per_node)
    }
}

/// A built ring: sorted point positions and, in parallel, the node index owning each.
#[derive(Clone, Debug)]
pub struct Ring {
    positions: Vec<u64>,
    owners: Vec<u32>,
    node_count: u32,
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

impl Ring {
    /// Builds the ring of `nodes` with `points_per_node` points per unit of weight.
    ///
    /// # Errors
    /// `limit_exceeded` when the ring would hold more than [`limits::MAX_RING_POINTS`] points.
    pub fn build(hashing: &KeyHashing, nodes: &[Node], points_per_node: u32) -> Result<Ring> {
        let mut total: u64 = 0;
        for node in nodes {
            total += points_for(points_per_node, node.weight);
            if total > limits::MAX_RING_POINTS {
                return Err(Error::limit(format!(
                    "strategy.points_per_node: the ring would hold more than {} points",
                    limits::MAX_RING_POINTS
                )));
            }
        }
        let mut points: Vec<(u64, u32, u32)> = Vec::with_capacity(total as usize);
        let mut label = Vec::new();
        for (index, node) in nodes.iter().enumerate() {
            for point in 0..points_for(points_per_node, node.weight) as u32 {
                label.clear();
                label.extend_from_slice(node.id.as_bytes());
                label.push(b'#');
                push_decimal(&mut label, point);
                points.push((hashing.hash_bytes(&label), index as u32, point));
            }
        }
        points.sort_unstable();
        Ok(Ring {
            positions: points.iter().map(|p| p.0).collect(),
            owners: points.iter().map(|p| p.1).collect(),
            node_count: nodes.len() as u32,
        })
    }

    /// The index of the point owning `hash`: the first position `>= hash`, wrapping to 0.
    #[inline]
    fn point_of(&self, hash: u64) -> usize {
        let index = self.positions.partition_point(|&position| position < hash);
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
        out.clear();
        let wanted = count.min(self.node_count) as usize;
        let start = self.point_of(hash);
        let len = self.owners.len();
        for step in 0..len {
            if out.len() == wanted {
                break;
            }
            let owner = self.owners[(start + step) % len];
            if !out.contains(&owner) {
                out.push(owner);
            }
        }
    }

    /// The number of points on the ring.
    #[allow(clippy::len_without_is_empty)]
    pub fn point_count(&self) -> usize {
        self.positions.len()
    }
}

impl Place for Ring {
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
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.node_count
    }
}

/// Appends the decimal digits of `value` (no allocation, no `core::fmt`).
fn push_decimal(out: &mut Vec<u8>, mut value: u32) {
    let mut digits = [0u8; 10];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (value % 10) as u8;
        len += 1;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend(digits[..len].iter().rev());
}
