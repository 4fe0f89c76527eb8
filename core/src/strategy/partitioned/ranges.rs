//! What [`key_range`](crate::strategy::partitioned::key_range) and [`hash_range`](crate::strategy::partitioned::hash_range) share: a
//! range table (sorted boundaries, one owner per range) and the operations that edit it
//! the way Bigtable, HBase, CockroachDB and DynamoDB edit theirs: split, split at the
//! median of a sample, merge, move, and pre-split an empty key space.
//!
//! A *position* is where a key sits in the ordered space: the key itself in byte order
//! for `key_range`, the key's 64-bit hash for `hash_range`. `N` boundaries make `N + 1`
//! ranges `[lowest, b0), [b0, b1), ..., [b(N-1), end)`; a position at a boundary belongs
//! to the range that starts there.
//!
//! # Operations
//!
//! Applied with [`ops::apply`](crate::ops::apply) (the code is in `ops/ranges.rs`). Positions are written as
//! in the document: a key object (`{"utf8": ..}`, `{"hex": ..}`, `{"u64": ..}`) for
//! `key_range`, a u64 (number or decimal string) for `hash_range`. Sample keys are always
//! key objects; for `hash_range` their hashes are used. `node` is the id of an existing
//! node, or a node entry (`{"id": "n9", "address": ...}`) that is appended to `nodes`.
//!
//! | `op` | fields | what it does |
//! |---|---|---|
//! | `range_split` | `at`, `shard`?, `node`? | range `shard` (default: the range holding `at`) becomes `[start, at)`, keeping its owner, and `[at, end)`, owned by `node` (default: the same owner); `at` must lie strictly inside the range |
//! | `range_split_median` | `shard`, `sample`, `node`? | as `range_split` at the median of the distinct sample positions inside the range (the upper median: with `m` of them, the one at index `m / 2` in order); at least 2 are needed |
//! | `range_merge` | `shard`, `node`? | ranges `shard` and `shard + 1` become one, owned by `node` (default: the owner of range `shard`) |
//! | `range_move` | `shard`, `node` | range `shard` changes owner |
//! | `range_presplit` | `ranges`, `sample`?, `nodes`? | replaces the table with `ranges` ranges of equal sample counts, assigned round-robin over `nodes` (default: every node, in list order); `sample` is required for `key_range`; without it a `hash_range` is cut into equal hash intervals |
//!
//! **Pre-split.** The sample positions are sorted and deduplicated (a key listed twice
//! counts once, so ranges get equal numbers of *distinct* keys, not of occurrences); with
//! `m` of them and `k` ranges, boundary `j` (for `j` in `1..k`) is the position at index
//! `floor(j * m / k)`, so every range holds `floor(m / k)` or `ceil(m / k)` of the
//! sample. `m >= k` is required. See [`presplit_points`].
//!
//! **Reports.** Beside the new `topology` (epoch + 1) every operation reports `moved`:
//! the key ranges whose owner changed, in key order, each
//! `{"start": position, "end": position or null, "from": id, "to": id}` (half-open;
//! `end` null is the end of the space; adjacent pieces with the same move are joined),
//! and `added`: the ids of nodes appended by node entries. Split and median split also
//! report `shard` and `boundary` (the new boundary), merge reports `shard` and
//! `removed_boundary`, move reports `shard`, pre-split reports `boundaries`.
//!
//! **Shard numbers** are range positions: a split or merge shifts the numbers of the
//! ranges after it by one (their keys and owners do not change). The `moved` report is
//! in key ranges, which stay meaningful across the renumbering.
//!
//! **Errors.** `invalid_argument` for parameters that do not fit (a shard out of range,
//! a split point outside or at the start of its range, too few distinct sample keys,
//! an unknown node, an op on a strategy that is not a range strategy);
//! `limit_exceeded` past [`limits::MAX_RANGES`] ranges or [`limits::MAX_SAMPLE_KEYS`]
//! sample keys; `invalid_topology` when the result would not be a valid document (a new
//! node entry with a weight, a boundary key longer than the limit).

use alloc::format;
use alloc::vec::Vec;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::hashing::KeyHashing;
use crate::json;
use crate::key::{Key, OwnedKey};
use crate::limits;
use crate::node::Node;

/// A position as an operation gives it (`at` of `range_split`): a key object for
/// `key_range`, a u64 for `hash_range`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangePoint {
    /// A key, for `key_range`.
    Key(OwnedKey),
    /// A hash, for `hash_range`.
    Hash(u64),
}

/// A place in a range strategy's ordered space: key bytes or a hash.
pub(crate) trait Position: Clone + Ord {
    /// The position a [`RangePoint`] names, if it is of this space's kind.
    fn from_point(point: &RangePoint) -> Option<Self>;
    /// The document form.
    fn to_value(&self) -> Value;
    /// The lowest position: where range 0 starts.
    fn lowest() -> Self;
    /// The position of a key.
    fn of_key(hashing: &KeyHashing, key: Key<'_>) -> Self;
    /// `count - 1` boundaries cutting the space into `count` equal intervals, where the
    /// space allows it (hashes, not keys).
    fn uniform(count: u32) -> Option<Vec<Self>>;
}

/// The `count` node indices `0, 1, .., n-1, 0, 1, ..`: the owners when `ranges` is absent.
pub(crate) fn round_robin(count: usize, node_count: usize) -> Vec<u32> {
    (0..count).map(|range| (range % node_count.max(1)) as u32).collect()
}

/// Reads `ranges`: an array of node ids, one per range.
pub(crate) fn parse_owner_ids(path: &str, value: &Value, nodes: &[Node]) -> Result<Vec<u32>> {
    let entries = json::array(path, value)?;
    if entries.is_empty() {
        return Err(json::at(path, "a table needs at least one range"));
    }
    if entries.len() > limits::MAX_RANGES as usize {
        return Err(Error::limit(format!("{path}: {} ranges; the limit is {}", entries.len(), limits::MAX_RANGES)));
    }
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let entry_path = format!("{path}[{index}]");
            let id = json::str(&entry_path, entry)?;
            nodes
                .iter()
                .position(|node| node.id == id)
                .map(|index| index as u32)
                .ok_or_else(|| json::at(&entry_path, format_args!("names node {id:?}, which is not in nodes")))
        })
        .collect()
}

/// Reads a `boundaries` array with `parse` per entry, after checking its length.
pub(crate) fn parse_boundaries<P>(
    path: &str,
    value: &Value,
    parse: impl Fn(&str, &Value) -> Result<P>,
) -> Result<Vec<P>> {
    let entries = json::array(path, value)?;
    if entries.len() >= limits::MAX_RANGES as usize {
        return Err(Error::limit(format!(
            "{path}: {} boundaries make {} ranges; the limit is {} ranges",
            entries.len(),
            entries.len() + 1,
            limits::MAX_RANGES
        )));
    }
    entries.iter().enumerate().map(|(index, entry)| parse(&format!("{path}[{index}]"), entry)).collect()
}

/// The checks every range table passes, parsed or built in code: `N` boundaries and
/// `N + 1` owners (at most [`limits::MAX_RANGES`]), owners in the node list, boundaries
/// strictly increasing (`increasing(a, b)` is `a < b` in the strategy's order) and the
/// first above `lowest`.
pub(crate) fn check_table<P>(
    boundary_count: usize,
    ranges: &[u32],
    node_count: usize,
    boundary_at: impl Fn(usize) -> P,
    increasing: impl Fn(&P, &P) -> bool,
    lowest: &P,
) -> Result<()> {
    if ranges.len() > limits::MAX_RANGES as usize {
        return Err(Error::limit(format!(
            "strategy.ranges: {} ranges; the limit is {}",
            ranges.len(),
            limits::MAX_RANGES
        )));
    }
    if ranges.len() != boundary_count + 1 {
        return Err(json::at(
            "strategy.ranges",
            format_args!(
                "expected {} entries (one per range: {boundary_count} boundaries make {} ranges), found {}",
                boundary_count + 1,
                boundary_count + 1,
                ranges.len()
            ),
        ));
    }
    if let Some(index) = ranges.iter().position(|&owner| owner as usize >= node_count) {
        return Err(json::at(
            &format!("strategy.ranges[{index}]"),
            format_args!("node index {} is out of range for {node_count} nodes", ranges[index]),
        ));
    }
    let mut previous: Option<P> = None;
    for index in 0..boundary_count {
        let boundary = boundary_at(index);
        match &previous {
            None if !increasing(lowest, &boundary) => {
                return Err(json::at(
                    &format!("strategy.boundaries[{index}]"),
                    "the lowest position (empty key, hash 0) cannot be a boundary: range 0 would be empty",
                ))
            }
            Some(before) if !increasing(before, &boundary) => {
                return Err(json::at(
                    &format!("strategy.boundaries[{index}]"),
                    format_args!("must be greater than boundaries[{}]: boundaries are strictly increasing", index - 1),
                ))
            }
            _ => {}
        }
        previous = Some(boundary);
    }
    Ok(())
}

/// The boundaries that cut a sample into `ranges` ranges of equal counts.
///
/// The sample is sorted and deduplicated; with `m` distinct values, boundary `j` (for
/// `j` in `1..ranges`) is the value at index `floor(j * m / ranges)`, so each range holds
/// `floor(m / ranges)` or `ceil(m / ranges)` sample values and every boundary is a sample
/// value above the smallest one. This is what `range_presplit` does with the sample's
/// positions.
///
/// # Errors
/// `invalid_argument` when `ranges` is 0 or the sample has fewer than `ranges` distinct
/// values (for `ranges > 1`).
///
/// # Example
/// ```
/// use shardroute::strategy::partitioned::ranges::presplit_points;
/// let sample = ["m", "c", "x", "a", "c", "q"];
/// // 5 distinct keys (a c m q x), 3 ranges: boundaries at indices 5/3 = 1 and 10/3 = 3,
/// // so [.., "c") holds a, ["c", "q") holds c m, ["q", ..) holds q x.
/// assert_eq!(presplit_points(&sample, 3).unwrap(), ["c", "q"]);
/// assert_eq!(presplit_points(&sample, 6).unwrap_err().code(), "invalid_argument");
/// ```
pub fn presplit_points<T: Ord + Clone>(sample: &[T], ranges: u32) -> Result<Vec<T>> {
    let mut sorted: Vec<T> = sample.to_vec();
    sorted.sort();
    sorted.dedup();
    quantiles(sorted, ranges)
}

/// [`presplit_points`] over values already sorted and deduplicated.
pub(crate) fn quantiles<T: Clone>(distinct: Vec<T>, ranges: u32) -> Result<Vec<T>> {
    if ranges == 0 {
        return Err(Error::argument("range_presplit: ranges must be at least 1"));
    }
    let m = distinct.len() as u64;
    if ranges > 1 && m < u64::from(ranges) {
        return Err(Error::argument(format!(
            "range_presplit: {ranges} ranges need at least {ranges} distinct sample keys; the sample has {m}"
        )));
    }
    Ok((1..u64::from(ranges)).map(|j| distinct[(j * m / u64::from(ranges)) as usize].clone()).collect())
}
