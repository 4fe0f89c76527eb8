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
//! **Cost.** `O(n)` per key (one mix and, weighted, one `ln` per node), with no
//! allocation; top-`k` replicas are one pass too, keeping the best `k` in order in the
//! caller's buffer (`O(n + k^2 log n)` expected, no sort of all nodes); memory 16 bytes
//! per node.

use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::hashing::KeyHashing;
use crate::json::Object;
use crate::node::Node;
use crate::strategy::spec::{NodeFromHash, Spec};

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

    fn follows_node_list(&self) -> bool {
        true
    }

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
            Some(weights) => Score::Weighted(weighted_score(weights[index], bits)),
        }
    }

    /// The node index with the highest score for `hash` (first listed on ties).
    ///
    /// One pass over the nodes, no allocation: the weights test is made once per key,
    /// not once per node, so the uniform loop is a mix and a compare per node.
    #[inline]
    pub fn node_of(&self, hash: u64) -> u32 {
        match &self.weights {
            None => {
                let mut best = 0usize;
                let mut best_score = 0u64;
                for (index, &seed) in self.seeds.iter().enumerate() {
                    let score = fmix64(hash ^ seed) >> 11;
                    // Strictly greater: on a tie the earlier node keeps the key. Node 0
                    // wins when every score is 0, as when it is compared with itself.
                    if score > best_score {
                        best = index;
                        best_score = score;
                    }
                }
                best as u32
            }
            Some(weights) => {
                let mut best = 0usize;
                let mut best_score = f64::NEG_INFINITY;
                for (index, (&seed, &weight)) in self.seeds.iter().zip(weights).enumerate() {
                    let score = weighted_score(weight, fmix64(hash ^ seed) >> 11);
                    if score > best_score {
                        best = index;
                        best_score = score;
                    }
                }
                best as u32
            }
        }
    }

    /// The `count` highest-scoring node indices for `hash`, best first (ties: first
    /// listed first), into `out` (cleared first).
    ///
    /// The same as sorting every node by score and taking `count`, in one pass with no
    /// allocation beyond `out`: `out` holds the best `count` so far in order, a node
    /// enters only when it beats the last of them (about `count * ln(n / count)` times
    /// for `n` nodes), and scores of held nodes are recomputed instead of stored.
    pub fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        out.clear();
        let wanted = (count as usize).min(self.seeds.len());
        if wanted == 0 {
            return;
        }
        out.reserve(wanted);
        // The score of `out`'s last entry once it is full: what a newcomer must beat.
        let mut threshold: Option<Score> = None;
        for index in 0..self.seeds.len() {
            let score = self.score(index, hash);
            if let Some(last) = threshold {
                // Strictly greater: a later node with an equal score ranks after.
                if score.partial_cmp(&last) != Some(Ordering::Greater) {
                    continue;
                }
            }
            // Insert after every held node with a score >= this one (they are listed
            // earlier, so they win ties). Scores are never NaN (u is inside (0, 1) and
            // weights are finite and positive), so the order is total.
            let at = out
                .partition_point(|&held| self.score(held as usize, hash).partial_cmp(&score) != Some(Ordering::Less));
            if out.len() == wanted {
                out.pop();
            }
            out.insert(at, index as u32);
            if out.len() == wanted {
                threshold = out.last().map(|&last| self.score(last as usize, hash));
            }
        }
    }
}

/// The weighted score `-weight / ln(u)` of 53 random bits, `u = (bits + 0.5) / 2^53`.
#[inline]
fn weighted_score(weight: f64, bits: u64) -> f64 {
    let unit = (bits as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0);
    -weight / libm::log(unit)
}

impl NodeFromHash for Rendezvous {
    #[inline]
    fn node_of(&self, hash: u64) -> u32 {
        Rendezvous::node_of(self, hash)
    }

    fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        Rendezvous::replicas_of(self, hash, count, out);
    }

    fn node_count(&self) -> u32 {
        self.seeds.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: every node scored, sorted by score descending then index.
    fn sorted(placement: &Rendezvous, hash: u64) -> Vec<u32> {
        let mut scored: Vec<(Score, u32)> =
            (0..placement.seeds.len()).map(|index| (placement.score(index, hash), index as u32)).collect();
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|entry| entry.1).collect()
    }

    fn placements() -> Vec<Rendezvous> {
        let mut placements = Vec::new();
        for n in [1usize, 2, 3, 10, 64, 300] {
            let seeds: Vec<u64> = (0..n as u64).map(|i| fmix64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 77)).collect();
            placements.push(Rendezvous { seeds: seeds.clone(), weights: None });
            let weights = (0..n).map(|i| 0.25 + (i % 5) as f64 * 0.75).collect();
            placements.push(Rendezvous { seeds, weights: Some(weights) });
        }
        // Ties: repeated seeds give equal scores, which go to the node listed first.
        let seeds: Vec<u64> = (0..40u64).map(|i| fmix64(i % 7)).collect();
        placements.push(Rendezvous { seeds: seeds.clone(), weights: None });
        placements
            .push(Rendezvous { seeds, weights: Some((0..40).map(|i| if i % 2 == 0 { 1.0 } else { 2.0 }).collect()) });
        placements
    }

    #[test]
    fn top_k_equals_sorting_every_node() {
        let mut out = Vec::new();
        for placement in placements() {
            let n = placement.seeds.len();
            for key in 0..200u64 {
                let hash = fmix64(key);
                let expected = sorted(&placement, hash);
                assert_eq!(placement.node_of(hash), expected[0], "n {n} key {key}");
                for count in [1, 2, 3, 5, 16, n / 2, n - 1, n, n + 3] {
                    placement.replicas_of(hash, count as u32, &mut out);
                    assert_eq!(out, expected[..count.min(n)], "n {n} key {key} count {count}");
                }
            }
        }
    }

    #[test]
    fn replicas_allocate_only_out() {
        let placement = &placements()[8];
        let mut out = Vec::with_capacity(8);
        let buffer = out.as_ptr();
        placement.replicas_of(12_345, 8, &mut out);
        assert_eq!(out.len(), 8);
        assert_eq!(out.as_ptr(), buffer, "a buffer of capacity count is reused, never reallocated");
    }
}
