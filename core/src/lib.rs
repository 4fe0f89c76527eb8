//! # shardroute
//!
//! One deterministic routing core for sharded systems. A [`Router`] is built from a
//! JSON *topology document* (format version, epoch, key hashing, nodes, strategy) and
//! answers, for any key, which shard and which node own it, and which nodes hold its
//! replicas. The same document gives bit-for-bit the same answers in Rust, Python,
//! Node.js and WebAssembly: the bindings are thin shells over this crate, and a shared
//! suite of conformance vectors proves it.
//!
//! ```
//! use shardroute::Router;
//! let router = Router::from_json(r#"{
//!     "format": "shardroute/1",
//!     "epoch": 3,
//!     "nodes": [{"id": "db-0"}, {"id": "db-1"}, {"id": "db-2", "weight": 2}],
//!     "strategy": {"type": "ring", "points_per_node": 160}
//! }"#)?;
//! let node = router.node("user:1001")?;
//! let preference = router.replicas("user:1001", 2)?;
//! assert_eq!(preference[0], node);
//! assert_eq!(router.epoch(), 3);
//! # Ok::<(), shardroute::Error>(())
//! ```
//!
//! ## Where things are
//!
//! The module tree is the catalogue:
//!
//! * [`strategy`]: the shard functions, one module each, whose docs give the algorithm,
//!   its guarantees, cost and source. [`strategy::hashed`] computes a node from the hash
//!   and the node list ([`modulo`](strategy::hashed::modulo) with the doubling trick,
//!   [`jump`](strategy::hashed::jump), [`ring`](strategy::hashed::ring),
//!   [`rendezvous`](strategy::hashed::rendezvous), [`maglev`](strategy::hashed::maglev),
//!   [`ketama`](strategy::hashed::ketama)); [`strategy::partitioned`] reads it from a
//!   table the document states (vbuckets, multilevel maps, trie leaves, token rings, key
//!   and hash ranges, directories); [`strategy::ids`] reads it out of ids that carry
//!   their shard; [`strategy::compat`] reproduces real systems bit for bit (Redis Cluster,
//!   Kafka, Couchbase, Cassandra, vshard, Vitess, Elasticsearch).
//! * [`ops`]: every topology change as a typed [`Op`](ops::Op) (add a node, split a
//!   range, plan a rebalance, import a Redis slot table, ...), applied to a [`Topology`]
//!   to give the next one and its report.
//! * [`planner`], [`disruption`] and [`diff`]: what a change moves, planned with minimal
//!   movement, measured, or listed key by key; [`migration`]: where services read and
//!   write, and what a copy job moves, while the data moves; [`dictionary`] is the vbucket
//!   dictionary's binary form.
//! * [`explain`]: one lookup retraced (bytes hashed, hash, the vbucket, slot, token,
//!   range, leaf or partition hit, owner) for tools and debugging.
//! * [`hash`] holds the hash functions, [`hashing`] how a document hashes keys; across
//!   strategies, [`placement_names`] (`locate`) and [`salting`] (hot keys); [`key`] and
//!   [`argument`] are what the bindings convert arguments with, and how they refuse them.
//!
//! `docs/architecture.md` in the repository draws the path of a key and of a change, and
//! `docs/choosing.md` compares the strategies side by side, measured.
//!
//! ## Determinism
//!
//! Every hash and index is an explicit `u32`/`u64` (wasm32's `usize` is 32 bits). No
//! routing decision calls a platform float function: jump hash uses only IEEE
//! division, weighted rendezvous takes its logarithm from the software `libm`.
//!
//! ## Errors
//!
//! One [`Error`] type; its [`ErrorKind`] has a stable string code (every kind is in
//! [`ErrorKind::ALL`], each documented with its code) that every binding exposes. No
//! function of this crate panics on any input.
//!
//! ## Crate features
//!
//! * `std` (default): implements `std::error::Error` for [`Error`] and picks vector
//!   instructions at run time (jump batches, CRC-32 of long keys). Everything else is
//!   `no_std` + `alloc`: build with `default-features = false` for wasm or embedded;
//!   answers are the same either way.
//! * one per strategy, named as its `type` (`jump`, `redis_cluster`, `vbucket`, ...), all
//!   in `all-strategies` (default): a build without a strategy's feature has none of its
//!   code (no [`Strategy`] variant, parser, writer or placement), refuses its documents
//!   (`invalid_topology`, "not built in") and the operations that would make one
//!   (`invalid_argument`), for a smaller WebAssembly package. [`session::redis`] needs
//!   `redis_cluster`. With `default-features = false`, name the strategies, or
//!   `all-strategies`.
#![no_std]
#![deny(missing_docs)]
// One exception, in `strategy::hashed::jump`'s `isa` module: the run-time choice of
// vector instructions for batches, behind the processor's own answer.
#![deny(unsafe_code)]
// A build with no strategy at all (`default-features = false` and none named) still
// builds, but holds no topology: `Strategy` is an empty enum, so the compiler sees the
// code after making one as unreachable and its inputs as unused, and would say so a
// hundred times. The list is Cargo.toml's `all-strategies`.
#![cfg_attr(
    not(any(
        feature = "modulo",
        feature = "jump",
        feature = "ring",
        feature = "rendezvous",
        feature = "vbucket",
        feature = "key_range",
        feature = "hash_range",
        feature = "directory",
        feature = "multilevel",
        feature = "trie",
        feature = "token_ring",
        feature = "maglev",
        feature = "id_bits",
        feature = "id_groups",
        feature = "cassandra",
        feature = "redis_cluster",
        feature = "vitess",
        feature = "kafka",
        feature = "elasticsearch",
        feature = "ketama",
        feature = "couchbase",
        feature = "vshard",
    )),
    allow(unreachable_code, unused, dead_code)
)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod argument;
pub mod dictionary;
pub mod diff;
pub mod disruption;
pub mod error;
pub mod explain;
pub mod hash;
pub mod hashing;
pub mod indexes;
mod json;
pub mod key;
pub mod limits;
pub mod migration;
pub mod node;
pub mod ops;
pub mod placement_names;
pub mod planner;
pub mod router;
pub mod salting;
pub mod scatter;
pub mod service;
pub mod session;
pub mod stats;
pub mod strategy;
pub mod topology;

pub use error::{Error, ErrorKind, Result};
pub use hashing::KeyHashing;
pub use key::{Key, OwnedKey};
pub use node::{Node, NodeState};
pub use placement_names::Location;
pub use router::Router;
pub use strategy::hashed::jump::jump;
pub use strategy::{DecodedId, Strategy};
pub use topology::Topology;

/// The hash of `key` under a hashing spec: the bare function for users who bring their
/// own placement. The same as `spec.hash(key)`.
///
/// # Example
/// ```
/// use shardroute::{hash_key, KeyHashing};
/// let crc = KeyHashing::from_json(r#"{"function": "crc32"}"#).unwrap();
/// assert_eq!(hash_key("123456789", &crc), 0xCBF4_3926);
/// ```
pub fn hash_key<'k>(key: impl Into<Key<'k>>, spec: &KeyHashing) -> u64 {
    spec.hash(key.into())
}

/// The Rust examples of the repository README, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
