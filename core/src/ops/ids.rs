//! Operations of the id strategies: the `id_bits` generators (`id_bits_compose`,
//! `id_bits_tickets`, `id_bits_reserve_block`, `id_bits_ticket_server`, `id_bits_decode`:
//! the topology comes back unchanged, the ids are the report) and the `id_groups` edits (`id_groups_add_group`,
//! `id_groups_add_interval`, `id_groups_set_writable`: no id ever moves).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use super::args::{argument, Args};
use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::limits;
use crate::strategy::ids::id_bits::{ulid_to_text, IdBitsSpec, IdLayout};
use crate::strategy::ids::id_groups::{parse_group, parse_interval, IdGroupsSpec};
use crate::strategy::ids::tickets::{next_ticket_server, reserve_block, ticket_ids};
use crate::strategy::spec::{Place as _, Spec as _};
use crate::strategy::Variant;
use crate::topology::Topology;

/// The fields of an id to compose, by layout; `routing` is the shard, or the cell when
/// the layout has a cell directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdFields {
    /// `shard_high`: shard and local id.
    ShardHigh {
        /// The shard (or cell).
        routing: u32,
        /// The local id.
        local: u64,
    },
    /// `snowflake`: time, shard and sequence.
    Snowflake {
        /// Milliseconds since the layout's epoch start.
        timestamp_ms: u64,
        /// The shard (or cell).
        routing: u32,
        /// The sequence within the millisecond.
        sequence: u64,
    },
    /// `ticket`: server and sequence.
    Ticket {
        /// The server's shard (or cell).
        routing: u32,
        /// The server's sequence number.
        sequence: u64,
    },
    /// `ulid`: time, shard and the caller's randomness.
    Ulid {
        /// Unix milliseconds (48 bits).
        timestamp_ms: u64,
        /// The shard (or cell): the top `shard_bits` of the random bits.
        routing: u32,
        /// The remaining `80 - shard_bits` random bits, drawn by the caller.
        randomness: u128,
    },
}

/// The id an `id_bits_decode` operation reads: a ULID's text for the `ulid` layout, an
/// integer for the others.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdInput {
    /// An integer id.
    Integer(u64),
    /// A ULID's text.
    Text(String),
}

/// A ticket server and its counter: the shard (or cell) it serves and the table's
/// `AUTO_INCREMENT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketServer {
    /// The server's shard (or cell).
    pub routing: u32,
    /// The counter (MySQL's `AUTO_INCREMENT`).
    pub auto_increment: u64,
}

pub(super) fn parse(name: &str, operation: &Value, topology: &Topology) -> Result<Op> {
    let strategy = &topology.strategy;
    match (strategy.spec::<IdBitsSpec>(), strategy.spec::<IdGroupsSpec>()) {
        (Some(spec), _) if name.starts_with("id_bits_") => parse_id_bits(name, operation, spec),
        (_, Some(spec)) if name.starts_with("id_groups_") => parse_id_groups(name, operation, spec, topology),
        _ => {
            let family = if name.starts_with("id_bits_") { "id_bits" } else { "id_groups" };
            Err(Error::argument(format!("{name}: applies to {family} topologies, not {}", strategy.type_name())))
        }
    }
}

fn parse_id_bits(name: &str, operation: &Value, spec: &IdBitsSpec) -> Result<Op> {
    let cells = spec.cells.is_some();
    let fields = |shard: &'static [&'static str], cell: &'static [&'static str]| if cells { cell } else { shard };
    if name == "id_bits_compose" {
        let fields = match spec.layout {
            IdLayout::ShardHigh(_) => {
                let args = args(operation, fields(&["op", "shard", "local"], &["op", "cell", "local"]))?;
                IdFields::ShardHigh { routing: routing(spec, &args)?, local: args.u64("local")? }
            }
            IdLayout::Snowflake(_) => {
                let args = args(
                    operation,
                    fields(&["op", "timestamp_ms", "shard", "sequence"], &["op", "timestamp_ms", "cell", "sequence"]),
                )?;
                let timestamp_ms = args.u64("timestamp_ms")?;
                IdFields::Snowflake { timestamp_ms, routing: routing(spec, &args)?, sequence: args.u64("sequence")? }
            }
            IdLayout::Ticket(_) => {
                let args = args(operation, fields(&["op", "shard", "sequence"], &["op", "cell", "sequence"]))?;
                IdFields::Ticket { routing: routing(spec, &args)?, sequence: args.u64("sequence")? }
            }
            IdLayout::Ulid(_) => {
                let args = args(
                    operation,
                    fields(
                        &["op", "timestamp_ms", "shard", "randomness"],
                        &["op", "timestamp_ms", "cell", "randomness"],
                    ),
                )?;
                let timestamp_ms = args.u64("timestamp_ms")?;
                IdFields::Ulid {
                    timestamp_ms,
                    routing: routing(spec, &args)?,
                    randomness: u128_arg(&args, "randomness")?,
                }
            }
        };
        return Ok(Op::IdBitsCompose(fields));
    }
    if name == "id_bits_decode" {
        let args = args(operation, &["op", "id"])?;
        let id = match spec.layout {
            IdLayout::Ulid(_) => IdInput::Text(args.str("id")?.to_string()),
            _ => IdInput::Integer(args.u64("id")?),
        };
        return Ok(Op::IdBitsDecode(id));
    }
    let IdLayout::Ticket(_) = spec.layout else {
        return Err(Error::argument(format!("{name}: needs the ticket layout, not {}", spec.layout.name())));
    };
    if name == "id_bits_ticket_server" {
        let args = args(operation, &["op", "turn", "down"])?;
        let turn = args.u64("turn")?;
        let down = match args.optional("down") {
            None => Vec::new(),
            Some(value) => {
                let path = args.path("down");
                let entries = value.as_array().ok_or_else(|| {
                    Error::argument(format!(
                        "{path}: expected an array of {}s, found {}",
                        spec.routing_name(),
                        json::type_name(value)
                    ))
                })?;
                if entries.len() > limits::MAX_TICKET_DOWN as usize {
                    return Err(Error::limit(format!(
                        "{path}: {} entries; the limit is {}",
                        entries.len(),
                        limits::MAX_TICKET_DOWN
                    )));
                }
                entries
                    .iter()
                    .enumerate()
                    .map(|(index, entry)| {
                        json::u32_in(&format!("{path}[{index}]"), entry, 0, u32::MAX).map_err(super::args::argument)
                    })
                    .collect::<Result<Vec<u32>>>()?
            }
        };
        return Ok(Op::IdBitsTicketServer { turn, down });
    }
    let (count_field, allowed): (&str, &'static [&'static str]) = match (cells, name) {
        (false, "id_bits_tickets") => ("count", &["op", "shard", "auto_increment", "count"]),
        (true, "id_bits_tickets") => ("count", &["op", "cell", "auto_increment", "count"]),
        (false, _) => ("block_size", &["op", "shard", "auto_increment", "block_size"]),
        (true, _) => ("block_size", &["op", "cell", "auto_increment", "block_size"]),
    };
    let args = args(operation, allowed)?;
    let server = TicketServer { routing: routing(spec, &args)?, auto_increment: args.u64("auto_increment")? };
    let count = u32_at_least(&args, count_field, 1)?;
    Ok(if count_field == "count" {
        Op::IdBitsTickets { server, count }
    } else {
        Op::IdBitsReserveBlock { server, block_size: count }
    })
}

/// A `u128` field: a decimal string of up to 39 digits, or a JSON integer.
fn u128_arg(args: &Args<'_>, name: &str) -> Result<u128> {
    let value = args.required(name)?;
    let parsed = match value {
        Value::Number(number) => number.as_u64().map(u128::from),
        Value::String(text) if !text.is_empty() && text.len() <= 39 && text.bytes().all(|b| b.is_ascii_digit()) => {
            text.bytes().try_fold(0u128, |acc, digit| acc.checked_mul(10)?.checked_add(u128::from(digit - b'0')))
        }
        _ => None,
    };
    parsed.ok_or_else(|| {
        Error::argument(format!(
            "{}: expected an unsigned integer below 2^128 (a decimal string, or a number), found {}",
            args.path(name),
            json::type_name(value)
        ))
    })
}

fn u32_at_least(args: &Args<'_>, name: &str, min: u32) -> Result<u32> {
    let value = args.u64(name)?;
    u32::try_from(value).ok().filter(|&value| value >= min).ok_or_else(|| {
        Error::argument(format!("{}: expected an integer in {min}..={}, found {value}", args.path(name), u32::MAX))
    })
}

/// The routing field (`shard`, or `cell` under a directory): one ids route to, so no
/// generator mints an unroutable id.
fn routing(spec: &IdBitsSpec, args: &Args<'_>) -> Result<u32> {
    let value = u32_at_least(args, spec.routing_name(), 0)?;
    let known = match &spec.cells {
        Some(cells) => cells.binary_search_by_key(&value, |&(cell, _)| cell).is_ok(),
        None => (value as usize) < spec.shards.len(),
    };
    if known {
        Ok(value)
    } else if spec.cells.is_some() {
        Err(Error::argument(format!("operation.cell: cell {value} is not in the cell directory")))
    } else {
        Err(Error::argument(format!("operation.shard: shard {value} is not in 0..{}", spec.shards.len())))
    }
}

impl Edit for IdBitsSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let mut report = Report::new();
        match op {
            Op::IdBitsCompose(fields) => {
                let id = match (fields, &self.layout) {
                    (IdFields::ShardHigh { routing, local }, IdLayout::ShardHigh(layout)) => {
                        layout.compose(*routing, *local)?
                    }
                    (IdFields::Snowflake { timestamp_ms, routing, sequence }, IdLayout::Snowflake(layout)) => {
                        layout.compose(*timestamp_ms, *routing, *sequence)?
                    }
                    (IdFields::Ticket { routing, sequence }, IdLayout::Ticket(layout)) => {
                        layout.compose(*routing, *sequence)?
                    }
                    (IdFields::Ulid { timestamp_ms, routing, randomness }, IdLayout::Ulid(layout)) => {
                        let ulid = layout.compose(*timestamp_ms, *routing, *randomness)?;
                        report.put("id", Value::String(ulid_to_text(ulid)));
                        return Ok(Applied { topology: topology.clone(), report });
                    }
                    _ => {
                        return Err(Error::argument(format!(
                            "id_bits_compose: the fields do not fit the {} layout",
                            self.layout.name()
                        )))
                    }
                };
                report.put("id", Value::String(id.to_string()));
            }
            Op::IdBitsTickets { server, count } => {
                let (offset, increment) = self.ticket_server(op, server)?;
                let batch = ticket_ids(offset, increment, server.auto_increment, *count)?;
                report.put("ids", batch.ids.iter().map(|id| Value::String(id.to_string())).collect());
                report.put("auto_increment", Value::String(batch.auto_increment.to_string()));
            }
            Op::IdBitsReserveBlock { server, block_size } => {
                let (offset, increment) = self.ticket_server(op, server)?;
                let block = reserve_block(offset, increment, server.auto_increment, *block_size)?;
                report.put("first", Value::String(block.first.to_string()));
                report.put("last", Value::String(block.last.to_string()));
                report.put("step", block.step.into());
                report.put("count", block.count.into());
                report.put("auto_increment", Value::String(block.auto_increment.to_string()));
            }
            Op::IdBitsTicketServer { turn, down } => {
                if !matches!(self.layout, IdLayout::Ticket(_)) {
                    return Err(Error::argument(format!(
                        "{}: needs the ticket layout, not {}",
                        op.name(),
                        self.layout.name()
                    )));
                }
                // The servers ids route to, in order: the cells of the directory, or
                // the shards of the table.
                let servers: Vec<u32> = match &self.cells {
                    Some(cells) => cells.iter().map(|&(cell, _)| cell).collect(),
                    None => (0..self.shards.len() as u32).collect(),
                };
                let down = down
                    .iter()
                    .map(|value| {
                        servers.binary_search(value).map(|index| index as u32).map_err(|_| {
                            Error::argument(format!(
                                "operation.down: {} {value} is not one of the ticket servers ids route to",
                                self.routing_name()
                            ))
                        })
                    })
                    .collect::<Result<Vec<u32>>>()?;
                let pick = next_ticket_server(servers.len() as u32, *turn, &down)?;
                report.put(self.routing_name(), servers[pick.server as usize].into());
                report.put("next_turn", json::u64_value(pick.next_turn));
                report.put("skipped", pick.skipped.iter().map(|&index| Value::from(servers[index as usize])).collect());
            }
            Op::IdBitsDecode(id) => {
                let (shard, fields): (u32, Vec<(&'static str, u128)>) = match id {
                    IdInput::Text(text) => {
                        self.compile(&topology.hashing, &topology.nodes)?.decode_ulid(text.as_bytes())?
                    }
                    IdInput::Integer(id) => {
                        let decoded = self.compile(&topology.hashing, &topology.nodes)?.decode_id(*id)?;
                        let fields = decoded.fields.iter().map(|&(name, value)| (name, u128::from(value))).collect();
                        (decoded.shard, fields)
                    }
                };
                report.put("shard", shard.into());
                let fields = fields
                    .iter()
                    .map(|(name, value)| Value::Array(alloc::vec![(*name).into(), Value::String(value.to_string())]))
                    .collect();
                report.put("fields", Value::Array(fields));
            }
            _ => return Err(super::refused(op, topology)),
        }
        Ok(Applied { topology: topology.clone(), report })
    }
}

impl IdBitsSpec {
    /// MySQL's `(auto_increment_offset, auto_increment_increment)` of a ticket server.
    fn ticket_server(&self, op: &Op, server: &TicketServer) -> Result<(u32, u32)> {
        match self.layout {
            IdLayout::Ticket(layout) => Ok((server.routing + 1, layout.servers())),
            _ => Err(Error::argument(format!("{}: needs the ticket layout, not {}", op.name(), self.layout.name()))),
        }
    }
}

fn parse_id_groups(name: &str, operation: &Value, spec: &IdGroupsSpec, topology: &Topology) -> Result<Op> {
    let named = |args: &Args<'_>| -> Result<String> {
        let id = args.str("group")?;
        if spec.groups.iter().any(|group| group.id == id) {
            Ok(id.to_string())
        } else {
            Err(Error::argument(format!("{name}: no group {id:?}")))
        }
    };
    Ok(match name {
        "id_groups_add_group" => {
            let args = args(operation, &["op", "group", "writable"])?;
            let group = args.required("group")?;
            if !group.is_object() {
                return Err(Error::argument("operation.group: expected a group object (id, intervals, shards)"));
            }
            if group.get("writable").is_some() {
                return Err(Error::argument(
                    "operation.group.writable: give writable on the operation (default true), not in the group",
                ));
            }
            let writable = args.bool_or("writable", true)?;
            Op::IdGroupsAddGroup { group: parse_group("operation.group", group, &topology.nodes)?, writable }
        }
        "id_groups_add_interval" => {
            let args = args(operation, &["op", "group", "interval"])?;
            let group = named(&args)?;
            let interval = parse_interval(&args.path("interval"), args.required("interval")?).map_err(argument)?;
            Op::IdGroupsAddInterval { group, interval }
        }
        _ => Op::IdGroupsSetWritable { group: named(&args(operation, &["op", "group"])?)? },
    })
}

impl Edit for IdGroupsSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let mut next = self.clone();
        let mut report = Report::new();
        let index_of = |id: &str| {
            self.groups
                .iter()
                .position(|group| group.id == id)
                .ok_or_else(|| Error::argument(format!("{}: no group {id:?}", op.name())))
        };
        let writable = |groups: &mut [crate::strategy::ids::id_groups::IdGroup], index: usize| {
            for (position, group) in groups.iter_mut().enumerate() {
                group.writable = position == index;
            }
        };
        match op {
            Op::IdGroupsAddGroup { group, writable: becomes_writable } => {
                let index = next.groups.len();
                let previous = self.writable_index();
                let first = self.groups.iter().map(|group| group.shards.len() as u32).sum::<u32>();
                let count = group.shards.len() as u32;
                next.groups.push(group.clone());
                writable(&mut next.groups, if *becomes_writable { index } else { previous });
                report.put("added", Value::String(group.id.clone()));
                report.put("shards", (first..first + count).collect());
                report.put("writable", Value::String(next.groups[next.writable_index()].id.clone()));
            }
            Op::IdGroupsAddInterval { group, interval } => {
                let index = index_of(group)?;
                next.groups[index].intervals.push(*interval);
                report.put("group", Value::String(group.clone()));
                report.insert(
                    "interval".into(),
                    Value::Array(alloc::vec![json::u64_value(interval.0), json::u64_value(interval.1)]),
                );
            }
            Op::IdGroupsSetWritable { group } => {
                let index = index_of(group)?;
                writable(&mut next.groups, index);
                report.put("writable", Value::String(group.clone()));
                report.put("previous", Value::String(self.writable_group().id.clone()));
            }
            _ => return Err(super::refused(op, topology)),
        }
        Ok(Applied { topology: Topology { strategy: next.into_strategy()?, ..topology.clone() }, report })
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use serde_json::json;

    use crate::ops::apply;
    use crate::topology::Topology;

    fn topology(strategy: serde_json::Value) -> Topology {
        let document = json!({"format": "shardroute/1", "epoch": 3,
            "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "strategy": strategy});
        Topology::from_json(&document.to_string()).unwrap()
    }

    fn report(topology: &Topology, operation: serde_json::Value) -> serde_json::Value {
        let mut result = apply(topology, &operation).unwrap();
        assert_eq!(result["topology"], topology.to_value(), "generators leave the topology unchanged");
        result.as_object_mut().unwrap().remove("topology");
        result
    }

    fn code(topology: &Topology, operation: serde_json::Value) -> &'static str {
        apply(topology, &operation).unwrap_err().code()
    }

    #[test]
    fn ticket_server_rotates_and_fails_over() {
        let flickr = topology(json!({"type": "id_bits", "layout": "ticket", "servers": 2, "shards": ["a", "b"]}));
        let op =
            |turn: u64, down: serde_json::Value| json!({"op": "id_bits_ticket_server", "turn": turn, "down": down});
        assert_eq!(report(&flickr, op(0, json!([]))), json!({"shard": 0, "next_turn": 1, "skipped": []}));
        assert_eq!(report(&flickr, op(1, json!([]))), json!({"shard": 1, "next_turn": 0, "skipped": []}));
        assert_eq!(report(&flickr, op(1, json!([1]))), json!({"shard": 0, "next_turn": 1, "skipped": [1]}));
        let no_down = json!({"op": "id_bits_ticket_server", "turn": "18446744073709551615"});
        assert_eq!(report(&flickr, no_down), json!({"shard": 1, "next_turn": 0, "skipped": []}));
        assert_eq!(code(&flickr, op(0, json!([0, 1]))), "unavailable");
        assert_eq!(code(&flickr, op(0, json!([2]))), "invalid_argument");
        assert_eq!(code(&flickr, op(0, json!(["0"]))), "invalid_argument");
        assert_eq!(code(&flickr, op(0, json!(0))), "invalid_argument");
        let long = serde_json::Value::Array(alloc::vec![json!(0); crate::limits::MAX_TICKET_DOWN as usize + 1]);
        assert_eq!(code(&flickr, op(0, long)), "limit_exceeded");
        let snowflake = topology(json!({"type": "id_bits", "layout": "snowflake"}));
        assert_eq!(code(&snowflake, op(0, json!([]))), "invalid_argument");
    }

    #[test]
    fn ticket_server_names_cells_under_a_directory() {
        let cells = topology(json!({"type": "id_bits", "layout": "ticket", "servers": 8,
            "shards": ["a", "b"], "cells": {"2": 0, "5": 1, "7": 0}}));
        let op =
            |turn: u64, down: serde_json::Value| json!({"op": "id_bits_ticket_server", "turn": turn, "down": down});
        assert_eq!(report(&cells, op(1, json!([]))), json!({"cell": 5, "next_turn": 2, "skipped": []}));
        assert_eq!(report(&cells, op(1, json!([5, 7]))), json!({"cell": 2, "next_turn": 1, "skipped": [5, 7]}));
        assert_eq!(code(&cells, op(0, json!([3]))), "invalid_argument");
    }

    #[test]
    fn ulid_compose_and_decode_round_trip() {
        let ulid = topology(json!({"type": "id_bits", "layout": "ulid", "shard_bits": 4}));
        let composed = report(
            &ulid,
            json!({"op": "id_bits_compose", "timestamp_ms": 1_469_918_176_385u64, "shard": 2, "randomness": "12345678901234567890"}),
        );
        let id = composed["id"].as_str().unwrap().to_string();
        assert_eq!(id.len(), 26);
        let decoded = report(&ulid, json!({"op": "id_bits_decode", "id": id.to_ascii_lowercase()}));
        assert_eq!(
            decoded,
            json!({"shard": 2, "fields": [["timestamp_ms", "1469918176385"], ["randomness", "12345678901234567890"]]})
        );
        let too_wide =
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "randomness": (1u128 << 76).to_string()});
        assert_eq!(code(&ulid, too_wide), "invalid_argument");
        let not_digits = json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "randomness": "0x10"});
        assert_eq!(code(&ulid, not_digits), "invalid_argument");
        let shard_9 = json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 9, "randomness": 0});
        assert_eq!(code(&ulid, shard_9), "invalid_argument");
        assert_eq!(code(&ulid, json!({"op": "id_bits_decode", "id": "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"})), "invalid_key");
        assert_eq!(code(&ulid, json!({"op": "id_bits_decode", "id": 7})), "invalid_argument");
        // The integer layouts decode as decode_id does.
        let high = topology(json!({"type": "id_bits", "layout": "shard_high"}));
        let id = (2u64 << 56 | 42).to_string();
        assert_eq!(
            report(&high, json!({"op": "id_bits_decode", "id": id})),
            json!({"shard": 2, "fields": [["local", "42"]]})
        );
        assert_eq!(
            code(&high, json!({"op": "id_bits_decode", "id": "01AN4Z07BY79KA1307SR9X4MV3"})),
            "invalid_argument"
        );
    }
}
