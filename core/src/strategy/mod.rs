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
//! | `ketama` | owning server's index | next continuum point after the key's MD5 point (memcached clients) | clockwise distinct servers | yes (points) |
//! | `id_bits` | the shard field of the id (or its cell's shard) | `shards[shard]` | owner, then next nodes in list order | no |
//! | `id_groups` | global index of the id's group's shard owning `id % W` | the shard's node | owner, then next nodes in list order | per shard, in the group |
//! | `cassandra` | owning node's index | first token `>=` the key's Murmur3Partitioner token | clockwise distinct nodes (SimpleStrategy) | no (tokens) |
//! | `vitess` | index of the keyrange holding the key's keyspace id (vindex `hash`, `xxhash`, `numeric`) | the shard's node | owner, then next nodes in list order | no |
//! | `kafka` | the partition, `toPositive(murmur2(key)) % partitions` (Java, or kafkajs' legacy murmur2) | the partition's leader | leader, then next nodes in list order | no |
//! | `elasticsearch` | `floorMod(murmur3(routing as UTF-16LE), routing shards) / factor` | the primary's node | primary's node, then next nodes in list order | no |
//! | `couchbase` | vbucket `((crc32 >> 16) & 0x7fff) % V` (Couchbase clients) | the row's active (`-1`: `no_nodes`) | the row's non-null entries | no |
//! | `vshard` | bucket `crc32c_raw % bucket_count + 1` (Tarantool vshard) | the bucket's replicaset | one per bucket | no |
//!
//! The folders are the families: [`hashed`] (a node from the hash and the node list),
//! [`partitioned`] (tables the document states), [`ids`] (ids that carry their shard)
//! and [`compat`] (one real system each).
//!
//! # Adding a strategy
//!
//! Write one module in its family's folder with a spec type implementing `Spec` (its
//! `type` name and fields, parse, write, compile, and `check` for the rules between the
//! spec and the node list; `follows_node_list`/`node_removed` if adding and removing a
//! node is the whole change) and a placement type implementing `Place` (shard, owner,
//! and what differs from the defaults: replicas, range scans, batches), then add one
//! line to the `catalogue!` below (with its cargo feature, named as its `type`, also in
//! Cargo.toml's list) and an `Edit` implementation in [`crate::ops`] (empty when it takes
//! no operation of its own). Bindings need no change: they only ever see
//! [`Router`](crate::Router) and [`ops::apply`](crate::ops::apply).

pub mod compat;
pub mod hashed;
pub mod ids;
pub mod partitioned;
pub(crate) mod points;
pub(crate) mod spec;

pub use spec::DecodedId;

use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::node::Node;
use spec::{check_weights, Place, Spec};

/// Declares the strategies: the public [`Strategy`] enum, the compiled `Placement`
/// enum, and the dispatch between them. One line per strategy.
///
/// A strategy whose cargo feature is off has no variant in either enum, so nothing of it
/// is compiled into a build that leaves it out (its placement, writer, comparison): a
/// document of that type is refused, and code that makes or reads one strategy by type
/// goes through [`Variant`], which says "not built in" instead. Every `match` is on `*self`
/// with `ref` bindings, so that a build with no strategy at all (an empty enum) compiles.
macro_rules! strategies {
    ($($(#[doc = $doc:expr])* #[feature = $feature:literal] $variant:ident => $spec:path,)*) => {
        /// A parsed `strategy` section: one variant per shard function, holding that
        /// module's parameters (only those of the strategies built in: see the crate's
        /// features).
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum Strategy {
            $($(#[doc = $doc])* #[cfg(feature = $feature)] $variant($spec),)*
        }

        /// Every `type` name, for error messages.
        const TYPES: &[&str] = &[$(<$spec as Spec>::TYPE,)*];
        /// Whether each of `TYPES` is built in (its cargo feature on).
        const BUILT_IN: &[bool] = &[$(cfg!(feature = $feature),)*];
        /// The cargo feature of each of `TYPES`.
        const FEATURES: &[&str] = &[$($feature,)*];
        /// Whether any strategy is left out of this build.
        const ANY_LEFT_OUT: bool = !($(cfg!(feature = $feature))&&*);

        $(
            impl Variant for $spec {
                fn into_strategy(self) -> Result<Strategy> {
                    #[cfg(feature = $feature)]
                    return Ok(Strategy::$variant(self));
                    #[cfg(not(feature = $feature))]
                    return Err(not_built_in(<$spec as Spec>::TYPE, $feature, self));
                }

                fn of(strategy: &Strategy) -> Option<&$spec> {
                    #[allow(unreachable_patterns)]
                    match *strategy {
                        #[cfg(feature = $feature)]
                        Strategy::$variant(ref spec) => Some(spec),
                        _ => None,
                    }
                }
            }
        )*

        impl Strategy {
            /// The `type` name of this strategy in the document.
            pub fn type_name(&self) -> &'static str {
                match *self {
                    $(#[cfg(feature = $feature)] Strategy::$variant(_) => <$spec as Spec>::TYPE,)*
                }
            }

            pub(crate) fn from_value(path: &str, value: &Value, nodes: &[Node]) -> Result<Strategy> {
                let kind = match value.get("type") {
                    Some(kind) => json::str(&json::join(path, "type"), kind)?,
                    None if value.is_object() => return Err(json::at(&json::join(path, "type"), "missing required field")),
                    None => return Err(json::at(path, format_args!("expected an object, found {}", json::type_name(value)))),
                };
                $(
                    #[cfg(feature = $feature)]
                    if kind == <$spec as Spec>::TYPE {
                        let object = Object::new(path, value, <$spec as Spec>::FIELDS)?;
                        check_weights(kind, <$spec as Spec>::WEIGHTED, nodes)?;
                        let spec = <$spec as Spec>::parse(&object, nodes)?;
                        spec.check(nodes)?;
                        return Ok(Strategy::$variant(spec));
                    }
                )*
                let _ = nodes;
                // A type not built in: a build without the strategy's feature has none of
                // its parsing code, and so no way to make one (see `Cargo.toml`). One
                // refusal for all of them, its feature found in the table (a refusal per
                // strategy was ~3 KB of a build with four of 22).
                let left_out = TYPES.iter().zip(FEATURES).find(|(name, _)| ANY_LEFT_OUT && **name == kind);
                if let Some((_, feature)) = left_out {
                    return Err(json::at(
                        &json::join(path, "type"),
                        format_args!("strategy {kind:?} is not built in (cargo feature {feature:?} of shardroute is off)"),
                    ));
                }
                let built: Vec<&str> = TYPES.iter().zip(BUILT_IN).filter(|(_, on)| **on).map(|(name, _)| *name).collect();
                Err(json::at(
                    &json::join(path, "type"),
                    format_args!("unknown strategy {kind:?}; expected one of {}{}", built.join(", "), json::hint(kind, &built)),
                ))
            }

            /// The rules between this strategy and a node list (see `Spec::check`),
            /// weights included: what every edit ends with.
            pub(crate) fn check(&self, nodes: &[Node]) -> Result<()> {
                match *self {
                    $(#[cfg(feature = $feature)] Strategy::$variant(ref spec) => {
                        check_weights(<$spec as Spec>::TYPE, <$spec as Spec>::WEIGHTED, nodes)?;
                        spec.check(nodes)
                    })*
                }
            }

            /// Whether adding or removing a node is the whole change (see `Spec::follows_node_list`).
            pub(crate) fn follows_node_list(&self) -> bool {
                match *self {
                    $(#[cfg(feature = $feature)] Strategy::$variant(ref spec) => spec.follows_node_list(),)*
                }
            }

            /// Follows `nodes[index]` leaving the list (see `Spec::node_removed`).
            pub(crate) fn node_removed(&mut self, index: u32, nodes: &[Node]) -> Result<()> {
                match *self {
                    $(#[cfg(feature = $feature)] Strategy::$variant(ref mut spec) => spec.node_removed(index, nodes),)*
                }
            }

            pub(crate) fn to_value(&self, nodes: &[Node]) -> Value {
                let mut object = Map::new();
                object.put("type", self.type_name().into());
                match *self {
                    $(#[cfg(feature = $feature)] Strategy::$variant(ref spec) => spec.write(&mut object, nodes),)*
                }
                Value::Object(object)
            }
        }

        /// A strategy compiled against its node list.
        #[derive(Clone, Debug)]
        pub(crate) enum Placement {
            $(#[cfg(feature = $feature)] $variant(<$spec as Spec>::Placement),)*
        }

        impl Placement {
            pub(crate) fn compile(strategy: &Strategy, hashing: &KeyHashing, nodes: &[Node]) -> Result<Placement> {
                Ok(match *strategy {
                    $(#[cfg(feature = $feature)] Strategy::$variant(ref spec) => Placement::$variant(spec.compile(hashing, nodes)?),)*
                })
            }

            #[inline]
            pub(crate) fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shard(hashing, key),)*
                }
            }

            #[inline]
            pub(crate) fn owner(&self, shard: u32) -> u32 {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.owner(shard),)*
                }
            }

            pub(crate) fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
                out.clear();
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.replicas(hashing, key, count, out),)*
                }
            }

            pub(crate) fn max_replicas(&self) -> u32 {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.max_replicas(),)*
                }
            }

            pub(crate) fn shard_range(&self) -> core::ops::Range<u32> {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shard_range(),)*
                }
            }

            pub(crate) fn shards_for_range(&self, hashing: &KeyHashing, start: Key<'_>, end: Option<Key<'_>>) -> Result<Vec<u32>> {
                // Every key of the range has one partition key (`partition_key`, the
                // module docs of `hashing`): the range is on that key's shard, in every
                // placement, hashed or ordered.
                if hashing.one_partition(start, end) {
                    return Ok(alloc::vec![self.shard(hashing, start)?]);
                }
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shards_for_range(hashing, start, end),)*
                }
            }

            pub(crate) fn read_node(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.read_node(hashing, key),)*
                }
            }

            pub(crate) fn shard_chain(&self, shard: u32, out: &mut Vec<u32>) {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shard_chain(shard, out),)*
                }
            }

            pub(crate) fn range_is_contiguous(&self) -> bool {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.range_is_contiguous(),)*
                }
            }

            pub(crate) fn read_replica(&self, hashing: &KeyHashing, key: Key<'_>, turn: u32) -> Result<u32> {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.read_replica(hashing, key, turn),)*
                }
            }

            pub(crate) fn write_nodes(&self, hashing: &KeyHashing, key: Key<'_>, out: &mut Vec<u32>) -> Result<()> {
                out.clear();
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.write_nodes(hashing, key, out),)*
                }
            }

            #[inline]
            pub(crate) fn batches_hashes(&self) -> bool {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.batches_hashes(),)*
                }
            }

            #[inline]
            pub(crate) fn shards_of_hashes<I: Iterator<Item = u64>>(&self, hashes: I, out: &mut Vec<u32>) {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shards_of_hashes(hashes, out),)*
                }
            }

            #[inline]
            pub(crate) fn shards_of_hash_slice(&self, hashes: &[u64], out: &mut Vec<u32>) {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shards_of_hash_slice(hashes, out),)*
                }
            }

            #[inline]
            pub(crate) fn shard_is_node(&self) -> bool {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.shard_is_node(),)*
                }
            }

            pub(crate) fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<crate::explain::Hashed>, crate::explain::Hit, u32)> {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.explain(hashing, key),)*
                }
            }

            pub(crate) fn decode_id(&self, id: u64) -> Result<DecodedId> {
                match *self {
                    $(#[cfg(feature = $feature)] Placement::$variant(ref place) => place.decode_id(id),)*
                }
            }
        }
    };
}

/// One strategy's spec as a [`Strategy`], for the code that makes or reads one strategy by
/// type (the operations that edit a table or import a system, `Router::moved`, the
/// dictionary, migrations), whatever the build: `into_strategy` is `invalid_argument`
/// ("not built in") and `of` is `None` when the strategy's cargo feature is off, so that
/// code compiles in every build and never names a variant that may be missing.
pub(crate) trait Variant: Spec {
    /// `self` as its [`Strategy`] variant.
    ///
    /// # Errors
    /// `invalid_argument` when the strategy is not built in.
    fn into_strategy(self) -> Result<Strategy>;

    /// The spec of `strategy` when it is this strategy.
    fn of(strategy: &Strategy) -> Option<&Self>;
}

impl Strategy {
    /// The spec of this strategy when it is of type `S` (`None` otherwise, and in a build
    /// without `S`'s feature).
    pub(crate) fn spec<S: Variant>(&self) -> Option<&S> {
        S::of(self)
    }
}

/// The refusal of a strategy value that this build cannot hold (its feature is off): what
/// an operation making it, or a reader finding it, reports.
#[allow(dead_code)]
fn not_built_in<S>(kind: &str, feature: &str, spec: S) -> crate::error::Error {
    drop(spec);
    crate::error::Error::argument(alloc::format!(
        "strategy {kind:?} is not built in (cargo feature {feature:?} of shardroute is off)"
    ))
}

/// Calls `$callback!` with the catalogue: one `Variant => path::to::Spec,` line per
/// strategy, each with its doc and `#[feature = "..."]`, the cargo feature that builds its
/// parser in (Cargo.toml lists the same names). The one list every per-strategy dispatch is built from
/// ([`Strategy`] and `Placement` here, the operations' dispatch in [`crate::ops`]).
macro_rules! catalogue {
    ($callback:ident) => {
        $callback! {
            /// `hash % n`, or 1-based.
            #[feature = "modulo"]
            Modulo => $crate::strategy::hashed::modulo::ModuloSpec,
            /// Jump consistent hash over the node list.
            #[feature = "jump"]
            Jump => $crate::strategy::hashed::jump::JumpSpec,
            /// Consistent-hash ring with virtual nodes.
            #[feature = "ring"]
            Ring => $crate::strategy::hashed::ring::RingSpec,
            /// Rendezvous (highest random weight) hashing.
            #[feature = "rendezvous"]
            Rendezvous => $crate::strategy::hashed::rendezvous::RendezvousSpec,
            /// Fixed vbuckets with a dictionary.
            #[feature = "vbucket"]
            Vbucket => $crate::strategy::partitioned::vbucket::VbucketSpec,
            /// Sorted boundaries over raw keys (byte order).
            #[feature = "key_range"]
            KeyRange => $crate::strategy::partitioned::key_range::KeyRangeSpec,
            /// Sorted boundaries over the 64-bit hash space.
            #[feature = "hash_range"]
            HashRange => $crate::strategy::partitioned::hash_range::HashRangeSpec,
            /// An explicit key → node table with a fallback strategy.
            #[feature = "directory"]
            Directory => $crate::strategy::partitioned::directory::DirectorySpec,
            /// Partitions → groups → nodes: a small top map over remappable groups.
            #[feature = "multilevel"]
            Multilevel => $crate::strategy::partitioned::multilevel::MultilevelSpec,
            /// Bit trie over the hash bits: one leaf per node.
            #[feature = "trie"]
            Trie => $crate::strategy::partitioned::trie::TrieSpec,
            /// Cassandra-style token ring with seeded or explicit tokens.
            #[feature = "token_ring"]
            TokenRing => $crate::strategy::partitioned::token_ring::TokenRingSpec,
            /// Maglev lookup table (Eisenbud et al., NSDI 2016).
            #[feature = "maglev"]
            Maglev => $crate::strategy::hashed::maglev::MaglevSpec,
            /// Ids that carry their shard: bit fields, Snowflake, ticket servers, cells.
            #[feature = "id_bits"]
            IdBits => $crate::strategy::ids::id_bits::IdBitsSpec,
            /// Id intervals owned by groups of weighted shards.
            #[feature = "id_groups"]
            IdGroups => $crate::strategy::ids::id_groups::IdGroupsSpec,
            /// Cassandra's Murmur3Partitioner over explicit tokens (compatibility profile).
            #[feature = "cassandra"]
            Cassandra => $crate::strategy::compat::cassandra::CassandraSpec,
            /// Redis Cluster: CRC16 hash slots over slot ranges (compatibility profile).
            #[feature = "redis_cluster"]
            RedisCluster => $crate::strategy::compat::redis_cluster::RedisClusterSpec,
            /// Vitess vindexes (`hash`, `xxhash`, `numeric`) over keyranges (compatibility profile).
            #[feature = "vitess"]
            Vitess => $crate::strategy::compat::vitess::VitessSpec,
            /// Kafka's keyed-record partitioner (Java client, or kafkajs' legacy one).
            #[feature = "kafka"]
            Kafka => $crate::strategy::compat::kafka::KafkaSpec,
            /// Elasticsearch's document routing (Murmur3 over UTF-16, routing shards).
            #[feature = "elasticsearch"]
            Elasticsearch => $crate::strategy::compat::elasticsearch::ElasticsearchSpec,
            /// Ketama continuum of memcached clients (libmemcached, libketama, Couchbase).
            #[feature = "ketama"]
            Ketama => $crate::strategy::hashed::ketama::KetamaSpec,
            /// Couchbase's vbucket map: CRC-32 bits 16..31 % V (compatibility profile).
            #[feature = "couchbase"]
            Couchbase => $crate::strategy::compat::couchbase::CouchbaseSpec,
            /// Tarantool vshard: CRC-32C (no final xor) % bucket_count + 1 (compatibility profile).
            #[feature = "vshard"]
            Vshard => $crate::strategy::compat::vshard::VshardSpec,
        }
    };
}
pub(crate) use catalogue;

catalogue!(strategies);
