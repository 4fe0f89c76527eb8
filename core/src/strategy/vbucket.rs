//! Fixed partitions ("vbuckets") with a dictionary: Couchbase's vBucket map, Riak's
//! partitions, Redis Cluster's slots and Tarantool vshard's buckets are all this shape.
//!
//! **Algorithm.** The key space is cut into a fixed number `V` of virtual buckets
//! (default 1024): `vbucket = hash(key) % V`. A table, the *dictionary*, maps each
//! vbucket to an ordered chain of nodes `[active, replica1, ...]`. The shard of a key is
//! its vbucket number, its node the head of the chain.
//!
//! **Guarantees.** Routing equals the table, exactly: operators move data by moving
//! whole vbuckets, and a client holding the same dictionary (same epoch) always agrees.
//! Because `V` never changes in normal operation, no key ever changes vbucket; what moves
//! on rebalance is decided by whoever edits the table (the planner of a later release),
//! so movement can be made minimal. Balance is that of the table: with `V` much larger
//! than the node count the hash spreads keys evenly over vbuckets.
//!
//! **The document.** `{"type": "vbucket", "vbuckets": V, "map": [["a", "b"], ...]}` lists
//! one chain of node ids per vbucket (`V` entries). Without a `map`, the chain of vbucket
//! `v` is `nodes[(v + r) % n]` for `r` in `0..=replicas` (`"replicas"`, default 0): a
//! round-robin table, ignoring weights, for getting started.
//!
//! **Cost.** One remainder and one table read per key; memory 4 bytes per chain entry.

use alloc::vec::Vec;

/// A compiled dictionary: the chains of all vbuckets, flattened.
#[derive(Clone, Debug)]
pub struct VbucketTable {
    vbuckets: u32,
    /// `chains[starts[v]..starts[v + 1]]` is the chain of vbucket `v`.
    starts: Vec<u32>,
    chains: Vec<u32>,
}

impl VbucketTable {
    /// Builds the table from one chain of node indices per vbucket.
    pub(crate) fn from_chains(chains: &[Vec<u32>]) -> VbucketTable {
        let mut starts = Vec::with_capacity(chains.len() + 1);
        let mut flat = Vec::new();
        starts.push(0);
        for chain in chains {
            flat.extend_from_slice(chain);
            starts.push(flat.len() as u32);
        }
        VbucketTable { vbuckets: chains.len() as u32, starts, chains: flat }
    }

    /// The round-robin chains of a document without a `map`.
    pub(crate) fn round_robin(vbuckets: u32, nodes: u32, replicas: u32) -> Vec<Vec<u32>> {
        (0..vbuckets)
            .map(|vbucket| {
                (0..=replicas).map(|r| ((u64::from(vbucket) + u64::from(r)) % u64::from(nodes)) as u32).collect()
            })
            .collect()
    }

    /// The vbucket of a hash: `hash % V`.
    #[inline]
    pub fn vbucket_of(&self, hash: u64) -> u32 {
        (hash % u64::from(self.vbuckets)) as u32
    }

    /// The chain `[active, replicas...]` of node indices of `vbucket`.
    #[inline]
    pub fn chain(&self, vbucket: u32) -> &[u32] {
        let start = self.starts[vbucket as usize] as usize;
        let end = self.starts[vbucket as usize + 1] as usize;
        &self.chains[start..end]
    }

    /// The number of vbuckets.
    pub fn vbuckets(&self) -> u32 {
        self.vbuckets
    }
}
