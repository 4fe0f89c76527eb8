//! Cassandra's `Murmur3Partitioner` over an explicit token ring: the `cassandra`
//! compatibility profile, routing a partition key to the node Apache Cassandra (and
//! ScyllaDB, and the DataStax drivers' token-aware policies) send it to.
//!
//! **Algorithm.** A key's token is the first 64 bits (`h1`) of MurmurHash3_x64_128 of
//! its partition-key bytes with seed 0, read as a signed `i64`, with `i64::MIN` (which
//! Cassandra reserves as the ring's minimum token) replaced by `i64::MAX`. Cassandra's
//! MurmurHash port sign-extends the 1 to 15 tail bytes (Java bytes are signed), so for a
//! tail byte `>= 0x80` the token differs from SMHasher's C reference; this profile uses
//! the Java variant ([`crate::hash::murmur3_x64_128`] with `java_signed_tail`). Each
//! node holds the tokens `nodetool ring` shows for it; a token owns `(previous token,
//! token]`, so a key belongs to the first token `>=` its own, wrapping past the largest
//! token to the smallest. Replicas continue clockwise to the next tokens of nodes not
//! yet chosen: `SimpleStrategy` (one data centre, no racks). `NetworkTopologyStrategy`
//! (per-DC replication factors, rack awareness) is not modelled: the owner is the same,
//! the replica list can differ.
//!
//! Sources: Apache Cassandra 4.1 `src/java/org/apache/cassandra/dht/Murmur3Partitioner.java`
//! (`getToken`, `normalize`: `Long.MIN_VALUE` → `Long.MAX_VALUE`),
//! `src/java/org/apache/cassandra/utils/MurmurHash.java` (`hash3_x64_128`, `getblock`,
//! the signed tail `(long) key[offset + i]`), `src/java/org/apache/cassandra/locator/TokenMetadata.java`
//! (`firstToken`: the first token `>=` the key's, wrapping) and
//! `src/java/org/apache/cassandra/locator/SimpleStrategy.java` (`calculateNaturalReplicas`);
//! composite keys: `src/java/org/apache/cassandra/db/marshal/CompositeType.java` (`build`).
//! Checked against the DataStax drivers: PyPI `cassandra-driver` (`cassandra.murmur3`,
//! `Murmur3Token`, `TokenMap` with `SimpleStrategy`) and npm `cassandra-driver`
//! (`Murmur3Tokenizer`), over more than 10,000 keys (`conformance/oracles/`).
//!
//! **The document.**
//!
//! ```json
//! {"type": "cassandra",
//!  "tokens": {"10.0.0.1": ["-9223372036854775808"], "10.0.0.2": ["-3074457345618258603"], "10.0.0.3": ["3074457345618258602"]}}
//! ```
//!
//! `tokens` maps every node id to its tokens (decimal strings or integers in
//! `-2^63..2^63`, at most [`MAX_TOKENS_PER_NODE`](crate::limits::MAX_TOKENS_PER_NODE) per node, unique across the
//! ring), exactly as [`token_ring`](crate::strategy::partitioned::token_ring) reads explicit tokens: the ring is
//! a [`TokenRing`] and this module only fixes how a key becomes a token. Every node must
//! be listed (a Cassandra node always owns tokens), node weights must stay 1, and the
//! document's `hashing` section must be the default: the partitioner fixes the hash,
//! so a `hashing` setting would change nothing and is refused (`invalid_topology` at
//! `hashing`). The canonical form writes the tokens as decimal strings in ascending
//! order. `{"op": "import_cassandra_ring", "tokens": {...}}` builds this document from a
//! token dump (a `nodetool ring` listing or a driver's token map; see [`crate::ops`]).
//!
//! **Keys.** A byte key is the serialized partition key, hashed as is: a `text` or
//! `blob` column's bytes (`"user:1"` as UTF-8). An integer key `k` is a `bigint`
//! partition key: its 8 big-endian bytes (two's complement, so `u64` values above
//! `i64::MAX` are the negative bigints with the same bits), as Cassandra and the drivers
//! serialize it. Other CQL types (`int`: 4 bytes, `uuid`: 16 bytes) are passed as their
//! serialized bytes. A composite partition key (`PRIMARY KEY ((a, b), c)`) is passed as
//! the bytes [`composite_key`] builds from its serialized components.
//!
//! **Tie-break.** Tokens are unique (a duplicate is rejected, as Cassandra refuses a
//! token collision), so no two nodes share a token.
//!
//! **Cost.** One MurmurHash3 pass over the key, then a binary search over the `P`
//! tokens (`O(log P)`); memory 12 bytes per token.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::node::Node;
pub(crate) use crate::strategy::partitioned::token_ring::parse_tokens;
use crate::strategy::partitioned::token_ring::{tokens_value, TokenRing, TokenRingSpec, DEFAULT_TOKENS_PER_NODE};
use crate::strategy::spec::{Place, Spec};

/// `{"type": "cassandra", "tokens": {"node id": ["token", ...], ...}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CassandraSpec {
    /// Every node's tokens, in ascending order: `(node index, tokens)`, by node index.
    pub tokens: Vec<(u32, Vec<i64>)>,
}

/// The Murmur3Partitioner token of serialized partition-key bytes.
///
/// `h1` of MurmurHash3_x64_128 (seed 0, Java's sign-extended tail bytes) as `i64`,
/// with `i64::MIN` mapped to `i64::MAX`. Never panics.
///
/// # Example
/// ```
/// use shardroute::strategy::compat::cassandra::token;
/// // The empty key hashes to 0; values as cassandra-driver's `murmur3` gives them.
/// assert_eq!(token(b""), 0);
/// assert_eq!(token(b"123"), -7468325962851647638);
/// ```
pub fn token(bytes: &[u8]) -> i64 {
    let (h1, _) = crate::hash::murmur3_x64_128(bytes, 0, true);
    match h1 as i64 {
        i64::MIN => i64::MAX,
        token => token,
    }
}

/// The token of a key under this profile: byte keys as they are, integer keys as the
/// 8 big-endian bytes of a CQL `bigint`.
///
/// # Example
/// ```
/// use shardroute::strategy::compat::cassandra::{key_token, token};
/// use shardroute::Key;
/// assert_eq!(key_token(Key::U64(1)), token(&[0, 0, 0, 0, 0, 0, 0, 1]));
/// assert_eq!(key_token(Key::Bytes(b"abc")), token(b"abc"));
/// ```
pub fn key_token(key: Key<'_>) -> i64 {
    match key {
        Key::Bytes(bytes) => token(bytes),
        Key::U64(value) => token(&value.to_be_bytes()),
    }
}

/// The partition-key bytes of a composite partition key from its serialized
/// components: `u16be(len) + bytes + 0x00` per component (CompositeType), as Cassandra
/// and the drivers build it. A single-component key is *not* encoded this way: pass its
/// bytes directly.
///
/// # Errors
/// `invalid_key` when a component is longer than 65,535 bytes (its length does not
/// fit the 16-bit prefix; Cassandra refuses such keys too). Never panics.
///
/// # Example
/// ```
/// use shardroute::strategy::compat::cassandra::composite_key;
/// let key = composite_key(&[b"ab", b""])?;
/// assert_eq!(key, [0, 2, b'a', b'b', 0, 0, 0, 0]);
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn composite_key(parts: &[&[u8]]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(parts.iter().map(|part| part.len() + 3).sum());
    for (index, part) in parts.iter().enumerate() {
        let length = u16::try_from(part.len()).map_err(|_| {
            Error::key(format!(
                "composite key component {index} is {} bytes; the limit is 65535 (16-bit length)",
                part.len()
            ))
        })?;
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(part);
        out.push(0);
    }
    Ok(out)
}

impl Spec for CassandraSpec {
    const TYPE: &'static str = "cassandra";
    const FIELDS: &'static [&'static str] = &["type", "tokens"];
    type Placement = Cassandra;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<CassandraSpec> {
        let path = object.path_of("tokens");
        Ok(CassandraSpec { tokens: parse_tokens(&path, object.required("tokens")?, nodes)? })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        if let Some((index, _)) = self.tokens.iter().find(|(index, _)| *index as usize >= nodes.len()) {
            return Err(json::at("strategy.tokens", format_args!("node index {index} is past the node list")));
        }
        check_every_node("strategy.tokens", &self.tokens, nodes)
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("tokens", tokens_value(&self.tokens, nodes));
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Cassandra> {
        crate::strategy::spec::require_default_hashing("cassandra", "with Murmur3Partitioner", hashing)?;
        let spec =
            TokenRingSpec { tokens_per_node: DEFAULT_TOKENS_PER_NODE, token_seed: 0, tokens: self.tokens.clone() };
        check_every_node("strategy.tokens", &spec.tokens, nodes)?;
        Ok(Cassandra { ring: TokenRing::new(&spec, nodes)?, node_count: nodes.len() as u32 })
    }
}

/// Every node must hold tokens: a Cassandra ring has no generated ones.
fn check_every_node(path: &str, tokens: &[(u32, Vec<i64>)], nodes: &[Node]) -> Result<()> {
    let missing = (0..nodes.len() as u32).find(|index| tokens.binary_search_by_key(index, |(node, _)| *node).is_err());
    match missing {
        Some(index) => Err(json::at(
            path,
            format_args!(
                "node {:?} has no tokens; every node of a cassandra ring lists its tokens",
                nodes[index as usize].id
            ),
        )),
        None => Ok(()),
    }
}

/// A compiled Cassandra ring: a [`TokenRing`] addressed by Murmur3Partitioner tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cassandra {
    ring: TokenRing,
    node_count: u32,
}

impl Cassandra {
    /// The ring of tokens this profile looks keys up in.
    pub fn ring(&self) -> &TokenRing {
        &self.ring
    }
}

impl Place for Cassandra {
    #[inline]
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.ring.node_of(key_token(key) as u64))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let token = key_token(key);
        let hashed = match key {
            Key::Bytes(bytes) => Hashed::own("murmur3", bytes, token as u64),
            Key::U64(value) => Hashed::own("murmur3", &value.to_be_bytes(), token as u64),
        };
        Ok((Some(hashed), Hit::Token { token: self.ring.token_at(token) }, self.shard(hashing, key)?))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        shard
    }

    fn replicas(&self, _hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        self.ring.replicas_of(key_token(key) as u64, count, out);
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.node_count
    }
}
