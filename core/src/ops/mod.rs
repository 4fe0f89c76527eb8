//! Topology operations: changes the core computes, so every language edits a topology
//! the same way. An operation is data, like the topology it applies to:
//!
//! ```json
//! {"op": "trie_split", "leaf": "10", "node": {"id": "n7"}}
//! ```
//!
//! [`apply`] returns a JSON object with the new document under `"topology"` (canonical
//! form, epoch incremented by one) and an operation-specific report beside it (which
//! nodes go, which ranges moved, ...). The input is never modified. Generators (the
//! `id_bits_*` ops) change nothing: they return the topology unchanged, same epoch,
//! and the ids they make in the report. Bindings expose it
//! as one generic call, so a new operation needs no binding code.
//!
//! | `op` | strategy | what it does |
//! |---|---|---|
//! | `plan_rebalance` | `vbucket` | plans a change of nodes (`add`, `remove`, `fail`, `weights`, `replicas`, `max_moves_per_node`) and starts it: promotions at once, the rest in `forward_map`; reports `moves`, `steps`, `quota`, `moved_actives`, `lower_bound` (see [`crate::dictionary`]) |
//! | `complete_moves` | `vbucket` | `map` takes the `forward_map` chains of `vbuckets` (default all); reports `completed`, `remaining`, `removed_nodes` |
//! | `vbucket_double` | `vbucket` | `V` → `2V`, vbucket `v + V` gets the chain of `v`: no key changes node; reports `vbuckets` |
//! | `vbucket_halve` | `vbucket` | the inverse, when every pair `v`, `v + V/2` shares its chain; reports `vbuckets` |
//! | `add_node` | any whose placement is derived from the node list | appends `node` (an entry as in `nodes`) |
//! | `remove_node` | same | removes the node with id `id` |
//! | `disruption` | any | replaces the topology with `to` (a document; its epoch is ignored) and reports `disruption`: how much of the key space changes owner, between which nodes (see [`crate::disruption`]); `add_node` and `remove_node` report it too for `maglev` and `token_ring` |
//! | `range_split` | `key_range`, `hash_range` | splits range `shard` (default: the one holding `at`) at `at`; the upper half goes to `node` (default: same owner); reports `shard`, `boundary`, `moved`, `added` |
//! | `range_split_median` | same | splits range `shard` at the median of the `sample` keys inside it; reports as `range_split` |
//! | `range_merge` | same | joins ranges `shard` and `shard + 1` (owner: `node`, default the owner of `shard`); reports `shard`, `removed_boundary`, `moved`, `added` |
//! | `range_move` | same | gives range `shard` to `node`; reports `shard`, `moved`, `added` |
//! | `range_presplit` | same | replaces the table with `ranges` ranges of equal `sample` counts (hash_range without a sample: equal widths), round-robin over `nodes`; reports `boundaries`, `moved`, `added` (see [`crate::strategy::partitioned::ranges`]) |
//! | `directory_set` | `directory` | lists `key` (a key object) on node `node`, adding or replacing its entry; reports `key`, `from`, `to`, `replaced` |
//! | `directory_remove` | `directory` | drops the entry of `key`, which then routes by the fallback; reports `key`, `from`, `to` |
//! | `vbucket_override` | `vbucket` | sends `key` to vbucket `vbucket`; reports `key`, `from_vbucket`, `to_vbucket`, `from`, `to`, `replaced` |
//! | `vbucket_override_remove` | `vbucket` | drops the override of `key` (back to `hash % V`); reports as `vbucket_override` without `replaced` |
//! | `import_cassandra_ring` | any | replaces the strategy with `cassandra` over `tokens` (node id → token list, as `nodetool ring` shows them): listed nodes keep their entries, others are removed, new ids appended; hashing reset to the default; reports `added`, `removed`, `tokens` |
//! | `import_redis_cluster_slots` | any | replaces the strategy with `redis_cluster` from a `CLUSTER SLOTS` reply (`reply`: its JSON arrays); nodes are the reply's (ids, `host:port`), known ids keep their other fields; hashing reset to the default; reports `added`, `removed`, `ranges` |
//! | `import_redis_cluster_shards` | any | the same from a `CLUSTER SHARDS` reply (objects or RESP2 flat arrays); failed nodes get `state: failed` |
//! | `import_couchbase_config` | any | replaces the topology with a `couchbase` one built from `config` (a bucket config as Couchbase Server serves it, object or JSON text): nodes = `serverList`, epoch = `revEpoch << 32 \| rev`; reports `bucket`, `rev`, `rev_epoch`, `vbuckets`, `replicas`, `newer` |
//! | `multilevel_remap` | `multilevel` | maps partition `partition` to group `group`; reports `partition`, `from_group`, `to_group`, `from`, `to` |
//! | `multilevel_group_set` | `multilevel` | sets group `group`'s `nodes` (creates it; `[]` removes an empty one); reports `group`, `created`, `removed`, `moves` (`[partition, from, to]` triples) |
//! | `trie_split` | `trie` | leaf `leaf` (a prefix) becomes `leaf+"0"` (same node) and `leaf+"1"` for `node` (appended); reports `added`, `split`, `moves` |
//! | `trie_remove` | `trie` | removes node `node`: its leaf merges with a sibling leaf, or the parent subtree collapses; reports `removed_nodes`, `leaf`, `moves` |
//! | `id_bits_compose` | `id_bits` | generator: the id of `shard` (or `cell`) and the layout's other fields (`local`; `timestamp_ms`, `sequence`; ticket: `sequence`); reports `id` (decimal string); the topology comes back unchanged, same epoch |
//! | `id_bits_tickets` | `id_bits`, `ticket` layout | generator: the next `count` ids of server `shard` (or `cell`) from counter `auto_increment` (MySQL's rule); reports `ids`, `auto_increment` (decimal strings); topology unchanged |
//! | `id_bits_reserve_block` | same | generator: reserves `block_size` ids of server `shard` in one step; reports `first`, `last`, `auto_increment` (decimal strings), `step`, `count`; topology unchanged |
//! | `id_groups_add_group` | `id_groups` | appends `group` (as in `groups`, without `writable`), its shards numbered after all others; it becomes the writable group unless `writable` is false; no id moves; reports `added`, `shards`, `writable` |
//! | `id_groups_add_interval` | `id_groups` | gives group `group` the interval `interval` (`[start, end]`), reusing freed ids; no id moves; reports `group`, `interval` |
//! | `id_groups_set_writable` | `id_groups` | makes group `group` the writable one; reports `writable`, `previous` |

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::json::{self, Object};
use crate::strategy::Strategy;
use crate::topology::Topology;

/// Applies an operation to a topology: `{"topology": new document, ...report}`.
///
/// # Errors
/// `invalid_argument` for an unknown operation, one that does not fit the topology's
/// strategy, or bad operation parameters; `invalid_topology` when the result would not
/// be a valid topology; `limit_exceeded` past the documented limits.
pub fn apply(topology: &Topology, operation: &Value) -> Result<Value> {
    let name = match operation.get("op") {
        Some(Value::String(name)) => name.as_str(),
        _ => return Err(Error::argument("operation: expected an object with a string field \"op\"")),
    };
    // One arm per operation; each returns the new topology and its report.
    let (next, report): (Topology, Map<String, Value>) = match name {
        "plan_rebalance" => crate::dictionary::plan_rebalance(topology, operation)?,
        "complete_moves" => crate::dictionary::complete_moves(topology, operation)?,
        "vbucket_double" => crate::dictionary::vbucket_double(topology, operation)?,
        "vbucket_halve" => crate::dictionary::vbucket_halve(topology, operation)?,
        "add_node" => add_node(topology, operation)?,
        "remove_node" => remove_node(topology, operation)?,
        "disruption" => crate::disruption::apply(topology, operation)?,
        // Issue 3 operations: add `"<op>" => <module>::<function>(topology, operation)?,` arms here.
        "id_bits_compose" => crate::strategy::ids::id_bits::compose_op(topology, operation)?,
        "id_bits_tickets" => crate::strategy::ids::id_bits::tickets_op(topology, operation)?,
        "id_bits_reserve_block" => crate::strategy::ids::id_bits::reserve_block_op(topology, operation)?,
        "id_groups_add_group" => crate::strategy::ids::id_groups::add_group(topology, operation)?,
        "id_groups_add_interval" => crate::strategy::ids::id_groups::add_interval(topology, operation)?,
        "id_groups_set_writable" => crate::strategy::ids::id_groups::set_writable_group(topology, operation)?,
        "directory_set" => crate::strategy::partitioned::directory::set(topology, operation)?,
        "directory_remove" => crate::strategy::partitioned::directory::remove(topology, operation)?,
        "vbucket_override" => crate::strategy::partitioned::vbucket::set_override(topology, operation)?,
        "vbucket_override_remove" => crate::strategy::partitioned::vbucket::remove_override(topology, operation)?,
        "import_couchbase_config" => crate::strategy::compat::couchbase::import_config(topology, operation)?,
        "import_cassandra_ring" => crate::strategy::compat::cassandra::import_op(topology, operation)?,
        "import_redis_cluster_slots" => crate::strategy::compat::redis_cluster::import_slots(topology, operation)?,
        "import_redis_cluster_shards" => crate::strategy::compat::redis_cluster::import_shards(topology, operation)?,
        "multilevel_remap" => crate::strategy::partitioned::multilevel::remap(topology, operation)?,
        "multilevel_group_set" => crate::strategy::partitioned::multilevel::group_set(topology, operation)?,
        "trie_split" => crate::strategy::partitioned::trie::split(topology, operation)?,
        "trie_remove" => crate::strategy::partitioned::trie::remove(topology, operation)?,
        "range_split" | "range_split_median" | "range_merge" | "range_move" | "range_presplit" => {
            crate::strategy::partitioned::ranges::apply(name, topology, operation)?
        }
        other => return Err(Error::argument(format!("operation: unknown op {other:?}"))),
    };
    let mut result = report;
    result.insert("topology".into(), next.to_value());
    Ok(Value::Object(result))
}

/// Reads an operation object with its allowed fields (`op` included), rejecting
/// unknown ones with `invalid_argument`.
pub(crate) fn operation_object<'a>(operation: &'a Value, fields: &'static [&'static str]) -> Result<Object<'a>> {
    Object::new("operation", operation, fields).map_err(|err| Error::argument(String::from(err.message())))
}

/// The next epoch: one more than the current, refusing to wrap.
pub(crate) fn next_epoch(topology: &Topology) -> Result<u64> {
    topology.epoch.checked_add(1).ok_or_else(|| json::at("epoch", "already at its maximum; cannot advance"))
}

/// Strategies whose placement is a pure function of the node list: editing the list is
/// the whole change. Table-driven strategies (vbucket maps, ...) need their own ops.
fn derived_from_nodes(topology: &Topology) -> bool {
    match &topology.strategy {
        Strategy::Vbucket(spec) => spec.map.is_none(),
        Strategy::Modulo(_) | Strategy::Jump(_) | Strategy::Ring(_) | Strategy::Rendezvous(_) => true,
        // Directory: the fallback is derived from the list (entries name nodes by id).
        // Multilevel: the list is a pool; a node outside every group holds nothing.
        Strategy::Directory(_) | Strategy::Multilevel(_) => true,
        // Range tables name nodes by id: adding a node changes no range, removing one
        // is refused by the document check while it still owns a range.
        Strategy::KeyRange(_) | Strategy::HashRange(_) => true,
        // Token rings: explicit tokens are keyed by node id; a new node gets generated ones.
        Strategy::TokenRing(_) | Strategy::Maglev(_) => true,
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

fn add_node(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "node"])?;
    if !derived_from_nodes(topology) {
        return Err(Error::argument(format!(
            "add_node: the {} strategy's placement is a table; use its own operations",
            topology.strategy.type_name()
        )));
    }
    let entry = object.required("node").map_err(|err| Error::argument(String::from(err.message())))?;
    let mut document = topology.to_value();
    document["epoch"] = json::u64_value(next_epoch(topology)?);
    if let Some(Value::Array(nodes)) = document.get_mut("nodes") {
        nodes.push(entry.clone());
    }
    let next = Topology::from_value(&document)?;
    let mut report = Map::new();
    report.insert("added".into(), Value::String(next.nodes[next.nodes.len() - 1].id.clone()));
    crate::disruption::report_change(topology, &next, &mut report)?;
    Ok((next, report))
}

fn remove_node(topology: &Topology, operation: &Value) -> Result<(Topology, Map<String, Value>)> {
    let object = operation_object(operation, &["op", "id"])?;
    if !derived_from_nodes(topology) {
        return Err(Error::argument(format!(
            "remove_node: the {} strategy's placement is a table; use its own operations",
            topology.strategy.type_name()
        )));
    }
    let id = match object.required("id").map_err(|err| Error::argument(String::from(err.message())))? {
        Value::String(id) => id.as_str(),
        _ => return Err(Error::argument("operation.id: expected a string")),
    };
    let index = topology
        .nodes
        .iter()
        .position(|node| node.id == id)
        .ok_or_else(|| Error::argument(format!("remove_node: no node {id:?}")))?;
    let mut document = topology.to_value();
    document["epoch"] = json::u64_value(next_epoch(topology)?);
    if let Some(Value::Array(nodes)) = document.get_mut("nodes") {
        let kept: Vec<Value> = nodes.iter().enumerate().filter(|(i, _)| *i != index).map(|(_, n)| n.clone()).collect();
        *nodes = kept;
    }
    crate::strategy::partitioned::token_ring::forget_node(&mut document, id);
    let next = Topology::from_value(&document)?;
    let mut report = Map::new();
    report.insert("removed".into(), Value::String(String::from(id)));
    crate::disruption::report_change(topology, &next, &mut report)?;
    Ok((next, report))
}
