//! Maglev hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load
//! Balancer", NSDI 2016, section 3.4), with node hashing and weights as in Envoy's
//! `maglev` load balancer, so a table built here equals Envoy's for the same hosts.
//!
//! **Algorithm.** A lookup table of prime size `M` (default 65 537) holds one node per
//! entry. Each node derives a permutation of the entries from two hashes of its id:
//! `offset = xxh64(id, 0) % M`, `skip = xxh64(id, 1) % (M - 1) + 1`, and its `j`-th
//! preference is `(offset + j * skip) % M`. Nodes take turns, in byte order of their
//! ids, each claiming its next preferred entry that is still empty, until the table is
//! full (the paper's Pseudocode 1). A key goes to `table[hash % M]`.
//!
//! **The document.** `{"type": "maglev", "table_size": 65537}`: `table_size` is a
//! prime, at least the node count and at most [`limits::MAX_MAGLEV_TABLE_SIZE`]
//! (default 65 537; a non-prime is refused with the next prime in the message).
//!
//! **Weights** follow Envoy: with `w'_i = w_i / sum(w)` and `max = max(w'_i)`, node `i`
//! takes its turn in round `r` (from 1) only when `r * w'_i >= t_i`, where `t_i` starts
//! at 0 and grows by `max` at every turn it takes (IEEE double arithmetic, exactly as
//! Envoy computes it), so it claims about `M * w_i / sum(w)` entries. Every node takes
//! a turn in round 1, so with `M >= n` every node owns at least one entry. With equal
//! weights every node takes every turn: the paper's algorithm.
//!
//! **Tie-break and order.** Turns go in byte order of node ids (Envoy sorts its hosts
//! the same way), so the table does not depend on the order of the node list; the
//! shard is still the node's index in that list. Node ids are hashed with xxHash64
//! (seeds 0 and 1, as Envoy hashes host names), not with the topology's key hash, so
//! changing the key hashing never rebuilds the table.
//!
//! **Replicas.** The owner, then the next distinct nodes met walking the table forward
//! from the key's entry (wrapping). Every node owns an entry, so any count up to the
//! node count is always found, within one pass over the table.
//!
//! **Guarantees.** Balance: each node owns `M/n` entries up to rounding of the last
//! round (at most one more than another node, unweighted); keys spread with them, so
//! keep `M` much larger than `n` (the paper uses `M > 100 n` for 1% imbalance). Removing
//! or adding a node rebuilds the table: besides the entries that must change (those of
//! the removed node, or `~M/(n+1)` taken by the new one), a few others shift between
//! remaining nodes: under 1% of the table for 5 to 1 000 nodes at `M = 65 537` (the
//! paper's "near-minimal" disruption; the tests check this bound), and
//! [`crate::disruption`] reports the exact number of entries that change owner (the
//! `add_node` and `remove_node` operations include it).
//!
//! **Cost.** Lookup: one remainder and one table read. Build: `O(M log M)` probes
//! expected plus `O(M log n)` for weighted turns; at most
//! [`MAX_PROBES_PER_ENTRY`]` * M` probes, past which the build stops with
//! `limit_exceeded` (only adversarial node ids come near it). Memory: 4 bytes per entry.

use alloc::collections::BinaryHeap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Reverse;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::explain::Hit;
use crate::hash::xxh64;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::limits;
use crate::node::Node;
use crate::strategy::spec::{distinct_successors, NodeFromHash, Spec};

/// Default table size: 65 537, the prime the paper and Envoy use.
pub const DEFAULT_TABLE_SIZE: u32 = 65_537;

/// Probe budget of a build, per table entry. An honest build needs about `ln M`
/// probes per entry (under 12 measured at the largest table); only node ids chosen to collide
/// in their permutations come near this budget.
pub const MAX_PROBES_PER_ENTRY: u64 = 64;

/// `{"type": "maglev", "table_size": 65537}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaglevSpec {
    /// The table size `M`: a prime in `2..=`[`limits::MAX_MAGLEV_TABLE_SIZE`], at least
    /// the node count.
    pub table_size: u32,
}

impl Spec for MaglevSpec {
    const TYPE: &'static str = "maglev";
    const FIELDS: &'static [&'static str] = &["type", "table_size"];
    const WEIGHTED: bool = true;
    type Placement = Maglev;

    fn parse(object: &Object<'_>, _nodes: &[Node]) -> Result<MaglevSpec> {
        let path = object.path_of("table_size");
        let table_size = match object.optional("table_size") {
            None => DEFAULT_TABLE_SIZE,
            Some(value) => match value.as_u64() {
                Some(size) if size > u64::from(limits::MAX_MAGLEV_TABLE_SIZE) => {
                    return Err(Error::limit(format!(
                        "{path}: {size} exceeds the limit of {}",
                        limits::MAX_MAGLEV_TABLE_SIZE
                    )))
                }
                Some(size) if is_prime(size as u32) => size as u32,
                Some(size) if size >= 2 => {
                    return Err(json::at(
                        &path,
                        format_args!(
                            "{size} is not prime; Maglev needs a prime table size (the next prime is {})",
                            next_prime(size as u32)
                        ),
                    ))
                }
                _ => {
                    return Err(json::at(
                        &path,
                        format_args!(
                            "expected a prime integer in 2..={}, found {}",
                            limits::MAX_MAGLEV_TABLE_SIZE,
                            json::describe(value)
                        ),
                    ))
                }
            },
        };
        Ok(MaglevSpec { table_size })
    }

    fn write(&self, object: &mut Map<String, Value>, _nodes: &[Node]) {
        object.put("table_size", self.table_size.into());
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        if (self.table_size as usize) < nodes.len() {
            return Err(json::at(
                "strategy.table_size",
                format_args!(
                    "a table of {} entries cannot give each of {} nodes an entry; use a prime >= the node count (the paper suggests > 100 per node)",
                    self.table_size,
                    nodes.len()
                ),
            ));
        }
        Ok(())
    }

    fn follows_node_list(&self) -> bool {
        true
    }

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<Maglev> {
        Maglev::new(self, nodes)
    }
}

/// A built Maglev lookup table: the node index of every entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Maglev {
    table: Vec<u32>,
    node_count: u32,
}

/// One node's state while the table fills.
struct Builder {
    /// Current preference: `(offset + next * skip) % M`, kept incrementally.
    position: u64,
    skip: u64,
    weight: f64,
    /// Envoy's `target_weight_`: grows by the largest weight at every turn taken.
    target: f64,
    node: u32,
}

impl Maglev {
    /// Builds the table of `nodes`.
    ///
    /// # Errors
    /// For a spec and nodes that did not come from a parsed document: `no_nodes` for
    /// an empty list, `invalid_topology` for a table size that is not a prime in
    /// `nodes.len().max(2)..=`[`limits::MAX_MAGLEV_TABLE_SIZE`] or a weight outside
    /// `(0, 1e6]`. Always: `limit_exceeded` when the build needs more than
    /// [`MAX_PROBES_PER_ENTRY`]` * M` probes (node ids whose permutations collide, which
    /// honest ids never do).
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::hashed::maglev::{Maglev, MaglevSpec};
    /// use shardroute::Node;
    /// let nodes: Vec<Node> = ["a", "b", "c"]
    ///     .iter()
    ///     .map(|id| Node { id: id.to_string(), address: None, weight: 1.0, zone: None, state: Default::default() })
    ///     .collect();
    /// let maglev = Maglev::new(&MaglevSpec { table_size: 13 }, &nodes)?;
    /// // 13 entries over 3 nodes: 5, 4, 4 in some order.
    /// let mut counts = maglev.entries_per_node();
    /// counts.sort();
    /// assert_eq!(counts, [4, 4, 5]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn new(spec: &MaglevSpec, nodes: &[Node]) -> Result<Maglev> {
        if nodes.is_empty() {
            return Err(Error::new(ErrorKind::NoNodes, "nodes: a maglev table needs at least one node"));
        }
        if spec.table_size > limits::MAX_MAGLEV_TABLE_SIZE
            || !is_prime(spec.table_size)
            || (spec.table_size as usize) < nodes.len()
        {
            return Err(json::at(
                "strategy.table_size",
                format_args!(
                    "{} is not a prime in {}..={}",
                    spec.table_size,
                    nodes.len().max(2),
                    limits::MAX_MAGLEV_TABLE_SIZE
                ),
            ));
        }
        if let Some(index) = nodes.iter().position(|node| !(node.weight > 0.0 && node.weight <= limits::MAX_WEIGHT)) {
            return Err(json::at(&format!("nodes[{index}].weight"), "must be a finite number > 0 and <= 1e6"));
        }
        let size = u64::from(spec.table_size);
        let mut order: Vec<u32> = (0..nodes.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| nodes[a as usize].id.as_bytes().cmp(nodes[b as usize].id.as_bytes()));
        // Envoy's normalisation: weight / sum, the sum taken in list order.
        let sum: f64 = nodes.iter().map(|node| node.weight).sum();
        let mut builders: Vec<Builder> = order
            .iter()
            .map(|&node| {
                let (offset, skip) = permutation(nodes[node as usize].id.as_bytes(), size);
                Builder { position: offset, skip, weight: nodes[node as usize].weight / sum, target: 0.0, node }
            })
            .collect();
        let max = builders.iter().map(|b| b.weight).fold(0.0, f64::max);
        const EMPTY: u32 = u32::MAX;
        let mut table = alloc::vec![EMPTY; spec.table_size as usize];
        let budget = MAX_PROBES_PER_ENTRY * size;
        let mut probes: u64 = 0;
        // Turns in (round, rank) order: the order of Envoy's nested loops, without
        // visiting nodes that sit a round out. The heavy node takes every round, so
        // the table is full by round M; later turns are never needed.
        let last_round = size + 1;
        let mut turns: BinaryHeap<Reverse<(u64, u32)>> =
            (0..builders.len() as u32).map(|rank| Reverse((1, rank))).collect();
        let mut filled: u64 = 0;
        while filled < size {
            let Some(Reverse((round, rank))) = turns.pop() else {
                return Err(Error::limit("strategy: the maglev table could not be filled"));
            };
            let builder = &mut builders[rank as usize];
            builder.target += max;
            while table[builder.position as usize] != EMPTY {
                builder.position = (builder.position + builder.skip) % size;
                probes += 1;
                if probes > budget {
                    return Err(Error::limit(format!(
                        "strategy.table_size: filling the table took more than {MAX_PROBES_PER_ENTRY} probes per entry (node ids with colliding permutations)"
                    )));
                }
            }
            table[builder.position as usize] = builder.node;
            builder.position = (builder.position + builder.skip) % size;
            filled += 1;
            if let Some(next) = next_round(round, builder.weight, builder.target, last_round) {
                turns.push(Reverse((next, rank)));
            }
        }
        Ok(Maglev { table, node_count: nodes.len() as u32 })
    }

    /// The table size `M`.
    pub fn table_size(&self) -> u32 {
        self.table.len() as u32
    }

    /// The node index of every entry, in entry order.
    pub fn table(&self) -> &[u32] {
        &self.table
    }

    /// The entry a hash looks up: `hash % M`.
    #[inline]
    pub fn entry_of(&self, hash: u64) -> u32 {
        (hash % self.table.len() as u64) as u32
    }

    /// The node index owning `hash`: `table[hash % M]`.
    #[inline]
    pub fn node_of(&self, hash: u64) -> u32 {
        self.table[self.entry_of(hash) as usize]
    }

    /// The first `count` distinct nodes met walking the table forward from the entry
    /// of `hash`, into `out` (cleared first). `count` above the node count gives every
    /// node.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::hashed::maglev::{Maglev, MaglevSpec};
    /// use shardroute::Node;
    /// let nodes: Vec<Node> =
    ///     (0..4).map(|i| Node { id: format!("n{i}"), address: None, weight: 1.0, zone: None, state: Default::default() }).collect();
    /// let maglev = Maglev::new(&MaglevSpec { table_size: 13 }, &nodes)?;
    /// let mut out = Vec::new();
    /// maglev.replicas_of(42, 4, &mut out);
    /// assert_eq!(out[0], maglev.node_of(42));
    /// out.sort();
    /// assert_eq!(out, [0, 1, 2, 3]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        distinct_successors(&self.table, self.entry_of(hash) as usize, count.min(self.node_count) as usize, out);
    }

    /// How many entries each node owns, by node index (Envoy's
    /// `min/max_entries_per_host` are the extremes of this).
    pub fn entries_per_node(&self) -> Vec<u32> {
        let mut counts = alloc::vec![0u32; self.node_count as usize];
        for &node in &self.table {
            counts[node as usize] += 1;
        }
        counts
    }
}

impl NodeFromHash for Maglev {
    #[inline]
    fn node_of(&self, hash: u64) -> u32 {
        Maglev::node_of(self, hash)
    }

    fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        Maglev::replicas_of(self, hash, count, out);
    }

    fn node_count(&self) -> u32 {
        self.node_count
    }

    fn hit(&self, hash: u64) -> Hit {
        Hit::TableEntry { entry: self.entry_of(hash), size: self.table_size() }
    }
}

/// A node's `(offset, skip)` in a table of `size` entries (`size >= 2`).
fn permutation(id: &[u8], size: u64) -> (u64, u64) {
    (xxh64(id, 0) % size, xxh64(id, 1) % (size - 1) + 1)
}

/// The first round after `round` in which a node of normalised `weight` whose target
/// is `target` takes a turn: the least `r > round` with `r * weight >= target` in IEEE
/// double arithmetic (Envoy's test, negated), or `None` past `last`.
fn next_round(round: u64, weight: f64, target: f64, last: u64) -> Option<u64> {
    let estimate = target / weight;
    // A NaN (never produced: weights are positive) also lands here.
    if estimate.is_nan() || estimate > (last + 2) as f64 {
        return None;
    }
    // Float-to-int `as` truncates and saturates: the same on every platform.
    let mut next = (estimate as u64).saturating_sub(1).max(round + 1);
    while (next as f64) * weight < target {
        next += 1;
        if next > last {
            return None;
        }
    }
    while next > round + 1 && ((next - 1) as f64) * weight >= target {
        next -= 1;
    }
    (next <= last).then_some(next)
}

/// Whether `n` is prime (trial division; `n <= 2^32` so at most 32 768 divisions).
///
/// # Example
/// ```
/// use shardroute::strategy::hashed::maglev::is_prime;
/// assert!(is_prime(65_537));
/// assert!(!is_prime(65_536));
/// assert!(!is_prime(1));
/// ```
pub fn is_prime(n: u32) -> bool {
    if n < 4 {
        return n >= 2;
    }
    if n.is_multiple_of(2) {
        return false;
    }
    let n = u64::from(n);
    let mut divisor = 3u64;
    while divisor * divisor <= n {
        if n % divisor == 0 {
            return false;
        }
        divisor += 2;
    }
    true
}

/// The least prime `>= n` (for error messages; `n` well below 2^32).
fn next_prime(n: u32) -> u32 {
    let mut candidate = n.max(2);
    while !is_prime(candidate) && candidate < u32::MAX {
        candidate += 1;
    }
    candidate
}
