//! The shard functions. Each submodule is one function of the sharding literature and
//! its docs teach it: algorithm, guarantees, cost, source.
//!
//! A strategy is the `strategy` section of a topology document: `{"type": ..., params}`.
//! [`Strategy`] is its parsed form (one spec type per module); the router compiles it
//! once into a placement, so lookups do no parsing and no allocation.
//!
//! | `type` | shard | node | replicas | weights |
//! |---|---|---|---|---|
//! | `modulo` | `hash % n` (or 1-based) | `nodes[shard]` (`nodes[shard - 1]`) | next nodes in list order | no |
//! | `jump` | `jump(hash, n)` | `nodes[shard]` | next nodes in list order | no |
//! | `ring` | owning node's index | ring successor | clockwise distinct nodes | yes (points) |
//! | `rendezvous` | winning node's index | highest score | next highest scores | yes |
//! | `key_range` | index of the range holding the raw key (byte order) | the range's node | owner, then next nodes in list order | no |
//! | `hash_range` | index of the range holding the key's hash | the range's node | owner, then next nodes in list order | no |
//! | `vbucket` | `hash % vbuckets`, or the key's override | head of the vbucket's chain | the chain | stored, unused |
//! | `directory` | owner node's index | the key's entry, else the fallback's node | owner, then the fallback's order | the fallback's |
//! | `multilevel` | `hash % partitions` | the partition's node in its group (rendezvous or jump) | the group's next choices | rendezvous within groups |
//! | `trie` | index of the key's leaf (hash bits from the top) | the leaf's node | nearest leaves by XOR distance | no |
//! | `token_ring` | owning node's index | first token `>=` the key's token (Cassandra) | clockwise distinct nodes (SimpleStrategy) | yes (tokens) |
//! | `redis_cluster` | the key's slot, `CRC16(key or {tag}) % 16384` | the slot range's master | the range's master, then its replicas | no |
//! | `maglev` | owning node's index | `table[hash % M]` (Maglev lookup table) | next distinct nodes along the table | yes (Envoy's turns) |
//! | `id_bits` | the shard field of the id (or its cell's shard) | `shards[shard]` | owner, then next nodes in list order | no |
//! | `id_groups` | global index of the id's group's shard owning `id % W` | the shard's node | owner, then next nodes in list order | per shard, in the group |
//! | `cassandra` | owning node's index | first token `>=` the key's Murmur3Partitioner token | clockwise distinct nodes (SimpleStrategy) | no (tokens) |
//! | `vitess` | index of the keyrange holding the key's keyspace id (vindex `hash`, `xxhash`, `numeric`) | the shard's node | owner, then next nodes in list order | no |
//! | `kafka` | the partition, `toPositive(murmur2(key)) % partitions` (Java, or kafkajs' legacy murmur2) | the partition's leader | leader, then next nodes in list order | no |
//! | `elasticsearch` | `floorMod(murmur3(routing as UTF-16LE), routing shards) / factor` | the primary's node | primary's node, then next nodes in list order | no |
//! | `couchbase` | vbucket `((crc32 >> 16) & 0x7fff) % V` (Couchbase clients) | the row's active (`-1`: `no_nodes`) | the row's non-null entries | no |
//! | `vshard` | bucket `crc32c_raw % bucket_count + 1` (Tarantool vshard) | the bucket's replicaset | one per bucket | no |
//!
//! # Adding a strategy
//!
//! Write one module with a spec type implementing `Spec` (its `type` name, its fields,
//! parse and write) and a placement type implementing `Place` (shard, owner, replicas),
//! then add one line to the `strategies!` list below. Bindings need no change: they
//! only ever see [`Router`](crate::Router).

pub mod cassandra;
pub mod couchbase;
pub mod directory;
pub mod elasticsearch;
pub mod hash_range;
pub mod id_bits;
pub mod id_groups;
pub mod jump;
pub mod kafka;
pub mod ketama;
pub mod key_range;
pub mod maglev;
pub mod modulo;
pub mod multilevel;
pub mod ranges;
pub mod redis_cluster;
pub mod rendezvous;
pub mod ring;
pub mod token_ring;
pub mod trie;
pub mod vbucket;
pub mod vitess;
pub mod vshard;

use alloc::format;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Object};
use crate::key::Key;
use crate::topology::Node;

/// The parsed parameters of one strategy type: how its `strategy` object is read and
/// written, and what it compiles into.
pub(crate) trait Spec: Sized {
    /// The `type` name in the document.
    const TYPE: &'static str;
    /// Every field the strategy object may have, `type` included.
    const FIELDS: &'static [&'static str];
    /// Whether node weights mean something to this strategy. If not, a document that
    /// sets a weight other than 1 is rejected rather than silently ignored.
    const WEIGHTED: bool;
    /// The compiled form that answers lookups.
    type Placement: Place;
    /// Reads the strategy object (unknown fields are already rejected).
    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<Self>;
    /// Writes the parameters (every one, defaults included) into the canonical object;
    /// `type` is written by the caller.
    fn write(&self, object: &mut Map<alloc::string::String, Value>, nodes: &[Node]);
    /// Builds the placement.
    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Self::Placement>;
}

/// A compiled strategy: what a router asks per key.
pub(crate) trait Place {
    /// The shard of a key.
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32>;
    /// The node index owning a shard returned by [`Place::shard`].
    fn owner(&self, shard: u32) -> u32;
    /// The first `count` distinct node indices for a key, owner first, into `out`
    /// (already cleared; `1 <= count <= node count` is checked by the router).
    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()>;
    /// The most replicas every key can get.
    fn max_replicas(&self) -> u32;
    /// The shard numbers this placement can return (`0..n`, `1..n+1` for 1-based modulo).
    fn shard_range(&self) -> core::ops::Range<u32>;
    /// The shards a scan over keys in `[start, end)` must visit, in key order (`end`
    /// `None`: to the end of the key space). Placements that hash keys scatter every
    /// range over every shard, which is the default; range-partitioned placements
    /// override it.
    fn shards_for_range(&self, _hashing: &KeyHashing, _start: Key<'_>, _end: Option<Key<'_>>) -> Result<Vec<u32>> {
        Ok(self.shard_range().collect())
    }
    /// The node that serves reads of a key: the owner, except where a placement in
    /// motion says otherwise.
    fn read_node(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(self.owner(self.shard(hashing, key)?))
    }
    /// The nodes a write of a key goes to, first the one that decides (`out` is empty).
    fn write_nodes(&self, hashing: &KeyHashing, key: Key<'_>, out: &mut Vec<u32>) -> Result<()> {
        out.push(self.owner(self.shard(hashing, key)?));
        Ok(())
    }
    /// Decodes an id that carries its shard (id strategies override it).
    fn decode_id(&self, _id: u64) -> Result<DecodedId> {
        Err(Error::argument("this strategy's ids do not carry a shard; decode_id needs an id strategy"))
    }
}

/// An id decoded by a strategy whose ids carry their shard: the shard, and the id's
/// other fields by name (`timestamp`, `sequence`, `local`, `cell`, ...), in layout order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedId {
    /// The shard the id routes to.
    pub shard: u32,
    /// The id's other fields, most significant first.
    pub fields: Vec<(&'static str, u64)>,
}

/// Replicas as "the owner, then the next nodes in list order, wrapping": the rule of
/// strategies without their own notion of a second choice (modulo, jump).
pub(crate) fn successors(owner: u32, count: u32, node_count: u32, out: &mut Vec<u32>) {
    out.extend((0..count).map(|step| ((u64::from(owner) + u64::from(step)) % u64::from(node_count)) as u32));
}

/// Refuses a `hashing` section other than the default for a compatibility profile,
/// which hashes keys itself exactly as its system does (`invalid_topology` at
/// `hashing`): a SipHash seed must never look as if it changed a Redis slot.
pub(crate) fn require_default_hashing(kind: &str, how: &str, hashing: &KeyHashing) -> Result<()> {
    if *hashing == KeyHashing::default() {
        Ok(())
    } else {
        Err(json::at(
            "hashing",
            format_args!("the {kind} profile hashes keys {how}, as the real system does; remove the hashing section (it would change nothing)"),
        ))
    }
}

/// A count parameter: 0 is out of range (`invalid_topology`), above `max` a limit.
pub(crate) fn count_param(object: &Object<'_>, name: &str, default: u32, max: u32) -> Result<u32> {
    let Some(value) = object.optional(name) else { return Ok(default) };
    let path = object.path_of(name);
    match value.as_u64() {
        Some(0) | None => json::u32_in(&path, value, 1, max),
        Some(n) if n > u64::from(max) => Err(Error::limit(format!("{path}: {n} exceeds the limit of {max}"))),
        Some(n) => Ok(n as u32),
    }
}

/// Declares the strategies: the public [`Strategy`] enum, the compiled `Placement`
/// enum, and the dispatch between them. One line per strategy.
macro_rules! strategies {
    ($($(#[$doc:meta])* $variant:ident => $module:ident :: $spec:ident,)*) => {
        /// A parsed `strategy` section: one variant per shard function, holding that
        /// module's parameters.
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum Strategy {
            $($(#[$doc])* $variant($module::$spec),)*
        }

        /// Every `type` name, for error messages.
        const TYPES: &[&str] = &[$(<$module::$spec as Spec>::TYPE,)*];

        impl Strategy {
            /// The `type` name of this strategy in the document.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Strategy::$variant(_) => <$module::$spec as Spec>::TYPE,)*
                }
            }

            pub(crate) fn from_value(path: &str, value: &Value, nodes: &[Node]) -> Result<Strategy> {
                let kind = match value.get("type") {
                    Some(kind) => json::str(&json::join(path, "type"), kind)?,
                    None if value.is_object() => return Err(json::at(&json::join(path, "type"), "missing required field")),
                    None => return Err(json::at(path, format_args!("expected an object, found {}", json::type_name(value)))),
                };
                $(
                    if kind == <$module::$spec as Spec>::TYPE {
                        let object = Object::new(path, value, <$module::$spec as Spec>::FIELDS)?;
                        check_weights(kind, <$module::$spec as Spec>::WEIGHTED, nodes)?;
                        return Ok(Strategy::$variant(<$module::$spec as Spec>::parse(&object, nodes)?));
                    }
                )*
                Err(json::at(
                    &json::join(path, "type"),
                    format_args!("unknown strategy {kind:?}; expected one of {}", TYPES.join(", ")),
                ))
            }

            pub(crate) fn to_value(&self, nodes: &[Node]) -> Value {
                let mut object = Map::new();
                object.insert("type".into(), self.type_name().into());
                match self {
                    $(Strategy::$variant(spec) => spec.write(&mut object, nodes),)*
                }
                Value::Object(object)
            }
        }

        /// A strategy compiled against its node list.
        #[derive(Clone, Debug)]
        pub(crate) enum Placement {
            $($variant(<$module::$spec as Spec>::Placement),)*
        }

        impl Placement {
            pub(crate) fn compile(strategy: &Strategy, hashing: &KeyHashing, nodes: &[Node]) -> Result<Placement> {
                Ok(match strategy {
                    $(Strategy::$variant(spec) => Placement::$variant(spec.compile(hashing, nodes)?),)*
                })
            }

            #[inline]
            pub(crate) fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
                match self {
                    $(Placement::$variant(place) => place.shard(hashing, key),)*
                }
            }

            #[inline]
            pub(crate) fn owner(&self, shard: u32) -> u32 {
                match self {
                    $(Placement::$variant(place) => place.owner(shard),)*
                }
            }

            pub(crate) fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
                out.clear();
                match self {
                    $(Placement::$variant(place) => place.replicas(hashing, key, count, out),)*
                }
            }

            pub(crate) fn max_replicas(&self) -> u32 {
                match self {
                    $(Placement::$variant(place) => place.max_replicas(),)*
                }
            }

            pub(crate) fn shard_range(&self) -> core::ops::Range<u32> {
                match self {
                    $(Placement::$variant(place) => place.shard_range(),)*
                }
            }

            pub(crate) fn shards_for_range(&self, hashing: &KeyHashing, start: Key<'_>, end: Option<Key<'_>>) -> Result<Vec<u32>> {
                match self {
                    $(Placement::$variant(place) => place.shards_for_range(hashing, start, end),)*
                }
            }

            pub(crate) fn read_node(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
                match self {
                    $(Placement::$variant(place) => place.read_node(hashing, key),)*
                }
            }

            pub(crate) fn write_nodes(&self, hashing: &KeyHashing, key: Key<'_>, out: &mut Vec<u32>) -> Result<()> {
                out.clear();
                match self {
                    $(Placement::$variant(place) => place.write_nodes(hashing, key, out),)*
                }
            }

            pub(crate) fn decode_id(&self, id: u64) -> Result<DecodedId> {
                match self {
                    $(Placement::$variant(place) => place.decode_id(id),)*
                }
            }
        }
    };
}

strategies! {
    /// `hash % n`, or 1-based.
    Modulo => modulo::ModuloSpec,
    /// Jump consistent hash over the node list.
    Jump => jump::JumpSpec,
    /// Consistent-hash ring with virtual nodes.
    Ring => ring::RingSpec,
    /// Rendezvous (highest random weight) hashing.
    Rendezvous => rendezvous::RendezvousSpec,
    /// Fixed vbuckets with a dictionary.
    Vbucket => vbucket::VbucketSpec,
    /// Sorted boundaries over raw keys (byte order).
    KeyRange => key_range::KeyRangeSpec,
    /// Sorted boundaries over the 64-bit hash space.
    HashRange => hash_range::HashRangeSpec,
    /// An explicit key → node table with a fallback strategy.
    Directory => directory::DirectorySpec,
    /// Partitions → groups → nodes: a small top map over remappable groups.
    Multilevel => multilevel::MultilevelSpec,
    /// Bit trie over the hash bits: one leaf per node.
    Trie => trie::TrieSpec,
    /// Cassandra-style token ring with seeded or explicit tokens.
    TokenRing => token_ring::TokenRingSpec,
    /// Maglev lookup table (Eisenbud et al., NSDI 2016).
    Maglev => maglev::MaglevSpec,
    /// Ids that carry their shard: bit fields, Snowflake, ticket servers, cells.
    IdBits => id_bits::IdBitsSpec,
    /// Id intervals owned by groups of weighted shards.
    IdGroups => id_groups::IdGroupsSpec,
    /// Cassandra's Murmur3Partitioner over explicit tokens (compatibility profile).
    Cassandra => cassandra::CassandraSpec,
    /// Redis Cluster: CRC16 hash slots over slot ranges (compatibility profile).
    RedisCluster => redis_cluster::RedisClusterSpec,
    /// Vitess vindexes (`hash`, `xxhash`, `numeric`) over keyranges (compatibility profile).
    Vitess => vitess::VitessSpec,
    /// Kafka's keyed-record partitioner (Java client, or kafkajs' legacy one).
    Kafka => kafka::KafkaSpec,
    /// Elasticsearch's document routing (Murmur3 over UTF-16, routing shards).
    Elasticsearch => elasticsearch::ElasticsearchSpec,
    /// Ketama continuum of memcached clients (libmemcached, libketama, Couchbase).
    Ketama => ketama::KetamaSpec,
    /// Couchbase's vbucket map: CRC-32 bits 16..31 % V (compatibility profile).
    Couchbase => couchbase::CouchbaseSpec,
    /// Tarantool vshard: CRC-32C (no final xor) % bucket_count + 1 (compatibility profile).
    Vshard => vshard::VshardSpec,
}

fn check_weights(kind: &str, weighted: bool, nodes: &[Node]) -> Result<()> {
    if weighted {
        return Ok(());
    }
    match nodes.iter().position(|node| node.weight != 1.0) {
        Some(index) => Err(json::at(
            &format!("nodes[{index}].weight"),
            format_args!("the {kind} strategy does not support weights (leave weight at 1)"),
        )),
        None => Ok(()),
    }
}
