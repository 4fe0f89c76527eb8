//! Key movement between two topologies: how many keys move and between which nodes
//! (the flow matrix), and on request each key's shard and node before and after. This
//! is the "which users must move from server 2 to server 7" question of a rebalance,
//! answered by the same routing code that serves traffic, for any two strategies.
//!
//! **Streaming.** [`Tally`] takes keys one at a time and keeps only counts: the total,
//! the moved keys, and one counter per pair of nodes that exchange keys (at most
//! `min(keys, N_old * N_new)` pairs). So a diff over millions of keys runs in memory
//! bounded by the node pairs, whatever the number of keys. The per-key list is kept
//! only when asked (`per_key`), and then for at most
//! [`MAX_DIFF_LISTED_KEYS`](crate::limits::MAX_DIFF_LISTED_KEYS) keys: past that,
//! `limit_exceeded` (list a larger set in batches).
//!
//! **Cost.** One lookup per key in each router (two with `per_key`: shard and node);
//! memory proportional to the node pairs that exchange keys, plus the listed keys.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::json::Put as _;
use crate::key::Key;
use crate::limits;
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
    /// One entry per key, in input order, when the per-key list was asked for.
    pub keys: Option<Vec<KeyMove>>,
    /// How many keys were given.
    pub total: u64,
    /// How many keys change node.
    pub moved: u64,
    /// `(from, to, keys)` for every pair of nodes that exchange keys, sorted by node ids.
    pub flows: Vec<(String, String, u64)>,
}

impl Diff {
    /// As JSON: `{"total", "moved", "moved_ppm", "flows": [{"from", "to", "keys"}]}`, and
    /// `"keys": [{"old_shard", "new_shard", "old_node", "new_node", "moved"}]` when the
    /// per-key list was asked for. `moved_ppm` is moved keys per million, an integer (no
    /// float in the contract).
    pub fn to_value(&self) -> Value {
        let flows: Vec<Value> =
            self.flows.iter().map(|(from, to, count)| json!({"from": from, "to": to, "keys": count})).collect();
        let ppm = (self.moved * 1_000_000).checked_div(self.total).unwrap_or(0);
        let mut map = Map::new();
        if let Some(keys) = &self.keys {
            let keys = keys
                .iter()
                .map(|k| {
                    json!({"old_shard": k.old_shard, "new_shard": k.new_shard, "old_node": k.old_node,
                        "new_node": k.new_node, "moved": k.moved()})
                })
                .collect();
            map.put("keys", Value::Array(keys));
        }
        map.put("total", self.total.into());
        map.put("moved", self.moved.into());
        map.put("moved_ppm", ppm.into());
        map.put("flows", Value::Array(flows));
        Value::Object(map)
    }
}

/// A diff in progress: keys go in one at a time ([`add`](Tally::add)), counts come out
/// ([`finish`](Tally::finish)). Memory does not grow with the keys unless the per-key
/// list was asked for.
pub struct Tally<'r> {
    old: &'r Router,
    new: &'r Router,
    /// For each node of `old`, the index of the node of `new` with the same id.
    same_node: Vec<Option<u32>>,
    total: u64,
    moved: u64,
    /// Moved keys per (old node index, new node index).
    flows: BTreeMap<(u32, u32), u64>,
    keys: Option<Vec<KeyMove>>,
}

impl<'r> Tally<'r> {
    /// An empty diff between `old` and `new`; `per_key` keeps each key's entry too.
    pub fn new(old: &'r Router, new: &'r Router, per_key: bool) -> Tally<'r> {
        let mut new_ids: Vec<(&str, u32)> =
            new.nodes().iter().enumerate().map(|(index, node)| (node.id.as_str(), index as u32)).collect();
        new_ids.sort_unstable();
        let same_node = old
            .nodes()
            .iter()
            .map(|node| new_ids.binary_search_by(|(id, _)| (*id).cmp(node.id.as_str())).ok().map(|at| new_ids[at].1))
            .collect();
        Tally { old, new, same_node, total: 0, moved: 0, flows: BTreeMap::new(), keys: per_key.then(Vec::new) }
    }

    /// Routes `key` under both routers and counts it.
    ///
    /// # Errors
    /// The routing error of either router (an id strategy given a text key, ...);
    /// `limit_exceeded` for the key past
    /// [`MAX_DIFF_LISTED_KEYS`](limits::MAX_DIFF_LISTED_KEYS) when listing per key.
    pub fn add(&mut self, key: Key<'_>) -> Result<()> {
        let (from, to) = (self.old.node_index(key)?, self.new.node_index(key)?);
        if let Some(keys) = &mut self.keys {
            if keys.len() as u64 >= u64::from(limits::MAX_DIFF_LISTED_KEYS) {
                return Err(Error::limit(format!(
                    "keys: the per-key list holds at most {} keys (limits::MAX_DIFF_LISTED_KEYS); list a larger set \
                     in batches, or ask for the counts only",
                    limits::MAX_DIFF_LISTED_KEYS
                )));
            }
            keys.push(KeyMove {
                old_shard: self.old.route(key)?,
                new_shard: self.new.route(key)?,
                old_node: self.old.nodes()[from as usize].id.clone(),
                new_node: self.new.nodes()[to as usize].id.clone(),
            });
        }
        self.total += 1;
        if self.same_node[from as usize] != Some(to) {
            self.moved += 1;
            *self.flows.entry((from, to)).or_default() += 1;
        }
        Ok(())
    }

    /// The counts, with flows sorted by node ids.
    pub fn finish(self) -> Diff {
        let (old, new) = (self.old.nodes(), self.new.nodes());
        let mut flows: Vec<(String, String, u64)> = self
            .flows
            .into_iter()
            .map(|((from, to), count)| (old[from as usize].id.clone(), new[to as usize].id.clone(), count))
            .collect();
        flows.sort_unstable();
        Diff { keys: self.keys, total: self.total, moved: self.moved, flows }
    }
}

/// The error every JavaScript binding gives for a `diff` options argument that is not
/// `undefined`, `null` or an object whose `perKey` is absent or a boolean: one text for the
/// addon and the WASM package.
pub fn per_key_option_error() -> Error {
    Error::argument("options must be undefined, null or {perKey?: boolean}")
}

/// Routes every key under `old` and `new` and reports what moves: the counts and flows,
/// and each key's entry when `per_key` (see [`Tally`]).
///
/// # Errors
/// The first routing error of either topology (an id strategy given a text key, ...);
/// `limit_exceeded` when `per_key` and there are more than
/// [`MAX_DIFF_LISTED_KEYS`](limits::MAX_DIFF_LISTED_KEYS) keys.
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
/// let report = diff(&five, &ten, users.iter().map(|&id| id.into()), false).unwrap();
/// assert_eq!(report.moved, 50); // user_id % 5 vs % 10: ids with id % 10 >= 5 move
/// assert_eq!(report.flows[0], ("s0".to_string(), "s5".to_string(), 10));
/// assert_eq!(report.keys, None);
/// ```
pub fn diff<'k>(old: &Router, new: &Router, keys: impl IntoIterator<Item = Key<'k>>, per_key: bool) -> Result<Diff> {
    let mut tally = Tally::new(old, new, per_key);
    for key in keys {
        tally.add(key)?;
    }
    Ok(tally.finish())
}
