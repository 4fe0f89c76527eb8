//! Documented size limits, enforced when a topology is loaded (error code
//! `limit_exceeded`). They bound memory and build time for a document from an untrusted
//! source, and they are the same in every binding, so a document loads everywhere or
//! nowhere.

/// Largest topology document, in bytes of JSON text: 64 MiB.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// Most nodes in one topology.
pub const MAX_NODES: u32 = 65_536;
/// Longest node id, in UTF-8 bytes.
pub const MAX_NODE_ID_BYTES: u32 = 1024;
/// Largest `points_per_node` of a ring.
pub const MAX_POINTS_PER_NODE: u32 = 65_536;
/// Most points on one ring, all nodes and weights together (16 Mi points, 192 MiB).
pub const MAX_RING_POINTS: u64 = 1 << 24;
/// Most vbuckets.
pub const MAX_VBUCKETS: u32 = 1 << 20;
/// Most replicas per vbucket (a chain holds at most this plus its active node).
pub const MAX_REPLICAS: u32 = 15;
/// Largest node weight; weights are in `(0, MAX_WEIGHT]`.
pub const MAX_WEIGHT: f64 = 1_000_000.0;
