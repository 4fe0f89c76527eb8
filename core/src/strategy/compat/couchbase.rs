//! The `couchbase` profile: route a key exactly as Couchbase's own clients do for a
//! Couchbase (vbucket) bucket.
//!
//! **Algorithm.** `vbucket = ((crc32(key) >> 16) & 0x7fff) % V`, where `crc32` is the
//! zlib CRC-32 ([`crate::hash::crc32`]) of the key bytes and `V` the length of the
//! bucket's `vBucketMap`; the key's node is `serverList[vBucketMap[vbucket][0]]`, its
//! replicas the following entries of that row. Sources: libcouchbase 3.x
//! `src/vbucket/vbucket.c` (`hash_crc32` returns `((~crc) >> 16) & 0x7fff`,
//! `lcbvb_k2vb` takes it `% nvb`, `lcbvb_map_key` reads `servers[0]` of the row, and
//! `mcreq_basic_packet` fails a key whose server index is `-1` with
//! `LCB_ERR_NO_MATCHING_SERVER`); the C++ core of the 4.x SDKs
//! (`core/topology/configuration.cxx`, `map_key`: the same hash, `% vbmap.size()`).
//! Only 15 bits of the CRC are used, so a map has at most 32 768 vbuckets (Couchbase
//! Server uses 1024, or 64 on macOS and 128 for some Magma buckets).
//!
//! **Keys.** Byte keys are hashed as they are (Couchbase document ids are byte
//! strings; text is its UTF-8). An integer key (`Key::U64`) means its decimal ASCII
//! string (`42` routes as `"42"`), which is what the SDKs do when a program formats a
//! numeric id as a document id. There are no hash tags. The hashing is fixed by the
//! profile: a document whose `hashing` section is not the default is refused
//! (`invalid_topology` at `hashing`), so no setting can seem to change a vbucket.
//!
//! **The document.** `{"type": "couchbase", "map": [["a", "b"], ["b", null], ...]}`
//! mirrors `vBucketServerMap`: the nodes are `serverList` in order, and `map` has one
//! row per vbucket of `1 + numReplicas` entries, each a node id or `null` where
//! Couchbase writes `-1` (no node in that position). Rows all have the same length, in
//! `1..=`[`MAX_REPLICAS`](crate::limits::MAX_REPLICAS)` + 1`; a node appears at most
//! once per row. `"forward_map"` (optional, same shape and length) is
//! `vBucketMapForward`, the map a rebalance is moving to: it is carried and written
//! back, but routing follows `map`, as the clients do (libcouchbase reads the forward
//! map only after a server answers `NOT_MY_VBUCKET`). The `import_couchbase_config`
//! operation builds this document from a bucket config as the server serves it.
//!
//! **Routing results.** The shard of a key is its vbucket; its node the row's active
//! entry. A key whose vbucket has no active node (`-1`, `null` here: a failed-over
//! node without a replica to promote) cannot be routed: `route`, `node` and `replicas`
//! fail with `no_nodes`, as the clients fail the operation. Replicas are the row's
//! non-null entries in row order (active first); asking for more than the row has is
//! `invalid_argument`. Weights are not supported.
//!
//! **Epochs.** A config is newer than another when its `(revEpoch, rev)` pair is
//! greater (Couchbase 7.0+; `revEpoch` absent means 0). The import packs the pair as
//! `epoch = revEpoch << 32 | rev`, so epochs order exactly as the pairs do and
//! [`Router::replace`](crate::Router::replace) refuses an older config
//! (`stale_epoch`); both numbers must be below 2^32.
//!
//! **Cost.** One CRC-32 pass over the key and one table read; memory 4 bytes per row
//! entry.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::explain::{Hashed, Hit};
use crate::hash::crc32;
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::with_key_bytes;
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::strategy::spec::{chain_replica, Place, Spec};

/// The most vbuckets a Couchbase map can usefully have: the hash keeps 15 bits.
pub const MAX_COUCHBASE_VBUCKETS: u32 = 1 << 15;

/// A map entry that names no node (Couchbase's `-1`).
const NONE: u32 = u32::MAX;

/// `{"type": "couchbase", "map": [...], "forward_map": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CouchbaseSpec {
    /// One row per vbucket, `1 + replicas` entries each: a node index, or `None` for `-1`.
    pub map: Vec<Vec<Option<u32>>>,
    /// `vBucketMapForward`, when the document has one (same shape as `map`).
    pub forward: Option<Vec<Vec<Option<u32>>>>,
}

/// Couchbase's vbucket of a key's bytes: `((crc32(bytes) >> 16) & 0x7fff) % vbuckets`.
///
/// `vbuckets` must be non-zero (a zero count gives 0 rather than panicking).
///
/// # Example
/// ```
/// // couchbaselabs/cbgb vbucket_test.go: "hello" is vbucket 528 of 1024.
/// assert_eq!(shardroute::strategy::compat::couchbase::vbucket_of(b"hello", 1024), 528);
/// ```
pub fn vbucket_of(bytes: &[u8], vbuckets: u32) -> u32 {
    let digest = (crc32(bytes) >> 16) & 0x7fff;
    digest.checked_rem(vbuckets).unwrap_or(0)
}

impl Spec for CouchbaseSpec {
    const TYPE: &'static str = "couchbase";
    const FIELDS: &'static [&'static str] = &["type", "map", "forward_map"];
    type Placement = Couchbase;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<CouchbaseSpec> {
        let map = parse_rows(&object.path_of("map"), object.required("map")?, nodes)?;
        let forward = match object.optional("forward_map") {
            None => None,
            Some(value) => Some(parse_rows(&object.path_of("forward_map"), value, nodes)?),
        };
        Ok(CouchbaseSpec { map, forward })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        check_rows("strategy.map", &self.map, None, nodes)?;
        match &self.forward {
            Some(forward) => check_rows("strategy.forward_map", forward, Some(self.map.len()), nodes),
            None => Ok(()),
        }
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("map", rows_value(&self.map, nodes));
        if let Some(forward) = &self.forward {
            object.put("forward_map", rows_value(forward, nodes));
        }
    }

    fn compile(&self, hashing: &KeyHashing, _nodes: &[Node]) -> Result<Couchbase> {
        crate::strategy::spec::require_default_hashing("couchbase", "with Couchbase's CRC-32", hashing)?;
        let width = self.map.first().map_or(1, Vec::len) as u32;
        let entries = self.map.iter().flatten().map(|entry| entry.unwrap_or(NONE)).collect();
        let shortest = self.map.iter().map(|row| row.iter().flatten().count() as u32).min().unwrap_or(0);
        Ok(Couchbase { vbuckets: self.map.len() as u32, width, entries, shortest })
    }
}

/// Rows of node indices as JSON rows of node ids and `null`s.
fn rows_value(rows: &[Vec<Option<u32>>], nodes: &[Node]) -> Value {
    Value::Array(
        rows.iter()
            .map(|row| {
                Value::Array(
                    row.iter()
                        .map(|entry| match entry {
                            Some(index) => Value::String(nodes[*index as usize].id.clone()),
                            None => Value::Null,
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

/// Reads `map` or `forward_map`: rows whose entries are node ids or `null`
/// ([`check_rows`] checks their shape).
fn parse_rows(path: &str, value: &Value, nodes: &[Node]) -> Result<Vec<Vec<Option<u32>>>> {
    let rows = json::array(path, value)?;
    let mut index: Vec<(&str, u32)> = nodes.iter().enumerate().map(|(i, node)| (node.id.as_str(), i as u32)).collect();
    index.sort_unstable();
    let mut parsed = Vec::with_capacity(rows.len().min(MAX_COUCHBASE_VBUCKETS as usize + 1));
    // Past the limits `check_rows` refuses the map; reading it all first would only cost.
    for (vbucket, row) in rows.iter().enumerate().take(MAX_COUCHBASE_VBUCKETS as usize + 1) {
        let row_path = || format!("{path}[{vbucket}]");
        let entries = row
            .as_array()
            .ok_or_else(|| json::at(&row_path(), format_args!("expected an array, found {}", json::type_name(row))))?;
        let mut parsed_row: Vec<Option<u32>> = Vec::with_capacity(entries.len().min(limits::MAX_REPLICAS as usize + 2));
        for (position, entry) in entries.iter().enumerate().take(limits::MAX_REPLICAS as usize + 2) {
            let entry_path = || format!("{}[{position}]", row_path());
            parsed_row.push(match entry {
                Value::Null => None,
                Value::String(id) => match index.binary_search_by(|probe| probe.0.cmp(id.as_str())) {
                    Ok(found) => Some(index[found].1),
                    Err(_) => {
                        return Err(json::at(&entry_path(), format_args!("names node {id:?}, which is not in nodes")))
                    }
                },
                other => {
                    return Err(json::at(
                        &entry_path(),
                        format_args!("expected a node id or null, found {}", json::type_name(other)),
                    ))
                }
            });
        }
        parsed.push(parsed_row);
    }
    Ok(parsed)
}

/// The shape of `map` (or `forward_map`, whose length must be `expected`): 1 to 32,768
/// rows of equal length, each of 1 to `MAX_REPLICAS + 1` entries naming nodes of the
/// list (or none), no node twice in a row.
fn check_rows(path: &str, rows: &[Vec<Option<u32>>], expected: Option<usize>, nodes: &[Node]) -> Result<()> {
    if rows.is_empty() {
        return Err(json::at(path, "needs at least one vbucket row"));
    }
    if rows.len() > MAX_COUCHBASE_VBUCKETS as usize {
        return Err(json::at(
            path,
            format_args!("{} vbuckets; Couchbase's hash has 15 bits, so at most {MAX_COUCHBASE_VBUCKETS}", rows.len()),
        ));
    }
    if let Some(expected) = expected {
        if rows.len() != expected {
            return Err(json::at(
                path,
                format_args!("expected {expected} rows (one per vbucket of map), found {}", rows.len()),
            ));
        }
    }
    let width = rows[0].len();
    for (vbucket, row) in rows.iter().enumerate() {
        let row_path = || format!("{path}[{vbucket}]");
        if row.is_empty() {
            return Err(json::at(&row_path(), "a row needs at least its active entry (a node id or null)"));
        }
        if row.len() > limits::MAX_REPLICAS as usize + 1 {
            return Err(Error::limit(format!(
                "{}: at most {} entries per row (1 active + {} replicas)",
                row_path(),
                limits::MAX_REPLICAS + 1,
                limits::MAX_REPLICAS
            )));
        }
        if row.len() != width {
            return Err(json::at(
                &row_path(),
                format_args!("has {} entries but row 0 has {width}: every row is 1 + numReplicas long", row.len()),
            ));
        }
        for (position, entry) in row.iter().enumerate() {
            let entry_path = || format!("{}[{position}]", row_path());
            match entry {
                Some(node) if *node as usize >= nodes.len() => {
                    return Err(json::at(&entry_path(), format_args!("node index {node} is past the node list")))
                }
                Some(_) if row[..position].contains(entry) => {
                    return Err(json::at(&entry_path(), "a node appears twice in one row"))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A compiled Couchbase vbucket map.
#[derive(Clone, Debug)]
pub struct Couchbase {
    vbuckets: u32,
    /// Entries per row: `1 + numReplicas`.
    width: u32,
    /// `entries[v * width..(v + 1) * width]` is the row of vbucket `v` ([`NONE`] for `-1`).
    entries: Vec<u32>,
    /// The fewest non-null entries of any row.
    shortest: u32,
}

impl Couchbase {
    fn row(&self, vbucket: u32) -> &[u32] {
        let start = vbucket as usize * self.width as usize;
        &self.entries[start..start + self.width as usize]
    }

    /// The vbucket of a key, which must have an active node.
    fn served_vbucket(&self, key: Key<'_>) -> Result<u32> {
        let vbucket = with_key_bytes(key, |bytes| vbucket_of(bytes, self.vbuckets));
        if self.row(vbucket)[0] == NONE {
            return Err(Error::new(
                ErrorKind::NoNodes,
                format!("vbucket {vbucket} has no active node (-1 in vBucketMap); Couchbase clients fail this key too"),
            ));
        }
        Ok(vbucket)
    }
}

impl Place for Couchbase {
    fn shard(&self, _hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        self.served_vbucket(key)
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        // The digest Couchbase reduces: bits 16..30 of the CRC-32.
        let hashed = with_key_bytes(key, |bytes| {
            Hashed::own("crc32 bits 16-30", bytes, u64::from((crc32(bytes) >> 16) & 0x7fff))
        });
        let vbucket = self.shard(hashing, key)?;
        Ok((Some(hashed), Hit::Vbucket { vbucket, vbuckets: self.vbuckets, overridden: false }, vbucket))
    }

    fn owner(&self, shard: u32) -> u32 {
        // `shard` comes from `shard`, which refuses vbuckets without an active node.
        self.row(shard)[0]
    }

    fn replicas(&self, _hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        let vbucket = self.served_vbucket(key)?;
        out.extend(self.row(vbucket).iter().copied().filter(|&entry| entry != NONE).take(count as usize));
        if out.len() < count as usize {
            let found = out.len();
            out.clear();
            return Err(Error::argument(format!(
                "vbucket {vbucket} has {found} node(s) in its row (-1 entries skipped); {count} requested"
            )));
        }
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.shortest.max(1)
    }

    fn shard_chain(&self, shard: u32, out: &mut Vec<u32>) {
        // The row's entries, `-1` skipped (the first is the active node when there is one).
        out.extend(self.row(shard).iter().copied().filter(|&entry| entry != NONE));
    }

    fn read_replica(&self, _hashing: &KeyHashing, key: Key<'_>, turn: u32) -> Result<u32> {
        // Couchbase's replica reads: the row's entries past the active, `-1` skipped.
        let vbucket = self.served_vbucket(key)?;
        let row: Vec<u32> = self.row(vbucket).iter().copied().filter(|&entry| entry != NONE).collect();
        Ok(chain_replica(&row, turn))
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.vbuckets
    }
}

/// Reads `field` of a config object as an integer in `0..2^32`.
fn config_u32(path: &str, value: &Value) -> Result<u32> {
    match value.as_u64() {
        Some(n) if n <= u64::from(u32::MAX) => Ok(n as u32),
        _ => Err(Error::argument(format!(
            "{path}: expected an integer in 0..=4294967295, found {}",
            json::describe(value)
        ))),
    }
}

/// Reads a `vBucketMap` of server indices (`-1` = none): node `i` is server `i`.
fn config_rows(path: &str, value: &Value, servers: usize) -> Result<Vec<Vec<Option<u32>>>> {
    let rows = value.as_array().ok_or_else(|| Error::argument(format!("{path}: expected an array of rows")))?;
    let mut out = Vec::with_capacity(rows.len());
    for (vbucket, row) in rows.iter().enumerate() {
        let entries = row
            .as_array()
            .ok_or_else(|| Error::argument(format!("{path}[{vbucket}]: expected an array of server indices")))?;
        let mut converted = Vec::with_capacity(entries.len());
        for (position, entry) in entries.iter().enumerate() {
            converted.push(match entry.as_i64() {
                Some(-1) => None,
                Some(index) if index >= 0 && (index as u64) < servers as u64 => Some(index as u32),
                _ => {
                    return Err(Error::argument(format!(
                        "{path}[{vbucket}][{position}]: expected -1 or a server index in 0..{servers}, found {}",
                        json::describe(entry)
                    )))
                }
            });
        }
        out.push(converted);
    }
    Ok(out)
}

/// A bucket config as Couchbase Server serves it, read for `import_couchbase_config`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CouchbaseConfig {
    /// The bucket's `name`, when it has one.
    pub bucket: Option<String>,
    /// `rev`.
    pub rev: u32,
    /// `revEpoch` (0 when absent).
    pub rev_epoch: u32,
    /// `serverList`: the nodes, in order (ids and addresses).
    pub servers: Vec<String>,
    /// `vBucketMap` over server indices.
    pub map: Vec<Vec<Option<u32>>>,
    /// `vBucketMapForward`, when present.
    pub forward: Option<Vec<Vec<Option<u32>>>>,
}

impl CouchbaseConfig {
    /// The topology epoch of the config: `revEpoch << 32 | rev`, so a config of a newer
    /// revision epoch is newer whatever its `rev`.
    pub fn epoch(&self) -> u64 {
        (u64::from(self.rev_epoch) << 32) | u64::from(self.rev)
    }

    /// Reads a bucket config (`path` names it in errors, which are `invalid_argument`):
    /// `rev` (required), `revEpoch` (default 0), `name`, `nodeLocator` (must be
    /// `"vbucket"` when present), and `vBucketServerMap` with `hashAlgorithm` (`"CRC"`
    /// when present), `numReplicas`, `serverList`, `vBucketMap`, `vBucketMapForward`;
    /// other fields (`nodesExt`, `uuid`, `bucketCapabilities`, ...) are ignored.
    pub(crate) fn from_value(path: &str, config: &Value) -> Result<CouchbaseConfig> {
        let config_map =
            config.as_object().ok_or_else(|| Error::argument(format!("{path}: expected a bucket config object")))?;
        if let Some(locator) = config_map.get("nodeLocator") {
            if locator.as_str() != Some("vbucket") {
                return Err(Error::argument(format!(
                    "{path}.nodeLocator: {} is not a vbucket bucket (memcached buckets use ketama)",
                    json::describe(locator)
                )));
            }
        }
        let rev = config_u32(&format!("{path}.rev"), config_map.get("rev").unwrap_or(&Value::Null))?;
        let rev_epoch = match config_map.get("revEpoch") {
            None | Some(Value::Null) => 0,
            Some(value) => config_u32(&format!("{path}.revEpoch"), value)?,
        };
        let server_map = config_map.get("vBucketServerMap").and_then(Value::as_object).ok_or_else(|| {
            Error::argument(format!("{path}.vBucketServerMap: missing (not a Couchbase bucket config)"))
        })?;
        let map_path = format!("{path}.vBucketServerMap");
        if let Some(algorithm) = server_map.get("hashAlgorithm") {
            if algorithm.as_str() != Some("CRC") {
                return Err(Error::argument(format!(
                    "{map_path}.hashAlgorithm: expected \"CRC\", found {}",
                    json::describe(algorithm)
                )));
            }
        }
        let servers: Vec<String> = server_map
            .get("serverList")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                Error::argument(format!("{map_path}.serverList: expected an array of \"host:port\" strings"))
            })?
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                entry
                    .as_str()
                    .map(String::from)
                    .ok_or_else(|| Error::argument(format!("{map_path}.serverList[{i}]: expected a string")))
            })
            .collect::<Result<_>>()?;
        let map = config_rows(
            &format!("{map_path}.vBucketMap"),
            server_map.get("vBucketMap").unwrap_or(&Value::Null),
            servers.len(),
        )?;
        let width = map.first().map_or(0, Vec::len);
        if let Some(replicas) = server_map.get("numReplicas") {
            if replicas.as_u64() != Some(width.saturating_sub(1) as u64) {
                return Err(Error::argument(format!(
                    "{map_path}.numReplicas: {} disagrees with the vBucketMap rows of {width} entries",
                    json::describe(replicas)
                )));
            }
        }
        let forward = match server_map.get("vBucketMapForward").filter(|value| !value.is_null()) {
            Some(forward) => Some(config_rows(&format!("{map_path}.vBucketMapForward"), forward, servers.len())?),
            None => None,
        };
        let bucket = config_map.get("name").and_then(Value::as_str).map(String::from);
        Ok(CouchbaseConfig { bucket, rev, rev_epoch, servers, map, forward })
    }
}
