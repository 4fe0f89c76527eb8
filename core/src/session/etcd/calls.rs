//! The etcd calls of a publisher (`get`, `get_many`, `put`, `delete_prefix`, `txn`,
//! `publish`): each op's request and what its answer makes, and publish's stages (read,
//! the history walk of a replacement, the compare-and-swap, the read-back of a write
//! whose outcome is unknown).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use super::codec::{self, prefix_end, Entry, Meaning};
use super::{rev, EtcdSession, Exchange, Failure, Purpose};
use crate::error::{Error, ErrorKind, Result};
use crate::limits::MAX_PUBLISH_HISTORY_STEPS;
use crate::router::Router;
use crate::session::exchange::{Action, SourceError};
use crate::session::follower::{Follower, FollowerConfig, Offered};

fn op_text<'a>(op: &'a Value, name: &str) -> Result<&'a str> {
    op.get(name).and_then(Value::as_str).ok_or_else(|| Error::argument(format!("op.{name}: expected a string")))
}

/// Refuses a field of `op` (an op, or a part of one, `name`) that it does not have
/// (`allowed`): a misspelt optional field is an error, never a default silently used.
pub(super) fn known_fields(op: &Value, name: &str, allowed: &[&str]) -> Result<()> {
    let Value::Object(fields) = op else { return Err(Error::argument(format!("{name}: expected an object"))) };
    match fields.keys().find(|field| !allowed.contains(&field.as_str())) {
        None => Ok(()),
        Some(field) => Err(Error::argument(format!("{name}: unknown field {field:?} ({})", allowed.join(", ")))),
    }
}

/// The stage of a publish.
#[derive(Clone, Debug)]
pub(super) enum Stage {
    Read,
    History { steps: u32, epoch_field: Option<u64> },
    Write,
    ReadBack,
}

#[derive(Clone, Debug)]
pub(super) struct PublishCall {
    key: String,
    document: String,
    also: Vec<(String, String)>,
    replace: bool,
    stage: Stage,
    /// The stored value's mod_revision (0: absent).
    stored_revision: u64,
    /// What is written: the canonical document and its epoch.
    written: Option<(String, u64)>,
    blind_error: Option<SourceError>,
}

#[derive(Clone, Debug)]
pub(super) enum Call {
    Get,
    GetMany {
        keys: Vec<String>,
    },
    Put,
    DeletePrefix,
    Txn,
    Publish(PublishCall),
    /// `{"op": "refresh"}`: answered by the follow policy's read (never an exchange of
    /// its own), see `EtcdSession::refresh`.
    Refresh,
}

impl EtcdSession {
    pub(super) fn parse_call(op: &Value) -> Result<(Call, &'static str, String)> {
        let keys_of = |name: &str| -> Result<Vec<String>> {
            op.get(name)
                .and_then(Value::as_array)
                .ok_or_else(|| Error::argument(format!("op.{name}: expected a list of keys")))?
                .iter()
                .map(|key| {
                    key.as_str()
                        .map(ToString::to_string)
                        .ok_or_else(|| Error::argument(format!("op.{name}: a key is not a string")))
                })
                .collect()
        };
        let b64 = |text: &str| codec::b64(text.as_bytes());
        match op.get("op").and_then(Value::as_str) {
            Some("get") => {
                known_fields(op, "op get", &["op", "key"])?;
                let key = op_text(op, "key")?;
                Ok((Call::Get, "/v3/kv/range", json!({"key": b64(key)}).to_string()))
            }
            Some("get_many") => {
                known_fields(op, "op get_many", &["op", "keys"])?;
                let keys = keys_of("keys")?;
                let body = codec::range_txn(&keys);
                Ok((Call::GetMany { keys }, "/v3/kv/txn", body))
            }
            Some("put") => {
                known_fields(op, "op put", &["op", "key", "value"])?;
                let (key, value) = (op_text(op, "key")?, op_text(op, "value")?);
                Ok((Call::Put, "/v3/kv/put", json!({"key": b64(key), "value": b64(value)}).to_string()))
            }
            Some("delete_prefix") => {
                known_fields(op, "op delete_prefix", &["op", "prefix"])?;
                let prefix = op_text(op, "prefix")?;
                let end = codec::b64(&prefix_end(prefix.as_bytes()));
                Ok((
                    Call::DeletePrefix,
                    "/v3/kv/deleterange",
                    json!({"key": b64(prefix), "range_end": end}).to_string(),
                ))
            }
            Some("txn") => {
                known_fields(op, "op txn", &["op", "compare", "puts", "deletes"])?;
                let mut compare = Vec::new();
                if let Some(list) = op.get("compare") {
                    for each in list.as_array().ok_or_else(|| Error::argument("op.compare: expected a list"))? {
                        known_fields(each, "op.compare", &["key", "target", "mod_revision", "value"])?;
                        let key = op_text(each, "key")?;
                        compare.push(match each.get("target").and_then(Value::as_str) {
                            Some("mod") => {
                                let revision = codec::revision(each.get("mod_revision")).ok_or_else(|| {
                                    Error::argument("op.compare: mod_revision, a decimal string or an integer")
                                })?;
                                json!({"key": b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": revision.to_string()})
                            }
                            Some("value") => {
                                json!({"key": b64(key), "target": "VALUE", "result": "EQUAL", "value": b64(op_text(each, "value")?)})
                            }
                            _ => return Err(Error::argument("op.compare: target is \"mod\" or \"value\"")),
                        });
                    }
                }
                let mut success = Vec::new();
                match op.get("puts") {
                    None => {}
                    Some(Value::Object(puts)) => {
                        for (key, value) in puts {
                            let value =
                                value.as_str().ok_or_else(|| Error::argument("op.puts: a value is not a string"))?;
                            success.push(json!({"request_put": {"key": b64(key), "value": b64(value)}}));
                        }
                    }
                    Some(_) => return Err(Error::argument("op.puts: expected an object")),
                }
                if op.get("deletes").is_some() {
                    for key in keys_of("deletes")? {
                        success.push(json!({"request_delete_range": {"key": b64(&key)}}));
                    }
                }
                Ok((Call::Txn, "/v3/kv/txn", json!({"compare": compare, "success": success}).to_string()))
            }
            Some("publish") => {
                known_fields(op, "op publish", &["op", "key", "document", "also", "replace"])?;
                let key = op_text(op, "key")?.to_string();
                let document = op_text(op, "document")?.to_string();
                let mut also = Vec::new();
                match op.get("also") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(map)) => {
                        for (name, value) in map {
                            if *name == key {
                                return Err(Error::argument("op.also: the document's own key"));
                            }
                            let value =
                                value.as_str().ok_or_else(|| Error::argument("op.also: a value is not a string"))?;
                            also.push((name.clone(), value.to_string()));
                        }
                    }
                    Some(_) => return Err(Error::argument("op.also: expected an object")),
                }
                let replace = match op.get("replace") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(replace)) => *replace,
                    Some(_) => return Err(Error::argument("op.replace: expected a boolean")),
                };
                let mut keys = Vec::with_capacity(1 + also.len());
                keys.push(key.clone());
                keys.extend(also.iter().map(|(name, _)| name.clone()));
                let body = codec::range_txn(&keys);
                let publish = PublishCall {
                    key,
                    document,
                    also,
                    replace,
                    stage: Stage::Read,
                    stored_revision: 0,
                    written: None,
                    blind_error: None,
                };
                Ok((Call::Publish(publish), "/v3/kv/txn", body))
            }
            _ => Err(Error::argument(
                "op.op: expected \"get\", \"get_many\", \"put\", \"delete_prefix\", \"txn\", \"publish\" or \"refresh\"",
            )),
        }
    }

    pub(super) fn call_ok(
        &mut self,
        number: u64,
        exchange: &Exchange,
        where_: &str,
        body: &[u8],
        now_ms: u64,
        out: &mut Vec<Action>,
    ) {
        let Some(call) = self.calls.remove(&number) else { return };
        let result: core::result::Result<Value, SourceError> = match call {
            Call::Get => codec::object(where_, body).and_then(|answer| {
                codec::header_revision(where_, &answer)?;
                entry_value(where_, &codec::entry(where_, &Value::Object(answer))?)
            }),
            Call::GetMany { keys } => codec::ranges(where_, body, keys.len()).and_then(|(entries, revision)| {
                let mut values = Map::new();
                for (key, entry) in keys.iter().zip(&entries) {
                    values.insert(key.clone(), entry_value(where_, entry)?);
                }
                Ok(json!({"values": values, "revision": rev(revision)}))
            }),
            Call::Put => codec::object(where_, body)
                .and_then(|answer| codec::header_revision(where_, &answer))
                .map(|revision| json!({"revision": rev(revision)})),
            Call::DeletePrefix => codec::deleted(where_, body).map(|deleted| json!({ "deleted": deleted })),
            Call::Txn => match codec::txn(where_, body) {
                Ok(Some(revision)) => Ok(json!({"revision": rev(revision)})),
                Ok(None) => {
                    Err(SourceError::new("conflict", format!("etcd {where_}: a compare failed; nothing written")))
                }
                Err(error) => Err(error),
            },
            Call::Publish(publish) => return self.publish_ok(number, publish, exchange, where_, body, now_ms, out),
            // A refresh is answered by a read (Purpose::Read), never by a call's exchange.
            Call::Refresh => return,
        };
        out.push(match result {
            Ok(result) => Action::Done { call: number, result },
            Err(error) => Action::Failed { call: number, error },
        });
    }

    pub(super) fn call_failed(&mut self, number: u64, failure: Failure, now_ms: u64, out: &mut Vec<Action>) {
        let Some(call) = self.calls.remove(&number) else { return };
        if let Call::Publish(mut publish) = call {
            match publish.stage {
                Stage::History { .. } if failure.meaning == Meaning::Compacted => {
                    return self.publish_replace(number, publish, now_ms, out);
                }
                Stage::Write if failure.blind => {
                    // Sent, maybe carried out: read the key back to know.
                    publish.blind_error = Some(failure.error);
                    return self.publish_read_back(number, publish, now_ms, out);
                }
                _ => {}
            }
        }
        out.push(Action::Failed { call: number, error: failure.error });
    }

    fn publish_send(
        &mut self,
        number: u64,
        publish: PublishCall,
        path: &'static str,
        body: String,
        now_ms: u64,
        out: &mut Vec<Action>,
    ) {
        // The compare-and-swap is not resent blind: without an answer it may have been
        // carried out, which a read says.
        let blind = matches!(publish.stage, Stage::Write);
        self.calls.insert(number, Call::Publish(publish));
        let mut exchange = Exchange::new(Purpose::Call(number), path, body);
        exchange.not_resent_blind = blind;
        self.send(exchange, now_ms, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn publish_ok(
        &mut self,
        number: u64,
        mut publish: PublishCall,
        exchange: &Exchange,
        where_: &str,
        body: &[u8],
        now_ms: u64,
        out: &mut Vec<Action>,
    ) {
        let failed = |error: SourceError| Action::Failed { call: number, error };
        match publish.stage.clone() {
            Stage::Read => {
                let stored = match codec::ranges(where_, body, 1 + publish.also.len()) {
                    Ok((entries, _)) => entries.into_iter().next().flatten(),
                    Err(error) => return out.push(failed(error)),
                };
                let mut follower = Follower::new(FollowerConfig::default());
                let Some((value, mod_revision)) = stored else {
                    return match follower.publish(&publish.document) {
                        Ok(write) => {
                            publish.written = Some((write.document, write.epoch));
                            self.publish_write(number, publish, now_ms, out);
                        }
                        Err(error) => out.push(failed(SourceError::core(&error))),
                    };
                };
                publish.stored_revision = mod_revision;
                match follower.offer_bytes(&value, mod_revision, now_ms) {
                    Offered::Refused(refusal) if !publish.replace => out.push(failed(SourceError::new(
                        refusal.code(),
                        format!(
                            "publish: the document stored at {:?} is refused ({}); not overwritten; publish with \
                             replace to repair it",
                            publish.key,
                            refusal.message()
                        ),
                    ))),
                    Offered::Refused(_) => {
                        let epoch_field = serde_json::from_slice::<Value>(&value)
                            .ok()
                            .and_then(|stored| stored.get("epoch").and_then(Value::as_u64));
                        publish.stage = Stage::History { steps: 0, epoch_field };
                        self.publish_history(number, publish, mod_revision, now_ms, out);
                    }
                    _ => match follower.publish(&publish.document) {
                        Ok(write) => {
                            publish.written = Some((write.document, write.epoch));
                            self.publish_write(number, publish, now_ms, out);
                        }
                        Err(error) => out.push(failed(SourceError::core(&error))),
                    },
                }
            }
            Stage::History { steps, epoch_field } => {
                let entry =
                    match codec::object(where_, body).and_then(|answer| codec::entry(where_, &Value::Object(answer))) {
                        Ok(entry) => entry,
                        Err(error) => return out.push(failed(error)),
                    };
                let Some((value, mod_revision)) = entry else {
                    return self.publish_replace(number, publish, now_ms, out);
                };
                let mut follower = Follower::new(FollowerConfig::default());
                match follower.offer_bytes(&value, mod_revision, now_ms) {
                    Offered::Installed { epoch } => {
                        // Found: the newest earlier document a follower would install.
                        let held = epoch_field.map_or(epoch, |field| field.max(epoch));
                        publish.stage = Stage::History { steps, epoch_field: Some(held) };
                        self.publish_replace(number, publish, now_ms, out);
                    }
                    _ if steps + 1 < MAX_PUBLISH_HISTORY_STEPS && mod_revision > 1 => {
                        publish.stage = Stage::History { steps: steps + 1, epoch_field };
                        self.publish_history(number, publish, mod_revision, now_ms, out);
                    }
                    _ => self.publish_replace(number, publish, now_ms, out),
                }
            }
            Stage::Write => match codec::txn(where_, body) {
                Ok(Some(revision)) => {
                    let epoch = publish.written.as_ref().map_or(0, |(_, epoch)| *epoch);
                    out.push(Action::Done {
                        call: number,
                        result: json!({"revision": rev(revision), "epoch": rev(epoch)}),
                    });
                }
                Ok(None) if exchange.tried > 0 => {
                    // Resent to another member: the first may have written it.
                    publish.blind_error =
                        Some(SourceError::new("conflict", format!("etcd {where_}: a compare failed")));
                    self.publish_read_back(number, publish, now_ms, out);
                }
                Ok(None) => out.push(failed(conflict(&publish))),
                Err(error) => out.push(failed(error)),
            },
            Stage::ReadBack => {
                let entry =
                    match codec::object(where_, body).and_then(|answer| codec::entry(where_, &Value::Object(answer))) {
                        Ok(entry) => entry,
                        Err(error) => return out.push(failed(error)),
                    };
                let (document, epoch) = publish.written.clone().unwrap_or_default();
                match entry {
                    Some((value, mod_revision))
                        if mod_revision > publish.stored_revision && value == document.as_bytes() =>
                    {
                        out.push(Action::Done {
                            call: number,
                            result: json!({"revision": rev(mod_revision), "epoch": rev(epoch)}),
                        });
                    }
                    Some((_, mod_revision)) if mod_revision == publish.stored_revision => {
                        out.push(failed(publish.blind_error.take().unwrap_or_else(|| conflict(&publish))));
                    }
                    None if publish.stored_revision == 0 => {
                        out.push(failed(publish.blind_error.take().unwrap_or_else(|| conflict(&publish))));
                    }
                    _ => out.push(failed(conflict(&publish))),
                }
            }
        }
    }

    /// Reads the key as it was just before `mod_revision`.
    fn publish_history(
        &mut self,
        number: u64,
        publish: PublishCall,
        mod_revision: u64,
        now_ms: u64,
        out: &mut Vec<Action>,
    ) {
        if mod_revision <= 1 {
            return self.publish_replace(number, publish, now_ms, out);
        }
        let body =
            json!({"key": codec::b64(publish.key.as_bytes()), "revision": (mod_revision - 1).to_string()}).to_string();
        self.publish_send(number, publish, "/v3/kv/range", body, now_ms, out);
    }

    /// The history walk ended: a replacement is written if its epoch is above every
    /// epoch a follower may hold.
    fn publish_replace(&mut self, number: u64, mut publish: PublishCall, now_ms: u64, out: &mut Vec<Action>) {
        let Stage::History { epoch_field, .. } = publish.stage else { return };
        let Some(held) = epoch_field else {
            return out.push(Action::Failed {
                call: number,
                error: SourceError::new(
                    "invalid_argument",
                    format!("publish: cannot tell the epoch followers hold of {:?}; not replaced", publish.key),
                ),
            });
        };
        match Router::from_json(&publish.document) {
            Err(error) => out.push(Action::Failed { call: number, error: SourceError::core(&error) }),
            Ok(router) if router.epoch() <= held => out.push(Action::Failed {
                call: number,
                error: SourceError::core(&Error::new(
                    ErrorKind::StaleEpoch,
                    format!("publish: a replacement needs an epoch above {held}, not {}", router.epoch()),
                )),
            }),
            Ok(router) => {
                publish.written = Some((router.to_json(), router.epoch()));
                self.publish_write(number, publish, now_ms, out);
            }
        }
    }

    /// The compare-and-swap: the key still at the revision read, then the document and
    /// its companions.
    fn publish_write(&mut self, number: u64, mut publish: PublishCall, now_ms: u64, out: &mut Vec<Action>) {
        let b64 = |text: &str| codec::b64(text.as_bytes());
        let document = publish.written.as_ref().map_or("", |(document, _)| document.as_str());
        let mut success = alloc::vec![json!({"request_put": {"key": b64(&publish.key), "value": b64(document)}})];
        for (name, value) in &publish.also {
            success.push(json!({"request_put": {"key": b64(name), "value": b64(value)}}));
        }
        let compare = json!([{"key": b64(&publish.key), "target": "MOD", "result": "EQUAL",
                              "mod_revision": publish.stored_revision.to_string()}]);
        let body = json!({"compare": compare, "success": success}).to_string();
        publish.stage = Stage::Write;
        self.publish_send(number, publish, "/v3/kv/txn", body, now_ms, out);
    }

    fn publish_read_back(&mut self, number: u64, mut publish: PublishCall, now_ms: u64, out: &mut Vec<Action>) {
        publish.stage = Stage::ReadBack;
        let body = json!({"key": codec::b64(publish.key.as_bytes())}).to_string();
        self.publish_send(number, publish, "/v3/kv/range", body, now_ms, out);
    }
}

fn conflict(publish: &PublishCall) -> SourceError {
    let epoch = publish.written.as_ref().map_or(0, |(_, epoch)| *epoch);
    SourceError::new(
        "conflict",
        format!("publish: {:?} changed since it was read (epoch {epoch} not written)", publish.key),
    )
}

/// `{"value": str|null, "mod_revision": "N"}` of an entry (a value that is not UTF-8 is
/// `malformed`).
fn entry_value(where_: &str, entry: &Entry) -> core::result::Result<Value, SourceError> {
    match entry {
        None => Ok(json!({"value": null, "mod_revision": "0"})),
        Some((value, mod_revision)) => match core::str::from_utf8(value) {
            Ok(text) => Ok(json!({"value": text, "mod_revision": rev(*mod_revision)})),
            Err(_) => Err(codec::malformed(where_, "a value that is not UTF-8")),
        },
    }
}
