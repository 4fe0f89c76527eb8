//! Topology changes as typed values. An operation is data, like the topology it applies
//! to, so every language edits a topology the same way:
//!
//! ```json
//! {"op": "trie_split", "leaf": "10", "node": {"id": "n7"}}
//! ```
//!
//! [`Op::from_value`] reads that object once, at the edge, against the topology it will
//! apply to (node ids and positions take that topology's form); [`Op::apply`] changes
//! the typed [`Topology`] directly and returns the next one with a report of what moved
//! ([`Applied`]). The input is never modified. The next topology has the epoch of the
//! input plus one ([`next_epoch`]), except for the generators (`id_bits_*`: the ids they
//! make are the report; the topology comes back unchanged) and the Couchbase import
//! (the config's own revision). [`apply`] is the two in one, JSON in and out: what the
//! bindings expose, so a new operation needs no binding code.
//!
//! **Where an operation lives.** Node-list changes (`add_node`, `remove_node`) are in
//! `nodes.rs` and work for every strategy whose placement follows the node list
//! (`Spec::follows_node_list`); imports from real systems are in `import.rs`; the rest
//! belong to one strategy family each (`dictionary.rs`, `ranges.rs`, `tables.rs`,
//! `trie.rs`, `ids.rs`), and each strategy takes the ones that make sense for it through
//! its `Edit` implementation, refusing the others with `invalid_argument`.
//!
//! **Reports** are JSON objects (the bindings return them as they are): beside the
//! `topology` field that [`apply`] adds, each operation reports what it did, below.
//!
//! | `op` | strategy | what it does |
//! |---|---|---|
//! | `plan_rebalance` | `vbucket` | plans a change of nodes (`add`, `remove`, `fail`, `weights`, `replicas`, `max_moves_per_node`) and starts it: promotions at once, the rest in `forward_map`; reports `moves`, `steps`, `quota`, `moved_actives`, `lower_bound` (see [`crate::dictionary`]). With `vbucket_weights` (one `u64` per vbucket: measured size or load) the actives are balanced by weight ([`crate::planner::plan_weighted`]) and `target` (load per node) and `load` (`before`, `after` per node) replace `quota` |
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
//! | `node_group_set` | any | sets group `group`'s `nodes` (node ids, in the group's order), creating it; `[]` removes it, refused while a family or tenant names it; reports `group`, `created`, `removed`, `from`, `to` (the node lists, null when absent) (see `ops/sections.rs`) |
//! | `table_family_set` | any | sets family `family` to `entry` (as in `table_families`), creating or replacing it; reports `family`, `created`, `tables_added`, `tables_removed` |
//! | `table_family_remove` | any | removes family `family`: its tables route by the document's own strategy; reports `family`, `tables` |
//! | `tenant_set` | any | sets tenant `tenant`'s `entry` (as in `tenants.entries`), creating or replacing it; a placed entry needs a strategy whose shards are its nodes; reports `tenant`, `created`, `from` (the entry before, or null), `to` |
//! | `tenant_remove` | any | removes tenant `tenant`'s entry: its keys route as without one; reports `tenant`, `from` |
//! | `trie_split` | `trie` | leaf `leaf` (a prefix) becomes `leaf+"0"` (same node) and `leaf+"1"` for `node` (appended); reports `added`, `split`, `moves` |
//! | `redis_moved` | `redis_cluster` | slot `slot` is served by the node at `address` (`host:port`, appended when unknown): a `MOVED` reply; reports `slot`, `from`, `to`, `added` (see `ops/redis.rs`) |
//! | `trie_remove` | `trie` | removes node `node`: its leaf merges with a sibling leaf, or the parent subtree collapses; reports `removed_nodes`, `leaf`, `moves` |
//! | `id_bits_compose` | `id_bits` | generator: the id of `shard` (or `cell`) and the layout's other fields (`local`; `timestamp_ms`, `sequence`; ticket: `sequence`); reports `id` (decimal string); the topology comes back unchanged, same epoch |
//! | `id_bits_tickets` | `id_bits`, `ticket` layout | generator: the next `count` ids of server `shard` (or `cell`) from counter `auto_increment` (MySQL's rule); reports `ids`, `auto_increment` (decimal strings); topology unchanged |
//! | `id_bits_reserve_block` | same | generator: reserves `block_size` ids of server `shard` in one step; reports `first`, `last`, `auto_increment` (decimal strings), `step`, `count`; topology unchanged |
//! | `id_bits_ticket_server` | `id_bits`, `ticket` layout | generator: the ticket server to ask next, by rotation from the caller's counter `turn` and failover past the servers listed in `down` (shards, or cells); reports `shard` (or `cell`), `next_turn`, `skipped`; every server down is `unavailable` (see [`crate::strategy::ids::tickets::next_ticket_server`]); topology unchanged |
//! | `id_bits_decode` | `id_bits` | generator: decodes `id` (ULID text for the `ulid` layout, else an integer); reports `shard` and `fields` (`[name, decimal string]` pairs, most significant first, as `decode_id`); topology unchanged |
//! | `id_groups_add_group` | `id_groups` | appends `group` (as in `groups`, without `writable`), its shards numbered after all others; it becomes the writable group unless `writable` is false; no id moves; reports `added`, `shards`, `writable` |
//! | `id_groups_add_interval` | `id_groups` | gives group `group` the interval `interval` (`[start, end]`), reusing freed ids; no id moves; reports `group`, `interval` |
//! | `id_groups_set_writable` | `id_groups` | makes group `group` the writable one; reports `writable`, `previous` |
//! | `hot_key_add` | any | salts `key` (a text key object) over `fanout` (2 to 1,024) salted keys, or changes its fanout; reports `key`, `from_fanout` (1 when it was not hot), `to_fanout` |
//! | `suggest` | any | generator: operations to review, from measured load (`shards`: `shard`, `bytes`, `requests`, `keys`, `sample`; `keys`: `key`, `requests`; thresholds `max_bytes`, `max_requests`, `max_imbalance` with `weight_by`): `hot_key_add` for a key over `max_requests`, `range_split` (hash ranges, at the middle) or `range_split_median` (key ranges, over the sample) for a range over either, and for a `vbucket` dictionary with a node over its target by more than `max_imbalance` percent, `plan_rebalance` with `vbucket_weights`; and the cooling side (`cool_percent`): `hot_key_remove`, `range_merge`, `id_groups_set_writable`; a `min_vbuckets_per_node` warning with `vbucket_double`; `capacity`/`node_capacity` headroom warnings (`capacity_warn`, `capacity_alert`) and capacity-cascade warnings; reports `suggestions` (each an `operation`, or null, and its `reason`) and `nodes` (the load per node); topology unchanged (see `ops/suggest.rs`) |
//! | `hot_key_remove` | any | stops salting `key`; reports `key`, `from_fanout`, `to_fanout` (1). While clients may hold either epoch, reads gather both epochs' salted keys (`Migration::read_keys`) |

mod args;
mod dictionary;
mod hot_keys;
mod ids;
mod import;
mod nodes;
mod ranges;
mod redis;
mod sections;
mod suggest;
mod tables;
mod trie;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::key::OwnedKey;
use crate::node::Node;
use crate::strategy::partitioned::trie::Prefix;
use crate::strategy::Strategy;
use crate::topology::Topology;

pub use self::dictionary::Rebalance;
pub use self::ids::{IdFields, IdInput, TicketServer};
pub use self::import::{CouchbaseImport, RedisClusterImport};
pub use self::ranges::{NodeChoice, RangePoint};
pub use self::suggest::{
    Capacity, Measure, Measurements, ShardLoad, DEFAULT_CAPACITY_ALERT, DEFAULT_CAPACITY_WARN, DEFAULT_COOL_PERCENT,
    DEFAULT_MIN_VBUCKETS_PER_NODE,
};
use args::Args;

/// What an operation reports beside the new topology (see the module docs per `op`).
pub type Report = Map<String, Value>;

/// The result of an operation: the next topology and the report.
#[derive(Clone, Debug)]
pub struct Applied {
    /// The topology after the change (the input's, unchanged, for generators).
    pub topology: Topology,
    /// What moved, what was added or removed, or what was generated.
    pub report: Report,
}

/// A topology change (one variant per `op` of the table in the module docs).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Op {
    /// `add_node`: appends `node`.
    AddNode {
        /// The node entry to append.
        node: Node,
    },
    /// `remove_node`: removes the node with this id.
    RemoveNode {
        /// The node id.
        id: String,
    },
    /// `disruption`: replaces the topology with `to` and measures what moves.
    Disruption {
        /// The topology to move to (its epoch is ignored).
        to: Box<Topology>,
    },
    /// `plan_rebalance` (vbucket dictionaries).
    PlanRebalance(Rebalance),
    /// `complete_moves`: the listed vbuckets (all when `None`) take their forward chains.
    CompleteMoves {
        /// The vbuckets whose moves are complete.
        vbuckets: Option<Vec<u32>>,
    },
    /// `vbucket_double`: `V` becomes `2V`; no key changes node.
    VbucketDouble,
    /// `vbucket_halve`: the inverse of `vbucket_double`.
    VbucketHalve,
    /// `vbucket_override`: sends `key` to `vbucket`.
    VbucketOverride {
        /// The key.
        key: OwnedKey,
        /// Its vbucket from now on.
        vbucket: u32,
    },
    /// `vbucket_override_remove`: `key` goes back to `hash % V`.
    VbucketOverrideRemove {
        /// The key.
        key: OwnedKey,
    },
    /// `range_split`: range `shard` (default: the one holding `at`) splits at `at`.
    RangeSplit {
        /// The new boundary.
        at: RangePoint,
        /// The range to split.
        shard: Option<u32>,
        /// The owner of the upper part (default: the range's owner).
        node: Option<NodeChoice>,
    },
    /// `range_split_median`: range `shard` splits at the median of the sample inside it.
    RangeSplitMedian {
        /// The range to split.
        shard: u32,
        /// Keys whose positions place the split.
        sample: Vec<OwnedKey>,
        /// The owner of the upper part (default: the range's owner).
        node: Option<NodeChoice>,
    },
    /// `range_merge`: ranges `shard` and `shard + 1` become one.
    RangeMerge {
        /// The lower of the two ranges.
        shard: u32,
        /// The owner of the merged range (default: the owner of `shard`).
        node: Option<NodeChoice>,
    },
    /// `range_move`: range `shard` changes owner.
    RangeMove {
        /// The range.
        shard: u32,
        /// Its new owner.
        node: NodeChoice,
    },
    /// `range_presplit`: the table is replaced by `ranges` ranges of equal sample counts.
    RangePresplit {
        /// How many ranges.
        ranges: u32,
        /// Keys whose positions place the boundaries (required for `key_range`).
        sample: Option<Vec<OwnedKey>>,
        /// The owners, round-robin (default: every node, in list order).
        nodes: Option<Vec<NodeChoice>>,
    },
    /// `hot_key_add`: salts `key` over `fanout` salted keys (or changes its fanout).
    HotKeyAdd {
        /// The hot key (text).
        key: String,
        /// Its salted keys, 2 or more.
        fanout: u32,
    },
    /// `suggest`: operations suggested from measured load (a generator).
    Suggest(Measurements),
    /// `hot_key_remove`: stops salting `key`.
    HotKeyRemove {
        /// The hot key (text).
        key: String,
    },
    /// `directory_set`: lists `key` on node `node`.
    DirectorySet {
        /// The key.
        key: OwnedKey,
        /// The node id.
        node: String,
    },
    /// `directory_remove`: drops the entry of `key`.
    DirectoryRemove {
        /// The key.
        key: OwnedKey,
    },
    /// `multilevel_remap`: maps `partition` to group `group`.
    MultilevelRemap {
        /// The partition.
        partition: u32,
        /// The group id.
        group: String,
    },
    /// `multilevel_group_set`: sets the nodes of group `group` (creates or removes it).
    MultilevelGroupSet {
        /// The group id.
        group: String,
        /// Its node ids; empty removes the group.
        nodes: Vec<String>,
    },
    /// `node_group_set`: sets group `group`'s nodes (creates it; `[]` removes it).
    NodeGroupSet {
        /// The group's name.
        group: String,
        /// Its node ids, in the group's order; empty removes the group.
        nodes: Vec<String>,
    },
    /// `table_family_set`: sets family `family` to `entry` (creates or replaces it).
    TableFamilySet {
        /// The family's name.
        family: String,
        /// The entry, as the document writes it (`tables`, `group`, `strategy`,
        /// `hashing`, or `reference`).
        entry: Value,
    },
    /// `table_family_remove`: removes family `family`.
    TableFamilyRemove {
        /// The family's name.
        family: String,
    },
    /// `tenant_set`: sets tenant `tenant`'s entry (creates or replaces it).
    TenantSet {
        /// The tenant, as the partition key's tenant part reads it.
        tenant: String,
        /// The entry, as the document writes it (`group`, `zone`, `shards`).
        entry: Value,
    },
    /// `tenant_remove`: removes tenant `tenant`'s entry.
    TenantRemove {
        /// The tenant.
        tenant: String,
    },
    /// `trie_split`: leaf `leaf` splits; the new half goes to `node`, appended.
    TrieSplit {
        /// The leaf's prefix.
        leaf: Prefix,
        /// The new node.
        node: Node,
    },
    /// `trie_remove`: removes node `node` and merges its leaf.
    TrieRemove {
        /// The node id.
        node: String,
    },
    /// `id_bits_compose` (generator): the id of the given fields.
    IdBitsCompose(IdFields),
    /// `id_bits_tickets` (generator): the next `count` ids of one ticket server.
    IdBitsTickets {
        /// The server and its counter.
        server: TicketServer,
        /// How many ids.
        count: u32,
    },
    /// `id_bits_reserve_block` (generator): `block_size` ids of one ticket server at once.
    IdBitsReserveBlock {
        /// The server and its counter.
        server: TicketServer,
        /// How many ids.
        block_size: u32,
    },
    /// `id_bits_ticket_server` (generator): the ticket server to ask next.
    IdBitsTicketServer {
        /// The caller's rotation counter.
        turn: u64,
        /// The servers (shards, or cells) the caller reports down.
        down: Vec<u32>,
    },
    /// `id_bits_decode` (generator): the shard and fields of an id.
    IdBitsDecode(IdInput),
    /// `id_groups_add_group`: appends a group.
    IdGroupsAddGroup {
        /// The group (shards numbered after all existing ones).
        group: crate::strategy::ids::id_groups::IdGroup,
        /// Whether it becomes the writable group.
        writable: bool,
    },
    /// `id_groups_add_interval`: gives group `group` one more interval.
    IdGroupsAddInterval {
        /// The group id.
        group: String,
        /// `[start, end)`.
        interval: (u64, u64),
    },
    /// `id_groups_set_writable`: makes group `group` the writable one.
    IdGroupsSetWritable {
        /// The group id.
        group: String,
    },
    /// `redis_moved`: a `MOVED <slot> <address>` reply; the slot's master changes.
    RedisMoved {
        /// The slot, in `0..16384`.
        slot: u32,
        /// The new master's `host:port`.
        address: String,
    },
    /// `import_cassandra_ring`: a `cassandra` topology from a token dump.
    ImportCassandraRing {
        /// Node id → its tokens, in id order.
        tokens: Vec<(String, Vec<i64>)>,
    },
    /// `import_redis_cluster_slots`: a `redis_cluster` topology from `CLUSTER SLOTS`.
    ImportRedisClusterSlots(RedisClusterImport),
    /// `import_redis_cluster_shards`: the same from `CLUSTER SHARDS`.
    ImportRedisClusterShards(RedisClusterImport),
    /// `import_couchbase_config`: a `couchbase` topology from a bucket config.
    ImportCouchbaseConfig(CouchbaseImport),
}

impl Op {
    /// Reads an operation object against the topology it will apply to.
    ///
    /// # Errors
    /// `invalid_argument` for an unknown `op`, an unknown field or a malformed one;
    /// `limit_exceeded` past the documented limits; a node entry keeps the codes of a
    /// document's (`invalid_topology`).
    pub fn from_value(operation: &Value, topology: &Topology) -> Result<Op> {
        let name = match operation.get("op") {
            Some(Value::String(name)) => name.as_str(),
            _ => return Err(Error::argument("operation: expected an object with a string field \"op\"")),
        };
        match name {
            "add_node" | "remove_node" | "disruption" => nodes::parse(name, operation),
            "plan_rebalance"
            | "complete_moves"
            | "vbucket_double"
            | "vbucket_halve"
            | "vbucket_override"
            | "vbucket_override_remove" => dictionary::parse(name, operation),
            "range_split" | "range_split_median" | "range_merge" | "range_move" | "range_presplit" => {
                ranges::parse(name, operation, topology)
            }
            "directory_set" | "directory_remove" | "multilevel_remap" | "multilevel_group_set" => {
                tables::parse(name, operation)
            }
            "node_group_set" | "table_family_set" | "table_family_remove" | "tenant_set" | "tenant_remove" => {
                sections::parse(name, operation)
            }
            "trie_split" | "trie_remove" => trie::parse(name, operation),
            "hot_key_add" | "hot_key_remove" => hot_keys::parse(name, operation),
            "suggest" => suggest::parse(operation),
            "redis_moved" => redis::parse(operation),
            "id_bits_compose"
            | "id_bits_tickets"
            | "id_bits_reserve_block"
            | "id_bits_ticket_server"
            | "id_bits_decode"
            | "id_groups_add_group"
            | "id_groups_add_interval"
            | "id_groups_set_writable" => ids::parse(name, operation, topology),
            "import_cassandra_ring"
            | "import_redis_cluster_slots"
            | "import_redis_cluster_shards"
            | "import_couchbase_config" => import::parse(name, operation),
            other => Err(Error::argument(format!("operation: unknown op {other:?}"))),
        }
    }

    /// The `op` name.
    pub fn name(&self) -> &'static str {
        match self {
            Op::AddNode { .. } => "add_node",
            Op::RemoveNode { .. } => "remove_node",
            Op::Disruption { .. } => "disruption",
            Op::PlanRebalance(_) => "plan_rebalance",
            Op::CompleteMoves { .. } => "complete_moves",
            Op::VbucketDouble => "vbucket_double",
            Op::VbucketHalve => "vbucket_halve",
            Op::VbucketOverride { .. } => "vbucket_override",
            Op::VbucketOverrideRemove { .. } => "vbucket_override_remove",
            Op::RangeSplit { .. } => "range_split",
            Op::RangeSplitMedian { .. } => "range_split_median",
            Op::RangeMerge { .. } => "range_merge",
            Op::RangeMove { .. } => "range_move",
            Op::RangePresplit { .. } => "range_presplit",
            Op::HotKeyAdd { .. } => "hot_key_add",
            Op::HotKeyRemove { .. } => "hot_key_remove",
            Op::Suggest(_) => "suggest",
            Op::DirectorySet { .. } => "directory_set",
            Op::DirectoryRemove { .. } => "directory_remove",
            Op::MultilevelRemap { .. } => "multilevel_remap",
            Op::MultilevelGroupSet { .. } => "multilevel_group_set",
            Op::NodeGroupSet { .. } => "node_group_set",
            Op::TableFamilySet { .. } => "table_family_set",
            Op::TableFamilyRemove { .. } => "table_family_remove",
            Op::TenantSet { .. } => "tenant_set",
            Op::TenantRemove { .. } => "tenant_remove",
            Op::TrieSplit { .. } => "trie_split",
            Op::TrieRemove { .. } => "trie_remove",
            Op::IdBitsCompose(_) => "id_bits_compose",
            Op::IdBitsTickets { .. } => "id_bits_tickets",
            Op::IdBitsReserveBlock { .. } => "id_bits_reserve_block",
            Op::IdBitsTicketServer { .. } => "id_bits_ticket_server",
            Op::IdBitsDecode(_) => "id_bits_decode",
            Op::IdGroupsAddGroup { .. } => "id_groups_add_group",
            Op::IdGroupsAddInterval { .. } => "id_groups_add_interval",
            Op::IdGroupsSetWritable { .. } => "id_groups_set_writable",
            Op::RedisMoved { .. } => "redis_moved",
            Op::ImportCassandraRing { .. } => "import_cassandra_ring",
            Op::ImportRedisClusterSlots(_) => "import_redis_cluster_slots",
            Op::ImportRedisClusterShards(_) => "import_redis_cluster_shards",
            Op::ImportCouchbaseConfig(_) => "import_couchbase_config",
        }
    }

    /// Applies the operation: the next topology, checked as a parsed document would be,
    /// and the report.
    ///
    /// # Errors
    /// `invalid_argument` for an operation that does not fit the topology's strategy or
    /// parameters that do not fit the topology; `invalid_topology` when the result would
    /// not be a valid topology (a new node with a weight a strategy cannot use, a
    /// duplicate id, ...) or the epoch cannot advance; `no_nodes` when nothing would be
    /// left; `limit_exceeded` past the documented limits.
    ///
    /// # Example
    /// ```
    /// use shardroute::{ops::Op, Node, Topology};
    /// let topology = Topology::from_json(r#"{"format": "shardroute/1", "epoch": 4,
    ///     "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}}"#)?;
    /// let applied = Op::AddNode { node: Node::new("c") }.apply(&topology)?;
    /// assert_eq!(applied.topology.epoch, 5);
    /// assert_eq!(applied.topology.nodes.len(), 3);
    /// assert_eq!(applied.report["added"], "c");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn apply(&self, topology: &Topology) -> Result<Applied> {
        let mut applied = match self {
            Op::AddNode { .. } | Op::RemoveNode { .. } | Op::Disruption { .. } => nodes::apply(self, topology)?,
            Op::HotKeyAdd { .. } | Op::HotKeyRemove { .. } => hot_keys::apply(self, topology)?,
            Op::Suggest(measurements) => suggest::apply(measurements, topology)?,
            Op::NodeGroupSet { .. }
            | Op::TableFamilySet { .. }
            | Op::TableFamilyRemove { .. }
            | Op::TenantSet { .. }
            | Op::TenantRemove { .. } => sections::apply(self, topology)?,
            Op::ImportCassandraRing { .. }
            | Op::ImportRedisClusterSlots(_)
            | Op::ImportRedisClusterShards(_)
            | Op::ImportCouchbaseConfig(_) => import::apply(self, topology)?,
            _ => edit(self, topology)?,
        };
        if self.is_generator() {
            return Ok(applied);
        }
        if !matches!(self, Op::ImportCouchbaseConfig(_)) {
            applied.topology.epoch = next_epoch(topology)?;
        }
        applied.topology.check()?;
        Ok(applied)
    }

    /// Whether the operation only computes (ids) and changes nothing.
    fn is_generator(&self) -> bool {
        matches!(
            self,
            Op::IdBitsCompose(_)
                | Op::IdBitsTickets { .. }
                | Op::IdBitsReserveBlock { .. }
                | Op::IdBitsTicketServer { .. }
                | Op::IdBitsDecode(_)
                | Op::Suggest(_)
        )
    }
}

/// Applies an operation given as JSON: `{"topology": next document, ...report}`. The one
/// call the bindings expose.
///
/// # Errors
/// As [`Op::from_value`] and [`Op::apply`].
///
/// # Example
/// ```
/// use serde_json::json;
/// use shardroute::{ops, Topology};
/// let topology = Topology::from_json(r#"{"format": "shardroute/1", "epoch": 1,
///     "nodes": [{"id": "a"}], "strategy": {"type": "ring"}}"#)?;
/// let result = ops::apply(&topology, &json!({"op": "add_node", "node": {"id": "b"}}))?;
/// assert_eq!(result["topology"]["epoch"], 2);
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn apply(topology: &Topology, operation: &Value) -> Result<Value> {
    let applied = Op::from_value(operation, topology)?.apply(topology)?;
    let mut result = applied.report;
    result.put("topology", applied.topology.to_value());
    Ok(Value::Object(result))
}

/// Reads an operation's JSON text, as the bindings receive it (a string, or an object
/// they serialized): one reader, so that every binding refuses the same text in the same
/// words, and as strictly as a document: a field named twice in one object is refused,
/// and nesting past [`MAX_JSON_NESTING`](crate::limits::MAX_JSON_NESTING) levels. Pass
/// the value to [`apply`].
///
/// # Errors
/// `invalid_argument` for text that is not JSON (`the operation is not valid JSON: ...`)
/// or names a field twice (the field's path); `limit_exceeded` for nesting too deep.
///
/// # Example
/// ```
/// let operation = shardroute::ops::operation_from_json(r#"{"op": "remove_node", "id": "a"}"#)?;
/// assert_eq!(operation["op"], "remove_node");
/// assert_eq!(shardroute::ops::operation_from_json("{").unwrap_err().code(), "invalid_argument");
/// let err = shardroute::ops::operation_from_json(r#"{"op": "add_node", "op": "remove_node"}"#).unwrap_err();
/// assert_eq!(err.code(), "invalid_argument");
/// assert!(err.message().starts_with("the top level: the field \"op\" appears twice"));
/// # Ok::<(), shardroute::Error>(())
/// ```
pub fn operation_from_json(text: &str) -> Result<Value> {
    json::parse(text, "the operation", crate::error::ErrorKind::InvalidArgument)
}

/// The next epoch: one more than the current, refusing to wrap.
pub fn next_epoch(topology: &Topology) -> Result<u64> {
    topology.next_epoch()
}

/// A strategy's side of the operations: the ones it takes, applied to its part of the
/// topology (the caller sets the epoch and checks the result). The default refuses
/// every operation; each strategy overrides it with the operations that make sense for
/// it, in the family file of `ops` that implements them.
pub(crate) trait Edit {
    /// Applies `op` to `topology`, whose strategy is `self`.
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        Err(refused(op, topology))
    }
}

/// The error of an operation the topology's strategy does not take.
pub(crate) fn refused(op: &Op, topology: &Topology) -> Error {
    let expected = match op {
        Op::PlanRebalance(_)
        | Op::CompleteMoves { .. }
        | Op::VbucketDouble
        | Op::VbucketHalve
        | Op::VbucketOverride { .. }
        | Op::VbucketOverrideRemove { .. } => "vbucket topologies",
        Op::RangeSplit { .. }
        | Op::RangeSplitMedian { .. }
        | Op::RangeMerge { .. }
        | Op::RangeMove { .. }
        | Op::RangePresplit { .. } => "key_range and hash_range topologies",
        Op::DirectorySet { .. } | Op::DirectoryRemove { .. } => "directory topologies",
        Op::MultilevelRemap { .. } | Op::MultilevelGroupSet { .. } => "multilevel topologies",
        Op::TrieSplit { .. } | Op::TrieRemove { .. } => "trie topologies",
        Op::RedisMoved { .. } => "redis_cluster topologies",
        Op::IdBitsCompose(_)
        | Op::IdBitsTickets { .. }
        | Op::IdBitsReserveBlock { .. }
        | Op::IdBitsTicketServer { .. }
        | Op::IdBitsDecode(_) => "id_bits topologies",
        Op::IdGroupsAddGroup { .. } | Op::IdGroupsAddInterval { .. } | Op::IdGroupsSetWritable { .. } => {
            "id_groups topologies"
        }
        _ => "other topologies",
    };
    Error::argument(format!("{}: applies to {expected}, not {}", op.name(), topology.strategy.type_name()))
}

macro_rules! edit_dispatch {
    ($($(#[doc = $doc:expr])* #[feature = $feature:literal] $variant:ident => $spec:path,)*) => {
        /// Hands `op` to the topology's strategy (of those built in).
        fn edit(op: &Op, topology: &Topology) -> Result<Applied> {
            match topology.strategy {
                $(#[cfg(feature = $feature)] Strategy::$variant(ref spec) => Edit::edit(spec, op, topology),)*
            }
        }
    };
}
crate::strategy::catalogue!(edit_dispatch);

// The strategies that take no operation of their own (node-list changes and imports
// apply to them through `nodes` and `import`).
impl Edit for crate::strategy::hashed::modulo::ModuloSpec {}
impl Edit for crate::strategy::hashed::jump::JumpSpec {}
impl Edit for crate::strategy::hashed::ring::RingSpec {}
impl Edit for crate::strategy::hashed::rendezvous::RendezvousSpec {}
impl Edit for crate::strategy::hashed::maglev::MaglevSpec {}
impl Edit for crate::strategy::hashed::ketama::KetamaSpec {}
impl Edit for crate::strategy::partitioned::token_ring::TokenRingSpec {}
impl Edit for crate::strategy::compat::cassandra::CassandraSpec {}
impl Edit for crate::strategy::compat::vitess::VitessSpec {}
impl Edit for crate::strategy::compat::kafka::KafkaSpec {}
impl Edit for crate::strategy::compat::elasticsearch::ElasticsearchSpec {}
impl Edit for crate::strategy::compat::couchbase::CouchbaseSpec {}
impl Edit for crate::strategy::compat::vshard::VshardSpec {}

/// `Args` for the fields of `op`.
fn args<'a>(operation: &'a Value, fields: &'static [&'static str]) -> Result<Args<'a>> {
    Args::new(operation, fields)
}
