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
//! cluster's `CLUSTER SLOTS` or `CLUSTER SHARDS` reply (see [`import_slots`] and
//! [`import_shards`]).
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
use crate::hash::crc16_xmodem;
use crate::hashing::{redis_hash_tag, KeyHashing};
use crate::json::{self, Object};
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::ops::{next_epoch, operation_object};
use crate::strategy::spec::{Place, Spec};
use crate::strategy::Strategy;
use crate::topology::Topology;

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
        Key::U64(value) => {
            // u64::MAX has 20 digits; digits never contain `{`, so no tag applies.
            let mut buffer = [0u8; 20];
            let mut start = buffer.len();
            let mut rest = value;
            loop {
                start -= 1;
                buffer[start] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            u32::from(crc16_xmodem(&buffer[start..])) & (SLOTS - 1)
        }
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
    const WEIGHTED: bool = false;
    type Placement = SlotTable;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<RedisClusterSpec> {
        let slots = match object.optional("slots") {
            Some(value) => Some(parse_slots(&object.path_of("slots"), value, nodes)?),
            None => {
                if nodes.len() as u64 > u64::from(SLOTS) || create_split(nodes.len() as u32).is_none() {
                    return Err(json::at(
                        &object.path_of("slots"),
                        format_args!(
                            "redis-cli's split cannot give each of {} masters a slot (its single-precision steps overrun slot 16383); list the slot ranges",
                            nodes.len()
                        ),
                    ));
                }
                None
            }
        };
        Ok(RedisClusterSpec { slots })
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        let ranges = self.ranges(nodes.len() as u32);
        let rows = ranges
            .iter()
            .map(|range| {
                let mut row = Map::new();
                row.insert("start".into(), range.start.into());
                row.insert("end".into(), range.end.into());
                let ids = range.nodes.iter().map(|&i| Value::String(nodes[i as usize].id.clone())).collect();
                row.insert("nodes".into(), Value::Array(ids));
                Value::Object(row)
            })
            .collect();
        object.insert("slots".into(), Value::Array(rows));
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

/// A compiled slot map: slot → range, ranges → nodes.
#[derive(Clone, Debug)]
pub struct SlotTable {
    /// `ranges[range_of[slot]]` holds `slot`.
    range_of: Vec<u16>,
    ranges: Vec<SlotRange>,
    shortest: u32,
}

impl SlotTable {
    fn new(ranges: Vec<SlotRange>) -> SlotTable {
        let mut range_of = vec![0u16; SLOTS as usize];
        for (index, range) in ranges.iter().enumerate() {
            for slot in range.start..=range.end {
                range_of[slot as usize] = index as u16;
            }
        }
        let shortest = ranges.iter().map(|range| range.nodes.len() as u32).min().unwrap_or(0);
        SlotTable { range_of, ranges, shortest }
    }

    /// The master and replicas (node indices) serving `slot` (`slot < 16384`).
    pub fn chain(&self, slot: u32) -> &[u32] {
        let index = self.range_of.get(slot as usize).copied().unwrap_or(0);
        &self.ranges[usize::from(index)].nodes
    }
}

impl Place for SlotTable {
    #[inline]
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(key_slot(key))
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

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..SLOTS
    }
}

// ---------------------------------------------------------------------------------
// Importing CLUSTER SLOTS and CLUSTER SHARDS replies.

/// A node read from a reply: id, `host:port`, whether the reply marks it failed.
struct ReplyNode {
    id: String,
    address: String,
    failed: bool,
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

/// `{"op": "import_redis_cluster_slots", "reply": [...]}`: turns any topology into a
/// `redis_cluster` one from a `CLUSTER SLOTS` reply, written as JSON arrays:
/// `[[start, end, [host, port, id, ...], [replica host, port, id, ...], ...], ...]`.
///
/// Each entry becomes one slot range; its nodes are the master, then the replicas in
/// reply order. Node ids are the reply's node ids (third element; Redis 4.0+), the
/// address `host:port` (`[host]:port` when the host holds a `:`); elements after the id
/// (Redis 7's metadata) are ignored. Topology nodes are the reply's nodes in order of
/// first appearance; an existing node with the same id keeps its other fields (zone,
/// state, weight) and takes the new address. `hashing` is reset to the default and the
/// epoch advances by one. Reports `added` and `removed` (node ids) and `ranges`.
/// Errors: `invalid_argument` for a malformed reply or one whose ranges do not cover
/// every slot exactly once (a cluster in the middle of a failure).
pub(crate) fn import_slots(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "reply"])?;
    let reply = reply_array("operation.reply", object.required("reply").map_err(argument)?)?;
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
    build(topology, found, ranges)
}

/// `{"op": "import_redis_cluster_shards", "reply": [...]}`: turns any topology into a
/// `redis_cluster` one from a `CLUSTER SHARDS` reply (Redis 7.0+). Each shard is an
/// object `{"slots": [start, end, ...], "nodes": [{"id", "ip", "endpoint", "port",
/// "role", "health", ...}]}` or the RESP2 flat `["slots", [...], "nodes", [...]]` form
/// (nodes likewise); `slots` may also be a list of `[start, end]` pairs.
///
/// Each `[start, end]` pair of a shard becomes one slot range served by the shard's
/// `master`, then its replicas in reply order. A node's address is its `endpoint` (or
/// `ip` when the endpoint is missing, empty or `?`) and `port` (or `tls-port`); a node
/// whose `health` is `failed` gets `"state": "failed"`. Shards without slots still add
/// their nodes. Otherwise as [`import_slots`]: node order, kept fields, `hashing`,
/// epoch, report and errors.
pub(crate) fn import_shards(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "reply"])?;
    let reply = reply_array("operation.reply", object.required("reply").map_err(argument)?)?;
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
    build(topology, found, ranges)
}

fn remember(found: &mut Vec<ReplyNode>, node: ReplyNode) {
    if !found.iter().any(|known| known.id == node.id) {
        found.push(node);
    }
}

/// Reply errors are the caller's argument; limits stay limits.
fn argument(err: Error) -> Error {
    match err.kind() {
        crate::error::ErrorKind::LimitExceeded => err,
        _ => Error::argument(String::from(err.message())),
    }
}

/// The new document: the reply's nodes (keeping known nodes' other fields), the slot
/// ranges, default hashing, next epoch.
fn build(
    topology: &Topology,
    found: Vec<ReplyNode>,
    ranges: Vec<(u32, u32, Vec<String>)>,
) -> Result<(Topology, Map<String, Value>)> {
    if found.is_empty() {
        return Err(Error::argument("operation.reply: the reply names no node"));
    }
    let mut document = topology.to_value();
    let old: Vec<Value> = match document.get("nodes") {
        Some(Value::Array(entries)) => entries.clone(),
        _ => Vec::new(),
    };
    let mut nodes = Vec::with_capacity(found.len());
    let mut added = Vec::new();
    for node in &found {
        let mut entry = match old.iter().find(|entry| entry.get("id").and_then(Value::as_str) == Some(node.id.as_str()))
        {
            Some(Value::Object(entry)) => entry.clone(),
            _ => {
                added.push(Value::String(node.id.clone()));
                let mut entry = Map::new();
                entry.insert("id".into(), Value::String(node.id.clone()));
                entry
            }
        };
        entry.insert("address".into(), Value::String(node.address.clone()));
        if node.failed {
            entry.insert("state".into(), "failed".into());
        } else if entry.get("state").and_then(Value::as_str) == Some("failed") {
            // The reply says it serves again.
            entry.remove("state");
        }
        nodes.push(Value::Object(entry));
    }
    let removed: Vec<Value> = topology
        .nodes
        .iter()
        .filter(|node| !found.iter().any(|known| known.id == node.id))
        .map(|node| Value::String(node.id.clone()))
        .collect();
    let count = ranges.len();
    let rows = ranges
        .into_iter()
        .map(|(start, end, chain)| {
            let mut row = Map::new();
            row.insert("start".into(), start.into());
            row.insert("end".into(), end.into());
            row.insert("nodes".into(), Value::Array(chain.into_iter().map(Value::String).collect()));
            Value::Object(row)
        })
        .collect();
    let mut strategy = Map::new();
    strategy.insert("type".into(), RedisClusterSpec::TYPE.into());
    strategy.insert("slots".into(), Value::Array(rows));
    if let Value::Object(map) = &mut document {
        map.insert("nodes".into(), Value::Array(nodes));
        map.insert("strategy".into(), Value::Object(strategy));
        map.remove("hashing");
        map.insert("epoch".into(), json::u64_value(next_epoch(topology)?));
    }
    // A reply that does not cover every slot once is the caller's argument.
    let next = Topology::from_value(&document).map_err(|err| match err.kind() {
        crate::error::ErrorKind::LimitExceeded => err,
        _ => Error::argument(format!("the reply does not make a valid redis_cluster topology: {}", err.message())),
    })?;
    debug_assert!(matches!(next.strategy, Strategy::RedisCluster(_)));
    let mut report = Map::new();
    report.insert("added".into(), Value::Array(added));
    report.insert("removed".into(), Value::Array(removed));
    report.insert("ranges".into(), Value::from(count as u64));
    Ok((next, report))
}
