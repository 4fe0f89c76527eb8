//! Rendezvous hashing, also called highest random weight (Thaler & Ravishankar,
//! "Using Name-Based Mappings to Increase Hit Rates", IEEE/ACM ToN 1998); the weighted
//! form is the logarithmic method of Schindelhauer & Schomaker ("Weighted Distributed
//! Hash Tables", SPAA 2005), as used by Ceph's straw2 buckets.
//!
//! **Algorithm.** Every node scores every key; the key goes to the highest score, and
//! its replicas to the next highest. The score of node `i` for a key hash `h` starts
//! from `x = fmix64(h ^ seed_i)`, where `seed_i` is the node id hashed with the
//! topology's hash function and `fmix64` is MurmurHash3's 64-bit finalizer. Then:
//!
//! * all weights equal: the score is `x >> 11`, a 53-bit integer;
//! * otherwise: `u = ((x >> 11) + 0.5) / 2^53`, a number strictly inside (0, 1), and
//!   the score is `-weight / ln(u)`, with `ln` from the software `libm` so every
//!   platform rounds alike. With equal weights this orders nodes exactly as the
//!   integer score does, apart from rounding ties, which the integer path avoids.
//!
//! **Tie-break.** Equal scores go to the node listed first in the document.
//!
//! **Guarantees.** Each node wins a key with probability `w_i / sum(w)`. Adding a node
//! moves only the keys it now wins; removing one moves only its own keys, each to its
//! second choice. No tables, no points: membership is the whole state.
//!
//! **Cost.** `O(n)` per key (one mix and, weighted, one `ln` per node); top-`k`
//! replicas `O(n log n)`; memory 16 bytes per node.

use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::{Map, Value};

use super::{Place, Spec};
use crate::error::Result;
use crate::hashing::KeyHashing;
use crate::json::Object;
use crate::key::Key;
use crate::topology::Node;

/// `{"type": "rendezvous"}`: no parameters; weights come from the nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RendezvousSpec;

impl Spec for RendezvousSpec {
    const TYPE: &'static str = "rendezvous";
    const FIELDS: &'static [&'static str] = &["type"];
    const WEIGHTED: bool = true;
    type Placement = Rendezvous;

    fn parse(_object: &Object<'_>, _nodes: &[Node]) -> Result<RendezvousSpec> {
        Ok(RendezvousSpec)
    }

    fn write(&self, _object: &mut Map<String, Value>, _nodes: &[Node]) {}

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Rendezvous> {
        Ok(Rendezvous::build(hashing, nodes))
    }
}

/// MurmurHash3's 64-bit finalizer (`fmix64`): a bijective avalanche mix.
#[inline]
pub(crate) fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// A rendezvous placement over a node list.
#[derive(Clone, Debug)]
pub struct Rendezvous {
    seeds: Vec<u64>,
    /// `None` when every weight is equal (the integer score path).
    weights: Option<Vec<f64>>,
}

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Score {
    Uniform(u64),
    Weighted(f64),
}

impl Rendezvous {
    /// Builds the placement: one seed per node, `hash_bytes(node.id)`.
    pub fn build(hashing: &KeyHashing, nodes: &[Node]) -> Rendezvous {
        let seeds = nodes.iter().map(|node| hashing.hash_bytes(node.id.as_bytes())).collect();
        let uniform = nodes.windows(2).all(|pair| pair[0].weight == pair[1].weight);
        let weights = if uniform { None } else { Some(nodes.iter().map(|node| node.weight).collect()) };
        Rendezvous { seeds, weights }
    }

    #[inline]
    fn score(&self, index: usize, hash: u64) -> Score {
        let bits = fmix64(hash ^ self.seeds[index]) >> 11;
        match &self.weights {
            None => Score::Uniform(bits),
            Some(weights) => {
                let unit = (bits as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0);
                Score::Weighted(-weights[index] / libm::log(unit))
            }
        }
    }

    /// The node index with the highest score for `hash` (first listed on ties).
    #[inline]
    pub fn node_of(&self, hash: u64) -> u32 {
        let mut best = 0usize;
        let mut best_score = self.score(0, hash);
        for index in 1..self.seeds.len() {
            let score = self.score(index, hash);
            // Strictly greater: on a tie the earlier node keeps the key.
            if score.partial_cmp(&best_score) == Some(Ordering::Greater) {
                best = index;
                best_score = score;
            }
        }
        best as u32
    }

    /// The `count` highest-scoring node indices for `hash`, best first, into `out`.
    pub fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        let mut scored: Vec<(Score, u32)> =
            (0..self.seeds.len()).map(|index| (self.score(index, hash), index as u32)).collect();
        // Descending score, then ascending index. Scores are never NaN (u is inside (0, 1)
        // and weights are finite and positive), so `Equal` only means a true tie.
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal).then(a.1.cmp(&b.1)));
        out.clear();
        out.extend(scored.iter().take(count as usize).map(|entry| entry.1));
    }
}

impl Place for Rendezvous {
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
        self.seeds.len() as u32
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.seeds.len() as u32
    }
}
