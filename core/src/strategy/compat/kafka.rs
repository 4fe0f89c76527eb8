//! The `kafka` profile: the partition a Kafka producer picks for a keyed record.
//!
//! **Algorithm.** The Java client's default partitioner (Apache Kafka `clients`,
//! `BuiltInPartitioner.partitionForKey` since 3.3, `DefaultPartitioner.partition`
//! before): `partition = toPositive(murmur2(key)) % partitions`, where `murmur2` is
//! `Utils.murmur2` (MurmurHash2, seed `0x9747b28c`, [`murmur2_kafka`]) over the
//! serialized key bytes and `toPositive(x) = x & 0x7fffffff` (not `abs`). The shard is the
//! partition; its node is the partition's leader.
//!
//! **What matches.** `"partitioner": "java"` (the default) is, bit for bit, the Java
//! client, kafka-python's `DefaultPartitioner` (`kafka/partitioner/default.py`) and
//! kafkajs' `Partitioners.DefaultPartitioner` (named `JavaCompatiblePartitioner` in
//! kafkajs 1.x; `src/producer/partitioners/default/murmur2.js`, 64-bit `Long` maths),
//! checked over 10,000+ keys in `conformance/oracles/`.
//!
//! `"partitioner": "kafkajs_legacy"` is kafkajs' `Partitioners.LegacyPartitioner`, the
//! default of kafkajs 1.x (`src/producer/partitioners/legacy/murmur2.js`, kafkajs
//! 2.2.4), which topics written by kafkajs 1.x producers were partitioned with. It is the
//! same `toPositive(h) % partitions` over a port of murmur2 to plain JavaScript numbers,
//! which differs from Java in two ways:
//!
//! 1. Its block loop runs `i < length / 4` without flooring, so when the length is not a
//!    multiple of 4 it mixes one extra block: the 1 to 3 tail bytes zero-padded to 4
//!    (`undefined & 0xff` is 0). The tail bytes are then mixed a second time by the
//!    `switch` as in Java.
//! 2. Its multiplications (`k *= M`, `h *= M`) are IEEE-754 double products, rounded to
//!    53 bits, and only then truncated to 32 bits by the next bitwise operator
//!    (ECMAScript `ToInt32`/`ToUint32`). A product above `2^53` has lost its low bits, so
//!    the 32-bit result differs from Java's exact wrapping product.
//!
//! The hashes differ for nearly every key, the empty one included (`275646684` legacy,
//! `275646681` Java: the final mixing products already exceed `2^53`). This module reproduces the double arithmetic exactly (an
//! `f64` product is correctly rounded on every platform, and an integral `f64` below
//! `2^63` converts to `i64` exactly, whose low 32 bits are `ToInt32`).
//!
//! **Keys.** A byte key is the serialized key. An integer key `k` is the ASCII decimal
//! string of `k` (`42` routes as the key `"42"`): what kafkajs sends for a number key
//! (`Buffer.from(String(key))`). A Java producer with `LongSerializer` sends 8
//! big-endian bytes instead: pass those bytes as a byte key. A record without a key
//! (sticky / round-robin partitioning) is not a routing question and has no spelling.
//!
//! **Key hashing.** The profile fixes its hash; a document whose `hashing` section is
//! not the default is rejected (`invalid_topology` at `hashing`), so nobody believes a
//! SipHash seed or hash tag changes a Kafka partition.
//!
//! **The document.**
//!
//! ```json
//! {"type": "kafka", "partitions": 12, "partitioner": "java", "leaders": ["b1", "b2", ...]}
//! ```
//!
//! `partitions` (required, `1..=`[`limits::MAX_PARTITIONS`]) is the topic's partition
//! count; `partitioner` is `"java"` (default) or `"kafkajs_legacy"`; `leaders`
//! (optional) names the leader broker of each partition, one node id per partition, as
//! `kafka-topics --describe` prints them. Without `leaders`, partition `p` is led by
//! `nodes[p % n]` (round robin, as Kafka's rack-unaware assignment starts). Replicas are
//! the leader, then the next nodes in list order. Weights are not supported.
//!
//! **Guarantees and cost.** Exactly the client's partition for every key; changing
//! `partitions` remaps nearly every key (as it does in Kafka, which is why topics are
//! rarely repartitioned). One murmur2 pass over the key per lookup, no allocation
//! (an integer key is formatted into a 20-byte stack buffer).

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::explain::{Hashed, Hit};
use crate::hash::murmur2_kafka;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::with_key_bytes;
use crate::key::Key;
use crate::limits;
use crate::node::index_from_value as node_index;
use crate::node::Node;
use crate::strategy::spec::{Place, Spec};

/// Which client's partitioner the profile reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Partitioner {
    /// The Java client's default partitioner (also kafka-python, kafkajs 2.x default).
    Java,
    /// kafkajs' `LegacyPartitioner` (the kafkajs 1.x default).
    KafkajsLegacy,
}

impl Partitioner {
    /// The document spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Partitioner::Java => "java",
            Partitioner::KafkajsLegacy => "kafkajs_legacy",
        }
    }
}

/// `{"type": "kafka", "partitions": 12, "partitioner": "java", "leaders": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaSpec {
    /// The topic's partition count, in `1..=`[`limits::MAX_PARTITIONS`].
    pub partitions: u32,
    /// The partitioner reproduced.
    pub partitioner: Partitioner,
    /// The leader node index of each partition, when the document lists them.
    pub leaders: Option<Vec<u32>>,
}

impl Spec for KafkaSpec {
    const TYPE: &'static str = "kafka";
    const FIELDS: &'static [&'static str] = &["type", "partitions", "partitioner", "leaders"];
    type Placement = Kafka;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<KafkaSpec> {
        let partitions = partition_count(object, "partitions")?;
        let partitioner = object.choice(
            "partitioner",
            "partitioner",
            Partitioner::Java,
            &[("java", Partitioner::Java), ("kafkajs_legacy", Partitioner::KafkajsLegacy)],
        )?;
        let leaders = match object.optional("leaders") {
            None => None,
            Some(value) => Some(owner_list(&object.path_of("leaders"), value, partitions, nodes)?),
        };
        Ok(KafkaSpec { partitions, partitioner, leaders })
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("partitions", self.partitions.into());
        object.put("partitioner", self.partitioner.as_str().into());
        if let Some(leaders) = &self.leaders {
            object.put("leaders", owner_list_value(leaders, nodes));
        }
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Kafka> {
        crate::strategy::spec::require_default_hashing(Self::TYPE, "with Kafka's murmur2", hashing)?;
        Ok(Kafka {
            partitions: self.partitions,
            partitioner: self.partitioner,
            owners: Owners::new(self.leaders.as_deref(), self.partitions, nodes.len() as u32),
        })
    }
}

/// A compiled `kafka` profile.
#[derive(Clone, Debug)]
pub struct Kafka {
    partitions: u32,
    partitioner: Partitioner,
    owners: Owners,
}

impl Kafka {
    /// The partition of a serialized key.
    fn partition_of(&self, bytes: &[u8]) -> u32 {
        self.positive_hash(bytes) % self.partitions
    }

    /// `toPositive(murmur2(bytes))`, the number the partition is the remainder of.
    fn positive_hash(&self, bytes: &[u8]) -> u32 {
        let hash = match self.partitioner {
            Partitioner::Java => murmur2_kafka(bytes),
            Partitioner::KafkajsLegacy => murmur2_kafkajs_legacy(bytes),
        };
        hash & 0x7fff_ffff
    }
}

impl Place for Kafka {
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(match key {
            Key::Bytes(bytes) => self.partition_of(bytes),
            Key::U64(value) => {
                let mut buffer = [0u8; 20];
                self.partition_of(crate::key::decimal(value, &mut buffer))
            }
        })
    }

    fn owner(&self, shard: u32) -> u32 {
        self.owners.owner(shard)
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hashed = with_key_bytes(key, |bytes| Hashed::own("murmur2", bytes, u64::from(self.positive_hash(bytes))));
        let partition = self.shard(hashing, key)?;
        Ok((Some(hashed), Hit::Partition { partition, partitions: self.partitions, group: None }, partition))
    }

    fn max_replicas(&self) -> u32 {
        self.owners.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.partitions
    }
}

/// kafkajs' legacy `murmur2` (`src/producer/partitioners/legacy/murmur2.js`), with
/// JavaScript's number semantics: see the module docs for how it differs from Java's.
///
/// Returns the JavaScript result (an int32) as its two's complement bits.
pub fn murmur2_kafkajs_legacy(data: &[u8]) -> u32 {
    const SEED: u32 = 0x9747_b28c;
    const M: f64 = 1_540_483_477.0; // 0x5bd1e995
    let length = data.len();
    // `h = SEED ^ length`: both operands through ToInt32, so h is an int32.
    let mut h = f64::from((SEED ^ length as u32) as i32);
    // `for (i = 0; i < length / 4; i++)`: ceil(length / 4) blocks, the last zero-padded.
    for block in data.chunks(4) {
        let mut bytes = [0u8; 4];
        bytes[..block.len()].copy_from_slice(block);
        // The sum of the shifted bytes is exactly the int32 of the little-endian word.
        let k = f64::from(i32::from_le_bytes(bytes)) * M; // k *= M (a double product)
        let k = to_int32(k) ^ (to_uint32(k) >> 24) as i32; // k ^= k >>> R
        let k = f64::from(k) * M; // k *= M
        h = f64::from(to_int32(h * M) ^ to_int32(k)); // h *= M; h ^= k
    }
    let tail = length & !3;
    let mut x = to_int32(h);
    match length % 4 {
        3 => {
            x ^= i32::from(data[tail + 2]) << 16;
            x ^= i32::from(data[tail + 1]) << 8;
            x ^= i32::from(data[tail]);
            h = f64::from(x) * M;
        }
        2 => {
            x ^= i32::from(data[tail + 1]) << 8;
            x ^= i32::from(data[tail]);
            h = f64::from(x) * M;
        }
        1 => {
            x ^= i32::from(data[tail]);
            h = f64::from(x) * M;
        }
        _ => {}
    }
    let h = f64::from(to_int32(h) ^ (to_uint32(h) >> 13) as i32) * M; // h ^= h >>> 13; h *= M
    (to_int32(h) ^ (to_uint32(h) >> 15) as i32) as u32 // h ^= h >>> 15
}

/// ECMAScript `ToInt32` of an integral double of magnitude below `2^63`.
#[inline]
fn to_int32(x: f64) -> i32 {
    (x as i64) as i32
}

/// ECMAScript `ToUint32` of an integral double of magnitude below `2^63`.
#[inline]
fn to_uint32(x: f64) -> u32 {
    (x as i64) as u32
}

/// A partition count: required, in `1..=`[`limits::MAX_PARTITIONS`] (above it a limit).
pub(crate) fn partition_count(object: &Object<'_>, name: &str) -> Result<u32> {
    let value = object.required(name)?;
    match value.as_u64() {
        Some(n) if n > u64::from(limits::MAX_PARTITIONS) => Err(crate::error::Error::limit(alloc::format!(
            "{}: {n} exceeds the limit of {}",
            object.path_of(name),
            limits::MAX_PARTITIONS
        ))),
        _ => json::u32_in(&object.path_of(name), value, 1, limits::MAX_PARTITIONS),
    }
}

/// One node id per partition or shard, as node indices.
pub(crate) fn owner_list(path: &str, value: &Value, count: u32, nodes: &[Node]) -> Result<Vec<u32>> {
    let list = json::array(path, value)?;
    if list.len() != count as usize {
        return Err(json::at(path, format_args!("expected one node id per partition ({count}), found {}", list.len())));
    }
    list.iter().enumerate().map(|(index, id)| node_index(&alloc::format!("{path}[{index}]"), id, nodes)).collect()
}

/// Node indices as a JSON array of node ids.
pub(crate) fn owner_list_value(owners: &[u32], nodes: &[Node]) -> Value {
    Value::Array(owners.iter().map(|&index| Value::String(nodes[index as usize].id.clone())).collect())
}

/// Who owns each partition: an explicit list, or `p % n`.
#[derive(Clone, Debug)]
pub(crate) struct Owners {
    list: Option<Vec<u32>>,
    pub(crate) nodes: u32,
}

impl Owners {
    pub(crate) fn new(list: Option<&[u32]>, _count: u32, nodes: u32) -> Owners {
        Owners { list: list.map(<[u32]>::to_vec), nodes }
    }

    pub(crate) fn owner(&self, shard: u32) -> u32 {
        match &self.list {
            Some(list) => list.get(shard as usize).copied().unwrap_or(0),
            None => shard % self.nodes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_murmur2_values_of_kafkajs() {
        // kafkajs 2.2.4 legacy/murmur2.js and default/murmur2.js, run under Node 20.
        for (key, legacy, java) in [
            ("", 275_646_684i32, 275_646_681i32),
            ("a", -809_885_833, -1_563_381_124),
            ("ab", -1_686_076_413, 316_155_434),
            ("abc", 1_545_667_907, 479_470_107),
            ("abcd", -2_139_815_384, -1_323_649_548),
            ("hello world", 1_620_997_181, 1_221_641_059),
        ] {
            assert_eq!(murmur2_kafkajs_legacy(key.as_bytes()) as i32, legacy, "legacy {key:?}");
            assert_eq!(murmur2_kafka(key.as_bytes()) as i32, java, "java {key:?}");
        }
    }
}
