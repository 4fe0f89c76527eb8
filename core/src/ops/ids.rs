//! Operations of the id strategies: the `id_bits` generators (`id_bits_compose`,
//! `id_bits_tickets`, `id_bits_reserve_block`: the topology comes back unchanged, the ids
//! are the report) and the `id_groups` edits (`id_groups_add_group`,
//! `id_groups_add_interval`, `id_groups_set_writable`: no id ever moves).

use alloc::format;
use alloc::string::{String, ToString};

use serde_json::Value;

use super::args::{argument, Args};
use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::strategy::ids::id_bits::{IdBitsSpec, IdLayout};
use crate::strategy::ids::id_groups::{parse_group, parse_interval, IdGroupsSpec};
use crate::strategy::ids::tickets::{reserve_block, ticket_ids};
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
        };
        return Ok(Op::IdBitsCompose(fields));
    }
    let IdLayout::Ticket(_) = spec.layout else {
        return Err(Error::argument(format!("{name}: needs the ticket layout, not {}", spec.layout.name())));
    };
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
