//! Redis Cluster's key → slot → node routing: the `redis_cluster` compatibility profile,
//! sending a key to the master (and replicas) a Redis Cluster client would.
//!
//! **Algorithm.** The key space is 16384 hash slots. A key's slot is
//! `CRC16/XMODEM(bytes) mod 16384` (computed as `& 0x3FFF`), where `bytes` is the key's
//! *hash tag* when it has one, else the whole key: find the first `{`; find the first
//! `}` after it; when at least one byte lies between them, those bytes are the tag
//! ([`redis_hash_tag`]). So `{user1000}.following` and `{user1000}.followers` share a
//! slot, `foo{}{bar}` hashes the whole key (the first `{` is followed directly by `}`),
//! `foo{{bar}}zap` hashes `{bar`, and a key with a `{` but no `}` after it hashes whole.
//! The CRC runs over raw bytes: binary keys, `0x80..=0xFF` bytes and UTF-8 text alike.
//! Each slot belongs to one slot range; the range's first node is the master (the
//! key's node) and the rest are its replicas, in order. The shard of a key is its slot.
//!
//! Sources: Redis 7.0 `src/cluster.c` (`keyHashSlot`), `src/crc16.c` (CRC16/XMODEM,
//! check value `0x31C3`), the Redis Cluster specification ("Keys distribution model",
//! "Hash tags"); the default slot split: Redis 7.0 `src/redis-cli.c`
//! (`clusterManagerCommandCreate`). Checked against a real `redis-server` 7.0
//! (`CLUSTER KEYSLOT`, `CLUSTER SLOTS`, `CLUSTER SHARDS`), redis-py's `redis.crc.key_slot`
//! and npm `cluster-key-slot` over more than 10,000 keys (`conformance/oracles/`; see
//! `docs/compatibility.md` for where `cluster-key-slot` itself departs from Redis).
//!
//! **The document.**
//!
//! ```json
//! {"type": "redis_cluster",
//!  "slots": [{"start": 0, "end": 8191, "nodes": ["a", "a-replica"]},
//!            {"start": 8192, "end": 16383, "nodes": ["b"]}]}
//! ```
//!
//! `slots` lists slot ranges as `CLUSTER SLOTS` does: `start` and `end` are both
//! included, in `0..=16383`; `nodes` names the master, then its replicas (at most
//! [`limits::MAX_REPLICAS`]), each a node id of the document, none twice. The ranges may
//! be listed in any order but must cover every slot exactly once (a gap or an overlap is
//! `invalid_topology`). A master with several slot ranges is listed once per range.
//! Nodes that appear in no range (a master without slots) are allowed and own nothing.
//!
//! Without `slots`, every node is a master, in document order, with the split
//! `redis-cli --cluster create` makes: with `m` masters, `per = 16384 / (float) m` and
//! master `i` ends at slot `lround(cursor + per - 1)` with `cursor = i * per`
//! accumulated in single precision (the last master always ends at 16383). Three
//! masters get `0..=5460`, `5461..=10922`, `10923..=16383`. With thousands of nodes
//! (where redis-cli's single-precision steps run past slot 16383) the document must
//! list the slot ranges. The canonical form always writes `slots`, sorted by `start`.
//!
//! **Keys.** A byte key is hashed as its bytes (text: its UTF-8). An integer key `k` is
//! the decimal ASCII text of `k` (`42` routes as `"42"`), which is what redis-py,
//! node-redis and `redis-cli` send for an integer argument. The topology's `hashing`
//! section must be the default: Redis fixes the hash, so a `hashing` setting would
//! change nothing and is refused (`invalid_topology` at `hashing`).
//!
//! **Import.** `{"op": "import_redis_cluster_slots", "reply": ...}` and
//! `{"op": "import_redis_cluster_shards", "reply": ...}` build this document from a live
//! cluster's `CLUSTER SLOTS` or `CLUSTER SHARDS` reply (see [`import::read_slots`] and
//! [`import::read_shards`], and the import operations of [`crate::ops`]).
//!
//! **Tie-break.** None is needed: ranges cannot overlap, so every slot has exactly one
//! range, and a range's node order is the document's.
//!
//! **Cost.** One CRC16 pass over the key (or its tag), then a table lookup; memory a
//! 32 KiB slot → range table plus the ranges.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hash::crc16_xmodem;
use crate::hashing::{redis_hash_tag, KeyHashing};
use crate::json::{self, Object, Put as _};
use crate::key::with_key_bytes;
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::strategy::spec::{chain_replica, Place, Spec};

pub mod import;
pub mod redirect;

/// The number of hash slots of a Redis Cluster.
pub const SLOTS: u32 = 16384;

/// One slot range: slots `start..=end`, served by `nodes[0]` (master) and its replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotRange {
    /// First slot of the range.
    pub start: u32,
    /// Last slot of the range (included).
    pub end: u32,
    /// Node indices: the master, then its replicas.
    pub nodes: Vec<u32>,
}

/// `{"type": "redis_cluster", "slots": [{"start", "end", "nodes"}, ...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisClusterSpec {
    /// The slot ranges, sorted by `start`, covering `0..16384` exactly; `None` when the
    /// document gives none (the `redis-cli --cluster create` split over all nodes).
    pub slots: Option<Vec<SlotRange>>,
}

/// The slot of a key: `CRC16/XMODEM(key or its hash tag) & 0x3FFF`; an integer key is
/// its decimal text.
///
/// # Example
/// ```
/// use shardroute::strategy::compat::redis_cluster::key_slot;
/// use shardroute::Key;
/// // The examples of the Redis Cluster specification and `CLUSTER KEYSLOT`.
/// assert_eq!(key_slot(Key::Bytes(b"somekey")), 11058);
/// assert_eq!(key_slot(Key::Bytes(b"foo{hash_tag}")), key_slot(Key::Bytes(b"hash_tag")));
/// assert_eq!(key_slot(Key::U64(42)), key_slot(Key::Bytes(b"42")));
/// ```
pub fn key_slot(key: Key<'_>) -> u32 {
    match key {
        Key::Bytes(bytes) => u32::from(crc16_xmodem(redis_hash_tag(bytes))) & (SLOTS - 1),
        // Digits never contain `{`, so no tag applies.
        Key::U64(value) => u32::from(crc16_xmodem(crate::key::decimal(value, &mut [0u8; 20]))) & (SLOTS - 1),
    }
}

/// The slot ranges `redis-cli --cluster create` gives `masters` masters (Redis 7.0
/// `src/redis-cli.c`, `clusterManagerCommandCreate`), as `(start, end)` pairs; `None`
/// when `masters` is 0 or above 16384.
///
/// The single-precision arithmetic is reproduced exactly: IEEE `f32` division and
/// addition (no platform function), and `lround` of a non-negative `f32` computed as
/// `floor(x + 0.5)` in `f64`, where the sum is exact.
///
/// # Example
/// ```
/// use shardroute::strategy::compat::redis_cluster::create_split;
/// assert_eq!(create_split(3).unwrap(), [(0, 5460), (5461, 10922), (10923, 16383)]);
/// ```
pub fn create_split(masters: u32) -> Option<Vec<(u32, u32)>> {
    if masters == 0 || masters > SLOTS {
        return None;
    }
    let per = SLOTS as f32 / masters as f32;
    let mut cursor = 0.0f32;
    let mut first: u64 = 0;
    let mut ranges = Vec::with_capacity(masters as usize);
    for i in 0..masters {
        let x = cursor + per - 1.0;
        // lround for x >= 0 (per >= 1 here); the f64 sum is exact for an f32 below 2^24.
        let mut last = if x <= 0.0 { 0 } else { (f64::from(x) + 0.5) as u64 };
        if last > u64::from(SLOTS) || i == masters - 1 {
            last = u64::from(SLOTS) - 1;
        }
        if last < first {
            last = first;
        }
        if last >= u64::from(SLOTS) {
            return None;
        }
        ranges.push((first as u32, last as u32));
        first = last + 1;
        cursor += per;
    }
    Some(ranges)
}

impl Spec for RedisClusterSpec {
    const TYPE: &'static str = "redis_cluster";
    const FIELDS: &'static [&'static str] = &["type", "slots"];
    type Placement = SlotTable;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<RedisClusterSpec> {
        let slots = match object.optional("slots") {
            Some(value) => Some(parse_slots(&object.path_of("slots"), value, nodes)?),
            None => None,
        };
        Ok(RedisClusterSpec { slots })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        let Some(ranges) = &self.slots else {
            if nodes.len() as u64 > u64::from(SLOTS) || create_split(nodes.len() as u32).is_none() {
                return Err(json::at(
                    "strategy.slots",
                    format_args!(
                        "redis-cli's split cannot give each of {} masters a slot (its single-precision steps overrun slot 16383); list the slot ranges",
                        nodes.len()
                    ),
                ));
            }
            return Ok(());
        };
        check_cover("strategy.slots", ranges)?;
        for (position, range) in ranges.iter().enumerate() {
            let nodes_path = || format!("strategy.slots[{position}].nodes");
            if range.nodes.len() > limits::MAX_REPLICAS as usize + 1 {
                return Err(Error::limit(format!(
                    "{}: at most {} nodes per range (1 master + {} replicas)",
                    nodes_path(),
                    limits::MAX_REPLICAS + 1,
                    limits::MAX_REPLICAS
                )));
            }
            for (slot, &node) in range.nodes.iter().enumerate() {
                let Some(entry) = nodes.get(node as usize) else {
                    return Err(json::at(
                        &format!("{}[{slot}]", nodes_path()),
                        format_args!("node index {node} is not in nodes"),
                    ));
                };
                if range.nodes[..slot].contains(&node) {
                    return Err(json::at(
                        &format!("{}[{slot}]", nodes_path()),
                        format_args!("node {:?} appears twice in one range", entry.id),
                    ));
                }
            }
        }
        Ok(())
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        let ranges = self.ranges(nodes.len() as u32);
        let rows = ranges
            .iter()
            .map(|range| {
                let mut row = Map::new();
                row.put("start", range.start.into());
                row.put("end", range.end.into());
                let ids = range.nodes.iter().map(|&i| Value::String(nodes[i as usize].id.clone())).collect();
                row.put("nodes", Value::Array(ids));
                Value::Object(row)
            })
            .collect();
        object.put("slots", Value::Array(rows));
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<SlotTable> {
        crate::strategy::spec::require_default_hashing(Self::TYPE, "with CRC16 over the key or its hash tag", hashing)?;
        if nodes.is_empty() {
            return Err(Error::new(crate::error::ErrorKind::NoNodes, "nodes: a Redis Cluster needs at least one node"));
        }
        let ranges = match &self.slots {
            Some(ranges) => {
                check_cover("strategy.slots", ranges)?;
                if let Some(bad) = ranges.iter().flat_map(|r| r.nodes.iter()).find(|&&i| i as usize >= nodes.len()) {
                    return Err(json::at("strategy.slots", format_args!("node index {bad} is not in nodes")));
                }
                ranges.clone()
            }
            None => {
                if create_split(nodes.len() as u32).is_none() {
                    return Err(json::at(
                        "strategy.slots",
                        "too many nodes for redis-cli's split; list the slot ranges",
                    ));
                }
                self.ranges(nodes.len() as u32)
            }
        };
        Ok(SlotTable::new(ranges))
    }
}

impl RedisClusterSpec {
    /// The slot ranges of this spec over `node_count` nodes: the explicit ones, or the
    /// `redis-cli --cluster create` split (empty when `node_count` is out of range).
    pub fn ranges(&self, node_count: u32) -> Vec<SlotRange> {
        match &self.slots {
            Some(ranges) => ranges.clone(),
            None => create_split(node_count)
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(index, (start, end))| SlotRange { start, end, nodes: vec![index as u32] })
                .collect(),
        }
    }
}

fn parse_slots(path: &str, value: &Value, nodes: &[Node]) -> Result<Vec<SlotRange>> {
    let rows = json::array(path, value)?;
    if rows.len() > SLOTS as usize {
        return Err(Error::limit(format!("{path}: {} ranges; at most {SLOTS} (one per slot)", rows.len())));
    }
    let mut index: Vec<(&str, u32)> = nodes.iter().enumerate().map(|(i, node)| (node.id.as_str(), i as u32)).collect();
    index.sort_unstable();
    // (range, its position in the document) for error paths after sorting.
    let mut ranges: Vec<(SlotRange, usize)> = Vec::with_capacity(rows.len());
    for (position, row) in rows.iter().enumerate() {
        let row_path = format!("{path}[{position}]");
        let object = Object::new(&row_path, row, &["start", "end", "nodes"])?;
        let start = json::u32_in(&object.path_of("start"), object.required("start")?, 0, SLOTS - 1)?;
        let end = json::u32_in(&object.path_of("end"), object.required("end")?, 0, SLOTS - 1)?;
        if end < start {
            return Err(json::at(&object.path_of("end"), format_args!("{end} is below start {start}")));
        }
        let nodes_path = object.path_of("nodes");
        let entries = json::array(&nodes_path, object.required("nodes")?)?;
        if entries.is_empty() {
            return Err(json::at(&nodes_path, "a slot range needs its master"));
        }
        if entries.len() > limits::MAX_REPLICAS as usize + 1 {
            return Err(Error::limit(format!(
                "{nodes_path}: at most {} nodes per range (1 master + {} replicas)",
                limits::MAX_REPLICAS + 1,
                limits::MAX_REPLICAS
            )));
        }
        let mut chain = Vec::with_capacity(entries.len());
        for (slot, entry) in entries.iter().enumerate() {
            let entry_path = format!("{nodes_path}[{slot}]");
            let id = json::str(&entry_path, entry)?;
            let node = match index.binary_search_by(|probe| probe.0.cmp(id)) {
                Ok(found) => index[found].1,
                Err(_) => return Err(json::at(&entry_path, format_args!("names node {id:?}, which is not in nodes"))),
            };
            if chain.contains(&node) {
                return Err(json::at(&entry_path, format_args!("node {id:?} appears twice in one range")));
            }
            chain.push(node);
        }
        ranges.push((SlotRange { start, end, nodes: chain }, position));
    }
    sort_and_cover(path, ranges)
}

/// Sorts slot ranges (each with its position in the document or reply, for messages) by
/// their first slot and checks that they cover `0..=16383` exactly once.
pub(crate) fn sort_and_cover(path: &str, mut ranges: Vec<(SlotRange, usize)>) -> Result<Vec<SlotRange>> {
    // Ties (two ranges starting at one slot, an error below) are broken by position, so
    // the range the message names does not depend on the sort algorithm (std's differs
    // between builds: the WASM package sorts with `optimize_for_size`).
    ranges.sort_unstable_by_key(|(range, position)| (range.start, *position));
    let mut next = 0u32;
    for (range, position) in &ranges {
        if range.start < next {
            return Err(json::at(
                &format!("{path}[{position}]"),
                format_args!(
                    "slots {}..={} overlap another range (slot {} is listed twice)",
                    range.start, range.end, range.start
                ),
            ));
        }
        if range.start > next {
            return Err(json::at(
                path,
                format_args!("slots {next}..={} belong to no range; the ranges must cover 0..=16383", range.start - 1),
            ));
        }
        next = range.end + 1;
    }
    if next != SLOTS {
        return Err(json::at(
            path,
            format_args!("slots {next}..=16383 belong to no range; the ranges must cover 0..=16383"),
        ));
    }
    Ok(ranges.into_iter().map(|(range, _)| range).collect())
}

/// The cover check for specs built by hand (parsing has already done it).
fn check_cover(path: &str, ranges: &[SlotRange]) -> Result<()> {
    let mut next = 0u32;
    for range in ranges {
        if range.start != next || range.end < range.start || range.end >= SLOTS || range.nodes.is_empty() {
            return Err(json::at(path, "the ranges must be sorted, non-empty and cover 0..=16383 exactly once"));
        }
        next = range.end + 1;
    }
    if next == SLOTS {
        Ok(())
    } else {
        Err(json::at(path, "the ranges must cover 0..=16383"))
    }
}

/// A compiled slot map: slot → chain (master, then replicas), each distinct chain stored
/// once.
///
/// A slot's chain is found through its own entry, not through its range's position, so a
/// `MOVED` is one entry written (`SlotTable::move_slot`), where numbering slots by
/// range would renumber every slot after a range that splits.
#[derive(Clone, Debug)]
pub struct SlotTable {
    /// `chains[chain_of[slot]]` serves `slot`.
    chain_of: Vec<u16>,
    /// The distinct chains, in order of first use. An entry no slot uses any more stays
    /// (a `MOVED` back to it revives it), so the count is at most the ranges compiled plus
    /// one per node that a `MOVED` made a master alone.
    chains: Vec<Vec<u32>>,
    /// Slots per chain (0: an entry no slot uses).
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    uses: Vec<u32>,
    /// The entry of the chain `[node]` (the node a master alone), by node index;
    /// `u16::MAX` for none.
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    alone: Vec<u16>,
    /// The shortest chain in use.
    shortest: u32,
}

impl SlotTable {
    pub(crate) fn new(ranges: Vec<SlotRange>) -> SlotTable {
        let mut chain_of = vec![0u16; SLOTS as usize];
        let mut chains: Vec<Vec<u32>> = Vec::new();
        let mut uses: Vec<u32> = Vec::new();
        // Chain -> its entry; at most one entry per range (16,384), so a u16 indexes them.
        let mut known: alloc::collections::BTreeMap<Vec<u32>, u16> = alloc::collections::BTreeMap::new();
        for range in ranges {
            let count = range.end.saturating_sub(range.start) + 1;
            let entry = *known.entry(range.nodes).or_insert_with_key(|nodes| {
                chains.push(nodes.clone());
                uses.push(0);
                (chains.len() - 1) as u16
            });
            uses[usize::from(entry)] += count;
            for slot in range.start..=range.end.min(SLOTS - 1) {
                chain_of[slot as usize] = entry;
            }
        }
        let shortest = chains.iter().map(|chain| chain.len() as u32).min().unwrap_or(0);
        let mut alone = Vec::new();
        for (entry, chain) in chains.iter().enumerate() {
            if let [node] = chain[..] {
                note_alone(&mut alone, node, entry as u16);
            }
        }
        SlotTable { chain_of, chains, uses, alone, shortest }
    }

    /// The master and replicas (node indices) serving `slot` (`slot < 16384`).
    #[inline]
    pub fn chain(&self, slot: u32) -> &[u32] {
        let index = self.chain_of.get(slot as usize).copied().unwrap_or(0);
        self.chains.get(usize::from(index)).map_or(&[], Vec::as_slice)
    }

    /// The chain of `slot` after `MOVED <slot>` to node `target`: `[target]`, one entry
    /// written. The entry of `[target]` is found by the node's index; a new entry is
    /// appended only when no chain is `[target]`. `false`, and nothing changed, when
    /// `slot` is out of range or the table has no room for another chain.
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    pub(crate) fn move_slot(&mut self, slot: u32, target: u32) -> bool {
        let Some(&old) = self.chain_of.get(slot as usize) else { return false };
        let found = self.alone.get(target as usize).copied().filter(|&entry| entry != u16::MAX);
        let entry = match found {
            Some(entry) => entry,
            None if self.chains.len() < usize::from(u16::MAX) => {
                let entry = self.chains.len() as u16;
                self.chains.push(vec![target]);
                self.uses.push(0);
                note_alone(&mut self.alone, target, entry);
                entry
            }
            None => return false,
        };
        if entry == old {
            return true;
        }
        self.uses[usize::from(old)] -= 1;
        self.uses[usize::from(entry)] += 1;
        self.chain_of[slot as usize] = entry;
        // A chain of one is as short as a chain can be.
        self.shortest = 1;
        true
    }

    /// Whether node `node` is in the chain of a slot whose chain is not `slot`'s.
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    pub(crate) fn serves_beyond(&self, node: u32, slot: u32) -> bool {
        let own = self.chain_of.get(slot as usize).map(|&entry| usize::from(entry));
        (self.chains.iter().zip(&self.uses).enumerate())
            .any(|(entry, (chain, &uses))| uses > 0 && Some(entry) != own && chain.contains(&node))
    }

    /// How many slots the chain of `slot` serves (1: `slot` alone).
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    pub(crate) fn chain_uses(&self, slot: u32) -> u32 {
        let index = self.chain_of.get(slot as usize).copied().unwrap_or(0);
        self.uses.get(usize::from(index)).copied().unwrap_or(0)
    }
}

/// Records `entry` as the chain `[node]` in `alone` (grown to hold `node`), unless a
/// chain `[node]` is already there: the first one found stays.
fn note_alone(alone: &mut Vec<u16>, node: u32, entry: u16) {
    let at = node as usize;
    if alone.len() <= at {
        alone.resize(at + 1, u16::MAX);
    }
    if alone[at] == u16::MAX {
        alone[at] = entry;
    }
}

impl Place for SlotTable {
    #[inline]
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(key_slot(key))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hashed = with_key_bytes(key, |bytes| {
            let tag = redis_hash_tag(bytes);
            Hashed {
                tagged: tag.len() != bytes.len(),
                ..Hashed::own("crc16-xmodem", tag, u64::from(crc16_xmodem(tag)))
            }
        });
        let slot = self.shard(hashing, key)?;
        Ok((Some(hashed), Hit::Slot { slot }, slot))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.chain(shard)[0]
    }

    fn replicas(&self, _hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        let slot = key_slot(key);
        let chain = self.chain(slot);
        if count as usize > chain.len() {
            return Err(Error::argument(format!(
                "slot {slot} has {} node(s) (master and replicas); {count} requested",
                chain.len()
            )));
        }
        out.extend_from_slice(&chain[..count as usize]);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.shortest
    }

    fn read_replica(&self, _hashing: &KeyHashing, key: Key<'_>, turn: u32) -> Result<u32> {
        Ok(chain_replica(self.chain(key_slot(key)), turn))
    }

    fn shard_chain(&self, shard: u32, out: &mut Vec<u32>) {
        out.extend_from_slice(self.chain(shard));
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..SLOTS
    }
}
