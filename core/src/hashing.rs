//! Key hashing: how a [`Key`] becomes the `u64` that a strategy places.
//!
//! The `hashing` section of a topology document picks four things:
//!
//! | field | values | default | meaning |
//! |---|---|---|---|
//! | `function` | `"siphash-2-4"`, `"crc32"` | `"siphash-2-4"` | the hash of the key bytes |
//! | `seed` | 32 hex digits | `000102030405060708090a0b0c0d0e0f` | the 16 SipHash key bytes, in order (SipHash only) |
//! | `hash_tag` | `"none"`, `"redis"` | `"none"` | hash only the `{tag}` of a key so related keys co-locate |
//! | `integers` | `"le_bytes"`, `"identity"` | `"le_bytes"` | an integer key is hashed as its 8 little-endian bytes, or is its own hash |
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
//! **Integer keys** default to hashing their little-endian bytes, so `42u64` and the
//! 8 bytes `2a 00 00 00 00 00 00 00` route alike. With `identity` the integer is used
//! as its hash: `user_id % n` under the modulo strategy, or jump hash over ids that
//! are already well-mixed hashes. Identity on sequential ids places badly under the
//! ring and rendezvous strategies (their points are spread over all 64 bits).

use alloc::string::String;

use serde_json::{Map, Value};
use siphasher::sip::SipHasher24;

use crate::error::Result;
use crate::json::{self, Object};
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
}

impl Default for KeyHashing {
    fn default() -> KeyHashing {
        KeyHashing {
            function: HashFunction::SipHash24 { seed: DEFAULT_SIPHASH_SEED },
            hash_tag: HashTag::None,
            integers: IntegerKeys::LeBytes,
        }
    }
}

impl KeyHashing {
    /// Hashes a key to the `u64` that strategies place.
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
            Key::Bytes(bytes) => {
                let hashed = match self.hash_tag {
                    HashTag::None => bytes,
                    HashTag::Redis => redis_hash_tag(bytes),
                };
                self.hash_bytes(hashed)
            }
            Key::U64(value) => match self.integers {
                IntegerKeys::LeBytes => self.hash_bytes(&value.to_le_bytes()),
                IntegerKeys::Identity => value,
            },
        }
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
        let object = Object::new(path, value, &["function", "seed", "hash_tag", "integers"])?;
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
        Ok(KeyHashing { function, hash_tag, integers })
    }

    /// The canonical JSON of this spec: every field spelled out.
    pub(crate) fn to_value(self) -> Value {
        let mut map = Map::new();
        match self.function {
            HashFunction::SipHash24 { seed } => {
                map.insert("function".into(), "siphash-2-4".into());
                map.insert("seed".into(), Value::String(hex(&seed)));
            }
            HashFunction::Crc32 => {
                map.insert("function".into(), "crc32".into());
            }
        }
        let tag = match self.hash_tag {
            HashTag::None => "none",
            HashTag::Redis => "redis",
        };
        map.insert("hash_tag".into(), tag.into());
        let integers = match self.integers {
            IntegerKeys::LeBytes => "le_bytes",
            IntegerKeys::Identity => "identity",
        };
        map.insert("integers".into(), integers.into());
        Value::Object(map)
    }
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
