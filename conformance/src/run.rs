//! The Rust runner: builds each case's inputs from its vector and compares results.
//! It mirrors the Python and JavaScript runners and holds no routing logic.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};
use shardroute::migration::Migration;
use shardroute::scatter::{ReadFrom, Scope};
use shardroute::strategy::compat::redis_cluster::redirect::Redirect;
use shardroute::{key, Key, KeyHashing, Router};

pub use shardroute::OwnedKey;

/// Converts a vector key the way a user's value would reach core: `Err(Ok(error))`
/// is a core rejection (what the case may expect), `Err(Err(reason))` a malformed vector.
pub fn to_key(value: &Value) -> Result<Result<OwnedKey, shardroute::Error>, String> {
    let object = value.as_object().filter(|o| o.len() == 1).ok_or_else(|| format!("bad key {value}"))?;
    let (form, inner) = object.iter().next().ok_or("empty key")?;
    Ok(match (form.as_str(), inner) {
        ("utf8", Value::String(text)) => Ok(OwnedKey::Bytes(text.as_bytes().to_vec())),
        ("hex", Value::String(hex)) => Ok(OwnedKey::Bytes(decode_hex(hex)?)),
        ("u64", Value::String(text)) => key::parse_u64(text).map(OwnedKey::U64),
        ("utf16", Value::Array(units)) => {
            let units: Vec<u16> = units
                .iter()
                .map(|unit| unit.as_u64().and_then(|u| u16::try_from(u).ok()).ok_or(format!("bad utf16 unit {unit}")))
                .collect::<Result<_, _>>()?;
            key::utf8_from_utf16(&units).map(|text| OwnedKey::Bytes(text.into_bytes()))
        }
        _ => return Err(format!("unknown key form {value}")),
    })
}

pub fn decode_hex(hex: &str) -> Result<Vec<u8>, String> {
    if !hex.len().is_multiple_of(2) {
        return Err(format!("odd-length hex {hex:?}"));
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|e| format!("bad hex {hex:?}: {e}")))
        .collect()
}

fn field<'v>(case: &'v Value, name: &str) -> Result<&'v Value, String> {
    case.get(name).ok_or_else(|| format!("case has no {name:?}"))
}

fn text<'v>(case: &'v Value, name: &str) -> Result<&'v str, String> {
    field(case, name)?.as_str().ok_or_else(|| format!("{name:?} is not a string"))
}

/// The case's `keys` array: `Ok(Err(error))` is the core's rejection of the first key it
/// refuses, `Err(reason)` a malformed vector.
/// A field holding an integer in `0..2^32` (slots and turns may be out of range in a
/// vector only through the call's own refusal, never the runner's).
fn u32_field(case: &Value, name: &str) -> Result<u32, String> {
    field(case, name)?.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or(format!("bad {name}"))
}

fn keys_of(case: &Value) -> Result<Result<Vec<OwnedKey>, shardroute::Error>, String> {
    field(case, "keys")?.as_array().ok_or("keys is not an array")?.iter().map(to_key).collect()
}

/// A core result inside `evaluate`: the value, or the case's outcome is that error.
macro_rules! core_or_case {
    ($result:expr) => {
        match $result {
            Ok(value) => value,
            Err(err) => return Ok(json!({"error": err.code()})),
        }
    };
}

/// The outcome of one case: `Ok(result)` or `Ok(error)` to compare with `expect`.
fn evaluate(file: &Value, routers: &mut HashMap<String, Router>, case: &Value) -> Result<Value, String> {
    let mut router_for = |id: &str| -> Result<Result<Router, shardroute::Error>, String> {
        if let Some(router) = routers.get(id) {
            return Ok(Ok(router.clone()));
        }
        let doc = file["topologies"].get(id).ok_or_else(|| format!("unknown topology {id:?}"))?;
        let built = Router::from_value(doc);
        if let Ok(router) = &built {
            routers.insert(id.to_string(), router.clone());
        }
        Ok(built)
    };
    // A case that names a `table` runs on that table family's router.
    let mut router_for = |id: &str| -> Result<Result<Router, shardroute::Error>, String> {
        let built = router_for(id)?;
        Ok(match case.get("table") {
            None => built,
            Some(Value::String(table)) => built.and_then(|router| router.table(table).cloned()),
            Some(_) => return Err("table is not a string".into()),
        })
    };
    let error = |err: shardroute::Error| json!({"error": err.code()});
    let op = text(case, "op")?;
    Ok(match op {
        "load" => {
            let built = match case.get("topology_json") {
                Some(Value::String(raw)) => Router::from_json(raw),
                Some(_) => return Err("topology_json is not a string".into()),
                None => {
                    let doc = file["topologies"].get(text(case, "topology")?).ok_or("unknown topology")?;
                    // The object path and the text path must agree.
                    let from_text = Router::from_json(&doc.to_string());
                    let from_value = Router::from_value(doc);
                    if from_text.as_ref().map(Router::to_json) != from_value.as_ref().map(Router::to_json) {
                        return Err("from_json and from_value disagree".into());
                    }
                    from_value
                }
            };
            match built {
                Ok(router) => json!({"epoch": router.epoch().to_string(), "to_json": router.to_json()}),
                Err(err) => error(err),
            }
        }
        "route" | "replicas" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let key = core_or_case!(to_key(field(case, "key")?)?);
            if op == "route" {
                match (router.route(key.as_key()), router.node(key.as_key())) {
                    (Ok(shard), Ok(node)) => json!({"shard": shard, "node": node}),
                    (Err(err), _) | (_, Err(err)) => error(err),
                }
            } else {
                let count = field(case, "count")?.as_u64().ok_or("count is not an unsigned integer")?;
                let count = u32::try_from(count).map_err(|_| "count exceeds u32")?;
                match router.replicas(key.as_key(), count) {
                    Ok(nodes) => json!({"nodes": nodes}),
                    Err(err) => error(err),
                }
            }
        }
        "route_many" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let keys = core_or_case!(keys_of(case)?);
            match router.route_many(keys.iter().map(OwnedKey::as_key)) {
                Ok(shards) => json!({"shards": shards}),
                Err(err) => error(err),
            }
        }
        "hash_key" => {
            let spec = match case.get("hashing") {
                None => Ok(KeyHashing::default()),
                Some(spec) => KeyHashing::from_json(&spec.to_string()),
            };
            match (spec, to_key(field(case, "key")?)?) {
                (Ok(spec), Ok(key)) => json!({"hash": shardroute::hash_key(key.as_key(), &spec).to_string()}),
                (Err(err), _) | (_, Err(err)) => error(err),
            }
        }
        "jump" => {
            let buckets = field(case, "buckets")?.as_u64().and_then(|b| u32::try_from(b).ok()).ok_or("bad buckets")?;
            match key::parse_u64(text(case, "hash")?).and_then(|hash| shardroute::jump(hash, buckets)) {
                Ok(shard) => json!({"shard": shard}),
                Err(err) => error(err),
            }
        }
        "scatter" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let zone = match field(case, "zone")? {
                Value::Null => None,
                zone => Some(zone.as_str().ok_or("bad zone")?),
            };
            let turn = field(case, "turn")?.as_u64().and_then(|t| u32::try_from(t).ok()).ok_or("bad turn")?;
            let read_from = core_or_case!(ReadFrom::from_name(text(case, "read_from")?, turn, zone));
            let mut owned = Vec::new();
            let (mut start, mut end) = (None, None);
            match text(case, "scope")? {
                "every" => {}
                "range" => {
                    start = Some(core_or_case!(to_key(field(case, "start")?)?));
                    end = match field(case, "end")? {
                        Value::Null => None,
                        end => Some(core_or_case!(to_key(end)?)),
                    };
                }
                "keys" => {
                    for key in field(case, "keys")?.as_array().ok_or("keys is not an array")? {
                        owned.push(core_or_case!(to_key(key)?));
                    }
                }
                other => return Err(format!("unknown scope {other:?}")),
            }
            let keys: Vec<Key<'_>> = owned.iter().map(OwnedKey::as_key).collect();
            let scope = match (&start, text(case, "scope")?) {
                (Some(start), _) => Scope::Range { start: start.as_key(), end: end.as_ref().map(OwnedKey::as_key) },
                (None, "keys") => Scope::Keys(&keys),
                _ => Scope::Every,
            };
            match router.scatter(scope, read_from) {
                Ok(plan) => plan.to_value(&router),
                Err(err) => error(err),
            }
        }
        "shards_for_range" | "decode_id" | "locate" | "salted_key" | "salted_keys" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            match op {
                "shards_for_range" => {
                    let start = core_or_case!(to_key(field(case, "start")?)?);
                    let end = match field(case, "end")? {
                        Value::Null => None,
                        end => match to_key(end)? {
                            Ok(key) => Some(key),
                            Err(err) => return Ok(error(err)),
                        },
                    };
                    match router.shards_for_range(start.as_key(), end.as_ref().map(OwnedKey::as_key)) {
                        Ok(shards) => json!({ "shards": shards }),
                        Err(err) => error(err),
                    }
                }
                "decode_id" => match key::parse_u64(text(case, "id")?).and_then(|id| router.decode_id(id)) {
                    Ok(decoded) => {
                        let fields: Vec<Value> =
                            decoded.fields.iter().map(|(name, value)| json!([name, value.to_string()])).collect();
                        json!({"shard": decoded.shard, "fields": fields})
                    }
                    Err(err) => error(err),
                },
                "locate" => match to_key(field(case, "key")?)? {
                    Ok(key) => match router.locate(key.as_key()) {
                        Ok(location) => location.to_value(),
                        Err(err) => error(err),
                    },
                    Err(err) => error(err),
                },
                "salted_key" => {
                    let salt = field(case, "salt")?.as_u64().and_then(|s| u32::try_from(s).ok()).ok_or("bad salt")?;
                    let source = field(case, "key")?;
                    match to_key(source)? {
                        Ok(key) => json!({ "key": key_form(source, &router.salted_key(key.as_key(), salt)) }),
                        Err(err) => error(err),
                    }
                }
                _ => {
                    let source = field(case, "key")?;
                    match to_key(source)?.and_then(|key| router.salted_keys(key.as_key())) {
                        Ok(pairs) => {
                            let keys: Vec<Value> =
                                pairs.iter().map(|(salted, shard)| json!([key_form(source, salted), shard])).collect();
                            json!({ "keys": keys })
                        }
                        Err(err) => error(err),
                    }
                }
            }
        }
        "apply" => {
            let topology = match case.get("topology_json") {
                Some(Value::String(raw)) => shardroute::Topology::from_json(raw),
                Some(_) => return Err("topology_json is not a string".into()),
                None => {
                    let doc = file["topologies"].get(text(case, "topology")?).ok_or("unknown topology")?;
                    shardroute::Topology::from_value(doc)
                }
            };
            let operation = field(case, "operation")?;
            match topology.and_then(|topology| shardroute::ops::apply(&topology, operation)) {
                Ok(result) => {
                    // Operations edit typed topologies without a JSON round trip; what they
                    // produce must still be what a document could say, and say the same way.
                    let written = result["topology"].to_string();
                    let reread = shardroute::Topology::from_json(&written)
                        .map_err(|err| format!("the result topology does not parse: {err}"))?;
                    if reread.to_value() != result["topology"] {
                        return Err("the result topology reads back differently".into());
                    }
                    json!({ "result": result })
                }
                Err(err) => error(err),
            }
        }
        "modulo_moves" => {
            let count = |name: &str| -> Result<u32, String> {
                field(case, name)?.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or(format!("bad {name}"))
            };
            match shardroute::strategy::hashed::modulo::moves(count("old")?, count("new")?) {
                Ok(moves) => json!({ "moves": moves }),
                Err(err) => error(err),
            }
        }
        "route_read" | "route_write" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let key = core_or_case!(to_key(field(case, "key")?)?);
            if op == "route_read" {
                match router.route_read(key.as_key()) {
                    Ok(node) => json!({ "node": node }),
                    Err(err) => error(err),
                }
            } else {
                match router.route_write(key.as_key()) {
                    Ok(nodes) => json!({ "nodes": nodes }),
                    Err(err) => error(err),
                }
            }
        }
        "read_replica" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let key = core_or_case!(to_key(field(case, "key")?)?);
            let turn = u32_field(case, "turn")?;
            match router.read_replica(key.as_key(), turn) {
                Ok(node) => json!({ "node": node }),
                Err(err) => error(err),
            }
        }
        "stats" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let keys = core_or_case!(keys_of(case)?);
            match router.stats(keys.iter().map(OwnedKey::as_key)) {
                Ok(stats) => json!({ "result": stats.to_value(&router) }),
                Err(err) => error(err),
            }
        }
        "same_slot" | "group_by_node" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let keys = core_or_case!(keys_of(case)?);
            let keys = keys.iter().map(OwnedKey::as_key);
            if op == "same_slot" {
                match router.same_slot(keys) {
                    Ok(shard) => json!({ "shard": shard }),
                    Err(err) => error(err),
                }
            } else {
                match router.group_by_node(keys) {
                    Ok(groups) => {
                        let node = |index: u32| router.nodes()[index as usize].id.as_str();
                        json!({ "groups": groups.iter().map(|(n, indices)| json!([node(*n), indices])).collect::<Vec<_>>() })
                    }
                    Err(err) => error(err),
                }
            }
        }
        "moved" | "ask" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let slot = u32_field(case, "slot")?;
            let address = text(case, "address")?;
            if op == "moved" {
                match router.moved(slot, address) {
                    Ok(next) => json!({ "to_json": next.to_json() }),
                    Err(err) => error(err),
                }
            } else {
                match router.ask(slot, address) {
                    Ok(target) => json!({ "address": target }),
                    Err(err) => error(err),
                }
            }
        }
        "redis_session" => crate::session::redis_session(case)?,
        "topology_follower" => crate::session::topology_follower(file, case)?,
        "migration_session" => crate::session::migration_session(file, case)?,
        "misplaced" => crate::session::misplaced(file, case)?,
        "session_source" => crate::session::session_source(case)?,
        "parse_redirect" => match Redirect::parse(text(case, "line")?) {
            Ok(redirect) => {
                json!({ "kind": redirect.kind.as_str(), "slot": redirect.slot, "address": redirect.address })
            }
            Err(err) => error(err),
        },
        "migration" | "migration_shards" | "migration_scan" | "migration_keys" | "migration_salted" => {
            let migration = match (case.get("dictionary"), case.get("before"), case.get("after")) {
                (Some(_), None, None) => {
                    let router = core_or_case!(router_for(text(case, "dictionary")?)?);
                    core_or_case!(Migration::of_dictionary(&router))
                }
                (None, Some(_), Some(_)) => {
                    let before = core_or_case!(router_for(text(case, "before")?)?);
                    let after = core_or_case!(router_for(text(case, "after")?)?);
                    core_or_case!(Migration::new(before, after))
                }
                _ => return Err("a migration case names before and after, or dictionary".into()),
            };
            match op {
                "migration" => {
                    let key = core_or_case!(to_key(field(case, "key")?)?);
                    let moved = field(case, "moved")?.as_bool().ok_or("moved is not a boolean")?;
                    let key = key.as_key();
                    let answer = migration.moves(key).and_then(|moves| {
                        Ok(json!({
                            "moves": moves.map(|(from, to)| [from, to]),
                            "write_target": migration.write_target(key)?,
                            "read_targets": migration.read_targets(key, moved)?,
                        }))
                    });
                    answer.unwrap_or_else(error)
                }
                "migration_salted" => {
                    let source = field(case, "key")?;
                    let key = core_or_case!(to_key(source)?);
                    let salt = u32_field(case, "salt")?;
                    let keys = migration.read_keys(key.as_key());
                    json!({
                        "read_keys": keys.iter().map(|read| key_form(source, read)).collect::<Vec<Value>>(),
                        "write_key": key_form(source, &migration.write_key(key.as_key(), salt)),
                    })
                }
                "migration_scan" => json!({ "nodes": migration.scan_nodes() }),
                "migration_shards" => match migration.moving_shards() {
                    Ok(shards) => {
                        let shards: Vec<Value> = shards.iter().map(|s| json!([s.shard, s.from, s.to])).collect();
                        json!({ "shards": shards })
                    }
                    Err(err) => error(err),
                },
                _ => {
                    let keys = core_or_case!(keys_of(case)?);
                    match migration.moving_keys(keys.iter().map(OwnedKey::as_key)) {
                        Ok(indices) => json!({ "indices": indices }),
                        Err(err) => error(err),
                    }
                }
            }
        }
        "read_near" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let key = core_or_case!(to_key(field(case, "key")?)?);
            let zone = match field(case, "zone")? {
                Value::Null => None,
                Value::String(zone) => Some(zone.as_str()),
                _ => return Err("zone is neither a string nor null".into()),
            };
            match router.read_near(key.as_key(), zone) {
                Ok(node) => json!({ "node": node }),
                Err(err) => error(err),
            }
        }
        "index_route" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let key = core_or_case!(to_key(field(case, "key")?)?);
            let answer = router
                .index(text(case, "index")?)
                .and_then(|index| Ok(json!({"shard": index.route(key.as_key())?, "node": index.node(key.as_key())?})));
            answer.unwrap_or_else(error)
        }
        "index_write_plan" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            let key = core_or_case!(to_key(field(case, "key")?)?);
            let mut pairs = Vec::new();
            for pair in field(case, "terms")?.as_array().ok_or("terms is not an array")? {
                let name = pair.get(0).and_then(Value::as_str).ok_or("a term pair has no name")?;
                let term = core_or_case!(to_key(pair.get(1).ok_or("a term pair has no term")?)?);
                pairs.push((name.to_string(), term));
            }
            let borrowed: Vec<(&str, shardroute::Key<'_>)> =
                pairs.iter().map(|(name, term)| (name.as_str(), term.as_key())).collect();
            match router.index_write_plan(key.as_key(), &borrowed) {
                Ok(plan) => plan.to_value(&router),
                Err(err) => error(err),
            }
        }
        "shard_owner" => {
            let router = core_or_case!(router_for(text(case, "topology")?)?);
            match router.shard_owner(u32_field(case, "shard")?) {
                Ok(node) => json!({ "node": node }),
                Err(err) => error(err),
            }
        }
        "replace" => {
            let current = core_or_case!(router_for(text(case, "topology")?)?);
            let next = core_or_case!(router_for(text(case, "next")?)?);
            match current.replace(next) {
                Ok(router) => json!({ "epoch": router.epoch().to_string() }),
                Err(err) => error(err),
            }
        }
        "diff" => {
            let old = core_or_case!(router_for(text(case, "old")?)?);
            let new = core_or_case!(router_for(text(case, "new")?)?);
            let keys = core_or_case!(keys_of(case)?);
            let per_key = case.get("per_key").and_then(Value::as_bool).unwrap_or(false);
            match shardroute::diff::diff(&old, &new, keys.iter().map(OwnedKey::as_key), per_key) {
                Ok(report) => json!({ "result": report.to_value() }),
                Err(err) => error(err),
            }
        }
        "encode_dictionary" => {
            let doc = file["topologies"].get(text(case, "topology")?).ok_or("unknown topology")?;
            match shardroute::Topology::from_value(doc).and_then(|t| shardroute::dictionary::encode(&t)) {
                Ok(bytes) => json!({ "hex": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() }),
                Err(err) => error(err),
            }
        }
        "decode_dictionary" => {
            let bytes = decode_hex(text(case, "hex")?)?;
            match shardroute::dictionary::decode(&bytes) {
                Ok(topology) => json!({ "to_json": topology.to_json() }),
                Err(err) => error(err),
            }
        }
        other => return Err(format!("unknown op {other:?}")),
    })
}

/// A salted key in the vector form of the key it came from: text stays `utf8` (salting
/// appends ASCII, so it stays valid UTF-8), bytes stay `hex`, integers stay `u64`.
pub fn key_form(source: &Value, key: &OwnedKey) -> Value {
    match key {
        OwnedKey::U64(value) => json!({ "u64": value.to_string() }),
        OwnedKey::Bytes(bytes) => {
            let text_form = source.get("utf8").is_some() || source.get("utf16").is_some();
            match (text_form, std::str::from_utf8(bytes)) {
                (true, Ok(text)) => json!({ "utf8": text }),
                _ => json!({ "hex": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() }),
            }
        }
    }
}

/// The result of a run.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Cases whose result equalled `expect`.
    pub passed: u64,
    /// Cases that differed or could not run, with reasons.
    pub failures: Vec<(String, String)>,
}

/// Runs every case of the vector files in `dir` whose name contains `filter`.
pub fn run_dir(dir: &Path, filter: &str) -> Outcome {
    let mut outcome = Outcome::default();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("vectors directory")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("vector file");
        let file: Value = match serde_json::from_str(&text) {
            Ok(file) => file,
            Err(err) => {
                outcome.failures.push((path.display().to_string(), format!("not JSON: {err}")));
                continue;
            }
        };
        if file["format"] != "shardroute-vectors/1" {
            outcome.failures.push((path.display().to_string(), "unknown vector format".into()));
            continue;
        }
        let mut routers = HashMap::new();
        for case in file["cases"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let name = case["name"].as_str().unwrap_or("<unnamed>").to_string();
            if !name.contains(filter) {
                continue;
            }
            match evaluate(&file, &mut routers, case) {
                Ok(actual) if actual == case["expect"] => outcome.passed += 1,
                Ok(actual) => outcome.failures.push((name, format!("expected {}, got {actual}", case["expect"]))),
                Err(reason) => outcome.failures.push((name, reason)),
            }
        }
    }
    outcome
}
