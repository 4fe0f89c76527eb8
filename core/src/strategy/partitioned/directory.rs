//! Directory (table) sharding: an explicit key → node table, with a fallback strategy
//! for every key the table does not list. This is directory-based partitioning, the
//! lookup table of a `user_to_shard` column: Vitess's lookup vindexes and the
//! shop-to-pod table of Shopify's pods are this shape, with a hash function behind it
//! for everything not yet pinned.
//!
//! **Algorithm.** The table is sorted once; a key is looked up by binary search. A
//! listed key goes to its entry's node; any other key goes where the `fallback`
//! strategy alone would send it. Entries match a key's *routing bytes*, the bytes its
//! hash would see: the whole key, or under `"hash_tag": "redis"` its `{tag}`, so keys
//! that share a hash tag keep sharing a node (an entry for `user:1` moves
//! `{user:1}.profile` and `{user:1}.posts` together). Byte keys and integer keys are
//! distinct kinds: the entry `{"u64": "42"}` never matches the text `"42"` or the 8
//! bytes of 42.
//!
//! **Guarantees.** Entries always win; every other key routes exactly as the fallback
//! strategy alone routes it, so adding or removing an entry moves that entry's keys
//! and nothing else, and a node change moves only what the fallback moves (for the
//! fallback's keys) plus nothing for listed keys. Balance is the fallback's, plus
//! whatever the table puts where. The shard of a key is its node index, as for the
//! fallback strategies.
//!
//! **Replicas.** The owner first, then the fallback's preference order for the same
//! key with the owner left out: a listed key's second choice is the fallback's
//! first choice (unless that is the owner itself), so promoting a replica after the
//! owner fails lands where the key would go without its entry.
//!
//! **The document.**
//! `{"type": "directory", "entries": [{"key": {"utf8": "user:1"}, "node": "b"}, {"key":
//! {"u64": "42"}, "node": "a"}], "fallback": {"type": "jump"}}`. A key is written as in
//! the conformance vectors: `{"utf8": text}`, `{"hex": bytes}` or `{"u64": integer}` (a
//! number or a decimal string). `entries` defaults to `[]`; `fallback` is required and
//! is any strategy whose shards are node indices: `modulo` (0-based), `jump`, `ring` or
//! `rendezvous` (a directory cannot fall back to another directory: merge the tables).
//! Node weights are the fallback's business (accepted by `ring` and `rendezvous`). At
//! most [`MAX_KEY_TABLE_ENTRIES`](crate::limits::MAX_KEY_TABLE_ENTRIES) entries (a
//! million pinned keys is far beyond a hot-key list; past that, a lookup service is
//! the better tool); a key may be listed once. Under `"hash_tag": "redis"` an entry
//! whose key has a tag could never match (its keys route by the tag), so building a
//! router from it fails with `invalid_topology`: list the tag instead.
//!
//! **Canonical form.** Entries sorted, byte keys (bytewise) before integer keys
//! (numerically); key objects as everywhere in the document (`u64` as a decimal string,
//! `utf8` for text without control characters, else lowercase `hex`). The fallback is
//! written in its own canonical form.
//!
//! **Cost.** A lookup is a binary search, `O(log E)` comparisons over `E` entries with
//! no allocation, then for unlisted keys the fallback's own cost. Memory: the key
//! bytes plus 8 bytes per entry (keys are stored back to back, not as separate
//! allocations).
//!
//! **Operations.** `directory_set` adds or replaces an entry, `directory_remove` drops
//! one (see [`crate::ops`]); `add_node` and `remove_node` edit the node list the
//! fallback is derived from.
//!
//! # Example
//! ```
//! use shardroute::Router;
//! let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
//!     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
//!     "hashing": {"hash_tag": "redis"},
//!     "strategy": {"type": "directory", "fallback": {"type": "jump"},
//!                  "entries": [{"key": {"utf8": "user:1"}, "node": "c"}]}}"#)?;
//! assert_eq!(router.node("user:1")?, "c");
//! assert_eq!(router.node("{user:1}.posts")?, "c"); // the tag is what is listed
//! assert_eq!(router.route("user:1")?, 2); // the shard is the node's index
//! assert_eq!(router.replicas("user:1", 3)?[0], "c");
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::{redis_hash_tag, HashTag, KeyHashing};
use crate::json::{self, Object};
use crate::key::{Key, OwnedKey};
use crate::limits::MAX_KEY_TABLE_ENTRIES as MAX_ENTRIES;
use crate::node::Node;
use crate::strategy::spec::{still_named, Place, Spec};
use crate::strategy::{Placement, Strategy};

/// `{"type": "directory", "entries": [...], "fallback": {...}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectorySpec {
    /// `(key, node index)` pairs, sorted in canonical key order, keys unique.
    pub entries: Vec<(OwnedKey, u32)>,
    /// Where unlisted keys go: a strategy whose shards are node indices.
    pub fallback: Box<Strategy>,
}

impl Spec for DirectorySpec {
    const TYPE: &'static str = "directory";
    const FIELDS: &'static [&'static str] = &["type", "entries", "fallback"];
    // The fallback decides whether weights mean something; it checks them itself.
    const WEIGHTED: bool = true;
    type Placement = Directory;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<DirectorySpec> {
        let entries = match object.optional("entries") {
            None => Vec::new(),
            Some(value) => parse_key_table(&object.path_of("entries"), value, &["key", "node"], |path, value| {
                node_index(path, value, nodes)
            })?,
        };
        let fallback_path = object.path_of("fallback");
        let fallback_value = object.required("fallback")?;
        if fallback_value.get("type").and_then(Value::as_str) == Some(DirectorySpec::TYPE) {
            return Err(json::at(
                &json::join(&fallback_path, "type"),
                "a directory cannot fall back to another directory; merge their entries",
            ));
        }
        let fallback = Strategy::from_value(&fallback_path, fallback_value, nodes)?;
        if !node_indexed(&fallback) {
            return Err(json::at(
                &fallback_path,
                format_args!(
                    "the {} strategy{} does not number its shards by node; a fallback must be modulo (0-based), jump, ring or rendezvous",
                    fallback.type_name(),
                    if matches!(fallback, Strategy::Modulo(_)) { " with one_based" } else { "" }
                ),
            ));
        }
        Ok(DirectorySpec { entries, fallback: Box::new(fallback) })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        if let Some(index) = self.entries.iter().position(|&(_, node)| node as usize >= nodes.len()) {
            return Err(json::at(
                &format!("strategy.entries[{index}].node"),
                format_args!("node index {} is past the node list", self.entries[index].1),
            ));
        }
        self.fallback.check(nodes)
    }

    fn follows_node_list(&self) -> bool {
        // Entries name nodes by id; the fallback is derived from the list.
        true
    }

    fn node_removed(&mut self, index: u32, nodes: &[Node]) -> Result<()> {
        for (position, (_, node)) in self.entries.iter_mut().enumerate() {
            match (*node).cmp(&index) {
                core::cmp::Ordering::Equal => {
                    return Err(still_named(&format!("strategy.entries[{position}].node"), nodes, index))
                }
                core::cmp::Ordering::Greater => *node -= 1,
                core::cmp::Ordering::Less => {}
            }
        }
        self.fallback.node_removed(index, nodes)
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        let entries = self
            .entries
            .iter()
            .map(|(key, node)| {
                let mut entry = Map::new();
                entry.insert("key".into(), key_to_value(key.as_key()));
                entry.insert("node".into(), Value::String(nodes[*node as usize].id.clone()));
                Value::Object(entry)
            })
            .collect();
        object.insert("entries".into(), Value::Array(entries));
        object.insert("fallback".into(), self.fallback.to_value(nodes));
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Directory> {
        check_table_keys("strategy.entries", hashing, &self.entries)?;
        Ok(Directory {
            table: KeyTable::build(&self.entries),
            fallback: Box::new(Placement::compile(&self.fallback, hashing, nodes)?),
            nodes: nodes.len() as u32,
        })
    }
}

/// Whether a strategy's shards are node indices (`owner(shard) == shard` over
/// `0..n`): what a directory can fall back to.
fn node_indexed(strategy: &Strategy) -> bool {
    match strategy {
        Strategy::Modulo(spec) => !spec.one_based,
        Strategy::Jump(_) | Strategy::Ring(_) | Strategy::Rendezvous(_) => true,
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

/// The index of the node named by the string `value`.
pub(crate) fn node_index(path: &str, value: &Value, nodes: &[Node]) -> Result<u32> {
    let id = json::str(path, value)?;
    nodes
        .iter()
        .position(|node| node.id == id)
        .map(|index| index as u32)
        .ok_or_else(|| json::at(path, format_args!("names node {id:?}, which is not in nodes")))
}

/// A compiled directory: the sorted table and the compiled fallback.
#[derive(Clone, Debug)]
pub struct Directory {
    table: KeyTable,
    fallback: Box<Placement>,
    nodes: u32,
}

impl Directory {
    /// The node index of `key` by the table alone, `None` when the key is not listed.
    #[inline]
    fn entry(&self, hashing: &KeyHashing, key: Key<'_>) -> Option<u32> {
        self.table.get(routing_key(hashing, key))
    }
}

impl Place for Directory {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        match self.entry(hashing, key) {
            Some(node) => Ok(node),
            None => Ok(self.fallback.owner(self.fallback.shard(hashing, key)?)),
        }
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        shard
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        self.fallback.replicas(hashing, key, count, out)?;
        if let Some(node) = self.entry(hashing, key) {
            match out.iter().position(|&other| other == node) {
                // Move the owner to the front, keeping the others' order.
                Some(position) => out[..=position].rotate_right(1),
                None => {
                    out.insert(0, node);
                    out.truncate(count as usize);
                }
            }
        }
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.nodes
    }
}

// ---------------------------------------------------------------------------------
// Key tables: shared by directory entries and vbucket overrides.
// ---------------------------------------------------------------------------------

/// The canonical order of keys in a table: byte keys (bytewise) before integer keys
/// (numerically).
pub(crate) fn key_order(a: Key<'_>, b: Key<'_>) -> Ordering {
    match (a, b) {
        (Key::Bytes(a), Key::Bytes(b)) => a.cmp(b),
        (Key::U64(a), Key::U64(b)) => a.cmp(&b),
        (Key::Bytes(_), Key::U64(_)) => Ordering::Less,
        (Key::U64(_), Key::Bytes(_)) => Ordering::Greater,
    }
}

/// The part of a key a table matches: the bytes the hash would see (the Redis tag
/// under `"hash_tag": "redis"`), or the integer itself.
#[inline]
pub(crate) fn routing_key<'k>(hashing: &KeyHashing, key: Key<'k>) -> Key<'k> {
    match (key, hashing.hash_tag) {
        (Key::Bytes(bytes), HashTag::Redis) => Key::Bytes(redis_hash_tag(bytes)),
        (key, _) => key,
    }
}

/// Rejects table keys that could never match under `hashing`: a byte key that is not
/// its own routing part (it has a Redis hash tag while tags are on).
pub(crate) fn check_table_keys(path: &str, hashing: &KeyHashing, entries: &[(OwnedKey, u32)]) -> Result<()> {
    for (key, _) in entries {
        let key = key.as_key();
        if let (Key::Bytes(bytes), Key::Bytes(routed)) = (key, routing_key(hashing, key)) {
            if routed.len() != bytes.len() {
                return Err(json::at(
                    path,
                    format_args!(
                        "the entry for {} can never match: under hash_tag \"redis\" keys route by their tag ({}); list the tag instead",
                        key_to_value(key),
                        key_to_value(Key::Bytes(routed)),
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Reads a key object `{"utf8": text}`, `{"hex": "00ff"}` or `{"u64": n}` (`n` a
/// number or a decimal string): the one reader the document uses for keys everywhere.
pub(crate) fn key_from_value(path: &str, value: &Value) -> Result<OwnedKey> {
    crate::strategy::partitioned::key_range::parse_key(path, value)
}

/// Writes a key object in canonical form: `{"u64": "decimal"}` (a string, so
/// JavaScript reads every u64 exactly), `utf8` for UTF-8 text without control
/// characters, else lowercase `hex` (the writer `key_range` boundaries use too).
pub(crate) fn key_to_value(key: Key<'_>) -> Value {
    crate::strategy::partitioned::key_range::key_value(&OwnedKey::from(key))
}

/// Reads an array of `{"key": ..., fields[1]: ...}` objects into a table sorted in
/// canonical key order, rejecting duplicates (naming both entries) and more than
/// [`MAX_KEY_TABLE_ENTRIES`](crate::limits::MAX_KEY_TABLE_ENTRIES) entries.
pub(crate) fn parse_key_table(
    path: &str,
    value: &Value,
    fields: &'static [&'static str; 2],
    mut read: impl FnMut(&str, &Value) -> Result<u32>,
) -> Result<Vec<(OwnedKey, u32)>> {
    let value_field = fields[1];
    let rows = json::array(path, value)?;
    if rows.len() > MAX_ENTRIES as usize {
        return Err(Error::limit(format!("{path}: {} entries; the limit is {MAX_ENTRIES}", rows.len())));
    }
    let mut entries: Vec<(OwnedKey, u32, usize)> = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        let row_path = format!("{path}[{index}]");
        let object = Object::new(&row_path, row, fields)?;
        let key = key_from_value(&object.path_of("key"), object.required("key")?)?;
        let target = read(&object.path_of(value_field), object.required(value_field)?)?;
        entries.push((key, target, index));
    }
    entries.sort_by(|a, b| key_order(a.0.as_key(), b.0.as_key()).then(a.2.cmp(&b.2)));
    for pair in entries.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(json::at(
                &format!("{path}[{}].key", pair[1].2),
                format_args!("duplicate key {} (also {path}[{}])", key_to_value(pair[0].0.as_key()), pair[0].2),
            ));
        }
    }
    Ok(entries.into_iter().map(|(key, target, _)| (key, target)).collect())
}

/// A sorted key → `u32` table searched without allocating: byte keys stored back to
/// back, integer keys in their own array.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    /// Byte key `i` is `bytes[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    bytes: Vec<u8>,
    byte_values: Vec<u32>,
    ints: Vec<u64>,
    int_values: Vec<u32>,
}

impl KeyTable {
    /// Builds the table from entries sorted in canonical key order.
    pub(crate) fn build(entries: &[(OwnedKey, u32)]) -> KeyTable {
        let mut table = KeyTable { starts: Vec::from([0]), ..KeyTable::default() };
        for (key, value) in entries {
            match key {
                OwnedKey::Bytes(bytes) => {
                    table.bytes.extend_from_slice(bytes);
                    // The document is at most 64 MiB, so byte offsets fit in a u32.
                    table.starts.push(table.bytes.len() as u32);
                    table.byte_values.push(*value);
                }
                OwnedKey::U64(int) => {
                    table.ints.push(*int);
                    table.int_values.push(*value);
                }
            }
        }
        table
    }

    /// Whether the table has no entries.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.byte_values.is_empty() && self.ints.is_empty()
    }

    /// The value of `key`, if listed.
    #[inline]
    pub(crate) fn get(&self, key: Key<'_>) -> Option<u32> {
        match key {
            Key::U64(int) => self.ints.binary_search(&int).ok().map(|index| self.int_values[index]),
            Key::Bytes(wanted) => {
                let (mut low, mut high) = (0usize, self.byte_values.len());
                while low < high {
                    let middle = low + (high - low) / 2;
                    let start = self.starts[middle] as usize;
                    let end = self.starts[middle + 1] as usize;
                    match self.bytes[start..end].cmp(wanted) {
                        Ordering::Less => low = middle + 1,
                        Ordering::Greater => high = middle,
                        Ordering::Equal => return Some(self.byte_values[middle]),
                    }
                }
                None
            }
        }
    }
}

/// Inserts or replaces `key` in a sorted table; returns the previous value.
pub(crate) fn table_set(entries: &mut Vec<(OwnedKey, u32)>, key: OwnedKey, value: u32) -> Result<Option<u32>> {
    match entries.binary_search_by(|(other, _)| key_order(other.as_key(), key.as_key())) {
        Ok(index) => Ok(Some(core::mem::replace(&mut entries[index].1, value))),
        Err(index) => {
            if entries.len() >= MAX_ENTRIES as usize {
                return Err(Error::limit(format!("the table already holds {MAX_ENTRIES} entries, its limit")));
            }
            entries.insert(index, (key, value));
            Ok(None)
        }
    }
}

/// Removes `key` from a sorted table; returns its value.
pub(crate) fn table_remove(entries: &mut Vec<(OwnedKey, u32)>, key: Key<'_>) -> Option<u32> {
    let index = entries.binary_search_by(|(other, _)| key_order(other.as_key(), key)).ok()?;
    Some(entries.remove(index).1)
}
