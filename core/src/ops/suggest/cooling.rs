//! The cooling side of `suggest`: what to undo or close as load falls, and what to warn
//! about before load grows past what the nodes hold.
//!
//! - a salted key measured under `cool_percent` of `max_requests` gets `hot_key_remove`;
//! - two adjacent ranges (`hash_range`, `key_range`), both measured, whose sums are under
//!   `cool_percent` of each threshold given get `range_merge` (pairs left to right, none
//!   sharing a range); the merged range stays on the owner of the part with more bytes;
//! - an `id_groups` writable group with a shard over a threshold is closed by
//!   `id_groups_set_writable` of the closed group that has cooled most (every shard
//!   measured and under `cool_percent`), or gets a reason when none has;
//! - a `vbucket` dictionary with fewer than `min_vbuckets_per_node` vbuckets a node gets
//!   a warning, with `vbucket_double` when the doubled count is within the limit;
//! - a node past `capacity_warn` or `capacity_alert` percent of a capacity gets a
//!   headroom warning; and when losing the most loaded node would push another past its
//!   capacity, even with the load spread evenly over the other active nodes (with equal
//!   capacities, the best a failover or an automatic rebalance can do), a
//!   capacity-cascade warning.
//!
//! Integer arithmetic only (`u128` products), in input or node order: every binding
//! suggests alike. A measure is "cooled" only when measured: an unmeasured shard never is.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use serde_json::{json, Value};

use super::{Capacity, Measure, Measurements, ShardLoad, Suggestion};
use crate::error::{Error, Result};
use crate::limits;
use crate::node::NodeState;
use crate::strategy::ids::id_groups::IdGroupsSpec;
use crate::strategy::partitioned::hash_range::HashRangeSpec;
use crate::strategy::partitioned::key_range::KeyRangeSpec;
use crate::strategy::partitioned::vbucket::VbucketSpec;
use crate::topology::Topology;

/// The thresholds that cooling compares with: `(name, measure, threshold)` for each of
/// `max_bytes`, `max_requests` given; none when `cool_percent` is 0.
fn thresholds(measurements: &Measurements) -> Vec<(&'static str, Measure, u64)> {
    if measurements.cool_percent == 0 {
        return Vec::new();
    }
    [
        ("max_bytes", Measure::Bytes, measurements.max_bytes),
        ("max_requests", Measure::Requests, measurements.max_requests),
    ]
    .into_iter()
    .filter_map(|(name, measure, max)| max.map(|max| (name, measure, max)))
    .collect()
}

/// `value * 100 < max * percent`: under `percent` of `max`.
fn under(value: u64, max: u64, percent: u32) -> bool {
    u128::from(value) * 100 < u128::from(max) * u128::from(percent)
}

/// "under 50% of max_bytes 1000 and max_requests 1500".
fn under_text(thresholds: &[(&str, Measure, u64)], percent: u32) -> String {
    let named: Vec<String> = thresholds.iter().map(|(name, _, max)| format!("{name} {max}")).collect();
    format!("under {percent}% of {}", named.join(" and "))
}

/// `hot_key_remove` for a salted key (`fanout` above 1) whose `requests` (at most
/// `max`) are under `percent` of `max`.
pub(super) fn hot_key(shown: &Value, requests: u64, fanout: u32, max: u64, percent: u32) -> Option<Suggestion> {
    if fanout < 2 || !under(requests, max, percent) {
        return None;
    }
    Some((
        Some(json!({"op": "hot_key_remove", "key": shown.clone()})),
        format!(
            "key {shown}: {requests} requests/s, under {percent}% of max_requests {max}: it has cooled, \
             so stop salting it over {fanout} keys"
        ),
    ))
}

/// `range_merge` for each pair of adjacent, measured ranges whose sums are cooled,
/// left to right and disjoint. Hash and key ranges only.
pub(super) fn merges(
    measurements: &Measurements,
    topology: &Topology,
    router: &crate::Router,
) -> Result<Vec<Suggestion>> {
    let strategy = &topology.strategy;
    let thresholds = thresholds(measurements);
    if thresholds.is_empty()
        || (strategy.spec::<HashRangeSpec>().is_none() && strategy.spec::<KeyRangeSpec>().is_none())
    {
        return Ok(Vec::new());
    }
    let measured: BTreeMap<u32, &ShardLoad> = measurements.shards.iter().map(|load| (load.shard, load)).collect();
    let ranges = router.shard_range().end;
    let mut suggestions = Vec::new();
    let mut shard = 0u32;
    while shard + 1 < ranges {
        let (Some(first), Some(second)) = (measured.get(&shard), measured.get(&(shard + 1))) else {
            shard += 1;
            continue;
        };
        let sum = |measure: Measure| measure.of(first).saturating_add(measure.of(second));
        if !thresholds.iter().all(|&(_, measure, max)| under(sum(measure), max, measurements.cool_percent)) {
            shard += 1;
            continue;
        }
        let sums: Vec<String> =
            thresholds.iter().map(|&(_, measure, _)| format!("{} {}", sum(measure), measure.unit())).collect();
        let mut reason = format!(
            "shards {shard} and {}: {} together, {}: merge them",
            shard + 1,
            sums.join(" and "),
            under_text(&thresholds, measurements.cool_percent)
        );
        let mut operation = json!({"op": "range_merge", "shard": shard});
        let owners = (router.shard_owner_index(shard)? as usize, router.shard_owner_index(shard + 1)? as usize);
        if owners.0 != owners.1 {
            // Keep the part with more bytes where it is (a tie keeps the first's owner).
            let (stays, moves, moved) = if second.bytes > first.bytes {
                operation["node"] = Value::String(topology.nodes[owners.1].id.clone());
                (owners.1, owners.0, first.bytes)
            } else {
                (owners.0, owners.1, second.bytes)
            };
            reason.push_str(&format!(
                " on node {}: {moved} bytes move from node {}",
                topology.nodes[stays].id, topology.nodes[moves].id
            ));
        }
        suggestions.push((Some(operation), reason));
        shard += 2;
    }
    Ok(suggestions)
}

/// Each group's shards: the groups' shards are numbered in group order.
fn spans(spec: &IdGroupsSpec) -> Vec<Range<u32>> {
    let mut first = 0u32;
    let mut spans = Vec::with_capacity(spec.groups().len());
    for group in spec.groups() {
        let count = group.shards().len() as u32;
        spans.push(first..first + count);
        first += count;
    }
    spans
}

/// The shards of the writable group, whose heat [`id_groups`] speaks of.
pub(super) fn writable_span(spec: &IdGroupsSpec) -> Range<u32> {
    spans(spec).swap_remove(spec.writable_index())
}

/// Closing a hot writable id group: `over` says why a measured shard is over a
/// threshold. The group reopened is the closed group whose shards, every one measured,
/// are all cooled, with the fewest requests (then bytes; a tie goes to the first).
pub(super) fn id_groups(
    measurements: &Measurements,
    spec: &IdGroupsSpec,
    over: &dyn Fn(&ShardLoad) -> Option<String>,
) -> Option<Suggestion> {
    let measured: BTreeMap<u32, &ShardLoad> = measurements.shards.iter().map(|load| (load.shard, load)).collect();
    let spans = spans(spec);
    let writable = spec.writable_index();
    let hot = spans[writable].clone().find_map(|shard| {
        let load = measured.get(&shard)?;
        over(load).map(|why| format!("shard {shard}: {why}"))
    })?;
    let id = spec.groups()[writable].id();
    let thresholds = thresholds(measurements);
    let cooled = |index: usize| -> Option<(u64, u64)> {
        if index == writable || thresholds.is_empty() {
            return None;
        }
        let mut sums = (0u64, 0u64);
        for shard in spans[index].clone() {
            let load = measured.get(&shard)?;
            if !thresholds.iter().all(|&(_, measure, max)| under(measure.of(load), max, measurements.cool_percent)) {
                return None;
            }
            sums = (sums.0.saturating_add(load.requests), sums.1.saturating_add(load.bytes));
        }
        Some(sums)
    };
    let coolest = (0..spec.groups().len()).filter_map(|index| cooled(index).map(|sums| (sums, index))).min();
    let closing = format!("id group {id:?} (writable): {hot}: close it to new ids");
    Some(match coolest {
        Some((_, index)) => {
            let reopened = spec.groups()[index].id();
            (
                Some(json!({"op": "id_groups_set_writable", "group": reopened})),
                format!(
                    "{closing}, and reopen {reopened:?}, whose shards have cooled ({})",
                    under_text(&thresholds, measurements.cool_percent)
                ),
            )
        }
        None if thresholds.is_empty() => (None, format!("{closing}; cool_percent 0 reopens no closed group")),
        None => (
            None,
            format!(
                "{closing}, but no closed group has cooled (every shard measured and {}): add one with id_groups_add_group",
                under_text(&thresholds, measurements.cool_percent)
            ),
        ),
    })
}

/// The warning of a dictionary whose node count nears its vbucket count: fewer than
/// `min` vbuckets a node (`vbuckets < nodes * min`).
pub(super) fn vbuckets_per_node(min: u32, spec: &VbucketSpec, topology: &Topology) -> Option<Suggestion> {
    let nodes = topology.nodes.len() as u64;
    let vbuckets = spec.vbuckets;
    if u64::from(vbuckets) >= nodes * u64::from(min) {
        return None;
    }
    let said = format!(
        "{vbuckets} vbuckets over {nodes} nodes, fewer than min_vbuckets_per_node {min} a node: a vbucket is a \
         coarse share of a node's load, and the dictionary cannot grow past {vbuckets} nodes"
    );
    Some(match vbuckets.checked_mul(2).filter(|&doubled| doubled <= limits::MAX_VBUCKETS) {
        Some(doubled) => (
            Some(json!({"op": "vbucket_double"})),
            format!("{said}: vbucket_double makes {doubled} without moving a key"),
        ),
        None => (None, format!("{said}, and doubling them would pass the limit of {}", limits::MAX_VBUCKETS)),
    })
}

/// Each node's capacity: `capacity`, with the `node_capacity` of the nodes named there.
///
/// # Errors
/// `invalid_argument` for a `node_capacity` entry naming no node of the topology.
pub(super) fn capacities(measurements: &Measurements, topology: &Topology) -> Result<Vec<Capacity>> {
    let mut capacities = alloc::vec![measurements.capacity; topology.nodes.len()];
    let index: BTreeMap<&str, usize> =
        topology.nodes.iter().enumerate().map(|(index, node)| (node.id.as_str(), index)).collect();
    for (at, (node, capacity)) in measurements.node_capacity.iter().enumerate() {
        let Some(&index) = index.get(node.as_str()) else {
            return Err(Error::argument(format!("operation.node_capacity[{at}].node: no node {node:?}")));
        };
        capacities[index] = capacity.or(measurements.capacity);
    }
    Ok(capacities)
}

/// `load * 100 / capacity`, rounded down, as a number to show.
fn percent_of(load: u64, capacity: u64) -> u128 {
    u128::from(load) * 100 / u128::from(capacity)
}

/// A warning for each node and measure past `capacity_warn` percent of its capacity
/// (`load * 100 > capacity * percent`), worded by the highest mark passed: the alert,
/// or the capacity itself.
pub(super) fn headroom(
    measurements: &Measurements,
    topology: &Topology,
    loads: &[[u64; 3]],
    capacities: &[Capacity],
) -> Vec<Suggestion> {
    let (warn, alert) = (measurements.capacity_warn, measurements.capacity_alert);
    let mut suggestions = Vec::new();
    for (index, node) in topology.nodes.iter().enumerate() {
        for (at, measure) in Measure::ALL.into_iter().enumerate() {
            let Some(capacity) = capacities[index].of(measure) else { continue };
            let load = loads[index][at];
            let past = |percent: u32| u128::from(load) * 100 > u128::from(capacity) * u128::from(percent);
            let what = if load > capacity {
                String::from("over its capacity: move load off it or add nodes now")
            } else if past(alert) {
                format!("past {alert}%: less than the 20% headroom a node needs for peaks and a neighbour's failure is left; add nodes or move load off it")
            } else if past(warn) {
                format!("past {warn}%: its headroom is being spent; plan the next node")
            } else {
                continue;
            };
            suggestions.push((
                None,
                format!(
                    "node {}: {load} {} is {}% of its capacity of {capacity}, {what}",
                    node.id,
                    measure.unit(),
                    percent_of(load, capacity)
                ),
            ));
        }
    }
    suggestions
}

/// The capacity cascade, per measure: losing the most loaded node that is not failed
/// (a tie goes to the first) spreads its load over the other active nodes, at best
/// evenly: each gets at least `ceil(load / count)`. A warning names each node that this
/// pushes past its capacity.
pub(super) fn cascade(topology: &Topology, loads: &[[u64; 3]], capacities: &[Capacity]) -> Vec<Suggestion> {
    let mut suggestions = Vec::new();
    for (at, measure) in Measure::ALL.into_iter().enumerate() {
        if capacities.iter().all(|capacity| capacity.of(measure).is_none()) {
            continue;
        }
        let lost = (0..topology.nodes.len())
            .filter(|&index| topology.nodes[index].state != NodeState::Failed)
            .max_by(|&a, &b| loads[a][at].cmp(&loads[b][at]).then(b.cmp(&a)));
        let Some(lost) = lost else { continue };
        let moved = loads[lost][at];
        let receivers: Vec<usize> = (0..topology.nodes.len())
            .filter(|&index| index != lost && topology.nodes[index].state == NodeState::Active)
            .collect();
        if moved == 0 || receivers.is_empty() {
            continue;
        }
        let share = moved.div_ceil(receivers.len() as u64);
        let pushed: Vec<String> = receivers
            .iter()
            .filter_map(|&index| {
                let capacity = capacities[index].of(measure)?;
                let after = loads[index][at].saturating_add(share);
                (after > capacity)
                    .then(|| format!("node {} to {after} of its capacity of {capacity}", topology.nodes[index].id))
            })
            .collect();
        if pushed.is_empty() {
            continue;
        }
        suggestions.push((
            None,
            format!(
                "losing node {} (the most loaded, {moved} {unit}) spreads at least {share} {unit} onto each of the \
                 {} other active nodes, pushing {}: failure detection and an automatic rebalance would move load \
                 onto nodes already full, and they could fail in turn (a capacity cascade); add capacity first",
                topology.nodes[lost].id,
                receivers.len(),
                pushed.join(", "),
                unit = measure.unit(),
            ),
        ));
    }
    suggestions
}

#[cfg(test)]
mod tests {
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;

    use serde_json::{json, Value};

    use super::super::{Capacity, Measure};
    use crate::topology::Topology;

    fn topology(nodes: &[&str], strategy: Value) -> Topology {
        let nodes: Vec<Value> = nodes.iter().map(|id| json!({"id": id})).collect();
        Topology::from_value(&json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes, "strategy": strategy}))
            .expect("a valid document")
    }

    fn reasons(topology: &Topology, operation: Value) -> Vec<(Value, String)> {
        let report = crate::ops::apply(topology, &operation).expect("suggest applies");
        report["suggestions"]
            .as_array()
            .expect("suggestions")
            .iter()
            .map(|s| (s["operation"].clone(), s["reason"].as_str().expect("a reason").to_string()))
            .collect()
    }

    /// The cascade's rounded share says what the exact even spread says: `load +
    /// ceil(moved / k) > capacity` exactly when `load * k + moved > capacity * k`.
    #[test]
    fn ceil_share_agrees_with_the_exact_spread() {
        for moved in 0..60u64 {
            for k in 1..7u64 {
                for load in 0..30u64 {
                    for capacity in 1..40u64 {
                        let rounded = load + moved.div_ceil(k) > capacity;
                        let exact = load * k + moved > capacity * k;
                        assert_eq!(rounded, exact, "moved {moved} k {k} load {load} capacity {capacity}");
                    }
                }
            }
        }
    }

    /// Three cooled ranges in a row: one merge, of the first pair (pairs never share a
    /// range); the third waits for the next round.
    #[test]
    fn merges_are_disjoint_pairs() {
        let ranges = topology(&["a", "b", "c"], json!({"type": "hash_range"}));
        let said = reasons(
            &ranges,
            json!({"op": "suggest", "max_bytes": 100, "shards": [
                {"shard": 0, "bytes": 1}, {"shard": 1, "bytes": 1}, {"shard": 2, "bytes": 1}]}),
        );
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(said[0].0, json!({"op": "range_merge", "shard": 0}));
    }

    /// Without a threshold nothing has cooled, and a strategy without ranges merges nothing.
    #[test]
    fn no_threshold_no_merge() {
        let ranges = topology(&["a", "b"], json!({"type": "hash_range"}));
        let shards = json!([{"shard": 0}, {"shard": 1}]);
        assert!(reasons(&ranges, json!({"op": "suggest", "shards": shards})).is_empty());
        let jump = topology(&["a", "b"], json!({"type": "jump"}));
        assert!(reasons(&jump, json!({"op": "suggest", "max_bytes": 100, "shards": shards})).is_empty());
    }

    /// A dictionary too large to double still gets the warning, with no operation.
    #[test]
    fn vbuckets_past_half_the_limit_get_a_reason_only() {
        let vbuckets = crate::limits::MAX_VBUCKETS / 2 + 1;
        let dictionary = topology(&["a", "b"], json!({"type": "vbucket", "vbuckets": vbuckets}));
        let spec = dictionary.strategy.spec::<crate::strategy::partitioned::vbucket::VbucketSpec>().expect("vbucket");
        let (operation, reason) = super::vbuckets_per_node(vbuckets, spec, &dictionary).expect("a warning");
        assert_eq!(operation, None);
        assert!(reason.ends_with("doubling them would pass the limit of 1048576"), "{reason}");
        assert_eq!(super::vbuckets_per_node(vbuckets / 2, spec, &dictionary), None);
    }

    /// A draining node takes none of a lost node's load, and a failed node is never the
    /// one lost: a cascade counts only active receivers.
    #[test]
    fn cascade_spreads_over_active_nodes_only() {
        let mut nodes = topology(&["a", "b", "c"], json!({"type": "jump"}));
        let loads = [[0, 900, 0], [0, 400, 0], [0, 0, 0]];
        let capacities = [Capacity { requests: Some(1000), ..Capacity::default() }; 3];
        // a lost: 450 each to b and c; b reaches 850.
        assert!(super::cascade(&nodes, &loads, &capacities).is_empty());
        // c draining: all 900 to b, 1300.
        nodes.nodes[2].state = crate::node::NodeState::Draining;
        let said = super::cascade(&nodes, &loads, &capacities);
        assert_eq!(said.len(), 1);
        assert!(said[0].1.contains("node b to 1300 of its capacity of 1000"), "{}", said[0].1);
        // a failed too: b (400) is the one lost, and no active node is left to take it.
        nodes.nodes[0].state = crate::node::NodeState::Failed;
        assert!(super::cascade(&nodes, &loads, &capacities).is_empty());
        assert_eq!(capacities[0].of(Measure::Bytes), None);
    }
}
