//! Imports: a compatibility-profile topology built from what a real system reports,
//! applied to any topology (whose content it replaces, keeping what it knows of nodes
//! the system still lists).
//!
//! | `op` | input | result |
//! |---|---|---|
//! | `import_cassandra_ring` | `tokens`: node id → token list, as `nodetool ring` shows them | `cassandra`; listed nodes keep their entries (address, zone, state) and order, others are removed, new ids appended in id order; reports `added`, `removed`, `tokens` (how many in all) |
//! | `import_redis_cluster_slots` | `reply`: a `CLUSTER SLOTS` reply as JSON arrays | `redis_cluster`; nodes are the reply's in order of first appearance (id, `host:port`), known ids keep their other fields; reports `added`, `removed`, `ranges` |
//! | `import_redis_cluster_shards` | `reply`: a `CLUSTER SHARDS` reply (objects or RESP2 flat arrays) | the same; a node whose `health` is `failed` gets `state: failed`, one that serves again loses it |
//! | `import_couchbase_config` | `config`: a bucket config (object or JSON text) | `couchbase`; nodes = `serverList`, epoch = `revEpoch << 32 \| rev`; reports `bucket`, `rev`, `rev_epoch`, `vbuckets`, `replicas`, `newer` (whether the config is newer than the input: clients apply only newer configs) |
//!
//! Each resets `hashing` to the default (the system fixes its hash). A dump or reply
//! that is malformed, or that does not make a valid topology (slot ranges that do not
//! cover every slot once: a cluster in the middle of a failure), is the caller's
//! argument: `invalid_argument`; limits stay `limit_exceeded`.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::args::argument_or_limit;
use super::{args, Applied, Op, Report};
use crate::error::{Error, ErrorKind, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Put as _};
use crate::limits;
use crate::node::{Node, NodeState};
use crate::strategy::compat::cassandra::{parse_tokens, CassandraSpec};
use crate::strategy::compat::couchbase::{CouchbaseConfig, CouchbaseSpec};
use crate::strategy::compat::redis_cluster::import::{read_shards, read_slots};
use crate::strategy::compat::redis_cluster::{sort_and_cover, RedisClusterSpec, SlotRange};
use crate::strategy::{Strategy, Variant};
use crate::topology::Topology;

pub use crate::strategy::compat::couchbase::CouchbaseConfig as CouchbaseImport;
pub use crate::strategy::compat::redis_cluster::import::RedisClusterImport;

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    match name {
        "import_cassandra_ring" => {
            let args = args(operation, &["op", "tokens"])?;
            let dump = args.required("tokens")?;
            let Value::Object(lists) = dump else {
                return Err(Error::argument(format!(
                    "operation.tokens: expected an object (node id -> tokens), found {}",
                    json::type_name(dump)
                )));
            };
            if lists.is_empty() {
                return Err(Error::argument("operation.tokens: a ring needs at least one node"));
            }
            // The dump's own ids stand in for nodes, so its errors name the operation's fields.
            let probe: Vec<Node> = lists.keys().map(Node::new).collect();
            let parsed = parse_tokens("operation.tokens", dump, &probe).map_err(argument_or_limit)?;
            let tokens = parsed.into_iter().map(|(index, tokens)| (probe[index as usize].id.clone(), tokens)).collect();
            Ok(Op::ImportCassandraRing { tokens })
        }
        "import_redis_cluster_slots" | "import_redis_cluster_shards" => {
            let reply = args(operation, &["op", "reply"])?.required("reply")?;
            Ok(if name == "import_redis_cluster_slots" {
                Op::ImportRedisClusterSlots(read_slots(reply)?)
            } else {
                Op::ImportRedisClusterShards(read_shards(reply)?)
            })
        }
        _ => {
            let raw = args(operation, &["op", "config"])?.required("config")?;
            let parsed;
            let config = match raw {
                Value::String(text) => {
                    parsed = json::parse(text, "operation.config", ErrorKind::InvalidArgument)?;
                    &parsed
                }
                other => other,
            };
            Ok(Op::ImportCouchbaseConfig(CouchbaseConfig::from_value("operation.config", config)?))
        }
    }
}

pub(super) fn apply(op: &Op, topology: &Topology) -> Result<Applied> {
    if !topology.indexes.is_empty() {
        // An import replaces the node list, and an index's tables name nodes by their
        // place in it: refused rather than silently pointed at other nodes.
        return Err(Error::argument(format!(
            "{}: this topology has indexes, placed over the node list an import replaces; import into a topology without them",
            op.name()
        )));
    }
    if topology.tenants().is_some() {
        // Tenants are placed on the nodes an import replaces, and spread by the rule it
        // resets: refused as indexes are.
        return Err(Error::argument(format!(
            "{}: this topology has tenants, placed over the node list and the hashing an import replaces; import into a topology without them",
            op.name()
        )));
    }
    if topology.tables.is_some() {
        // Node groups name the nodes an import replaces: refused as indexes are.
        return Err(Error::argument(format!(
            "{}: this topology has node_groups and table_families over the node list an import replaces; import into a topology without them",
            op.name()
        )));
    }
    match op {
        Op::ImportCassandraRing { tokens } => cassandra(tokens, topology),
        Op::ImportRedisClusterSlots(import) | Op::ImportRedisClusterShards(import) => redis_cluster(import, topology),
        Op::ImportCouchbaseConfig(config) => couchbase(config, topology),
        _ => unreachable!("import::apply takes imports only"),
    }
}

/// A topology of `nodes` and `strategy` with the default hashing, the rest kept.
fn imported(topology: &Topology, nodes: Vec<Node>, strategy: Strategy) -> Topology {
    Topology { nodes, strategy, hashing: KeyHashing::default(), ..topology.clone() }
}

fn ids(nodes: impl Iterator<Item = String>) -> Value {
    Value::Array(nodes.map(Value::String).collect())
}

fn cassandra(tokens: &[(String, Vec<i64>)], topology: &Topology) -> Result<Applied> {
    let listed = |id: &str| tokens.iter().any(|(listed, _)| listed == id);
    let (mut nodes, gone): (Vec<Node>, Vec<Node>) = topology.nodes.iter().cloned().partition(|node| listed(&node.id));
    let mut added = Vec::new();
    for (id, _) in tokens {
        if !topology.nodes.iter().any(|node| node.id == *id) {
            nodes.push(Node::new(id.as_str()));
            added.push(id.clone());
        }
    }
    let mut indexed: Vec<(u32, Vec<i64>)> = tokens
        .iter()
        .map(|(id, list)| (nodes.iter().position(|node| node.id == *id).unwrap_or(0) as u32, list.clone()))
        .collect();
    indexed.sort_unstable_by_key(|(index, _)| *index);
    let total: usize = tokens.iter().map(|(_, list)| list.len()).sum();
    let mut report = Report::new();
    report.put("added", ids(added.into_iter()));
    report.put("removed", ids(gone.into_iter().map(|node| node.id)));
    report.put("tokens", Value::from(total as u64));
    let strategy = CassandraSpec { tokens: indexed }.into_strategy()?;
    Ok(Applied { topology: imported(topology, nodes, strategy), report })
}

fn redis_cluster(import: &RedisClusterImport, topology: &Topology) -> Result<Applied> {
    if import.nodes.is_empty() {
        return Err(Error::argument("operation.reply: the reply names no node"));
    }
    // Ids found through maps, and each range's chain checked against the per-range limit
    // before it is copied: the work is linear in the reply and the topology.
    let known: BTreeMap<&str, &Node> = topology.nodes.iter().map(|node| (node.id.as_str(), node)).collect();
    let listed: BTreeSet<&str> = import.nodes.iter().map(|found| found.id.as_str()).collect();
    let mut nodes = Vec::with_capacity(import.nodes.len());
    let mut added = Vec::new();
    for found in &import.nodes {
        let mut node = match known.get(found.id.as_str()) {
            Some(known) => (*known).clone(),
            None => {
                added.push(found.id.clone());
                Node::new(found.id.as_str())
            }
        };
        node.address = Some(found.address.clone());
        if found.failed {
            node.state = NodeState::Failed;
        } else if node.state == NodeState::Failed {
            // The reply says it serves again.
            node.state = NodeState::Active;
        }
        nodes.push(node);
    }
    let removed = topology.nodes.iter().filter(|node| !listed.contains(node.id.as_str()));
    let most = limits::MAX_REPLICAS as usize + 1;
    let mut ranges = Vec::with_capacity(import.ranges.len());
    for (position, &(start, end, chain)) in import.ranges.iter().enumerate() {
        let chain = import.chains.get(chain as usize).map_or(&[][..], Vec::as_slice);
        if chain.len() > most {
            return Err(Error::limit(format!(
                "strategy.slots[{position}].nodes: {} nodes; at most {most} per range (1 master + {} replicas)",
                chain.len(),
                limits::MAX_REPLICAS
            )));
        }
        ranges.push((SlotRange { start, end, nodes: chain.to_vec() }, position));
    }
    let invalid = |err: Error| match err.kind() {
        ErrorKind::LimitExceeded => err,
        _ => Error::argument(format!("the reply does not make a valid redis_cluster topology: {}", err.message())),
    };
    let slots = sort_and_cover("strategy.slots", ranges).map_err(invalid)?;
    let mut report = Report::new();
    report.put("added", ids(added.into_iter()));
    report.put("removed", ids(removed.map(|node| node.id.clone())));
    report.put("ranges", Value::from(import.ranges.len() as u64));
    let next = imported(topology, nodes, RedisClusterSpec { slots: Some(slots) }.into_strategy()?);
    next.check().map_err(invalid)?;
    Ok(Applied { topology: next, report })
}

fn couchbase(config: &CouchbaseConfig, topology: &Topology) -> Result<Applied> {
    let nodes: Vec<Node> = config
        .servers
        .iter()
        .map(|server| Node { address: Some(server.clone()), ..Node::new(server.as_str()) })
        .collect();
    let spec = CouchbaseSpec { map: config.map.clone(), forward: config.forward.clone() };
    let next = Topology {
        epoch: config.epoch(),
        nodes,
        strategy: spec.into_strategy()?,
        hashing: KeyHashing::default(),
        placement: None,
        hot_keys: None,
        indexes: Vec::new(),
        tables: None,
        checksummed: false,
    };
    next.check().map_err(|err| match err.kind() {
        ErrorKind::InvalidTopology => {
            Error::argument(format!("operation.config: not a usable vbucket map: {}", err.message()))
        }
        _ => err,
    })?;
    let width = config.map.first().map_or(0, Vec::len);
    let mut report = Report::new();
    report.put("bucket", config.bucket.clone().map_or(Value::Null, Value::String));
    report.put("rev", config.rev.into());
    report.put("rev_epoch", config.rev_epoch.into());
    report.put("vbuckets", (config.map.len() as u64).into());
    report.put("replicas", (width.saturating_sub(1) as u64).into());
    report.put("newer", Value::Bool(config.epoch() > topology.epoch));
    Ok(Applied { topology: next, report })
}
