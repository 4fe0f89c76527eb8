//! The `elasticsearch` profile: the primary shard Elasticsearch (7.0 and later, 8.x)
//! stores a document on.
//!
//! **Algorithm.** Elasticsearch hashes the *effective routing* (the `routing` value, or
//! the document `_id` when none is given) with `Murmur3HashFunction.hash(String)`
//! (`server/src/main/java/org/elasticsearch/cluster/routing/Murmur3HashFunction.java`):
//! MurmurHash3 x86_32 with seed 0 ([`murmur3_x86_32`]) over the string's UTF-16 code
//! units, each written as 2 bytes little-endian, read as a Java `int`. The shard is
//! `IndexRouting.hashToShardId` (`cluster/routing/IndexRouting.java`, 8.x;
//! `OperationRouting.calculateScaledShardId` in 7.x):
//!
//! ```text
//! shard = floorMod(hash, number_of_routing_shards) / (number_of_routing_shards / number_of_shards)
//! ```
//!
//! With `routing_partition_size` `p > 1` (a routing value spreads over `p` shards,
//! `IndexRouting.Partitioned.shardId`), the hash is
//! `hash(routing) + floorMod(hash(_id), p)`, a wrapping Java `int` addition.
//!
//! **`number_of_routing_shards`.** Indices created by 7.0+ default it to
//! `MetadataCreateIndexService.calculateNumRoutingShards`: `number_of_shards << s` with
//! `s = max(1, 10 - ceil(log2(number_of_shards)))`, the largest `number_of_shards * 2^s`
//! not above 1024, but always at least one split (so 5 shards → 640, 1 → 1024,
//! 600 → 1200). Indices created before 7.0 used `number_of_shards` itself, and an
//! index made by `_split` or `_shrink`, or created with `index.number_of_routing_shards`,
//! keeps its own value: give it explicitly then (`GET <index>/_settings` shows it only
//! when set explicitly; otherwise apply the rule above to the shard count the index was
//! created with). It must be a whole multiple of `number_of_shards`, at most `2^31 - 1`.
//! `routing_partition_size` must be 1 or below `number_of_routing_shards`, as
//! `IndexMetadata.Builder.build` requires.
//!
//! **Keys.** A key is the effective routing as text: valid UTF-8 (a byte key that is not
//! UTF-8 is `invalid_key`: routing values are Java strings). An integer key is its
//! decimal string, as Elasticsearch receives a numeric `_id` or `routing`. When
//! `routing_partition_size > 1` the shard needs both the routing and the `_id`, and
//! Elasticsearch requires the routing (`_routing.required` in the mapping): the key is
//! then `routing + "\0" + _id`, split at the first NUL (a key without a NUL, or an
//! integer key, is `invalid_key`; a routing value containing a NUL cannot be spelled).
//!
//! **Key hashing.** Fixed by the profile: a document whose `hashing` section is not the
//! default is rejected (`invalid_topology` at `hashing`).
//!
//! **The document.**
//!
//! ```json
//! {"type": "elasticsearch", "number_of_shards": 5, "number_of_routing_shards": 640,
//!  "routing_partition_size": 1, "primaries": ["es-1", "es-2", "es-3", "es-1", "es-2"]}
//! ```
//!
//! Only `number_of_shards` is required. `primaries` (optional) names the node holding
//! each primary shard, as `GET _cat/shards` shows it; without it shard `s` is on
//! `nodes[s % n]`. Replicas are the primary's node, then the next nodes in list order.
//! Weights are not supported. The canonical form writes every field but `primaries`
//! (written when given), `number_of_routing_shards` resolved.
//!
//! **What is not covered.** Time-series (TSDB) indices route by `routing_path`
//! dimensions extracted from the source (`IndexRouting.ExtractFromSource`), and 8.x
//! indices with `index.routing.reshard` state: neither is a key lookup.
//!
//! **Cost.** One Murmur3 pass over `2 * (UTF-16 length)` bytes per key (two with a
//! partition); keys up to 256 code units are encoded on the stack, longer ones in a
//! temporary buffer.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hash::murmur3_x86_32;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::node::Node;
use crate::strategy::compat::kafka::{owner_list, owner_list_value, partition_count, Owners};
use crate::strategy::spec::{Place, Spec};

/// `{"type": "elasticsearch", "number_of_shards": 5, ...}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElasticsearchSpec {
    /// `index.number_of_shards`.
    pub number_of_shards: u32,
    /// `index.number_of_routing_shards` (resolved: the 7.0+ default when not given).
    pub number_of_routing_shards: u32,
    /// `index.routing_partition_size` (1: unpartitioned).
    pub routing_partition_size: u32,
    /// The node index of each primary shard, when the document lists them.
    pub primaries: Option<Vec<u32>>,
}

/// Elasticsearch 7.0+'s default `number_of_routing_shards` for an index created with
/// `shards` primaries (`MetadataCreateIndexService.calculateNumRoutingShards`).
///
/// # Example
/// ```
/// use shardroute::strategy::compat::elasticsearch::default_routing_shards;
/// assert_eq!(default_routing_shards(1), 1024);
/// assert_eq!(default_routing_shards(5), 640);
/// assert_eq!(default_routing_shards(600), 1200);
/// ```
pub fn default_routing_shards(shards: u32) -> u32 {
    let shards = shards.max(1);
    let log2_shards = 32 - (shards - 1).leading_zeros(); // ceil(log2(shards))
    let splits = 10i64 - i64::from(log2_shards);
    let splits = splits.max(1) as u32;
    shards.checked_shl(splits).filter(|&n| n >> splits == shards).unwrap_or(u32::MAX)
}

impl Spec for ElasticsearchSpec {
    const TYPE: &'static str = "elasticsearch";
    const FIELDS: &'static [&'static str] =
        &["type", "number_of_shards", "number_of_routing_shards", "routing_partition_size", "primaries"];
    type Placement = Elasticsearch;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<ElasticsearchSpec> {
        let number_of_shards = partition_count(object, "number_of_shards")?;
        let routing_path = object.path_of("number_of_routing_shards");
        let number_of_routing_shards = match object.optional("number_of_routing_shards") {
            None => default_routing_shards(number_of_shards),
            Some(value) => {
                let routing = json::u32_in(&routing_path, value, 1, i32::MAX as u32)?;
                if routing % number_of_shards != 0 {
                    return Err(json::at(
                        &routing_path,
                        format_args!("{routing} is not a whole multiple of number_of_shards ({number_of_shards})"),
                    ));
                }
                routing
            }
        };
        let partition_path = object.path_of("routing_partition_size");
        let routing_partition_size = match object.optional("routing_partition_size") {
            None => 1,
            Some(value) => {
                let size = json::u32_in(&partition_path, value, 1, i32::MAX as u32)?;
                if size != 1 && size >= number_of_routing_shards {
                    return Err(json::at(
                        &partition_path,
                        format_args!(
                            "{size} must be less than number_of_routing_shards ({number_of_routing_shards}), as Elasticsearch requires"
                        ),
                    ));
                }
                size
            }
        };
        let primaries = match object.optional("primaries") {
            None => None,
            Some(value) => Some(owner_list(&object.path_of("primaries"), value, number_of_shards, nodes)?),
        };
        Ok(ElasticsearchSpec { number_of_shards, number_of_routing_shards, routing_partition_size, primaries })
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("number_of_shards", self.number_of_shards.into());
        object.put("number_of_routing_shards", self.number_of_routing_shards.into());
        object.put("routing_partition_size", self.routing_partition_size.into());
        if let Some(primaries) = &self.primaries {
            object.put("primaries", owner_list_value(primaries, nodes));
        }
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Elasticsearch> {
        crate::strategy::spec::require_default_hashing(
            Self::TYPE,
            "with Murmur3 over the UTF-16 code units of the routing value",
            hashing,
        )?;
        Ok(Elasticsearch {
            shards: self.number_of_shards,
            routing_shards: self.number_of_routing_shards as i32,
            factor: (self.number_of_routing_shards / self.number_of_shards) as i32,
            partition_size: self.routing_partition_size as i32,
            owners: Owners::new(self.primaries.as_deref(), self.number_of_shards, nodes.len() as u32),
        })
    }
}

/// A compiled `elasticsearch` profile.
#[derive(Clone, Debug)]
pub struct Elasticsearch {
    shards: u32,
    routing_shards: i32,
    factor: i32,
    partition_size: i32,
    owners: Owners,
}

/// `Murmur3HashFunction.hash(String)`: Murmur3 x86_32, seed 0, over the UTF-16LE code
/// units of `text`, as a Java `int`.
///
/// # Example
/// ```
/// // Elasticsearch's Murmur3HashFunctionTests: hash("hell") == 0x5a0cb7c3.
/// assert_eq!(shardroute::strategy::compat::elasticsearch::routing_hash("hell"), 0x5a0cb7c3);
/// ```
pub fn routing_hash(text: &str) -> i32 {
    const STACK: usize = 256;
    let units = text.encode_utf16();
    if text.len() <= STACK {
        // A UTF-8 string of L bytes has at most L UTF-16 code units.
        let mut buffer = [0u8; 2 * STACK];
        let mut length = 0;
        for unit in units {
            buffer[length..length + 2].copy_from_slice(&unit.to_le_bytes());
            length += 2;
        }
        murmur3_x86_32(&buffer[..length], 0) as i32
    } else {
        let bytes: Vec<u8> = units.flat_map(u16::to_le_bytes).collect();
        murmur3_x86_32(&bytes, 0) as i32
    }
}

impl Elasticsearch {
    /// `IndexRouting.hashToShardId`.
    fn shard_of_hash(&self, hash: i32) -> u32 {
        (hash.rem_euclid(self.routing_shards) / self.factor) as u32
    }

    fn shard_of_text(&self, text: &str) -> Result<u32> {
        if self.partition_size == 1 {
            return Ok(self.shard_of_hash(routing_hash(text)));
        }
        let Some((routing, id)) = text.split_once('\0') else {
            return Err(Error::key(format!(
                "this index has routing_partition_size {}: the key must be routing + \"\\0\" + _id",
                self.partition_size
            )));
        };
        let offset = routing_hash(id).rem_euclid(self.partition_size);
        Ok(self.shard_of_hash(routing_hash(routing).wrapping_add(offset)))
    }
}

impl Place for Elasticsearch {
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        match key {
            Key::Bytes(bytes) => match core::str::from_utf8(bytes) {
                Ok(text) => self.shard_of_text(text),
                Err(err) => Err(Error::key(format!(
                    "Elasticsearch routing values are strings: the key is not valid UTF-8 at byte {}",
                    err.valid_up_to()
                ))),
            },
            Key::U64(value) => {
                let mut buffer = [0u8; 20];
                let digits = crate::key::decimal(value, &mut buffer);
                // ASCII digits are valid UTF-8.
                self.shard_of_text(core::str::from_utf8(digits).unwrap_or("0"))
            }
        }
    }

    fn owner(&self, shard: u32) -> u32 {
        self.owners.owner(shard)
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let shard = self.shard(hashing, key)?;
        // One hash of the whole routing value only without a routing partition (with one,
        // the _id's hash adds an offset).
        let hashed = match key {
            Key::Bytes(bytes) if self.partition_size == 1 => core::str::from_utf8(bytes).ok().map(|text| {
                let units: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
                Hashed::own("murmur3", &units, u64::from(routing_hash(text) as u32))
            }),
            _ => None,
        };
        Ok((hashed, Hit::Shard, shard))
    }

    fn max_replicas(&self) -> u32 {
        self.owners.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.shards
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_routing_shards_rule() {
        for (shards, routing) in [(1, 1024), (2, 1024), (3, 768), (5, 640), (512, 1024), (513, 1026), (1024, 2048)] {
            assert_eq!(default_routing_shards(shards), routing, "{shards} shards");
        }
    }
}
