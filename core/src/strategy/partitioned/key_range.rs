//! Key-range sharding: sorted boundaries over raw keys, as in Bigtable's tablets
//! (Chang et al., OSDI 2006), HBase regions, CockroachDB and TiKV ranges, and MongoDB's
//! range-sharded chunks.
//!
//! **Algorithm.** `N` strictly increasing boundary keys cut the key space into `N + 1`
//! ranges `[-inf, b0), [b0, b1), ..., [b(N-1), +inf)`, and `ranges[i]` names the node
//! that owns range `i` (a node may own many). Keys are not hashed: the shard of a key is
//! its range index, the number of boundaries at or below it, found by binary search.
//!
//! **Key order.** Byte strings compare lexicographically, byte by byte, a proper prefix
//! first (`"ab" < "abc" < "b"`, `memcmp` order). An integer key compares as its 8
//! big-endian bytes, so numeric order is key order and `42u64` routes exactly like
//! `{"hex": "000000000000002a"}`. Integer and byte keys share this one order (every
//! integer below 2^56 sorts before `"a"`, its first byte being 0); use one kind per
//! topology. [`compare_keys`] is the order.
//!
//! **Hashing.** None: the topology's `hashing` section is not used for routing, and its
//! `hash_tag` must be `"none"`. A Redis hash tag co-locates keys that are far apart in
//! key order, which a range table cannot do without breaking range scans, so a
//! `key_range` document with `"hash_tag": "redis"` is rejected when a router is built
//! (`invalid_topology` at `hashing.hash_tag`) rather than silently ignored. For hashed
//! ranges use [`hash_range`](crate::strategy::partitioned::hash_range). A
//! `partition_key` rule ([`crate::hashing`]) applies: the boundaries are partition keys,
//! a key routes by its partition key, and a scan within one partition key (a sensor's
//! readings over time, under `{"rule": "prefix", "separator": ":"}`) visits its one
//! range. A rule need not keep key order (the prefix of `a:1` sorts after that of
//! `a0`), so a scan that spans partition keys visits every range, gathered by merging.
//!
//! **Guarantees.** Locality: a scan over `[start, end)` visits only the ranges that
//! overlap it ([`Router::shards_for_range`](crate::Router::shards_for_range)), in key
//! order. Routing equals the table exactly, and only operations move keys, exactly the
//! ones they name (see [`ranges`]): a split moves nothing unless its
//! upper half gets another node, and then only the keys at or above the split point; a
//! merge moves only the second range's keys; adding or removing a node moves nothing by
//! itself. Balance is that of the boundaries: keys are not hashed, so sequential keys
//! (timestamps, auto-increment ids) all land in the last range; place boundaries from a
//! sample of real keys with `range_split_median` / `range_presplit`.
//!
//! **Replicas** are the owner, then the next nodes in node-list order, wrapping (as for
//! `modulo`): a range's replicas do not depend on its neighbours, so operations on other
//! ranges never change them. Every key gets up to the node count of replicas. Weights
//! are not supported (ranges are assigned explicitly).
//!
//! **The document.**
//!
//! ```json
//! {"type": "key_range", "boundaries": [{"utf8": "g"}, {"hex": "70ff"}], "ranges": ["a", "b", "a"]}
//! ```
//!
//! | field | type | default | meaning |
//! |---|---|---|---|
//! | `boundaries` | array of key objects, at most 2^20 - 1 | `[]` | strictly increasing in key order; not the empty key (range 0 would be empty); each at most 4096 bytes |
//! | `ranges` | array of node ids, one more than `boundaries` | round-robin over `nodes` | the owner of each range |
//!
//! A key object is `{"utf8": "text"}`, `{"hex": "00ff"}` (either case) or
//! `{"u64": "42"}` (decimal string or number; its 8 big-endian bytes). The canonical
//! form writes a boundary given as `u64` as `{"u64": "<decimal>"}`, and any other as
//! `{"utf8": ...}` when its bytes are valid UTF-8 without control characters, else as
//! `{"hex": ...}` in lowercase. Two documents whose boundaries differ only in spelling
//! route identically.
//!
//! **Cost.** `O(log N)` boundary comparisons per key, each up to the key's length; no
//! allocation. Memory: the boundary bytes plus 8 bytes per range.
//!
//! # Example
//! ```
//! use shardroute::Router;
//! let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
//!     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
//!     "strategy": {"type": "key_range", "boundaries": [{"utf8": "g"}, {"utf8": "p"}],
//!                  "ranges": ["a", "b", "c"]}}"#)?;
//! assert_eq!(router.node("apple")?, "a");
//! assert_eq!(router.route("g")?, 1); // a boundary starts its range
//! assert_eq!(router.node("zebra")?, "c");
//! assert_eq!(router.shards_for_range("b", Some("h".into()))?, [0, 1]);
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::{HashTag, KeyHashing, PartitionKey};
use crate::json::{self, Object, Put as _};
use crate::key::{Key, OwnedKey};
use crate::limits;
use crate::node::Node;
use crate::strategy::partitioned::ranges::{self, Position, RangePoint};
use crate::strategy::spec::{renumber, still_named, Place, Spec};

/// `{"type": "key_range", "boundaries": [...], "ranges": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRangeSpec {
    /// The `N` boundary keys, strictly increasing in [`compare_keys`] order.
    pub boundaries: Vec<OwnedKey>,
    /// The owner (node index) of each of the `N + 1` ranges.
    pub ranges: Vec<u32>,
}

impl KeyRangeSpec {
    fn check_table(&self, node_count: usize) -> Result<()> {
        for (index, boundary) in self.boundaries.iter().enumerate() {
            let length = ordered_bytes(boundary.as_key()).as_slice().len();
            if length > limits::MAX_RANGE_KEY_BYTES as usize {
                return Err(Error::limit(format!(
                    "strategy.boundaries[{index}]: {length} bytes; the limit is {}",
                    limits::MAX_RANGE_KEY_BYTES
                )));
            }
        }
        ranges::check_table(
            self.boundaries.len(),
            &self.ranges,
            node_count,
            |index| self.boundaries[index].as_key(),
            |a, b| compare_keys(*a, *b) == Ordering::Less,
            &Key::Bytes(&[]),
        )
    }
}

impl Spec for KeyRangeSpec {
    const TYPE: &'static str = "key_range";
    const FIELDS: &'static [&'static str] = &["type", "boundaries", "ranges"];
    type Placement = KeyRanges;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<KeyRangeSpec> {
        let boundaries = match object.optional("boundaries") {
            Some(value) => ranges::parse_boundaries(&object.path_of("boundaries"), value, parse_key)?,
            None => Vec::new(),
        };
        let ranges = match object.optional("ranges") {
            Some(value) => ranges::parse_owner_ids(&object.path_of("ranges"), value, nodes)?,
            None => ranges::round_robin(boundaries.len() + 1, nodes.len()),
        };
        let spec = KeyRangeSpec { boundaries, ranges };
        Ok(spec)
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        self.check_table(nodes.len())
    }

    fn follows_node_list(&self) -> bool {
        // Tables name nodes by id: a new node owns nothing until a range moves to it.
        true
    }

    fn node_removed(&mut self, index: u32, nodes: &[Node]) -> Result<()> {
        renumber(&mut self.ranges, index)
            .map_err(|range| still_named(&format!("strategy.ranges[{range}]"), nodes, index))
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("boundaries", Value::Array(self.boundaries.iter().map(key_value).collect()));
        object.put("ranges", owner_ids(&self.ranges, nodes));
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<KeyRanges> {
        if hashing.hash_tag != HashTag::None {
            return Err(json::at(
                "hashing.hash_tag",
                "the key_range strategy routes raw keys in byte order, so a hash tag cannot apply; \
                 use \"none\" (or the hash_range strategy to co-locate tagged keys)",
            ));
        }
        self.check_table(nodes.len())?;
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(self.boundaries.len());
        for boundary in &self.boundaries {
            bytes.extend_from_slice(ordered_bytes(boundary.as_key()).as_slice());
            let end = u32::try_from(bytes.len())
                .map_err(|_| Error::limit("strategy.boundaries: more than 4 GiB of boundary keys"))?;
            ends.push(end);
        }
        Ok(KeyRanges { bytes, ends, owners: self.ranges.clone(), node_count: nodes.len() as u32 })
    }
}

/// Writes node indices as their ids (the `ranges` field of both range strategies).
pub(crate) fn owner_ids(ranges: &[u32], nodes: &[Node]) -> Value {
    Value::Array(
        ranges
            .iter()
            .map(|&index| nodes.get(index as usize).map_or(Value::Null, |node| Value::String(node.id.clone())))
            .collect(),
    )
}

/// The order of `key_range`: byte strings lexicographically (a proper prefix first), an
/// integer as its 8 big-endian bytes.
///
/// # Example
/// ```
/// use core::cmp::Ordering;
/// use shardroute::strategy::partitioned::key_range::compare_keys;
/// use shardroute::Key;
/// assert_eq!(compare_keys(Key::from("ab"), Key::from("abc")), Ordering::Less);
/// assert_eq!(compare_keys(Key::U64(255), Key::U64(256)), Ordering::Less);
/// assert_eq!(compare_keys(Key::U64(1), Key::Bytes(&[0, 0, 0, 0, 0, 0, 0, 1])), Ordering::Equal);
/// ```
pub fn compare_keys(a: Key<'_>, b: Key<'_>) -> Ordering {
    ordered_bytes(a).as_slice().cmp(ordered_bytes(b).as_slice())
}

/// A key's bytes in key order: borrowed bytes, or an integer's big-endian bytes.
pub(crate) enum OrderedBytes<'a> {
    Bytes(&'a [u8]),
    Integer([u8; 8]),
}

impl OrderedBytes<'_> {
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            OrderedBytes::Bytes(bytes) => bytes,
            OrderedBytes::Integer(bytes) => bytes,
        }
    }
}

pub(crate) fn ordered_bytes(key: Key<'_>) -> OrderedBytes<'_> {
    match key {
        Key::Bytes(bytes) => OrderedBytes::Bytes(bytes),
        Key::U64(value) => OrderedBytes::Integer(value.to_be_bytes()),
    }
}

/// Reads a key object: `{"utf8": text}`, `{"hex": digits}` or `{"u64": integer}`
/// (`invalid_topology` naming the field).
pub(crate) fn parse_key(path: &str, value: &Value) -> Result<OwnedKey> {
    let object = Object::new(path, value, &["utf8", "hex", "u64"])?;
    let forms = ["utf8", "hex", "u64"].iter().filter(|form| object.optional(form).is_some()).count();
    if forms != 1 {
        return Err(json::at(path, "a key object has exactly one of the fields utf8, hex, u64"));
    }
    if let Some(text) = object.optional("utf8") {
        return Ok(OwnedKey::Bytes(json::str(&object.path_of("utf8"), text)?.as_bytes().to_vec()));
    }
    if let Some(integer) = object.optional("u64") {
        return json::u64(&object.path_of("u64"), integer).map(OwnedKey::U64);
    }
    let field = object.path_of("hex");
    let digits = json::str(&field, object.required("hex")?)?.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(json::at(&field, "expected an even number of hex digits"));
    }
    let nibble = |digit: u8| -> Result<u8> {
        match digit {
            b'0'..=b'9' => Ok(digit - b'0'),
            b'a'..=b'f' => Ok(digit - b'a' + 10),
            b'A'..=b'F' => Ok(digit - b'A' + 10),
            _ => Err(json::at(&field, format_args!("{:?} is not a hex digit", char::from(digit)))),
        }
    };
    digits
        .chunks(2)
        .map(|pair| Ok(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect::<Result<Vec<u8>>>()
        .map(OwnedKey::Bytes)
}

/// The canonical key object of a key (see the module docs).
pub(crate) fn key_value(key: &OwnedKey) -> Value {
    let mut object = Map::new();
    match key {
        OwnedKey::U64(value) => {
            object.insert("u64".into(), Value::String(format!("{value}")));
        }
        OwnedKey::Bytes(bytes) => match core::str::from_utf8(bytes) {
            Ok(text) if !text.chars().any(char::is_control) => {
                object.insert("utf8".into(), Value::String(String::from(text)));
            }
            _ => {
                const DIGITS: &[u8; 16] = b"0123456789abcdef";
                let hex: String = bytes
                    .iter()
                    .flat_map(|byte| [DIGITS[(byte >> 4) as usize], DIGITS[(byte & 15) as usize]])
                    .map(char::from)
                    .collect();
                object.put("hex", Value::String(hex));
            }
        },
    }
    Value::Object(object)
}

/// A key as a position of the range operations: ordered by [`compare_keys`], equal when
/// the bytes are (`42u64` and its 8 bytes are one position).
#[derive(Clone, Debug)]
pub(crate) struct KeyPosition(pub(crate) OwnedKey);

impl PartialEq for KeyPosition {
    fn eq(&self, other: &KeyPosition) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for KeyPosition {}

impl PartialOrd for KeyPosition {
    fn partial_cmp(&self, other: &KeyPosition) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyPosition {
    fn cmp(&self, other: &KeyPosition) -> Ordering {
        compare_keys(self.0.as_key(), other.0.as_key())
    }
}

impl Position for KeyPosition {
    fn from_point(point: &RangePoint) -> Option<KeyPosition> {
        match point {
            RangePoint::Key(key) => Some(KeyPosition(key.clone())),
            RangePoint::Hash(_) => None,
        }
    }

    fn to_value(&self) -> Value {
        key_value(&self.0)
    }

    fn lowest() -> KeyPosition {
        KeyPosition(OwnedKey::Bytes(Vec::new()))
    }

    fn of_key(hashing: &KeyHashing, key: Key<'_>) -> KeyPosition {
        KeyPosition(OwnedKey::from(hashing.routed(key)))
    }

    fn uniform(_count: u32) -> Option<Vec<KeyPosition>> {
        None
    }
}

/// Checks that a scan range is not empty: `end` after `start` in key order.
fn check_scan(start: Key<'_>, end: Option<Key<'_>>) -> Result<()> {
    match end {
        Some(end) if compare_keys(start, end) != Ordering::Less => Err(Error::argument(format!(
            "shards_for_range: end {} is not after start {} (the range is [start, end) in key order)",
            key_value(&OwnedKey::from(end)),
            key_value(&OwnedKey::from(start))
        ))),
        _ => Ok(()),
    }
}

/// A compiled key-range table: the boundary keys flattened, and one owner per range.
#[derive(Clone, Debug)]
pub struct KeyRanges {
    /// The boundaries' bytes, concatenated.
    bytes: Vec<u8>,
    /// `bytes[ends[i - 1]..ends[i]]` is boundary `i` (`ends[-1]` = 0).
    ends: Vec<u32>,
    /// The node index of each range.
    owners: Vec<u32>,
    node_count: u32,
}

impl KeyRanges {
    fn boundary(&self, index: usize) -> &[u8] {
        let start = if index == 0 { 0 } else { self.ends[index - 1] as usize };
        &self.bytes[start..self.ends[index] as usize]
    }

    /// The number of boundaries for which `below` holds (a prefix of them: `below` is
    /// monotone over sorted boundaries).
    fn count_below(&self, below: impl Fn(&[u8]) -> bool) -> u32 {
        let (mut low, mut high) = (0usize, self.ends.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if below(self.boundary(middle)) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low as u32
    }

    /// The range holding `key`: the number of boundaries `<= key`.
    #[inline]
    pub fn range_of(&self, key: Key<'_>) -> u32 {
        let key = ordered_bytes(key);
        self.count_below(|boundary| boundary <= key.as_slice())
    }

    /// The number of ranges.
    pub fn range_count(&self) -> u32 {
        self.owners.len() as u32
    }
}

impl Place for KeyRanges {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.range_of(hashing.routed(key)))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let range = self.range_of(hashing.routed(key));
        let start = (range > 0).then(|| self.boundary(range as usize - 1).to_vec());
        let end = ((range as usize) < self.ends.len()).then(|| self.boundary(range as usize).to_vec());
        Ok((None, Hit::KeyRange { range, start, end }, range))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.owners[shard as usize]
    }

    fn max_replicas(&self) -> u32 {
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.range_count()
    }

    fn range_is_contiguous(&self) -> bool {
        true
    }

    fn shards_for_range(&self, hashing: &KeyHashing, start: Key<'_>, end: Option<Key<'_>>) -> Result<Vec<u32>> {
        check_scan(start, end)?;
        if hashing.partition_key != PartitionKey::Whole {
            // Ranges hold partition keys, and a rule need not keep key order (`a0` sorts
            // before `a:1`, its prefix `a` after), so a scan that spans partition keys
            // visits every range (one partition key is one range: `Placement`).
            return Ok(self.shard_range().collect());
        }
        let first = self.range_of(start);
        let last = match end {
            // The last range holding a key below `end`: the number of boundaries `< end`.
            Some(end) => {
                let end = ordered_bytes(end);
                self.count_below(|boundary| boundary < end.as_slice())
            }
            None => self.range_count() - 1,
        };
        Ok((first..=last).collect())
    }
}
