//! What the fuzz targets share: valid topologies and operations to start from, and a
//! structured mutator that edits them.
//!
//! **Why seeds, not a grammar.** Bytes alone rarely make a valid document, so a target
//! that routes keys or applies operations would spend its time on parse errors. The
//! committed conformance vectors already hold a valid topology of every strategy (154
//! of them, with placement names, hot keys, checksums, every hashing) and an operation
//! of every `op` (214): a target picks one by an index read from its input, then edits
//! its JSON value a few times (replace, remove or duplicate a value, insert a field
//! named as in some seed, nudge a number to a limit). An edit that makes the document
//! invalid tests the validator; one that keeps it valid gives a new topology. libFuzzer
//! drives the choices through `arbitrary::Unstructured`, so coverage guides them too.
//!
//! **Cost.** The seeds are parsed once per process (`OnceLock`); an input costs a clone
//! of one seed and a few walks of its value.

pub mod redis;

use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};
use shardroute::{OwnedKey, Router, Topology};

/// Every committed file that holds topologies or operations, read at compile time.
const SOURCES: &[&str] = &[
    include_str!("../../conformance/vectors/calls.json"),
    include_str!("../../conformance/vectors/cassandra.json"),
    include_str!("../../conformance/vectors/couchbase.json"),
    include_str!("../../conformance/vectors/dictionary.json"),
    include_str!("../../conformance/vectors/directory.json"),
    include_str!("../../conformance/vectors/elasticsearch.json"),
    include_str!("../../conformance/vectors/errors.json"),
    include_str!("../../conformance/vectors/hash_range.json"),
    include_str!("../../conformance/vectors/hashing.json"),
    include_str!("../../conformance/vectors/id_groups.json"),
    include_str!("../../conformance/vectors/ids.json"),
    include_str!("../../conformance/vectors/jump.json"),
    include_str!("../../conformance/vectors/kafka.json"),
    include_str!("../../conformance/vectors/ketama.json"),
    include_str!("../../conformance/vectors/key_range.json"),
    include_str!("../../conformance/vectors/maglev.json"),
    include_str!("../../conformance/vectors/migration.json"),
    include_str!("../../conformance/vectors/modulo.json"),
    include_str!("../../conformance/vectors/multilevel.json"),
    include_str!("../../conformance/vectors/redis_cluster.json"),
    include_str!("../../conformance/vectors/rendezvous.json"),
    include_str!("../../conformance/vectors/ring.json"),
    include_str!("../../conformance/vectors/token_ring.json"),
    include_str!("../../conformance/vectors/topology.json"),
    include_str!("../../conformance/vectors/trie.json"),
    include_str!("../../conformance/vectors/vbucket.json"),
    include_str!("../../conformance/vectors/vitess.json"),
    include_str!("../../conformance/vectors/vshard.json"),
    include_str!("../../docs/examples/dictionary-derived.json"),
    include_str!("../../docs/examples/dictionary-explicit.json"),
    include_str!("../../docs/examples/dictionary-overrides.json"),
    include_str!("../../docs/examples/dictionary-rebalancing.json"),
];

/// The starting points of the structured targets.
pub struct Seeds {
    /// Valid topologies, as JSON values and parsed, in a fixed order (file, then name).
    pub topologies: Vec<(Value, Topology)>,
    /// Operation objects of the vectors (`{"op": ...}`), valid or not for any one topology.
    pub operations: Vec<Value>,
    /// `(topology, operation)` index pairs the vectors apply together: an operation that
    /// fits its topology's strategy, so edits of it reach the operation's own code.
    pub pairs: Vec<(usize, usize)>,
    /// Every object field name and every short string of the seeds: what an edit inserts.
    pub names: Vec<String>,
    /// Short strings found in the seeds (node ids, hash functions, strategy types, ...).
    pub strings: Vec<String>,
}

/// The seeds, parsed on first use.
pub fn seeds() -> &'static Seeds {
    static SEEDS: OnceLock<Seeds> = OnceLock::new();
    SEEDS.get_or_init(load)
}

fn load() -> Seeds {
    let mut topologies = Vec::new();
    let mut operations = Vec::new();
    let mut pairs = Vec::new();
    // Error vectors hold invalid documents on purpose: keep the valid ones.
    let keep = |value: &Value, topologies: &mut Vec<(Value, Topology)>| {
        let topology = Topology::from_value(value).ok()?;
        topologies.push((value.clone(), topology));
        Some(topologies.len() - 1)
    };
    for text in SOURCES {
        let file: Value = serde_json::from_str(text).expect("committed JSON");
        let mut named = std::collections::BTreeMap::new();
        match file.get("topologies") {
            Some(Value::Object(documents)) => {
                for (name, value) in documents {
                    if let Some(index) = keep(value, &mut topologies) {
                        named.insert(name.clone(), index);
                    }
                }
            }
            // docs/examples: the file is the document.
            _ if file.get("format").is_some() => {
                keep(&file, &mut topologies);
            }
            _ => {}
        }
        for case in file.get("cases").and_then(Value::as_array).into_iter().flatten() {
            let Some(operation) = case.get("operation") else { continue };
            operations.push(operation.clone());
            if let Some(&topology) = case.get("topology").and_then(Value::as_str).and_then(|name| named.get(name)) {
                pairs.push((topology, operations.len() - 1));
            }
            if let Some(to) = operation.get("to") {
                keep(to, &mut topologies);
            }
        }
    }
    let mut names = Vec::new();
    let mut strings = Vec::new();
    for value in topologies.iter().map(|(value, _)| value).chain(&operations) {
        collect(value, &mut names, &mut strings);
    }
    for list in [&mut names, &mut strings] {
        list.sort();
        list.dedup();
    }
    Seeds { topologies, operations, pairs, names, strings }
}

fn collect(value: &Value, names: &mut Vec<String>, strings: &mut Vec<String>) {
    match value {
        Value::String(text) if text.len() <= 48 => strings.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect(item, names, strings)),
        Value::Object(map) => {
            for (name, item) in map {
                names.push(name.clone());
                collect(item, names, strings);
            }
        }
        _ => {}
    }
}

/// A seed topology, edited: the edited document when it is still valid, else the seed.
pub fn topology(u: &mut Unstructured) -> Result<Topology> {
    let seeds = seeds();
    edited_topology(u.choose_index(seeds.topologies.len())?, u)
}

/// Seed topology `index`, edited: the edited document when it is still valid, else the seed.
pub fn edited_topology(index: usize, u: &mut Unstructured) -> Result<Topology> {
    let (value, parsed) = &seeds().topologies[index];
    let mut edited = value.clone();
    mutate(&mut edited, u)?;
    Ok(Topology::from_value(&edited).unwrap_or_else(|_| parsed.clone()))
}

/// A seed value (topology or operation) with up to four edits.
pub fn mutate(value: &mut Value, u: &mut Unstructured) -> Result<()> {
    for _ in 0..u.int_in_range(0..=4u8)? {
        let mut index = u.choose_index(count(value))?;
        edit_at(value, &mut index, u)?;
    }
    Ok(())
}

fn count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(map) => map.values().map(count).sum(),
        _ => 0,
    }
}

/// Edits the value at pre-order position `index`; true once done.
fn edit_at(value: &mut Value, index: &mut usize, u: &mut Unstructured) -> Result<bool> {
    if *index == 0 {
        edit(value, u)?;
        return Ok(true);
    }
    *index -= 1;
    let children: Vec<&mut Value> = match value {
        Value::Array(items) => items.iter_mut().collect(),
        Value::Object(map) => map.values_mut().collect(),
        _ => Vec::new(),
    };
    for child in children {
        if edit_at(child, index, u)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn edit(value: &mut Value, u: &mut Unstructured) -> Result<()> {
    match u.int_in_range(0..=5u8)? {
        0 => *value = scalar(u)?,
        1 => match value {
            Value::Array(items) if !items.is_empty() => {
                items.remove(u.choose_index(items.len())?);
            }
            Value::Object(map) if !map.is_empty() => {
                let name = map.keys().nth(u.choose_index(map.len())?).cloned().unwrap_or_default();
                map.remove(&name);
            }
            _ => *value = Value::Null,
        },
        2 => match value {
            Value::Array(items) if !items.is_empty() => {
                let copy = items[u.choose_index(items.len())?].clone();
                let at = u.int_in_range(0..=items.len())?;
                items.insert(at, copy);
            }
            Value::Object(map) => {
                let seeds = seeds();
                let name = seeds.names[u.choose_index(seeds.names.len())?].clone();
                map.insert(name, scalar(u)?);
            }
            other => *other = Value::Array(vec![other.clone()]),
        },
        3 => *value = Value::Number(number(u)?),
        4 => *value = Value::String(string(u)?),
        _ => {
            let mut map = Map::new();
            let seeds = seeds();
            map.insert(seeds.names[u.choose_index(seeds.names.len())?].clone(), scalar(u)?);
            *value = if u.arbitrary()? { Value::Object(map) } else { Value::Array(vec![scalar(u)?, scalar(u)?]) };
        }
    }
    Ok(())
}

/// A scalar: null, a boolean, a number or a string.
pub fn scalar(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(number(u)?),
        _ => Value::String(string(u)?),
    })
}

/// A number near the documented limits, a small one, or any 64-bit or finite float.
pub fn number(u: &mut Unstructured) -> Result<Number> {
    const EDGES: &[i64] = &[
        0,
        1,
        2,
        3,
        4,
        15,
        16,
        64,
        255,
        256,
        1024,
        16_383,
        16_384,
        65_534,
        65_535,
        65_536,
        1 << 20,
        (1 << 20) + 1,
        1 << 22,
        u32::MAX as i64,
        1 << 32,
        (1 << 53) + 1,
        i64::MAX,
        -1,
        i64::MIN,
    ];
    Ok(match u.int_in_range(0..=3u8)? {
        0 => Number::from(EDGES[u.choose_index(EDGES.len())?]),
        1 => Number::from(u.int_in_range(0..=40u64)?),
        2 => Number::from(u.arbitrary::<u64>()?),
        _ => Number::from_f64(u.arbitrary()?).unwrap_or_else(|| Number::from(0)),
    })
}

/// A string of the seeds (an id, a type name, a hash function) or any short one.
pub fn string(u: &mut Unstructured) -> Result<String> {
    let seeds = seeds();
    if u.arbitrary()? {
        Ok(seeds.strings[u.choose_index(seeds.strings.len())?].clone())
    } else {
        let text: &str = u.arbitrary()?;
        Ok(text.chars().take(24).collect())
    }
}

/// A key: bytes (often a seed string, so text keys and hash tags occur) or an integer.
pub fn key(u: &mut Unstructured) -> Result<OwnedKey> {
    Ok(match u.int_in_range(0..=2u8)? {
        0 => OwnedKey::U64(u.arbitrary()?),
        1 => OwnedKey::Bytes(string(u)?.into_bytes()),
        _ => {
            let bytes: &[u8] = u.arbitrary()?;
            OwnedKey::Bytes(bytes.iter().take(64).copied().collect())
        }
    })
}

/// Up to `most` keys.
pub fn keys(u: &mut Unstructured, most: u8) -> Result<Vec<OwnedKey>> {
    (0..u.int_in_range(1..=most)?).map(|_| key(u)).collect()
}

/// What `Router::new` may refuse a parsed topology with: the compiled form too large,
/// or a pairing only the compiled form checks (a `token_ring` with 32-bit `crc32`
/// hashing, a `key_range` with a hash tag: `invalid_topology`, naming the field).
pub const BUILD_ERRORS: &[&str] = &["limit_exceeded", "invalid_topology", "no_nodes"];

/// The router of a parsed topology, or `None` when it is refused with one of
/// [`BUILD_ERRORS`]; any other refusal fails the target.
pub fn router(topology: Topology) -> Option<Router> {
    match Router::new(topology) {
        Ok(router) => Some(router),
        Err(error) => {
            assert!(BUILD_ERRORS.contains(&error.code()), "a valid topology failed to build: {error}");
            None
        }
    }
}
