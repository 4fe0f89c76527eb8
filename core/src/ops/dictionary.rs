//! The operations of vbucket dictionaries: plan a rebalance, complete moves, double or
//! halve the vbucket count, and per-key overrides. `docs/dictionary-format.md` in the
//! repository specifies the dictionary field by field.
//!
//! | `op` | what it does |
//! |---|---|
//! | `plan_rebalance` | plans a change of nodes with [`crate::planner`] and starts it: nodes in `add` are appended, `remove` ones become `draining`, `fail` ones `failed`, `weights` re-weights; promotions of replicas happen at once in `map`, and so do lost vbuckets (the active was on a failed node and no live node held a replica: the new owner starts empty), and failed nodes leave every chain of `map`, so no read goes to them; the target goes to `forward_map` (kept even when it equals `map` while a failed node is listed, so `complete_moves` drops it) and every vbucket whose active changes becomes `migrating`. Reports `moves` (`kind`: `promotion`, `copy` or `lost`; a copy never names a failed node as `from`), `steps`, `quota`, `moved_actives` (the vbuckets whose active changes), `lower_bound`. With `vbucket_weights` (an array of exactly `V` unsigned integers, numbers or decimal strings: the measured size or load of each vbucket) the actives are balanced by weight ([`planner::plan_weighted`]; replicas keep the count quotas), and the report has `target` (each node's load target) and `load` (each node's `before` and `after`) instead of `quota`; `lower_bound` is then the fewest active moves of any plan within the weighted bound. |
//! | `complete_moves` | for the listed `vbuckets` (default: all), `map` takes the `forward_map` chain and the state is cleared; when nothing is left to move, `forward_map` goes and so do draining and failed nodes no chain names. |
//! | `vbucket_double` | `V` becomes `2V`; vbucket `v + V` gets the chain of `v`. Since `hash % 2V` is `hash % V` or that plus `V`, no key changes node. |
//! | `vbucket_halve` | the inverse; allowed only when vbuckets `v` and `v + V/2` have the same chain (and forward chain and state) for every `v`. |
//! | `vbucket_override` | sends `key` to vbucket `vbucket`; reports `key`, `from_vbucket` (its old override or `hash % V`), `to_vbucket`, `from` and `to` (the active nodes of those vbuckets), `replaced` |
//! | `vbucket_override_remove` | drops the override of `key` (back to `hash % V`); reports as `vbucket_override` without `replaced` |
//!
//! The dictionary operations (the first four) write a checksummed document.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::key::Key;
use crate::limits;
use crate::node::{self, Node, NodeState};
use crate::planner::{self, PlanNode, Role};
use crate::strategy::partitioned::key_table;
use crate::strategy::partitioned::vbucket::{VbucketSpec, VbucketState, VbucketTable};
use crate::strategy::Variant;
use crate::topology::Topology;

/// The parameters of `plan_rebalance`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rebalance {
    /// Nodes to append.
    pub add: Vec<Node>,
    /// Ids of nodes to drain (they become `draining`).
    pub remove: Vec<String>,
    /// Ids of nodes whose data is lost (they become `failed`).
    pub fail: Vec<String>,
    /// New weights by node id.
    pub weights: Vec<(String, f64)>,
    /// Replicas per vbucket of the target (default: as the longest chain now).
    pub replicas: Option<u32>,
    /// The most copies into or out of one node per step (default 2).
    pub max_moves_per_node: u32,
    /// The measured size or load of each vbucket: when present, actives are balanced by
    /// these weights instead of by count ([`planner::plan_weighted`]).
    pub vbucket_weights: Option<Vec<u64>>,
}

/// Reads `vbucket_weights`: an array of unsigned integers (numbers or decimal strings),
/// at most [`limits::MAX_VBUCKETS`] of them.
fn vbucket_weights(value: &Value) -> Result<Vec<u64>> {
    let path = "operation.vbucket_weights";
    let entries = json::array(path, value).map_err(args::argument)?;
    if entries.len() > limits::MAX_VBUCKETS as usize {
        return Err(Error::limit(format!(
            "{path}: {} weights; the limit is {} (limits::MAX_VBUCKETS)",
            entries.len(),
            limits::MAX_VBUCKETS
        )));
    }
    entries
        .iter()
        .enumerate()
        .map(|(index, entry)| json::u64(&format!("{path}[{index}]"), entry).map_err(args::argument))
        .collect()
}

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    Ok(match name {
        "plan_rebalance" => {
            let args = args(
                operation,
                &["op", "add", "remove", "fail", "weights", "replicas", "max_moves_per_node", "vbucket_weights"],
            )?;
            let add = match args.optional("add") {
                None => Vec::new(),
                Some(Value::Array(entries)) => entries
                    .iter()
                    .enumerate()
                    .map(|(i, entry)| Node::from_value(&format!("operation.add[{i}]"), entry))
                    .collect::<Result<_>>()?,
                Some(_) => return Err(Error::argument("operation.add: expected an array of nodes")),
            };
            let weights = match args.optional("weights") {
                None => Vec::new(),
                Some(Value::Object(weights)) => weights
                    .iter()
                    .map(|(id, weight)| Ok((id.clone(), node::weight(&format!("operation.weights.{id}"), weight)?)))
                    .collect::<Result<_>>()?,
                Some(_) => return Err(Error::argument("operation.weights: expected an object id → weight")),
            };
            Op::PlanRebalance(Rebalance {
                add,
                remove: args.ids("remove")?,
                fail: args.ids("fail")?,
                weights,
                replicas: args.optional_u32_in("replicas", 0, limits::MAX_REPLICAS)?,
                max_moves_per_node: args
                    .optional_u32_in("max_moves_per_node", 1, u32::MAX)?
                    .unwrap_or(DEFAULT_MAX_MOVES_PER_NODE),
                vbucket_weights: args.optional("vbucket_weights").map(vbucket_weights).transpose()?,
            })
        }
        "complete_moves" => {
            let args = args(operation, &["op", "vbuckets"])?;
            let vbuckets = match args.optional("vbuckets") {
                None => None,
                Some(Value::Array(items)) => Some(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            item.as_u64().and_then(|v| u32::try_from(v).ok()).ok_or_else(|| {
                                Error::argument(format!("operation.vbuckets[{i}]: expected a vbucket number"))
                            })
                        })
                        .collect::<Result<_>>()?,
                ),
                Some(_) => return Err(Error::argument("operation.vbuckets: expected an array of vbucket numbers")),
            };
            Op::CompleteMoves { vbuckets }
        }
        "vbucket_double" | "vbucket_halve" => {
            args(operation, &["op"])?;
            if name == "vbucket_double" {
                Op::VbucketDouble
            } else {
                Op::VbucketHalve
            }
        }
        "vbucket_override" => {
            let args = args(operation, &["op", "key", "vbucket"])?;
            Op::VbucketOverride { key: args.key("key")?, vbucket: args.u32_in("vbucket", 0, u32::MAX)? }
        }
        _ => Op::VbucketOverrideRemove { key: args(operation, &["op", "key"])?.key("key")? },
    })
}

impl Edit for VbucketSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        match op {
            Op::PlanRebalance(rebalance) => plan_rebalance(self, rebalance, topology),
            Op::CompleteMoves { vbuckets } => complete_moves(self, vbuckets.as_deref(), topology),
            Op::VbucketDouble => double(self, topology),
            Op::VbucketHalve => halve(self, topology),
            Op::VbucketOverride { key, vbucket } => set_override(self, key.as_key(), *vbucket, topology),
            Op::VbucketOverrideRemove { key } => remove_override(self, key.as_key(), topology),
            _ => Err(super::refused(op, topology)),
        }
    }
}

/// The map of a spec, materialized when it is derived round-robin.
fn explicit_map(spec: &VbucketSpec, nodes: u32) -> Vec<Vec<u32>> {
    match &spec.map {
        Some(map) => map.clone(),
        None => VbucketTable::round_robin(spec.vbuckets, nodes, spec.replicas),
    }
}

/// A dictionary operation's result: `spec` over `nodes`, checksummed.
fn dictionary(topology: &Topology, nodes: Vec<Node>, spec: VbucketSpec, report: Report) -> Result<Applied> {
    let topology = Topology { nodes, strategy: spec.into_strategy()?, checksummed: true, ..topology.clone() };
    Ok(Applied { topology, report })
}

/// Node ids in sorted order with their indices: an operation naming many nodes finds each
/// in `O(log N)` (a scan per id would make removing most of 65,536 nodes quadratic).
struct IdIndex<'n>(Vec<(&'n str, usize)>);

impl<'n> IdIndex<'n> {
    fn new(nodes: &'n [Node]) -> IdIndex<'n> {
        let mut ids: Vec<(&str, usize)> = nodes.iter().enumerate().map(|(i, node)| (node.id.as_str(), i)).collect();
        ids.sort_unstable();
        IdIndex(ids)
    }

    fn get(&self, id: &str, path: &str) -> Result<usize> {
        match self.0.binary_search_by(|(known, _)| (*known).cmp(id)) {
            Ok(at) => Ok(self.0[at].1),
            Err(_) => Err(Error::argument(format!("{path}: no node {id:?}"))),
        }
    }
}

/// The chain length of the current map: the longest chain of an explicit map, or the
/// round-robin map's `replicas + 1`, without materializing the map.
fn longest_chain(spec: &VbucketSpec) -> u32 {
    match &spec.map {
        Some(chains) => chains.iter().map(|chain| chain.len() as u32).max().unwrap_or(1),
        None => spec.replicas + 1,
    }
}

/// `max_moves_per_node` when the operation does not say.
pub(super) const DEFAULT_MAX_MOVES_PER_NODE: u32 = 2;

pub(super) fn plan_rebalance(spec: &VbucketSpec, rebalance: &Rebalance, topology: &Topology) -> Result<Applied> {
    if spec.forward.is_some() {
        return Err(Error::argument("plan_rebalance: a rebalance is already running; complete its moves first"));
    }
    // Every refusal comes before any work that grows with the map.
    let replicas = rebalance.replicas.unwrap_or(longest_chain(spec).saturating_sub(1));
    let slots = u64::from(spec.vbuckets) * (u64::from(replicas) + 1);
    if slots > limits::MAX_PLAN_SLOTS {
        let field = if rebalance.replicas.is_some() { "operation.replicas" } else { "strategy.vbuckets" };
        return Err(Error::limit(format!(
            "{field}: plan_rebalance over {} vbuckets x {} chain slots ({slots}) exceeds the planner's budget of {} \
             (limits::MAX_PLAN_SLOTS)",
            spec.vbuckets,
            replicas + 1,
            limits::MAX_PLAN_SLOTS
        )));
    }
    if let Some(weights) = &rebalance.vbucket_weights {
        if weights.len() != spec.vbuckets as usize {
            return Err(Error::argument(format!(
                "operation.vbucket_weights: expected {} weights, one per vbucket, found {}",
                spec.vbuckets,
                weights.len()
            )));
        }
        let mut total: u64 = 0;
        for (vbucket, &weight) in weights.iter().enumerate() {
            total = total.checked_add(weight).ok_or_else(|| {
                Error::argument(format!("operation.vbucket_weights[{vbucket}]: the weights sum past {} here", u64::MAX))
            })?;
        }
    }
    // Nodes: append the added ones, then mark removed and failed, then re-weight.
    let mut nodes = topology.nodes.clone();
    nodes.extend(rebalance.add.iter().cloned());
    node::check_list(&nodes)?;
    let ids = IdIndex::new(&nodes);
    let mut states: Vec<Option<NodeState>> = vec![None; nodes.len()];
    let mut weights: Vec<Option<f64>> = vec![None; nodes.len()];
    for (ids_of, state, path) in [
        (&rebalance.remove, NodeState::Draining, "operation.remove"),
        (&rebalance.fail, NodeState::Failed, "operation.fail"),
    ] {
        for id in ids_of {
            states[ids.get(id, path)?] = Some(state);
        }
    }
    for (id, weight) in &rebalance.weights {
        weights[ids.get(id, "operation.weights")?] = Some(*weight);
    }
    drop(ids);
    for ((node, state), weight) in nodes.iter_mut().zip(states).zip(weights) {
        node.state = state.unwrap_or(node.state);
        node.weight = weight.unwrap_or(node.weight);
    }
    let serving = nodes.iter().filter(|node| node.state == NodeState::Active).count() as u32;
    planner::check(serving, replicas, rebalance.max_moves_per_node)?;
    let chains = explicit_map(spec, topology.nodes.len() as u32);
    let plan_nodes = plan_nodes(&nodes);
    let plan = match &rebalance.vbucket_weights {
        Some(weights) => planner::plan_weighted(&chains, &plan_nodes, replicas, rebalance.max_moves_per_node, weights)?,
        None => planner::plan(&chains, &plan_nodes, replicas, rebalance.max_moves_per_node)?,
    };

    // Promotions and lost vbuckets (a new, empty owner) take effect at once, in move
    // order; the rest is the forward map. A failed node holds nothing: it leaves every
    // chain of the map, so no read or replica read goes to it.
    let mut map = chains.clone();
    for mv in plan.moves.iter().filter(|mv| (mv.promotion || mv.lost) && mv.role == Role::Active) {
        let chain = &mut map[mv.vbucket as usize];
        chain.retain(|&node| node != mv.to);
        chain.insert(0, mv.to);
    }
    for chain in &mut map {
        chain.retain(|&node| !plan_nodes[node as usize].failed);
    }
    let states = map
        .iter()
        .zip(&plan.chains)
        .enumerate()
        .filter(|(_, (current, target))| current[0] != target[0])
        .map(|(vbucket, _)| (vbucket as u32, VbucketState::Migrating))
        .collect();
    // A failover always leaves a forward map, even when everything took effect at once
    // (lost vbuckets without replicas): `complete_moves` is the step that drops the failed
    // nodes, as it did when their vbuckets were (wrongly) copied from them.
    let failing = nodes.iter().any(|node| node.state == NodeState::Failed);
    let forward = if map == plan.chains && !failing { None } else { Some(plan.chains.clone()) };

    let id = |index: u32| Value::String(nodes[index as usize].id.clone());
    let moves: Vec<Value> = plan
        .moves
        .iter()
        .map(|mv| {
            let (role, slot) = match mv.role {
                Role::Active => ("active", 0),
                Role::Replica(slot) => ("replica", slot),
            };
            json!({
                "vbucket": mv.vbucket, "role": role, "slot": slot,
                "from": mv.from.map_or(Value::Null, id), "to": id(mv.to),
                "kind": if mv.promotion { "promotion" } else if mv.lost { "lost" } else { "copy" },
            })
        })
        .collect();
    let steps: Vec<Value> = plan.steps.iter().map(|range| json!([range.start, range.end])).collect();
    // Vbuckets whose active changes (a failover may move one twice: promoted, then copied on).
    let moved_actives = chains.iter().zip(&plan.chains).filter(|(now, next)| now[0] != next[0]).count();
    let mut report = Report::new();
    report.put("moves", Value::Array(moves));
    report.put("steps", Value::Array(steps));
    match &rebalance.vbucket_weights {
        None => {
            let mut quota = Map::new();
            for (index, node) in nodes.iter().enumerate() {
                quota.insert(node.id.clone(), plan.active_quota[index].into());
            }
            let mut before = vec![0u32; nodes.len()];
            for chain in &chains {
                before[chain[0] as usize] += 1;
            }
            let lower_bound: u32 = before.iter().zip(&plan.active_quota).map(|(b, q)| b.saturating_sub(*q)).sum();
            report.put("quota", Value::Object(quota));
            report.put("moved_actives", moved_actives.into());
            report.put("lower_bound", lower_bound.into());
        }
        Some(weights) => {
            let targets = planner::load_targets(weights, &plan_nodes)?;
            let weighted = weighted_report(&chains, &plan.chains, weights, &targets, &plan_nodes);
            let mut target = Map::new();
            let mut load = Map::new();
            for (index, node) in nodes.iter().enumerate() {
                target.insert(node.id.clone(), json::u64_value(targets[index]));
                load.insert(
                    node.id.clone(),
                    json!({"before": json::u64_value(weighted.before[index]), "after": json::u64_value(weighted.after[index])}),
                );
            }
            report.put("target", Value::Object(target));
            report.put("load", Value::Object(load));
            report.put("moved_actives", moved_actives.into());
            report.put("lower_bound", weighted.lower_bound.into());
        }
    }
    let next = VbucketSpec { map: Some(map), forward, states, replicas: 0, ..spec.clone() };
    dictionary(topology, nodes, next, report)
}

/// The nodes as the planner sees them: weight, zone (by its rank among the zones named),
/// serving (active) or failed.
pub(super) fn plan_nodes(nodes: &[Node]) -> Vec<PlanNode> {
    let mut zones: Vec<&str> = nodes.iter().filter_map(|node| node.zone.as_deref()).collect();
    zones.sort_unstable();
    zones.dedup();
    nodes
        .iter()
        .map(|node| PlanNode {
            weight: node.weight,
            zone: node.zone.as_deref().and_then(|zone| zones.binary_search(&zone).ok()).map(|i| i as u32),
            serving: node.state == NodeState::Active,
            failed: node.state == NodeState::Failed,
        })
        .collect()
}

/// What a weighted plan reports beside its moves.
struct Weighted {
    /// The active load of each node before and after.
    before: Vec<u64>,
    after: Vec<u64>,
    /// The fewest actives any plan must move to leave every node's load at most its
    /// target plus the heaviest vbucket less 1 (the bound the weighted planner keeps): on
    /// each serving node, its actives past the most of them (lightest first) that fit
    /// within that; all the actives of a node that no longer serves. With all weights
    /// equal, the count plan's `lower_bound`.
    lower_bound: u32,
}

fn weighted_report(
    chains: &[Vec<u32>],
    next: &[Vec<u32>],
    weights: &[u64],
    targets: &[u64],
    nodes: &[PlanNode],
) -> Weighted {
    let load = |chains: &[Vec<u32>]| {
        let mut load = vec![0u64; nodes.len()];
        for (chain, &weight) in chains.iter().zip(weights) {
            // A sum of distinct vbuckets' weights, whose total was checked.
            load[chain[0] as usize] += weight;
        }
        load
    };
    let heaviest = weights.iter().copied().max().unwrap_or(0);
    // By node, lightest first: `node << 64 | weight`.
    let mut held: Vec<u128> =
        chains.iter().zip(weights).map(|(chain, &weight)| u128::from(chain[0]) << 64 | u128::from(weight)).collect();
    held.sort_unstable();
    let mut lower_bound = 0u32;
    let mut sum = 0u128;
    let mut previous = None;
    for &key in &held {
        let (node, weight) = ((key >> 64) as u32, key as u64);
        if previous != Some(node) {
            (previous, sum) = (Some(node), 0);
        }
        sum += u128::from(weight);
        let room = u128::from(targets[node as usize]) + u128::from(heaviest.saturating_sub(1));
        if !nodes[node as usize].serving || sum > room {
            lower_bound += 1;
        }
    }
    Weighted { before: load(chains), after: load(next), lower_bound }
}

fn complete_moves(spec: &VbucketSpec, listed: Option<&[u32]>, topology: &Topology) -> Result<Applied> {
    let Some(forward) = &spec.forward else {
        return Err(Error::argument("complete_moves: no rebalance is running (the dictionary has no forward_map)"));
    };
    let all: Vec<u32>;
    let listed = match listed {
        Some(listed) => {
            if let Some((i, v)) = listed.iter().enumerate().find(|(_, &v)| v >= spec.vbuckets) {
                return Err(Error::argument(format!(
                    "operation.vbuckets[{i}]: expected a vbucket number in 0..{}, found {v}",
                    spec.vbuckets
                )));
            }
            listed
        }
        None => {
            all = (0..spec.vbuckets).collect();
            &all
        }
    };
    let mut is_listed = vec![false; spec.vbuckets as usize];
    for &vbucket in listed {
        is_listed[vbucket as usize] = true;
    }
    let mut map = explicit_map(spec, topology.nodes.len() as u32);
    let mut completed = Vec::new();
    for &vbucket in listed {
        let v = vbucket as usize;
        if map[v] != forward[v] {
            map[v] = forward[v].clone();
            completed.push(vbucket);
        }
    }
    let states: Vec<(u32, VbucketState)> = spec
        .states
        .iter()
        .copied()
        .filter(|(v, _)| !is_listed[*v as usize] && map[*v as usize] != forward[*v as usize])
        .collect();
    let remaining = map.iter().zip(forward).filter(|(a, b)| a != b).count();
    let done = remaining == 0;
    let mut nodes = topology.nodes.clone();
    let mut removed = Vec::new();
    if done {
        // Draining and failed nodes that no chain names leave the node list; indices shift.
        let mut used = vec![false; nodes.len()];
        for &node in map.iter().flatten() {
            used[node as usize] = true;
        }
        let mut renumber = vec![u32::MAX; nodes.len()];
        let mut kept = Vec::new();
        for (index, node) in nodes.iter().enumerate() {
            if node.state != NodeState::Active && !used[index] {
                removed.push(Value::String(node.id.clone()));
            } else {
                renumber[index] = kept.len() as u32;
                kept.push(node.clone());
            }
        }
        for node in map.iter_mut().flatten() {
            *node = renumber[*node as usize];
        }
        nodes = kept;
    }
    let mut report = Report::new();
    report.put("completed", Value::Array(completed.into_iter().map(Value::from).collect()));
    report.put("remaining", remaining.into());
    report.put("removed_nodes", Value::Array(removed));
    let next = VbucketSpec {
        map: Some(map),
        forward: if done { None } else { Some(forward.clone()) },
        states,
        replicas: 0,
        ..spec.clone()
    };
    dictionary(topology, nodes, next, report)
}

fn double(spec: &VbucketSpec, topology: &Topology) -> Result<Applied> {
    let vbuckets = spec.vbuckets;
    let doubled = vbuckets.checked_mul(2).filter(|&v| v <= limits::MAX_VBUCKETS).ok_or_else(|| {
        Error::limit(format!(
            "vbucket_double: {vbuckets} vbuckets doubled exceeds the limit of {}",
            limits::MAX_VBUCKETS
        ))
    })?;
    let twice = |chains: &Vec<Vec<u32>>| -> Vec<Vec<u32>> { chains.iter().chain(chains.iter()).cloned().collect() };
    let map = explicit_map(spec, topology.nodes.len() as u32);
    let mut states = spec.states.clone();
    states.extend(spec.states.iter().map(|&(v, state)| (v + vbuckets, state)));
    let next = VbucketSpec {
        vbuckets: doubled,
        map: Some(twice(&map)),
        forward: spec.forward.as_ref().map(twice),
        states,
        replicas: 0,
        ..spec.clone()
    };
    let mut report = Report::new();
    report.put("vbuckets", doubled.into());
    dictionary(topology, topology.nodes.clone(), next, report)
}

fn halve(spec: &VbucketSpec, topology: &Topology) -> Result<Applied> {
    if !spec.vbuckets.is_multiple_of(2) {
        return Err(Error::argument(format!("vbucket_halve: {} vbuckets cannot be halved", spec.vbuckets)));
    }
    let half = spec.vbuckets / 2;
    let map = explicit_map(spec, topology.nodes.len() as u32);
    let state = |v: u32| match spec.states.binary_search_by_key(&v, |entry| entry.0) {
        Ok(index) => spec.states[index].1,
        Err(_) => VbucketState::Active,
    };
    for v in 0..half {
        let (low, high) = (v as usize, (v + half) as usize);
        let same_forward = spec.forward.as_ref().is_none_or(|f| f[low] == f[high]);
        if map[low] != map[high] || !same_forward || state(v) != state(v + half) {
            return Err(Error::argument(format!(
                "vbucket_halve: vbuckets {v} and {} do not sit on the same nodes; move them together first",
                v + half
            )));
        }
    }
    let next = VbucketSpec {
        vbuckets: half,
        map: Some(map[..half as usize].to_vec()),
        forward: spec.forward.as_ref().map(|f| f[..half as usize].to_vec()),
        states: spec.states.iter().copied().filter(|(v, _)| *v < half).collect(),
        overrides: spec.overrides.iter().map(|(key, v)| (key.clone(), v % half)).collect(),
        replicas: 0,
    };
    let mut report = Report::new();
    report.put("vbuckets", half.into());
    dictionary(topology, topology.nodes.clone(), next, report)
}

/// The head of the chain of `vbucket` without compiling the whole table.
fn active_node(spec: &VbucketSpec, vbucket: u32, nodes: &[Node]) -> u32 {
    match &spec.map {
        Some(chains) => chains[vbucket as usize][0],
        None => (u64::from(vbucket) % nodes.len() as u64) as u32,
    }
}

/// The report of an override change: `key`, `from_vbucket`, `to_vbucket`, and the
/// active nodes `from` and `to`.
fn override_report(topology: &Topology, spec: &VbucketSpec, key: Key<'_>, from: u32, to: u32) -> Report {
    let node =
        |vbucket: u32| Value::String(topology.nodes[active_node(spec, vbucket, &topology.nodes) as usize].id.clone());
    let mut report = Report::new();
    report.put("key", key_table::key_to_value(key));
    report.put("from_vbucket", from.into());
    report.put("to_vbucket", to.into());
    report.put("from", node(from));
    report.put("to", node(to));
    report
}

fn with_spec(topology: &Topology, spec: VbucketSpec, report: Report) -> Result<Applied> {
    Ok(Applied { topology: Topology { strategy: spec.into_strategy()?, ..topology.clone() }, report })
}

fn set_override(spec: &VbucketSpec, key: Key<'_>, vbucket: u32, topology: &Topology) -> Result<Applied> {
    if vbucket >= spec.vbuckets {
        return Err(Error::argument(format!(
            "operation.vbucket: expected an integer in 0..={}, found {vbucket}",
            spec.vbuckets - 1
        )));
    }
    let key = crate::key::OwnedKey::from(key);
    key_table::check_table_keys("operation.key", &topology.hashing, &[(key.clone(), vbucket)])
        .map_err(super::args::argument)?;
    let mut next = spec.clone();
    let previous = key_table::table_set(&mut next.overrides, key.clone(), vbucket)?;
    let from = previous.unwrap_or_else(|| (topology.hashing.hash(key.as_key()) % u64::from(spec.vbuckets)) as u32);
    let mut report = override_report(topology, spec, key.as_key(), from, vbucket);
    report.put("replaced", Value::Bool(previous.is_some()));
    with_spec(topology, next, report)
}

fn remove_override(spec: &VbucketSpec, key: Key<'_>, topology: &Topology) -> Result<Applied> {
    let mut next = spec.clone();
    let from = key_table::table_remove(&mut next.overrides, key).ok_or_else(|| {
        Error::argument(format!("vbucket_override_remove: {} has no override", key_table::key_to_value(key)))
    })?;
    let to = (topology.hashing.hash(key) % u64::from(spec.vbuckets)) as u32;
    with_spec(topology, next, override_report(topology, spec, key, from, to))
}
