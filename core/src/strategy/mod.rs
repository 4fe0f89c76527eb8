//! The shard functions. Each submodule is one function of the sharding literature and
//! its docs teach it: algorithm, guarantees, cost, source.
//!
//! A strategy is the `strategy` section of a topology document: `{"type": ..., params}`.
//! [`Strategy`] is its parsed form; the router compiles it into a placement once, so
//! that lookups do no parsing and no allocation.
//!
//! | `type` | shard | node | replicas | weights |
//! |---|---|---|---|---|
//! | `modulo` | `hash % n` (or 1-based) | `nodes[shard]` (`nodes[shard - 1]`) | next nodes in list order | no |
//! | `jump` | `jump(hash, n)` | `nodes[shard]` | next nodes in list order | no |
//! | `ring` | owning node's index | ring successor | clockwise distinct nodes | yes (points) |
//! | `rendezvous` | winning node's index | highest score | next highest scores | yes |
//! | `vbucket` | `hash % vbuckets` | head of the vbucket's chain | the chain | stored, unused |

pub mod jump;
pub mod modulo;
pub mod rendezvous;
pub mod ring;
pub mod vbucket;

use alloc::format;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Object};
use crate::limits;
use crate::topology::Node;

use self::rendezvous::Rendezvous;
use self::ring::Ring;
use self::vbucket::VbucketTable;

/// Default virtual-node count per unit of weight for `ring` (libketama's 160).
pub const DEFAULT_POINTS_PER_NODE: u32 = 160;
/// Default vbucket count for `vbucket`.
pub const DEFAULT_VBUCKETS: u32 = 1024;

/// A parsed `strategy` section.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Strategy {
    /// `hash % n`; with `one_based`, shards are `1..=n` and 0 becomes `n`.
    Modulo {
        /// Number shards `1..=n` (old PHP style) instead of `0..n`.
        one_based: bool,
    },
    /// Jump consistent hash over the node list.
    Jump,
    /// Consistent-hash ring with virtual nodes.
    Ring {
        /// Points per unit of node weight.
        points_per_node: u32,
    },
    /// Rendezvous (highest random weight) hashing.
    Rendezvous,
    /// Fixed vbuckets with a dictionary.
    Vbucket {
        /// The number of vbuckets.
        vbuckets: u32,
        /// One chain of node indices per vbucket, if the document lists a `map`.
        map: Option<Vec<Vec<u32>>>,
        /// Replicas per vbucket of the derived round-robin map (when `map` is absent).
        replicas: u32,
    },
}

const TYPES: &str = "\"modulo\", \"jump\", \"ring\", \"rendezvous\", \"vbucket\"";

impl Strategy {
    pub(crate) fn from_value(path: &str, value: &Value, nodes: &[Node]) -> Result<Strategy> {
        let kind = match value.get("type") {
            Some(kind) => json::str(&json::join(path, "type"), kind)?,
            None if value.is_object() => return Err(json::at(&json::join(path, "type"), "missing required field")),
            None => return Err(json::at(path, format_args!("expected an object, found {}", json::type_name(value)))),
        };
        let strategy = match kind {
            "modulo" => {
                let object = Object::new(path, value, &["type", "one_based"])?;
                let one_based = match object.optional("one_based") {
                    Some(value) => json::bool(&object.path_of("one_based"), value)?,
                    None => false,
                };
                Strategy::Modulo { one_based }
            }
            "jump" => {
                Object::new(path, value, &["type"])?;
                Strategy::Jump
            }
            "ring" => {
                let object = Object::new(path, value, &["type", "points_per_node"])?;
                let points_per_node = match object.optional("points_per_node") {
                    None => DEFAULT_POINTS_PER_NODE,
                    Some(value) => {
                        let field = object.path_of("points_per_node");
                        limited(&field, value, limits::MAX_POINTS_PER_NODE)?
                    }
                };
                Strategy::Ring { points_per_node }
            }
            "rendezvous" => {
                Object::new(path, value, &["type"])?;
                Strategy::Rendezvous
            }
            "vbucket" => {
                let object = Object::new(path, value, &["type", "vbuckets", "map", "replicas"])?;
                let vbuckets = match object.optional("vbuckets") {
                    None => DEFAULT_VBUCKETS,
                    Some(value) => limited(&object.path_of("vbuckets"), value, limits::MAX_VBUCKETS)?,
                };
                let replicas_field = object.path_of("replicas");
                let map = match object.optional("map") {
                    None => None,
                    Some(value) => {
                        if object.optional("replicas").is_some() {
                            return Err(json::at(&replicas_field, "give either a map or a replica count, not both"));
                        }
                        Some(parse_map(&object.path_of("map"), value, vbuckets, nodes)?)
                    }
                };
                let replicas = match object.optional("replicas") {
                    None => 0,
                    Some(value) => {
                        let replicas = json::u32_in(&replicas_field, value, 0, u32::MAX)?;
                        if replicas > limits::MAX_REPLICAS {
                            return Err(Error::limit(format!(
                                "{replicas_field}: at most {} replicas per vbucket",
                                limits::MAX_REPLICAS
                            )));
                        }
                        if replicas as usize >= nodes.len() {
                            return Err(json::at(
                                &replicas_field,
                                format_args!("{replicas} replicas need at least {} nodes", replicas + 1),
                            ));
                        }
                        replicas
                    }
                };
                Strategy::Vbucket { vbuckets, map, replicas }
            }
            other => {
                return Err(json::at(
                    &json::join(path, "type"),
                    format_args!("unknown strategy {other:?}; expected one of {TYPES}"),
                ))
            }
        };
        if matches!(strategy, Strategy::Modulo { .. } | Strategy::Jump) {
            if let Some(index) = nodes.iter().position(|node| node.weight != 1.0) {
                return Err(json::at(
                    &format!("nodes[{index}].weight"),
                    format_args!("the {kind} strategy does not support weights (leave weight at 1)"),
                ));
            }
        }
        Ok(strategy)
    }

    pub(crate) fn to_value(&self, nodes: &[Node]) -> Value {
        let mut map = Map::new();
        match self {
            Strategy::Modulo { one_based } => {
                map.insert("type".into(), "modulo".into());
                map.insert("one_based".into(), (*one_based).into());
            }
            Strategy::Jump => {
                map.insert("type".into(), "jump".into());
            }
            Strategy::Ring { points_per_node } => {
                map.insert("type".into(), "ring".into());
                map.insert("points_per_node".into(), (*points_per_node).into());
            }
            Strategy::Rendezvous => {
                map.insert("type".into(), "rendezvous".into());
            }
            Strategy::Vbucket { vbuckets, map: chains, replicas } => {
                map.insert("type".into(), "vbucket".into());
                map.insert("vbuckets".into(), (*vbuckets).into());
                match chains {
                    Some(chains) => {
                        let rows = chains
                            .iter()
                            .map(|chain| {
                                Value::Array(
                                    chain.iter().map(|&i| Value::String(nodes[i as usize].id.clone())).collect(),
                                )
                            })
                            .collect();
                        map.insert("map".into(), Value::Array(rows));
                    }
                    None => {
                        map.insert("replicas".into(), (*replicas).into());
                    }
                }
            }
        }
        Value::Object(map)
    }
}

/// A count parameter: 0 is out of range (`invalid_topology`), above `max` a limit.
fn limited(path: &str, value: &Value, max: u32) -> Result<u32> {
    match value.as_u64() {
        Some(0) | None => json::u32_in(path, value, 1, max),
        Some(n) if n > u64::from(max) => Err(Error::limit(format!("{path}: {n} exceeds the limit of {max}"))),
        Some(n) => Ok(n as u32),
    }
}

fn parse_map(path: &str, value: &Value, vbuckets: u32, nodes: &[Node]) -> Result<Vec<Vec<u32>>> {
    let rows = json::array(path, value)?;
    if rows.len() != vbuckets as usize {
        return Err(json::at(path, format_args!("expected {vbuckets} chains (one per vbucket), found {}", rows.len())));
    }
    let mut chains = Vec::with_capacity(rows.len());
    for (vbucket, row) in rows.iter().enumerate() {
        let row_path = format!("{path}[{vbucket}]");
        let entries = json::array(&row_path, row)?;
        if entries.is_empty() {
            return Err(json::at(&row_path, "a chain needs at least its active node"));
        }
        if entries.len() > limits::MAX_REPLICAS as usize + 1 {
            return Err(Error::limit(format!(
                "{row_path}: at most {} nodes per chain (1 active + {} replicas)",
                limits::MAX_REPLICAS + 1,
                limits::MAX_REPLICAS
            )));
        }
        let mut chain: Vec<u32> = Vec::with_capacity(entries.len());
        for (position, entry) in entries.iter().enumerate() {
            let entry_path = format!("{row_path}[{position}]");
            let id = json::str(&entry_path, entry)?;
            let index = nodes
                .iter()
                .position(|node| node.id == id)
                .ok_or_else(|| json::at(&entry_path, format_args!("names node {id:?}, which is not in nodes")))?
                as u32;
            if chain.contains(&index) {
                return Err(json::at(&entry_path, format_args!("node {id:?} appears twice in one chain")));
            }
            chain.push(index);
        }
        chains.push(chain);
    }
    Ok(chains)
}

/// A strategy compiled against its node list: what lookups run.
#[derive(Clone, Debug)]
pub(crate) enum Placement {
    Modulo { nodes: u32, one_based: bool },
    Jump { nodes: u32 },
    Ring(Ring),
    Rendezvous(Rendezvous),
    Vbucket(VbucketTable),
}

impl Placement {
    pub(crate) fn compile(strategy: &Strategy, hashing: &KeyHashing, nodes: &[Node]) -> Result<Placement> {
        let count = nodes.len() as u32;
        Ok(match strategy {
            Strategy::Modulo { one_based } => Placement::Modulo { nodes: count, one_based: *one_based },
            Strategy::Jump => Placement::Jump { nodes: count },
            Strategy::Ring { points_per_node } => Placement::Ring(Ring::build(hashing, nodes, *points_per_node)?),
            Strategy::Rendezvous => Placement::Rendezvous(Rendezvous::build(hashing, nodes)),
            Strategy::Vbucket { vbuckets, map, replicas } => Placement::Vbucket(match map {
                Some(chains) => VbucketTable::from_chains(chains),
                None => VbucketTable::from_chains(&VbucketTable::round_robin(*vbuckets, count, *replicas)),
            }),
        })
    }

    /// The shard number of a key hash.
    #[inline]
    pub(crate) fn shard(&self, hash: u64) -> u32 {
        match self {
            Placement::Modulo { nodes, one_based: false } => modulo::shard(hash, *nodes),
            Placement::Modulo { nodes, one_based: true } => modulo::shard_one_based(hash, *nodes),
            Placement::Jump { nodes } => jump::jump_unchecked(hash, *nodes),
            Placement::Ring(ring) => ring.node_of(hash),
            Placement::Rendezvous(rendezvous) => rendezvous.node_of(hash),
            Placement::Vbucket(table) => table.vbucket_of(hash),
        }
    }

    /// The node index that owns a shard.
    #[inline]
    pub(crate) fn owner(&self, shard: u32) -> u32 {
        match self {
            Placement::Modulo { one_based: true, .. } => shard - 1,
            Placement::Vbucket(table) => table.chain(shard)[0],
            _ => shard,
        }
    }

    /// How many nodes `replicas` can return for any key (the shortest chain for vbuckets).
    pub(crate) fn max_replicas(&self, node_count: u32) -> u32 {
        match self {
            Placement::Vbucket(table) => (0..table.vbuckets()).map(|v| table.chain(v).len() as u32).min().unwrap_or(0),
            _ => node_count,
        }
    }

    /// The first `count` distinct nodes for a hash, owner first, into `out`.
    pub(crate) fn replicas(&self, hash: u64, count: u32, node_count: u32, out: &mut Vec<u32>) -> Result<()> {
        out.clear();
        match self {
            Placement::Ring(ring) => ring.replicas_of(hash, count, out),
            Placement::Rendezvous(rendezvous) => rendezvous.replicas_of(hash, count, out),
            Placement::Vbucket(table) => {
                let vbucket = table.vbucket_of(hash);
                let chain = table.chain(vbucket);
                if count as usize > chain.len() {
                    return Err(Error::argument(format!(
                        "vbucket {vbucket} has {} node(s) in its chain; {count} requested",
                        chain.len()
                    )));
                }
                out.extend_from_slice(&chain[..count as usize]);
            }
            _ => {
                let owner = self.owner(self.shard(hash));
                out.extend(
                    (0..count).map(|step| ((u64::from(owner) + u64::from(step)) % u64::from(node_count)) as u32),
                );
            }
        }
        Ok(())
    }
}
