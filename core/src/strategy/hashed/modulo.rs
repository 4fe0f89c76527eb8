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

use crate::error::{Error, ErrorKind, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::node::Node;
use crate::strategy::spec::{Place, Spec};

/// `{"type": "modulo", "one_based": false}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuloSpec {
    /// Number shards `1..=n` (old PHP style) instead of `0..n`.
    pub one_based: bool,
}

impl Spec for ModuloSpec {
    const TYPE: &'static str = "modulo";
    const FIELDS: &'static [&'static str] = &["type", "one_based"];
    type Placement = Modulo;

    fn parse(object: &Object<'_>, _nodes: &[Node]) -> Result<ModuloSpec> {
        let one_based = match object.optional("one_based") {
            Some(value) => json::bool(&object.path_of("one_based"), value)?,
            None => false,
        };
        Ok(ModuloSpec { one_based })
    }

    fn write(&self, object: &mut Map<String, Value>, _nodes: &[Node]) {
        object.put("one_based", self.one_based.into());
    }

    fn follows_node_list(&self) -> bool {
        true
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

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hit = Hit::Modulo { nodes: self.nodes, one_based: self.one_based };
        Ok((Some(Hashed::of(hashing, key)), hit, self.shard(hashing, key)?))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        if self.one_based {
            shard - 1
        } else {
            shard
        }
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

/// Where each shard's keys can go when a modulo cluster changes from `old` to `new`
/// shards, when one count is a whole multiple of the other (the doubling trick and its
/// inverse).
///
/// Growing by a factor `m` (`new = m * old`), a key on shard `k` either stays on `k` or
/// moves to one of `k + old, k + 2*old, ..., k + (m-1)*old`: entry `k` lists them, `k`
/// first. Shrinking by a factor (`old = m * new`), shard `k` merges into `k % new`.
/// Only 0-based shards; `moves(n, n)` is the identity.
///
/// # Errors
/// `no_nodes` when a count is 0; `invalid_argument` when neither count divides the
/// other (then almost every key moves, to any shard); `limit_exceeded` above
/// [`crate::limits::MAX_VBUCKETS`] shards.
///
/// # Example
/// ```
/// use shardroute::strategy::hashed::modulo::moves;
/// assert_eq!(moves(2, 4).unwrap(), vec![vec![0, 2], vec![1, 3]]);
/// assert_eq!(moves(4, 2).unwrap(), vec![vec![0], vec![1], vec![0], vec![1]]);
/// assert_eq!(moves(3, 4).unwrap_err().code(), "invalid_argument");
/// ```
pub fn moves(old: u32, new: u32) -> Result<Vec<Vec<u32>>> {
    if old == 0 || new == 0 {
        return Err(Error::new(ErrorKind::NoNodes, "moves: shard counts must be at least 1"));
    }
    let limit = crate::limits::MAX_VBUCKETS;
    if old > limit || new > limit {
        return Err(Error::limit(alloc::format!("moves: shard counts above {limit}")));
    }
    if new.is_multiple_of(old) {
        let factor = new / old;
        Ok((0..old).map(|shard| (0..factor).map(|step| shard + step * old).collect()).collect())
    } else if old.is_multiple_of(new) {
        Ok((0..old).map(|shard| alloc::vec![shard % new]).collect())
    } else {
        Err(Error::argument(alloc::format!(
            "moves: {old} -> {new} is not a whole-factor change; nearly every key moves (use jump, ring or vbuckets to grow by steps)"
        )))
    }
}
