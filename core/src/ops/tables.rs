//! Edits of explicit tables: directory entries (`directory_set`, `directory_remove`) and
//! multi-level maps (`multilevel_remap`, `multilevel_group_set`).

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

use serde_json::Value;

use super::args::{argument, argument_or_limit};
use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::json::Put as _;
use crate::key::Key;
use crate::node;
use crate::strategy::partitioned::directory::DirectorySpec;
use crate::strategy::partitioned::key_table;
use crate::strategy::partitioned::multilevel::{partition_hash, Group, GroupPlacement, MultilevelSpec};
use crate::strategy::Variant;
use crate::topology::Topology;

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    Ok(match name {
        "directory_set" => {
            let args = args(operation, &["op", "key", "node"])?;
            let key = args.key("key")?;
            Op::DirectorySet { key, node: args.str("node")?.to_string() }
        }
        "directory_remove" => Op::DirectoryRemove { key: args(operation, &["op", "key"])?.key("key")? },
        "multilevel_remap" => {
            let args = args(operation, &["op", "partition", "group"])?;
            let partition = args.u32_in("partition", 0, u32::MAX)?;
            Op::MultilevelRemap { partition, group: args.str("group")?.to_string() }
        }
        _ => {
            let args = args(operation, &["op", "group", "nodes"])?;
            let group = crate::json::id(&args.path("group"), args.required("group")?).map_err(argument_or_limit)?;
            let nodes = args.required("nodes")?;
            if !nodes.is_array() {
                return Err(Error::argument(format!("{}: expected an array of node ids", args.path("nodes"))));
            }
            Op::MultilevelGroupSet { group: group.to_string(), nodes: args.ids("nodes")? }
        }
    })
}

impl Edit for DirectorySpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let mut next = self.clone();
        let mut report = Report::new();
        let (key, from, to) = match op {
            Op::DirectorySet { key, node } => {
                let node = node::index_of(&topology.nodes, node).ok_or_else(|| {
                    Error::argument(format!("operation.node: names node {node:?}, which is not in nodes"))
                })?;
                key_table::check_table_keys("operation.key", &topology.hashing, &[(key.clone(), node)])
                    .map_err(argument)?;
                let previous = key_table::table_set(&mut next.entries, key.clone(), node)?;
                let from = match previous {
                    Some(node) => node,
                    None => fallback_node(topology, self, key.as_key())?,
                };
                report.put("replaced", Value::Bool(previous.is_some()));
                (key, from, node)
            }
            Op::DirectoryRemove { key } => {
                let from = key_table::table_remove(&mut next.entries, key.as_key()).ok_or_else(|| {
                    Error::argument(format!(
                        "directory_remove: {} is not in the directory",
                        key_table::key_to_value(key.as_key())
                    ))
                })?;
                (key, from, fallback_node(topology, self, key.as_key())?)
            }
            _ => return Err(super::refused(op, topology)),
        };
        report.put("key", key_table::key_to_value(key.as_key()));
        report.put("from", Value::String(topology.nodes[from as usize].id.clone()));
        report.put("to", Value::String(topology.nodes[to as usize].id.clone()));
        Ok(Applied { topology: Topology { strategy: next.into_strategy()?, ..topology.clone() }, report })
    }
}

/// The node the fallback alone gives `key`.
fn fallback_node(topology: &Topology, spec: &DirectorySpec, key: Key<'_>) -> Result<u32> {
    spec.fallback.compile(&topology.hashing, &topology.nodes)?.node_of(&topology.hashing, key)
}

impl Edit for MultilevelSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let (next, report) = match op {
            Op::MultilevelRemap { partition, group } => remap(self, *partition, group, topology)?,
            Op::MultilevelGroupSet { group, nodes } => group_set(self, group, nodes, topology)?,
            _ => return Err(super::refused(op, topology)),
        };
        Ok(Applied { topology: Topology { strategy: next.into_strategy()?, ..topology.clone() }, report })
    }
}

/// The node of `partition` if it were in `group`.
fn node_in(topology: &Topology, spec: &MultilevelSpec, group: &Group, partition: u32) -> u32 {
    GroupPlacement::build(&topology.hashing, &topology.nodes, group, spec.within_group)
        .node_of(partition_hash(partition))
}

/// Maps a partition to a group (a derived map is written out first, so nothing else
/// moves). Report: `partition`, `from_group`, `to_group`, and the partition's nodes
/// `from` and `to`.
fn remap(spec: &MultilevelSpec, partition: u32, id: &str, topology: &Topology) -> Result<(MultilevelSpec, Report)> {
    if partition >= spec.partitions {
        return Err(Error::argument(format!(
            "operation.partition: expected an integer in 0..={}, found {partition}",
            spec.partitions - 1
        )));
    }
    let to_group = spec.group_index(id).ok_or_else(|| Error::argument(format!("multilevel_remap: no group {id:?}")))?;
    let from_group = spec.group_of(partition);
    let mut map = spec.full_map();
    map[partition as usize] = to_group;
    let next = MultilevelSpec { map: Some(map), ..spec.clone() };
    next.check_work("multilevel_remap")?;
    let mut report = Report::new();
    report.put("partition", partition.into());
    report.put("from_group", Value::String(spec.groups[from_group as usize].id.clone()));
    report.put("to_group", Value::String(id.to_string()));
    for (field, group) in [("from", from_group), ("to", to_group)] {
        let node = node_in(topology, spec, &spec.groups[group as usize], partition);
        report.insert(field.into(), Value::String(topology.nodes[node as usize].id.clone()));
    }
    Ok((next, report))
}

/// Replaces the nodes of a group, creates it (appended, holding no partition; a derived
/// map is written out first so nothing moves) when it does not exist, or removes it when
/// `members` is empty and no partition maps to it. Report: `group`, `created`,
/// `removed`, and `moves`: one `[partition, from node, to node]` triple per partition
/// whose node changes, in partition order.
fn group_set(
    spec: &MultilevelSpec,
    id: &str,
    members: &[alloc::string::String],
    topology: &Topology,
) -> Result<(MultilevelSpec, Report)> {
    let existing = spec.group_index(id);
    let mut indices: Vec<u32> = Vec::with_capacity(members.len());
    for (position, member) in members.iter().enumerate() {
        let member_path = format!("operation.nodes[{position}]");
        let node = node::index_of(&topology.nodes, member)
            .ok_or_else(|| Error::argument(format!("{member_path}: names node {member:?}, which is not in nodes")))?;
        if indices.contains(&node) {
            return Err(Error::argument(format!("{member_path}: node {member:?} appears twice")));
        }
        if let Some(other) = spec.groups.iter().position(|group| group.nodes.contains(&node)) {
            if Some(other as u32) != existing {
                return Err(Error::argument(format!(
                    "{member_path}: node {member:?} is already in group {:?}",
                    spec.groups[other].id
                )));
            }
        }
        indices.push(node);
    }
    let mut next = spec.clone();
    let (created, removed) = match existing {
        None if indices.is_empty() => {
            return Err(Error::argument(format!("multilevel_group_set: no group {id:?} to remove")));
        }
        None => {
            // A new group changes the round-robin map: write the current one out first.
            next.map = Some(spec.full_map());
            next.groups.push(Group { id: id.to_string(), nodes: indices });
            (true, false)
        }
        Some(group) if indices.is_empty() => {
            let held = (0..spec.partitions).filter(|&p| spec.group_of(p) == group).count();
            if held > 0 {
                return Err(Error::argument(format!(
                    "multilevel_group_set: group {id:?} still holds {held} partition(s); remap them first"
                )));
            }
            if next.groups.len() == 1 {
                return Err(Error::argument("multilevel_group_set: cannot remove the only group"));
            }
            next.groups.remove(group as usize);
            // A derived map never skips a group below `partitions`, so an empty group has
            // an index of at least `partitions` and removing it changes no partition.
            if let Some(map) = &mut next.map {
                for g in map.iter_mut().filter(|g| **g > group) {
                    *g -= 1;
                }
            }
            (false, true)
        }
        Some(group) => {
            next.groups[group as usize].nodes = indices;
            (false, false)
        }
    };
    next.check_work("multilevel_group_set")?;
    let mut moves: Vec<Value> = Vec::new();
    if let (Some(group), false) = (existing, removed) {
        let build = |spec: &MultilevelSpec| {
            GroupPlacement::build(&topology.hashing, &topology.nodes, &spec.groups[group as usize], spec.within_group)
        };
        let (before, after) = (build(spec), build(&next));
        for partition in (0..spec.partitions).filter(|&p| spec.group_of(p) == group) {
            let (from, to) = (before.node_of(partition_hash(partition)), after.node_of(partition_hash(partition)));
            if from != to {
                moves.push(Value::Array(alloc::vec![
                    partition.into(),
                    Value::String(topology.nodes[from as usize].id.clone()),
                    Value::String(topology.nodes[to as usize].id.clone()),
                ]));
            }
        }
    }
    let mut report = Report::new();
    report.put("group", Value::String(id.to_string()));
    report.put("created", Value::Bool(created));
    report.put("removed", Value::Bool(removed));
    report.put("moves", Value::Array(moves));
    Ok((next, report))
}
