//! Multi-level maps: key → partition by a function, partition → group by a small table,
//! and partition → node inside the group by a second function. This is Ceph's layout
//! (objects hash into placement groups, placement groups go to OSDs by CRUSH: Weil et
//! al., "CRUSH: Controlled, Scalable, Decentralized Placement of Replicated Data", SC
//! 2006), and that of any system with fixed partitions over replica sets or server
//! groups: the top map stays one entry per partition while groups change below it.
//!
//! **Algorithm.** `partition = hash(key) % P`; the partition's group is `map[partition]`
//! (or `groups[partition % G]` when the document gives no map); inside the group the
//! partition goes to the winner of rendezvous hashing (weighted by node weight) or of
//! jump hash over the group's node list, fed [`partition_hash`]`(partition)`. The shard
//! of a key is its partition: every key of a partition lives on the same node, so a
//! partition is the unit of data movement, and `owner(shard)` is exact.
//!
//! **Guarantees.** Remapping one partition to another group moves that partition's
//! keys and nothing else. Changing one group's node list moves only partitions mapped
//! to that group; within `rendezvous` only those whose winner changed: adding a node
//! moves partitions only onto it (about `1/(k+1)` of the group's), removing one moves
//! only its own partitions, each to its second choice. Within `jump`, appending a node
//! to the group's list moves partitions only onto it; removing any but the last also
//! renumbers the rest. Balance: partitions spread evenly over groups (round-robin map)
//! or as the map says, and over a group's nodes within sampling noise, so keep `P` in
//! the hundreds per node (the default is 4096).
//!
//! **Replicas** are the group's next choices for the partition (rendezvous: next highest
//! scores; jump: the next nodes in the group's list), so at most the group's size: the
//! router's `max_replica_count` is the size of the smallest group holding a partition.
//!
//! **The document.**
//! `{"type": "multilevel", "partitions": 4096, "groups": [{"id": "g0", "nodes": ["a",
//! "b"]}, ...], "map": ["g0", "g1", ...], "within_group": "rendezvous"}`. `partitions`
//! defaults to 4096 (at most [`MAX_PARTITIONS`]);
//! `groups` is required, each with a unique non-empty id and at least one node; a node
//! belongs to at most one group, and a node in no group holds nothing (a spare, ready
//! to join one). `map` lists one group id per partition; without it the map is
//! round-robin (`groups[p % G]`, whatever the groups' sizes: give a map to weight them),
//! and it is written only when given. `within_group` is `"rendezvous"` (default,
//! weighted) or `"jump"` (weights must stay 1).
//!
//! **Cost.** Per key: one remainder and one table read (owners are computed per
//! partition when the router is built: `O(P k)` for groups of `k` nodes, at most
//! [`MAX_PARTITION_PLACEMENTS`](crate::limits::MAX_PARTITION_PLACEMENTS) scores);
//! replicas `O(k log k)`. Memory: 8 bytes per partition plus 16 bytes per grouped node.
//!
//! **Operations.** `multilevel_remap` moves one partition to another group,
//! `multilevel_group_set` replaces a group's nodes (creating the group, or removing it
//! with `"nodes": []` once no partition maps to it); both report exactly which
//! partitions move between which nodes (see [`crate::ops`]). `add_node` and
//! `remove_node` edit the pool of nodes; a node must leave its group before it leaves
//! the pool.
//!
//! # Example
//! ```
//! use shardroute::Router;
//! let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
//!     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}],
//!     "hashing": {"integers": "identity"},
//!     "strategy": {"type": "multilevel", "partitions": 4, "map": ["east", "west", "west", "east"],
//!                  "groups": [{"id": "east", "nodes": ["a", "b"]}, {"id": "west", "nodes": ["c", "d"]}]}}"#)?;
//! assert_eq!(router.route(6u64)?, 2); // integer keys are their own hash: 6 % 4
//! assert!(["c", "d"].contains(&router.node(6u64)?)); // partition 2 is in group west
//! assert_eq!(router.node(6u64)?, router.node(10u64)?); // a partition lives on one node
//! assert_eq!(router.max_replica_count(), 2); // replicas stay in the group
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::limits::{self, MAX_PARTITIONS};
use crate::node::Node;
use crate::strategy::hashed::jump::jump_unchecked;
use crate::strategy::hashed::rendezvous::Rendezvous;
use crate::strategy::spec::{count_param, renumber, still_named, successors, Place, Spec};

/// Default partition count.
pub const DEFAULT_PARTITIONS: u32 = 4096;

/// The input the within-group function sees for a partition: output number
/// `partition` of SplitMix64 seeded with 0 (Steele, Lea & Flood, "Fast Splittable
/// Pseudorandom Number Generators", OOPSLA 2014), i.e. its mix function applied to
/// `(partition + 1) * 0x9E3779B97F4A7C15`.
///
/// Partitions are consecutive integers; this spreads them over all 64 bits so that
/// jump and rendezvous place them independently. Never fails, never panics.
///
/// # Example
/// ```
/// use shardroute::strategy::partitioned::multilevel::partition_hash;
/// // The published first outputs of SplitMix64 with state 0.
/// assert_eq!(partition_hash(0), 0xE220_A839_7B1D_CDAF);
/// assert_eq!(partition_hash(1), 0x6E78_9E6A_A1B9_65F4);
/// ```
pub fn partition_hash(partition: u32) -> u64 {
    let mut z = (u64::from(partition) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How a partition picks its node inside its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WithinGroup {
    /// Rendezvous hashing over the group's nodes, weighted by node weight.
    Rendezvous,
    /// Jump consistent hash over the group's node list, in list order.
    Jump,
}

impl WithinGroup {
    fn name(self) -> &'static str {
        match self {
            WithinGroup::Rendezvous => "rendezvous",
            WithinGroup::Jump => "jump",
        }
    }
}

/// A group: an id and its nodes, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Unique, non-empty id.
    pub id: String,
    /// Node indices, at least one, each in no other group.
    pub nodes: Vec<u32>,
}

/// `{"type": "multilevel", "partitions": P, "groups": [...], "map": [...], "within_group": ...}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultilevelSpec {
    /// The number of partitions, in `1..=`[`MAX_PARTITIONS`].
    pub partitions: u32,
    /// The groups, in document order.
    pub groups: Vec<Group>,
    /// The group index of each partition, when the document lists a `map`.
    pub map: Option<Vec<u32>>,
    /// How a partition picks its node inside its group.
    pub within_group: WithinGroup,
}

impl MultilevelSpec {
    /// The group index of `partition`: the map's, else round-robin.
    pub(crate) fn group_of(&self, partition: u32) -> u32 {
        match &self.map {
            Some(map) => map[partition as usize],
            None => partition % self.groups.len() as u32,
        }
    }

    /// The map with the derived one written out.
    pub(crate) fn full_map(&self) -> Vec<u32> {
        (0..self.partitions).map(|partition| self.group_of(partition)).collect()
    }

    pub(crate) fn group_index(&self, id: &str) -> Option<u32> {
        self.groups.iter().position(|group| group.id == id).map(|index| index as u32)
    }

    /// Refuses a map whose build would score more than
    /// [`MAX_PARTITION_PLACEMENTS`](limits::MAX_PARTITION_PLACEMENTS) nodes.
    pub(crate) fn check_work(&self, path: &str) -> Result<()> {
        let mut per_group = alloc::vec![0u64; self.groups.len()];
        for partition in 0..self.partitions {
            per_group[self.group_of(partition) as usize] += 1;
        }
        let work: u64 =
            per_group.iter().zip(&self.groups).map(|(&count, group)| count * group.nodes.len() as u64).sum();
        if work > limits::MAX_PARTITION_PLACEMENTS {
            return Err(Error::limit(format!(
                "{path}: placing {} partitions over their groups' nodes takes {work} scores; the limit is {}",
                self.partitions,
                limits::MAX_PARTITION_PLACEMENTS
            )));
        }
        Ok(())
    }
}

impl Spec for MultilevelSpec {
    const TYPE: &'static str = "multilevel";
    const FIELDS: &'static [&'static str] = &["type", "partitions", "groups", "map", "within_group"];
    // Rendezvous within groups uses weights; `jump` rejects them in `parse`.
    const WEIGHTED: bool = true;
    type Placement = Multilevel;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<MultilevelSpec> {
        let partitions = count_param(object, "partitions", DEFAULT_PARTITIONS, MAX_PARTITIONS)?;
        let within_group = object.choice(
            "within_group",
            "within-group function",
            WithinGroup::Rendezvous,
            &[("rendezvous", WithinGroup::Rendezvous), ("jump", WithinGroup::Jump)],
        )?;
        let groups_path = object.path_of("groups");
        let rows = json::array(&groups_path, object.required("groups")?)?;
        if rows.is_empty() {
            return Err(json::at(&groups_path, "needs at least one group"));
        }
        let mut groups: Vec<Group> = Vec::with_capacity(rows.len());
        for (index, row) in rows.iter().enumerate() {
            let row_path = format!("{groups_path}[{index}]");
            let group = Object::new(&row_path, row, &["id", "nodes"])?;
            let id = json::id(&group.path_of("id"), group.required("id")?)?;
            if let Some(other) = groups.iter().position(|g| g.id == id) {
                return Err(json::at(
                    &group.path_of("id"),
                    format_args!("duplicate group id {id:?} (also {groups_path}[{other}])"),
                ));
            }
            let nodes_path = group.path_of("nodes");
            let members = json::array(&nodes_path, group.required("nodes")?)?;
            if members.is_empty() {
                return Err(json::at(&nodes_path, "a group needs at least one node"));
            }
            let mut indices = Vec::with_capacity(members.len());
            for (position, member) in members.iter().enumerate() {
                let member_path = format!("{nodes_path}[{position}]");
                let node = crate::node::index_from_value(&member_path, member, nodes)?;
                indices.push(node);
            }
            groups.push(Group { id: id.to_string(), nodes: indices });
        }
        let map = match object.optional("map") {
            None => None,
            Some(value) => {
                let map_path = object.path_of("map");
                let entries = json::array(&map_path, value)?;
                if entries.len() != partitions as usize {
                    return Err(json::at(
                        &map_path,
                        format_args!("expected {partitions} group ids (one per partition), found {}", entries.len()),
                    ));
                }
                let mut map = Vec::with_capacity(entries.len());
                for (partition, entry) in entries.iter().enumerate() {
                    let entry_path = format!("{map_path}[{partition}]");
                    let id = json::str(&entry_path, entry)?;
                    let group = groups.iter().position(|group| group.id == id).ok_or_else(|| {
                        json::at(&entry_path, format_args!("names group {id:?}, which is not in groups"))
                    })?;
                    map.push(group as u32);
                }
                Some(map)
            }
        };
        Ok(MultilevelSpec { partitions, groups, map, within_group })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        if self.within_group == WithinGroup::Jump {
            if let Some(index) = nodes.iter().position(|node| node.weight != 1.0) {
                return Err(json::at(
                    &format!("nodes[{index}].weight"),
                    "within_group \"jump\" does not support weights (leave weight at 1, or use \"rendezvous\")",
                ));
            }
        }
        // Groups are disjoint and non-empty, so there are never more groups than nodes.
        if self.groups.len() > nodes.len() {
            return Err(json::at(
                "strategy.groups",
                format_args!("{} groups for {} nodes; every group needs its own nodes", self.groups.len(), nodes.len()),
            ));
        }
        let mut member_of: Vec<Option<usize>> = alloc::vec![None; nodes.len()];
        for (index, group) in self.groups.iter().enumerate() {
            if group.nodes.is_empty() {
                return Err(json::at(&format!("strategy.groups[{index}].nodes"), "a group needs at least one node"));
            }
            for (position, &node) in group.nodes.iter().enumerate() {
                let member_path = || format!("strategy.groups[{index}].nodes[{position}]");
                let Some(slot) = member_of.get_mut(node as usize) else {
                    return Err(json::at(&member_path(), format_args!("node index {node} is past the node list")));
                };
                if let Some(other) = *slot {
                    let node_id = &nodes[node as usize].id;
                    return Err(json::at(
                        &member_path(),
                        if other == index {
                            format!("node {node_id:?} appears twice in the group")
                        } else {
                            format!(
                                "node {node_id:?} is already in group {:?} (strategy.groups[{other}])",
                                self.groups[other].id
                            )
                        },
                    ));
                }
                *slot = Some(index);
            }
        }
        self.check_work("strategy.groups")
    }

    fn follows_node_list(&self) -> bool {
        // The list is a pool: a node outside every group holds nothing.
        true
    }

    fn node_removed(&mut self, index: u32, nodes: &[Node]) -> Result<()> {
        for (g, group) in self.groups.iter_mut().enumerate() {
            renumber(&mut group.nodes, index)
                .map_err(|position| still_named(&format!("strategy.groups[{g}].nodes[{position}]"), nodes, index))?;
        }
        Ok(())
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("partitions", self.partitions.into());
        let groups = self
            .groups
            .iter()
            .map(|group| {
                let mut row = Map::new();
                row.put("id", Value::String(group.id.clone()));
                row.insert(
                    "nodes".into(),
                    Value::Array(group.nodes.iter().map(|&n| Value::String(nodes[n as usize].id.clone())).collect()),
                );
                Value::Object(row)
            })
            .collect();
        object.put("groups", Value::Array(groups));
        if let Some(map) = &self.map {
            let ids = map.iter().map(|&g| Value::String(self.groups[g as usize].id.clone())).collect();
            object.put("map", Value::Array(ids));
        }
        object.put("within_group", self.within_group.name().into());
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Multilevel> {
        let groups: Vec<GroupPlacement> =
            self.groups.iter().map(|group| GroupPlacement::build(hashing, nodes, group, self.within_group)).collect();
        let group_of = self.full_map();
        let owners = group_of.iter().zip(0u32..).map(|(&g, p)| groups[g as usize].node_of(partition_hash(p))).collect();
        let mut used = alloc::vec![false; groups.len()];
        for &g in &group_of {
            used[g as usize] = true;
        }
        let smallest_group =
            groups.iter().zip(&used).filter(|(_, &used)| used).map(|(g, _)| g.nodes.len() as u32).min().unwrap_or(0);
        Ok(Multilevel { partitions: self.partitions, group_of, owners, groups, smallest_group })
    }
}

/// One group compiled: its node indices and the function that picks among them.
#[derive(Clone, Debug)]
pub(crate) struct GroupPlacement {
    id: String,
    nodes: Vec<u32>,
    inner: Inner,
}

#[derive(Clone, Debug)]
enum Inner {
    Rendezvous(Rendezvous),
    Jump,
}

impl GroupPlacement {
    pub(crate) fn build(hashing: &KeyHashing, nodes: &[Node], group: &Group, within: WithinGroup) -> GroupPlacement {
        let inner = match within {
            WithinGroup::Rendezvous => {
                let members: Vec<Node> = group.nodes.iter().map(|&n| nodes[n as usize].clone()).collect();
                Inner::Rendezvous(Rendezvous::build(hashing, &members))
            }
            WithinGroup::Jump => Inner::Jump,
        };
        GroupPlacement { id: group.id.clone(), nodes: group.nodes.clone(), inner }
    }

    /// The node index (in the topology) of the partition whose hash is `hash`.
    pub(crate) fn node_of(&self, hash: u64) -> u32 {
        let member = match &self.inner {
            Inner::Rendezvous(rendezvous) => rendezvous.node_of(hash),
            Inner::Jump => jump_unchecked(hash, self.nodes.len() as u32),
        };
        self.nodes[member as usize]
    }

    /// The first `count` (at most the group's size) node indices for `hash`, into `out`.
    fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        match &self.inner {
            Inner::Rendezvous(rendezvous) => rendezvous.replicas_of(hash, count, out),
            Inner::Jump => {
                let size = self.nodes.len() as u32;
                successors(jump_unchecked(hash, size), count, size, out);
            }
        }
        for member in out.iter_mut() {
            *member = self.nodes[*member as usize];
        }
    }
}

/// A compiled multi-level map: each partition's group and owner, and the groups.
#[derive(Clone, Debug)]
pub struct Multilevel {
    partitions: u32,
    group_of: Vec<u32>,
    owners: Vec<u32>,
    groups: Vec<GroupPlacement>,
    smallest_group: u32,
}

impl Place for Multilevel {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok((hashing.hash(key) % u64::from(self.partitions)) as u32)
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let partition = self.shard(hashing, key)?;
        let group = self.groups[self.group_of[partition as usize] as usize].id.clone();
        let hit = Hit::Partition { partition, partitions: self.partitions, group: Some(group) };
        Ok((Some(Hashed::of(hashing, key)), hit, partition))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.owners[shard as usize]
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        let partition = self.shard(hashing, key)?;
        let group = &self.groups[self.group_of[partition as usize] as usize];
        if count as usize > group.nodes.len() {
            return Err(Error::argument(format!(
                "partition {partition} is in group {:?} of {} node(s); {count} requested",
                group.id,
                group.nodes.len()
            )));
        }
        group.replicas_of(partition_hash(partition), count, out);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.smallest_group
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.partitions
    }
}
