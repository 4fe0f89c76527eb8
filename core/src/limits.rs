//! Documented size limits, enforced when a topology is loaded (error code
//! `limit_exceeded`). They bound memory and build time for a document from an untrusted
//! source, and they are the same in every binding, so a document loads everywhere or
//! nowhere.

/// Largest topology document, in bytes of JSON text: 64 MiB.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// Deepest nesting of arrays and objects in JSON text (documents, operations, hashing
/// specs): a value may sit inside at most 64 of them. Documents need fewer than 10; the
/// bound keeps hostile text from exhausting the stack, below serde_json's own 128.
pub const MAX_JSON_NESTING: u32 = 64;
/// Most nodes in one topology, and in one Redis `CLUSTER SHARDS`/`CLUSTER SLOTS` reply
/// (refused at the node past it, before it is stored).
pub const MAX_NODES: u32 = 65_536;
/// Longest node id, in UTF-8 bytes; a Redis reply's node ids are held to it too (and
/// must not be empty), so an import installs no id its own document could not load.
pub const MAX_NODE_ID_BYTES: u32 = 1024;
/// Longest node `address` and `zone`, in UTF-8 bytes: the binary dictionary's cap (a
/// 16-bit length, `0xFFFF` meaning absent), so every document that loads can be encoded.
pub const MAX_NODE_TEXT_BYTES: u32 = 65_534;
/// Largest `points_per_node` of a ring.
pub const MAX_POINTS_PER_NODE: u32 = 65_536;
/// Most points on one ring, all nodes and weights together: 4 Mi points (48 MiB built).
/// The same budget bounds a `ring`'s points, a `ketama` continuum and a `token_ring`'s
/// tokens. It holds Cassandra's 256 vnodes on 16,384 nodes, ketama's 160 points on
/// 26,214 servers, 64 points on each of the 65,536 nodes allowed.
pub const MAX_RING_POINTS: u64 = 1 << 22;
/// Most vbuckets.
pub const MAX_VBUCKETS: u32 = 1 << 20;
/// Most cells of a vbucket table, `vbuckets * (replicas + 1)` or the sum of a `map`'s
/// (or `forward_map`'s) chain lengths: 4 Mi (a million vbuckets with three replicas).
/// A 40-byte document can state a derived table, so the product is bounded, not only
/// each factor.
pub const MAX_TABLE_CELLS: u64 = 1 << 22;
/// Most replicas per vbucket (a chain holds at most this plus its active node).
pub const MAX_REPLICAS: u32 = 15;
/// Largest node weight; weights are in `(0, MAX_WEIGHT]`.
pub const MAX_WEIGHT: f64 = 1_000_000.0;
/// Most ranges of a `key_range` or `hash_range` table.
pub const MAX_RANGES: u32 = 1 << 20;
/// Longest boundary key of a `key_range` table, in bytes (Bigtable's row-key limit).
pub const MAX_RANGE_KEY_BYTES: u32 = 4096;
/// Most sample keys in one range operation (`range_split_median`, `range_presplit`).
pub const MAX_SAMPLE_KEYS: u32 = 1 << 20;
/// Deepest leaf of a `trie`: a prefix has at most 64 bits, the width of the hash.
pub const MAX_TRIE_DEPTH: u32 = 64;
/// Most tokens one node holds on a `token_ring` (`tokens_per_node`, or one explicit
/// list); the whole ring holds at most [`MAX_RING_POINTS`].
pub const MAX_TOKENS_PER_NODE: u32 = 65_536;
/// Largest `maglev` table size: the prime `2^20 - 3` (4 MiB of table).
pub const MAX_MAGLEV_TABLE_SIZE: u32 = 1_048_573;
/// Most shards of an `id_bits` shards table, and of all groups of `id_groups` together.
pub const MAX_ID_SHARDS: u32 = 1 << 20;
/// Most cells of an `id_bits` cell directory.
pub const MAX_ID_CELLS: u32 = 1 << 20;
/// Most ids one `ticket_ids` call returns (larger blocks: `reserve_block`).
pub const MAX_TICKET_BATCH: u32 = 1 << 16;
/// Most entries of the `down` list of a ticket-server pick (`id_bits_ticket_server`):
/// one per ticket server at most, repeats included.
pub const MAX_TICKET_DOWN: u32 = 65_535;
/// Most groups of an `id_groups` strategy.
pub const MAX_ID_GROUPS: u32 = 1 << 16;
/// Most id intervals of an `id_groups` strategy, all groups together.
pub const MAX_ID_INTERVALS: u32 = 1 << 20;
/// Largest total shard weight of one `id_groups` group: the length of its cycle of ids.
pub const MAX_GROUP_WEIGHT: u32 = 1 << 20;
/// Most entries of a key table: a `directory`'s `entries`, a `vbucket` map's `overrides`.
pub const MAX_KEY_TABLE_ENTRIES: u32 = 1 << 20;
/// Most partitions of a `multilevel` map.
pub const MAX_PARTITIONS: u32 = 1 << 20;
/// Most work to build a `multilevel` router: the sum, over partitions, of the size of
/// the partition's group (one score per node per partition), 64 Mi.
pub const MAX_PARTITION_PLACEMENTS: u64 = 1 << 26;
/// Most chain slots, `vbuckets * (replicas + 1)`, of one `plan_rebalance`: the planner's
/// work and the size of its move report grow with them (see [`crate::planner`]).
pub const MAX_PLAN_SLOTS: u64 = 1 << 18;
/// Most keys `diff` lists one by one when asked for its per-key list (the counts and
/// flows alone take any number of keys in bounded memory).
pub const MAX_DIFF_LISTED_KEYS: u32 = 1 << 16;
/// Most shard pairs [`Migration::scan_nodes`](crate::migration::Migration::scan_nodes) weighs to
/// work out which shard sends keys to which for modulo and jump (1,024 nodes on each
/// side); past it the moves count as unknown and nodes on both sides are read twice
/// (still correct, one more read).
pub const MAX_SCAN_PAIRS: u64 = 1 << 20;
/// Longest answer of etcd (a gateway answer), and longest line of an etcd watch stream,
/// in bytes: twice [`MAX_DOCUMENT_BYTES`] (a document at that limit in base64 is 4/3 of
/// it, with room for companions and the JSON around them). Every request the etcd session
/// asks for carries it as its `limit` (the HTTP session's carry [`MAX_DOCUMENT_BYTES`]: its
/// answer is the document itself); a watch line past it loses the stream
/// (`limit_exceeded`), checked while buffering. It bounds a ZooKeeper frame too (the
/// ZooKeeper session's jute frames, `session::zookeeper`): a frame whose 4-byte length
/// is past it (or negative) is `malformed` from its head, before its body is gathered,
/// and the member is left.
pub const MAX_ANSWER_BYTES: u64 = 2 * MAX_DOCUMENT_BYTES;
/// Most earlier revisions of a key an etcd `publish` with `replace` reads back to find
/// the newest document a follower would install (compacted history ends it sooner).
pub const MAX_PUBLISH_HISTORY_STEPS: u32 = 64;
/// Largest body of a routing service batch (`POST /route`, [`crate::service`]), in
/// bytes: 1 MiB. A shell reads no more of a body than this (it answers `413`,
/// `limit_exceeded`, from the `Content-Length` or once the bytes read pass it).
pub const MAX_SERVICE_BODY_BYTES: u64 = 1 << 20;
/// Most keys in one routing service batch (`POST /route`): more are refused whole
/// (`413`, `limit_exceeded`) before any is routed.
pub const MAX_SERVICE_KEYS: u32 = 10_000;
/// Most node groups one document names (`node_groups`, [`crate::topology::tables`]).
pub const MAX_NODE_GROUPS: u32 = 1024;
/// Most table families one document names (`table_families`): each compiles to a
/// router of its own when the document loads, within its strategy's own limits, so the
/// bound is the same as [`MAX_INDEXES`](crate::indexes::MAX_INDEXES)'.
pub const MAX_TABLE_FAMILIES: u32 = 64;
/// Most tables all of a document's table families list together.
pub const MAX_TABLES: u32 = 1 << 16;
/// Most tenant entries one document names (`tenants.entries`, [`crate::topology::tenants`]).
pub const MAX_TENANTS: u32 = 1 << 16;
/// Most shards (buckets) one tenant is spread over (`tenants.entries.<tenant>.shards`),
/// the same bound as a hot key's fanout.
pub const MAX_TENANT_SHARDS: u32 = 1024;
/// Longest tenant name of an entry, in UTF-8 bytes: a spread key (`tenant#bucket`) is
/// built inline, with no allocation per lookup.
pub const MAX_TENANT_NAME_BYTES: u32 = 256;
