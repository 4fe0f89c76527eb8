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
