# Made by scripts/document-types.py from docs/topology.schema.json (edit those, then run it;
# `make test-schema` fails when this file is not what the schema gives).
"""Typed topology documents and operations, for type checkers: `Topology` is a whole
document, `Strategy` the union of every strategy's `strategy` object, `Operation` the
union of the operations `apply` takes. They are TypedDicts, so a document is still a
plain dict (`json.load` gives one as well): annotate it to have its fields checked.

    from shardroute.documents import Topology
    topology: Topology = {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}],
                          "strategy": {"type": "ring", "points_per_node": 64}}

What the types cannot say (ranges, patterns, rules between fields) the core checks on
load, with the JSON path of the field; docs/topology.schema.json says more of it for
editors. null, which the core reads as absent, is left out: omit the field instead.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class _TopologyRequired(TypedDict):
    # The document format version.
    format: Literal["shardroute/1"]
    # Version of this topology; higher is newer. Routers refuse an older one (stale_epoch).
    epoch: U64
    # The nodes, in order: the order is part of the placement. Ids are unique.
    nodes: list[TopologyNode]
    strategy: Strategy


_TopologyKeys = TypedDict("_TopologyKeys", {"$schema": str}, total=False)


class Topology(_TopologyRequired, _TopologyKeys, total=False):
    """A shardroute topology document (format shardroute/1): the epoch, how keys are hashed,
    the nodes and the strategy that places keys on them. A field set to null is read as
    absent."""
    # How keys become 64-bit hashes; SipHash-2-4 without a hash tag when absent.
    hashing: Hashing
    placement: Placement
    hot_keys: HotKeys
    # Global secondary indexes by name: each routes terms by its own strategy and hashing over
    # these nodes, at this epoch (core/src/indexes.rs).
    indexes: dict[str, Index]
    # Named node groups: each a non-empty list of node ids of this document, each once, in the
    # group's order (the order of a table family's nodes). core/src/topology/tables.rs.
    node_groups: dict[str, list[str]]
    # Table families by name: which tables route by which strategy over which node group, or live
    # on every node of it (reference tables). A table belongs to one family; at most 65,536 tables
    # in all. core/src/topology/tables.rs.
    table_families: dict[str, TableFamily]
    # Tenants placed on a node group or zone, or spread over several shards, while the rest route
    # as without the section (core/src/topology/tenants.rs).
    tenants: Tenants
    # XXH64 (seed 0) of the canonical JSON of the rest of the document; a truncated or edited copy
    # is refused.
    checksum: str


class _TopologyNodeRequired(TypedDict):
    # Unique, non-empty, at most 1024 bytes.
    id: NodeId


class TopologyNode(_TopologyNodeRequired, total=False):
    """A node: what `node(key)` returns, what clients need to reach it, its weight and state."""
    # Carried for clients (host:port); ketama hashes it.
    address: str
    # Relative capacity, default 1; only weighted strategies accept another value.
    weight: Weight
    # Failure domain, for clients and the rebalance planner.
    zone: str
    # A draining node is being emptied, a failed one has lost its data; default active.
    state: Literal["active", "draining", "failed"]


class Hashing(TypedDict, total=False):
    """Key hashing (core/src/hashing.rs)."""
    # The hash of the key bytes; default siphash-2-4.
    function: Literal["siphash-2-4", "crc32"]
    # The 16 SipHash key bytes as 32 hex digits (siphash-2-4 only); default
    # 000102030405060708090a0b0c0d0e0f.
    seed: str
    # redis: hash only the {tag} of a key so related keys co-locate.
    hash_tag: Literal["none", "redis"]
    # An integer key is hashed as its 8 little-endian bytes, or is its own hash.
    integers: Literal["le_bytes", "identity"]
    # Route a byte key by one part of it (a compound key); the whole key when absent.
    partition_key: PartitionKey
    # What the keys are; default bytes (the text "7" and the integer 7 are different keys). u64:
    # every key is an unsigned 64-bit integer; a text key must be its canonical decimal text (no
    # sign, space or leading zero) and routes as that integer, any other is refused with
    # invalid_key.
    keys: Literal["bytes", "u64"]


class _TenantsRequired(TypedDict):
    # Each tenant (at most 256 bytes of UTF-8) to its entry; a tenant with no entry routes as
    # without the section.
    entries: dict[str, Tenant]


class Tenants(_TenantsRequired, total=False):
    """How a key's tenant is found (partition_key, default the document's
    hashing.partition_key, which must then not be the whole key) and the tenants with an
    entry. A key of a spread tenant routes as `tenant#bucket` (bucket = hash of the whole
    key % shards); a placed key goes to jump(hash, len(place)) over its place's nodes (the
    group's, in its order, or every node; those in zone when named)."""
    # The rule a key's tenant is found by; the document's hashing.partition_key when absent.
    partition_key: PartitionKey


class Tenant(TypedDict, total=False):
    """Where a tenant's keys live: on a node group and/or in a zone (placed), over how many
    shards (spread); at least one of the three."""
    # A name in node_groups.
    group: str
    # A zone some node of the place is in.
    zone: str
    # The buckets the tenant's keys are spread over.
    shards: int


class _TableFamilyRequired(TypedDict):
    tables: list[str]


class TableFamily(_TableFamilyRequired, total=False):
    """Tables routed by one rule over one node group: a strategy (and optionally its own
    hashing; default the document's) over the group's nodes, or "reference": true (no
    strategy): every row on every node of the group, read from one, written to all. Without
    group: every node of the document."""
    # A name in node_groups.
    group: str
    hashing: Hashing
    # Names only nodes of the family's group.
    strategy: Strategy
    reference: bool


class _IndexRequired(TypedDict):
    strategy: Any


class Index(_IndexRequired, total=False):
    """A global (term-partitioned) secondary index: its strategy (any but the compatibility
    profiles) and hashing, over the document's nodes."""
    hashing: Hashing


class _PartitionKeyRequired(TypedDict):
    rule: Literal["whole", "prefix", "field", "bytes"]


class PartitionKey(_PartitionKeyRequired, total=False):
    """Which part of a byte key every strategy routes by (core/src/hashing.rs): the bytes
    before the first separator (prefix), field `index` from 0 of the key split at every
    separator (field), `length` bytes from `offset` (bytes), or the whole key (whole, the
    default). A key without that part routes by the whole key; integer keys have no parts."""
    # 1 to 8 bytes of text (prefix and field).
    separator: str
    # Which field, from 0 (field).
    index: int
    # The first byte of the part (bytes).
    offset: int
    # How many bytes the part has (bytes).
    length: int


class _HotKeysRequired(TypedDict):
    # Each hot key (as text) and its fanout.
    keys: dict[str, int]


class HotKeys(_HotKeysRequired, total=False):
    """Keys salted over several shards: a hot key is written under key + separator + i for i <
    fanout."""
    # Default "#".
    separator: str


class KeyObject(TypedDict, total=False):
    """A key written in a document: exactly one of utf8 (text), hex (bytes) or u64 (an integer
    key)."""
    utf8: str
    hex: str
    u64: U64


class BoundaryKey(KeyObject):
    """A key_range boundary: a key object, not the empty key, of at most 4096 bytes."""


class _ModuloStrategyRequired(TypedDict):
    type: Literal["modulo"]


class ModuloStrategy(_ModuloStrategyRequired, total=False):
    """hash % n (node index), or 1-based: 0 becomes n."""
    # Shards 1..=n (user_id % n with 0 meaning n); default false.
    one_based: bool


class _JumpStrategyRequired(TypedDict):
    type: Literal["jump"]


class JumpStrategy(_JumpStrategyRequired, total=False):
    """Lamping-Veach jump consistent hash over the node list."""


class _RingStrategyRequired(TypedDict):
    type: Literal["ring"]


class RingStrategy(_RingStrategyRequired, total=False):
    """Consistent-hash ring with virtual nodes, weighted by points."""
    # Points of a weight-1 node; default 160.
    points_per_node: int


class _RendezvousStrategyRequired(TypedDict):
    type: Literal["rendezvous"]


class RendezvousStrategy(_RendezvousStrategyRequired, total=False):
    """Rendezvous (highest random weight) hashing, weighted."""


class _VbucketStrategyRequired(TypedDict):
    type: Literal["vbucket"]


class VbucketStrategy(_VbucketStrategyRequired, total=False):
    """Fixed vbuckets (hash % vbuckets) with a dictionary of chains
    (docs/dictionary-format.md)."""
    # Default 1024.
    vbuckets: int
    # One chain per vbucket; default round-robin over the nodes.
    map: list[Chain]
    # Replicas of the round-robin table when there is no map; default 0.
    replicas: int
    # Keys sent to a chosen vbucket instead of hash % vbuckets.
    overrides: list[VbucketOverride]
    # The target table while vbuckets move (needs a map).
    forward_map: list[Chain]
    # The state of each vbucket in motion, by vbucket number; absent ones are active.
    states: dict[str, Literal["active", "migrating", "read_only"]]


class _VbucketOverrideRequired(TypedDict):
    key: KeyObject
    vbucket: int


class VbucketOverride(_VbucketOverrideRequired, total=False):
    pass


class _KeyRangeStrategyRequired(TypedDict):
    type: Literal["key_range"]


class KeyRangeStrategy(_KeyRangeStrategyRequired, total=False):
    """Sorted byte-string boundaries over raw keys: range i holds keys from boundaries[i-1] up
    to boundaries[i]."""
    # Strictly increasing, none the empty key; N boundaries make N + 1 ranges.
    boundaries: list[BoundaryKey]
    # The owner of each range; default round-robin over the nodes.
    ranges: list[NodeId]


class _HashRangeStrategyRequired(TypedDict):
    type: Literal["hash_range"]


class HashRangeStrategy(_HashRangeStrategyRequired, total=False):
    """Ranges of the 64-bit hash space."""
    # Strictly increasing hashes, none 0; default equal widths.
    boundaries: list[PositiveU64]
    # The owner of each range; default one range per node.
    ranges: list[NodeId]


class _DirectoryStrategyRequired(TypedDict):
    type: Literal["directory"]
    fallback: DirectoryFallback


class DirectoryStrategy(_DirectoryStrategyRequired, total=False):
    """An explicit key -> node table, then a fallback strategy for unlisted keys."""
    entries: list[DirectoryEntry]


class _DirectoryEntryRequired(TypedDict):
    key: KeyObject
    node: NodeId


class DirectoryEntry(_DirectoryEntryRequired, total=False):
    pass


class _ModuloFallbackRequired(TypedDict):
    type: Literal["modulo"]


class ModuloFallback(_ModuloFallbackRequired, total=False):
    """modulo as a directory's fallback: 0-based only."""
    one_based: Literal[False]


class _MultilevelStrategyRequired(TypedDict):
    type: Literal["multilevel"]
    groups: list[MultilevelGroup]


class MultilevelStrategy(_MultilevelStrategyRequired, total=False):
    """Partitions (hash % partitions) mapped to groups, a node chosen within the group."""
    # Default 4096.
    partitions: int
    # The group id of each partition; default spread over the groups.
    map: list[str]
    # How a partition picks its node in the group; default rendezvous (weighted).
    within_group: Literal["rendezvous", "jump"]


class _MultilevelGroupRequired(TypedDict):
    id: str
    nodes: list[NodeId]


class MultilevelGroup(_MultilevelGroupRequired, total=False):
    pass


class _TrieStrategyRequired(TypedDict):
    type: Literal["trie"]


class TrieStrategy(_TrieStrategyRequired, total=False):
    """Leaves of a binary trie over the hash bits, one leaf per node."""
    # In prefix order, covering the hash space exactly; default a balanced trie over the nodes.
    leaves: list[TrieLeaf]


class _TrieLeafRequired(TypedDict):
    # Hash bits from the most significant, as '0' and '1'.
    prefix: str
    node: NodeId


class TrieLeaf(_TrieLeafRequired, total=False):
    pass


class _TokenRingStrategyRequired(TypedDict):
    type: Literal["token_ring"]


class TokenRingStrategy(_TokenRingStrategyRequired, total=False):
    """Cassandra-style token ring (prev, token] from a seeded generator, or explicit tokens."""
    # Generated tokens of a weight-1 node; default 16.
    tokens_per_node: int
    # Seed of the token generator; default 0.
    token_seed: U64
    # Explicit tokens of some nodes (weight 1); the others get generated ones.
    tokens: Tokens


class _MaglevStrategyRequired(TypedDict):
    type: Literal["maglev"]


class MaglevStrategy(_MaglevStrategyRequired, total=False):
    """Maglev lookup table (Envoy-compatible)."""
    # A prime; default 65537.
    table_size: int


class _IdBitsStrategyRequired(TypedDict):
    type: Literal["id_bits"]
    layout: Literal["shard_high", "snowflake", "ticket", "ulid"]


class IdBitsStrategy(_IdBitsStrategyRequired, total=False):
    """Ids that carry their shard: a bit field (shard_high, snowflake, the top random bits of a
    ULID) or a ticket server's residue."""
    # shard_high (default 8), snowflake (default 10), ulid (default 8): width of the routing
    # field.
    shard_bits: int
    # shard_high: the routing field's lowest bit; default 64 - shard_bits.
    shard_shift: int
    # snowflake: default 41.
    timestamp_bits: int
    # snowflake: default 12.
    sequence_bits: int
    # snowflake: Unix ms of timestamp 0; default 1288834974657 (Twitter's).
    epoch_ms: U64
    # ticket (required): the ticket servers' auto_increment_increment.
    servers: int
    # Shard -> node id; default the nodes in order.
    shards: list[NodeId]
    # Cell directory: the routing field is a cell, mapped to a shard.
    cells: dict[str, int]


class _IdGroupsStrategyRequired(TypedDict):
    type: Literal["id_groups"]
    groups: list[IdGroup]


class IdGroupsStrategy(_IdGroupsStrategyRequired, total=False):
    """Id intervals owned by groups of weighted shards; exactly one group is writable."""
    tables: IdTables


class _IdGroupRequired(TypedDict):
    id: str
    intervals: list[Interval]
    shards: list[IdGroupShard]


class IdGroup(_IdGroupRequired, total=False):
    # The group new ids come from; default false.
    writable: bool


class _IdGroupShardRequired(TypedDict):
    node: NodeId


class IdGroupShard(_IdGroupShardRequired, total=False):
    # Residues of id % W this shard owns; default 1.
    weight: int


class _IdTablesRequired(TypedDict):
    # At least 1.
    interval: PositiveU64
    # A name with one {n} or {n:0W} placeholder.
    rule: str


class IdTables(_IdTablesRequired, total=False):
    """Fragment tables: the table of id i is rule with {n} = i / interval."""


class _CassandraStrategyRequired(TypedDict):
    type: Literal["cassandra"]
    # Every node's tokens, as nodetool ring lists them.
    tokens: Tokens


class CassandraStrategy(_CassandraStrategyRequired, total=False):
    """Cassandra's Murmur3Partitioner over explicit tokens (compatibility profile)."""


class _RedisClusterStrategyRequired(TypedDict):
    type: Literal["redis_cluster"]


class RedisClusterStrategy(_RedisClusterStrategyRequired, total=False):
    """Redis Cluster: CRC16 hash slots % 16384 (hash tags), node from the slot ranges
    (compatibility profile)."""
    # Ranges covering every slot exactly once; default redis-cli's even split over the nodes.
    slots: list[SlotRange]


class _SlotRangeRequired(TypedDict):
    start: int
    end: int
    # The master, then its replicas.
    nodes: list[NodeId]


class SlotRange(_SlotRangeRequired, total=False):
    pass


class _VitessStrategyRequired(TypedDict):
    type: Literal["vitess"]
    vindex: Literal["hash", "xxhash", "numeric"]
    # In keyspace order, without gaps or overlaps.
    shards: list[VitessShard]


class VitessStrategy(_VitessStrategyRequired, total=False):
    """Vitess vindexes over keyranges (compatibility profile)."""


class _VitessShardRequired(TypedDict):
    # start-end in hex with whole bytes: "-80", "80-c0", "c0-", "-".
    name: str
    node: NodeId


class VitessShard(_VitessShardRequired, total=False):
    pass


class _KafkaStrategyRequired(TypedDict):
    type: Literal["kafka"]
    partitions: int


class KafkaStrategy(_KafkaStrategyRequired, total=False):
    """Kafka's keyed-record partitioner (compatibility profile)."""
    # Default java.
    partitioner: Literal["java", "kafkajs_legacy"]
    # Each partition's leader; default partition % nodes.
    leaders: list[NodeId]


class _ElasticsearchStrategyRequired(TypedDict):
    type: Literal["elasticsearch"]
    number_of_shards: int


class ElasticsearchStrategy(_ElasticsearchStrategyRequired, total=False):
    """Elasticsearch's document routing (compatibility profile)."""
    # A whole multiple of number_of_shards; default Elasticsearch's.
    number_of_routing_shards: int
    # Default 1.
    routing_partition_size: int
    # Each shard's primary node; default shard % nodes.
    primaries: list[NodeId]


class _KetamaStrategyRequired(TypedDict):
    type: Literal["ketama"]


class KetamaStrategy(_KetamaStrategyRequired, total=False):
    """The ketama continuum of memcached clients: MD5 of each server's address (compatibility
    profile)."""
    # Default libmemcached.
    variant: Literal["libmemcached", "libketama", "couchbase"]
    # Default 160.
    points_per_server: int


class _CouchbaseStrategyRequired(TypedDict):
    type: Literal["couchbase"]
    # vBucketMap: one row per vbucket.
    map: list[CouchbaseRow]


class CouchbaseStrategy(_CouchbaseStrategyRequired, total=False):
    """Couchbase's vbucket map (compatibility profile)."""
    # vBucketMapForward, as long as map.
    forward_map: list[CouchbaseRow]


class _VshardStrategyRequired(TypedDict):
    type: Literal["vshard"]


class VshardStrategy(_VshardStrategyRequired, total=False):
    """Tarantool vshard buckets (compatibility profile)."""
    # Default 3000.
    bucket_count: int
    # Contiguous bucket ranges from 1 to bucket_count; default an even split.
    ranges: list[VshardRange]


class _VshardRangeRequired(TypedDict):
    node: NodeId
    first: int
    last: int


class VshardRange(_VshardRangeRequired, total=False):
    pass


class _AddNodeOperationRequired(TypedDict):
    op: Literal["add_node"]
    node: TopologyNode


class AddNodeOperation(_AddNodeOperationRequired, total=False):
    """Appends a node (strategies whose placement follows the node list)."""


class _RemoveNodeOperationRequired(TypedDict):
    op: Literal["remove_node"]
    id: str


class RemoveNodeOperation(_RemoveNodeOperationRequired, total=False):
    """Removes the node with this id."""


class _DisruptionOperationRequired(TypedDict):
    op: Literal["disruption"]
    to: Topology


class DisruptionOperation(_DisruptionOperationRequired, total=False):
    """Replaces the topology with `to` (its epoch is ignored) and reports how much of the key
    space changes owner."""


class _PlanRebalanceOperationRequired(TypedDict):
    op: Literal["plan_rebalance"]


class PlanRebalanceOperation(_PlanRebalanceOperationRequired, total=False):
    """vbucket: plans a change of nodes and starts it (promotions at once, the rest in
    forward_map)."""
    add: list[TopologyNode]
    remove: list[str]
    fail: list[str]
    # Node id -> new weight.
    weights: dict[str, Weight]
    replicas: int
    # Default 2.
    max_moves_per_node: int
    # The measured size or load of each vbucket (exactly V of them): actives are balanced by
    # weight instead of by count.
    vbucket_weights: list[U64]


class _CompleteMovesOperationRequired(TypedDict):
    op: Literal["complete_moves"]


class CompleteMovesOperation(_CompleteMovesOperationRequired, total=False):
    """vbucket: map takes the forward_map chains of `vbuckets` (default all)."""
    vbuckets: list[int]


class _VbucketDoubleOperationRequired(TypedDict):
    op: Literal["vbucket_double"]


class VbucketDoubleOperation(_VbucketDoubleOperationRequired, total=False):
    """vbucket: V -> 2V; no key changes node."""


class _VbucketHalveOperationRequired(TypedDict):
    op: Literal["vbucket_halve"]


class VbucketHalveOperation(_VbucketHalveOperationRequired, total=False):
    """vbucket: the inverse of vbucket_double."""


class _VbucketOverrideOperationRequired(TypedDict):
    op: Literal["vbucket_override"]
    key: KeyObject
    vbucket: int


class VbucketOverrideOperation(_VbucketOverrideOperationRequired, total=False):
    """vbucket: sends `key` to `vbucket`."""


class _VbucketOverrideRemoveOperationRequired(TypedDict):
    op: Literal["vbucket_override_remove"]
    key: KeyObject


class VbucketOverrideRemoveOperation(_VbucketOverrideRemoveOperationRequired, total=False):
    """vbucket: `key` goes back to hash % V."""


class _RangeSplitOperationRequired(TypedDict):
    op: Literal["range_split"]
    at: KeyObject | U64


class RangeSplitOperation(_RangeSplitOperationRequired, total=False):
    """key_range, hash_range: splits range `shard` (default the one holding `at`) at `at` (a
    key object, or a hash for hash_range)."""
    shard: int
    # The upper part's owner; default the range's.
    node: NodeChoice


class _RangeSplitMedianOperationRequired(TypedDict):
    op: Literal["range_split_median"]
    shard: int
    sample: list[KeyObject]


class RangeSplitMedianOperation(_RangeSplitMedianOperationRequired, total=False):
    """key_range, hash_range: splits range `shard` at the median of the sample keys inside it."""
    node: NodeChoice


class _RangeMergeOperationRequired(TypedDict):
    op: Literal["range_merge"]
    shard: int


class RangeMergeOperation(_RangeMergeOperationRequired, total=False):
    """key_range, hash_range: joins ranges `shard` and `shard + 1`."""
    node: NodeChoice


class _RangeMoveOperationRequired(TypedDict):
    op: Literal["range_move"]
    shard: int
    node: NodeChoice


class RangeMoveOperation(_RangeMoveOperationRequired, total=False):
    """key_range, hash_range: gives range `shard` to `node`."""


class _RangePresplitOperationRequired(TypedDict):
    op: Literal["range_presplit"]
    ranges: int


class RangePresplitOperation(_RangePresplitOperationRequired, total=False):
    """key_range, hash_range: replaces the table with `ranges` ranges of equal sample counts,
    round-robin over `nodes`."""
    sample: list[KeyObject]
    nodes: list[NodeChoice]


class _DirectorySetOperationRequired(TypedDict):
    op: Literal["directory_set"]
    key: KeyObject
    node: str


class DirectorySetOperation(_DirectorySetOperationRequired, total=False):
    """directory: lists `key` on node `node`."""


class _DirectoryRemoveOperationRequired(TypedDict):
    op: Literal["directory_remove"]
    key: KeyObject


class DirectoryRemoveOperation(_DirectoryRemoveOperationRequired, total=False):
    """directory: drops the entry of `key`."""


class _HotKeyAddOperationRequired(TypedDict):
    op: Literal["hot_key_add"]
    key: KeyObject
    fanout: int


class HotKeyAddOperation(_HotKeyAddOperationRequired, total=False):
    """any strategy: salts `key` (text, as a key object) over `fanout` salted keys, or changes
    its fanout."""


class _HotKeyRemoveOperationRequired(TypedDict):
    op: Literal["hot_key_remove"]
    key: KeyObject


class HotKeyRemoveOperation(_HotKeyRemoveOperationRequired, total=False):
    """any strategy: stops salting `key`."""


class _SuggestOperationRequired(TypedDict):
    op: Literal["suggest"]


class SuggestOperation(_SuggestOperationRequired, total=False):
    """any strategy, a generator: operations to review from measured load
    (core/src/ops/suggest.rs); the topology comes back unchanged."""
    shards: list[ShardLoad]
    keys: list[KeyLoad]
    max_bytes: U64
    max_requests: U64
    # vbucket: a node whose active load passes its target by more than this percent gets a
    # plan_rebalance with vbucket_weights.
    max_imbalance: int
    # The measure max_imbalance weighs vbuckets by. Default requests.
    weight_by: Literal["bytes", "requests", "keys"]
    # The cooling side: a load under this percent of max_bytes / max_requests has cooled
    # (hot_key_remove, range_merge, reopening an id group). Default 50; 0 suggests no cooling.
    cool_percent: int
    # vbucket: a warning (with vbucket_double) when there are fewer vbuckets than this many per
    # node. Default 4; 0 turns it off.
    min_vbuckets_per_node: int
    # The capacity of every node, by measure: headroom and capacity-cascade warnings.
    capacity: Capacity
    # The capacity of named nodes (each at most once); a measure given here replaces capacity's.
    node_capacity: list[NodeCapacity]
    # A node past this percent of a capacity gets a headroom warning. Default 70.
    capacity_warn: int
    # A node past this percent of a capacity gets the stronger warning; at least capacity_warn.
    # Default 80.
    capacity_alert: int


class Capacity(TypedDict, total=False):
    """A node's capacity by measure; a measure not given is not checked."""
    bytes: U64
    requests: U64
    keys: U64


class _NodeCapacityRequired(TypedDict):
    node: str


class NodeCapacity(_NodeCapacityRequired, total=False):
    """One node's capacity by measure."""
    bytes: U64
    requests: U64
    keys: U64


class _ShardLoadRequired(TypedDict):
    shard: int


class ShardLoad(_ShardLoadRequired, total=False):
    """The measured load of one shard; a sample of its keys places a key range's split."""
    bytes: U64
    requests: U64
    keys: U64
    sample: list[KeyObject]


class _KeyLoadRequired(TypedDict):
    key: KeyObject


class KeyLoad(_KeyLoadRequired, total=False):
    """The measured request rate of one key."""
    requests: U64


class _MultilevelRemapOperationRequired(TypedDict):
    op: Literal["multilevel_remap"]
    partition: int
    group: str


class MultilevelRemapOperation(_MultilevelRemapOperationRequired, total=False):
    """multilevel: maps `partition` to group `group`."""


class _MultilevelGroupSetOperationRequired(TypedDict):
    op: Literal["multilevel_group_set"]
    group: str
    nodes: list[str]


class MultilevelGroupSetOperation(_MultilevelGroupSetOperationRequired, total=False):
    """multilevel: sets group `group`'s nodes (creates it; [] removes an empty one)."""


class _NodeGroupSetOperationRequired(TypedDict):
    op: Literal["node_group_set"]
    group: str
    nodes: list[str]


class NodeGroupSetOperation(_NodeGroupSetOperationRequired, total=False):
    """any: sets node group `group`'s nodes, in the group's order (creates it; [] removes it,
    refused while a table family or tenant names it)."""


class _TableFamilySetOperationRequired(TypedDict):
    op: Literal["table_family_set"]
    family: str
    entry: TableFamily


class TableFamilySetOperation(_TableFamilySetOperationRequired, total=False):
    """any: sets table family `family` to `entry`, as table_families writes it (creates or
    replaces it)."""


class _TableFamilyRemoveOperationRequired(TypedDict):
    op: Literal["table_family_remove"]
    family: str


class TableFamilyRemoveOperation(_TableFamilyRemoveOperationRequired, total=False):
    """any: removes table family `family`; its tables route by the document's own strategy."""


class _TenantSetOperationRequired(TypedDict):
    op: Literal["tenant_set"]
    tenant: str
    entry: Tenant


class TenantSetOperation(_TenantSetOperationRequired, total=False):
    """any: sets tenant `tenant`'s entry, as tenants.entries writes it (creates or replaces
    it); a placed entry needs a strategy whose shards are its nodes."""


class _TenantRemoveOperationRequired(TypedDict):
    op: Literal["tenant_remove"]
    tenant: str


class TenantRemoveOperation(_TenantRemoveOperationRequired, total=False):
    """any: removes tenant `tenant`'s entry; its keys route as without one."""


class _TrieSplitOperationRequired(TypedDict):
    op: Literal["trie_split"]
    leaf: str
    node: TopologyNode


class TrieSplitOperation(_TrieSplitOperationRequired, total=False):
    """trie: leaf `leaf` becomes leaf+"0" (same node) and leaf+"1" for `node` (appended)."""


class _TrieRemoveOperationRequired(TypedDict):
    op: Literal["trie_remove"]
    node: str


class TrieRemoveOperation(_TrieRemoveOperationRequired, total=False):
    """trie: removes node `node`; its leaf merges with a sibling."""


class _IdBitsComposeOperationRequired(TypedDict):
    op: Literal["id_bits_compose"]


class IdBitsComposeOperation(_IdBitsComposeOperationRequired, total=False):
    """id_bits generator: the id of `shard` (or `cell`) and the layout's other fields
    (shard_high: local; snowflake: timestamp_ms, sequence; ticket: sequence; ulid:
    timestamp_ms, randomness)."""
    shard: U64
    cell: U64
    local: U64
    timestamp_ms: U64
    sequence: U64
    # ulid: the 80 - shard_bits random bits the caller drew (a decimal string).
    randomness: str | int


class _IdBitsTicketServerOperationRequired(TypedDict):
    op: Literal["id_bits_ticket_server"]
    turn: U64


class IdBitsTicketServerOperation(_IdBitsTicketServerOperationRequired, total=False):
    """id_bits ticket layout: the ticket server to ask next, by rotation from the caller's
    counter `turn` and failover past the servers (shards, or cells) listed in `down`."""
    down: list[int]


class _IdBitsDecodeOperationRequired(TypedDict):
    op: Literal["id_bits_decode"]
    id: U64 | str


class IdBitsDecodeOperation(_IdBitsDecodeOperationRequired, total=False):
    """id_bits: the shard and fields of `id` (ULID text for the ulid layout, else an integer)."""


class _IdBitsTicketsOperationRequired(TypedDict):
    op: Literal["id_bits_tickets"]
    auto_increment: U64
    count: U64


class IdBitsTicketsOperation(_IdBitsTicketsOperationRequired, total=False):
    """id_bits ticket generator: the next `count` ids of server `shard` (or `cell`) from
    `auto_increment`."""
    shard: U64
    cell: U64


class _IdBitsReserveBlockOperationRequired(TypedDict):
    op: Literal["id_bits_reserve_block"]
    auto_increment: U64
    block_size: U64


class IdBitsReserveBlockOperation(_IdBitsReserveBlockOperationRequired, total=False):
    """id_bits ticket generator: reserves `block_size` ids of server `shard` (or `cell`) in one
    step."""
    shard: U64
    cell: U64


class _IdGroupsAddGroupOperationRequired(TypedDict):
    op: Literal["id_groups_add_group"]
    group: IdGroup


class IdGroupsAddGroupOperation(_IdGroupsAddGroupOperationRequired, total=False):
    """id_groups: appends `group` (without writable); it becomes the writable group unless
    `writable` is false."""
    writable: bool


class _IdGroupsAddIntervalOperationRequired(TypedDict):
    op: Literal["id_groups_add_interval"]
    group: str
    interval: Interval


class IdGroupsAddIntervalOperation(_IdGroupsAddIntervalOperationRequired, total=False):
    """id_groups: gives group `group` the interval [start, end)."""


class _IdGroupsSetWritableOperationRequired(TypedDict):
    op: Literal["id_groups_set_writable"]
    group: str


class IdGroupsSetWritableOperation(_IdGroupsSetWritableOperationRequired, total=False):
    """id_groups: makes group `group` the writable one."""


class _RedisMovedOperationRequired(TypedDict):
    op: Literal["redis_moved"]
    slot: int
    address: str


class RedisMovedOperation(_RedisMovedOperationRequired, total=False):
    """redis_cluster: a MOVED reply; slot `slot` is served by the node at `address` (appended
    when unknown)."""


class _ImportCassandraRingOperationRequired(TypedDict):
    op: Literal["import_cassandra_ring"]
    tokens: Tokens


class ImportCassandraRingOperation(_ImportCassandraRingOperationRequired, total=False):
    """Replaces the strategy with cassandra over `tokens` (node id -> token list)."""


class _ImportRedisClusterSlotsOperationRequired(TypedDict):
    op: Literal["import_redis_cluster_slots"]
    reply: list[Any]


class ImportRedisClusterSlotsOperation(_ImportRedisClusterSlotsOperationRequired, total=False):
    """Replaces the strategy with redis_cluster from a CLUSTER SLOTS reply (its JSON arrays)."""


class _ImportRedisClusterShardsOperationRequired(TypedDict):
    op: Literal["import_redis_cluster_shards"]
    reply: list[Any]


class ImportRedisClusterShardsOperation(_ImportRedisClusterShardsOperationRequired, total=False):
    """Replaces the strategy with redis_cluster from a CLUSTER SHARDS reply (objects or RESP2
    flat arrays)."""


class _ImportCouchbaseConfigOperationRequired(TypedDict):
    op: Literal["import_couchbase_config"]
    config: dict[str, Any] | str


class ImportCouchbaseConfigOperation(_ImportCouchbaseConfigOperationRequired, total=False):
    """Replaces the topology with a couchbase one built from a bucket config (an object, or its
    JSON text)."""


# An unsigned 64-bit integer: a JSON integer, or a decimal string (JavaScript cannot hold every
# u64 in a Number).
U64 = int | str

# A signed 64-bit token (Cassandra's Murmur3Partitioner range): a JSON integer, or a decimal
# string with an optional minus sign.
Token = int | str

# The id of a node of `nodes`.
NodeId = str

# A relative capacity, finite, in (0, 1e6].
Weight = float

# Name templates rendered per shard by `locate`: {shard}, {shard:0N} (N in 1..20), {node}, and {{
# }} for literal braces.
Placement = dict[str, str]

# The shard function and its parameters: one object per `type` (core/src/strategy/).
Strategy = (
    ModuloStrategy
    | JumpStrategy
    | RingStrategy
    | RendezvousStrategy
    | VbucketStrategy
    | KeyRangeStrategy
    | HashRangeStrategy
    | DirectoryStrategy
    | MultilevelStrategy
    | TrieStrategy
    | TokenRingStrategy
    | MaglevStrategy
    | IdBitsStrategy
    | IdGroupsStrategy
    | CassandraStrategy
    | RedisClusterStrategy
    | VitessStrategy
    | KafkaStrategy
    | ElasticsearchStrategy
    | KetamaStrategy
    | CouchbaseStrategy
    | VshardStrategy
)

# A strategy whose shards are node indices: modulo (0-based), jump, ring or rendezvous.
DirectoryFallback = ModuloFallback | JumpStrategy | RingStrategy | RendezvousStrategy

# A topology operation for apply(topology, operation) (core/src/ops/mod.rs lists what each does
# and reports).
Operation = (
    AddNodeOperation
    | RemoveNodeOperation
    | DisruptionOperation
    | PlanRebalanceOperation
    | CompleteMovesOperation
    | VbucketDoubleOperation
    | VbucketHalveOperation
    | VbucketOverrideOperation
    | VbucketOverrideRemoveOperation
    | RangeSplitOperation
    | RangeSplitMedianOperation
    | RangeMergeOperation
    | RangeMoveOperation
    | RangePresplitOperation
    | DirectorySetOperation
    | DirectoryRemoveOperation
    | HotKeyAddOperation
    | HotKeyRemoveOperation
    | SuggestOperation
    | MultilevelRemapOperation
    | MultilevelGroupSetOperation
    | NodeGroupSetOperation
    | TableFamilySetOperation
    | TableFamilyRemoveOperation
    | TenantSetOperation
    | TenantRemoveOperation
    | TrieSplitOperation
    | TrieRemoveOperation
    | IdBitsComposeOperation
    | IdBitsTicketsOperation
    | IdBitsReserveBlockOperation
    | IdBitsTicketServerOperation
    | IdBitsDecodeOperation
    | IdGroupsAddGroupOperation
    | IdGroupsAddIntervalOperation
    | IdGroupsSetWritableOperation
    | RedisMovedOperation
    | ImportCassandraRingOperation
    | ImportRedisClusterSlotsOperation
    | ImportRedisClusterShardsOperation
    | ImportCouchbaseConfigOperation
)

# A u64 other than 0.
PositiveU64 = U64

# A vbucket's chain of node ids: the active first, then its replicas.
Chain = list[NodeId]

# Node id -> its tokens.
Tokens = dict[str, list[Token]]

# [start, end): start below end.
Interval = list[U64]

# The active's node id, then the replicas'; null where none is (-1 in Couchbase's config). Every
# row has the same length.
CouchbaseRow = list[NodeId | None]

# An existing node's id, or a node entry to append.
NodeChoice = NodeId | TopologyNode


__all__ = [
    "AddNodeOperation",
    "BoundaryKey",
    "Capacity",
    "CassandraStrategy",
    "Chain",
    "CompleteMovesOperation",
    "CouchbaseRow",
    "CouchbaseStrategy",
    "DirectoryEntry",
    "DirectoryFallback",
    "DirectoryRemoveOperation",
    "DirectorySetOperation",
    "DirectoryStrategy",
    "DisruptionOperation",
    "ElasticsearchStrategy",
    "HashRangeStrategy",
    "Hashing",
    "HotKeyAddOperation",
    "HotKeyRemoveOperation",
    "HotKeys",
    "IdBitsComposeOperation",
    "IdBitsDecodeOperation",
    "IdBitsReserveBlockOperation",
    "IdBitsStrategy",
    "IdBitsTicketServerOperation",
    "IdBitsTicketsOperation",
    "IdGroup",
    "IdGroupShard",
    "IdGroupsAddGroupOperation",
    "IdGroupsAddIntervalOperation",
    "IdGroupsSetWritableOperation",
    "IdGroupsStrategy",
    "IdTables",
    "ImportCassandraRingOperation",
    "ImportCouchbaseConfigOperation",
    "ImportRedisClusterShardsOperation",
    "ImportRedisClusterSlotsOperation",
    "Index",
    "Interval",
    "JumpStrategy",
    "KafkaStrategy",
    "KetamaStrategy",
    "KeyLoad",
    "KeyObject",
    "KeyRangeStrategy",
    "MaglevStrategy",
    "ModuloFallback",
    "ModuloStrategy",
    "MultilevelGroup",
    "MultilevelGroupSetOperation",
    "MultilevelRemapOperation",
    "MultilevelStrategy",
    "NodeCapacity",
    "NodeChoice",
    "NodeGroupSetOperation",
    "NodeId",
    "Operation",
    "PartitionKey",
    "Placement",
    "PlanRebalanceOperation",
    "PositiveU64",
    "RangeMergeOperation",
    "RangeMoveOperation",
    "RangePresplitOperation",
    "RangeSplitMedianOperation",
    "RangeSplitOperation",
    "RedisClusterStrategy",
    "RedisMovedOperation",
    "RemoveNodeOperation",
    "RendezvousStrategy",
    "RingStrategy",
    "ShardLoad",
    "SlotRange",
    "Strategy",
    "SuggestOperation",
    "TableFamily",
    "TableFamilyRemoveOperation",
    "TableFamilySetOperation",
    "Tenant",
    "TenantRemoveOperation",
    "TenantSetOperation",
    "Tenants",
    "Token",
    "TokenRingStrategy",
    "Tokens",
    "Topology",
    "TopologyNode",
    "TrieLeaf",
    "TrieRemoveOperation",
    "TrieSplitOperation",
    "TrieStrategy",
    "U64",
    "VbucketDoubleOperation",
    "VbucketHalveOperation",
    "VbucketOverride",
    "VbucketOverrideOperation",
    "VbucketOverrideRemoveOperation",
    "VbucketStrategy",
    "VitessShard",
    "VitessStrategy",
    "VshardRange",
    "VshardStrategy",
    "Weight",
]
