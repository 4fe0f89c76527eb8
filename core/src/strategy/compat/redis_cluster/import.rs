//! Reading `CLUSTER SLOTS` and `CLUSTER SHARDS` replies (as JSON: arrays for RESP
//! arrays, objects or flat `[name, value, ...]` arrays for RESP3 maps) into the nodes and
//! slot ranges they describe; the `import_redis_cluster_slots` and
//! `import_redis_cluster_shards` operations ([`crate::ops`]) turn them into a
//! `redis_cluster` topology. Errors are `invalid_argument` naming the reply's element.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde_json::Value;

use super::SLOTS;
use crate::error::{Error, Result};
use crate::json;

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
/// appearance, and the slot ranges with their chains of node ids (master first), in
/// reply order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisClusterImport {
    /// The nodes.
    pub nodes: Vec<ReplyNode>,
    /// `(first slot, last slot, [master id, replica ids...])`.
    pub ranges: Vec<(u32, u32, Vec<String>)>,
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
/// (Redis 7's metadata) are ignored.
///
/// # Errors
/// `invalid_argument` for a malformed reply.
pub fn read_slots(reply: &Value) -> Result<RedisClusterImport> {
    let reply = reply_array("operation.reply", reply)?;
    let mut found: Vec<ReplyNode> = Vec::new();
    let mut ranges: Vec<(u32, u32, Vec<String>)> = Vec::with_capacity(reply.len());
    for (i, entry) in reply.iter().enumerate() {
        let path = format!("operation.reply[{i}]");
        let items = reply_array(&path, entry)?;
        if items.len() < 3 {
            return Err(bad(&path, "expected [start, end, master, replicas...]"));
        }
        let start = reply_slot(&format!("{path}[0]"), &items[0])?;
        let end = reply_slot(&format!("{path}[1]"), &items[1])?;
        let mut chain = Vec::with_capacity(items.len() - 2);
        for (j, node) in items[2..].iter().enumerate() {
            let node_path = format!("{path}[{}]", j + 2);
            let fields = reply_array(&node_path, node)?;
            if fields.len() < 3 {
                return Err(bad(&node_path, "expected [host, port, node id, ...] (Redis 4.0 or later)"));
            }
            let host = reply_str(&format!("{node_path}[0]"), &fields[0])?;
            let port = reply_u64(&format!("{node_path}[1]"), &fields[1])?;
            let id = reply_str(&format!("{node_path}[2]"), &fields[2])?;
            remember(&mut found, ReplyNode { id: id.into(), address: address(host, port), failed: false });
            chain.push(String::from(id));
        }
        ranges.push((start, end, chain));
    }
    Ok(RedisClusterImport { nodes: found, ranges })
}

/// Reads a `CLUSTER SHARDS` reply (Redis 7.0+). Each shard is an
/// object `{"slots": [start, end, ...], "nodes": [{"id", "ip", "endpoint", "port",
/// "role", "health", ...}]}` or the RESP2 flat `["slots", [...], "nodes", [...]]` form
/// (nodes likewise); `slots` may also be a list of `[start, end]` pairs.
///
/// Each `[start, end]` pair of a shard becomes one slot range served by the shard's
/// `master`, then its replicas in reply order. A node's address is its `endpoint` (or
/// `ip` when the endpoint is missing, empty or `?`) and `port` (or `tls-port`); a node
/// whose `health` is `failed` gets `"state": "failed"`. Shards without slots still add
/// their nodes.
///
/// # Errors
/// `invalid_argument` for a malformed reply.
pub fn read_shards(reply: &Value) -> Result<RedisClusterImport> {
    let reply = reply_array("operation.reply", reply)?;
    let mut found: Vec<ReplyNode> = Vec::new();
    let mut ranges: Vec<(u32, u32, Vec<String>)> = Vec::new();
    for (i, shard) in reply.iter().enumerate() {
        let path = format!("operation.reply[{i}]");
        let map = reply_map(&path, shard)?;
        let slots = field(&map, "slots").ok_or_else(|| bad(&path, "missing \"slots\""))?;
        let nodes = field(&map, "nodes").ok_or_else(|| bad(&path, "missing \"nodes\""))?;
        let slots_path = format!("{path}.slots");
        let slot_items = reply_array(&slots_path, slots)?;
        let mut pairs = Vec::new();
        if slot_items.iter().all(Value::is_array) {
            for (k, pair) in slot_items.iter().enumerate() {
                let pair_path = format!("{slots_path}[{k}]");
                let pair = reply_array(&pair_path, pair)?;
                if pair.len() != 2 {
                    return Err(bad(&pair_path, "expected [start, end]"));
                }
                pairs.push((
                    reply_slot(&format!("{pair_path}[0]"), &pair[0])?,
                    reply_slot(&format!("{pair_path}[1]"), &pair[1])?,
                ));
            }
        } else {
            if slot_items.len() % 2 != 0 {
                return Err(bad(&slots_path, "expected start, end pairs"));
            }
            for k in (0..slot_items.len()).step_by(2) {
                pairs.push((
                    reply_slot(&format!("{slots_path}[{k}]"), &slot_items[k])?,
                    reply_slot(&format!("{slots_path}[{}]", k + 1), &slot_items[k + 1])?,
                ));
            }
        }
        let nodes_path = format!("{path}.nodes");
        let mut master: Option<String> = None;
        let mut replicas: Vec<String> = Vec::new();
        for (j, node) in reply_array(&nodes_path, nodes)?.iter().enumerate() {
            let node_path = format!("{nodes_path}[{j}]");
            let fields = reply_map(&node_path, node)?;
            let get =
                |name: &str| field(&fields, name).ok_or_else(|| bad(&node_path, format_args!("missing \"{name}\"")));
            let id = reply_str(&format!("{node_path}.id"), get("id")?)?;
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
            if found.iter().any(|known| known.id == id) {
                return Err(bad(&format!("{node_path}.id"), format_args!("node {id:?} is listed twice")));
            }
            found.push(ReplyNode { id: id.into(), address: address(host, port), failed });
            match role {
                "master" if master.is_none() => master = Some(id.into()),
                "master" => return Err(bad(&node_path, "a shard has one master")),
                "replica" | "slave" => replicas.push(id.into()),
                other => return Err(bad(&format!("{node_path}.role"), format_args!("unknown role {other:?}"))),
            }
        }
        if pairs.is_empty() {
            continue;
        }
        let Some(master) = master else {
            return Err(bad(&nodes_path, "a shard with slots needs a master"));
        };
        let mut chain = vec![master];
        chain.extend(replicas);
        for (start, end) in pairs {
            ranges.push((start, end, chain.clone()));
        }
    }
    Ok(RedisClusterImport { nodes: found, ranges })
}

fn remember(found: &mut Vec<ReplyNode>, node: ReplyNode) {
    if !found.iter().any(|known| known.id == node.id) {
        found.push(node);
    }
}
