//! Jump consistent hash (Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash
//! Algorithm", Google, 2014, arXiv:1406.2294).
//!
//! **Algorithm.** Follow the key through a sequence of bucket counts: a pseudo-random
//! generator seeded by the key decides, for each "jump", the next bucket count at which
//! the key would move; the last jump below `n` is its bucket. Each step is a 64-bit LCG
//! step and one floating-point division (IEEE-exact, so identical on every platform).
//!
//! **Guarantees.** Balanced to within sampling noise; growing from `n` to `n + 1` buckets
//! moves exactly the keys that land in the new bucket `n` (about `1/(n+1)` of them) and
//! never moves a key between old buckets. Buckets are numbered, not named: only the
//! last bucket can be removed without reshuffling, so removing a node from the middle
//! of the list moves that node's keys *and* renumbers the tail.
//!
//! **Cost.** `O(ln n)` expected steps per key, no memory.
//!
//! As a strategy (`{"type": "jump"}`) the shard is `jump(hash(key), n)` and the node is
//! `nodes[shard]`; replicas are the next nodes in list order. Weights are not supported.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::{successors, Place, Spec};
use crate::error::{Error, ErrorKind, Result};
use crate::hashing::KeyHashing;
use crate::json::Object;
use crate::key::Key;
use crate::topology::Node;

/// `{"type": "jump"}`: no parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JumpSpec;

impl Spec for JumpSpec {
    const TYPE: &'static str = "jump";
    const FIELDS: &'static [&'static str] = &["type"];
    const WEIGHTED: bool = false;
    type Placement = Jump;

    fn parse(_object: &Object<'_>, _nodes: &[Node]) -> Result<JumpSpec> {
        Ok(JumpSpec)
    }

    fn write(&self, _object: &mut Map<String, Value>, _nodes: &[Node]) {}

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<Jump> {
        Ok(Jump { nodes: nodes.len() as u32 })
    }
}

/// A compiled jump placement: just the bucket count.
#[derive(Clone, Debug)]
pub struct Jump {
    nodes: u32,
}

impl Place for Jump {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(jump_unchecked(hashing.hash(key), self.nodes))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        shard
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        successors(self.shard(hashing, key)?, count, self.nodes, out);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.nodes
    }
}

/// The jump consistent hash of `key` over `buckets` buckets, in `0..buckets`.
///
/// The same as the paper's `JumpConsistentHash(key, num_buckets)`, with `buckets` a
/// `u32` instead of an `int32_t` so no negative count exists.
///
/// # Errors
/// `no_nodes` when `buckets` is 0 (there is no bucket to return).
///
/// # Example
/// ```
/// assert_eq!(shardroute::jump(0, 1).unwrap(), 0);
/// // A value published with Guava's `Hashing.consistentHash` golden tests.
/// assert_eq!(shardroute::jump(1, 100).unwrap(), 55);
/// assert_eq!(shardroute::jump(7, 0).unwrap_err().code(), "no_nodes");
/// ```
pub fn jump(key: u64, buckets: u32) -> Result<u32> {
    if buckets == 0 {
        return Err(Error::new(ErrorKind::NoNodes, "jump needs at least one bucket"));
    }
    Ok(jump_unchecked(key, buckets))
}

/// [`jump`] for `buckets >= 1` (returns 0 for `buckets == 0`).
#[inline]
pub(crate) fn jump_unchecked(mut key: u64, buckets: u32) -> u32 {
    let mut bucket: i64 = -1;
    let mut next: i64 = 0;
    while next < i64::from(buckets) {
        bucket = next;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        // The paper's `(b + 1) * (double(1LL << 31) / double((key >> 33) + 1))`.
        // Every operand is exact in f64 and IEEE division is correctly rounded, so the
        // result is the same on every platform; `as i64` saturates instead of UB.
        next = ((bucket + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    bucket.max(0) as u32
}
