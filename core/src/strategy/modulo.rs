//! Modulo sharding: `hash(key) % n`.
//!
//! **Algorithm.** The shard is the key's hash modulo the node count. With
//! `"integers": "identity"` hashing the key is its own hash, which gives the classic
//! `user_id % n`. The `one_based` variant numbers shards `1..=n` the way old PHP code
//! does (`$s = $id % $n; if ($s == 0) $s = $n;`): shard `s` is on `nodes[s - 1]`, so
//! ids divisible by `n` go to the *last* node.
//!
//! **Guarantees.** Perfect balance over uniform hashes (and over sequential ids with
//! identity hashing). Changing `n` moves almost every key: from `n` to `n + 1` nodes
//! only about `1/(n+1)` of keys stay. Multiplying `n` by a whole factor `m` is the
//! exception: a key on node `k` either stays or moves to some `k + i*n` (the doubling
//! trick), which is why modulo clusters grow by doubling.
//!
//! **Cost.** One 64-bit remainder per key, no memory.
//!
//! Replicas are the next nodes in list order after the owner, wrapping around.
//! Weights are not supported.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::{successors, Place, Spec};
use crate::error::Result;
use crate::hashing::KeyHashing;
use crate::json::{self, Object};
use crate::key::Key;
use crate::topology::Node;

/// `{"type": "modulo", "one_based": false}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuloSpec {
    /// Number shards `1..=n` (old PHP style) instead of `0..n`.
    pub one_based: bool,
}

impl Spec for ModuloSpec {
    const TYPE: &'static str = "modulo";
    const FIELDS: &'static [&'static str] = &["type", "one_based"];
    const WEIGHTED: bool = false;
    type Placement = Modulo;

    fn parse(object: &Object<'_>, _nodes: &[Node]) -> Result<ModuloSpec> {
        let one_based = match object.optional("one_based") {
            Some(value) => json::bool(&object.path_of("one_based"), value)?,
            None => false,
        };
        Ok(ModuloSpec { one_based })
    }

    fn write(&self, object: &mut Map<String, Value>, _nodes: &[Node]) {
        object.insert("one_based".into(), self.one_based.into());
    }

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<Modulo> {
        Ok(Modulo { nodes: nodes.len() as u32, one_based: self.one_based })
    }
}

/// A compiled modulo placement.
#[derive(Clone, Debug)]
pub struct Modulo {
    nodes: u32,
    one_based: bool,
}

impl Place for Modulo {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        let hash = hashing.hash(key);
        Ok(if self.one_based { shard_one_based(hash, self.nodes) } else { shard(hash, self.nodes) })
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        if self.one_based {
            shard - 1
        } else {
            shard
        }
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        let owner = self.owner(self.shard(hashing, key)?);
        successors(owner, count, self.nodes, out);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        if self.one_based {
            1..self.nodes + 1
        } else {
            0..self.nodes
        }
    }
}

/// The 0-based shard of a hash: `hash % n`.
#[inline]
pub(crate) fn shard(hash: u64, nodes: u32) -> u32 {
    (hash % u64::from(nodes)) as u32
}

/// The 1-based shard of a hash: `hash % n`, with 0 replaced by `n`.
#[inline]
pub(crate) fn shard_one_based(hash: u64, nodes: u32) -> u32 {
    match shard(hash, nodes) {
        0 => nodes,
        other => other,
    }
}
