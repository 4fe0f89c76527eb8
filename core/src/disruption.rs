//! Disruption: how much of the key space changes owner between two topologies, and
//! between which nodes it moves. The Maglev paper's measure of a table change, made
//! available for every strategy.
//!
//! The comparison is by node **id** (indices shift when a node is removed), and it is
//! exact where the strategy allows, sampled otherwise:
//!
//! | method | when | unit of `changed` and `total` |
//! |---|---|---|
//! | `table` | both `maglev`, same table size, same key hashing | table entries (`total` = `M`) |
//! | `ring` | both `token_ring`, same key hashing | ring positions (`total` = `2^64`) |
//! | `sample` | anything else | [`SAMPLE_KEYS`] keys `"sample:0"`, `"sample:1"`, ... routed by both |
//!
//! Exact methods measure the fraction of *uniformly hashed* keys that move; the sample
//! measures the fraction of its own keys, within about 0.4% (one standard deviation at
//! 50%) of the true value.
//!
//! The `add_node` and `remove_node` operations of [`crate::ops`] report the
//! disruption of `maglev` and `token_ring` topologies (exact and cheap: one pass over
//! the table or the tokens); the `disruption` operation compares any two:
//!
//! ```json
//! {"op": "disruption", "to": {"format": "shardroute/1", "epoch": 0, "nodes": [...], "strategy": {...}}}
//! ```
//!
//! returns `to` (canonical, with the epoch of the current topology plus one; the epoch
//! written in `to` is ignored) as the new `topology`, and `disruption`:
//! `{"method", "changed", "total", "parts_per_million", "moves": [{"from", "to",
//! "changed"}]}`, with `moves` in byte order of `(from, to)`, counts above `2^53 - 1`
//! written as decimal strings, and the fraction as `parts_per_million` (`changed *
//! 10^6 / total`, rounded down): an integer, because JSON readers do not all round
//! floats alike.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::json::{self, Put as _};
use crate::node::Node;
use crate::router::Router;
use crate::strategy::hashed::maglev::{Maglev, MaglevSpec};
use crate::strategy::partitioned::token_ring::{TokenRing, TokenRingSpec};
use crate::topology::Topology;

/// How many keys the `sample` method routes.
pub const SAMPLE_KEYS: u32 = 16_384;

/// How a [`Disruption`] was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// Maglev table entries, compared one by one.
    Table,
    /// Token ring ranges, compared exactly over all `2^64` positions.
    Ring,
    /// [`SAMPLE_KEYS`] sample keys routed by both topologies.
    Sample,
}

impl Method {
    /// The name written in reports: `"table"`, `"ring"` or `"sample"`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Table => "table",
            Method::Ring => "ring",
            Method::Sample => "sample",
        }
    }
}

/// A share of the key space that moves from one node to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The node id that owned it before.
    pub from: String,
    /// The node id that owns it after.
    pub to: String,
    /// How much moves, in the unit of the [`Method`].
    pub changed: u128,
}

/// The result of comparing two topologies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disruption {
    /// How it was measured.
    pub method: Method,
    /// How much of the key space changes owner, in the method's unit.
    pub changed: u128,
    /// The whole key space in the same unit (`M`, `2^64` or [`SAMPLE_KEYS`]).
    pub total: u128,
    /// Where it goes: one entry per `(from, to)` pair, in byte order of the ids.
    pub moves: Vec<Move>,
}

impl Disruption {
    /// `changed / total`, in `[0, 1]`.
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.changed as f64 / self.total as f64
        }
    }

    /// `changed * 10^6 / total`, rounded down: the fraction as an exact integer (what
    /// reports carry, since JSON readers do not all parse floats alike).
    pub fn parts_per_million(&self) -> u128 {
        (self.changed * 1_000_000).checked_div(self.total).unwrap_or(0)
    }

    /// The report object: `{"method", "changed", "total", "parts_per_million", "moves"}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.put("method", self.method.name().into());
        map.put("changed", count_value(self.changed));
        map.put("total", count_value(self.total));
        map.put("parts_per_million", count_value(self.parts_per_million()));
        let moves = self
            .moves
            .iter()
            .map(|one| {
                let mut entry = Map::new();
                entry.put("from", Value::String(one.from.clone()));
                entry.put("to", Value::String(one.to.clone()));
                entry.put("changed", count_value(one.changed));
                Value::Object(entry)
            })
            .collect();
        map.put("moves", Value::Array(moves));
        Value::Object(map)
    }
}

/// A count as JSON: a number up to `2^53 - 1`, a decimal string above.
fn count_value(count: u128) -> Value {
    match u64::try_from(count) {
        Ok(small) => json::u64_value(small),
        Err(_) => Value::String(count.to_string()),
    }
}

/// Collects `(from index, to index) -> amount` into sorted [`Move`]s.
fn moves(flows: BTreeMap<(u32, u32), u128>, before: &[Node], after: &[Node]) -> Vec<Move> {
    let mut moves: Vec<Move> = flows
        .into_iter()
        .map(|((from, to), changed)| Move {
            from: before[from as usize].id.clone(),
            to: after[to as usize].id.clone(),
            changed,
        })
        .collect();
    moves.sort_unstable_by(|a, b| (a.from.as_bytes(), a.to.as_bytes()).cmp(&(b.from.as_bytes(), b.to.as_bytes())));
    moves
}

/// For each node of `before`, its index in `after` (by id), if still there.
fn index_map(before: &[Node], after: &[Node]) -> Vec<Option<u32>> {
    let mut sorted: Vec<(&str, u32)> = after.iter().enumerate().map(|(i, n)| (n.id.as_str(), i as u32)).collect();
    sorted.sort_unstable();
    before
        .iter()
        .map(|node| sorted.binary_search_by(|(id, _)| (*id).cmp(node.id.as_str())).ok().map(|at| sorted[at].1))
        .collect()
}

/// Compares two Maglev tables entry by entry: `None` when their sizes differ (then
/// entries do not correspond and only keys can be compared).
///
/// # Example
/// ```
/// use shardroute::disruption::maglev_tables;
/// use shardroute::strategy::hashed::maglev::{Maglev, MaglevSpec};
/// use shardroute::Node;
/// let nodes: Vec<Node> = (0..4)
///     .map(|i| Node { id: format!("n{i}"), address: None, weight: 1.0, zone: None, state: Default::default() })
///     .collect();
/// let spec = MaglevSpec { table_size: 65_537 };
/// let before = Maglev::new(&spec, &nodes[..3])?;
/// let after = Maglev::new(&spec, &nodes)?;
/// let report = maglev_tables(&before, &nodes[..3], &after, &nodes).unwrap();
/// // The new node takes about a quarter of the table, and little else moves.
/// let to_new: u128 = report.moves.iter().filter(|m| m.to == "n3").map(|m| m.changed).sum();
/// assert!(to_new >= 16_384 && report.changed - to_new < 2_000);
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn maglev_tables(
    before: &Maglev,
    before_nodes: &[Node],
    after: &Maglev,
    after_nodes: &[Node],
) -> Option<Disruption> {
    if before.table_size() != after.table_size() {
        return None;
    }
    let map = index_map(before_nodes, after_nodes);
    let mut flows: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let mut changed: u128 = 0;
    for (&a, &b) in before.table().iter().zip(after.table()) {
        if map[a as usize] != Some(b) {
            changed += 1;
            *flows.entry((a, b)).or_insert(0) += 1;
        }
    }
    Some(Disruption {
        method: Method::Table,
        changed,
        total: u128::from(before.table_size()),
        moves: moves(flows, before_nodes, after_nodes),
    })
}

/// Compares two token rings exactly: every range between consecutive tokens of either
/// ring has one owner in each, so the measure of the positions whose owner changes is
/// a sum over those ranges (both rings place keys at the same positions only under
/// the same key hashing, which the caller checks).
///
/// # Example
/// ```
/// use shardroute::disruption::token_rings;
/// use shardroute::strategy::partitioned::token_ring::{TokenRing, TokenRingSpec};
/// use shardroute::Node;
/// let node = |id: &str| Node { id: id.into(), address: None, weight: 1.0, zone: None, state: Default::default() };
/// let two = [node("a"), node("b")];
/// let three = [node("a"), node("b"), node("c")];
/// let before = TokenRing::new(&TokenRingSpec { tokens_per_node: 8, token_seed: 0, tokens: vec![(0, vec![0]), (1, vec![i64::MIN])] }, &two)?;
/// let after = TokenRing::new(&TokenRingSpec { tokens_per_node: 8, token_seed: 0, tokens: vec![(0, vec![0]), (1, vec![i64::MIN]), (2, vec![-(1 << 62)])] }, &three)?;
/// let report = token_rings(&before, &two, &after, &three);
/// // "c" takes (-2^63, -2^62] from "a": a quarter of the ring.
/// assert_eq!(report.changed, 1 << 62);
/// assert_eq!((report.moves[0].from.as_str(), report.moves[0].to.as_str()), ("a", "c"));
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn token_rings(before: &TokenRing, before_nodes: &[Node], after: &TokenRing, after_nodes: &[Node]) -> Disruption {
    let mut boundaries: Vec<i64> = before.tokens().iter().chain(after.tokens()).copied().collect();
    boundaries.sort_unstable();
    boundaries.dedup();
    let map = index_map(before_nodes, after_nodes);
    let mut flows: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let mut changed: u128 = 0;
    for (index, &end) in boundaries.iter().enumerate() {
        // The range (previous boundary, end]; with one boundary, the whole ring.
        let start = if index == 0 { boundaries[boundaries.len() - 1] } else { boundaries[index - 1] };
        let length = match (end as u64).wrapping_sub(start as u64) {
            0 => 1u128 << 64,
            length => u128::from(length),
        };
        let a = before.node_of(end as u64);
        let b = after.node_of(end as u64);
        if map[a as usize] != Some(b) {
            changed += length;
            *flows.entry((a, b)).or_insert(0) += length;
        }
    }
    Disruption { method: Method::Ring, changed, total: 1 << 64, moves: moves(flows, before_nodes, after_nodes) }
}

/// Compares two topologies by the best method available (see the module docs).
///
/// # Errors
/// As [`Router::new`] for either topology (a placement that cannot be built).
///
/// # Example
/// ```
/// use shardroute::disruption::{between, Method};
/// use shardroute::Topology;
/// let doc = |nodes: &str| format!(r#"{{"format": "shardroute/1", "epoch": 1,
///     "nodes": [{nodes}], "strategy": {{"type": "maglev", "table_size": 1009}}}}"#);
/// let before = Topology::from_json(&doc(r#"{"id": "a"}, {"id": "b"}, {"id": "c"}"#))?;
/// let after = Topology::from_json(&doc(r#"{"id": "a"}, {"id": "b"}"#))?;
/// let report = between(&before, &after)?;
/// assert_eq!(report.method, Method::Table);
/// // Every entry of "c" changes owner, and few others.
/// assert!(report.moves.iter().filter(|m| m.from == "c").map(|m| m.changed).sum::<u128>() >= 336);
/// assert!(report.parts_per_million() < 400_000);
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn between(before: &Topology, after: &Topology) -> Result<Disruption> {
    let same_hashing = before.hashing == after.hashing;
    let (from, to) = (&before.strategy, &after.strategy);
    if let (Some(a), Some(b)) = (from.spec::<MaglevSpec>(), to.spec::<MaglevSpec>()) {
        if same_hashing && a.table_size == b.table_size {
            let a = Maglev::new(a, &before.nodes)?;
            let b = Maglev::new(b, &after.nodes)?;
            if let Some(report) = maglev_tables(&a, &before.nodes, &b, &after.nodes) {
                return Ok(report);
            }
        }
    }
    if let (Some(a), Some(b)) = (from.spec::<TokenRingSpec>(), to.spec::<TokenRingSpec>()) {
        if same_hashing {
            let a = TokenRing::new(a, &before.nodes)?;
            let b = TokenRing::new(b, &after.nodes)?;
            return Ok(token_rings(&a, &before.nodes, &b, &after.nodes));
        }
    }
    sampled(before, after)
}

fn sampled(before: &Topology, after: &Topology) -> Result<Disruption> {
    let a = Router::new(before.clone())?;
    let b = Router::new(after.clone())?;
    let map = index_map(&before.nodes, &after.nodes);
    let mut flows: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let mut changed: u128 = 0;
    let mut key = String::new();
    for i in 0..SAMPLE_KEYS {
        key.clear();
        key.push_str("sample:");
        key.push_str(&i.to_string());
        let from = a.node_index(key.as_str())?;
        let to = b.node_index(key.as_str())?;
        if map[from as usize] != Some(to) {
            changed += 1;
            *flows.entry((from, to)).or_insert(0) += 1;
        }
    }
    Ok(Disruption {
        method: Method::Sample,
        changed,
        total: u128::from(SAMPLE_KEYS),
        moves: moves(flows, &before.nodes, &after.nodes),
    })
}
