//! Fixed partitions ("vbuckets") with a dictionary: Couchbase's vBucket map, Riak's
//! partitions, Redis Cluster's slots and Tarantool vshard's buckets are all this shape.
//!
//! **Algorithm.** The key space is cut into a fixed number `V` of virtual buckets
//! (default 1024): `vbucket = hash(key) % V`. A table, the *dictionary*, maps each
//! vbucket to an ordered chain of nodes `[active, replica1, ...]`. The shard of a key is
//! its vbucket number, its node the head of the chain.
//!
//! **Guarantees.** Routing equals the table, exactly: operators move data by moving
//! whole vbuckets, and a client holding the same dictionary (same epoch) always agrees.
//! Because `V` never changes in normal operation, no key ever changes vbucket; what moves
//! on rebalance is decided by whoever edits the table (the planner of a later release),
//! so movement can be made minimal. Balance is that of the table: with `V` much larger
//! than the node count the hash spreads keys evenly over vbuckets.
//!
//! **The document.** `{"type": "vbucket", "vbuckets": V, "map": [["a", "b"], ...]}` lists
//! one chain of node ids per vbucket (`V` entries). Without a `map`, the chain of vbucket
//! `v` is `nodes[(v + r) % n]` for `r` in `0..=replicas` (`"replicas"`, default 0): a
//! round-robin table, ignoring weights, for getting started.
//!
//! **Per-key overrides.** `"overrides": [{"key": {"utf8": "user:1"}, "vbucket": 17}]`
//! moves single keys to a chosen vbucket instead of `hash % V` (a user who changed data
//! centre goes to a vbucket whose chain lives there). Overrides match a key's routing
//! bytes exactly as [`directory`](crate::strategy::partitioned::directory) entries do
//! ([`key_table`]: the whole key, or its Redis `{tag}` when tags are on; integer and
//! byte keys are distinct), so only the listed keys move and
//! keys sharing a hash tag stay together. A listed key's shard is its override vbucket
//! and its replicas that vbucket's chain. The vbucket must be in `0..V`, a key may be
//! listed once, at most [`MAX_KEY_TABLE_ENTRIES`](crate::limits::MAX_KEY_TABLE_ENTRIES)
//! overrides; the field is written (sorted, keys in canonical form) only when
//! non-empty, so documents without overrides keep their canonical form. The
//! `vbucket_override` and `vbucket_override_remove` operations edit the table.
//!
//! **Moving vbuckets.** While a rebalance runs, the document carries the target table
//! as `"forward_map"` (same shape as `map`; Couchbase's `vBucketMapForward`) and the
//! state of the vbuckets in motion as `"states": {"17": "migrating", "18": "read_only"}`
//! (absent vbuckets are `active`). Plain routing (`route`, `node`, `replicas`) follows
//! `map`; [`Router::route_read`](crate::Router::route_read) and
//! [`Router::route_write`](crate::Router::route_write) make the migration explicit:
//!
//! | vbucket state | reads | writes |
//! |---|---|---|
//! | `active` | the active of `map` | the active of `map` |
//! | `migrating` | the active of `map` (the old owner, which has all the data) | the active of `forward_map` first, then the old owner (both, so either can serve after the switch) |
//! | `read_only` | the active of `map` | refused with `read_only` |
//!
//! A `migrating` vbucket needs a `forward_map`. Completing moves copies `forward_map`
//! entries into `map` and advances the epoch (operation `complete_moves`, see
//! [`crate::dictionary`]).
//!
//! **Cost.** One remainder and one table read per key; memory 4 bytes per chain entry.
//! With overrides, one binary search over them first (`O(log E)`, no allocation).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::{Key, OwnedKey};
use crate::limits;
use crate::node::Node;
use crate::strategy::partitioned::key_table::{self, KeyTable};
use crate::strategy::spec::{chain_replica, count_param, Place, Spec};

/// Default vbucket count.
pub const DEFAULT_VBUCKETS: u32 = 1024;

/// `{"type": "vbucket", "vbuckets": 1024, "map": [...]}` or `{..., "replicas": r}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VbucketSpec {
    /// The number of vbuckets, in `1..=`[`limits::MAX_VBUCKETS`].
    pub vbuckets: u32,
    /// One chain of node indices per vbucket, when the document lists a `map`.
    pub map: Option<Vec<Vec<u32>>>,
    /// Replicas per vbucket of the derived round-robin map (when `map` is absent).
    pub replicas: u32,
    /// `(key, vbucket)` overrides, sorted in canonical key order, keys unique (empty
    /// when the document has none).
    pub overrides: Vec<(OwnedKey, u32)>,
    /// The target chains while a rebalance runs (`forward_map`), one per vbucket.
    pub forward: Option<Vec<Vec<u32>>>,
    /// `(vbucket, state)` for vbuckets not `active`, sorted by vbucket.
    pub states: Vec<(u32, VbucketState)>,
}

/// The state of one vbucket during a rebalance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VbucketState {
    /// Normal service.
    Active,
    /// Moving to the active of `forward_map`: reads from the old owner, writes to both.
    Migrating,
    /// Frozen: reads served, writes refused with `read_only`.
    ReadOnly,
}

impl VbucketState {
    /// The document spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            VbucketState::Active => "active",
            VbucketState::Migrating => "migrating",
            VbucketState::ReadOnly => "read_only",
        }
    }
}

impl Spec for VbucketSpec {
    const TYPE: &'static str = "vbucket";
    const FIELDS: &'static [&'static str] =
        &["type", "vbuckets", "map", "replicas", "overrides", "forward_map", "states"];
    const WEIGHTED: bool = true;
    type Placement = VbucketTable;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<VbucketSpec> {
        let vbuckets = count_param(object, "vbuckets", DEFAULT_VBUCKETS, limits::MAX_VBUCKETS)?;
        let replicas_field = object.path_of("replicas");
        let map = match object.optional("map") {
            None => None,
            Some(value) => {
                if object.optional("replicas").is_some() {
                    return Err(json::at(&replicas_field, "give either a map or a replica count, not both"));
                }
                Some(parse_map(&object.path_of("map"), value, nodes)?)
            }
        };
        let replicas = match object.optional("replicas") {
            None => 0,
            Some(value) => {
                let replicas = json::u32_in(&replicas_field, value, 0, u32::MAX)?;
                if replicas > limits::MAX_REPLICAS {
                    return Err(Error::limit(format!(
                        "{replicas_field}: at most {} replicas per vbucket",
                        limits::MAX_REPLICAS
                    )));
                }
                replicas
            }
        };
        let overrides = match object.optional("overrides") {
            None => Vec::new(),
            Some(value) => {
                key_table::parse_key_table(&object.path_of("overrides"), value, &["key", "vbucket"], |path, value| {
                    json::u32_in(path, value, 0, vbuckets - 1)
                })?
            }
        };
        let forward = match object.optional("forward_map") {
            None => None,
            Some(value) => {
                if map.is_none() {
                    return Err(json::at(&object.path_of("forward_map"), "a forward map needs a map to move from"));
                }
                Some(parse_map(&object.path_of("forward_map"), value, nodes)?)
            }
        };
        let states = match object.optional("states") {
            None => Vec::new(),
            Some(value) => parse_states(&object.path_of("states"), value, vbuckets, forward.is_some())?,
        };
        Ok(VbucketSpec { vbuckets, map, replicas, overrides, forward, states })
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("vbuckets", self.vbuckets.into());
        match &self.map {
            Some(chains) => {
                object.put("map", chains_value(chains, nodes));
            }
            None => {
                object.put("replicas", self.replicas.into());
            }
        }
        // Written only when present, so documents without overrides keep their form.
        if !self.overrides.is_empty() {
            let rows = self
                .overrides
                .iter()
                .map(|(key, vbucket)| {
                    let mut row = Map::new();
                    row.put("key", key_table::key_to_value(key.as_key()));
                    row.put("vbucket", (*vbucket).into());
                    Value::Object(row)
                })
                .collect();
            object.put("overrides", Value::Array(rows));
        }
        if let Some(forward) = &self.forward {
            object.put("forward_map", chains_value(forward, nodes));
        }
        if !self.states.is_empty() {
            let mut states = Map::new();
            for (vbucket, state) in &self.states {
                states.insert(format!("{vbucket}"), state.as_str().into());
            }
            object.put("states", Value::Object(states));
        }
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        if let Some(map) = &self.map {
            check_chains("strategy.map", map, self.vbuckets, nodes)?;
        } else if self.replicas as usize >= nodes.len() {
            return Err(json::at(
                "strategy.replicas",
                format_args!("{} replicas need at least {} nodes", self.replicas, self.replicas + 1),
            ));
        } else {
            let cells = u64::from(self.vbuckets) * (u64::from(self.replicas) + 1);
            if cells > limits::MAX_TABLE_CELLS {
                return Err(Error::limit(format!(
                    "strategy.replicas: {} vbuckets x {} nodes per chain = {cells} table cells; the limit is {} \
                     (limits::MAX_TABLE_CELLS)",
                    self.vbuckets,
                    self.replicas + 1,
                    limits::MAX_TABLE_CELLS
                )));
            }
        }
        if let Some(forward) = &self.forward {
            check_chains("strategy.forward_map", forward, self.vbuckets, nodes)?;
        }
        for &(vbucket, state) in &self.states {
            let field = || format!("strategy.states.{vbucket}");
            if vbucket >= self.vbuckets {
                return Err(json::at(&field(), format_args!("not a vbucket number in 0..{}", self.vbuckets)));
            }
            if state == VbucketState::Migrating && self.forward.is_none() {
                return Err(json::at(&field(), "a migrating vbucket needs a forward_map"));
            }
        }
        match self.overrides.iter().position(|&(_, vbucket)| vbucket >= self.vbuckets) {
            Some(index) => Err(json::at(
                &format!("strategy.overrides[{index}].vbucket"),
                format_args!("expected an integer in 0..={}", self.vbuckets - 1),
            )),
            None => Ok(()),
        }
    }

    fn follows_node_list(&self) -> bool {
        // A derived (round-robin) table is a function of the list; an explicit map is not.
        self.map.is_none()
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<VbucketTable> {
        key_table::check_table_keys("strategy.overrides", hashing, &self.overrides)?;
        let mut table = match &self.map {
            Some(chains) => VbucketTable::from_chains(chains),
            None => {
                VbucketTable::from_chains(&VbucketTable::round_robin(self.vbuckets, nodes.len() as u32, self.replicas))
            }
        };
        table.overrides = KeyTable::build(&self.overrides);
        if let Some(forward) = &self.forward {
            table.forward = Some(alloc::boxed::Box::new(VbucketTable::from_chains(forward)));
        }
        table.states = self.states.clone();
        Ok(table)
    }
}

/// Chains of node indices as JSON chains of node ids.
pub(crate) fn chains_value(chains: &[Vec<u32>], nodes: &[Node]) -> Value {
    Value::Array(
        chains
            .iter()
            .map(|chain| Value::Array(chain.iter().map(|&i| Value::String(nodes[i as usize].id.clone())).collect()))
            .collect(),
    )
}

fn parse_states(path: &str, value: &Value, vbuckets: u32, has_forward: bool) -> Result<Vec<(u32, VbucketState)>> {
    let map = value.as_object().ok_or_else(|| {
        json::at(
            path,
            format_args!("expected an object from vbucket number to state, found {}", json::type_name(value)),
        )
    })?;
    let mut states = Vec::with_capacity(map.len());
    for (name, state) in map {
        let field = json::join(path, name);
        let vbucket = crate::key::parse_decimal_u64(name)
            .filter(|&v| v < u64::from(vbuckets))
            .ok_or_else(|| json::at(&field, format_args!("not a vbucket number in 0..{vbuckets}")))?
            as u32;
        let state = match json::str(&field, state)? {
            "active" => VbucketState::Active,
            "migrating" => {
                if !has_forward {
                    return Err(json::at(&field, "a migrating vbucket needs a forward_map"));
                }
                VbucketState::Migrating
            }
            "read_only" => VbucketState::ReadOnly,
            other => {
                return Err(json::at(
                    &field,
                    format_args!("unknown state {other:?}; expected \"active\", \"migrating\" or \"read_only\""),
                ))
            }
        };
        // `active` is the default: not stored, so the canonical form omits it.
        if state != VbucketState::Active {
            states.push((vbucket, state));
        }
    }
    states.sort_unstable_by_key(|entry| entry.0);
    if states.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return Err(json::at(path, "a vbucket is listed twice (e.g. \"7\" and \"07\")"));
    }
    Ok(states)
}

fn parse_map(path: &str, value: &Value, nodes: &[Node]) -> Result<Vec<Vec<u32>>> {
    let rows = json::array(path, value)?;
    // Node ids sorted once, so each chain entry is a binary search (a 16384-vbucket map
    // over 1000 nodes would otherwise cost tens of millions of string comparisons). Paths
    // are formatted only for errors.
    let mut index: Vec<(&str, u32)> = nodes.iter().enumerate().map(|(i, node)| (node.id.as_str(), i as u32)).collect();
    index.sort_unstable();
    let mut chains = Vec::with_capacity(rows.len());
    for (vbucket, row) in rows.iter().enumerate() {
        let row_path = || format!("{path}[{vbucket}]");
        let entries = row
            .as_array()
            .ok_or_else(|| json::at(&row_path(), format_args!("expected an array, found {}", json::type_name(row))))?;
        // Past the limit, `check_chains` refuses the row; reading it all first would only cost.
        let mut chain: Vec<u32> = Vec::with_capacity(entries.len().min(limits::MAX_REPLICAS as usize + 2));
        for (position, entry) in entries.iter().take(limits::MAX_REPLICAS as usize + 2).enumerate() {
            let entry_path = || format!("{}[{position}]", row_path());
            let id = entry.as_str().ok_or_else(|| {
                json::at(&entry_path(), format_args!("expected a string, found {}", json::type_name(entry)))
            })?;
            match index.binary_search_by(|probe| probe.0.cmp(id)) {
                Ok(found) => chain.push(index[found].1),
                Err(_) => {
                    return Err(json::at(&entry_path(), format_args!("names node {id:?}, which is not in nodes")))
                }
            }
        }
        chains.push(chain);
    }
    Ok(chains)
}

/// The rules of a map (`map` or `forward_map`) as typed values: one chain per vbucket,
/// each of 1 to `MAX_REPLICAS + 1` distinct nodes of the list.
fn check_chains(path: &str, chains: &[Vec<u32>], vbuckets: u32, nodes: &[Node]) -> Result<()> {
    if chains.len() != vbuckets as usize {
        return Err(json::at(
            path,
            format_args!("expected {vbuckets} chains (one per vbucket), found {}", chains.len()),
        ));
    }
    let cells: u64 = chains.iter().map(|chain| chain.len() as u64).sum();
    if cells > limits::MAX_TABLE_CELLS {
        return Err(Error::limit(format!(
            "{path}: {cells} table cells; the limit is {} (limits::MAX_TABLE_CELLS)",
            limits::MAX_TABLE_CELLS
        )));
    }
    for (vbucket, chain) in chains.iter().enumerate() {
        let row_path = || format!("{path}[{vbucket}]");
        if chain.is_empty() {
            return Err(json::at(&row_path(), "a chain needs at least its active node"));
        }
        if chain.len() > limits::MAX_REPLICAS as usize + 1 {
            return Err(Error::limit(format!(
                "{}: at most {} nodes per chain (1 active + {} replicas)",
                row_path(),
                limits::MAX_REPLICAS + 1,
                limits::MAX_REPLICAS
            )));
        }
        for (position, &node) in chain.iter().enumerate() {
            let entry_path = || format!("{}[{position}]", row_path());
            let Some(entry) = nodes.get(node as usize) else {
                return Err(json::at(&entry_path(), format_args!("names node index {node}, past the node list")));
            };
            if chain[..position].contains(&node) {
                return Err(json::at(&entry_path(), format_args!("node {:?} appears twice in one chain", entry.id)));
            }
        }
    }
    Ok(())
}

/// A compiled dictionary: the chains of all vbuckets, flattened.
#[derive(Clone, Debug)]
pub struct VbucketTable {
    vbuckets: u32,
    /// The length of the shortest chain: the most replicas every key can get.
    shortest_chain: u32,
    /// `chains[starts[v]..starts[v + 1]]` is the chain of vbucket `v`.
    starts: Vec<u32>,
    chains: Vec<u32>,
    /// Per-key overrides: routing key → vbucket.
    overrides: KeyTable,
    /// The target table while a rebalance runs.
    forward: Option<alloc::boxed::Box<VbucketTable>>,
    /// `(vbucket, state)` of the vbuckets not `active`, sorted.
    states: Vec<(u32, VbucketState)>,
}

impl VbucketTable {
    /// Builds the table from one chain of node indices per vbucket.
    pub(crate) fn from_chains(chains: &[Vec<u32>]) -> VbucketTable {
        let mut starts = Vec::with_capacity(chains.len() + 1);
        let mut flat = Vec::new();
        starts.push(0);
        for chain in chains {
            flat.extend_from_slice(chain);
            starts.push(flat.len() as u32);
        }
        let shortest_chain = chains.iter().map(|chain| chain.len() as u32).min().unwrap_or(0);
        VbucketTable {
            vbuckets: chains.len() as u32,
            shortest_chain,
            starts,
            chains: flat,
            overrides: KeyTable::default(),
            forward: None,
            states: Vec::new(),
        }
    }

    /// The round-robin chains of a document without a `map`.
    pub(crate) fn round_robin(vbuckets: u32, nodes: u32, replicas: u32) -> Vec<Vec<u32>> {
        (0..vbuckets)
            .map(|vbucket| {
                (0..=replicas).map(|r| ((u64::from(vbucket) + u64::from(r)) % u64::from(nodes)) as u32).collect()
            })
            .collect()
    }

    /// The vbucket of a hash: `hash % V`.
    #[inline]
    pub fn vbucket_of(&self, hash: u64) -> u32 {
        (hash % u64::from(self.vbuckets)) as u32
    }

    /// The vbucket of a key: its override if listed, else `hash % V`.
    #[inline]
    fn vbucket_of_key(&self, hashing: &KeyHashing, key: Key<'_>) -> u32 {
        if !self.overrides.is_empty() {
            if let Some(vbucket) = self.overrides.get(key_table::routing_key(hashing, key)) {
                return vbucket;
            }
        }
        self.vbucket_of(hashing.hash(key))
    }

    /// The chain `[active, replicas...]` of node indices of `vbucket`.
    #[inline]
    pub fn chain(&self, vbucket: u32) -> &[u32] {
        let start = self.starts[vbucket as usize] as usize;
        let end = self.starts[vbucket as usize + 1] as usize;
        &self.chains[start..end]
    }

    /// The number of vbuckets.
    pub fn vbuckets(&self) -> u32 {
        self.vbuckets
    }

    /// The state of a vbucket (`active` unless listed).
    pub fn state(&self, vbucket: u32) -> VbucketState {
        match self.states.binary_search_by_key(&vbucket, |entry| entry.0) {
            Ok(index) => self.states[index].1,
            Err(_) => VbucketState::Active,
        }
    }
}

impl Place for VbucketTable {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.vbucket_of_key(hashing, key))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let vbucket = self.vbucket_of_key(hashing, key);
        let overridden =
            !self.overrides.is_empty() && self.overrides.get(key_table::routing_key(hashing, key)).is_some();
        Ok((Some(Hashed::of(hashing, key)), Hit::Vbucket { vbucket, vbuckets: self.vbuckets, overridden }, vbucket))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.chain(shard)[0]
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        let vbucket = self.vbucket_of_key(hashing, key);
        let chain = self.chain(vbucket);
        if count as usize > chain.len() {
            return Err(Error::argument(format!(
                "vbucket {vbucket} has {} node(s) in its chain; {count} requested",
                chain.len()
            )));
        }
        out.extend_from_slice(&chain[..count as usize]);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.shortest_chain
    }

    fn read_replica(&self, hashing: &KeyHashing, key: Key<'_>, turn: u32) -> Result<u32> {
        Ok(chain_replica(self.chain(self.vbucket_of_key(hashing, key)), turn))
    }

    fn shard_chain(&self, shard: u32, out: &mut Vec<u32>) {
        out.extend_from_slice(self.chain(shard));
    }

    fn write_nodes(&self, hashing: &KeyHashing, key: Key<'_>, out: &mut Vec<u32>) -> Result<()> {
        let vbucket = self.vbucket_of_key(hashing, key);
        let active = self.chain(vbucket)[0];
        match self.state(vbucket) {
            VbucketState::ReadOnly => Err(Error::new(
                crate::error::ErrorKind::ReadOnly,
                format!("vbucket {vbucket} is read-only while it is moved; retry after the next epoch"),
            )),
            VbucketState::Migrating => {
                // Parsing guarantees a forward map for migrating vbuckets.
                let target = self.forward.as_ref().map_or(active, |forward| forward.chain(vbucket)[0]);
                out.push(target);
                if target != active {
                    out.push(active);
                }
                Ok(())
            }
            VbucketState::Active => {
                out.push(active);
                Ok(())
            }
        }
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.vbuckets
    }
}
