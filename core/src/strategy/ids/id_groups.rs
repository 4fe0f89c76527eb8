//! Id-interval shard groups: range partitioning over ids at the top, weighted modulo
//! inside each range. The layout of MySQL sharding schemes that grow "without data
//! migration": a new batch of databases (a group) takes the next id range, old groups
//! keep theirs, and space freed in an old group is reused by giving it another range.
//!
//! **Algorithm.** Each group owns one or more id intervals `[start, end)` and an
//! ordered list of shards, each on a node with an integer weight (its capacity). An id
//! goes to the group whose interval holds it (binary search over all intervals,
//! sorted), then to the shard that owns `id % W`, where `W` is the group's total
//! weight: shard `j` owns the `w_j` residues `w_0 + ... + w_(j-1)` up to
//! `w_0 + ... + w_j - 1`, in listed order (the documented tie-break: no two shards
//! share a residue). Shards are numbered globally: the shards of `groups[0]` first,
//! in their order, then those of `groups[1]`, and so on.
//!
//! **The document.**
//!
//! ```json
//! {"type": "id_groups",
//!  "groups": [
//!    {"id": "g1", "intervals": [[0, 1000000]], "writable": false,
//!     "shards": [{"node": "db-a", "weight": 1}, {"node": "db-b", "weight": 2}]},
//!    {"id": "g2", "intervals": [[1000000, 3000000]], "writable": true,
//!     "shards": [{"node": "db-c"}, {"node": "db-d"}]}],
//!  "tables": {"interval": 100000, "rule": "orders_{n}"}}
//! ```
//!
//! | field | type | default | meaning |
//! |---|---|---|---|
//! | `groups` | array, 1 to [`limits::MAX_ID_GROUPS`] | required | in order: global shard numbers follow it |
//! | `groups[g].id` | non-empty string, unique | required | the group's name, used by operations |
//! | `groups[g].intervals` | array of `[start, end)` pairs (u64, number or decimal string) | required | disjoint from every other interval of every group; `start < end` |
//! | `groups[g].shards` | array of `{"node", "weight"}` | required | `node` names a node; `weight` an integer `>= 1` (default 1) |
//! | `groups[g].writable` | boolean | `false` | the group new ids are allocated from: exactly one group is writable |
//! | `tables` | `{"interval", "rule"}` | absent | fragment tables: the table of id `i` is suffix `n = i / interval`; `rule` names it, `{n}` (or `{n:0W}`, zero-padded to `W` digits) standing for `n` |
//!
//! Validation rejects (`invalid_topology`, naming the field): overlapping intervals,
//! within a group or across groups (the message names both); an empty interval; no
//! writable group, or two; a weight that is 0 or not an integer; a shard naming an
//! unknown node; a duplicate group id. Node weights are not used (weights are per
//! shard). A node may hold shards of several groups, or several shards of one.
//! Routing ignores `writable`: it tells id allocators which group's intervals new ids
//! come from, and the operations keep exactly one group writable.
//!
//! **Which ids route.** Only integer keys: a byte key is `invalid_key`. An id outside
//! every interval is `invalid_key` too: no group owns it yet, and guessing one would
//! put it where no later lookup finds it. (`u64::MAX` is never inside an interval.)
//! Ids are never hashed: the topology's `hashing` section does not affect this strategy.
//!
//! **Guarantees.** Adding a group moves no id: its intervals are disjoint from all
//! existing ones and its shards are numbered after all existing shards, so every id
//! routed before keeps its shard and node (operation `id_groups_add_group`). Adding an
//! interval to an old group moves nothing either: its ids were unroutable before
//! (`id_groups_add_interval`). Balance inside a group is exact, not statistical: any
//! `W` consecutive ids of one interval put exactly `w_j` ids on shard `j`, so
//! sequential ids fill shards in proportion to their weights. Changing an existing
//! group's shards or weights re-deals its ids, and no operation offers it.
//! `shards_for_range` returns the shards of the groups whose intervals overlap the
//! range (ranges of ids are ranges of groups), each shard once, in id order.
//!
//! **Fragment tables.** The table suffix is computed from the id alone, `id /
//! interval`, never from the group, so adding groups or intervals renames no table:
//! table `orders_3` of a shard holds that shard's ids in `[3 * interval, 4 * interval)`.
//! [`Router::decode_id`](crate::Router::decode_id) reports it as the field `table`
//! (beside `group`, the group's index), and [`IdGroupsSpec::table_name`] renders the rule.
//!
//! **Cost.** Two binary searches per id: over all intervals, `O(log I)`, then over the
//! group's shards, `O(log S)`; memory 24 bytes per interval and 12 per shard.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::strategy::ids::{id_of, id_span};
use crate::strategy::spec::{DecodedId, Place, Spec};

/// One shard of a group: a node and its weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupShard {
    node: u32,
    weight: u32,
}

impl GroupShard {
    /// The node index holding the shard.
    pub fn node(&self) -> u32 {
        self.node
    }

    /// The shard's weight: how many residues of each cycle of the group's ids it owns.
    pub fn weight(&self) -> u32 {
        self.weight
    }
}

/// A group: id intervals and weighted shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdGroup {
    pub(crate) id: String,
    pub(crate) intervals: Vec<(u64, u64)>,
    pub(crate) shards: Vec<GroupShard>,
    pub(crate) writable: bool,
}

impl IdGroup {
    /// The group's name.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its intervals `[start, end)`, in document order.
    pub fn intervals(&self) -> &[(u64, u64)] {
        &self.intervals
    }

    /// Its shards, in order.
    pub fn shards(&self) -> &[GroupShard] {
        &self.shards
    }

    /// Whether new ids are allocated from this group.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// The sum of its shards' weights: the length of one cycle of ids.
    pub fn total_weight(&self) -> u32 {
        // Parsing bounds the sum by `MAX_GROUP_WEIGHT`.
        self.shards.iter().map(|shard| shard.weight).sum()
    }
}

/// The fragment table rule: `rule` with `{n}` replaced by `id / interval`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRule {
    interval: u64,
    rule: String,
    prefix: String,
    width: u8,
    suffix: String,
}

impl TableRule {
    /// The number of ids per table suffix.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// The rule as written, e.g. `orders_{n}`.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// The table suffix of an id: `id / interval`.
    pub fn table_of(&self, id: u64) -> u64 {
        id / self.interval
    }

    /// The table name of an id: the rule with its placeholder replaced.
    ///
    /// # Example
    /// ```
    /// use shardroute::{Router, Strategy};
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}],
    ///   "strategy": {"type": "id_groups", "tables": {"interval": 1000, "rule": "orders_{n:03}"},
    ///     "groups": [{"id": "g", "intervals": [[0, 100000]], "shards": [{"node": "a"}], "writable": true}]}}"#).unwrap();
    /// let Strategy::IdGroups(spec) = router.strategy() else { unreachable!() };
    /// assert_eq!(spec.tables().unwrap().name_of(3_500), "orders_003");
    /// ```
    pub fn name_of(&self, id: u64) -> String {
        let digits = self.table_of(id).to_string();
        let mut name = self.prefix.clone();
        for _ in digits.len()..usize::from(self.width) {
            name.push('0');
        }
        name.push_str(&digits);
        name.push_str(&self.suffix);
        name
    }
}

/// `{"type": "id_groups", "groups": [...], "tables": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdGroupsSpec {
    pub(crate) groups: Vec<IdGroup>,
    tables: Option<TableRule>,
}

impl IdGroupsSpec {
    /// The groups, in document order.
    pub fn groups(&self) -> &[IdGroup] {
        &self.groups
    }

    /// The fragment table rule, when there is one.
    pub fn tables(&self) -> Option<&TableRule> {
        self.tables.as_ref()
    }

    /// The one writable group.
    pub fn writable_group(&self) -> &IdGroup {
        &self.groups[self.writable_index()]
    }

    /// The index of the one writable group.
    pub(crate) fn writable_index(&self) -> usize {
        // Parsing guarantees exactly one; the fallback only serves hand-built values.
        self.groups.iter().position(|group| group.writable).unwrap_or(0)
    }

    /// The table name of an id under the rule (`None` without `tables`).
    pub fn table_name(&self, id: u64) -> Option<String> {
        self.tables.as_ref().map(|rule| rule.name_of(id))
    }
}

const GROUP_FIELDS: &[&str] = &["id", "intervals", "shards", "writable"];

/// Reads `[start, end]` with `start < end`.
pub(crate) fn parse_interval(path: &str, value: &Value) -> Result<(u64, u64)> {
    let pair = json::array(path, value)?;
    if pair.len() != 2 {
        return Err(json::at(path, format_args!("expected [start, end], found {} elements", pair.len())));
    }
    let start = json::u64(&format!("{path}[0]"), &pair[0])?;
    let end = json::u64(&format!("{path}[1]"), &pair[1])?;
    if start >= end {
        return Err(json::at(path, format_args!("empty interval [{start}, {end}); start must be below end")));
    }
    Ok((start, end))
}

pub(crate) fn parse_group(path: &str, value: &Value, nodes: &[Node]) -> Result<IdGroup> {
    let object = Object::new(path, value, GROUP_FIELDS)?;
    let id = json::id(&object.path_of("id"), object.required("id")?)?;
    let intervals_path = object.path_of("intervals");
    let entries = json::array(&intervals_path, object.required("intervals")?)?;
    if entries.is_empty() {
        return Err(json::at(&intervals_path, "a group needs at least one interval"));
    }
    if entries.len() as u64 > u64::from(limits::MAX_ID_INTERVALS) {
        return Err(Error::limit(format!("{intervals_path}: more than {} intervals", limits::MAX_ID_INTERVALS)));
    }
    let intervals = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| parse_interval(&format!("{intervals_path}[{index}]"), entry))
        .collect::<Result<Vec<_>>>()?;
    let shards_path = object.path_of("shards");
    let entries = json::array(&shards_path, object.required("shards")?)?;
    if entries.is_empty() {
        return Err(json::at(&shards_path, "a group needs at least one shard"));
    }
    if entries.len() as u64 > u64::from(limits::MAX_ID_SHARDS) {
        return Err(Error::limit(format!("{shards_path}: more than {} shards", limits::MAX_ID_SHARDS)));
    }
    let mut shards = Vec::with_capacity(entries.len());
    let mut total: u64 = 0;
    for (index, entry) in entries.iter().enumerate() {
        let shard_path = format!("{shards_path}[{index}]");
        let shard = Object::new(&shard_path, entry, &["node", "weight"])?;
        let node_path = shard.path_of("node");
        let node_id = json::str(&node_path, shard.required("node")?)?;
        let node = nodes
            .iter()
            .position(|node| node.id == node_id)
            .ok_or_else(|| json::at(&node_path, format_args!("names node {node_id:?}, which is not in nodes")))?
            as u32;
        let weight = crate::strategy::spec::count_param(&shard, "weight", 1, limits::MAX_GROUP_WEIGHT)?;
        total += u64::from(weight);
        if total > u64::from(limits::MAX_GROUP_WEIGHT) {
            return Err(Error::limit(format!(
                "{shards_path}: the group's weights sum past {}",
                limits::MAX_GROUP_WEIGHT
            )));
        }
        shards.push(GroupShard { node, weight });
    }
    let writable = match object.optional("writable") {
        Some(value) => json::bool(&object.path_of("writable"), value)?,
        None => false,
    };
    Ok(IdGroup { id: id.to_string(), intervals, shards, writable })
}

fn parse_rule(path: &str, interval: u64, rule: &str) -> Result<TableRule> {
    let bad = || json::at(path, "expected a name with exactly one placeholder {n} or {n:0W} (W in 1..=20)");
    let open = rule.find('{').ok_or_else(bad)?;
    let close = open + rule[open..].find('}').ok_or_else(bad)?;
    let width = match &rule[open + 1..close] {
        "n" => 0,
        inner => match inner.strip_prefix("n:0").and_then(|w| w.parse::<u8>().ok()) {
            Some(width) if (1..=20).contains(&width) => width,
            _ => return Err(bad()),
        },
    };
    let (prefix, suffix) = (&rule[..open], &rule[close + 1..]);
    if prefix.contains(['{', '}']) || suffix.contains(['{', '}']) {
        return Err(bad());
    }
    Ok(TableRule { interval, rule: rule.to_string(), prefix: prefix.to_string(), width, suffix: suffix.to_string() })
}

fn parse_tables(object: &Object<'_>) -> Result<Option<TableRule>> {
    let Some(value) = object.optional("tables") else { return Ok(None) };
    let tables = Object::new(&object.path_of("tables"), value, &["interval", "rule"])?;
    let interval_path = tables.path_of("interval");
    let interval = json::u64(&interval_path, tables.required("interval")?)?;
    if interval == 0 {
        return Err(json::at(&interval_path, "must be at least 1"));
    }
    let rule_path = tables.path_of("rule");
    let rule = json::str(&rule_path, tables.required("rule")?)?;
    parse_rule(&rule_path, interval, rule).map(Some)
}

/// Checks the document-wide rules: unique ids, one writable group, disjoint intervals.
fn check_groups(path: &str, groups: &[IdGroup]) -> Result<()> {
    let mut ids: Vec<(&str, usize)> = groups.iter().enumerate().map(|(index, g)| (g.id.as_str(), index)).collect();
    ids.sort_unstable();
    for pair in ids.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(json::at(
                &format!("{path}[{}].id", pair[1].1),
                format_args!("duplicate group id {:?} (also {path}[{}])", pair[0].0, pair[0].1),
            ));
        }
    }
    let mut writable = groups.iter().enumerate().filter(|(_, group)| group.writable).map(|(index, _)| index);
    match (writable.next(), writable.next()) {
        (None, _) => {
            return Err(json::at(path, "no group is writable; mark exactly one group with \"writable\": true"))
        }
        (Some(first), Some(second)) => {
            return Err(json::at(
                &format!("{path}[{second}].writable"),
                format_args!("{path}[{first}] is already writable; exactly one group may be"),
            ))
        }
        _ => {}
    }
    let mut all: Vec<(u64, u64, usize, usize)> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| group.intervals.iter().enumerate().map(move |(i, &(s, e))| (s, e, g, i)))
        .collect();
    if all.len() as u64 > u64::from(limits::MAX_ID_INTERVALS) {
        return Err(Error::limit(format!("{path}: more than {} intervals in all", limits::MAX_ID_INTERVALS)));
    }
    all.sort_unstable();
    // Sorted by start, two intervals overlap exactly when some adjacent pair does.
    for pair in all.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.0 < a.1 {
            let ((s1, e1, g1, i1), (s2, e2, g2, i2)) = if (a.2, a.3) < (b.2, b.3) { (a, b) } else { (b, a) };
            return Err(json::at(
                &format!("{path}[{g2}].intervals[{i2}]"),
                format_args!("[{s2}, {e2}) overlaps {path}[{g1}].intervals[{i1}] = [{s1}, {e1})"),
            ));
        }
    }
    Ok(())
}

impl Spec for IdGroupsSpec {
    const TYPE: &'static str = "id_groups";
    const FIELDS: &'static [&'static str] = &["type", "groups", "tables"];
    type Placement = IdGroups;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<IdGroupsSpec> {
        let path = object.path_of("groups");
        let entries = json::array(&path, object.required("groups")?)?;
        if entries.is_empty() {
            return Err(json::at(&path, "needs at least one group"));
        }
        if entries.len() as u64 > u64::from(limits::MAX_ID_GROUPS) {
            return Err(Error::limit(format!(
                "{path}: {} groups; the limit is {}",
                entries.len(),
                limits::MAX_ID_GROUPS
            )));
        }
        let groups = entries
            .iter()
            .enumerate()
            .map(|(index, entry)| parse_group(&format!("{path}[{index}]"), entry, nodes))
            .collect::<Result<Vec<_>>>()?;
        Ok(IdGroupsSpec { groups, tables: parse_tables(object)? })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        let path = "strategy.groups";
        if self.groups.len() as u64 > u64::from(limits::MAX_ID_GROUPS) {
            return Err(Error::limit(format!(
                "{path}: {} groups; the limit is {}",
                self.groups.len(),
                limits::MAX_ID_GROUPS
            )));
        }
        let shard_count: u64 = self.groups.iter().map(|group| group.shards.len() as u64).sum();
        if shard_count > u64::from(limits::MAX_ID_SHARDS) {
            return Err(Error::limit(format!(
                "{path}: {shard_count} shards in all; the limit is {}",
                limits::MAX_ID_SHARDS
            )));
        }
        for (g, group) in self.groups.iter().enumerate() {
            if let Some(s) = group.shards.iter().position(|shard| shard.node as usize >= nodes.len()) {
                return Err(json::at(
                    &format!("{path}[{g}].shards[{s}].node"),
                    format_args!("node index {} is past the node list", group.shards[s].node),
                ));
            }
        }
        check_groups(path, &self.groups)
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        let groups = self
            .groups
            .iter()
            .map(|group| {
                let mut entry = Map::new();
                entry.put("id", Value::String(group.id.clone()));
                let intervals = group
                    .intervals
                    .iter()
                    .map(|&(start, end)| Value::Array(alloc::vec![json::u64_value(start), json::u64_value(end)]))
                    .collect();
                entry.put("intervals", Value::Array(intervals));
                let shards = group
                    .shards
                    .iter()
                    .map(|shard| {
                        let mut item = Map::new();
                        let node = nodes.get(shard.node as usize).map(|node| node.id.clone()).unwrap_or_default();
                        item.put("node", Value::String(node));
                        item.put("weight", shard.weight.into());
                        Value::Object(item)
                    })
                    .collect();
                entry.put("shards", Value::Array(shards));
                entry.put("writable", group.writable.into());
                Value::Object(entry)
            })
            .collect();
        object.put("groups", Value::Array(groups));
        if let Some(tables) = &self.tables {
            let mut entry = Map::new();
            entry.put("interval", json::u64_value(tables.interval));
            entry.put("rule", Value::String(tables.rule.clone()));
            object.put("tables", Value::Object(entry));
        }
    }

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<IdGroups> {
        let mut intervals = Vec::new();
        let mut groups = Vec::with_capacity(self.groups.len());
        let mut shard_nodes = Vec::new();
        for (index, group) in self.groups.iter().enumerate() {
            intervals.extend(group.intervals.iter().map(|&(start, end)| (start, end, index as u32)));
            let mut cumulative = Vec::with_capacity(group.shards.len());
            let mut total = 0u64;
            for shard in &group.shards {
                if shard.node as usize >= nodes.len() || shard.weight == 0 {
                    return Err(json::at(&format!("strategy.groups[{index}].shards"), "a shard names no node"));
                }
                total += u64::from(shard.weight);
                cumulative.push(total);
            }
            groups.push(CompiledGroup { first_shard: shard_nodes.len() as u32, cumulative });
            shard_nodes.extend(group.shards.iter().map(|shard| shard.node));
        }
        intervals.sort_unstable();
        Ok(IdGroups {
            intervals,
            groups,
            shard_nodes,
            table_interval: self.tables.as_ref().map(|tables| tables.interval),
            node_count: nodes.len() as u32,
        })
    }
}

#[derive(Clone, Debug)]
struct CompiledGroup {
    first_shard: u32,
    /// `cumulative[j]` = the weights of shards `0..=j`; the last entry is the cycle `W`.
    cumulative: Vec<u64>,
}

impl CompiledGroup {
    /// The shard (within the group) owning residue `r < W`.
    #[inline]
    fn shard_of_residue(&self, residue: u64) -> u32 {
        self.cumulative.partition_point(|&bound| bound <= residue) as u32
    }

    #[inline]
    fn cycle(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(1)
    }
}

/// A compiled `id_groups` strategy.
#[derive(Clone, Debug)]
pub struct IdGroups {
    /// `(start, end, group)`, sorted.
    intervals: Vec<(u64, u64, u32)>,
    groups: Vec<CompiledGroup>,
    /// Node index of each global shard.
    shard_nodes: Vec<u32>,
    table_interval: Option<u64>,
    node_count: u32,
}

impl IdGroups {
    /// The index of the group owning an id, if any.
    #[inline]
    pub fn group_of(&self, id: u64) -> Option<u32> {
        let after = self.intervals.partition_point(|&(start, _, _)| start <= id);
        let &(_, end, group) = self.intervals.get(after.checked_sub(1)?)?;
        (id < end).then_some(group)
    }

    /// The group and global shard of an id.
    ///
    /// # Errors
    /// `invalid_key` when no interval holds the id.
    #[inline]
    pub fn locate_id(&self, id: u64) -> Result<(u32, u32)> {
        let group = self
            .group_of(id)
            .ok_or_else(|| Error::key(format!("id {id} is in no group's interval; no shard owns it")))?;
        let compiled = &self.groups[group as usize];
        Ok((group, compiled.first_shard + compiled.shard_of_residue(id % compiled.cycle())))
    }
}

impl Place for IdGroups {
    #[inline]
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        self.locate_id(id_of(key)?).map(|(_, shard)| shard)
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        Ok((None, Hit::Shard, self.shard(hashing, key)?))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.shard_nodes[shard as usize]
    }

    fn max_replicas(&self) -> u32 {
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.shard_nodes.len() as u32
    }

    fn shards_for_range(&self, _hashing: &KeyHashing, start: Key<'_>, end: Option<Key<'_>>) -> Result<Vec<u32>> {
        let (start, last) = id_span(start, end)?;
        let mut seen = alloc::vec![false; self.shard_nodes.len()];
        let mut shards = Vec::new();
        let mut push = |shard: u32| {
            if !core::mem::replace(&mut seen[shard as usize], true) {
                shards.push(shard);
            }
        };
        // The first interval that may overlap: the last one starting at or before `start`.
        let from = self.intervals.partition_point(|&(begin, _, _)| begin <= start).saturating_sub(1);
        for &(begin, end, group) in &self.intervals[from..] {
            if begin > last {
                break;
            }
            let (low, high) = (begin.max(start), (end - 1).min(last));
            if low > high {
                continue;
            }
            let compiled = &self.groups[group as usize];
            let cycle = compiled.cycle();
            // Ids low..=high; beyond one cycle, later ids repeat earlier residues.
            let span = (high - low).min(cycle - 1);
            let first = compiled.first_shard;
            // Residues a..=b in id order, wrapping past W - 1 back to 0.
            let a = low % cycle;
            let b = a + span;
            let mut residues = |from: u64, to: u64| {
                for shard in compiled.shard_of_residue(from)..=compiled.shard_of_residue(to) {
                    push(first + shard);
                }
            };
            if b < cycle {
                residues(a, b);
            } else {
                residues(a, cycle - 1);
                residues(0, b - cycle);
            }
        }
        Ok(shards)
    }

    fn decode_id(&self, id: u64) -> Result<DecodedId> {
        let (group, shard) = self.locate_id(id)?;
        let mut fields = alloc::vec![("group", u64::from(group))];
        if let Some(interval) = self.table_interval {
            fields.push(("table", id / interval));
        }
        Ok(DecodedId { shard, fields })
    }
}
