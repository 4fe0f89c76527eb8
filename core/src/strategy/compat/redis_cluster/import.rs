//! Reading `CLUSTER SLOTS` and `CLUSTER SHARDS` replies (as JSON: arrays for RESP
//! arrays, objects or flat `[name, value, ...]` arrays for RESP3 maps) into the nodes and
//! slot ranges they describe; the `import_redis_cluster_slots` and
//! `import_redis_cluster_shards` operations ([`crate::ops`]) turn them into a
//! `redis_cluster` topology. Errors are `invalid_argument` naming the reply's element,
//! `limit_exceeded` for a count past a limit.
//!
//! **Bounded before buffered.** A reply comes from the network, so every count is checked
//! before the work it causes, and no step is quadratic: slot pairs are claimed in a
//! 16,384-bit map as they are read (a pair that overlaps an earlier one, or a reply with
//! more pairs than slots, is refused before anything is built for it); a shard's chain
//! of nodes is stored once and its ranges name it by index; node ids are found in a
//! `BTreeMap`, and the node count is checked against
//! [`MAX_NODES`](crate::limits::MAX_NODES) before each node is added. Each id follows
//! the document's rule for node ids (non-empty, at most
//! [`MAX_NODE_ID_BYTES`](crate::limits::MAX_NODE_ID_BYTES) bytes): a reply cannot install
//! a node that the router's own `to_json()` could not load back. Memory is linear in the
//! reply: at most 16,384 ranges, one chain per shard (or `CLUSTER SLOTS` entry).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde_json::Value;

use super::SLOTS;
use crate::error::{Error, ErrorKind, Result};
use crate::json;
use crate::limits;

/// A node read from a reply: id, `host:port`, whether the reply marks it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyNode {
    /// The cluster's node id (40 hex digits on a real server).
    pub id: String,
    /// `host:port`, or `[host]:port` for an IPv6 host.
    pub address: String,
    /// Whether the reply says the node has failed (`health: failed`).
    pub failed: bool,
}

/// What a `CLUSTER SLOTS` or `CLUSTER SHARDS` reply says: the nodes in order of first
/// appearance, each chain of nodes once, and the slot ranges in reply order, each naming
/// its chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisClusterImport {
    /// The nodes, ids unique.
    pub nodes: Vec<ReplyNode>,
    /// The chains of the ranges: indices into `nodes`, the master first, then its
    /// replicas in reply order. One per `CLUSTER SHARDS` shard with slots, or per
    /// `CLUSTER SLOTS` entry.
    pub chains: Vec<Vec<u32>>,
    /// `(first slot, last slot, index into chains)`, in reply order; no two overlap, so
    /// there are at most 16,384.
    pub ranges: Vec<(u32, u32, u32)>,
}

impl RedisClusterImport {
    /// The node ids of a range's chain (master first).
    pub fn chain_ids(&self, chain: u32) -> impl Iterator<Item = &str> + '_ {
        self.chains
            .get(chain as usize)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|&node| self.nodes.get(node as usize).map(|node| node.id.as_str()))
    }
}

/// The nodes of a reply as they are read: ids found in a map, the count bounded.
struct Found {
    nodes: Vec<ReplyNode>,
    index: BTreeMap<String, u32>,
}

impl Found {
    fn new() -> Found {
        Found { nodes: Vec::new(), index: BTreeMap::new() }
    }

    fn get(&self, id: &str) -> Option<u32> {
        self.index.get(id).copied()
    }

    /// Adds a node not yet known (the caller looked it up), refusing the one past
    /// [`limits::MAX_NODES`] before it is stored.
    fn add(&mut self, path: &str, node: ReplyNode) -> Result<u32> {
        if self.nodes.len() >= limits::MAX_NODES as usize {
            return Err(Error::limit(format!(
                "{path}: more than {} nodes in the reply; the limit is {}",
                limits::MAX_NODES,
                limits::MAX_NODES
            )));
        }
        let index = self.nodes.len() as u32;
        self.index.insert(node.id.clone(), index);
        self.nodes.push(node);
        Ok(index)
    }
}

/// The slots the reply's ranges have claimed so far: one bit per slot.
struct Claimed {
    bits: Vec<u64>,
    ranges: u32,
}

impl Claimed {
    fn new() -> Claimed {
        Claimed { bits: vec![0u64; (SLOTS / 64) as usize], ranges: 0 }
    }

    /// Claims `start..=end` for the range at `path`: `invalid_argument` when `end` is
    /// below `start` or a slot was claimed before (so the ranges total at most 16,384
    /// slots, and the work is one bit per slot, however the reply repeats itself).
    fn claim(&mut self, path: &str, start: u32, end: u32) -> Result<()> {
        if end < start {
            return Err(bad(path, format_args!("slot range {start}..={end} ends before it starts")));
        }
        for slot in start..=end {
            let (word, bit) = ((slot / 64) as usize, 1u64 << (slot % 64));
            if self.bits[word] & bit != 0 {
                return Err(bad(
                    path,
                    format_args!("slots {start}..={end} overlap an earlier range (slot {slot} is listed twice)"),
                ));
            }
            self.bits[word] |= bit;
        }
        self.ranges += 1;
        Ok(())
    }
}

/// Refuses `count` slot ranges (or `CLUSTER SLOTS` entries) past one per slot, before
/// any is read.
fn check_range_count(path: &str, count: usize, already: u32) -> Result<()> {
    if count as u64 + u64::from(already) > u64::from(SLOTS) {
        return Err(Error::limit(format!(
            "{path}: {count} slot ranges, {already} before them; a reply has at most {SLOTS} (one per slot)"
        )));
    }
    Ok(())
}

/// A node id at `path`, by the document's rule for ids ([`json::id`]): `invalid_argument`
/// for an empty one, `limit_exceeded` past [`limits::MAX_NODE_ID_BYTES`].
fn reply_id<'v>(path: &str, value: &'v Value) -> Result<&'v str> {
    json::id(path, value).map_err(|err| match err.kind() {
        ErrorKind::LimitExceeded => err,
        _ => Error::argument(err.message()),
    })
}

fn address(host: &str, port: u64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn bad(path: &str, message: impl core::fmt::Display) -> Error {
    Error::argument(format!("{path}: {message}"))
}

fn reply_u64(path: &str, value: &Value) -> Result<u64> {
    value
        .as_u64()
        .ok_or_else(|| bad(path, format_args!("expected a non-negative integer, found {}", json::describe(value))))
}

fn reply_str<'v>(path: &str, value: &'v Value) -> Result<&'v str> {
    value.as_str().ok_or_else(|| bad(path, format_args!("expected a string, found {}", json::type_name(value))))
}

fn reply_array<'v>(path: &str, value: &'v Value) -> Result<&'v Vec<Value>> {
    value.as_array().ok_or_else(|| bad(path, format_args!("expected an array, found {}", json::type_name(value))))
}

fn reply_slot(path: &str, value: &Value) -> Result<u32> {
    match value.as_u64() {
        Some(slot) if slot < u64::from(SLOTS) => Ok(slot as u32),
        _ => Err(bad(path, format_args!("expected a slot in 0..=16383, found {}", json::describe(value)))),
    }
}

/// A RESP3 map as a JSON object, or its RESP2 form: a flat `[key, value, ...]` array.
fn reply_map<'v>(path: &str, value: &'v Value) -> Result<Vec<(&'v str, &'v Value)>> {
    match value {
        Value::Object(map) => Ok(map.iter().map(|(key, value)| (key.as_str(), value)).collect()),
        Value::Array(items) if items.len() % 2 == 0 => items
            .chunks_exact(2)
            .enumerate()
            .map(|(i, pair)| Ok((reply_str(&format!("{path}[{}]", 2 * i), &pair[0])?, &pair[1])))
            .collect(),
        other => Err(bad(
            path,
            format_args!("expected an object or a flat [name, value, ...] array, found {}", json::type_name(other)),
        )),
    }
}

fn field<'v>(map: &[(&str, &'v Value)], name: &str) -> Option<&'v Value> {
    map.iter().find(|(key, _)| *key == name).map(|(_, value)| *value)
}

/// Reads a `CLUSTER SLOTS` reply, written as JSON arrays:
/// `[[start, end, [host, port, id, ...], [replica host, port, id, ...], ...], ...]`.
///
/// Each entry becomes one slot range; its nodes are the master, then the replicas in
/// reply order. Node ids are the reply's node ids (third element; Redis 4.0+), the
/// address `host:port` (`[host]:port` when the host holds a `:`); elements after the id
/// (Redis 7's metadata) are ignored. A node listed in several entries is one node (its
/// first address stands).
///
/// # Errors
/// `invalid_argument` for a malformed reply, ranges that overlap, or an empty node id;
/// `limit_exceeded` for more than 16,384 entries, more than
/// [`MAX_NODES`](crate::limits::MAX_NODES) nodes, or a node id longer than
/// [`MAX_NODE_ID_BYTES`](crate::limits::MAX_NODE_ID_BYTES).
pub fn read_slots(reply: &Value) -> Result<RedisClusterImport> {
    let reply = reply_array("operation.reply", reply)?;
    check_range_count("operation.reply", reply.len(), 0)?;
    let mut found = Found::new();
    let mut claimed = Claimed::new();
    let mut chains: Vec<Vec<u32>> = Vec::with_capacity(reply.len());
    let mut ranges: Vec<(u32, u32, u32)> = Vec::with_capacity(reply.len());
    for (i, entry) in reply.iter().enumerate() {
        let path = format!("operation.reply[{i}]");
        let items = reply_array(&path, entry)?;
        if items.len() < 3 {
            return Err(bad(&path, "expected [start, end, master, replicas...]"));
        }
        let start = reply_slot(&format!("{path}[0]"), &items[0])?;
        let end = reply_slot(&format!("{path}[1]"), &items[1])?;
        claimed.claim(&path, start, end)?;
        let mut chain = Vec::with_capacity(items.len() - 2);
        for (j, node) in items[2..].iter().enumerate() {
            let node_path = format!("{path}[{}]", j + 2);
            let fields = reply_array(&node_path, node)?;
            if fields.len() < 3 {
                return Err(bad(&node_path, "expected [host, port, node id, ...] (Redis 4.0 or later)"));
            }
            let host = reply_str(&format!("{node_path}[0]"), &fields[0])?;
            let port = reply_u64(&format!("{node_path}[1]"), &fields[1])?;
            let id = reply_id(&format!("{node_path}[2]"), &fields[2])?;
            let index = match found.get(id) {
                Some(index) => index,
                None => {
                    found.add(&node_path, ReplyNode { id: id.into(), address: address(host, port), failed: false })?
                }
            };
            chain.push(index);
        }
        ranges.push((start, end, chains.len() as u32));
        chains.push(chain);
    }
    Ok(RedisClusterImport { nodes: found.nodes, chains, ranges })
}

/// Reads a `CLUSTER SHARDS` reply (Redis 7.0+). Each shard is an
/// object `{"slots": [start, end, ...], "nodes": [{"id", "ip", "endpoint", "port",
/// "role", "health", ...}]}` or the RESP2 flat `["slots", [...], "nodes", [...]]` form
/// (nodes likewise); `slots` may also be a list of `[start, end]` pairs.
///
/// Each `[start, end]` pair of a shard becomes one slot range served by the shard's
/// `master`, then its replicas in reply order (one chain per shard, which its ranges
/// share). A node's address is its `endpoint` (or `ip` when the endpoint is missing,
/// empty or `?`) and `port` (or `tls-port`); a node whose `health` is `failed` gets
/// `"state": "failed"`. Shards without slots still add their nodes.
///
/// # Errors
/// `invalid_argument` for a malformed reply, a node listed twice, slot pairs that
/// overlap, or an empty node id; `limit_exceeded` for more than 16,384 slot pairs, more
/// than [`MAX_NODES`](crate::limits::MAX_NODES) nodes, or a node id longer than
/// [`MAX_NODE_ID_BYTES`](crate::limits::MAX_NODE_ID_BYTES).
pub fn read_shards(reply: &Value) -> Result<RedisClusterImport> {
    let reply = reply_array("operation.reply", reply)?;
    let mut found = Found::new();
    let mut claimed = Claimed::new();
    let mut chains: Vec<Vec<u32>> = Vec::new();
    let mut ranges: Vec<(u32, u32, u32)> = Vec::new();
    for (i, shard) in reply.iter().enumerate() {
        let path = format!("operation.reply[{i}]");
        let map = reply_map(&path, shard)?;
        let slots = field(&map, "slots").ok_or_else(|| bad(&path, "missing \"slots\""))?;
        let nodes = field(&map, "nodes").ok_or_else(|| bad(&path, "missing \"nodes\""))?;
        let slots_path = format!("{path}.slots");
        let slot_items = reply_array(&slots_path, slots)?;
        let mut pairs = Vec::new();
        if slot_items.iter().all(Value::is_array) {
            check_range_count(&slots_path, slot_items.len(), claimed.ranges)?;
            for (k, pair) in slot_items.iter().enumerate() {
                let pair_path = format!("{slots_path}[{k}]");
                let pair = reply_array(&pair_path, pair)?;
                if pair.len() != 2 {
                    return Err(bad(&pair_path, "expected [start, end]"));
                }
                let start = reply_slot(&format!("{pair_path}[0]"), &pair[0])?;
                let end = reply_slot(&format!("{pair_path}[1]"), &pair[1])?;
                claimed.claim(&pair_path, start, end)?;
                pairs.push((start, end));
            }
        } else {
            if slot_items.len() % 2 != 0 {
                return Err(bad(&slots_path, "expected start, end pairs"));
            }
            check_range_count(&slots_path, slot_items.len() / 2, claimed.ranges)?;
            for k in (0..slot_items.len()).step_by(2) {
                let start = reply_slot(&format!("{slots_path}[{k}]"), &slot_items[k])?;
                let end = reply_slot(&format!("{slots_path}[{}]", k + 1), &slot_items[k + 1])?;
                claimed.claim(&format!("{slots_path}[{k}]"), start, end)?;
                pairs.push((start, end));
            }
        }
        let nodes_path = format!("{path}.nodes");
        let mut master: Option<u32> = None;
        let mut replicas: Vec<u32> = Vec::new();
        for (j, node) in reply_array(&nodes_path, nodes)?.iter().enumerate() {
            let node_path = format!("{nodes_path}[{j}]");
            let fields = reply_map(&node_path, node)?;
            let get =
                |name: &str| field(&fields, name).ok_or_else(|| bad(&node_path, format_args!("missing \"{name}\"")));
            let id_path = format!("{node_path}.id");
            let id = reply_id(&id_path, get("id")?)?;
            let endpoint = match field(&fields, "endpoint") {
                Some(value) => reply_str(&format!("{node_path}.endpoint"), value)?,
                None => "",
            };
            let host = if endpoint.is_empty() || endpoint == "?" {
                reply_str(&format!("{node_path}.ip"), get("ip")?)?
            } else {
                endpoint
            };
            let port = match field(&fields, "port") {
                Some(port) => reply_u64(&format!("{node_path}.port"), port)?,
                None => reply_u64(&format!("{node_path}.tls-port"), get("tls-port")?)?,
            };
            let role = reply_str(&format!("{node_path}.role"), get("role")?)?;
            let failed = match field(&fields, "health") {
                Some(health) => reply_str(&format!("{node_path}.health"), health)? == "failed",
                None => false,
            };
            if found.get(id).is_some() {
                return Err(bad(&id_path, format_args!("node {id:?} is listed twice")));
            }
            let index = found.add(&node_path, ReplyNode { id: id.into(), address: address(host, port), failed })?;
            match role {
                "master" if master.is_none() => master = Some(index),
                "master" => return Err(bad(&node_path, "a shard has one master")),
                "replica" | "slave" => replicas.push(index),
                other => return Err(bad(&format!("{node_path}.role"), format_args!("unknown role {other:?}"))),
            }
        }
        if pairs.is_empty() {
            continue;
        }
        let Some(master) = master else {
            return Err(bad(&nodes_path, "a shard with slots needs a master"));
        };
        let mut chain = Vec::with_capacity(replicas.len() + 1);
        chain.push(master);
        chain.extend(replicas);
        let index = chains.len() as u32;
        chains.push(chain);
        ranges.extend(pairs.into_iter().map(|(start, end)| (start, end, index)));
    }
    Ok(RedisClusterImport { nodes: found.nodes, chains, ranges })
}
