//! The Rust runner of the session scenarios (`op: "redis_session"`): builds a
//! [`ClusterSession`] from the case, makes each step's call, and writes each result the
//! way every runner does (see conformance/README.md, "Session scenarios"). No decision
//! is made here: the session makes them all.

use serde_json::{json, Value};
use shardroute::migration::{Holder, Migration};
use shardroute::session::migration::MigrationAction;
use shardroute::session::source::actions_value;
use shardroute::session::{
    Access, ClusterConfig, ClusterSession, Command, Fenced, Follower, FollowerConfig, MigrationSession, Mode, Pace,
    SourceSession, Transport,
};
use shardroute::Router;

use crate::run::{to_key, OwnedKey};

/// The `results` of a `redis_session` case, or `{"error": code}` when the session
/// cannot be made; `Err` for a malformed vector.
pub fn redis_session(case: &Value) -> Result<Value, String> {
    let seeds: Vec<&str> = case["seeds"]
        .as_array()
        .ok_or("seeds is not an array")?
        .iter()
        .map(|seed| seed.as_str().ok_or("a seed is not a string"))
        .collect::<Result<_, _>>()?;
    let config = match case.get("config") {
        Some(object) => ClusterConfig::from_value(object),
        None => Ok(ClusterConfig::default()),
    };
    let mut session = match config.and_then(|config| ClusterSession::new(&seeds, config)) {
        Ok(session) => session,
        Err(err) => return Ok(json!({"error": err.code()})),
    };
    // The commands begun, in order; a step's `command` (an index) picks one, else the last.
    let mut commands: Vec<Command> = Vec::new();
    let mut results = Vec::new();
    for step in case["steps"].as_array().ok_or("steps is not an array")? {
        let now = step.get("now_ms").map_or(Some(0), Value::as_u64).ok_or("now_ms is not an integer")?;
        let call = step["call"].as_str().ok_or("a step has no call")?;
        let missing = || format!("{call}: no command begun");
        let picked = match step.get("command") {
            None => commands.len().checked_sub(1),
            Some(index) => Some(index.as_u64().ok_or("command is not an index")? as usize),
        };
        // The picked command, for the calls about one.
        macro_rules! current {
            () => {
                picked.and_then(|index| commands.get_mut(index)).ok_or_else(missing)?
            };
        }
        let connection = || -> Result<(&str, bool), String> {
            Ok((
                step["address"].as_str().ok_or("address is not a string")?,
                step["readonly"].as_bool().ok_or("readonly is not a boolean")?,
            ))
        };
        let result = match call {
            "command" => match keys(step)? {
                Err(err) => json!({"error": err.code()}),
                Ok(keys) => {
                    let keys: Vec<_> = keys.iter().map(OwnedKey::as_key).collect();
                    match session.command(&keys, access(step)?, now) {
                        Ok(begun) => {
                            let slot = begun.slot();
                            commands.push(begun);
                            json!({"slot": slot})
                        }
                        Err(err) => json!({"error": err.code()}),
                    }
                }
            },
            "poll" => session.poll(current!(), now).to_value(),
            "succeeded" => session.succeeded(current!(), now).to_value(),
            "stalled" => session.stalled(current!(), now).to_value(),
            "deadline" => {
                json!({"deadline_ms": session.deadline(current!()).map(|ms| ms.to_string())})
            }
            "on_deadline" => session.on_deadline(current!(), now).to_value(),
            "refresh_sent" => {
                let address = step["address"].as_str().ok_or("address is not a string")?;
                match session.refresh_sent(address, now) {
                    Ok(deadline) => json!({"deadline_ms": deadline.map(|ms| ms.to_string())}),
                    Err(err) => json!({"error": err.code()}),
                }
            }
            "next_deadline" => json!({"deadline_ms": session.next_deadline().map(|ms| ms.to_string())}),
            "batch_deadline" => json!({"deadline_ms": session.batch_deadline(now).map(|ms| ms.to_string())}),
            "pipeline_queued" => {
                let (address, readonly) = connection()?;
                json!({"queued": session.pipeline_queued(address, readonly) as u32})
            }
            "pipeline_take" => {
                let (address, readonly) = connection()?;
                json!({"write": session.pipeline_take(address, readonly)})
            }
            "pipeline_done" => {
                let (address, readonly) = connection()?;
                json!({"write": session.pipeline_done(address, readonly)})
            }
            "pipeline_withdrawn" => {
                let (address, readonly) = connection()?;
                let count = step["count"].as_u64().and_then(|n| u32::try_from(n).ok()).ok_or("count is not a u32")?;
                session.pipeline_withdrawn(address, readonly, count);
                json!({"ok": true})
            }
            "pipeline_pending" => {
                let (address, readonly) = connection()?;
                let (queued, writes) = session.pipeline_pending(address, readonly);
                json!({"queued": queued, "writes": writes})
            }
            "timeout" => json!({"timed_out": session.timeout(now)}),
            "failed" => {
                let text = step["text"].as_str().ok_or("text is not a string")?;
                let names: Vec<&str> = step["names"]
                    .as_array()
                    .ok_or("names is not an array")?
                    .iter()
                    .map(|name| name.as_str().ok_or("a name is not a string"))
                    .collect::<Result<_, _>>()?;
                session.failed(current!(), text, &names, now).to_value()
            }
            "unreachable" => {
                let why =
                    step["why"].as_str().and_then(Transport::from_name).ok_or("why is not refused|reset|timeout")?;
                session.unreachable(current!(), why, now).to_value()
            }
            "refreshed" => match session.refreshed(&step["reply"], now) {
                Ok(()) => json!({"ok": true}),
                Err(err) => json!({"error": err.code()}),
            },
            "refresh_failed" => {
                session.refresh_failed(now);
                json!({"ok": true})
            }
            "candidates" => {
                let addresses: Vec<String> = session.refresh_candidates().iter().map(|e| e.address()).collect();
                json!({"addresses": addresses})
            }
            "stats" => session.stats().to_value(),
            "plan" => match keys(step)? {
                Err(err) => json!({"error": err.code()}),
                Ok(keys) => {
                    let keys: Vec<_> = keys.iter().map(OwnedKey::as_key).collect();
                    match session.plan(&keys, access(step)?) {
                        Ok(groups) => {
                            let groups: Vec<Value> = groups
                                .iter()
                                .map(|group| {
                                    json!({"address": group.target.endpoint.address(), "readonly": group.target.readonly,
                                           "slots": group.slots})
                                })
                                .collect();
                            json!({"groups": groups})
                        }
                        Err(err) => json!({"error": err.code()}),
                    }
                }
            },
            other => return Err(format!("unknown session call {other:?}")),
        };
        results.push(result);
    }
    Ok(json!({ "results": results }))
}

fn keys(step: &Value) -> Result<Result<Vec<OwnedKey>, shardroute::Error>, String> {
    step["keys"].as_array().ok_or("keys is not an array")?.iter().map(to_key).collect()
}

fn access(step: &Value) -> Result<Access, String> {
    Access::from_name(step["access"].as_str().ok_or("access is not a string")?).map_err(|err| err.to_string())
}

/// The `results` of a `topology_follower` case (conformance/README.md, "Session
/// scenarios"); `Err` for a malformed vector.
pub fn topology_follower(file: &Value, case: &Value) -> Result<Value, String> {
    let config = match case.get("config") {
        Some(object) => FollowerConfig::from_value(object),
        None => Ok(FollowerConfig::default()),
    };
    let mut follower = match config {
        Ok(config) => Follower::new(config),
        Err(err) => return Ok(json!({"error": err.code()})),
    };
    let document = |step: &Value| -> Result<String, String> {
        match (step.get("document"), step.get("document_json")) {
            (Some(Value::String(id)), None) => {
                file["topologies"].get(id).map(Value::to_string).ok_or_else(|| format!("unknown topology {id:?}"))
            }
            (None, Some(Value::String(text))) => Ok(text.clone()),
            _ => Err("a step names document (an id) or document_json (text)".into()),
        }
    };
    let mut results = Vec::new();
    for step in case["steps"].as_array().ok_or("steps is not an array")? {
        let now = step.get("now_ms").map_or(Some(0), Value::as_u64).ok_or("now_ms is not an integer")?;
        let revision = || step["revision"].as_u64().ok_or("revision is not an integer");
        let result = match step["call"].as_str().ok_or("a step has no call")? {
            "offer" => follower.offer(&document(step)?, revision()?, now).to_value(),
            "offer_dictionary" => {
                let bytes = crate::run::decode_hex(step["hex"].as_str().ok_or("hex is not a string")?)?;
                follower.offer_dictionary(&bytes, revision()?, now).to_value()
            }
            "offer_bytes" => {
                let bytes = crate::run::decode_hex(step["hex"].as_str().ok_or("hex is not a string")?)?;
                follower.offer_bytes(&bytes, revision()?, now).to_value()
            }
            "disconnected" => json!({"reconnect_at_ms": follower.disconnected(now).to_string()}),
            "connected" => {
                follower.connected();
                json!({"ok": true})
            }
            "publish" => match follower.publish(&document(step)?) {
                Ok(write) => json!({
                    "expected_revision": write.expected_revision.map(|r| r.to_string()),
                    "epoch": write.epoch.to_string(),
                    "document": write.document,
                }),
                Err(err) => json!({"error": err.code()}),
            },
            "state" => json!({
                "epoch": follower.router().map(|router| router.epoch().to_string()),
                "revision": follower.revision().map(|revision| revision.to_string()),
            }),
            "stats" => follower.stats().to_value(),
            "next_deadline" => json!({"deadline_ms": follower.next_deadline().map(|ms| ms.to_string())}),
            other => return Err(format!("unknown follower call {other:?}")),
        };
        results.push(result);
    }
    Ok(json!({ "results": results }))
}

/// A decimal string as a u64 (epochs and times in the vectors); `Err` for a malformed vector.
fn decimal_u64(value: &Value, name: &str) -> Result<u64, String> {
    value.as_str().and_then(|text| text.parse::<u64>().ok()).ok_or_else(|| format!("bad {name}"))
}

/// The result of a `misplaced` case (conformance/README.md): `{"misplaced", "count",
/// "checked"}`, or `{"error"}`; `Err` for a malformed vector.
pub fn misplaced(file: &Value, case: &Value) -> Result<Value, String> {
    let id = case["topology"].as_str().ok_or("topology is not a string")?;
    let router = match Router::from_value(file["topologies"].get(id).ok_or_else(|| format!("unknown topology {id:?}"))?)
    {
        Ok(router) => router,
        Err(err) => return Ok(json!({"error": err.code()})),
    };
    let holder = match (case.get("node"), case.get("shard")) {
        (Some(node), None) => Holder::Node(node.as_str().ok_or("node is not a string")?),
        (None, Some(shard)) => {
            Holder::Shard(shard.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or("shard is not a u32")?)
        }
        _ => return Err("a misplaced case names node or shard".into()),
    };
    let mut keys = Vec::new();
    for key in case["keys"].as_array().ok_or("keys is not an array")? {
        match to_key(key)? {
            Ok(key) => keys.push(key),
            Err(err) => return Ok(json!({"error": err.code()})),
        }
    }
    Ok(match shardroute::migration::misplaced(&router, holder, keys.iter().map(OwnedKey::as_key)) {
        Ok(found) => json!({"misplaced": found.indices, "count": found.count(), "checked": found.checked}),
        Err(err) => json!({"error": err.code()}),
    })
}

/// The `results` of a `migration_session` case (conformance/README.md, "Session
/// scenarios"); `Err` for a malformed vector.
pub fn migration_session(file: &Value, case: &Value) -> Result<Value, String> {
    let router = |id: &Value| -> Result<Result<Router, shardroute::Error>, String> {
        let id = id.as_str().ok_or("a topology id is not a string")?;
        let doc = file["topologies"].get(id).ok_or_else(|| format!("unknown topology {id:?}"))?;
        Ok(Router::from_value(doc))
    };
    let optional = |name: &str| -> Result<Result<Option<Router>, shardroute::Error>, String> {
        Ok(match case.get(name) {
            Some(id) => router(id)?.map(Some),
            None => Ok(None),
        })
    };
    let built = if let Some(topology) = case.get("topology") {
        // The routing a service holds: the session decides its mode.
        let (topology, previous, held) = (router(topology)?, optional("previous")?, optional("held")?);
        topology.and_then(|topology| MigrationSession::of_topology(topology, previous?, held?))
    } else {
        let migration = match (case.get("before"), case.get("after"), case.get("dictionary")) {
            (Some(before), Some(after), None) => {
                let (before, after) = (router(before)?, router(after)?);
                before.and_then(|before| after.and_then(|after| Migration::new(before, after)))
            }
            (None, None, Some(dictionary)) => router(dictionary)?.and_then(|router| Migration::of_dictionary(&router)),
            _ => return Err("a migration_session case names topology, before and after, or dictionary".into()),
        };
        let mode = Mode::from_name(case["mode"].as_str().ok_or("mode is not a string")?);
        let until_ms = match case.get("until_ms") {
            Some(text) => Some(decimal_u64(text, "until_ms")?),
            None => None,
        };
        migration.and_then(|migration| mode.and_then(|mode| MigrationSession::of_mode(migration, mode, until_ms)))
    };
    let session = match built {
        Ok(session) => session,
        Err(err) => return Ok(json!({"error": err.code()})),
    };
    let mut results = Vec::new();
    for step in case["steps"].as_array().ok_or("steps is not an array")? {
        let key = || to_key(&step["key"]);
        let result = match step["call"].as_str().ok_or("a step has no call")? {
            "fence_epoch" => json!({"epoch": session.fence_epoch().to_string()}),
            "mode" => json!({"mode": session.mode().name()}),
            "scan_nodes" => json!({"nodes": session.scan_nodes()}),
            "read_plan" => {
                let moved = step["moved"].as_bool().ok_or("moved is not a boolean")?;
                match key()?.and_then(|key| session.read_plan(key.as_key(), moved).map(|nodes| json!({"nodes": nodes})))
                {
                    Ok(found) => found,
                    Err(err) => json!({"error": err.code()}),
                }
            }
            "write_plan" => match key()?.and_then(|key| {
                session
                    .write_plan(key.as_key())
                    .map(|plan| json!({"node": plan.node, "fence_epoch": plan.fence_epoch.to_string()}))
            }) {
                Ok(found) => found,
                Err(err) => json!({"error": err.code()}),
            },
            "lazy_steps" => match key()?.and_then(|key| {
                session.lazy_steps(key.as_key()).map(|steps| {
                    json!({"steps": steps.map(|s| json!({"read_from": s.read_from, "write_to": s.write_to,
                        "retire_from": s.retire_from, "fence_epoch": s.fence_epoch.to_string()}))})
                })
            }) {
                Ok(found) => found,
                Err(err) => json!({"error": err.code()}),
            },
            "copy_batch" => {
                let number =
                    |name: &str| step[name].as_u64().and_then(|n| u32::try_from(n).ok()).ok_or(format!("bad {name}"));
                match session.copy_batch(number("cursor")?, number("max")?) {
                    Ok(batch) => json!({
                        "units": batch.units.iter().map(|u| json!([u.shard, u.from, u.to])).collect::<Vec<_>>(),
                        "next": batch.next,
                    }),
                    Err(err) => json!({"error": err.code()}),
                }
            }
            "read_plan_at" => {
                let moved = step["moved"].as_bool().ok_or("moved is not a boolean")?;
                let now = decimal_u64(&step["now_ms"], "now_ms")?;
                match key()?.and_then(|key| session.read_plan_at(key.as_key(), moved, now)) {
                    Ok(nodes) => json!({"nodes": nodes}),
                    Err(err) => json!({"error": err.code()}),
                }
            }
            "next_deadline" => {
                let now = decimal_u64(&step["now_ms"], "now_ms")?;
                json!({"deadline_ms": session.next_deadline(now).map(|ms| ms.to_string())})
            }
            "actions" => {
                let now = decimal_u64(&step["now_ms"], "now_ms")?;
                let moved = step["moved"].as_bool().ok_or("moved is not a boolean")?;
                let actions: Vec<Value> = session
                    .actions(now, moved)
                    .into_iter()
                    .map(|action| match action {
                        MigrationAction::Retire { node } => json!({"kind": "retire", "node": node}),
                    })
                    .collect();
                json!({ "actions": actions })
            }
            "lazy_groups" => {
                let mut keys = Vec::new();
                let mut refused = None;
                for key in step["keys"].as_array().ok_or("keys is not an array")? {
                    match to_key(key)? {
                        Ok(key) => keys.push(key),
                        Err(err) => {
                            refused = Some(err);
                            break;
                        }
                    }
                }
                match refused.map_or_else(|| session.lazy_groups(keys.iter().map(OwnedKey::as_key)), Err) {
                    Ok(groups) => json!({"groups": groups.iter().map(|g| json!({
                        "steps": {"read_from": g.steps.read_from, "write_to": g.steps.write_to,
                            "retire_from": g.steps.retire_from, "fence_epoch": g.steps.fence_epoch.to_string()},
                        "indices": g.indices,
                    })).collect::<Vec<_>>()}),
                    Err(err) => json!({"error": err.code()}),
                }
            }
            "resume_at" => {
                let started = decimal_u64(&step["started_ms"], "started_ms")?;
                let finished = decimal_u64(&step["finished_ms"], "finished_ms")?;
                let duty = match step.get("duty_per_mille") {
                    Some(n) => Some(n.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or("bad duty_per_mille")?),
                    None => None,
                };
                let min_pause = match step.get("min_pause_ms") {
                    Some(text) => Some(decimal_u64(text, "min_pause_ms")?),
                    None => None,
                };
                match Pace::of(duty, min_pause).and_then(|pace| session.resume_at(started, finished, pace)) {
                    Ok(ms) => json!({"resume_ms": ms.to_string()}),
                    Err(err) => json!({"error": err.code()}),
                }
            }
            "fenced" => {
                let epoch =
                    step["min_epoch"].as_str().and_then(|text| text.parse::<u64>().ok()).ok_or("bad min_epoch")?;
                match session.fenced(epoch) {
                    Ok(Fenced::Refresh) => json!({"refresh": {}}),
                    Err(err) => json!({"error": err.code()}),
                }
            }
            other => return Err(format!("unknown migration session call {other:?}")),
        };
        results.push(result);
    }
    Ok(json!({ "results": results }))
}

/// The `results` of a `session_source` case (conformance/README.md, "Session
/// scenarios"): each step's actions as `Action::to_value` writes them and the deadline
/// after it (`call` steps also the call's number; `state` the state), or `{"error":
/// {"code"}}` when the config is refused; `Err` for a malformed vector.
pub fn session_source(case: &Value) -> Result<Value, String> {
    let mut session = match SourceSession::from_config(&case["config"]) {
        Ok(session) => session,
        Err(err) => return Ok(json!({"error": {"code": err.code()}})),
    };
    let mut results = Vec::new();
    for step in case["steps"].as_array().ok_or("steps is not an array")? {
        let now = step.get("now").map_or(Some(0), Value::as_u64).ok_or("now is not an integer")?;
        let id = || step["id"].as_u64().ok_or("id is not an integer");
        let text = |name: &str| step[name].as_str().ok_or_else(|| format!("{name} is not a string"));
        let actions = match step["call"].as_str().ok_or("a step has no call")? {
            "start" => session.start(now),
            "call" => match session.call(&step["op"], now) {
                Ok((call, actions)) => {
                    results.push(
                        json!({"call": call, "actions": actions_value(&actions), "deadline": session.deadline()}),
                    );
                    continue;
                }
                Err(err) => {
                    results.push(json!({"error": {"code": err.code()}, "deadline": session.deadline()}));
                    continue;
                }
            },
            "response" => {
                let status =
                    step["status"].as_u64().and_then(|s| u16::try_from(s).ok()).ok_or("status is not a u16")?;
                let body = match (step.get("body"), step.get("body_b64")) {
                    (Some(Value::String(body)), None) => body.clone().into_bytes(),
                    (None, Some(Value::String(encoded))) => decode_b64(encoded)?,
                    (None, None) => Vec::new(),
                    _ => return Err("a response has body (text) or body_b64".into()),
                };
                let headers = step.get("headers").cloned().unwrap_or_else(|| json!({}));
                session.response(id()?, now, status, &headers, &body)
            }
            "chunk" => {
                let data = match (step.get("data"), step.get("data_b64")) {
                    (Some(Value::String(data)), None) => data.clone().into_bytes(),
                    (None, Some(Value::String(encoded))) => decode_b64(encoded)?,
                    _ => return Err("a chunk has data (text) or data_b64".into()),
                };
                session.chunk(id()?, now, &data)
            }
            "opened" => session.opened(id()?, now),
            "failed" => session.failed(id()?, now, text("code")?, text("message")?),
            "timer" => session.timer(now),
            "close" => session.close(now),
            "state" => {
                results.push(session.state());
                continue;
            }
            other => return Err(format!("unknown source session call {other:?}")),
        };
        results.push(json!({"actions": actions_value(&actions), "deadline": session.deadline()}));
    }
    Ok(json!({ "results": results }))
}

/// Standard base64 (padding optional), for a vector's `body_b64`.
pub(crate) fn decode_b64(text: &str) -> Result<Vec<u8>, String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut bits, mut count) = (0u32, 0u32);
    for c in text.trim_end_matches('=').bytes() {
        let sextet = ALPHABET.iter().position(|&a| a == c).ok_or("body_b64 is not base64")? as u32;
        bits = (bits << 6) | sextet;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Ok(out)
}
