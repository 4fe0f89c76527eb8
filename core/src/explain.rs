//! Why a key goes where it goes: [`Router::explain`](crate::Router::explain) retraces one
//! lookup step by step — the bytes hashed (after any hash tag), the hash, what the
//! strategy hit with it (a vbucket, a slot, a ring token, a range, a trie leaf, a
//! partition), the shard and its owner — as typed values, and
//! [`Explanation::why`] says it in one line.
//!
//! The explanation is computed by the same placement that routes, so its shard is
//! always [`route`](crate::Router::route)'s. Strategies describe what they hit where that
//! is cheap to say; the others answer [`Hit::Shard`] (the shard number is all there is).
//!
//! **Cost.** One lookup, plus copying the hashed bytes; for debugging and tools, not for
//! the hot path.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::hashing::{HashFunction, IntegerKeys, KeyHashing};
use crate::key::Key;

/// What a hash function read and returned for a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashed {
    /// The function: `"siphash-2-4"`, `"crc32"`, `"identity"` (an integer that is its own
    /// hash), or the hash of a compatibility profile (`"crc16-xmodem"`, `"murmur2"`, ...).
    pub function: &'static str,
    /// The bytes the function read: the key, its hash tag, an integer's 8 bytes or its
    /// decimal text, as the strategy encodes it.
    pub input: Vec<u8>,
    /// Whether a hash tag (`{...}`) selected `input` out of a longer key.
    pub tagged: bool,
    /// The hash, as the strategy uses it (32-bit hashes zero-extended, signed ones as
    /// their two's complement bits).
    pub value: u64,
}

impl Hashed {
    /// How the topology's own key hashing hashes `key` (what every strategy that does not
    /// hash keys itself uses).
    pub(crate) fn of(hashing: &KeyHashing, key: Key<'_>) -> Hashed {
        let function = match hashing.function {
            HashFunction::SipHash24 { .. } => "siphash-2-4",
            HashFunction::Crc32 => "crc32",
        };
        let (function, input, tagged) = match key {
            Key::Bytes(bytes) => {
                let input = hashing.routed_bytes(bytes);
                (function, input.to_vec(), input.len() != bytes.len())
            }
            Key::U64(value) => match hashing.integers {
                IntegerKeys::LeBytes => (function, value.to_le_bytes().to_vec(), false),
                IntegerKeys::Identity => ("identity", value.to_le_bytes().to_vec(), false),
            },
        };
        Hashed { function, input, tagged, value: hashing.hash(key) }
    }

    /// A profile's own hash of `input` (no tag).
    pub(crate) fn own(function: &'static str, input: &[u8], value: u64) -> Hashed {
        Hashed { function, input: input.to_vec(), tagged: false, value }
    }
}

/// What the strategy hit with the key's hash (or the key itself).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hit {
    /// Nothing more specific than the shard number (rendezvous, directory fallbacks,
    /// id layouts, Kafka-like profiles without a table, ...).
    Shard,
    /// `hash % nodes` (`modulo`; `one_based`: a remainder of 0 is shard `nodes`).
    Modulo {
        /// The divisor.
        nodes: u32,
        /// Whether shards are numbered from 1.
        one_based: bool,
    },
    /// Jump consistent hash over `buckets` nodes.
    Jump {
        /// The node count.
        buckets: u32,
    },
    /// The ring point owning the key: the first at or after the key's position,
    /// wrapping (`ring`, `ketama`).
    Point {
        /// The point's position.
        point: u64,
    },
    /// A Maglev lookup table entry, `hash % size`.
    TableEntry {
        /// The entry.
        entry: u32,
        /// The table size.
        size: u32,
    },
    /// The token owning the key: the first at or after the key's token, wrapping
    /// (`token_ring`, `cassandra`).
    Token {
        /// The owning token.
        token: i64,
    },
    /// A vbucket (`vbucket`, `couchbase`).
    Vbucket {
        /// The vbucket.
        vbucket: u32,
        /// How many vbuckets there are.
        vbuckets: u32,
        /// Whether the key's override chose it (instead of its hash).
        overridden: bool,
    },
    /// A Redis Cluster hash slot.
    Slot {
        /// The slot, in `0..16384`.
        slot: u32,
    },
    /// A vshard bucket (numbered from 1).
    Bucket {
        /// The bucket.
        bucket: u32,
        /// How many buckets there are.
        buckets: u32,
    },
    /// The range of raw keys holding the key (`key_range`): `[start, end)`, `None` for
    /// the open ends.
    KeyRange {
        /// The range (the shard).
        range: u32,
        /// Its lowest key, `None` for the first range.
        start: Option<Vec<u8>>,
        /// The lowest key of the next range, `None` for the last.
        end: Option<Vec<u8>>,
    },
    /// The range of the hash space holding the key's hash (`hash_range`): `[start, end)`,
    /// `end` `None` for the last range (up to `2^64 - 1` included).
    HashRange {
        /// The range (the shard).
        range: u32,
        /// Its lowest hash.
        start: u64,
        /// The lowest hash of the next range.
        end: Option<u64>,
    },
    /// The trie leaf whose prefix the hash starts with.
    Leaf {
        /// The leaf's prefix, as bits (`"10"`).
        prefix: String,
    },
    /// A partition (`multilevel`: `hash % partitions`, mapped to a group; `kafka`).
    Partition {
        /// The partition.
        partition: u32,
        /// How many partitions there are.
        partitions: u32,
        /// The group the partition is mapped to (`multilevel`).
        group: Option<String>,
    },
    /// The key's own entry in a `directory`.
    Listed,
}

/// One lookup retraced: see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The strategy's `type`.
    pub strategy: &'static str,
    /// What was hashed, `None` when the strategy reads the key itself (`key_range`
    /// compares raw keys, id strategies read fields out of ids).
    pub hashed: Option<Hashed>,
    /// What the strategy hit.
    pub hit: Hit,
    /// The shard, as [`route`](crate::Router::route) returns it.
    pub shard: u32,
    /// The owner's index in the node list.
    pub node_index: u32,
    /// The owner's id.
    pub node: String,
}

impl Explanation {
    /// The lookup in one line, e.g. `siphash-2-4(key) = 0x…, % 1024 = vbucket 17, whose
    /// chain starts with "cache-b"`.
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "redis_cluster"}}"#)?;
    /// let explanation = router.explain("{user1000}.following")?;
    /// assert_eq!(explanation.hashed.as_ref().unwrap().input, b"user1000");
    /// let why = explanation.why();
    /// assert!(why.starts_with(r#"crc16-xmodem(hash tag "user1000") = 0x"#), "{why}");
    /// assert!(why.ends_with(&format!(", % 16384 = slot {}, served by {:?}", explanation.shard, explanation.node)));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn why(&self) -> String {
        let node = &self.node;
        let Some(hashed) = &self.hashed else {
            return match &self.hit {
                Hit::KeyRange { range, start, end } => {
                    let bound = |bound: &Option<Vec<u8>>, open: &str| match bound {
                        Some(bytes) => format!("{:?}", Escaped(bytes)),
                        None => String::from(open),
                    };
                    format!(
                        "the key sorts into range {range} [{}, {}), owned by {node:?}",
                        bound(start, "start"),
                        bound(end, "end")
                    )
                }
                Hit::Listed => format!("the directory lists the key on {node:?}"),
                _ => format!("{} reads shard {} out of the key, owned by {node:?}", self.strategy, self.shard),
            };
        };
        let input = if hashed.tagged { format!("hash tag {:?}", Escaped(&hashed.input)) } else { String::from("key") };
        let hash = format!("{}({input}) = {:#x}", hashed.function, hashed.value);
        let shard = self.shard;
        match &self.hit {
            Hit::Modulo { nodes, one_based } => {
                let zero =
                    if *one_based && hashed.value % u64::from(*nodes) == 0 { " (0 counts as the last)" } else { "" };
                format!("{hash}, % {nodes} = shard {shard}{zero}, node {node:?}")
            }
            Hit::Jump { buckets } => format!("{hash}, jump over {buckets} nodes = {shard}, node {node:?}"),
            Hit::Point { point } => format!("{hash}, the next ring point is {point:#x}, a point of {node:?}"),
            Hit::TableEntry { entry, size } => format!("{hash}, % {size} = table entry {entry}, which holds {node:?}"),
            Hit::Token { token } => format!(
                "{hash}, the first token at or after the key's token {} is {token}, owned by {node:?}",
                hashed.value as i64
            ),
            Hit::Vbucket { vbucket, vbuckets, overridden: true } => format!(
                "the key's override sends it to vbucket {vbucket} of {vbuckets}, whose chain starts with {node:?}"
            ),
            Hit::Vbucket { vbucket, vbuckets, overridden: false } => {
                format!("{hash}, % {vbuckets} = vbucket {vbucket}, whose chain starts with {node:?}")
            }
            Hit::Slot { slot } => format!("{hash}, % 16384 = slot {slot}, served by {node:?}"),
            Hit::Bucket { bucket, buckets } => {
                format!("{hash}, % {buckets} + 1 = bucket {bucket}, in a range of replicaset {node:?}")
            }
            Hit::HashRange { range, start, end } => {
                let end = end.map_or(String::from("2^64"), |end| format!("{end:#x}"));
                format!("{hash}, in range {range} [{start:#x}, {end}), owned by {node:?}")
            }
            Hit::Leaf { prefix } => format!("{hash}, whose leading bits match leaf \"{prefix}\", owned by {node:?}"),
            Hit::Partition { partition, partitions, group } => {
                let group = group.as_ref().map_or(String::new(), |group| format!(", mapped to group {group:?}"));
                format!("{hash}, % {partitions} = partition {partition}{group}, on {node:?}")
            }
            Hit::Listed | Hit::KeyRange { .. } | Hit::Shard => {
                format!("{hash}, which {} puts in shard {shard}, owned by {node:?}", self.strategy)
            }
        }
    }
}

/// Bytes shown as text where they are UTF-8, with escapes otherwise.
struct Escaped<'a>(&'a [u8]);

impl core::fmt::Debug for Escaped<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match core::str::from_utf8(self.0) {
            Ok(text) => write!(f, "{text:?}"),
            Err(_) => {
                f.write_str("b\"")?;
                for &byte in self.0 {
                    write!(f, "{}", core::ascii::escape_default(byte))?;
                }
                f.write_str("\"")
            }
        }
    }
}
