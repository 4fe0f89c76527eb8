//! Redis Cluster redirections: what a node answers when a key's slot is not (or not yet,
//! or no longer) its own, and what a client does with it.
//!
//! * `MOVED <slot> <host>:<port>`: the slot lives on that node now. The client updates
//!   its slot table (the `redis_moved` operation, [`Router::moved`]; a new epoch) and
//!   retries there. A client usually also refreshes its whole table from `CLUSTER
//!   SHARDS` soon after, since a MOVED rarely comes alone.
//! * `ASK <slot> <host>:<port>`: the slot is being migrated and this key is already on
//!   the target; send the next command for it there once, preceded by `ASKING`, and
//!   change nothing ([`Router::ask`]).
//!
//! Source: the Redis Cluster specification, "Redirection and resharding" (MOVED, ASK,
//! ASKING). The address is the node's announced endpoint: `host:port`, where the host
//! may be an IPv6 address (`::1:6379` or `[::1]:6379`) or empty (`:6379`, a node that
//! does not know its own address: the client keeps the host it reached).
//!
//! [`Router::moved`]: crate::Router::moved
//! [`Router::ask`]: crate::Router::ask

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{RedisClusterSpec, SlotRange, SLOTS};
use crate::error::{Error, Result};
use crate::node::Node;

/// Which redirection a node answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectKind {
    /// `MOVED`: the slot has a new owner.
    Moved,
    /// `ASK`: this one command goes to the migration's target.
    Ask,
}

impl RedirectKind {
    /// `"MOVED"` or `"ASK"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectKind::Moved => "MOVED",
            RedirectKind::Ask => "ASK",
        }
    }
}

/// A parsed `MOVED` or `ASK` error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// `MOVED` or `ASK`.
    pub kind: RedirectKind,
    /// The slot, in `0..16384`.
    pub slot: u32,
    /// The target's `host:port` as the node wrote it.
    pub address: String,
}

impl Redirect {
    /// Reads a redirection error as clients receive it: `MOVED 3999 127.0.0.1:6381`
    /// (a leading `-` of the raw RESP error and surrounding white space are allowed).
    ///
    /// # Errors
    /// `invalid_argument` for anything else: another error, a slot outside `0..16384`,
    /// an address without a port.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::compat::redis_cluster::redirect::{Redirect, RedirectKind};
    /// let moved = Redirect::parse("MOVED 3999 127.0.0.1:6381")?;
    /// assert_eq!((moved.kind, moved.slot, moved.address.as_str()), (RedirectKind::Moved, 3999, "127.0.0.1:6381"));
    /// assert_eq!(Redirect::parse("ASK 16384 127.0.0.1:6381").unwrap_err().code(), "invalid_argument");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn parse(line: &str) -> Result<Redirect> {
        let bad =
            |why: &str| Error::argument(format!("redirect {line:?}: {why}; expected MOVED|ASK <slot> <host:port>"));
        let text = line.trim();
        let text = text.strip_prefix('-').unwrap_or(text);
        let mut parts = text.split(' ').filter(|part| !part.is_empty());
        let kind = match parts.next() {
            Some("MOVED") => RedirectKind::Moved,
            Some("ASK") => RedirectKind::Ask,
            _ => return Err(bad("not a MOVED or ASK error")),
        };
        let (Some(slot), Some(address), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("expected a slot and an address"));
        };
        let slot = slot_number(slot).ok_or_else(|| bad("the slot is not a number in 0..16384"))?;
        check_address(address).map_err(|why| bad(&why))?;
        Ok(Redirect { kind, slot, address: address.to_string() })
    }
}

fn slot_number(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok().filter(|&slot| slot < SLOTS)
}

/// A slot given to a call (`invalid_argument` unless in `0..16384`).
pub fn check_slot(slot: u32) -> Result<u32> {
    if slot < SLOTS {
        Ok(slot)
    } else {
        Err(Error::argument(format!("slot {slot} is not in 0..16384")))
    }
}

/// `host:port`: the port after the last `:`, a number in `1..=65535`.
pub fn check_address(address: &str) -> core::result::Result<(), String> {
    let Some((host, port)) = address.rsplit_once(':') else {
        return Err(format!("the address {address:?} has no port"));
    };
    let valid_port = !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    if !valid_port || !matches!(port.parse::<u32>(), Ok(1..=65535)) {
        return Err(format!("the address {address:?} has no port in 1..=65535"));
    }
    if host.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err(format!("the address {address:?} has white space in its host"));
    }
    Ok(())
}

/// The length rule for the address of a `MOVED` that a router or the `redis_moved`
/// operation installs (checked after [`check_address`]): a node the redirect adds takes the
/// address as its id, so it must be an id the document format takes, at most
/// [`MAX_NODE_ID_BYTES`](crate::limits::MAX_NODE_ID_BYTES) bytes, or the router's own
/// `to_json()` would not load back. `path` names the argument in the error.
///
/// # Errors
/// `limit_exceeded` for an address longer than a node id may be.
pub(crate) fn check_moved_address_length(path: &str, address: &str) -> crate::error::Result<()> {
    let limit = crate::limits::MAX_NODE_ID_BYTES;
    if address.len() as u64 > u64::from(limit) {
        return Err(crate::error::Error::limit(format!(
            "{path}: {} bytes; a node the redirect adds takes its address as its id, and an id is at most {limit}",
            address.len()
        )));
    }
    Ok(())
}

/// What a `MOVED <slot> <address>` did to a slot table ([`RedisClusterSpec::moved`]).
pub(crate) struct Moved {
    /// The slot table after it.
    pub(crate) spec: RedisClusterSpec,
    /// The slot's master before, an index into the nodes.
    pub(crate) from: u32,
    /// The slot's master after (the node at the address), an index into the nodes.
    pub(crate) to: u32,
    /// The id of the node appended for the address, when no node had it.
    pub(crate) added: Option<String>,
}

impl RedisClusterSpec {
    /// The slot table after `MOVED <slot> <address>`, for both the `redis_moved`
    /// operation and [`Router::moved`](crate::Router::moved): slot `slot` is served by
    /// the node at `address` alone (appended to `nodes`, with the address as its id, when
    /// no node has it); its range is cut around the slot, and neighbouring ranges left
    /// with the same chain are joined. `slot` is in `0..16384` ([`check_slot`]) and
    /// `address` checked ([`check_address`]); the caller sets the epoch and checks the
    /// topology.
    pub(crate) fn moved(&self, nodes: &mut Vec<Node>, slot: u32, address: &str) -> Moved {
        let mut ranges = self.ranges(nodes.len() as u32);
        let (target, added) = node_at(nodes, address);
        let index = ranges.partition_point(|range| range.end < slot);
        let range = ranges[index].clone();
        let from = range.nodes[0];
        let mut pieces = Vec::with_capacity(3);
        if range.start < slot {
            pieces.push(SlotRange { start: range.start, end: slot - 1, nodes: range.nodes.clone() });
        }
        pieces.push(SlotRange { start: slot, end: slot, nodes: vec![target] });
        if slot < range.end {
            pieces.push(SlotRange { start: slot + 1, end: range.end, nodes: range.nodes });
        }
        ranges.splice(index..=index, pieces);
        Moved { spec: RedisClusterSpec { slots: Some(joined(ranges)) }, from, to: target, added }
    }

    /// Whether no two neighbouring ranges have the same chain: what [`moved`](Self::moved)
    /// leaves, and what [`move_slot`](Self::move_slot) needs.
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    pub(crate) fn is_joined(&self) -> bool {
        self.slots.as_ref().is_none_or(|ranges| ranges.windows(2).all(|pair| pair[0].nodes != pair[1].nodes))
    }

    /// [`moved`](Self::moved) for a node already in the table, edited in place: slot `slot`
    /// is served by node `target` alone. The range holding the slot is cut around it and
    /// joined with its neighbours, the only ranges that can share the new chain, so the
    /// ranges are those `moved` gives when they were joined before ([`is_joined`]). The
    /// work is one binary search and at most one insertion or removal; a slot next to a
    /// range of `target` (a reshard moves runs of slots) only moves a boundary. With the
    /// default split, the explicit ranges are written out first, once. `slot < 16384`,
    /// `target` an index into the `node_count` nodes; the caller sets the epoch.
    ///
    /// [`is_joined`]: Self::is_joined
    #[cfg_attr(not(feature = "redis_cluster"), allow(dead_code))]
    pub(crate) fn move_slot(&mut self, node_count: u32, slot: u32, target: u32) {
        if self.slots.is_none() {
            self.slots = Some(self.ranges(node_count));
        }
        let Some(ranges) = self.slots.as_mut() else { return };
        let index = ranges.partition_point(|range| range.end < slot);
        let Some(range) = ranges.get(index) else { return };
        let alone = [target];
        if range.nodes[..] == alone {
            return;
        }
        let (start, end) = (range.start, range.end);
        // Ranges cover the slots in order, so a neighbour is adjacent.
        let before = index.checked_sub(1).filter(|&at| ranges[at].nodes[..] == alone);
        let after = Some(index + 1).filter(|&at| ranges.get(at).is_some_and(|next| next.nodes[..] == alone));
        match (start == slot, end == slot) {
            // The slot's range is the slot: it joins a neighbour of `target`, or becomes one.
            (true, true) => match (before, after) {
                (Some(before), Some(after)) => {
                    ranges[before].end = ranges[after].end;
                    ranges.drain(index..=after);
                }
                (Some(before), None) => {
                    ranges[before].end = slot;
                    ranges.remove(index);
                }
                (None, Some(after)) => {
                    ranges[after].start = slot;
                    ranges.remove(index);
                }
                (None, None) => {
                    let nodes = &mut ranges[index].nodes;
                    nodes.clear();
                    nodes.push(target);
                }
            },
            (true, false) => {
                ranges[index].start = slot + 1;
                match before {
                    Some(before) => ranges[before].end = slot,
                    None => ranges.insert(index, SlotRange { start: slot, end: slot, nodes: vec![target] }),
                }
            }
            (false, true) => {
                ranges[index].end = slot - 1;
                match after {
                    Some(after) => ranges[after].start = slot,
                    None => ranges.insert(index + 1, SlotRange { start: slot, end: slot, nodes: vec![target] }),
                }
            }
            (false, false) => {
                let rest = SlotRange { start: slot + 1, end, nodes: ranges[index].nodes.clone() };
                ranges[index].end = slot - 1;
                let moved = SlotRange { start: slot, end: slot, nodes: vec![target] };
                ranges.splice(index + 1..index + 1, [moved, rest]);
            }
        }
    }
}

/// The index of the node at `address`, as a `MOVED` finds it: the first node with that
/// address, else the first node without an address whose id is `address`.
pub(crate) fn node_index(nodes: &[Node], address: &str) -> Option<u32> {
    let known = nodes.iter().position(|node| node.address.as_deref() == Some(address)).or_else(|| {
        // A topology written without addresses names its nodes by `host:port`.
        nodes.iter().position(|node| node.address.is_none() && node.id == address)
    });
    known.map(|index| index as u32)
}

/// The index of the node at `address`, appending one (id = address) when no node has
/// that address; with the id of the new node.
fn node_at(nodes: &mut Vec<Node>, address: &str) -> (u32, Option<String>) {
    match node_index(nodes, address) {
        Some(index) => (index, None),
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
