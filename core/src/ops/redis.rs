//! Redis Cluster's redirections as operations: `redis_moved` (a `MOVED <slot>
//! <host:port>` reply: the slot's master changes, the epoch advances). A smart client
//! that a node redirects calls the router's own [`Router::moved`](crate::Router::moved)
//! (the same change, made to a router) or [`Router::ask`](crate::Router::ask) (no
//! change) instead (see [`redirect`](crate::strategy::compat::redis_cluster::redirect),
//! which makes the slot table's change for both).
//!
//! | `op` | fields | what it does |
//! |---|---|---|
//! | `redis_moved` | `slot`, `address` (`host:port`) | slot `slot` is served by the node at `address` (appended with that address as its id when no node has it); its range is cut around the slot, and neighbouring ranges left with the same chain are joined; reports `slot`, `from`, `to` (node ids) and `added` (the new node's id, or null) |
//!
//! MOVED names only the new master, so the slot's chain becomes that master alone: its
//! replicas are learnt from the next refresh (`import_redis_cluster_shards`).

use alloc::format;
use alloc::string::ToString;

use serde_json::Value;

use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::json::Put as _;
use crate::strategy::compat::redis_cluster::redirect::{check_address, check_moved_address_length};
use crate::strategy::compat::redis_cluster::{RedisClusterSpec, SLOTS};
use crate::strategy::Variant;
use crate::topology::Topology;

pub(super) fn parse(operation: &Value) -> Result<Op> {
    let args = args(operation, &["op", "slot", "address"])?;
    let slot = args.u32_in("slot", 0, SLOTS - 1)?;
    let address = args.str("address")?;
    check_address(address).map_err(|why| Error::argument(format!("operation.address: {why}")))?;
    check_moved_address_length("operation.address", address)?;
    Ok(Op::RedisMoved { slot, address: address.to_string() })
}

impl Edit for RedisClusterSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let Op::RedisMoved { slot, address } = op else {
            return Err(super::refused(op, topology));
        };
        let mut nodes = topology.nodes.clone();
        let moved = self.moved(&mut nodes, *slot, address);
        let mut report = Report::new();
        report.put("slot", (*slot).into());
        report.put("from", Value::String(nodes[moved.from as usize].id.clone()));
        report.put("to", Value::String(nodes[moved.to as usize].id.clone()));
        report.put("added", moved.added.map_or(Value::Null, Value::String));
        let strategy = moved.spec.into_strategy()?;
        Ok(Applied { topology: Topology { nodes, strategy, ..topology.clone() }, report })
    }
}
