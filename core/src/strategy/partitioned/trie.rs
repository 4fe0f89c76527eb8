//! Bit trie over the hash space: extendible hashing's directory as a sharding function
//! (Fagin, Nievergelt, Pippenger & Strong, "Extendible Hashing: A Fast Access Method
//! for Dynamic Files", ACM TODS 1979), with Kademlia's XOR order for replicas
//! (Maymounkov & Mazières, "Kademlia", IPTPS 2002).
//!
//! **Algorithm.** The leaves of a binary trie are bit strings (*prefixes*), and each
//! leaf belongs to one node. A key walks the bits of its 64-bit hash from the most
//! significant down until the bits read so far are a leaf: that leaf is its shard and
//! the leaf's node its owner. Adding a node splits a leaf `p` into `p0` (keeping its
//! node) and `p1` (the new node); removing one merges its leaf back into its sibling.
//!
//! **The document.**
//!
//! ```json
//! {"type": "trie", "leaves": [{"prefix": "0", "node": "a"},
//!                             {"prefix": "10", "node": "b"},
//!                             {"prefix": "11", "node": "c"}]}
//! ```
//!
//! * A prefix is a string of `'0'` and `'1'`, most significant bit first, at most
//!   [`MAX_TRIE_DEPTH`] (64, the hash width) long
//!   (longer: `limit_exceeded`). The empty string is the root: a one-leaf trie.
//! * The leaves must cover the hash space exactly: no prefix is a prefix of another
//!   (*overlap*) and every hash has a leaf (no *gap*). This is Kraft's equality
//!   `sum 2^-|p| == 1` for a prefix-free set, checked exactly with integer interval
//!   arithmetic; errors name the overlapping leaf or the first uncovered prefix.
//! * **One leaf per node, one node per leaf.** "Leaves are nodes": every node of
//!   `nodes` owns exactly one leaf, so the node count is the leaf count. (A node that
//!   wants a bigger share holds a shorter prefix.)
//! * **Leaves are listed in trie order**, ascending by prefix (lexicographic order of
//!   the bit strings, which for a prefix-free set is the order of the hashes they
//!   cover). The shard of a key is the index of its leaf in this list, so
//!   `leaves[shard]` of the document is always the leaf; a list out of order is
//!   rejected rather than silently renumbered.
//! * Without `leaves`, the trie is the balanced one for `n` nodes, in node order: with
//!   `k = ceil(log2 n)`, the first `2^k - n` nodes get leaves of depth `k - 1` and the
//!   others depth `k` (3 nodes: `0`, `10`, `11`). The canonical form always lists the
//!   leaves.
//! * Weights are not supported (the share of a node is its leaf's size, `2^-depth`).
//!
//! **Guarantees.** A leaf of depth `d` holds `2^-d` of the hash space; with a
//! well-mixed 64-bit hash (the default SipHash) its share of keys is that, up to
//! sampling noise. A trie is perfectly balanced only when all leaves have the same
//! depth; the default trie's shares differ by at most a factor of 2. Splitting leaf
//! `p` moves exactly the keys whose hash starts with `p1`, about half of `p`'s keys,
//! all to the new node; no other key moves. Removing a node whose sibling is a leaf
//! moves exactly the removed node's keys, all to the sibling's node. When the sibling
//! is a subtree, the issue's rule applies: the whole parent subtree collapses into one
//! leaf, owned by the *survivor*, the sibling subtree's shallowest leaf (ties: the
//! first in trie order, so the fewest keys move); every other node of the subtree is
//! removed too and its keys move to the survivor (the operation reports them as
//! `removed_nodes`). Shards are leaf positions, so a split or a merge renumbers the
//! leaves after it; a leaf's identity is its prefix.
//!
//! **Replicas.** The owner, then the nodes of the other leaves nearest the key's hash
//! in the trie: in ascending XOR distance (Kademlia's metric) between the hash and the
//! leaf, which is a depth-first walk that at every level prefers the half matching the
//! hash's next bit. The second replica is therefore in the owner's sibling subtree:
//! when the sibling is a leaf, it is the node that takes the keys over if the owner
//! is removed. Leaves are distinct nodes, so any `count` up to the node count works.
//!
//! **Tie-breaks.** None are needed in routing (leaves are disjoint and cover every
//! hash); XOR distances of distinct leaves are distinct; the survivor of a collapse is
//! documented above.
//!
//! **Hash choice.** The walk reads the hash from bit 63. CRC32 hashes and identity
//! integer keys below 2^32 have their top 32 bits zero, so under them all keys fall
//! under the prefix of 32 zeros: use the default SipHash unless the keys are
//! themselves uniform 64-bit values.
//!
//! **Cost.** Lookup is a binary search over the sorted leaf starts, `O(log L)` for `L`
//! leaves (the same answer as walking the bits, `O(depth)`); memory 12 bytes per leaf.
//! `replicas(key, r)` walks `O(r * 64)` trie levels with a binary search each.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::limits::MAX_TRIE_DEPTH;
use crate::node::Node;
use crate::strategy::spec::{Place, Spec};

/// A trie prefix: the first `depth` bits of a hash, `0 <= depth <= 64`.
///
/// Ordered by `(start, depth)`: trie order (pre-order, a prefix before its extensions),
/// which for the leaves of a trie is the order of the hashes they cover.
///
/// # Example
/// ```
/// use shardroute::strategy::partitioned::trie::Prefix;
/// let prefix: Prefix = "10".parse().unwrap();
/// assert_eq!(prefix.depth(), 2);
/// assert_eq!(prefix.start(), 0x8000_0000_0000_0000);
/// assert_eq!(prefix.to_string(), "10");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Prefix {
    /// The prefix bits, left-aligned; the bits below `depth` are zero.
    bits: u64,
    depth: u8,
}

/// The mask of the first `depth` bits (`depth <= 64`).
#[inline]
fn mask(depth: u32) -> u64 {
    if depth == 0 {
        0
    } else {
        u64::MAX << (64 - depth.min(64))
    }
}

impl Prefix {
    /// The empty prefix: the root of the trie, covering every hash.
    pub const ROOT: Prefix = Prefix { bits: 0, depth: 0 };

    /// The prefix made of the first `depth` bits of `hash`, or `None` when `depth > 64`.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// let prefix = Prefix::of_hash(0xA000_0000_0000_0000, 3).unwrap();
    /// assert_eq!(prefix.to_string(), "101");
    /// assert_eq!(Prefix::of_hash(7, 65), None);
    /// ```
    pub fn of_hash(hash: u64, depth: u32) -> Option<Prefix> {
        if depth > MAX_TRIE_DEPTH {
            return None;
        }
        Some(Prefix { bits: hash & mask(depth), depth: depth as u8 })
    }

    /// The number of bits, `0..=64`.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// assert_eq!(Prefix::ROOT.depth(), 0);
    /// ```
    pub fn depth(self) -> u32 {
        u32::from(self.depth)
    }

    /// The smallest hash under this prefix: its bits followed by zeros.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// assert_eq!("11".parse::<Prefix>().unwrap().start(), 0xC000_0000_0000_0000);
    /// ```
    pub fn start(self) -> u64 {
        self.bits
    }

    /// Whether `hash` starts with this prefix.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// let prefix: Prefix = "1".parse().unwrap();
    /// assert!(prefix.contains(u64::MAX));
    /// assert!(!prefix.contains(0x7FFF_FFFF_FFFF_FFFF));
    /// ```
    pub fn contains(self, hash: u64) -> bool {
        hash & mask(self.depth()) == self.bits
    }

    /// Whether `other` extends this prefix (or equals it).
    pub fn covers(self, other: Prefix) -> bool {
        other.depth >= self.depth && self.contains(other.bits)
    }

    /// The child prefix with one more bit (`false`: 0, `true`: 1), or `None` at depth 64.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// let prefix: Prefix = "10".parse().unwrap();
    /// assert_eq!(prefix.child(true).unwrap().to_string(), "101");
    /// ```
    pub fn child(self, bit: bool) -> Option<Prefix> {
        if self.depth() >= MAX_TRIE_DEPTH {
            return None;
        }
        let bits = if bit { self.bits | (1 << (63 - self.depth())) } else { self.bits };
        Some(Prefix { bits, depth: self.depth + 1 })
    }

    /// The prefix without its last bit, or `None` for the root.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// assert_eq!("101".parse::<Prefix>().unwrap().parent().unwrap().to_string(), "10");
    /// assert_eq!(Prefix::ROOT.parent(), None);
    /// ```
    pub fn parent(self) -> Option<Prefix> {
        if self.depth == 0 {
            return None;
        }
        Prefix::of_hash(self.bits, self.depth() - 1)
    }

    /// The prefix with the last bit flipped, or `None` for the root.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::Prefix;
    /// assert_eq!("101".parse::<Prefix>().unwrap().sibling().unwrap().to_string(), "100");
    /// ```
    pub fn sibling(self) -> Option<Prefix> {
        if self.depth == 0 {
            return None;
        }
        Some(Prefix { bits: self.bits ^ (1 << (64 - self.depth())), depth: self.depth })
    }

    /// The size of the block of hashes under this prefix, `2^(64 - depth)`.
    fn size(self) -> u128 {
        1u128 << (64 - self.depth())
    }
}

/// Why a prefix string does not parse.
pub(crate) enum PrefixError {
    /// A character other than `0` or `1` at a position (in characters).
    Char { index: usize, found: char },
    /// More than 64 bits.
    TooLong { bits: usize },
}

pub(crate) fn parse_prefix(text: &str) -> core::result::Result<Prefix, PrefixError> {
    if let Some((index, found)) = text.chars().enumerate().find(|&(_, c)| c != '0' && c != '1') {
        return Err(PrefixError::Char { index, found });
    }
    if text.len() > MAX_TRIE_DEPTH as usize {
        return Err(PrefixError::TooLong { bits: text.len() });
    }
    let mut bits = 0u64;
    for (index, byte) in text.bytes().enumerate() {
        if byte == b'1' {
            bits |= 1 << (63 - index as u32);
        }
    }
    Ok(Prefix { bits, depth: text.len() as u8 })
}

impl PrefixError {
    fn message(&self) -> String {
        match self {
            PrefixError::Char { index, found } => {
                format!("bit {index} is {found:?}; a prefix is a string of '0' and '1', most significant bit first")
            }
            PrefixError::TooLong { bits } => {
                format!("{bits} bits; the trie depth limit is {MAX_TRIE_DEPTH} (the hash width)")
            }
        }
    }

    /// The error at `path`: `limit_exceeded` for a prefix too long, else `kind`.
    pub(crate) fn at(&self, path: &str, kind: ErrorKind) -> Error {
        match self {
            PrefixError::TooLong { .. } => Error::limit(format!("{path}: {}", self.message())),
            PrefixError::Char { .. } => Error::new(kind, format!("{path}: {}", self.message())),
        }
    }
}

impl core::str::FromStr for Prefix {
    type Err = Error;

    /// Parses a string of `'0'` and `'1'`, most significant bit first: `invalid_argument`
    /// for another character, `limit_exceeded` past 64 bits.
    fn from_str(text: &str) -> Result<Prefix> {
        parse_prefix(text).map_err(|err| err.at("prefix", ErrorKind::InvalidArgument))
    }
}

impl fmt::Display for Prefix {
    /// The bit string, most significant bit first (empty for the root).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for index in 0..self.depth() {
            let bit = (self.bits >> (63 - index)) & 1;
            f.write_str(if bit == 1 { "1" } else { "0" })?;
        }
        Ok(())
    }
}

/// A leaf of the trie: a prefix and the index of the node owning it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrieLeaf {
    /// The leaf's prefix.
    pub prefix: Prefix,
    /// The index in `nodes` of the node owning the leaf.
    pub node: u32,
}

/// `{"type": "trie", "leaves": [{"prefix": "0", "node": "a"}, ...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrieSpec {
    /// The leaves in trie order: prefix-free, covering every hash, one per node.
    pub leaves: Vec<TrieLeaf>,
}

impl TrieSpec {
    /// The balanced trie of `count` nodes in node order (the document's default): with
    /// `k = ceil(log2 count)`, the first `2^k - count` nodes get depth `k - 1`, the
    /// rest depth `k`. An empty list for `count == 0`.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::trie::TrieSpec;
    /// let spec = TrieSpec::balanced(3);
    /// let prefixes: Vec<String> = spec.leaves.iter().map(|leaf| leaf.prefix.to_string()).collect();
    /// assert_eq!(prefixes, ["0", "10", "11"]);
    /// ```
    pub fn balanced(count: u32) -> TrieSpec {
        let depth = if count <= 1 { 0 } else { 32 - (count - 1).leading_zeros() };
        let shallow = (1u64 << depth) - u64::from(count).min(1 << depth);
        let mut start: u128 = 0;
        let mut leaves = Vec::with_capacity(count as usize);
        for node in 0..count {
            let leaf_depth = if u64::from(node) < shallow { depth - 1 } else { depth };
            leaves.push(TrieLeaf { prefix: Prefix { bits: start as u64, depth: leaf_depth as u8 }, node });
            start += 1u128 << (64 - leaf_depth);
        }
        TrieSpec { leaves }
    }

    /// The index of the leaf whose prefix is `prefix`, if it is a leaf.
    pub(crate) fn leaf_index(&self, prefix: Prefix) -> Option<usize> {
        self.leaves.binary_search_by(|leaf| leaf.prefix.cmp(&prefix)).ok()
    }
}

impl Spec for TrieSpec {
    const TYPE: &'static str = "trie";
    const FIELDS: &'static [&'static str] = &["type", "leaves"];
    type Placement = Trie;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<TrieSpec> {
        let Some(value) = object.optional("leaves") else {
            return Ok(TrieSpec::balanced(nodes.len() as u32));
        };
        let path = object.path_of("leaves");
        let entries = json::array(&path, value)?;
        let mut ids: Vec<(&str, u32)> =
            nodes.iter().enumerate().map(|(i, node)| (node.id.as_str(), i as u32)).collect();
        ids.sort_unstable();
        let mut leaves = Vec::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let leaf = Object::new(&format!("{path}[{index}]"), entry, &["prefix", "node"])?;
            let prefix_path = leaf.path_of("prefix");
            let text = json::str(&prefix_path, leaf.required("prefix")?)?;
            let prefix = parse_prefix(text).map_err(|err| err.at(&prefix_path, ErrorKind::InvalidTopology))?;
            let node_path = leaf.path_of("node");
            let id = json::str(&node_path, leaf.required("node")?)?;
            let node = match ids.binary_search_by(|(candidate, _)| (*candidate).cmp(id)) {
                Ok(position) => ids[position].1,
                Err(_) => return Err(json::at(&node_path, format_args!("names node {id:?}, which is not in nodes"))),
            };
            leaves.push(TrieLeaf { prefix, node });
        }
        Ok(TrieSpec { leaves })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        validate("strategy.leaves", &self.leaves, nodes)
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        let leaves = self
            .leaves
            .iter()
            .map(|leaf| {
                let mut entry = Map::new();
                entry.put("prefix", Value::String(leaf.prefix.to_string()));
                let id = nodes.get(leaf.node as usize).map(|node| node.id.clone()).unwrap_or_default();
                entry.put("node", Value::String(id));
                Value::Object(entry)
            })
            .collect();
        object.put("leaves", Value::Array(leaves));
    }

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<Trie> {
        // A spec built in code skips `parse`: check it again so lookups cannot fail.
        validate("strategy.leaves", &self.leaves, nodes)?;
        Ok(Trie {
            starts: self.leaves.iter().map(|leaf| leaf.prefix.start()).collect(),
            owners: self.leaves.iter().map(|leaf| leaf.node).collect(),
        })
    }
}

/// Checks that `leaves` (in document order) are one per node, cover the hash space
/// exactly, and are listed in trie order.
fn validate(path: &str, leaves: &[TrieLeaf], nodes: &[Node]) -> Result<()> {
    let mut owned: Vec<Option<usize>> = vec![None; nodes.len()];
    for (index, leaf) in leaves.iter().enumerate() {
        let node_path = format!("{path}[{index}].node");
        let Some(slot) = owned.get_mut(leaf.node as usize) else {
            return Err(json::at(&node_path, format_args!("node index {} is not in nodes", leaf.node)));
        };
        if let Some(other) = *slot {
            return Err(json::at(
                &node_path,
                format_args!(
                    "node {:?} already owns leaves[{other}]; every node owns exactly one leaf",
                    nodes[leaf.node as usize].id
                ),
            ));
        }
        *slot = Some(index);
    }
    check_cover(path, leaves)?;
    if let Some(missing) = owned.iter().position(Option::is_none) {
        return Err(json::at(
            path,
            format_args!(
                "node {:?} (nodes[{missing}]) owns no leaf; every node owns exactly one leaf",
                nodes[missing].id
            ),
        ));
    }
    Ok(())
}

/// Checks that the prefixes tile `[0, 2^64)`: sorted by start, each leaf begins where
/// the previous one ends (else an overlap or a gap), the last ends at `2^64`; then that
/// the document lists them in that order.
fn check_cover(path: &str, leaves: &[TrieLeaf]) -> Result<()> {
    if leaves.is_empty() {
        return Err(json::at(path, "a trie needs at least one leaf (\"\" is the whole key space)"));
    }
    let mut sorted: Vec<(Prefix, usize)> = leaves.iter().enumerate().map(|(i, leaf)| (leaf.prefix, i)).collect();
    sorted.sort_unstable();
    let mut covered: u128 = 0;
    let mut previous: Option<(Prefix, usize)> = None;
    for &(prefix, index) in &sorted {
        let start = u128::from(prefix.start());
        if start < covered {
            // Every earlier leaf tiles [0, covered): this one starts inside the last.
            if let Some((other, other_index)) = previous {
                let (later, earlier) = if index > other_index { (index, other_index) } else { (other_index, index) };
                let relation = if other == prefix { "repeats" } else { "overlaps" };
                return Err(json::at(
                    &format!("{path}[{later}].prefix"),
                    format_args!(
                        "overlap: \"{}\" {relation} leaves[{earlier}] \"{}\"; \
                         leaves must be prefix-free (no prefix may start another)",
                        leaves[later].prefix, leaves[earlier].prefix,
                    ),
                ));
            }
        }
        if start > covered {
            return Err(gap(path, covered, start));
        }
        covered = start + prefix.size();
        previous = Some((prefix, index));
    }
    if covered < 1u128 << 64 {
        return Err(gap(path, covered, 1u128 << 64));
    }
    if let Some((position, &(prefix, _))) = sorted.iter().enumerate().find(|&(position, &(_, index))| position != index)
    {
        return Err(json::at(
            &format!("{path}[{position}].prefix"),
            format_args!(
                "leaves must be listed in trie order (ascending prefix, the shard is the position); \
                 leaves[{position}] should be \"{prefix}\", found \"{}\"",
                leaves[position].prefix
            ),
        ));
    }
    Ok(())
}

/// The error for uncovered hashes `[from, to)`: names the largest prefix starting at `from`.
fn gap(path: &str, from: u128, to: u128) -> Error {
    let prefix = (0..=MAX_TRIE_DEPTH)
        .map(|depth| Prefix { bits: from as u64, depth: depth as u8 })
        .find(|prefix| from.is_multiple_of(prefix.size()) && from + prefix.size() <= to)
        .unwrap_or(Prefix::ROOT);
    json::at(path, format_args!("gap: no leaf covers prefix \"{prefix}\"; the leaves must cover every hash"))
}

/// A compiled trie: the sorted leaf starts and, in parallel, the node owning each.
#[derive(Clone, Debug)]
pub struct Trie {
    starts: Vec<u64>,
    owners: Vec<u32>,
}

impl Trie {
    /// The leaf (shard) of `hash`: the last leaf starting at or before it.
    #[inline]
    fn leaf_of(&self, hash: u64) -> u32 {
        self.starts.partition_point(|&start| start <= hash).saturating_sub(1) as u32
    }

    /// The nodes of the leaves in ascending XOR distance from `hash`, into `out`, until
    /// it holds `count`: a depth-first walk preferring, at each level, the half of the
    /// subtree that matches the hash's bit there.
    fn nearest(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        // Subtrees as (first leaf, end, depth); at most one pending sibling per level.
        let mut stack = [(0u32, 0u32, 0u32); MAX_TRIE_DEPTH as usize + 2];
        stack[0] = (0, self.starts.len() as u32, 0);
        let mut top = 1;
        while top > 0 && out.len() < count as usize {
            top -= 1;
            let (lo, hi, depth) = stack[top];
            if hi <= lo {
                continue;
            }
            if hi - lo == 1 || depth >= MAX_TRIE_DEPTH {
                out.extend_from_slice(&self.owners[lo as usize..hi as usize]);
                continue;
            }
            let bit = 1u64 << (63 - depth);
            let mid = lo + self.starts[lo as usize..hi as usize].partition_point(|&start| start & bit == 0) as u32;
            let (near, far) = if hash & bit == 0 { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
            if top + 2 > stack.len() {
                break;
            }
            stack[top] = (far.0, far.1, depth + 1);
            stack[top + 1] = (near.0, near.1, depth + 1);
            top += 2;
        }
        out.truncate(count as usize);
    }
}

impl Place for Trie {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.leaf_of(hashing.hash(key)))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hashed = Hashed::of(hashing, key);
        let leaf = self.leaf_of(hashed.value);
        // A leaf spans a power of two of hashes, up to the next leaf's start: its depth is
        // the bits that size leaves fixed.
        let start = self.starts[leaf as usize];
        let depth = match self.starts.get(leaf as usize + 1) {
            Some(&next) => (next - start).leading_zeros() + 1,
            None if start == 0 => 0,
            None => start.wrapping_neg().leading_zeros() + 1,
        };
        let prefix = Prefix::of_hash(start, depth).unwrap_or(Prefix::ROOT).to_string();
        Ok((Some(hashed), Hit::Leaf { prefix }, leaf))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.owners[shard as usize]
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        self.nearest(hashing.hash(key), count, out);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.owners.len() as u32
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.owners.len() as u32
    }
}
