//! Vitess vindexes and keyranges: the `vitess` compatibility profile, routing a
//! sharding-column value to the shard VTGate sends it to.
//!
//! **Algorithm.** A primary vindex maps the column value to an 8-byte *keyspace id*;
//! the keyspace is cut into shards by keyranges, and the shard is the one whose range
//! holds the keyspace id. Three vindexes are supported:
//!
//! | `vindex` | keyspace id | integer key | byte key |
//! |---|---|---|---|
//! | `hash` | DES (single DES = 3DES with an all-zero 24-byte key) of the id's 8 big-endian bytes | the id | decimal digits of a u64, parsed (`"42"`); anything else `invalid_key` |
//! | `xxhash` | XXH64 (seed 0) of the value's bytes, as 8 big-endian bytes | its decimal ASCII text (`42` hashes `"42"`) | the bytes |
//! | `numeric` | the id's 8 big-endian bytes | the id | decimal digits of a u64, parsed |
//!
//! An integer column reaches a Vitess vindex as an `sqltypes.Value` whose bytes are
//! its decimal text: `hash` and `numeric` parse it back to a `uint64`, `xxhash` hashes
//! the text itself. So an integer key and its decimal text route alike under every
//! vindex here, as in Vitess.
//!
//! A keyrange is written in Vitess notation `start-end`: lowercase or uppercase hex,
//! an empty side meaning the start or the end of the keyspace (`-80`, `80-c0`, `c0-`,
//! and `-` for all of it). It is half-open, `[start, end)`, compared byte by byte
//! with trailing zero bytes ignored (`80` and `8000` are the same boundary). The
//! document lists the shards in keyspace order and they must cover the keyspace
//! exactly: the first starts at the beginning, each starts where the one before ends,
//! the last runs to the end. A key's shard number is the index of its keyrange in that
//! list; its node is that shard's `node`; replicas are the owner, then the next nodes
//! in list order.
//!
//! Sources: Vitess 19 `go/vt/vtgate/vindexes/hash.go` (`vhash`: `des.NewTripleDESCipher`
//! over 24 zero bytes, `binary.BigEndian.PutUint64`), `xxhash.go` (`vXXHash`:
//! `xxhash.Sum64(id.ToBytes())` put big-endian), `numeric.go`,
//! `go/vt/key/key.go` (`KeyRangeContains`, `ParseShardingSpec`, trailing zeros in
//! `KeyRangeEqual`/`KeyRangeContiguous`). Checked against an independent DES
//! (PyPI `pycryptodome`) and XXH64 (PyPI `xxhash`) over more than 10,000 keys, and
//! against Vitess' own published `hash` vindex values (`hash_test.go`), in
//! `conformance/oracles/test_vitess.py`.
//!
//! **The document.**
//!
//! ```json
//! {"type": "vitess", "vindex": "hash",
//!  "shards": [{"name": "-80", "node": "a"}, {"name": "80-", "node": "b"}]}
//! ```
//!
//! `vindex` is required; `shards` lists `{"name", "node"}` objects (at least one, at
//! most [`limits::MAX_RANGES`]); each `node` is a node id. Node weights must stay 1
//! and the `hashing` section must be the default (the vindex fixes the hash;
//! `invalid_topology` at `hashing` otherwise). The canonical form writes names as given.
//!
//! **Tie-break.** None needed: keyranges that cover the keyspace exactly never
//! overlap, so every keyspace id has exactly one shard.
//!
//! **Cost.** One DES block (16 rounds), one XXH64 pass or nothing per key, then a
//! binary search over the `S` shard boundaries (`O(log S)`); memory 8 bytes per
//! boundary plus the names.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hash::Des;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::with_key_bytes;
use crate::key::{parse_decimal_u64, Key};
use crate::limits;
use crate::node::Node;
use crate::strategy::spec::{Place, Spec};

/// A primary vindex: how a column value becomes a keyspace id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Vindex {
    /// `hash`: DES with an all-zero key over the big-endian id.
    Hash,
    /// `xxhash`: XXH64, seed 0, of the value's bytes.
    Xxhash,
    /// `numeric`: the id's big-endian bytes.
    Numeric,
}

impl Vindex {
    /// The document spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Vindex::Hash => "hash",
            Vindex::Xxhash => "xxhash",
            Vindex::Numeric => "numeric",
        }
    }

    /// The keyspace id of a key, as a big-endian `u64` (its 8 bytes are the keyspace id).
    ///
    /// # Errors
    /// `invalid_key` for a byte key under `hash` or `numeric` that is not the decimal
    /// text of a u64 (Vitess cannot parse it either). Never panics.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::compat::vitess::Vindex;
    /// use shardroute::Key;
    /// // Vitess' hash_test.go: 1 -> 166b40b44aba4bd6.
    /// assert_eq!(Vindex::Hash.keyspace_id(Key::U64(1))?, 0x166b_40b4_4aba_4bd6);
    /// assert_eq!(Vindex::Hash.keyspace_id(Key::Bytes(b"1"))?, 0x166b_40b4_4aba_4bd6);
    /// assert_eq!(Vindex::Numeric.keyspace_id(Key::U64(0x80))?, 0x80);
    /// assert_eq!(Vindex::Xxhash.keyspace_id(Key::U64(1))?, Vindex::Xxhash.keyspace_id(Key::Bytes(b"1"))?);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn keyspace_id(self, key: Key<'_>) -> Result<u64> {
        self.keyspace_id_with(&Des::new(0), key)
    }

    /// As [`keyspace_id`](Vindex::keyspace_id), with the `hash` vindex's zero-key
    /// cipher made once by the caller (the key schedule costs more than the block).
    fn keyspace_id_with(self, zero_key: &Des, key: Key<'_>) -> Result<u64> {
        match self {
            Vindex::Hash => Ok(zero_key.encrypt(integer_of(key)?)),
            Vindex::Numeric => integer_of(key),
            Vindex::Xxhash => Ok(match key {
                Key::Bytes(bytes) => crate::hash::xxh64(bytes, 0),
                Key::U64(value) => {
                    let mut digits = [0u8; 20];
                    crate::hash::xxh64(crate::key::decimal(value, &mut digits), 0)
                }
            }),
        }
    }
}

/// The integer an integer vindex reads: the key itself, or a byte key's decimal text.
fn integer_of(key: Key<'_>) -> Result<u64> {
    match key {
        Key::U64(value) => Ok(value),
        Key::Bytes(bytes) => core::str::from_utf8(bytes).ok().and_then(parse_decimal_u64).ok_or_else(|| {
            Error::key(
                "the hash and numeric vindexes take an integer key or its decimal text (0..=18446744073709551615)",
            )
        }),
    }
}

/// One shard: its Vitess name and the node index serving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VitessShard {
    /// The shard name in Vitess notation (`-80`, `80-c0`, `c0-`), as written.
    pub name: String,
    /// The node index serving it.
    pub node: u32,
}

/// `{"type": "vitess", "vindex": "hash", "shards": [{"name": "-80", "node": "a"}, ...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VitessSpec {
    /// The primary vindex.
    pub vindex: Vindex,
    /// The shards in keyspace order, covering it exactly.
    pub shards: Vec<VitessShard>,
}

/// The `[start, end)` bounds of a shard name, as bytes (empty = open side), or `None`
/// for a name that is not `start-end` in hex with whole bytes (Vitess notation).
///
/// # Example
/// ```
/// use shardroute::strategy::compat::vitess::parse_shard_name;
/// assert_eq!(parse_shard_name("80-c0"), Some((vec![0x80], vec![0xc0])));
/// assert_eq!(parse_shard_name("-"), Some((vec![], vec![])));
/// assert_eq!(parse_shard_name("8-"), None); // odd number of hex digits
/// ```
pub fn parse_shard_name(name: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let (start, end) = name.split_once('-')?;
    Some((parse_hex(start)?, parse_hex(end)?))
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|pair| {
            let digit = |byte: u8| char::from(byte).to_digit(16);
            Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
        })
        .collect()
}

/// Byte-wise comparison with trailing zero bytes ignored (both sides padded with zeros).
fn compare_padded(a: &[u8], b: &[u8]) -> Ordering {
    let length = a.len().max(b.len());
    (0..length)
        .map(|i| a.get(i).copied().unwrap_or(0).cmp(&b.get(i).copied().unwrap_or(0)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Whether a boundary is zero (all bytes zero, or empty): the start of the keyspace.
fn is_zero(bound: &[u8]) -> bool {
    bound.iter().all(|&byte| byte == 0)
}

impl Spec for VitessSpec {
    const TYPE: &'static str = "vitess";
    const FIELDS: &'static [&'static str] = &["type", "vindex", "shards"];
    type Placement = Vitess;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<VitessSpec> {
        object.required("vindex")?;
        let options = [("hash", Vindex::Hash), ("xxhash", Vindex::Xxhash), ("numeric", Vindex::Numeric)];
        let vindex = object.choice("vindex", "vindex", Vindex::Hash, &options)?;
        let path = object.path_of("shards");
        let entries = json::array(&path, object.required("shards")?)?;
        if entries.is_empty() {
            return Err(json::at(&path, "a keyspace needs at least one shard"));
        }
        if entries.len() > limits::MAX_RANGES as usize {
            return Err(Error::limit(format!("{path}: {} shards; the limit is {}", entries.len(), limits::MAX_RANGES)));
        }
        let mut shards = Vec::with_capacity(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let entry_path = format!("{path}[{index}]");
            let shard = Object::new(&entry_path, entry, &["name", "node"])?;
            let name = json::str(&shard.path_of("name"), shard.required("name")?)?;
            let node_path = shard.path_of("node");
            let id = json::str(&node_path, shard.required("node")?)?;
            let node = nodes
                .iter()
                .position(|node| node.id == id)
                .ok_or_else(|| json::at(&node_path, format_args!("names node {id:?}, which is not in nodes")))?
                as u32;
            shards.push(VitessShard { name: String::from(name), node });
        }
        let spec = VitessSpec { vindex, shards };
        spec.boundaries(&path)?;
        Ok(spec)
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("vindex", self.vindex.as_str().into());
        let shards = self
            .shards
            .iter()
            .map(|shard| {
                let mut entry = Map::new();
                entry.put("name", Value::String(shard.name.clone()));
                entry.put("node", Value::String(nodes[shard.node as usize].id.clone()));
                Value::Object(entry)
            })
            .collect();
        object.put("shards", Value::Array(shards));
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Vitess> {
        crate::strategy::spec::require_default_hashing("vitess", "with its vindex", hashing)?;
        if let Some(index) = self.shards.iter().position(|shard| shard.node as usize >= nodes.len()) {
            return Err(json::at(&format!("strategy.shards[{index}].node"), "node index out of range"));
        }
        Ok(Vitess {
            vindex: self.vindex,
            zero_key: Des::new(0),
            starts: self.boundaries("strategy.shards")?,
            owners: self.shards.iter().map(|shard| shard.node).collect(),
            node_count: nodes.len() as u32,
        })
    }
}

impl VitessSpec {
    /// Checks that the names cover the keyspace exactly, in order, and returns the start
    /// of every shard after the first as a big-endian `u64` keyspace-id boundary.
    fn boundaries(&self, path: &str) -> Result<Vec<u64>> {
        let mut starts = Vec::with_capacity(self.shards.len().saturating_sub(1));
        let mut previous_end: Option<Vec<u8>> = None;
        let last = self.shards.len() - 1;
        for (index, shard) in self.shards.iter().enumerate() {
            let name_path = format!("{path}[{index}].name");
            let (start, end) = parse_shard_name(&shard.name).ok_or_else(|| {
                json::at(
                    &name_path,
                    format_args!(
                        "{:?} is not a Vitess shard name: expected start-end in hex with whole bytes (\"-80\", \"80-c0\", \"c0-\", \"-\")",
                        shard.name
                    ),
                )
            })?;
            let order_error = match &previous_end {
                None if !is_zero(&start) => Some(String::from(
                    "the first shard must start at the beginning of the keyspace (\"-...\")",
                )),
                Some(previous) if compare_padded(previous, &start).is_ne() => Some(format!(
                    "starts where the shard before it ({:?}) does not end: list shards in keyspace order, without gaps or overlaps",
                    self.shards[index - 1].name
                )),
                _ => None,
            };
            if let Some(message) = order_error {
                return Err(json::at(&name_path, message));
            }
            if index > 0 {
                if start.iter().skip(8).any(|&byte| byte != 0) {
                    return Err(json::at(
                        &name_path,
                        "boundaries with non-zero bytes past the 8th are not supported (keyspace ids are 8 bytes)",
                    ));
                }
                let mut padded = [0u8; 8];
                for (slot, byte) in padded.iter_mut().zip(start.iter()) {
                    *slot = *byte;
                }
                starts.push(u64::from_be_bytes(padded));
            }
            let shape_error = match (end.is_empty(), index == last) {
                (true, false) => Some("only the last shard may run to the end of the keyspace (\"...-\")"),
                (false, true) => Some("the last shard must run to the end of the keyspace (\"...-\")"),
                (false, false) if compare_padded(&start, &end).is_ge() => {
                    Some("the range is empty: its end must be after its start")
                }
                _ => None,
            };
            if let Some(message) = shape_error {
                return Err(json::at(&name_path, message));
            }
            previous_end = Some(end);
        }
        Ok(starts)
    }
}

/// A compiled Vitess keyspace: the vindex and the shard boundaries as keyspace ids.
#[derive(Clone, Debug)]
pub struct Vitess {
    vindex: Vindex,
    /// DES under the zero key, for the `hash` vindex.
    zero_key: Des,
    /// The start of shards `1..S`, ascending.
    starts: Vec<u64>,
    owners: Vec<u32>,
    node_count: u32,
}

impl Vitess {
    /// The shard index holding a keyspace id (given as a big-endian `u64`).
    #[inline]
    pub fn shard_of_keyspace_id(&self, keyspace_id: u64) -> u32 {
        self.starts.partition_point(|&start| start <= keyspace_id) as u32
    }
}

impl Place for Vitess {
    #[inline]
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.shard_of_keyspace_id(self.vindex.keyspace_id_with(&self.zero_key, key)?))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let keyspace_id = self.vindex.keyspace_id_with(&self.zero_key, key)?;
        let hashed = match self.vindex {
            Vindex::Hash => Hashed::own("des", &integer_of(key)?.to_be_bytes(), keyspace_id),
            Vindex::Numeric => Hashed::own("numeric", &integer_of(key)?.to_be_bytes(), keyspace_id),
            Vindex::Xxhash => with_key_bytes(key, |bytes| Hashed::own("xxh64", bytes, keyspace_id)),
        };
        Ok((Some(hashed), Hit::Shard, self.shard(hashing, key)?))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.owners[shard as usize]
    }

    fn max_replicas(&self) -> u32 {
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.owners.len() as u32
    }
}
