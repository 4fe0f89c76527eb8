//! Key hashing: how a [`Key`] becomes the `u64` that a strategy places.
//!
//! The `hashing` section of a topology document picks:
//!
//! | field | values | default | meaning |
//! |---|---|---|---|
//! | `function` | `"siphash-2-4"`, `"crc32"` | `"siphash-2-4"` | the hash of the key bytes |
//! | `seed` | 32 hex digits | `000102030405060708090a0b0c0d0e0f` | the 16 SipHash key bytes, in order (SipHash only) |
//! | `hash_tag` | `"none"`, `"redis"` | `"none"` | hash only the `{tag}` of a key so related keys co-locate |
//! | `integers` | `"le_bytes"`, `"identity"` | `"le_bytes"` | an integer key is hashed as its 8 little-endian bytes, or is its own hash |
//! | `partition_key` | a rule (below) | the whole key | route by one part of a compound key |
//! | `keys` | `"bytes"`, `"u64"` | `"bytes"` | what the keys are: any bytes, or unsigned 64-bit integers (below) |
//!
//! **SipHash-2-4** (Aumasson & Bernstein, 2012) is the default: fast on short keys,
//! well mixed in all 64 bits, and keyed. The default key is the byte string
//! `00 01 .. 0f` of the paper's test vectors, so the SipHash reference outputs are
//! this library's default hashes, and routing stays reproducible across languages.
//! That key is public, so anyone can compute where a key lands and choose keys that all
//! land on one shard (hash flooding: 10,000 such keys for one shard of 10 take a fraction
//! of a second, `core/tests/hash_flooding.rs`). When users choose keys, give the topology
//! a secret `seed`: every client must then share it, and a change of seed moves almost
//! every key. Compatibility profiles hash as their systems do and take no seed.
//! `docs/security-and-limits.md` explains the trade-off.
//!
//! **CRC32** is the IEEE 802.3 polynomial (reflected `0xEDB88320`, init and final
//! xor `0xFFFFFFFF`; the zlib / PNG / Ethernet CRC), zero-extended to 64 bits. Its check
//! value: `crc32("123456789") == 0xCBF43926`. Use it to match systems that route by
//! CRC32; its 32 bits are too few for a ring with millions of points.
//!
//! **Hash tags** follow Redis Cluster: find the first `{`; find the first `}` after
//! it; when the bytes between them are non-empty, only they are hashed, otherwise the
//! whole key is. So `{user1000}.following` and `{user1000}.followers` share a shard,
//! and `foo{}{bar}` hashes the whole key. Integer keys have no tag.
//!
//! **Partition keys** (compound keys, as DDIA chapter 6 and Cassandra's compound primary
//! keys partition them): a rule picks the part of a byte key that every strategy routes
//! by, before hashing, `key_range` and the tables included. Keys that share that part
//! share a shard, so a range scan over the rest of the key (the time in
//! `sensor42:2026-11-27T10:00`) stays on one shard ([`KeyHashing::one_partition`]).
//!
//! | rule | fields | the partition key |
//! |---|---|---|
//! | `{"rule": "prefix", "separator": ":"}` | `separator`: 1 to 8 bytes of text | the bytes before the first separator |
//! | `{"rule": "field", "separator": "\|", "index": 1}` | `index`: 0 to 255 | field `index` (from 0) of the key split at every separator |
//! | `{"rule": "bytes", "offset": 0, "length": 16}` | `offset`: 0 to 65,536; `length`: 1 to 65,536 | `length` bytes from `offset` |
//!
//! A key without that part (no separator, fewer fields, fewer bytes) routes by the whole
//! key, as a key without a `{tag}` does. The rules are bounded scans with no regular
//! expressions, so a hostile key costs one pass over its bytes. Integer keys have no
//! parts. A rule and a Redis hash tag both pick the hashed part of a key, so a document
//! names at most one of them; compatibility profiles take neither (their systems hash the
//! whole key).
//!
//! **Integer keys** default to hashing their little-endian bytes, so `42u64` and the
//! 8 bytes `2a 00 00 00 00 00 00 00` route alike. With `identity` the integer is used
//! as its hash: `user_id % n` under the modulo strategy, or jump hash over ids that
//! are already well-mixed hashes. Identity on sequential ids places badly under the
//! ring and rendezvous strategies (their points are spread over all 64 bits).
//!
//! **Declared key type.** By default (`"keys": "bytes"`) the text `"7"` and the integer
//! `7` are different keys. With `"keys": "u64"` every key is an unsigned 64-bit integer:
//! a text or byte key must be the canonical decimal text of one (ASCII digits, no sign,
//! no spaces, no leading zero except `"0"`, at most `18446744073709551615`) and routes
//! exactly as that integer; any other text or bytes is refused with `invalid_key`
//! ([`KeyHashing::typed`]). The default is left out of the canonical JSON, so documents
//! without the field keep their text and checksum.

use alloc::string::String;

use serde_json::{Map, Value};
use siphasher::sip::SipHasher24;

use crate::error::Result;
use crate::json::{self, Object, Put as _};
use crate::key::Key;

/// The hash function applied to key bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashFunction {
    /// SipHash-2-4 with a 128-bit key (the document's `seed`).
    SipHash24 {
        /// The 16 key bytes, in the order the SipHash paper writes them.
        seed: [u8; 16],
    },
    /// CRC-32/IEEE (zlib's `crc32`), zero-extended to 64 bits.
    Crc32,
}

/// Which bytes of a key are hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum HashTag {
    /// The whole key.
    #[default]
    None,
    /// Redis Cluster's `{tag}` rule (see the module docs).
    Redis,
}

/// The longest separator of a [`PartitionKey`] rule, in bytes.
pub const MAX_SEPARATOR_BYTES: usize = 8;
/// The highest field index of a [`PartitionKey::Field`] rule.
pub const MAX_FIELD_INDEX: u32 = 255;
/// The highest offset and the longest length of a [`PartitionKey::Bytes`] rule.
pub const MAX_PARTITION_BYTES: u32 = 1 << 16;

/// The separator of a [`PartitionKey`] rule: 1 to [`MAX_SEPARATOR_BYTES`] bytes, held
/// inline so that [`KeyHashing`] stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Separator {
    bytes: [u8; MAX_SEPARATOR_BYTES],
    len: u8,
}

impl Separator {
    /// A separator of 1 to [`MAX_SEPARATOR_BYTES`] bytes of text; `None` otherwise.
    pub fn new(text: &str) -> Option<Separator> {
        let bytes = text.as_bytes();
        if bytes.is_empty() || bytes.len() > MAX_SEPARATOR_BYTES {
            return None;
        }
        let mut inline = [0; MAX_SEPARATOR_BYTES];
        inline[..bytes.len()].copy_from_slice(bytes);
        Some(Separator { bytes: inline, len: bytes.len() as u8 })
    }

    /// The separator's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The separator's text.
    pub fn as_str(&self) -> &str {
        // `new` took it from a `&str` whole: always UTF-8.
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// Where the first separator in `haystack` starts.
    fn find(&self, haystack: &[u8]) -> Option<usize> {
        let needle = self.as_bytes();
        if let [byte] = needle {
            return haystack.iter().position(|b| b == byte);
        }
        haystack.windows(needle.len()).position(|window| window == needle)
    }
}

impl core::fmt::Debug for Separator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Separator({:?})", self.as_str())
    }
}

/// Which part of a byte key every strategy routes by (see the module docs). A key
/// without that part routes by the whole key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum PartitionKey {
    /// The whole key.
    #[default]
    Whole,
    /// The bytes before the first `separator`.
    Prefix {
        /// Ends the partition key.
        separator: Separator,
    },
    /// Field `index` (from 0) of the key split at every `separator`.
    Field {
        /// Between two fields.
        separator: Separator,
        /// Which field, from 0.
        index: u32,
    },
    /// `length` bytes from `offset`.
    Bytes {
        /// The first byte of the partition key.
        offset: u32,
        /// How many bytes it has.
        length: u32,
    },
}

impl PartitionKey {
    /// The partition key of `key`: its part under this rule, or the whole key when it has
    /// no such part. One pass over the key at most.
    ///
    /// # Example
    /// ```
    /// use shardroute::hashing::{PartitionKey, Separator};
    /// let sep = Separator::new("|").unwrap();
    /// let field = PartitionKey::Field { separator: sep, index: 1 };
    /// assert_eq!(field.select(b"acme|sensor42|2026-11-27"), b"sensor42");
    /// assert_eq!(field.select(b"acme"), b"acme");
    /// let prefix = PartitionKey::Prefix { separator: sep };
    /// assert_eq!(prefix.select(b"acme|sensor42"), b"acme");
    /// let bytes = PartitionKey::Bytes { offset: 2, length: 3 };
    /// assert_eq!(bytes.select(b"xxabcyy"), b"abc");
    /// assert_eq!(bytes.select(b"xxab"), b"xxab");
    /// ```
    // Out of line: the batch loops that hash whole keys stay as small as they were
    // before rules existed (measured: `route_packed_into` lost ~1.5 ns a key inlined).
    #[inline(never)]
    pub fn select<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        self.part(key).unwrap_or(key)
    }

    /// The part this rule picks out of `key`, `None` when it has none.
    fn part<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match *self {
            PartitionKey::Whole => Some(key),
            PartitionKey::Prefix { separator } => separator.find(key).map(|end| &key[..end]),
            PartitionKey::Field { separator, index } => {
                let step = separator.as_bytes().len();
                let mut rest = key;
                for _ in 0..index {
                    let end = separator.find(rest)?;
                    rest = &rest[end + step..];
                }
                Some(match separator.find(rest) {
                    Some(end) => &rest[..end],
                    None => rest,
                })
            }
            PartitionKey::Bytes { offset, length } => {
                let start = offset as usize;
                key.get(start..start.checked_add(length as usize)?)
            }
        }
    }

    /// Whether this rule fixes the partition key of every key that starts with `prefix`:
    /// the part lies inside `prefix`, whatever follows.
    fn fixed_by(&self, prefix: &[u8]) -> bool {
        match *self {
            PartitionKey::Whole => false,
            PartitionKey::Prefix { separator } => separator.find(prefix).is_some(),
            PartitionKey::Field { separator, index } => {
                // Fields 0..=index end inside `prefix`: index + 1 separators in it.
                let step = separator.as_bytes().len();
                let mut rest = prefix;
                for _ in 0..=index {
                    match separator.find(rest) {
                        Some(end) => rest = &rest[end + step..],
                        None => return false,
                    }
                }
                true
            }
            PartitionKey::Bytes { offset, length } => prefix.len() as u64 >= u64::from(offset) + u64::from(length),
        }
    }

    fn from_value(path: &str, value: &Value) -> Result<PartitionKey> {
        #[derive(Clone, Copy, PartialEq)]
        enum Rule {
            Whole,
            Prefix,
            Field,
            Bytes,
        }
        let object = Object::new(path, value, &["rule", "separator", "index", "offset", "length"])?;
        let rule_path = object.path_of("rule");
        let rule = json::str(&rule_path, object.required("rule")?)?;
        let (rule, takes): (Rule, &[&str]) = match rule {
            "whole" => (Rule::Whole, &[]),
            "prefix" => (Rule::Prefix, &["separator"]),
            "field" => (Rule::Field, &["separator", "index"]),
            "bytes" => (Rule::Bytes, &["offset", "length"]),
            other => {
                return Err(json::at(
                    &rule_path,
                    format_args!(
                        "unknown partition key rule {other:?}; expected \"prefix\", \"field\", \"bytes\" or \"whole\""
                    ),
                ))
            }
        };
        for name in ["separator", "index", "offset", "length"] {
            if !takes.contains(&name) && object.optional(name).is_some() {
                return Err(json::at(&object.path_of(name), format_args!("this rule takes no {name}")));
            }
        }
        let separator = || -> Result<Separator> {
            let path = object.path_of("separator");
            let text = json::str(&path, object.required("separator")?)?;
            Separator::new(text).ok_or_else(|| {
                json::at(&path, format_args!("expected 1 to {MAX_SEPARATOR_BYTES} bytes of text, found {}", text.len()))
            })
        };
        let bounded =
            |name: &str, min: u32, max: u32| json::u32_capped(&object.path_of(name), object.required(name)?, min, max);
        Ok(match rule {
            Rule::Whole => PartitionKey::Whole,
            Rule::Prefix => PartitionKey::Prefix { separator: separator()? },
            Rule::Field => {
                PartitionKey::Field { separator: separator()?, index: bounded("index", 0, MAX_FIELD_INDEX)? }
            }
            Rule::Bytes => PartitionKey::Bytes {
                offset: bounded("offset", 0, MAX_PARTITION_BYTES)?,
                length: bounded("length", 1, MAX_PARTITION_BYTES)?,
            },
        })
    }

    fn to_value(self) -> Value {
        let mut map = Map::new();
        let text = |separator: Separator| Value::String(separator.as_str().into());
        match self {
            PartitionKey::Whole => {
                map.put("rule", "whole".into());
            }
            PartitionKey::Prefix { separator } => {
                map.put("rule", "prefix".into());
                map.put("separator", text(separator));
            }
            PartitionKey::Field { separator, index } => {
                map.put("rule", "field".into());
                map.put("separator", text(separator));
                map.put("index", index.into());
            }
            PartitionKey::Bytes { offset, length } => {
                map.put("rule", "bytes".into());
                map.put("offset", offset.into());
                map.put("length", length.into());
            }
        }
        Value::Object(map)
    }
}

/// How integer keys are hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum IntegerKeys {
    /// Hash the 8 little-endian bytes with the hash function.
    #[default]
    LeBytes,
    /// Use the integer itself as the hash.
    Identity,
}

/// What a topology's keys are: the `keys` field of the `hashing` section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum KeyType {
    /// Any byte string or integer; the text `"7"` and the integer `7` are different keys.
    #[default]
    Bytes,
    /// Unsigned 64-bit integers: a text key must be the canonical decimal text of one and
    /// routes as that integer.
    U64,
}

/// The default SipHash key: bytes `00 01 .. 0f`, the key of the paper's test vectors.
pub const DEFAULT_SIPHASH_SEED: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// The key-hashing spec of a topology: the `hashing` section of the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHashing {
    /// The hash function over key bytes.
    pub function: HashFunction,
    /// Which bytes of a byte key are hashed.
    pub hash_tag: HashTag,
    /// How integer keys are hashed.
    pub integers: IntegerKeys,
    /// Which part of a byte key is routed (the whole key by default).
    pub partition_key: PartitionKey,
    /// What the keys are (any bytes by default); see [`typed`](KeyHashing::typed).
    pub keys: KeyType,
}

impl Default for KeyHashing {
    fn default() -> KeyHashing {
        KeyHashing {
            function: HashFunction::SipHash24 { seed: DEFAULT_SIPHASH_SEED },
            hash_tag: HashTag::None,
            integers: IntegerKeys::LeBytes,
            partition_key: PartitionKey::Whole,
            keys: KeyType::Bytes,
        }
    }
}

impl KeyHashing {
    /// A key as this spec's declared [`KeyType`] reads it: under `"keys": "u64"` a text
    /// or byte key that is the canonical decimal text of a `u64` becomes that integer;
    /// every other key is returned as it is. The one place every binding and the CLI
    /// apply the declaration (the router calls it on every key it routes).
    ///
    /// # Errors
    /// `invalid_key` under `"keys": "u64"` for a byte key that is not the canonical
    /// decimal text of a `u64` (a sign, a space, a leading zero, an exponent, empty,
    /// above `18446744073709551615`).
    ///
    /// # Example
    /// ```
    /// use shardroute::{Key, KeyHashing};
    /// let hashing = KeyHashing::from_json(r#"{"keys": "u64"}"#)?;
    /// assert_eq!(hashing.typed(Key::Bytes(b"7"))?, Key::U64(7));
    /// assert_eq!(hashing.typed(Key::U64(7))?, Key::U64(7));
    /// assert_eq!(hashing.typed(Key::Bytes(b"07")).unwrap_err().code(), "invalid_key");
    /// assert_eq!(KeyHashing::default().typed(Key::Bytes(b"7"))?, Key::Bytes(b"7"));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    #[inline]
    pub fn typed<'k>(&self, key: Key<'k>) -> Result<Key<'k>> {
        match (self.keys, key) {
            (KeyType::U64, Key::Bytes(bytes)) => canonical_u64(bytes).map(Key::U64).ok_or_else(|| {
                crate::error::Error::key(alloc::format!(
                    "key {:?} is not a u64 in decimal (the document's hashing.keys is \"u64\")",
                    String::from_utf8_lossy(bytes)
                ))
            }),
            _ => Ok(key),
        }
    }

    /// Hashes a key to the `u64` that strategies place.
    ///
    /// Under `"keys": "u64"` the canonical decimal text of an integer hashes as that
    /// integer; text that is not one hashes as its bytes (a hash does not refuse: the
    /// router's calls do, through [`typed`](KeyHashing::typed)).
    ///
    /// Never fails and never panics; the same key and spec give the same hash on every
    /// platform and in every binding.
    ///
    /// # Example
    /// ```
    /// use shardroute::{Key, KeyHashing};
    /// let hashing = KeyHashing::default();
    /// // SipHash-2-4 of the empty input under key 00..0f (the paper's first vector).
    /// assert_eq!(hashing.hash(Key::Bytes(b"")), 0x726fdb47dd0e0e31);
    /// ```
    pub fn hash(&self, key: Key<'_>) -> u64 {
        match key {
            // Under `"keys": "u64"` the decimal text of an integer hashes as the integer
            // (what routing does after `typed`); other text, which routing refuses, hashes
            // as its bytes here, since a hash never fails.
            Key::Bytes(bytes) if self.keys == KeyType::U64 => match canonical_u64(bytes) {
                Some(value) => self.hash_whole(Key::U64(value)),
                None => self.hash_bytes(self.routed_bytes(bytes)),
            },
            Key::Bytes(bytes) => self.hash_bytes(self.routed_bytes(bytes)),
            key => self.hash_whole(key),
        }
    }

    /// [`hash`](KeyHashing::hash) for a spec that [routes whole
    /// keys](KeyHashing::routes_whole_keys): the same value without asking per key.
    #[inline]
    pub(crate) fn hash_whole(&self, key: Key<'_>) -> u64 {
        match key {
            Key::Bytes(bytes) => self.hash_bytes(bytes),
            Key::U64(value) => match self.integers {
                IntegerKeys::LeBytes => self.hash_bytes(&value.to_le_bytes()),
                IntegerKeys::Identity => value,
            },
        }
    }

    /// The part of a byte key that is routed: its Redis `{tag}` under `hash_tag: "redis"`,
    /// its partition key under a `partition_key` rule, else the whole key. What
    /// [`hash`](KeyHashing::hash) hashes and what `key_range` and the key tables compare.
    #[inline]
    pub fn routed_bytes<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        match self.hash_tag {
            HashTag::Redis => redis_hash_tag(key),
            HashTag::None if matches!(self.partition_key, PartitionKey::Whole) => key,
            HashTag::None => self.partition_key.select(key),
        }
    }

    /// Whether a byte key is routed whole (no hash tag, no partition key rule, no declared
    /// key type): then [`hash`](KeyHashing::hash) of a byte key is
    /// [`hash_bytes`](KeyHashing::hash_bytes) of it, which batch loops use to decide once
    /// rather than per key.
    #[inline]
    pub fn routes_whole_keys(&self) -> bool {
        self.hash_tag == HashTag::None && self.partition_key == PartitionKey::Whole && self.keys == KeyType::Bytes
    }

    /// The routed part of a key ([`routed_bytes`](KeyHashing::routed_bytes)); an integer
    /// key is its own.
    #[inline]
    pub fn routed<'k>(&self, key: Key<'k>) -> Key<'k> {
        match key {
            Key::Bytes(bytes) => Key::Bytes(self.routed_bytes(bytes)),
            key => key,
        }
    }

    /// Whether every key in `[start, end)` has one partition key under this spec's
    /// `partition_key` rule, so that a scan over the range visits one shard: the keys
    /// share the common prefix of `start` and `end`, and the rule's part lies inside it.
    /// Always `false` without a rule, for an empty or reversed range and for integer keys.
    pub fn one_partition(&self, start: Key<'_>, end: Option<Key<'_>>) -> bool {
        let (Key::Bytes(start), Some(Key::Bytes(end))) = (start, end) else { return false };
        if start >= end {
            return false;
        }
        self.hash_tag == HashTag::None && self.partition_key.fixed_by(&start[..shared_prefix(start, end)])
    }

    /// Hashes raw bytes with the function only (no hash tag): how strategies hash
    /// their own labels, such as ring points.
    pub fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        match self.function {
            HashFunction::SipHash24 { seed } => siphash24(&seed, bytes),
            HashFunction::Crc32 => u64::from(crate::hash::crc32(bytes)),
        }
    }

    /// Parses a hashing spec from JSON text (the `hashing` section on its own).
    ///
    /// # Errors
    /// `invalid_topology` naming the offending field.
    pub fn from_json(text: &str) -> Result<KeyHashing> {
        let value = json::parse(text, "the hashing spec", crate::error::ErrorKind::InvalidTopology)?;
        KeyHashing::from_value("hashing", &value)
    }

    pub(crate) fn from_value(path: &str, value: &Value) -> Result<KeyHashing> {
        let object = Object::new(path, value, &["function", "seed", "hash_tag", "integers", "partition_key", "keys"])?;
        let seed = match object.optional("seed") {
            None => None,
            Some(value) => Some(parse_seed(&object.path_of("seed"), value)?),
        };
        let function = match object.optional("function") {
            None => HashFunction::SipHash24 { seed: seed.unwrap_or(DEFAULT_SIPHASH_SEED) },
            Some(value) => match json::str(&object.path_of("function"), value)? {
                "siphash-2-4" => HashFunction::SipHash24 { seed: seed.unwrap_or(DEFAULT_SIPHASH_SEED) },
                "crc32" => {
                    if seed.is_some() {
                        return Err(json::at(&object.path_of("seed"), "only siphash-2-4 takes a seed"));
                    }
                    HashFunction::Crc32
                }
                other => {
                    return Err(json::at(
                        &object.path_of("function"),
                        format_args!("unknown hash function {other:?}; expected \"siphash-2-4\" or \"crc32\""),
                    ))
                }
            },
        };
        let hash_tag = object.choice(
            "hash_tag",
            "hash tag rule",
            HashTag::None,
            &[("none", HashTag::None), ("redis", HashTag::Redis)],
        )?;
        let integers = object.choice(
            "integers",
            "integer rule",
            IntegerKeys::LeBytes,
            &[("le_bytes", IntegerKeys::LeBytes), ("identity", IntegerKeys::Identity)],
        )?;
        let keys =
            object.choice("keys", "key type", KeyType::Bytes, &[("bytes", KeyType::Bytes), ("u64", KeyType::U64)])?;
        let partition_key = match object.optional("partition_key") {
            None => PartitionKey::Whole,
            Some(value) => PartitionKey::from_value(&object.path_of("partition_key"), value)?,
        };
        if hash_tag != HashTag::None && partition_key != PartitionKey::Whole {
            return Err(json::at(
                &object.path_of("partition_key"),
                "hash_tag \"redis\" already picks the part of a key that is routed; name one of hash_tag and partition_key",
            ));
        }
        Ok(KeyHashing { function, hash_tag, integers, partition_key, keys })
    }

    /// The canonical JSON of this spec: every field spelled out.
    pub(crate) fn to_value(self) -> Value {
        let mut map = Map::new();
        match self.function {
            HashFunction::SipHash24 { seed } => {
                map.put("function", "siphash-2-4".into());
                map.put("seed", Value::String(hex(&seed)));
            }
            HashFunction::Crc32 => {
                map.put("function", "crc32".into());
            }
        }
        let tag = match self.hash_tag {
            HashTag::None => "none",
            HashTag::Redis => "redis",
        };
        map.put("hash_tag", tag.into());
        let integers = match self.integers {
            IntegerKeys::LeBytes => "le_bytes",
            IntegerKeys::Identity => "identity",
        };
        map.put("integers", integers.into());
        // Left out when it is the whole key, so that documents written before partition
        // keys existed keep their canonical text (and their checksum).
        if self.partition_key != PartitionKey::Whole {
            map.put("partition_key", self.partition_key.to_value());
        }
        // Left out when it is the default, for the same reason.
        if self.keys == KeyType::U64 {
            map.put("keys", "u64".into());
        }
        Value::Object(map)
    }
}

/// `Some(value)` when `bytes` is the canonical decimal text of a `u64`: ASCII digits,
/// no leading zero except `"0"` itself, at most `u64::MAX`.
fn canonical_u64(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 20 || (bytes.len() > 1 && bytes[0] == b'0') {
        return None;
    }
    bytes.iter().try_fold(0u64, |acc, &digit| {
        if !digit.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    })
}

fn parse_seed(path: &str, value: &Value) -> Result<[u8; 16]> {
    let text = json::str(path, value)?;
    let bytes = text.as_bytes();
    if bytes.len() != 32 {
        return Err(json::at(path, "expected 32 hex digits (16 bytes)"));
    }
    let mut seed = [0u8; 16];
    for (index, pair) in bytes.chunks_exact(2).enumerate() {
        let high = hex_digit(pair[0]);
        let low = hex_digit(pair[1]);
        match (high, low) {
            (Some(high), Some(low)) => seed[index] = (high << 4) | low,
            _ => return Err(json::at(path, "expected 32 hex digits (16 bytes)")),
        }
    }
    Ok(seed)
}

fn hex_digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 15)] as char);
    }
    out
}

/// The length of the prefix of `start` that every key in `[start, end)` starts with
/// (`start < end`). At least their common prefix; one byte more when `end` is that
/// prefix's next byte up (`sensor42:` to `sensor42;` is every key under `sensor42:`),
/// and then over the `ff` bytes that follow in `start` (a key of the range below `end`
/// that passed `start`'s `ff` has it too).
fn shared_prefix(start: &[u8], end: &[u8]) -> usize {
    let common = start.iter().zip(end).take_while(|(a, b)| a == b).count();
    match (start.get(common), end.get(common)) {
        (Some(&low), Some(&high)) if end.len() == common + 1 && low != 0xff && high == low + 1 => {
            common + 1 + start[common + 1..].iter().take_while(|&&byte| byte == 0xff).count()
        }
        _ => common,
    }
}

/// SipHash-2-4 of `bytes` under the 16-byte key `seed` (k0 = first 8 bytes little-endian).
///
/// # Example
/// ```
/// // The paper's vector for the 1-byte input 00 under key 00..0f.
/// let seed = shardroute::hashing::DEFAULT_SIPHASH_SEED;
/// assert_eq!(shardroute::hashing::siphash24(&seed, &[0]), 0x74f839c593dc67fd);
/// ```
pub fn siphash24(seed: &[u8; 16], bytes: &[u8]) -> u64 {
    let (k0, k1) = seed.split_at(8);
    // Both halves are exactly 8 bytes, so these conversions cannot fail.
    let k0 = u64::from_le_bytes(k0.try_into().unwrap_or([0; 8]));
    let k1 = u64::from_le_bytes(k1.try_into().unwrap_or([0; 8]));
    SipHasher24::new_with_keys(k0, k1).hash(bytes)
}

/// The bytes a Redis Cluster hash tag selects: the non-empty text between the first
/// `{` and the first `}` after it, or the whole key.
///
/// # Example
/// ```
/// use shardroute::hashing::redis_hash_tag;
/// assert_eq!(redis_hash_tag(b"{user1000}.following"), b"user1000");
/// assert_eq!(redis_hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
/// assert_eq!(redis_hash_tag(b"foo{{bar}}zap"), b"{bar");
/// ```
pub fn redis_hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        let rest = &key[open + 1..];
        if let Some(close) = rest.iter().position(|&b| b == b'}') {
            if close > 0 {
                return &rest[..close];
            }
        }
    }
    key
}
