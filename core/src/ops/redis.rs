//! Redis Cluster's redirections as operations: `redis_moved` (a `MOVED <slot>
//! <host:port>` reply: the slot's master changes, the epoch advances) and, beside it,
//! [`Router::moved`] and [`Router::ask`], the calls a smart client makes when a node
//! redirects it (see [`redirect`](crate::strategy::compat::redis_cluster::redirect)).
//!
//! | `op` | fields | what it does |
//! |---|---|---|
//! | `redis_moved` | `slot`, `address` (`host:port`) | slot `slot` is served by the node at `address` (appended with that address as its id when no node has it); its range is cut around the slot, and neighbouring ranges left with the same chain are joined; reports `slot`, `from`, `to` (node ids) and `added` (the new node's id, or null) |
//!
//! MOVED names only the new master, so the slot's chain becomes that master alone: its
//! replicas are learnt from the next refresh (`import_redis_cluster_shards`).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use serde_json::Value;

use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, Result};
use crate::node::Node;
use crate::router::Router;
use crate::strategy::compat::redis_cluster::redirect::{check_address, check_slot};
use crate::strategy::compat::redis_cluster::{RedisClusterSpec, SlotRange, SLOTS};
use crate::strategy::Strategy;
use crate::topology::Topology;

pub(super) fn parse(operation: &Value) -> Result<Op> {
    let args = args(operation, &["op", "slot", "address"])?;
    let slot = args.u32_in("slot", 0, SLOTS - 1)?;
    let address = args.str("address")?;
    check_address(address).map_err(|why| Error::argument(format!("operation.address: {why}")))?;
    Ok(Op::RedisMoved { slot, address: address.to_string() })
}

impl Edit for RedisClusterSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let Op::RedisMoved { slot, address } = op else {
            return Err(super::refused(op, topology));
        };
        let mut nodes = topology.nodes.clone();
        let mut ranges = self.ranges(nodes.len() as u32);
        let (target, added) = node_at(&mut nodes, address);
        let index = ranges.partition_point(|range| range.end < *slot);
        let range = ranges[index].clone();
        let from = range.nodes[0];
        let mut pieces = Vec::with_capacity(3);
        if range.start < *slot {
            pieces.push(SlotRange { start: range.start, end: slot - 1, nodes: range.nodes.clone() });
        }
        pieces.push(SlotRange { start: *slot, end: *slot, nodes: vec![target] });
        if *slot < range.end {
            pieces.push(SlotRange { start: slot + 1, end: range.end, nodes: range.nodes });
        }
        ranges.splice(index..=index, pieces);
        let mut report = Report::new();
        report.insert("slot".into(), (*slot).into());
        report.insert("from".into(), Value::String(nodes[from as usize].id.clone()));
        report.insert("to".into(), Value::String(nodes[target as usize].id.clone()));
        report.insert("added".into(), added.map_or(Value::Null, Value::String));
        let strategy = Strategy::RedisCluster(RedisClusterSpec { slots: Some(joined(ranges)) });
        Ok(Applied { topology: Topology { nodes, strategy, ..topology.clone() }, report })
    }
}

/// The index of the node at `address`, appending one (id = address) when no node has
/// that address; with the id of the new node.
fn node_at(nodes: &mut Vec<Node>, address: &str) -> (u32, Option<String>) {
    let known = nodes.iter().position(|node| node.address.as_deref() == Some(address)).or_else(|| {
        // A topology written without addresses names its nodes by `host:port`.
        nodes.iter().position(|node| node.address.is_none() && node.id == address)
    });
    match known {
        Some(index) => (index as u32, None),
        None => {
            nodes.push(Node { address: Some(address.to_string()), ..Node::new(address) });
            (nodes.len() as u32 - 1, Some(address.to_string()))
        }
    }
}

/// Joins neighbouring ranges with the same chain, so a run of MOVEDs for consecutive
/// slots leaves one range, not one per slot.
fn joined(ranges: Vec<SlotRange>) -> Vec<SlotRange> {
    let mut out: Vec<SlotRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match out.last_mut() {
            Some(last) if last.nodes == range.nodes && last.end + 1 == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
    out
}

impl Router {
    /// The router after a `MOVED <slot> <address>` reply: the slot is served by the node
    /// at `address` (added, with that address as its id, when the topology does not know
    /// it), and the epoch advances by one. `self` is unchanged. The same as the
    /// `redis_moved` operation.
    ///
    /// # Errors
    /// `invalid_argument` for a topology that is not `redis_cluster`, a slot outside
    /// `0..16384` or an address without a port; `invalid_topology` when the epoch
    /// cannot advance.
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a", "address": "10.0.0.1:6379"}, {"id": "b", "address": "10.0.0.2:6379"}],
    ///     "strategy": {"type": "redis_cluster"}}"#)?;
    /// let slot = router.route("user:1")?;
    /// let moved = router.moved(slot, "10.0.0.9:6379")?;
    /// assert_eq!(moved.node("user:1")?, "10.0.0.9:6379");
    /// assert_eq!(moved.epoch(), 2);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn moved(&self, slot: u32, address: &str) -> Result<Router> {
        let slot = check_slot(slot)?;
        check_address(address).map_err(Error::argument)?;
        let op = Op::RedisMoved { slot, address: address.to_string() };
        Router::new(op.apply(self.topology())?.topology)
    }

    /// Where the next command for a key of `slot` goes after an `ASK <slot> <address>`
    /// reply: `address`, once, preceded by `ASKING`. Nothing changes: the slot is being
    /// migrated and stays with its owner until a `MOVED` (or a refresh) says otherwise.
    ///
    /// # Errors
    /// `invalid_argument` for a topology that is not `redis_cluster`, a slot outside
    /// `0..16384` or an address without a port.
    pub fn ask<'a>(&self, slot: u32, address: &'a str) -> Result<&'a str> {
        if !matches!(self.strategy(), Strategy::RedisCluster(_)) {
            return Err(Error::argument(format!(
                "ask: applies to redis_cluster topologies, not {}",
                self.strategy().type_name()
            )));
        }
        check_slot(slot)?;
        check_address(address).map_err(Error::argument)?;
        Ok(address)
    }
}
