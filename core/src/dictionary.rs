//! The vbucket dictionary's compact binary form: what edge workers and caches keep,
//! about 1/5 to 1/9 of the JSON. The JSON form is a topology document with the
//! `vbucket` strategy; `docs/dictionary-format.md` specifies both, field by field, and
//! `docs/dictionary.schema.json` is the JSON Schema. The operations that edit a
//! dictionary (plan a rebalance, complete moves, ...) are in [`crate::ops`].
//!
//! The encoding ends with an XXH64 checksum of everything before it (the JSON form's
//! optional `checksum` field is the same idea over the canonical text), so a truncated
//! or altered copy is refused rather than routed by.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::{HashFunction, HashTag, IntegerKeys, KeyType, PartitionKey};
use crate::json::{self, Put as _};
use crate::node::NodeState;
use crate::strategy::partitioned::vbucket::{VbucketSpec, VbucketState};
use crate::topology::Topology;

fn vbucket_spec(topology: &Topology) -> Result<&VbucketSpec> {
    topology.strategy.spec::<VbucketSpec>().ok_or_else(|| {
        Error::argument(format!("encode: needs a vbucket topology, not {}", topology.strategy.type_name()))
    })
}

// ---------------------------------------------------------------------------------
// Binary encoding
// ---------------------------------------------------------------------------------

const MAGIC: &[u8; 4] = b"SRVB";

/// Whether `bytes` begin as a binary dictionary does (its magic, `SRVB`): what a source
/// whose values are plain bytes (ZooKeeper, a file, an HTTP body without a type) tells
/// a dictionary from a JSON document by. JSON text never starts with `S`.
pub fn looks_like_dictionary(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}
const VERSION: u8 = 1;
const FLAG_FORWARD: u8 = 1;
const FLAG_WIDE: u8 = 2;
const FLAG_DERIVED: u8 = 4;
const ABSENT: u16 = 0xFFFF;

/// Encodes a vbucket dictionary in the compact binary form of `docs/dictionary-format.md`.
///
/// # Errors
/// `invalid_argument` for a topology whose strategy is not `vbucket`, that has a
/// `partition_key` rule, a declared key type (`hashing.keys`), `indexes` or table families
/// (`node_groups`, `table_families`; version 1 has no field for them), or whose node ids, addresses or zones exceed 65,534 bytes.
pub fn encode(topology: &Topology) -> Result<Vec<u8>> {
    let spec = vbucket_spec(topology)?;
    if topology.hashing.partition_key != PartitionKey::Whole {
        // Version 1 has no field for it, and a reader that dropped the rule would route
        // compound keys by the whole key: refused rather than encoded without it.
        return Err(Error::argument(
            "encode: the binary dictionary (version 1) cannot hold a partition_key rule; keep this topology as JSON",
        ));
    }
    if topology.hashing.keys != KeyType::Bytes {
        // As for a rule: a reader without the declaration would route "7" as text.
        return Err(Error::argument(
            "encode: the binary dictionary (version 1) cannot hold a key type (hashing.keys); keep this topology as JSON",
        ));
    }
    if !topology.indexes.is_empty() {
        return Err(Error::argument(
            "encode: the binary dictionary (version 1) cannot hold indexes; keep this topology as JSON",
        ));
    }
    if topology.tenants().is_some() {
        // A reader would route every tenant by the document's rule: refused, as tables are.
        return Err(Error::argument(
            "encode: the binary dictionary (version 1) cannot hold tenants; keep this topology as JSON",
        ));
    }
    if topology.tables.is_some() {
        // A reader would route every table by the document's rule: refused, as indexes are.
        return Err(Error::argument(
            "encode: the binary dictionary (version 1) cannot hold node_groups or table_families; keep this topology as JSON",
        ));
    }
    let wide = topology.nodes.len() > 256;
    let mut flags = 0u8;
    if spec.forward.is_some() {
        flags |= FLAG_FORWARD;
    }
    if wide {
        flags |= FLAG_WIDE;
    }
    if spec.map.is_none() {
        flags |= FLAG_DERIVED;
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(flags);
    out.extend_from_slice(&topology.epoch.to_le_bytes());
    match topology.hashing.function {
        HashFunction::SipHash24 { seed } => {
            out.push(0);
            out.extend_from_slice(&seed);
        }
        HashFunction::Crc32 => {
            out.push(1);
            out.extend_from_slice(&[0; 16]);
        }
    }
    out.push(match topology.hashing.hash_tag {
        HashTag::None => 0,
        HashTag::Redis => 1,
    });
    out.push(match topology.hashing.integers {
        IntegerKeys::LeBytes => 0,
        IntegerKeys::Identity => 1,
    });
    out.extend_from_slice(&(topology.nodes.len() as u32).to_le_bytes());
    for node in &topology.nodes {
        put_text(&mut out, Some(&node.id))?;
        put_text(&mut out, node.address.as_deref())?;
        put_text(&mut out, node.zone.as_deref())?;
        out.extend_from_slice(&node.weight.to_le_bytes());
        out.push(match node.state {
            NodeState::Active => 0,
            NodeState::Draining => 1,
            NodeState::Failed => 2,
        });
    }
    out.extend_from_slice(&spec.vbuckets.to_le_bytes());
    match &spec.map {
        Some(map) => put_chains(&mut out, map, wide),
        None => out.push(spec.replicas as u8),
    }
    if let Some(forward) = &spec.forward {
        put_chains(&mut out, forward, wide);
    }
    out.extend_from_slice(&(spec.states.len() as u32).to_le_bytes());
    for (vbucket, state) in &spec.states {
        out.extend_from_slice(&vbucket.to_le_bytes());
        out.push(match state {
            VbucketState::Active => 0,
            VbucketState::Migrating => 1,
            VbucketState::ReadOnly => 2,
        });
    }
    // Rare sections travel as canonical JSON text.
    let document = topology.to_value();
    let mut extras = Map::new();
    for (field, value) in [
        ("overrides", &document["strategy"]["overrides"]),
        ("placement", &document["placement"]),
        ("hot_keys", &document["hot_keys"]),
    ] {
        if !value.is_null() {
            extras.insert(field.into(), value.clone());
        }
    }
    let extras = if extras.is_empty() { String::new() } else { Value::Object(extras).to_string() };
    out.extend_from_slice(&(extras.len() as u32).to_le_bytes());
    out.extend_from_slice(extras.as_bytes());
    out.push(u8::from(topology.checksummed));
    let checksum = crate::hash::xxh64(&out, 0);
    out.extend_from_slice(&checksum.to_le_bytes());
    Ok(out)
}

fn put_text(out: &mut Vec<u8>, text: Option<&str>) -> Result<()> {
    match text {
        None => out.extend_from_slice(&ABSENT.to_le_bytes()),
        Some(text) => {
            let length = u16::try_from(text.len())
                .ok()
                .filter(|&l| l != ABSENT)
                .ok_or_else(|| Error::argument("encode: a node id, address or zone is longer than 65,534 bytes"))?;
            out.extend_from_slice(&length.to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
    }
    Ok(())
}

fn put_chains(out: &mut Vec<u8>, chains: &[Vec<u32>], wide: bool) {
    out.extend(chains.iter().map(|chain| chain.len() as u8));
    for &node in chains.iter().flatten() {
        if wide {
            out.extend_from_slice(&(node as u16).to_le_bytes());
        } else {
            out.push(node as u8);
        }
    }
}

/// A cursor over the encoded bytes; every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(count).filter(|&end| end <= self.bytes.len()).ok_or_else(truncated)?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }
    fn text(&mut self) -> Result<Option<String>> {
        let length = self.u16()?;
        if length == ABSENT {
            return Ok(None);
        }
        let bytes = self.take(usize::from(length))?;
        core::str::from_utf8(bytes).map(|text| Some(text.to_string())).map_err(|_| invalid("a text field is not UTF-8"))
    }
    fn chains(&mut self, vbuckets: u32, nodes: &[Value], wide: bool) -> Result<Vec<Value>> {
        let lengths = self.take(vbuckets as usize)?.to_vec();
        let mut chains = Vec::with_capacity(vbuckets as usize);
        for length in lengths {
            let mut chain = Vec::with_capacity(usize::from(length));
            for _ in 0..length {
                let index = if wide { usize::from(self.u16()?) } else { usize::from(self.u8()?) };
                let id = nodes.get(index).ok_or_else(|| invalid("a chain names a node index past the node list"))?;
                chain.push(id.clone());
            }
            chains.push(Value::Array(chain));
        }
        Ok(chains)
    }
}

fn truncated() -> Error {
    Error::topology("binary dictionary: truncated")
}

fn invalid(what: &str) -> Error {
    Error::topology(format!("binary dictionary: {what}"))
}

/// Decodes the binary form back into a topology, validated exactly as a JSON document.
///
/// # Errors
/// `invalid_topology` for bad magic, an unknown version, a checksum mismatch, truncated
/// or trailing bytes, or content that is not a valid topology; `limit_exceeded` past the
/// documented limits.
pub fn decode(bytes: &[u8]) -> Result<Topology> {
    if bytes.len() as u64 > crate::limits::MAX_DOCUMENT_BYTES {
        return Err(Error::limit("binary dictionary: larger than the document limit"));
    }
    if bytes.len() < 8 {
        return Err(truncated());
    }
    let (body, trailer) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes([
        trailer[0], trailer[1], trailer[2], trailer[3], trailer[4], trailer[5], trailer[6], trailer[7],
    ]);
    if crate::hash::xxh64(body, 0) != stored {
        return Err(invalid("checksum mismatch: the bytes were truncated or altered"));
    }
    let mut reader = Reader { bytes: body, at: 0 };
    if reader.take(4)? != MAGIC {
        return Err(invalid("not a shardroute dictionary (bad magic)"));
    }
    let version = reader.u8()?;
    if version != VERSION {
        return Err(invalid(&format!("unsupported version {version}; this release reads {VERSION}")));
    }
    let flags = reader.u8()?;
    let epoch = reader.u64()?;
    let function = reader.u8()?;
    let seed = reader.take(16)?;
    let mut hashing = Map::new();
    match function {
        0 => {
            hashing.put("function", "siphash-2-4".into());
            hashing.put("seed", seed.iter().map(|b| format!("{b:02x}")).collect::<String>().into());
        }
        1 => {
            hashing.put("function", "crc32".into());
        }
        other => return Err(invalid(&format!("unknown hash function {other}"))),
    }
    let tag = match reader.u8()? {
        0 => "none",
        1 => "redis",
        other => return Err(invalid(&format!("unknown hash tag rule {other}"))),
    };
    hashing.put("hash_tag", tag.into());
    let integers = match reader.u8()? {
        0 => "le_bytes",
        1 => "identity",
        other => return Err(invalid(&format!("unknown integer rule {other}"))),
    };
    hashing.put("integers", integers.into());
    let node_count = reader.u32()?;
    if node_count > crate::limits::MAX_NODES {
        return Err(Error::limit("binary dictionary: too many nodes"));
    }
    let mut nodes = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..node_count {
        let id = reader.text()?.ok_or_else(|| invalid("a node without an id"))?;
        let mut node = Map::new();
        node.put("id", Value::String(id.clone()));
        if let Some(address) = reader.text()? {
            node.put("address", address.into());
        }
        if let Some(zone) = reader.text()? {
            node.put("zone", zone.into());
        }
        let weight = f64::from_le_bytes(reader.take(8)?.try_into().map_err(|_| truncated())?);
        node.put("weight", serde_json::Number::from_f64(weight).map_or(Value::Null, Value::Number));
        match reader.u8()? {
            0 => {}
            1 => {
                node.put("state", "draining".into());
            }
            2 => {
                node.put("state", "failed".into());
            }
            other => return Err(invalid(&format!("unknown node state {other}"))),
        }
        ids.push(Value::String(id));
        nodes.push(Value::Object(node));
    }
    let vbuckets = reader.u32()?;
    if vbuckets > crate::limits::MAX_VBUCKETS {
        return Err(Error::limit("binary dictionary: too many vbuckets"));
    }
    let wide = flags & FLAG_WIDE != 0;
    let mut strategy = Map::new();
    strategy.put("type", "vbucket".into());
    strategy.put("vbuckets", vbuckets.into());
    if flags & FLAG_DERIVED != 0 {
        strategy.put("replicas", reader.u8()?.into());
    } else {
        strategy.put("map", Value::Array(reader.chains(vbuckets, &ids, wide)?));
    }
    if flags & FLAG_FORWARD != 0 {
        strategy.put("forward_map", Value::Array(reader.chains(vbuckets, &ids, wide)?));
    }
    let state_count = reader.u32()?;
    if state_count > vbuckets {
        return Err(invalid("more vbucket states than vbuckets"));
    }
    let mut states = Map::new();
    for _ in 0..state_count {
        let vbucket = reader.u32()?;
        let state = match reader.u8()? {
            0 => "active",
            1 => "migrating",
            2 => "read_only",
            other => return Err(invalid(&format!("unknown vbucket state {other}"))),
        };
        states.insert(format!("{vbucket}"), state.into());
    }
    if !states.is_empty() {
        strategy.put("states", Value::Object(states));
    }
    let extras_length = reader.u32()? as usize;
    let extras_text = core::str::from_utf8(reader.take(extras_length)?).map_err(|_| invalid("extras are not UTF-8"))?;
    let mut document = Map::new();
    if !extras_text.is_empty() {
        let extras = crate::json::parse(extras_text, "the extras", crate::error::ErrorKind::InvalidTopology)
            .map_err(|_| invalid("extras are not JSON (or name a field twice)"))?;
        if let Some(overrides) = extras.get("overrides") {
            strategy.put("overrides", overrides.clone());
        }
        for field in ["placement", "hot_keys"] {
            if let Some(value) = extras.get(field) {
                document.insert(field.into(), value.clone());
            }
        }
    }
    let checksummed = reader.u8()? == 1;
    if reader.at != body.len() {
        return Err(invalid("trailing bytes after the dictionary"));
    }
    document.put("format", crate::topology::FORMAT.into());
    document.put("epoch", json::u64_value(epoch));
    document.put("hashing", Value::Object(hashing));
    document.put("nodes", Value::Array(nodes));
    document.put("strategy", Value::Object(strategy));
    let topology = Topology::from_value(&Value::Object(document))?;
    Ok(Topology { checksummed, ..topology })
}
