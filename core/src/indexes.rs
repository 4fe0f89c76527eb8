//! Global secondary indexes: term-partitioned, each routed by its own strategy over the
//! document's nodes (DDIA, chapter 6, "Partitioning Secondary Indexes by Term").
//!
//! A *local* index lives beside its documents on every shard, so a query by term asks
//! every shard: that is the scatter plan over every shard ([`crate::scatter`]). A
//! *global* index is partitioned by the term itself: the entry for `sender = alice`
//! lives on the shard that the index's own strategy picks for `alice`, whichever shards
//! hold alice's messages. A lookup asks one index shard (or the index shards of a term
//! range) and then the data shards of the ids it found; a write updates the document's
//! shard and the index shard of each of its terms.
//!
//! The topology document names its indexes beside its strategy, over the same nodes and
//! at the same epoch, so one document (and one epoch) describes the data and every index:
//!
//! ```json
//! "indexes": {
//!   "by_sender": {"strategy": {"type": "jump"}},
//!   "by_day": {"strategy": {"type": "key_range", "boundaries": [{"utf8": "2026-07"}]}}
//! }
//! ```
//!
//! Each index has a `strategy` (any but the compatibility profiles, whose systems have no
//! such index) and an optional `hashing` section of its own, default SipHash-2-4 over the
//! whole term. [`Router::index`](crate::Router::index) gives an index's router: route a
//! term with it, or plan a term range with its scatter plans.
//! [`Router::index_write_plan`](crate::Router::index_write_plan) lists what one write
//! touches. Operations that change the node list change every index with it.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::node::Node;
use crate::strategy::Strategy;

/// Most indexes one document can name.
pub const MAX_INDEXES: u32 = 64;

/// One global index: its name, how its terms are hashed and the strategy that places them.
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    /// The index's name (what [`Router::index`](crate::Router::index) takes).
    pub name: String,
    /// How its terms are hashed.
    pub hashing: KeyHashing,
    /// Where its terms live, over the document's nodes.
    pub strategy: Strategy,
}

/// Compatibility profiles place keys as their systems do; none of those systems keeps a
/// term-partitioned index placed by such a profile, so an index refuses them.
const PROFILES: [&str; 8] =
    ["cassandra", "couchbase", "elasticsearch", "kafka", "ketama", "redis_cluster", "vitess", "vshard"];

/// Reads the `indexes` section: an object from index name to `{strategy, hashing}`,
/// sorted by name.
pub(crate) fn parse(path: &str, value: &Value, nodes: &[Node]) -> Result<Vec<Index>> {
    let map = value.as_object().ok_or_else(|| {
        json::at(
            path,
            format_args!(
                "expected an object mapping each index name to its strategy, found {}",
                json::type_name(value)
            ),
        )
    })?;
    if map.len() > MAX_INDEXES as usize {
        return Err(Error::limit(format!("{path}: {} indexes; the limit is {MAX_INDEXES}", map.len())));
    }
    let mut indexes = Vec::with_capacity(map.len());
    for (name, spec) in map {
        let at = json::join(path, name);
        json::id(&at, &Value::String(name.clone()))?;
        let object = Object::new(&at, spec, &["strategy", "hashing"])?;
        let hashing = match object.optional("hashing") {
            Some(value) => KeyHashing::from_value(&object.path_of("hashing"), value)?,
            None => KeyHashing::default(),
        };
        let strategy_path = object.path_of("strategy");
        let strategy = Strategy::from_value(&strategy_path, object.required("strategy")?, nodes)?;
        if PROFILES.contains(&strategy.type_name()) {
            return Err(json::at(
                &strategy_path,
                format_args!(
                    "the {} profile places keys as its own system does, which keeps no term-partitioned index; index with one of the general strategies",
                    strategy.type_name()
                ),
            ));
        }
        indexes.push(Index { name: name.to_string(), hashing, strategy });
    }
    // serde_json's map iterates in key order: the list is sorted by name already.
    Ok(indexes)
}

/// The canonical `indexes` section.
pub(crate) fn to_value(indexes: &[Index], nodes: &[Node]) -> Value {
    let mut map = Map::new();
    for index in indexes {
        let mut spec = Map::new();
        spec.put("hashing", index.hashing.to_value());
        spec.put("strategy", index.strategy.to_value(nodes));
        map.insert(index.name.clone(), Value::Object(spec));
    }
    Value::Object(map)
}

/// The index named `name`, or `invalid_argument` naming the ones there are.
pub(crate) fn find<'i, T>(indexes: &'i [(String, T)], name: &str) -> Result<&'i T> {
    match indexes.binary_search_by(|(listed, _)| listed.as_str().cmp(name)) {
        Ok(at) => Ok(&indexes[at].1),
        Err(_) => {
            let names: Vec<&str> = indexes.iter().map(|(listed, _)| listed.as_str()).collect();
            Err(Error::argument(if names.is_empty() {
                format!("index {name:?}: this topology has no indexes")
            } else {
                format!("index {name:?}: not in this topology; it has {}", names.join(", "))
            }))
        }
    }
}

/// What one write touches ([`Router::index_write_plan`](crate::Router::index_write_plan)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WritePlan {
    /// The document's shard.
    pub shard: u32,
    /// Its owner (an index into the node list).
    pub node: u32,
    /// One visit per index and index shard, in the order of their first term.
    pub indexes: Vec<IndexVisit>,
}

/// An index shard a write updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexVisit {
    /// The index.
    pub index: String,
    /// The index shard that holds the entries of [`terms`](IndexVisit::terms).
    pub shard: u32,
    /// Its owner (an index into the node list).
    pub node: u32,
    /// The positions of its terms in the plan's input, increasing.
    pub terms: Vec<u32>,
}

impl WritePlan {
    /// The plan as JSON: `{"shard", "node", "indexes": [{"index", "shard", "node",
    /// "terms"}]}`, nodes by id (what the bindings return and the vectors record).
    pub fn to_value(&self, router: &crate::Router) -> Value {
        let id = |node: u32| Value::String(router.nodes()[node as usize].id.clone());
        let visits = self
            .indexes
            .iter()
            .map(|visit| {
                let mut map = Map::new();
                map.put("index", Value::String(visit.index.clone()));
                map.put("shard", visit.shard.into());
                map.put("node", id(visit.node));
                map.put("terms", Value::Array(visit.terms.iter().map(|&at| at.into()).collect()));
                Value::Object(map)
            })
            .collect();
        let mut map = Map::new();
        map.put("shard", self.shard.into());
        map.put("node", id(self.node));
        map.put("indexes", Value::Array(visits));
        Value::Object(map)
    }
}
