//! The range operations of `key_range` and `hash_range` (split, median split, merge,
//! move, pre-split); what each does and reports is in
//! [`strategy::partitioned::ranges`](crate::strategy::partitioned::ranges).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::args::{argument, Args};
use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::limits;
use crate::node::{self, Node};
use crate::strategy::partitioned::hash_range::HashRangeSpec;
use crate::strategy::partitioned::key_range::{self, KeyPosition, KeyRangeSpec};
pub use crate::strategy::partitioned::ranges::RangePoint;
use crate::strategy::partitioned::ranges::{quantiles, Position};
use crate::strategy::Variant;
use crate::topology::Topology;

/// A node an operation names: an existing one by id, or a new entry to append.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeChoice {
    /// The id of a node of the topology (or one appended earlier by the same operation).
    Existing(String),
    /// A node entry (`{"id": "n9", "address": ...}`) appended to `nodes`.
    New(Node),
}

pub(super) fn parse(name: &str, operation: &Value, topology: &Topology) -> Result<Op> {
    let fields: &'static [&'static str] = match name {
        "range_split" => &["op", "at", "shard", "node"],
        "range_split_median" => &["op", "shard", "sample", "node"],
        "range_merge" | "range_move" => &["op", "shard", "node"],
        _ => &["op", "ranges", "sample", "nodes"],
    };
    let args = args(operation, fields)?;
    let shard = || args.u32_in("shard", 0, u32::MAX);
    let node = || args.optional("node").map(|value| node_choice(&args.path("node"), value)).transpose();
    let sample = || args.keys("sample", limits::MAX_SAMPLE_KEYS);
    Ok(match name {
        "range_split" => {
            let at = args.required("at")?;
            // Positions are written as the strategy writes its boundaries.
            let at = if topology.strategy.spec::<HashRangeSpec>().is_some() {
                RangePoint::Hash(json::u64(&args.path("at"), at).map_err(argument)?)
            } else {
                RangePoint::Key(key_range::parse_key(&args.path("at"), at).map_err(argument)?)
            };
            let shard = args.optional_u32_in("shard", 0, u32::MAX)?;
            Op::RangeSplit { at, shard, node: node()? }
        }
        "range_split_median" => {
            let shard = shard()?;
            args.required("sample")?;
            Op::RangeSplitMedian { shard, sample: sample()?.unwrap_or_default(), node: node()? }
        }
        "range_merge" => Op::RangeMerge { shard: shard()?, node: node()? },
        "range_move" => {
            let shard = shard()?;
            Op::RangeMove { shard, node: node_choice(&args.path("node"), args.required("node")?)? }
        }
        _ => {
            let path = args.path("ranges");
            let value = args.required("ranges")?;
            let ranges = match value.as_u64() {
                Some(count) if count > u64::from(limits::MAX_RANGES) => {
                    return Err(Error::limit(format!("{path}: {count} ranges; the limit is {}", limits::MAX_RANGES)))
                }
                _ => json::u32_in(&path, value, 1, limits::MAX_RANGES).map_err(argument)?,
            };
            let nodes = match args.optional("nodes") {
                None => None,
                Some(value) => Some(node_choices(&args, value)?),
            };
            let sample = sample()?;
            Op::RangePresplit { ranges, sample, nodes }
        }
    })
}

fn node_choices(args: &Args<'_>, value: &Value) -> Result<Vec<NodeChoice>> {
    let path = args.path("nodes");
    let entries = json::array(&path, value).map_err(argument)?;
    if entries.is_empty() {
        return Err(Error::argument(format!("{path}: needs at least one node")));
    }
    entries.iter().enumerate().map(|(index, entry)| node_choice(&format!("{path}[{index}]"), entry)).collect()
}

/// A `node` argument: an id, or a node entry to append.
fn node_choice(path: &str, value: &Value) -> Result<NodeChoice> {
    match value {
        Value::String(id) => Ok(NodeChoice::Existing(id.clone())),
        Value::Object(entry) => {
            if !matches!(entry.get("id"), Some(Value::String(_))) {
                return Err(Error::argument(format!("{path}.id: a new node entry needs a string id")));
            }
            Node::from_value(path, value).map(NodeChoice::New)
        }
        other => Err(Error::argument(format!(
            "{path}: expected a node id or a node entry, found {}",
            json::type_name(other)
        ))),
    }
}

impl Edit for KeyRangeSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let boundaries = self.boundaries.iter().cloned().map(KeyPosition).collect();
        let (table, nodes, report) = edit(op, topology, Table { boundaries, owners: self.ranges.clone() })?;
        let boundaries = table.boundaries.into_iter().map(|position| position.0).collect();
        let strategy = KeyRangeSpec { boundaries, ranges: table.owners }.into_strategy()?;
        Ok(Applied { topology: Topology { nodes, strategy, ..topology.clone() }, report })
    }
}

impl Edit for HashRangeSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let table = Table { boundaries: self.boundaries.clone(), owners: self.ranges.clone() };
        let (table, nodes, report) = edit(op, topology, table)?;
        let strategy = HashRangeSpec { boundaries: table.boundaries, ranges: table.owners }.into_strategy()?;
        Ok(Applied { topology: Topology { nodes, strategy, ..topology.clone() }, report })
    }
}

/// A range table being edited: boundaries and the owner (node index) of each range.
#[derive(Clone, Debug)]
struct Table<P> {
    boundaries: Vec<P>,
    owners: Vec<u32>,
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

    /// A `shard` argument: a range of the table.
    fn shard(&self, shard: u32) -> Result<usize> {
        let last = self.owners.len() as u32 - 1;
        if shard > last {
            return Err(Error::argument(format!("operation.shard: expected an integer in 0..={last}, found {shard}")));
        }
        Ok(shard as usize)
    }
}

/// The node list as the operation grows it: the topology's nodes, then appended entries.
struct Nodes {
    list: Vec<Node>,
    added: Vec<Value>,
}

impl Nodes {
    /// The index of a node choice, appending a new entry.
    fn index(&mut self, choice: &NodeChoice, path: &str) -> Result<u32> {
        match choice {
            NodeChoice::Existing(id) => node::index_of(&self.list, id).ok_or_else(|| {
                Error::argument(format!(
                    "{path}: no node {id:?}; name an existing node or give a node entry {{\"id\": ...}} to add one"
                ))
            }),
            NodeChoice::New(node) => {
                if node::index_of(&self.list, &node.id).is_some() {
                    return Err(Error::argument(format!(
                        "{path}: node {:?} already exists; name it by its id",
                        node.id
                    )));
                }
                self.list.push(node.clone());
                self.added.push(Value::String(node.id.clone()));
                Ok(self.list.len() as u32 - 1)
            }
        }
    }

    fn optional(&mut self, choice: Option<&NodeChoice>, path: &str) -> Result<Option<u32>> {
        choice.map(|choice| self.index(choice, path)).transpose()
    }
}

fn split_at<P: Position>(table: &Table<P>, next: &mut Table<P>, shard: usize, at: P, node: u32) -> Result<()> {
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

fn edit<P: Position>(op: &Op, topology: &Topology, table: Table<P>) -> Result<(Table<P>, Vec<Node>, Report)> {
    let mut next = table.clone();
    let mut nodes = Nodes { list: topology.nodes.clone(), added: Vec::new() };
    let mut report = Report::new();
    match op {
        Op::RangeSplit { at, shard, node } => {
            let at = P::from_point(at).ok_or_else(|| {
                Error::argument(format!(
                    "operation.at: a {} position is {}",
                    topology.strategy.type_name(),
                    if matches!(at, RangePoint::Key(_)) { "a u64 hash" } else { "a key object" }
                ))
            })?;
            let shard = match shard {
                Some(shard) => table.shard(*shard)?,
                None => table.range_of(&at),
            };
            let node = nodes.optional(node.as_ref(), "operation.node")?.unwrap_or(table.owners[shard]);
            report.put("shard", (shard as u32).into());
            report.put("boundary", at.to_value());
            split_at(&table, &mut next, shard, at, node)?;
        }
        Op::RangeSplitMedian { shard, sample, node } => {
            let shard = table.shard(*shard)?;
            let mut inside: Vec<P> = sample
                .iter()
                .map(|key| P::of_key(&topology.hashing, key.as_key()))
                .filter(|position| table.contains(shard, position))
                .collect();
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
            let node = nodes.optional(node.as_ref(), "operation.node")?.unwrap_or(table.owners[shard]);
            report.put("shard", (shard as u32).into());
            report.put("boundary", at.to_value());
            split_at(&table, &mut next, shard, at, node)?;
        }
        Op::RangeMerge { shard, node } => {
            let shard = table.shard(*shard)?;
            if shard + 1 >= table.owners.len() {
                return Err(Error::argument(format!(
                    "range_merge: {} is the last range; a merge joins range i with range i + 1",
                    table.describe(shard)
                )));
            }
            let removed = next.boundaries.remove(shard);
            next.owners.remove(shard + 1);
            if let Some(node) = nodes.optional(node.as_ref(), "operation.node")? {
                next.owners[shard] = node;
            }
            report.put("shard", (shard as u32).into());
            report.put("removed_boundary", removed.to_value());
        }
        Op::RangeMove { shard, node } => {
            let shard = table.shard(*shard)?;
            next.owners[shard] = nodes.index(node, "operation.node")?;
            report.put("shard", (shard as u32).into());
        }
        Op::RangePresplit { ranges, sample, nodes: choices } => {
            let owners: Vec<u32> = match choices {
                None => (0..topology.nodes.len() as u32).collect(),
                Some(choices) => {
                    let mut owners: Vec<u32> = Vec::with_capacity(choices.len());
                    for (index, choice) in choices.iter().enumerate() {
                        let path = format!("operation.nodes[{index}]");
                        let owner = nodes.index(choice, &path)?;
                        if owners.contains(&owner) {
                            let id = &nodes.list[owner as usize].id;
                            return Err(Error::argument(format!("{path}: node {id:?} is listed twice")));
                        }
                        owners.push(owner);
                    }
                    owners
                }
            };
            let boundaries = match sample {
                Some(sample) => {
                    let mut positions: Vec<P> =
                        sample.iter().map(|key| P::of_key(&topology.hashing, key.as_key())).collect();
                    positions.sort();
                    positions.dedup();
                    quantiles(positions, *ranges)?
                }
                None => P::uniform(*ranges).ok_or_else(|| {
                    Error::argument(format!(
                        "range_presplit: a {} table needs a sample of keys to place its boundaries",
                        topology.strategy.type_name()
                    ))
                })?,
            };
            next.owners = (0..*ranges as usize).map(|range| owners[range % owners.len()]).collect();
            report.put("boundaries", Value::Array(boundaries.iter().map(P::to_value).collect()));
            next.boundaries = boundaries;
        }
        _ => return Err(super::refused(op, topology)),
    }
    report.put("moved", moves(&table, &next, &nodes.list));
    report.put("added", Value::Array(core::mem::take(&mut nodes.added)));
    Ok((next, nodes.list, report))
}

/// The key ranges whose owner differs between two tables, in order, adjacent pieces
/// with the same move joined. Nodes are only appended, so one list names both tables'.
fn moves<P: Position>(old: &Table<P>, new: &Table<P>, nodes: &[Node]) -> Value {
    let mut cuts: Vec<&P> = old.boundaries.iter().chain(new.boundaries.iter()).collect();
    cuts.sort();
    cuts.dedup();
    let owner = |table: &Table<P>, start: Option<&P>| match start {
        None => table.owners[0],
        Some(position) => table.owners[table.range_of(position)],
    };
    let mut moved: Vec<(Option<&P>, Option<&P>, u32, u32)> = Vec::new();
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
    let id = |index: u32| Value::String(nodes[index as usize].id.clone());
    Value::Array(
        moved
            .into_iter()
            .map(|(start, end, from, to)| {
                let mut entry = Map::new();
                entry.put("start", start.map_or_else(|| P::lowest().to_value(), P::to_value));
                entry.put("end", end.map_or(Value::Null, P::to_value));
                entry.put("from", id(from));
                entry.put("to", id(to));
                Value::Object(entry)
            })
            .collect(),
    )
}
