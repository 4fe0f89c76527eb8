//! What [`key_range`] and [`hash_range`](crate::strategy::partitioned::hash_range) share: a
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
//! Applied with [`operations::apply`](crate::ops::apply). Positions are written as
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
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Object};
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::ops::{next_epoch, operation_object};
use crate::strategy::partitioned::hash_range::HashRangeSpec;
use crate::strategy::partitioned::key_range::{self, KeyPosition, KeyRangeSpec};
use crate::strategy::Strategy;
use crate::topology::Topology;

/// A place in a range strategy's ordered space: key bytes or a hash.
pub(crate) trait Position: Clone + Ord {
    /// Reads a boundary or split point as written in the document (`invalid_topology` at `path`).
    fn parse(path: &str, value: &Value) -> Result<Self>;
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
fn quantiles<T: Clone>(distinct: Vec<T>, ranges: u32) -> Result<Vec<T>> {
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

/// A range table being edited: boundaries and the owner id of each range.
#[derive(Clone, Debug)]
struct Table<P> {
    boundaries: Vec<P>,
    owners: Vec<String>,
}

impl<P: Position> Table<P> {
    /// The range holding `position`.
    fn range_of(&self, position: &P) -> usize {
        self.boundaries.partition_point(|boundary| boundary <= position)
    }

    fn start(&self, range: usize) -> P {
        if range == 0 {
            P::lowest()
        } else {
            self.boundaries[range - 1].clone()
        }
    }

    fn contains(&self, range: usize, position: &P) -> bool {
        self.range_of(position) == range
    }

    fn describe(&self, range: usize) -> String {
        let end = self.boundaries.get(range).map_or_else(|| String::from("end"), |end| format!("{}", end.to_value()));
        format!("range {range} [{}, {end})", self.start(range).to_value())
    }

    fn strategy_value(&self, type_name: &str) -> Value {
        let mut object = Map::new();
        object.insert("type".into(), type_name.into());
        object.insert("boundaries".into(), Value::Array(self.boundaries.iter().map(P::to_value).collect()));
        object.insert("ranges".into(), Value::Array(self.owners.iter().cloned().map(Value::String).collect()));
        Value::Object(object)
    }
}

/// Applies one of the range operations (see the module docs) to a `key_range` or
/// `hash_range` topology.
pub(crate) fn apply(name: &str, topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let ids = |ranges: &[u32]| -> Result<Vec<String>> {
        ranges
            .iter()
            .map(|&index| {
                topology
                    .nodes
                    .get(index as usize)
                    .map(|node| node.id.clone())
                    .ok_or_else(|| json::at("strategy.ranges", "names a node index out of range"))
            })
            .collect()
    };
    match &topology.strategy {
        Strategy::KeyRange(KeyRangeSpec { boundaries, ranges }) => {
            let boundaries = boundaries.iter().cloned().map(KeyPosition).collect();
            edit(name, topology, operation, Table { boundaries, owners: ids(ranges)? })
        }
        Strategy::HashRange(HashRangeSpec { boundaries, ranges }) => {
            edit(name, topology, operation, Table { boundaries: boundaries.clone(), owners: ids(ranges)? })
        }
        other => Err(Error::argument(format!(
            "{name}: applies to key_range and hash_range topologies, not {}",
            other.type_name()
        ))),
    }
}

fn argument(err: Error) -> Error {
    Error::argument(String::from(err.message()))
}

fn required<'a>(object: &Object<'a>, name: &str) -> Result<&'a Value> {
    object.required(name).map_err(argument)
}

/// A `shard` parameter: a range of the table.
fn shard_param<P>(object: &Object<'_>, table: &Table<P>) -> Result<usize> {
    let value = required(object, "shard")?;
    let last = table.owners.len() as u32 - 1;
    json::u32_in(&object.path_of("shard"), value, 0, last).map(|shard| shard as usize).map_err(argument)
}

/// A `node` parameter: an existing id, or a node entry to append (collected in `added`).
fn node_param(path: &str, value: &Value, nodes: &[Node], added: &mut Vec<Value>) -> Result<String> {
    let known = |id: &str| nodes.iter().any(|node| node.id == id);
    let appended = |added: &[Value], id: &str| added.iter().any(|entry| entry["id"] == id);
    match value {
        Value::String(id) if known(id) || appended(added, id) => Ok(id.clone()),
        Value::String(id) => Err(Error::argument(format!(
            "{path}: no node {id:?}; name an existing node or give a node entry {{\"id\": ...}} to add one"
        ))),
        Value::Object(entry) => {
            let id = match entry.get("id") {
                Some(Value::String(id)) => id.clone(),
                _ => return Err(Error::argument(format!("{path}.id: a new node entry needs a string id"))),
            };
            if known(&id) || appended(added, &id) {
                return Err(Error::argument(format!("{path}: node {id:?} already exists; name it by its id")));
            }
            added.push(value.clone());
            Ok(id)
        }
        other => Err(Error::argument(format!(
            "{path}: expected a node id or a node entry, found {}",
            json::type_name(other)
        ))),
    }
}

/// The optional `node` field.
fn optional_node(object: &Object<'_>, nodes: &[Node], added: &mut Vec<Value>) -> Result<Option<String>> {
    object.optional("node").map(|value| node_param(&object.path_of("node"), value, nodes, added)).transpose()
}

/// The positions of the `sample` keys.
fn sample_positions<P: Position>(object: &Object<'_>, hashing: &KeyHashing) -> Result<Option<Vec<P>>> {
    let Some(value) = object.optional("sample") else { return Ok(None) };
    let path = object.path_of("sample");
    let entries = json::array(&path, value).map_err(argument)?;
    if entries.len() > limits::MAX_SAMPLE_KEYS as usize {
        return Err(Error::limit(format!(
            "{path}: {} sample keys; the limit is {}",
            entries.len(),
            limits::MAX_SAMPLE_KEYS
        )));
    }
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let key = key_range::parse_key(&format!("{path}[{index}]"), entry).map_err(argument)?;
            Ok(P::of_key(hashing, key.as_key()))
        })
        .collect::<Result<Vec<P>>>()
        .map(Some)
}

fn split_at<P: Position>(table: &Table<P>, next: &mut Table<P>, shard: usize, at: P, node: String) -> Result<()> {
    if !table.contains(shard, &at) || at == table.start(shard) {
        return Err(Error::argument(format!(
            "operation.at: {} is not strictly inside {}; a split point must leave both halves non-empty",
            at.to_value(),
            table.describe(shard)
        )));
    }
    next.boundaries.insert(shard, at);
    next.owners.insert(shard + 1, node);
    Ok(())
}

fn edit<P: Position>(
    name: &str,
    topology: &Topology,
    operation: &Value,
    table: Table<P>,
) -> Result<(Topology, Map<String, Value>)> {
    let nodes = &topology.nodes;
    let mut next = table.clone();
    let mut added: Vec<Value> = Vec::new();
    let mut report = Map::new();
    match name {
        "range_split" => {
            let object = operation_object(operation, &["op", "at", "shard", "node"])?;
            let at = P::parse(&object.path_of("at"), required(&object, "at")?).map_err(argument)?;
            let shard = match object.optional("shard") {
                Some(_) => shard_param(&object, &table)?,
                None => table.range_of(&at),
            };
            let node = optional_node(&object, nodes, &mut added)?.unwrap_or_else(|| table.owners[shard].clone());
            report.insert("shard".into(), (shard as u32).into());
            report.insert("boundary".into(), at.to_value());
            split_at(&table, &mut next, shard, at, node)?;
        }
        "range_split_median" => {
            let object = operation_object(operation, &["op", "shard", "sample", "node"])?;
            let shard = shard_param(&object, &table)?;
            required(&object, "sample")?;
            let sample: Vec<P> = sample_positions(&object, &topology.hashing)?.unwrap_or_default();
            let mut inside: Vec<P> = sample.into_iter().filter(|position| table.contains(shard, position)).collect();
            inside.sort();
            inside.dedup();
            if inside.len() < 2 {
                return Err(Error::argument(format!(
                    "range_split_median: the sample has {} distinct key(s) in {}; a median split needs at least 2",
                    inside.len(),
                    table.describe(shard)
                )));
            }
            let at = inside.swap_remove(inside.len() / 2);
            let node = optional_node(&object, nodes, &mut added)?.unwrap_or_else(|| table.owners[shard].clone());
            report.insert("shard".into(), (shard as u32).into());
            report.insert("boundary".into(), at.to_value());
            split_at(&table, &mut next, shard, at, node)?;
        }
        "range_merge" => {
            let object = operation_object(operation, &["op", "shard", "node"])?;
            let shard = shard_param(&object, &table)?;
            if shard + 1 >= table.owners.len() {
                return Err(Error::argument(format!(
                    "range_merge: {} is the last range; a merge joins range i with range i + 1",
                    table.describe(shard)
                )));
            }
            let removed = next.boundaries.remove(shard);
            next.owners.remove(shard + 1);
            if let Some(node) = optional_node(&object, nodes, &mut added)? {
                next.owners[shard] = node;
            }
            report.insert("shard".into(), (shard as u32).into());
            report.insert("removed_boundary".into(), removed.to_value());
        }
        "range_move" => {
            let object = operation_object(operation, &["op", "shard", "node"])?;
            let shard = shard_param(&object, &table)?;
            next.owners[shard] = node_param(&object.path_of("node"), required(&object, "node")?, nodes, &mut added)?;
            report.insert("shard".into(), (shard as u32).into());
        }
        "range_presplit" => {
            let object = operation_object(operation, &["op", "ranges", "sample", "nodes"])?;
            let path = object.path_of("ranges");
            let value = required(&object, "ranges")?;
            let count = match value.as_u64() {
                Some(count) if count > u64::from(limits::MAX_RANGES) => {
                    return Err(Error::limit(format!("{path}: {count} ranges; the limit is {}", limits::MAX_RANGES)))
                }
                _ => json::u32_in(&path, value, 1, limits::MAX_RANGES).map_err(argument)?,
            };
            let owners: Vec<String> = match object.optional("nodes") {
                None => nodes.iter().map(|node| node.id.clone()).collect(),
                Some(value) => {
                    let path = object.path_of("nodes");
                    let entries = json::array(&path, value).map_err(argument)?;
                    if entries.is_empty() {
                        return Err(Error::argument(format!("{path}: needs at least one node")));
                    }
                    let mut owners: Vec<String> = Vec::with_capacity(entries.len());
                    for (index, entry) in entries.iter().enumerate() {
                        let id = node_param(&format!("{path}[{index}]"), entry, nodes, &mut added)?;
                        if owners.contains(&id) {
                            return Err(Error::argument(format!("{path}[{index}]: node {id:?} is listed twice")));
                        }
                        owners.push(id);
                    }
                    owners
                }
            };
            let boundaries = match sample_positions::<P>(&object, &topology.hashing)? {
                Some(mut sample) => {
                    sample.sort();
                    sample.dedup();
                    quantiles(sample, count)?
                }
                None => P::uniform(count).ok_or_else(|| {
                    Error::argument(format!(
                        "range_presplit: a {} table needs a sample of keys to place its boundaries",
                        topology.strategy.type_name()
                    ))
                })?,
            };
            next.owners = (0..count as usize).map(|range| owners[range % owners.len()].clone()).collect();
            report.insert("boundaries".into(), Value::Array(boundaries.iter().map(P::to_value).collect()));
            next.boundaries = boundaries;
        }
        other => return Err(Error::argument(format!("operation: unknown op {other:?}"))),
    }
    let mut document = topology.to_value();
    document["epoch"] = json::u64_value(next_epoch(topology)?);
    if let Some(Value::Array(entries)) = document.get_mut("nodes") {
        entries.extend(added.iter().cloned());
    }
    document["strategy"] = next.strategy_value(topology.strategy.type_name());
    let result = Topology::from_value(&document)?;
    report.insert("moved".into(), moves(&table, &next));
    report.insert("added".into(), Value::Array(added.iter().map(|entry| entry["id"].clone()).collect()));
    Ok((result, report))
}

/// The key ranges whose owner differs between two tables, in order, adjacent pieces
/// with the same move joined.
fn moves<P: Position>(old: &Table<P>, new: &Table<P>) -> Value {
    let mut cuts: Vec<&P> = old.boundaries.iter().chain(new.boundaries.iter()).collect();
    cuts.sort();
    cuts.dedup();
    let owner = |table: &Table<P>, start: Option<&P>| match start {
        None => table.owners[0].clone(),
        Some(position) => table.owners[table.range_of(position)].clone(),
    };
    let mut moved: Vec<(Option<&P>, Option<&P>, String, String)> = Vec::new();
    let mut joined = false;
    for segment in 0..=cuts.len() {
        let start = segment.checked_sub(1).map(|cut| cuts[cut]);
        let end = cuts.get(segment).copied();
        let (from, to) = (owner(old, start), owner(new, start));
        if from == to {
            joined = false;
            continue;
        }
        match moved.last_mut() {
            Some(last) if joined && last.2 == from && last.3 == to => last.1 = end,
            _ => moved.push((start, end, from, to)),
        }
        joined = true;
    }
    Value::Array(
        moved
            .into_iter()
            .map(|(start, end, from, to)| {
                let mut entry = Map::new();
                entry.insert("start".into(), start.map_or_else(|| P::lowest().to_value(), P::to_value));
                entry.insert("end".into(), end.map_or(Value::Null, P::to_value));
                entry.insert("from".into(), Value::String(from));
                entry.insert("to".into(), Value::String(to));
                Value::Object(entry)
            })
            .collect(),
    )
}
