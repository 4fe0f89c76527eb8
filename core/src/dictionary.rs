//! The vbucket dictionary as a product: the operations that move vbuckets (plan a
//! rebalance, complete moves, double or halve the vbucket count) and the compact binary
//! encoding that edge workers and caches keep. The JSON format itself is a topology
//! document with the `vbucket` strategy; `docs/dictionary-format.md` specifies it field
//! by field and `docs/dictionary.schema.json` is its JSON Schema.
//!
//! # Operations
//!
//! | `op` | what it does |
//! |---|---|
//! | `plan_rebalance` | plans a change of nodes with [`crate::planner`] and starts it: nodes in `add` are appended, `remove` ones become `draining`, `fail` ones `failed`, `weights` re-weights; promotions of replicas happen at once in `map`; the target goes to `forward_map` and every vbucket whose active changes becomes `migrating`. Reports `moves`, `steps`, `quota`, `moved_actives`, `lower_bound`. |
//! | `complete_moves` | for the listed `vbuckets` (default: all), `map` takes the `forward_map` chain and the state is cleared; when nothing is left to move, `forward_map` goes and so do draining and failed nodes no chain names. |
//! | `vbucket_double` | `V` becomes `2V`; vbucket `v + V` gets the chain of `v`. Since `hash % 2V` is `hash % V` or that plus `V`, no key changes node. |
//! | `vbucket_halve` | the inverse; allowed only when vbuckets `v` and `v + V/2` have the same chain (and forward chain and state) for every `v`. |
//!
//! Every operation advances the epoch by one and returns a checksummed document.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::hashing::{HashFunction, HashTag, IntegerKeys};
use crate::json;
use crate::node::NodeState;
use crate::ops::{next_epoch, operation_object};
use crate::planner::{self, PlanNode, Role};
use crate::strategy::partitioned::vbucket::{VbucketSpec, VbucketState, VbucketTable};
use crate::strategy::Strategy;
use crate::topology::Topology;

fn vbucket_spec<'t>(topology: &'t Topology, op: &str) -> Result<&'t VbucketSpec> {
    match &topology.strategy {
        Strategy::Vbucket(spec) => Ok(spec),
        other => Err(Error::argument(format!("{op}: needs a vbucket topology, not {}", other.type_name()))),
    }
}

/// The map of a spec, materialized when it is derived round-robin.
fn explicit_map(spec: &VbucketSpec, nodes: u32) -> Vec<Vec<u32>> {
    match &spec.map {
        Some(map) => map.clone(),
        None => VbucketTable::round_robin(spec.vbuckets, nodes, spec.replicas),
    }
}

fn argument_error(err: Error) -> Error {
    Error::argument(String::from(err.message()))
}

fn ids(value: Option<&Value>, path: &str) -> Result<Vec<String>> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str()
                    .map(String::from)
                    .ok_or_else(|| Error::argument(format!("{path}[{i}]: expected a node id")))
            })
            .collect(),
        Some(_) => Err(Error::argument(format!("{path}: expected an array of node ids"))),
    }
}

/// `plan_rebalance`: see the module docs.
pub(crate) fn plan_rebalance(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object =
        operation_object(operation, &["op", "add", "remove", "fail", "weights", "replicas", "max_moves_per_node"])?;
    let spec = vbucket_spec(topology, "plan_rebalance")?;
    if spec.forward.is_some() {
        return Err(Error::argument("plan_rebalance: a rebalance is already running; complete its moves first"));
    }
    let mut document = topology.to_value();
    // Nodes: append the added ones, then mark removed and failed, then re-weight.
    if let Some(added) = object.optional("add") {
        let added = added.as_array().ok_or_else(|| Error::argument("operation.add: expected an array of nodes"))?;
        if let Some(Value::Array(nodes)) = document.get_mut("nodes") {
            nodes.extend(added.iter().cloned());
        }
    }
    let node_index = |document: &Value, id: &str, path: &str| -> Result<usize> {
        document["nodes"]
            .as_array()
            .and_then(|nodes| nodes.iter().position(|node| node["id"] == id))
            .ok_or_else(|| Error::argument(format!("{path}: no node {id:?}")))
    };
    for (field, state) in [("remove", "draining"), ("fail", "failed")] {
        for id in ids(object.optional(field), &format!("operation.{field}"))? {
            let index = node_index(&document, &id, &format!("operation.{field}"))?;
            document["nodes"][index]["state"] = Value::String(state.to_string());
        }
    }
    if let Some(weights) = object.optional("weights") {
        let weights =
            weights.as_object().ok_or_else(|| Error::argument("operation.weights: expected an object id → weight"))?;
        for (id, weight) in weights {
            let index = node_index(&document, id, "operation.weights")?;
            document["nodes"][index]["weight"] = weight.clone();
        }
    }
    // The map must be explicit to be edited.
    let nodes_before = topology.nodes.len() as u32;
    let chains = explicit_map(spec, nodes_before);
    document["strategy"]["map"] = crate::strategy::partitioned::vbucket::chains_value(&chains, &topology.nodes);
    if let Some(strategy) = document["strategy"].as_object_mut() {
        strategy.remove("replicas");
    }
    document["epoch"] = json::u64_value(next_epoch(topology)?);
    document["checksum"] = Value::Null;
    let changed = Topology::from_value(&document)?;

    let longest = chains.iter().map(|chain| chain.len() as u32).max().unwrap_or(1);
    let replicas = match object.optional("replicas") {
        Some(value) => {
            json::u32_in("operation.replicas", value, 0, crate::limits::MAX_REPLICAS).map_err(argument_error)?
        }
        None => longest.saturating_sub(1),
    };
    let limit = match object.optional("max_moves_per_node") {
        Some(value) => json::u32_in("operation.max_moves_per_node", value, 1, u32::MAX).map_err(argument_error)?,
        None => 2,
    };
    let mut zones: Vec<&str> = changed.nodes.iter().filter_map(|node| node.zone.as_deref()).collect();
    zones.sort_unstable();
    zones.dedup();
    let plan_nodes: Vec<PlanNode> = changed
        .nodes
        .iter()
        .map(|node| PlanNode {
            weight: node.weight,
            zone: node.zone.as_deref().and_then(|zone| zones.binary_search(&zone).ok()).map(|i| i as u32),
            serving: node.state == NodeState::Active,
            failed: node.state == NodeState::Failed,
        })
        .collect();
    let plan = planner::plan(&chains, &plan_nodes, replicas, limit)?;

    // Promotions take effect at once; the rest is the forward map.
    let mut map = chains.clone();
    for mv in plan.moves.iter().filter(|mv| mv.promotion && mv.role == Role::Active) {
        let chain = &mut map[mv.vbucket as usize];
        chain.retain(|&node| node != mv.to);
        chain.insert(0, mv.to);
    }
    let mut states = Vec::new();
    for (vbucket, (current, target)) in map.iter().zip(&plan.chains).enumerate() {
        if current[0] != target[0] {
            states.push((vbucket as u32, VbucketState::Migrating));
        }
    }
    let forward = if map == plan.chains { None } else { Some(plan.chains.clone()) };
    let next_spec = VbucketSpec { map: Some(map), forward, states, replicas: 0, ..spec.clone() };
    let next = Topology { strategy: Strategy::Vbucket(next_spec), checksummed: true, ..changed };
    let next = Topology::from_value(&next.to_value())?;

    let id = |index: u32| Value::String(next.nodes[index as usize].id.clone());
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
                "kind": if mv.promotion { "promotion" } else { "copy" },
            })
        })
        .collect();
    let steps: Vec<Value> = plan.steps.iter().map(|range| json!([range.start, range.end])).collect();
    let mut quota = Map::new();
    for (index, node) in next.nodes.iter().enumerate() {
        quota.insert(node.id.clone(), plan.active_quota[index].into());
    }
    let mut before = vec![0u32; next.nodes.len()];
    for chain in &chains {
        before[chain[0] as usize] += 1;
    }
    let lower_bound: u32 = before.iter().zip(&plan.active_quota).map(|(b, q)| b.saturating_sub(*q)).sum();
    let moved_actives = plan.moves.iter().filter(|mv| mv.role == Role::Active).count();
    let mut report = Map::new();
    report.insert("moves".into(), Value::Array(moves));
    report.insert("steps".into(), Value::Array(steps));
    report.insert("quota".into(), Value::Object(quota));
    report.insert("moved_actives".into(), moved_actives.into());
    report.insert("lower_bound".into(), lower_bound.into());
    Ok((next, report))
}

/// `complete_moves`: see the module docs.
pub(crate) fn complete_moves(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "vbuckets"])?;
    let spec = vbucket_spec(topology, "complete_moves")?;
    let Some(forward) = &spec.forward else {
        return Err(Error::argument("complete_moves: no rebalance is running (the dictionary has no forward_map)"));
    };
    let mut map = explicit_map(spec, topology.nodes.len() as u32);
    let listed: Vec<u32> = match object.optional("vbuckets") {
        None => (0..spec.vbuckets).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_u64().filter(|&v| v < u64::from(spec.vbuckets)).map(|v| v as u32).ok_or_else(|| {
                    Error::argument(format!(
                        "operation.vbuckets[{i}]: expected a vbucket number in 0..{}",
                        spec.vbuckets
                    ))
                })
            })
            .collect::<Result<_>>()?,
        Some(_) => return Err(Error::argument("operation.vbuckets: expected an array of vbucket numbers")),
    };
    let mut completed = Vec::new();
    for &vbucket in &listed {
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
        .filter(|(v, _)| !listed.contains(v) && map[*v as usize] != forward[*v as usize])
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
    let next_spec = VbucketSpec {
        map: Some(map),
        forward: if done { None } else { Some(forward.clone()) },
        states,
        replicas: 0,
        ..spec.clone()
    };
    let next = Topology {
        epoch: next_epoch(topology)?,
        nodes,
        strategy: Strategy::Vbucket(next_spec),
        checksummed: true,
        ..topology.clone()
    };
    let next = Topology::from_value(&next.to_value())?;
    let mut report = Map::new();
    report.insert("completed".into(), Value::Array(completed.into_iter().map(Value::from).collect()));
    report.insert("remaining".into(), remaining.into());
    report.insert("removed_nodes".into(), Value::Array(removed));
    Ok((next, report))
}

/// `vbucket_double`: see the module docs.
pub(crate) fn vbucket_double(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    operation_object(operation, &["op"])?;
    let spec = vbucket_spec(topology, "vbucket_double")?;
    let vbuckets = spec.vbuckets;
    let doubled = vbuckets.checked_mul(2).filter(|&v| v <= crate::limits::MAX_VBUCKETS).ok_or_else(|| {
        Error::limit(format!(
            "vbucket_double: {vbuckets} vbuckets doubled exceeds the limit of {}",
            crate::limits::MAX_VBUCKETS
        ))
    })?;
    let twice = |chains: &Vec<Vec<u32>>| -> Vec<Vec<u32>> { chains.iter().chain(chains.iter()).cloned().collect() };
    let map = explicit_map(spec, topology.nodes.len() as u32);
    let mut states = spec.states.clone();
    states.extend(spec.states.iter().map(|&(v, state)| (v + vbuckets, state)));
    let next_spec = VbucketSpec {
        vbuckets: doubled,
        map: Some(twice(&map)),
        forward: spec.forward.as_ref().map(twice),
        states,
        replicas: 0,
        ..spec.clone()
    };
    let next = Topology {
        epoch: next_epoch(topology)?,
        strategy: Strategy::Vbucket(next_spec),
        checksummed: true,
        ..topology.clone()
    };
    let next = Topology::from_value(&next.to_value())?;
    let mut report = Map::new();
    report.insert("vbuckets".into(), doubled.into());
    Ok((next, report))
}

/// `vbucket_halve`: see the module docs.
pub(crate) fn vbucket_halve(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    operation_object(operation, &["op"])?;
    let spec = vbucket_spec(topology, "vbucket_halve")?;
    if spec.vbuckets % 2 != 0 {
        return Err(Error::argument(format!("vbucket_halve: {} vbuckets cannot be halved", spec.vbuckets)));
    }
    let half = spec.vbuckets / 2;
    let map = explicit_map(spec, topology.nodes.len() as u32);
    let table = VbucketTable::from_chains(&map);
    let state = |v: u32| match spec.states.binary_search_by_key(&v, |entry| entry.0) {
        Ok(index) => spec.states[index].1,
        Err(_) => VbucketState::Active,
    };
    for v in 0..half {
        let same_forward = spec.forward.as_ref().is_none_or(|f| f[v as usize] == f[(v + half) as usize]);
        if table.chain(v) != table.chain(v + half) || !same_forward || state(v) != state(v + half) {
            return Err(Error::argument(format!(
                "vbucket_halve: vbuckets {v} and {} do not sit on the same nodes; move them together first",
                v + half
            )));
        }
    }
    let overrides = spec.overrides.iter().map(|(key, v)| (key.clone(), v % half)).collect();
    let next_spec = VbucketSpec {
        vbuckets: half,
        map: Some(map[..half as usize].to_vec()),
        forward: spec.forward.as_ref().map(|f| f[..half as usize].to_vec()),
        states: spec.states.iter().copied().filter(|(v, _)| *v < half).collect(),
        overrides,
        replicas: 0,
    };
    let next = Topology {
        epoch: next_epoch(topology)?,
        strategy: Strategy::Vbucket(next_spec),
        checksummed: true,
        ..topology.clone()
    };
    let next = Topology::from_value(&next.to_value())?;
    let mut report = Map::new();
    report.insert("vbuckets".into(), half.into());
    Ok((next, report))
}

// ---------------------------------------------------------------------------------
// Binary encoding
// ---------------------------------------------------------------------------------

const MAGIC: &[u8; 4] = b"SRVB";
const VERSION: u8 = 1;
const FLAG_FORWARD: u8 = 1;
const FLAG_WIDE: u8 = 2;
const FLAG_DERIVED: u8 = 4;
const ABSENT: u16 = 0xFFFF;

/// Encodes a vbucket dictionary in the compact binary form of `docs/dictionary-format.md`.
///
/// # Errors
/// `invalid_argument` for a topology whose strategy is not `vbucket`, or whose node ids,
/// addresses or zones exceed 65,534 bytes.
pub fn encode(topology: &Topology) -> Result<Vec<u8>> {
    let spec = vbucket_spec(topology, "encode")?;
    let wide = topology.nodes.len() > 256;
    let mut flags = 0u8;
    if spec.forward.is_some() {
        flags |= FLAG_FORWARD;
    }
    if wide {
        flags |= FLAG_WIDE;
    }
    if spec.map.is_none() {
        flags |= FLAG_DERIVED;
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(flags);
    out.extend_from_slice(&topology.epoch.to_le_bytes());
    match topology.hashing.function {
        HashFunction::SipHash24 { seed } => {
            out.push(0);
            out.extend_from_slice(&seed);
        }
        HashFunction::Crc32 => {
            out.push(1);
            out.extend_from_slice(&[0; 16]);
        }
    }
    out.push(match topology.hashing.hash_tag {
        HashTag::None => 0,
        HashTag::Redis => 1,
    });
    out.push(match topology.hashing.integers {
        IntegerKeys::LeBytes => 0,
        IntegerKeys::Identity => 1,
    });
    out.extend_from_slice(&(topology.nodes.len() as u32).to_le_bytes());
    for node in &topology.nodes {
        put_text(&mut out, Some(&node.id))?;
        put_text(&mut out, node.address.as_deref())?;
        put_text(&mut out, node.zone.as_deref())?;
        out.extend_from_slice(&node.weight.to_le_bytes());
        out.push(match node.state {
            NodeState::Active => 0,
            NodeState::Draining => 1,
            NodeState::Failed => 2,
        });
    }
    out.extend_from_slice(&spec.vbuckets.to_le_bytes());
    match &spec.map {
        Some(map) => put_chains(&mut out, map, wide),
        None => out.push(spec.replicas as u8),
    }
    if let Some(forward) = &spec.forward {
        put_chains(&mut out, forward, wide);
    }
    out.extend_from_slice(&(spec.states.len() as u32).to_le_bytes());
    for (vbucket, state) in &spec.states {
        out.extend_from_slice(&vbucket.to_le_bytes());
        out.push(match state {
            VbucketState::Active => 0,
            VbucketState::Migrating => 1,
            VbucketState::ReadOnly => 2,
        });
    }
    // Rare sections travel as canonical JSON text.
    let document = topology.to_value();
    let mut extras = Map::new();
    for (field, value) in [
        ("overrides", &document["strategy"]["overrides"]),
        ("placement", &document["placement"]),
        ("hot_keys", &document["hot_keys"]),
    ] {
        if !value.is_null() {
            extras.insert(field.into(), value.clone());
        }
    }
    let extras = if extras.is_empty() { String::new() } else { Value::Object(extras).to_string() };
    out.extend_from_slice(&(extras.len() as u32).to_le_bytes());
    out.extend_from_slice(extras.as_bytes());
    out.push(u8::from(topology.checksummed));
    let checksum = crate::hash::xxh64(&out, 0);
    out.extend_from_slice(&checksum.to_le_bytes());
    Ok(out)
}

fn put_text(out: &mut Vec<u8>, text: Option<&str>) -> Result<()> {
    match text {
        None => out.extend_from_slice(&ABSENT.to_le_bytes()),
        Some(text) => {
            let length = u16::try_from(text.len())
                .ok()
                .filter(|&l| l != ABSENT)
                .ok_or_else(|| Error::argument("encode: a node id, address or zone is longer than 65,534 bytes"))?;
            out.extend_from_slice(&length.to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
    }
    Ok(())
}

fn put_chains(out: &mut Vec<u8>, chains: &[Vec<u32>], wide: bool) {
    out.extend(chains.iter().map(|chain| chain.len() as u8));
    for &node in chains.iter().flatten() {
        if wide {
            out.extend_from_slice(&(node as u16).to_le_bytes());
        } else {
            out.push(node as u8);
        }
    }
}

/// A cursor over the encoded bytes; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(count).filter(|&end| end <= self.bytes.len()).ok_or_else(truncated)?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }
    fn text(&mut self) -> Result<Option<String>> {
        let length = self.u16()?;
        if length == ABSENT {
            return Ok(None);
        }
        let bytes = self.take(usize::from(length))?;
        core::str::from_utf8(bytes).map(|text| Some(text.to_string())).map_err(|_| invalid("a text field is not UTF-8"))
    }
    fn chains(&mut self, vbuckets: u32, nodes: &[Value], wide: bool) -> Result<Vec<Value>> {
        let lengths = self.take(vbuckets as usize)?.to_vec();
        let mut chains = Vec::with_capacity(vbuckets as usize);
        for length in lengths {
            let mut chain = Vec::with_capacity(usize::from(length));
            for _ in 0..length {
                let index = if wide { usize::from(self.u16()?) } else { usize::from(self.u8()?) };
                let id = nodes.get(index).ok_or_else(|| invalid("a chain names a node index past the node list"))?;
                chain.push(id.clone());
            }
            chains.push(Value::Array(chain));
        }
        Ok(chains)
    }
}

fn truncated() -> Error {
    Error::topology("binary dictionary: truncated")
}

fn invalid(what: &str) -> Error {
    Error::topology(format!("binary dictionary: {what}"))
}

/// Decodes the binary form back into a topology, validated exactly as a JSON document.
///
/// # Errors
/// `invalid_topology` for bad magic, an unknown version, a checksum mismatch, truncated
/// or trailing bytes, or content that is not a valid topology; `limit_exceeded` past the
/// documented limits.
pub fn decode(bytes: &[u8]) -> Result<Topology> {
    if bytes.len() as u64 > crate::limits::MAX_DOCUMENT_BYTES {
        return Err(Error::limit("binary dictionary: larger than the document limit"));
    }
    if bytes.len() < 8 {
        return Err(truncated());
    }
    let (body, trailer) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes([
        trailer[0], trailer[1], trailer[2], trailer[3], trailer[4], trailer[5], trailer[6], trailer[7],
    ]);
    if crate::hash::xxh64(body, 0) != stored {
        return Err(invalid("checksum mismatch: the bytes were truncated or altered"));
    }
    let mut reader = Reader { bytes: body, at: 0 };
    if reader.take(4)? != MAGIC {
        return Err(invalid("not a shardroute dictionary (bad magic)"));
    }
    let version = reader.u8()?;
    if version != VERSION {
        return Err(invalid(&format!("unsupported version {version}; this release reads {VERSION}")));
    }
    let flags = reader.u8()?;
    let epoch = reader.u64()?;
    let function = reader.u8()?;
    let seed = reader.take(16)?;
    let mut hashing = Map::new();
    match function {
        0 => {
            hashing.insert("function".into(), "siphash-2-4".into());
            hashing.insert("seed".into(), seed.iter().map(|b| format!("{b:02x}")).collect::<String>().into());
        }
        1 => {
            hashing.insert("function".into(), "crc32".into());
        }
        other => return Err(invalid(&format!("unknown hash function {other}"))),
    }
    hashing.insert("hash_tag".into(), if reader.u8()? == 1 { "redis" } else { "none" }.into());
    hashing.insert("integers".into(), if reader.u8()? == 1 { "identity" } else { "le_bytes" }.into());
    let node_count = reader.u32()?;
    if node_count > crate::limits::MAX_NODES {
        return Err(Error::limit("binary dictionary: too many nodes"));
    }
    let mut nodes = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..node_count {
        let id = reader.text()?.ok_or_else(|| invalid("a node without an id"))?;
        let mut node = Map::new();
        node.insert("id".into(), Value::String(id.clone()));
        if let Some(address) = reader.text()? {
            node.insert("address".into(), address.into());
        }
        if let Some(zone) = reader.text()? {
            node.insert("zone".into(), zone.into());
        }
        let weight = f64::from_le_bytes(reader.take(8)?.try_into().map_err(|_| truncated())?);
        node.insert("weight".into(), serde_json::Number::from_f64(weight).map_or(Value::Null, Value::Number));
        match reader.u8()? {
            0 => {}
            1 => {
                node.insert("state".into(), "draining".into());
            }
            2 => {
                node.insert("state".into(), "failed".into());
            }
            other => return Err(invalid(&format!("unknown node state {other}"))),
        }
        ids.push(Value::String(id));
        nodes.push(Value::Object(node));
    }
    let vbuckets = reader.u32()?;
    if vbuckets > crate::limits::MAX_VBUCKETS {
        return Err(Error::limit("binary dictionary: too many vbuckets"));
    }
    let wide = flags & FLAG_WIDE != 0;
    let mut strategy = Map::new();
    strategy.insert("type".into(), "vbucket".into());
    strategy.insert("vbuckets".into(), vbuckets.into());
    if flags & FLAG_DERIVED != 0 {
        strategy.insert("replicas".into(), reader.u8()?.into());
    } else {
        strategy.insert("map".into(), Value::Array(reader.chains(vbuckets, &ids, wide)?));
    }
    if flags & FLAG_FORWARD != 0 {
        strategy.insert("forward_map".into(), Value::Array(reader.chains(vbuckets, &ids, wide)?));
    }
    let state_count = reader.u32()?;
    if state_count > vbuckets {
        return Err(invalid("more vbucket states than vbuckets"));
    }
    let mut states = Map::new();
    for _ in 0..state_count {
        let vbucket = reader.u32()?;
        let state = match reader.u8()? {
            0 => "active",
            1 => "migrating",
            2 => "read_only",
            other => return Err(invalid(&format!("unknown vbucket state {other}"))),
        };
        states.insert(format!("{vbucket}"), state.into());
    }
    if !states.is_empty() {
        strategy.insert("states".into(), Value::Object(states));
    }
    let extras_length = reader.u32()? as usize;
    let extras_text = core::str::from_utf8(reader.take(extras_length)?).map_err(|_| invalid("extras are not UTF-8"))?;
    let mut document = Map::new();
    if !extras_text.is_empty() {
        let extras: Value = serde_json::from_str(extras_text).map_err(|_| invalid("extras are not JSON"))?;
        if let Some(overrides) = extras.get("overrides") {
            strategy.insert("overrides".into(), overrides.clone());
        }
        for field in ["placement", "hot_keys"] {
            if let Some(value) = extras.get(field) {
                document.insert(field.into(), value.clone());
            }
        }
    }
    let checksummed = reader.u8()? == 1;
    if reader.at != body.len() {
        return Err(invalid("trailing bytes after the dictionary"));
    }
    document.insert("format".into(), crate::topology::FORMAT.into());
    document.insert("epoch".into(), json::u64_value(epoch));
    document.insert("hashing".into(), Value::Object(hashing));
    document.insert("nodes".into(), Value::Array(nodes));
    document.insert("strategy".into(), Value::Object(strategy));
    let topology = Topology::from_value(&Value::Object(document))?;
    Ok(Topology { checksummed, ..topology })
}
