//! `suggest`: operations suggested from measured load, for a person to review and apply.
//!
//! A generator, as the `id_bits_*` operations are: the topology comes back unchanged, at
//! its epoch, and the report holds what the measurements say. It takes the load of each
//! shard as measured (`bytes`, `requests` per second, `keys`; a `sample` of its keys for a
//! key range), the request rates of single keys, and two thresholds:
//!
//! - a key over `max_requests` gets `hot_key_add` with the fanout that brings each salted
//!   key under the threshold (`ceil(requests / max_requests)`, 2 to 1,024), unless it is
//!   already salted that far;
//! - a `hash_range` range over `max_bytes` or `max_requests` gets `range_split` at the
//!   middle of its hashes; a `key_range` range gets `range_split_median` over the `sample`
//!   measured with it (without a sample there is no split point, and the reason says so);
//! - a `vbucket` dictionary whose node carries more active load than its target by more
//!   than `max_imbalance` percent (0 to 10,000; `load * 100 > target * (100 +
//!   max_imbalance)`) gets `plan_rebalance` with `vbucket_weights`: each vbucket weighs its
//!   `weight_by` measure (`"requests"`, the default, since reads and writes load the
//!   active copy the planner weighs; or `"bytes"`, `"keys"`), and a vbucket not in
//!   `shards` weighs 0. The targets are the planner's ([`crate::planner::load_targets`]);
//!   the reason names every node over, its load and target, and what the plan moves (the
//!   suggestion plans once to say so). When the plan would move no active (a vbucket
//!   heavier than any room) or `plan_rebalance` would refuse it (a rebalance running, the
//!   planner's budget), there is a reason and no operation. Other strategies ignore
//!   `max_imbalance`.
//! - the cooling side (`cooling`), with `cool_percent` (default 50): `hot_key_remove` for
//!   a salted key under that percent of `max_requests`; `range_merge` for adjacent ranges
//!   whose sums are under it; `id_groups_set_writable` to close a hot writable id group
//!   and reopen one that cooled; and a warning (with `vbucket_double`) for a dictionary
//!   with fewer than `min_vbuckets_per_node` (default 4) vbuckets a node;
//! - with a `capacity` (and `node_capacity`), a headroom warning for a node past
//!   `capacity_warn` (70) or `capacity_alert` (80) percent of it, and a capacity-cascade
//!   warning when losing the most loaded node would push another past its capacity;
//! - the load per node (the shards' sums, by owner) is reported whatever the strategy: what
//!   `stats` shows of sampled keys, here of observed load.
//!
//! The report: `suggestions`, each `{operation, reason}` (`operation` null when there is
//! only something to say), hot keys first (in input order), then shards (splits in input
//! order, then merges and the id group), then the rebalance, the vbucket warning, the
//! headroom warnings (node order, then bytes, requests, keys) and the cascades; and
//! `nodes`. Every operation is written against the topology as given. Integer arithmetic
//! only: every binding suggests alike.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde_json::Value;

use super::args::{argument, argument_or_limit};
use super::{args, Applied, Op, Report};
use crate::error::{Error, Result};
use crate::json::{self, Object, Put as _};
use crate::key::OwnedKey;
use crate::limits;
use crate::salting::MAX_FANOUT;
use crate::strategy::ids::id_groups::IdGroupsSpec;
use crate::strategy::partitioned::hash_range::HashRangeSpec;
use crate::strategy::partitioned::key_range::KeyRangeSpec;
use crate::strategy::partitioned::key_table::key_to_value;
use crate::strategy::partitioned::vbucket::VbucketSpec;
use crate::topology::Topology;

mod cooling;

/// A suggestion: the operation to review (none when there is only something to say) and
/// its reason.
type Suggestion = (Option<Value>, String);

/// The measured load of one shard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardLoad {
    /// The shard (a vbucket, a range, a slot: what `route` returns).
    pub shard: u32,
    /// Bytes stored.
    pub bytes: u64,
    /// Requests per second.
    pub requests: u64,
    /// Keys stored.
    pub keys: u64,
    /// Some of its keys, for a key range's split point.
    pub sample: Option<Vec<OwnedKey>>,
}

/// What `suggest` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measurements {
    /// The load of each measured shard, in input order.
    pub shards: Vec<ShardLoad>,
    /// The request rate of single keys.
    pub keys: Vec<(OwnedKey, u64)>,
    /// A shard above this many bytes is split (ranges).
    pub max_bytes: Option<u64>,
    /// A shard or key above this many requests per second is split or salted.
    pub max_requests: Option<u64>,
    /// Vbucket dictionaries: a node whose active load exceeds its target by more than
    /// this many percent gets a `plan_rebalance` weighted by the measured load.
    pub max_imbalance: Option<u32>,
    /// The measure that weighs a vbucket for `max_imbalance` (default requests).
    pub weight_by: Measure,
    /// The cooling side: a load under this percent of `max_bytes` / `max_requests` has
    /// cooled (0 to 100, default 50, `DEFAULT_COOL_PERCENT`; 0 suggests no cooling).
    pub cool_percent: u32,
    /// Vbucket dictionaries: a warning when there are fewer vbuckets than this many per
    /// node (default 4, `DEFAULT_MIN_VBUCKETS_PER_NODE`; 0 turns the warning off).
    pub min_vbuckets_per_node: u32,
    /// The capacity of every node, by measure (none by default: no headroom warnings).
    pub capacity: Capacity,
    /// The capacity of named nodes, in input order: a measure given here replaces
    /// `capacity`'s for that node.
    pub node_capacity: Vec<(String, Capacity)>,
    /// A node past this percent of a capacity gets a headroom warning (1 to 100,
    /// default 70, `DEFAULT_CAPACITY_WARN`).
    pub capacity_warn: u32,
    /// A node past this percent of a capacity gets the stronger warning (`capacity_warn`
    /// to 100, default 80, `DEFAULT_CAPACITY_ALERT`).
    pub capacity_alert: u32,
}

/// The default `cool_percent`: a key, a pair of ranges or an id group has cooled when its
/// load is under half the threshold that would split or salt it, so that a suggestion to
/// cool is not undone by the next one to grow.
pub const DEFAULT_COOL_PERCENT: u32 = 50;

/// The default `min_vbuckets_per_node`: with fewer than 4 vbuckets a node, one vbucket is
/// over a quarter of a node's share, and the dictionary is near the node count it cannot
/// pass (one node per vbucket).
pub const DEFAULT_MIN_VBUCKETS_PER_NODE: u32 = 4;

/// The default `capacity_warn`: past 70% of a capacity, the 30% headroom a node keeps for
/// peaks and for a neighbour's failure is being spent.
pub const DEFAULT_CAPACITY_WARN: u32 = 70;

/// The default `capacity_alert`: past 80% of a capacity, less than the 20% headroom a node
/// needs is left.
pub const DEFAULT_CAPACITY_ALERT: u32 = 80;

/// A node's capacity, by measure; a measure without one is not checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacity {
    /// Bytes it can store.
    pub bytes: Option<u64>,
    /// Requests per second it can serve.
    pub requests: Option<u64>,
    /// Keys it can hold.
    pub keys: Option<u64>,
}

impl Capacity {
    /// The capacity for one measure.
    pub fn of(&self, measure: Measure) -> Option<u64> {
        match measure {
            Measure::Bytes => self.bytes,
            Measure::Requests => self.requests,
            Measure::Keys => self.keys,
        }
    }

    /// Each measure of `self`, or of `default` where `self` has none.
    fn or(self, default: Capacity) -> Capacity {
        Capacity {
            bytes: self.bytes.or(default.bytes),
            requests: self.requests.or(default.requests),
            keys: self.keys.or(default.keys),
        }
    }
}

/// The measure of a shard that `max_imbalance` weighs vbuckets by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// `bytes`: bytes stored.
    Bytes,
    /// `requests` (the default): requests per second, which load the active copy.
    Requests,
    /// `keys`: keys stored.
    Keys,
}

impl Measure {
    /// The three measures, in the order the report checks them.
    const ALL: [Measure; 3] = [Measure::Bytes, Measure::Requests, Measure::Keys];

    fn of(self, load: &ShardLoad) -> u64 {
        match self {
            Measure::Bytes => load.bytes,
            Measure::Requests => load.requests,
            Measure::Keys => load.keys,
        }
    }

    /// The field's name, as `weight_by` spells it.
    fn name(self) -> &'static str {
        match self {
            Measure::Bytes => "bytes",
            Measure::Requests => "requests",
            Measure::Keys => "keys",
        }
    }

    /// The unit after a number in a reason.
    fn unit(self) -> &'static str {
        match self {
            Measure::Bytes => "bytes",
            Measure::Requests => "requests/s",
            Measure::Keys => "keys",
        }
    }
}

/// The largest `max_imbalance`, in percent: a node at 101 times its target.
const MAX_IMBALANCE: u32 = 10_000;

/// An unsigned integer field of a measurement (a number or a decimal string).
fn count(object: &Object<'_>, name: &str) -> Result<u64> {
    match object.optional(name) {
        Some(value) => json::u64(&object.path_of(name), value).map_err(argument),
        None => Ok(0),
    }
}

pub(super) fn parse(operation: &Value) -> Result<Op> {
    let args = args(
        operation,
        &[
            "op",
            "shards",
            "keys",
            "max_bytes",
            "max_requests",
            "max_imbalance",
            "weight_by",
            "cool_percent",
            "min_vbuckets_per_node",
            "capacity",
            "node_capacity",
            "capacity_warn",
            "capacity_alert",
        ],
    )?;
    let list = |name: &str| -> Result<&[Value]> {
        match args.optional(name) {
            Some(value) => json::array(&args.path(name), value).map(Vec::as_slice).map_err(argument),
            None => Ok(&[]),
        }
    };
    let entries = list("shards")?;
    if entries.len() > limits::MAX_VBUCKETS as usize {
        return Err(Error::limit(format!(
            "operation.shards: {} entries; the limit is {}",
            entries.len(),
            limits::MAX_VBUCKETS
        )));
    }
    let mut shards = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let path = format!("operation.shards[{index}]");
        let object = Object::new(&path, entry, &["shard", "bytes", "requests", "keys", "sample"]).map_err(argument)?;
        let shard = json::u32_in(&object.path_of("shard"), object.required("shard").map_err(argument)?, 0, u32::MAX)
            .map_err(argument)?;
        let sample = match object.optional("sample") {
            None => None,
            Some(value) => {
                let keys = json::array(&object.path_of("sample"), value).map_err(argument)?;
                if keys.len() > limits::MAX_SAMPLE_KEYS as usize {
                    return Err(Error::limit(format!(
                        "{}: {} sample keys; the limit is {}",
                        object.path_of("sample"),
                        keys.len(),
                        limits::MAX_SAMPLE_KEYS
                    )));
                }
                let keys = keys
                    .iter()
                    .enumerate()
                    .map(|(at, key)| {
                        crate::strategy::partitioned::key_table::key_from_value(
                            &format!("{}[{at}]", object.path_of("sample")),
                            key,
                        )
                        .map_err(argument_or_limit)
                    })
                    .collect::<Result<Vec<OwnedKey>>>()?;
                Some(keys)
            }
        };
        shards.push(ShardLoad {
            shard,
            bytes: count(&object, "bytes")?,
            requests: count(&object, "requests")?,
            keys: count(&object, "keys")?,
            sample,
        });
    }
    // A shard measured twice: the first entry that repeats an earlier one (sorted, not
    // compared pairwise: the list may hold a million entries).
    let mut order: Vec<(u32, usize)> = shards.iter().enumerate().map(|(index, load)| (load.shard, index)).collect();
    order.sort_unstable();
    let repeat = order.windows(2).filter(|pair| pair[0].0 == pair[1].0).map(|pair| pair[1].1).min();
    if let Some(index) = repeat {
        let shard = shards[index].shard;
        return Err(Error::argument(format!("operation.shards[{index}].shard: shard {shard} is measured twice")));
    }
    let entries = list("keys")?;
    if entries.len() > crate::salting::MAX_HOT_KEYS as usize {
        return Err(Error::limit(format!(
            "operation.keys: {} keys; the limit is {}",
            entries.len(),
            crate::salting::MAX_HOT_KEYS
        )));
    }
    let mut keys = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let path = format!("operation.keys[{index}]");
        let object = Object::new(&path, entry, &["key", "requests"]).map_err(argument)?;
        let key = crate::strategy::partitioned::key_table::key_from_value(
            &object.path_of("key"),
            object.required("key").map_err(argument)?,
        )
        .map_err(argument_or_limit)?;
        keys.push((key, count(&object, "requests")?));
    }
    let threshold = |name: &str| -> Result<Option<u64>> {
        match args.optional(name) {
            None => Ok(None),
            Some(value) => match json::u64(&args.path(name), value).map_err(argument)? {
                0 => Err(Error::argument(format!("{}: must be above 0", args.path(name)))),
                n => Ok(Some(n)),
            },
        }
    };
    let max_bytes = threshold("max_bytes")?;
    let max_requests = threshold("max_requests")?;
    let max_imbalance = args.optional_u32_in("max_imbalance", 0, MAX_IMBALANCE)?;
    let weight_by = args.choice(
        "weight_by",
        "measure",
        Measure::Requests,
        &[("bytes", Measure::Bytes), ("requests", Measure::Requests), ("keys", Measure::Keys)],
    )?;
    let cool_percent = args.optional_u32_in("cool_percent", 0, 100)?.unwrap_or(DEFAULT_COOL_PERCENT);
    let min_vbuckets_per_node = args
        .optional_u32_in("min_vbuckets_per_node", 0, limits::MAX_VBUCKETS)?
        .unwrap_or(DEFAULT_MIN_VBUCKETS_PER_NODE);
    let capacity = match args.optional("capacity") {
        Some(value) => capacity_of(&Object::new(&args.path("capacity"), value, &MEASURES).map_err(argument)?)?,
        None => Capacity::default(),
    };
    let entries = list("node_capacity")?;
    if entries.len() > limits::MAX_NODES as usize {
        return Err(Error::limit(format!(
            "operation.node_capacity: {} entries; the limit is {}",
            entries.len(),
            limits::MAX_NODES
        )));
    }
    let mut node_capacity: Vec<(String, Capacity)> = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let path = format!("operation.node_capacity[{index}]");
        let object = Object::new(&path, entry, &["node", "bytes", "requests", "keys"]).map_err(argument)?;
        let node = object.required("node").map_err(argument)?;
        let Some(node) = node.as_str() else {
            return Err(Error::argument(format!("{}: expected a node id", object.path_of("node"))));
        };
        node_capacity.push((String::from(node), capacity_of(&object)?));
    }
    // A node named twice: sorted, not compared pairwise (up to MAX_NODES entries).
    let mut order: Vec<(&str, usize)> =
        node_capacity.iter().enumerate().map(|(index, (node, _))| (node.as_str(), index)).collect();
    order.sort_unstable();
    if let Some(index) = order.windows(2).filter(|pair| pair[0].0 == pair[1].0).map(|pair| pair[1].1).min() {
        return Err(Error::argument(format!(
            "operation.node_capacity[{index}].node: node {:?} is named twice",
            node_capacity[index].0
        )));
    }
    let capacity_warn = args.optional_u32_in("capacity_warn", 1, 100)?.unwrap_or(DEFAULT_CAPACITY_WARN);
    let capacity_alert = args.optional_u32_in("capacity_alert", 1, 100)?.unwrap_or(DEFAULT_CAPACITY_ALERT);
    if capacity_alert < capacity_warn {
        return Err(Error::argument(format!(
            "operation.capacity_alert: {capacity_alert}% is under capacity_warn ({capacity_warn}%)"
        )));
    }
    Ok(Op::Suggest(Measurements {
        shards,
        keys,
        max_bytes,
        max_requests,
        max_imbalance,
        weight_by,
        cool_percent,
        min_vbuckets_per_node,
        capacity,
        node_capacity,
        capacity_warn,
        capacity_alert,
    }))
}

/// The fields of a capacity object.
const MEASURES: [&str; 3] = ["bytes", "requests", "keys"];

/// The capacity measures of an object (`capacity`, or a `node_capacity` entry): each
/// above 0 when given.
fn capacity_of(object: &Object<'_>) -> Result<Capacity> {
    let measure = |name: &str| -> Result<Option<u64>> {
        match object.optional(name) {
            None => Ok(None),
            Some(value) => match json::u64(&object.path_of(name), value).map_err(argument)? {
                0 => Err(Error::argument(format!("{}: a capacity must be above 0", object.path_of(name)))),
                n => Ok(Some(n)),
            },
        }
    };
    Ok(Capacity { bytes: measure("bytes")?, requests: measure("requests")?, keys: measure("keys")? })
}

pub(super) fn apply(measurements: &Measurements, topology: &Topology) -> Result<Applied> {
    let router = crate::Router::new(topology.clone())?;
    let range = router.shard_range();
    for load in &measurements.shards {
        if !range.contains(&load.shard) {
            return Err(Error::argument(format!(
                "suggest: shard {} is not a shard of this topology ({}..{})",
                load.shard, range.start, range.end
            )));
        }
    }
    // Each suggestion: the operation to review (none when only the reason can be said).
    let mut suggestions: Vec<Suggestion> = Vec::new();
    // Hot keys.
    if let Some(max) = measurements.max_requests {
        for (key, requests) in &measurements.keys {
            let now = router.fanout(key.as_key());
            if *requests <= max {
                // Only a salted key has a key object to show: the common cold key costs nothing.
                if now > 1 {
                    let shown = key_to_value(key.as_key());
                    suggestions.extend(cooling::hot_key(&shown, *requests, now, max, measurements.cool_percent));
                }
                continue;
            }
            let shown = key_to_value(key.as_key());
            let fanout = requests.div_ceil(max).clamp(2, u64::from(MAX_FANOUT)) as u32;
            let text = match key {
                OwnedKey::Bytes(bytes) => core::str::from_utf8(bytes).ok(),
                OwnedKey::U64(_) => None,
            };
            // A key of a tenant with an entry routes by the entry, and a hot key there is
            // refused (`topology::tenants`): the repair is said, not proposed.
            let tenant = match (key, topology.tenants()) {
                (OwnedKey::Bytes(bytes), Some(tenants)) => tenants.entry(tenants.rule(&topology.hashing).select(bytes)),
                _ => None,
            };
            match text {
                None => suggestions.push((
                    None,
                    format!("key {shown}: {requests} requests/s over {max}, but only text keys can be salted"),
                )),
                Some(_) if now >= fanout => {}
                Some(_) if tenant.is_some() => {
                    let tenant = tenant.map(|entry| entry.name.as_str()).unwrap_or_default();
                    suggestions.push((
                        None,
                        format!("key {shown}: {requests} requests/s over {max}, but its tenant {tenant:?} has an entry in tenants, whose keys are not salted: spread the tenant over more shards (tenants.entries.{tenant}.shards)"),
                    ))
                }
                Some(_) => suggestions.push((
                    Some(serde_json::json!({"op": "hot_key_add", "key": shown.clone(), "fanout": fanout})),
                    format!("key {shown}: {requests} requests/s over {max}: salted over {fanout} keys, each gets at most {max}"),
                )),
            }
        }
    }
    // Shards over a threshold.
    let over = |load: &ShardLoad| -> Option<String> {
        match (measurements.max_bytes, measurements.max_requests) {
            (Some(max), _) if load.bytes > max => Some(format!("{} bytes over {max}", load.bytes)),
            (_, Some(max)) if load.requests > max => Some(format!("{} requests/s over {max}", load.requests)),
            _ => None,
        }
    };
    // The writable id group's hot shards: closing the group is the suggestion.
    let writable = topology.strategy.spec::<IdGroupsSpec>().map(cooling::writable_span);
    for load in &measurements.shards {
        let Some(why) = over(load) else { continue };
        let shard = load.shard;
        if writable.as_ref().is_some_and(|span| span.contains(&shard)) {
            continue;
        }
        if let Some(spec) = topology.strategy.spec::<HashRangeSpec>() {
            let start = if shard == 0 { 0u128 } else { u128::from(spec.boundaries[shard as usize - 1]) };
            let end = spec.boundaries.get(shard as usize).map_or(1u128 << 64, |&end| u128::from(end));
            if end - start < 2 {
                suggestions.push((None, format!("shard {shard}: {why}, but its range holds one hash")));
                continue;
            }
            let at = (start + (end - start) / 2) as u64;
            suggestions.push((
                Some(serde_json::json!({"op": "range_split", "shard": shard, "at": json::u64_value(at)})),
                format!("shard {shard}: {why}: split at the middle of its hashes"),
            ));
        } else if topology.strategy.spec::<KeyRangeSpec>().is_some() {
            match &load.sample {
                Some(sample) if sample.len() >= 2 => suggestions.push((
                    Some(serde_json::json!({"op": "range_split_median", "shard": shard,
                        "sample": sample.iter().map(|key| key_to_value(key.as_key())).collect::<Vec<Value>>()})),
                    format!("shard {shard}: {why}: split at the median of its {} sample keys", sample.len()),
                )),
                _ => suggestions.push((
                    None,
                    format!("shard {shard}: {why}, but a key range splits at a key: measure a sample of its keys"),
                )),
            }
        } else {
            suggestions.push((
                None,
                format!(
                    "shard {shard}: {why}; the {} strategy has no split: weigh a rebalance",
                    topology.strategy.type_name()
                ),
            ));
        }
    }
    // The cooling side of the shards: adjacent ranges to merge, an id group to close.
    suggestions.extend(cooling::merges(measurements, topology, &router)?);
    if let Some(spec) = topology.strategy.spec::<IdGroupsSpec>() {
        suggestions.extend(cooling::id_groups(measurements, spec, &over));
    }
    // The load per node, by the owner of each measured shard, in node order.
    let mut per_node = vec![(0u64, 0u64, 0u64, 0u32); topology.nodes.len()];
    for load in &measurements.shards {
        // The owner's index, not its id looked up: a scan per shard would be quadratic.
        let entry = &mut per_node[router.shard_owner_index(load.shard)? as usize];
        entry.0 = entry.0.saturating_add(load.bytes);
        entry.1 = entry.1.saturating_add(load.requests);
        entry.2 = entry.2.saturating_add(load.keys);
        entry.3 += 1;
    }
    // A vbucket dictionary whose load leans on some nodes: a weighted rebalance.
    if let (Some(percent), Some(spec)) = (measurements.max_imbalance, topology.strategy.spec::<VbucketSpec>()) {
        if let Some(suggestion) = rebalance(measurements, percent, spec, topology, &router)? {
            suggestions.push(suggestion);
        }
    }
    if let Some(spec) = topology.strategy.spec::<VbucketSpec>() {
        suggestions.extend(cooling::vbuckets_per_node(measurements.min_vbuckets_per_node, spec, topology));
    }
    // Headroom and the capacity cascade, by measure.
    let loads: Vec<[u64; 3]> = per_node.iter().map(|&(bytes, requests, keys, _)| [bytes, requests, keys]).collect();
    let capacities = cooling::capacities(measurements, topology)?;
    suggestions.extend(cooling::headroom(measurements, topology, &loads, &capacities));
    suggestions.extend(cooling::cascade(topology, &loads, &capacities));
    let nodes: Vec<Value> = topology
        .nodes
        .iter()
        .zip(&per_node)
        .map(|(node, (bytes, requests, keys, shards))| {
            serde_json::json!({"node": node.id, "bytes": json::u64_value(*bytes), "requests": json::u64_value(*requests),
                "keys": json::u64_value(*keys), "shards": shards})
        })
        .collect();
    let mut report = Report::new();
    let suggestions = suggestions
        .into_iter()
        .map(|(operation, reason)| serde_json::json!({"operation": operation, "reason": reason}))
        .collect();
    report.put("suggestions", Value::Array(suggestions));
    report.put("nodes", Value::Array(nodes));
    Ok(Applied { topology: topology.clone(), report })
}

/// The `plan_rebalance` weighted by `measurements.weight_by` when some node's active load
/// exceeds its target by more than `percent` (`load * 100 > target * (100 + percent)`, in
/// `u128`), with the planner's targets ([`crate::planner::load_targets`]; an unmeasured
/// vbucket weighs 0). The plan is made here once, so the reason can say what it moves,
/// and a plan the operation would refuse (a rebalance running, the planner's budget) is
/// a reason without an operation.
fn rebalance(
    measurements: &Measurements,
    percent: u32,
    spec: &VbucketSpec,
    topology: &Topology,
    router: &crate::Router,
) -> Result<Option<(Option<Value>, String)>> {
    let measure = measurements.weight_by;
    let mut weights = vec![0u64; spec.vbuckets as usize];
    for load in &measurements.shards {
        weights[load.shard as usize] = measure.of(load);
    }
    if weights.iter().try_fold(0u64, |sum, &w| sum.checked_add(w)).is_none() {
        return Err(Error::argument(format!(
            "operation.shards: the {} of the vbuckets sum past {}",
            measure.name(),
            u64::MAX
        )));
    }
    let targets = crate::planner::load_targets(&weights, &super::dictionary::plan_nodes(&topology.nodes))?;
    let mut load = vec![0u64; topology.nodes.len()];
    for (vbucket, &weight) in weights.iter().enumerate() {
        // A sum of distinct weights, whose total was checked.
        load[router.shard_owner_index(vbucket as u32)? as usize] += weight;
    }
    let over: Vec<usize> = (0..topology.nodes.len())
        .filter(|&n| u128::from(load[n]) * 100 > u128::from(targets[n]) * (100 + u128::from(percent)))
        .collect();
    if over.is_empty() {
        return Ok(None);
    }
    let said: Vec<String> = over
        .iter()
        .map(|&n| {
            format!("node {}: {} {} against a target of {}", topology.nodes[n].id, load[n], measure.unit(), targets[n])
        })
        .collect();
    let why = format!("{} (max_imbalance {percent}%)", said.join("; "));
    let operation = serde_json::json!({"op": "plan_rebalance",
        "vbucket_weights": weights.iter().map(|&w| json::u64_value(w)).collect::<Vec<Value>>()});
    // Planned as the operation would be (its defaults), straight through the dictionary
    // code: not through `Op::apply`, which would make `apply` recursive.
    let rebalance = super::Rebalance {
        add: Vec::new(),
        remove: Vec::new(),
        fail: Vec::new(),
        weights: Vec::new(),
        replicas: None,
        max_moves_per_node: super::dictionary::DEFAULT_MAX_MOVES_PER_NODE,
        vbucket_weights: Some(weights),
    };
    let planned = super::dictionary::plan_rebalance(spec, &rebalance, topology);
    Ok(Some(match planned {
        Err(err) => (None, format!("{why}, but plan_rebalance refuses: {}", err.message())),
        Ok(applied) => {
            let after: Vec<String> = over
                .iter()
                .map(|&n| {
                    let id = &topology.nodes[n].id;
                    let after = &applied.report["load"][id.as_str()]["after"];
                    let after = after.as_u64().map(|n| format!("{n}")).or_else(|| after.as_str().map(String::from));
                    format!("{id} at {}", after.unwrap_or_default())
                })
                .collect();
            let moved = applied.report["moved_actives"].as_u64().unwrap_or(0);
            if moved == 0 {
                return Ok(Some((
                    None,
                    format!(
                        "{why}, but a rebalance weighted by {} moves no active: a vbucket outweighs the room left \
                         on every node (vbucket_double splits each vbucket's keys in two, hot_key_add spreads a hot key)",
                        measure.name()
                    ),
                )));
            }
            (
                Some(operation),
                format!(
                    "{why}: a rebalance weighted by {} moves {moved} actives and leaves {}",
                    measure.name(),
                    after.join(", ")
                ),
            )
        }
    }))
}
