//! Key movement between two topologies: for each key, its shard and node before and
//! after, and a summary (how many keys move, and between which nodes). This is the
//! "which users must move from server 2 to server 7" question of a rebalance, answered by
//! the same routing code that serves traffic, for any two strategies.
//!
//! **Cost.** Two lookups per key; memory proportional to the keys and the node pairs
//! that exchange keys.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::key::Key;
use crate::router::Router;

/// Where one key was and is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyMove {
    /// The shard under the old topology.
    pub old_shard: u32,
    /// The shard under the new topology.
    pub new_shard: u32,
    /// The owning node's id under the old topology.
    pub old_node: String,
    /// The owning node's id under the new topology.
    pub new_node: String,
}

impl KeyMove {
    /// Whether the key changes node (shard numbers may differ between strategies, node
    /// ids are what data moves between).
    pub fn moved(&self) -> bool {
        self.old_node != self.new_node
    }
}

/// The movement of a set of keys between two topologies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// One entry per key, in input order.
    pub keys: Vec<KeyMove>,
    /// How many keys change node.
    pub moved: u64,
    /// `(from, to, keys)` for every pair of nodes that exchange keys, sorted by node ids.
    pub flows: Vec<(String, String, u64)>,
}

impl Diff {
    /// As JSON: `{"keys": [{"old_shard", "new_shard", "old_node", "new_node", "moved"}],
    /// "total", "moved", "moved_ppm", "flows": [{"from", "to", "keys"}]}`. `moved_ppm`
    /// is moved keys per million, an integer (no float in the contract).
    pub fn to_value(&self) -> Value {
        let keys: Vec<Value> = self
            .keys
            .iter()
            .map(|k| {
                json!({"old_shard": k.old_shard, "new_shard": k.new_shard, "old_node": k.old_node,
                    "new_node": k.new_node, "moved": k.moved()})
            })
            .collect();
        let flows: Vec<Value> =
            self.flows.iter().map(|(from, to, count)| json!({"from": from, "to": to, "keys": count})).collect();
        let total = self.keys.len() as u64;
        let ppm = (self.moved * 1_000_000).checked_div(total).unwrap_or(0);
        let mut map = Map::new();
        map.insert("keys".into(), Value::Array(keys));
        map.insert("total".into(), total.into());
        map.insert("moved".into(), self.moved.into());
        map.insert("moved_ppm".into(), ppm.into());
        map.insert("flows".into(), Value::Array(flows));
        Value::Object(map)
    }
}

/// Routes every key under `old` and `new` and reports what moves.
///
/// # Errors
/// The first routing error of either topology (an id strategy given a text key, ...).
///
/// # Example
/// ```
/// use shardroute::{diff::diff, Router};
/// let doc = |n: usize| {
///     let nodes: Vec<String> = (0..n).map(|i| format!(r#"{{"id": "s{i}"}}"#)).collect();
///     format!(r#"{{"format": "shardroute/1", "epoch": {n}, "nodes": [{}], "strategy": {{"type": "modulo"}}, "hashing": {{"integers": "identity"}}}}"#, nodes.join(","))
/// };
/// let (five, ten) = (Router::from_json(&doc(5)).unwrap(), Router::from_json(&doc(10)).unwrap());
/// let users: Vec<u64> = (0..100).collect();
/// let report = diff(&five, &ten, users.iter().map(|&id| id.into())).unwrap();
/// assert_eq!(report.moved, 50); // user_id % 5 vs % 10: ids with id % 10 >= 5 move
/// assert_eq!(report.flows[0], ("s0".to_string(), "s5".to_string(), 10));
/// ```
pub fn diff<'k>(old: &Router, new: &Router, keys: impl IntoIterator<Item = Key<'k>>) -> Result<Diff> {
    let mut entries = Vec::new();
    let mut flows: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut moved = 0u64;
    for key in keys {
        let entry = KeyMove {
            old_shard: old.route(key)?,
            new_shard: new.route(key)?,
            old_node: String::from(old.node(key)?),
            new_node: String::from(new.node(key)?),
        };
        if entry.moved() {
            moved += 1;
            *flows.entry((entry.old_node.clone(), entry.new_node.clone())).or_default() += 1;
        }
        entries.push(entry);
    }
    Ok(Diff { keys: entries, moved, flows: flows.into_iter().map(|((from, to), count)| (from, to, count)).collect() })
}
