//! The `vshard` profile: route a key exactly as Tarantool vshard's
//! `vshard.router.bucket_id_strcrc32(key)` does, then the bucket to its replicaset.
//!
//! **Algorithm.** `bucket_id = crc32c_raw(key) % bucket_count + 1`: buckets are
//! numbered from 1, and `crc32c_raw` is CRC-32C (Castagnoli, reflected `0x82F63B78`)
//! with init `0xFFFFFFFF` and **no** final xor ([`crate::hash::crc32c_raw`]), which is
//! what Tarantool's `digest.crc32` returns. Sources: vshard `vshard/router/init.lua`
//! (`router_bucket_id_strcrc32`: `lhash.strcrc32(key) % router.total_bucket_count + 1`),
//! `vshard/hash.lua` (`strcrc32`: `digest.crc32(tostring(key))`), vshard's default
//! `bucket_count` of 3000 (`vshard/consts.lua`, `DEFAULT_BUCKET_COUNT`), and Tarantool's
//! `digest.crc32` (check: `digest.crc32("123456789") == 486108540`, which is
//! `!0xE3069283`, verified with Tarantool 2.6.0). The bucket lives in one replicaset:
//! the replicasets are the document's nodes.
//!
//! **Keys.** Byte keys are hashed as they are. An integer key (`Key::U64`) means its
//! decimal ASCII string, as `tostring` writes a Lua integer: `42` routes as `"42"`.
//! vshard itself hashes `tostring(key)`, which for a Lua *number* of 10^14 or more is
//! `%.14g` notation (`1.2345678901235e+14`): pass such ids as the string the
//! application really hashes. Table (composite) keys are the concatenation of the
//! parts' `tostring`s (`crc32:update` per part), so `{"a", 1}` routes as the bytes
//! `a1`. The hashing is fixed by the profile: a document whose `hashing` section is
//! not the default is refused (`invalid_topology` at `hashing`).
//!
//! **The document.** `{"type": "vshard", "bucket_count": 3000}` splits buckets
//! `1..=bucket_count` into contiguous runs, one per node in list order, the first
//! `bucket_count % n` nodes getting one bucket more (3000 over 3 nodes: `1..=1000`,
//! `1001..=2000`, `2001..=3000`). Give the real assignment with `"ranges": [{"node":
//! "rs-a", "first": 1, "last": 1000}, ...]`: ranges in bucket order, contiguous, from 1
//! to `bucket_count`, a node may own several.
//!
//! **Routing results.** The shard is the 1-based bucket id (`1..=bucket_count`), the
//! node its replicaset. A bucket lives in one replicaset (replication is inside it), so
//! `replicas(key, 1)` is the only replica count. Weights are not supported (vshard's
//! replicaset weights steer rebalancing, not routing).
//!
//! **Cost.** One CRC-32C pass over the key and one binary search over the ranges.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hash::crc32c_raw;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::with_key_bytes;
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::strategy::spec::{count_param, Place, Spec};

/// vshard's default `bucket_count`.
pub const DEFAULT_BUCKET_COUNT: u32 = 3000;

/// `{"type": "vshard", "bucket_count": 3000, "ranges": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VshardSpec {
    /// The number of buckets, in `1..=`[`limits::MAX_VBUCKETS`].
    pub bucket_count: u32,
    /// `(first bucket, node index)` per range, in bucket order, the first starting at 1,
    /// each ending where the next starts; `None`: the even split.
    pub ranges: Option<Vec<(u32, u32)>>,
}

/// vshard's bucket id of a key's bytes: `crc32c_raw(bytes) % bucket_count + 1`.
///
/// `bucket_count` must be non-zero (zero gives 1 rather than panicking).
///
/// # Example
/// ```
/// // Tarantool: digest.crc32("123456789") == 486108540; 486108540 % 3000 + 1 == 541.
/// assert_eq!(shardroute::strategy::compat::vshard::bucket_id(b"123456789", 3000), 541);
/// ```
pub fn bucket_id(bytes: &[u8], bucket_count: u32) -> u32 {
    crc32c_raw(bytes).checked_rem(bucket_count).unwrap_or(0) + 1
}

impl Spec for VshardSpec {
    const TYPE: &'static str = "vshard";
    const FIELDS: &'static [&'static str] = &["type", "bucket_count", "ranges"];
    type Placement = Vshard;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<VshardSpec> {
        let bucket_count = count_param(object, "bucket_count", DEFAULT_BUCKET_COUNT, limits::MAX_VBUCKETS)?;
        let ranges = match object.optional("ranges") {
            None => {
                if nodes.len() as u64 > u64::from(bucket_count) {
                    return Err(json::at(
                        &object.path_of("bucket_count"),
                        format_args!("{bucket_count} buckets cannot be split over {} nodes", nodes.len()),
                    ));
                }
                None
            }
            Some(value) => Some(parse_ranges(&object.path_of("ranges"), value, bucket_count, nodes)?),
        };
        Ok(VshardSpec { bucket_count, ranges })
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("bucket_count", self.bucket_count.into());
        if let Some(ranges) = &self.ranges {
            let rows = ranges
                .iter()
                .enumerate()
                .map(|(i, &(first, node))| {
                    let last = ranges.get(i + 1).map_or(self.bucket_count, |next| next.0 - 1);
                    let mut row = Map::new();
                    row.put("node", Value::String(nodes[node as usize].id.clone()));
                    row.put("first", first.into());
                    row.put("last", last.into());
                    Value::Object(row)
                })
                .collect();
            object.put("ranges", Value::Array(rows));
        }
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Vshard> {
        crate::strategy::spec::require_default_hashing("vshard", "with Tarantool's digest.crc32", hashing)?;
        let ranges = match &self.ranges {
            Some(ranges) => ranges.clone(),
            None => even_ranges(self.bucket_count, nodes.len() as u32),
        };
        Ok(Vshard { bucket_count: self.bucket_count, ranges })
    }
}

/// The default split: contiguous runs in node order, the first `count % n` one longer.
fn even_ranges(bucket_count: u32, nodes: u32) -> Vec<(u32, u32)> {
    let nodes = nodes.max(1);
    let (base, extra) = (bucket_count / nodes, bucket_count % nodes);
    let mut first = 1u32;
    (0..nodes)
        .map(|node| {
            let range = (first, node);
            first += base + u32::from(node < extra);
            range
        })
        .collect()
}

fn parse_ranges(path: &str, value: &Value, bucket_count: u32, nodes: &[Node]) -> Result<Vec<(u32, u32)>> {
    let rows = json::array(path, value)?;
    if rows.is_empty() {
        return Err(json::at(path, "needs at least one range"));
    }
    if rows.len() > bucket_count as usize {
        return Err(json::at(path, format_args!("{} ranges for {bucket_count} buckets", rows.len())));
    }
    let mut ranges = Vec::with_capacity(rows.len());
    let mut next = 1u64;
    for (i, row) in rows.iter().enumerate() {
        let row_path = format!("{path}[{i}]");
        let object = Object::new(&row_path, row, &["node", "first", "last"])?;
        let id = json::str(&object.path_of("node"), object.required("node")?)?;
        let node = nodes.iter().position(|node| node.id == id).ok_or_else(|| {
            json::at(&object.path_of("node"), format_args!("names node {id:?}, which is not in nodes"))
        })?;
        let first = json::u32_in(&object.path_of("first"), object.required("first")?, 1, bucket_count)?;
        let last = json::u32_in(&object.path_of("last"), object.required("last")?, 1, bucket_count)?;
        if u64::from(first) != next {
            return Err(json::at(
                &object.path_of("first"),
                format_args!("expected {next}: ranges are contiguous, in bucket order, from 1"),
            ));
        }
        if last < first {
            return Err(json::at(&object.path_of("last"), format_args!("{last} is before first {first}")));
        }
        ranges.push((first, node as u32));
        next = u64::from(last) + 1;
    }
    if next != u64::from(bucket_count) + 1 {
        return Err(json::at(
            path,
            format_args!("the ranges end at bucket {}; they must reach {bucket_count}", next - 1),
        ));
    }
    Ok(ranges)
}

/// A compiled vshard bucket table.
#[derive(Clone, Debug)]
pub struct Vshard {
    bucket_count: u32,
    /// `(first bucket, node)`, sorted by first bucket, the first at 1.
    ranges: Vec<(u32, u32)>,
}

impl Place for Vshard {
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(with_key_bytes(key, |bytes| bucket_id(bytes, self.bucket_count)))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        let hashed = with_key_bytes(key, |bytes| Hashed::own("crc32c", bytes, u64::from(crc32c_raw(bytes))));
        let bucket = self.shard(hashing, key)?;
        Ok((Some(hashed), Hit::Bucket { bucket, buckets: self.bucket_count }, bucket))
    }

    fn owner(&self, shard: u32) -> u32 {
        // The range whose first bucket is the last one `<= shard` (the first is 1).
        let index = self.ranges.partition_point(|range| range.0 <= shard);
        self.ranges[index.saturating_sub(1)].1
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        if count != 1 {
            return Err(Error::argument(format!(
                "a vshard bucket lives in one replicaset; {count} replicas requested (replication is inside the replicaset)"
            )));
        }
        out.push(self.owner(self.shard(hashing, key)?));
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        1
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        1..self.bucket_count + 1
    }
}
