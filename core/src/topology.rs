//! The topology document: one JSON value that describes a whole router.
//!
//! ```json
//! {
//!   "format": "shardroute/1",
//!   "epoch": 7,
//!   "hashing": {"function": "siphash-2-4", "hash_tag": "redis"},
//!   "nodes": [
//!     {"id": "cache-a", "address": "10.0.0.1:6379", "weight": 1, "zone": "eu-1a"},
//!     {"id": "cache-b", "address": "10.0.0.2:6379"}
//!   ],
//!   "strategy": {"type": "ring", "points_per_node": 160}
//! }
//! ```
//!
//! | field | type | default | meaning |
//! |---|---|---|---|
//! | `format` | `"shardroute/1"` | required | the document format version |
//! | `epoch` | u64 (number or decimal string) | required | version of this topology; higher is newer |
//! | `hashing` | object | SipHash-2-4, no tag | see [`KeyHashing`] |
//! | `nodes` | array, 1 to 65 536 | required | in order: the order is part of the placement |
//! | `nodes[i].id` | non-empty string, unique | required | what `node(key)` returns |
//! | `nodes[i].address` | string | absent | carried for clients; not used in placement |
//! | `nodes[i].weight` | number in (0, 1e6] | 1 | relative capacity (strategies that support it) |
//! | `nodes[i].zone` | string | absent | failure domain; carried for clients and planners |
//! | `nodes[i].state` | `"active"`, `"draining"`, `"failed"` | `"active"` | a draining node is being emptied, a failed one has lost its data; the rebalance planner acts on both, routing follows the table |
//! | `strategy` | object with `type` | required | see [`Strategy`] |
//! | `placement` | object: name → template | absent | names rendered per shard by `locate` (see [`crate::placement_names`]) |
//! | `hot_keys` | object | absent | keys salted over several shards (see [`crate::salting`]) |
//! | `indexes` | object: name → `{strategy, hashing}` | absent | global secondary indexes, routed by term over the same nodes (see [`crate::indexes`]) |
//! | `node_groups` | object: name → array of node ids | absent | named subsets of the nodes, in their own order (see [`tables`]) |
//! | `table_families` | object: name → `{tables, group, strategy, hashing}` or `{tables, group, reference: true}` | absent | which tables route by which rule over which group; reference tables live on every node of their group (see [`tables`]) |
//! | `tenants` | object: `{partition_key, entries}` | absent | per-tenant placement on a node group or zone and spreading over shards (see [`tenants`]) |
//! | `tenants.partition_key` | a `partition_key` rule | the document's `hashing.partition_key` | how a key's tenant is found |
//! | `tenants.entries` | object: tenant → `{group, zone, shards}` | required | `group`: a `node_groups` name; `zone`: a node zone; `shards`: 1 to 1,024 buckets; at least one of them |
//! | `checksum` | `"xxh64:<16 hex digits>"` | absent | XXH64 (seed 0) of the canonical JSON of the rest of the document; verified on load, so a truncated or edited copy is refused |
//! | `$schema` | string | absent | where editors find the JSON Schema (`docs/topology.schema.json` in the repository); ignored, and left out of the canonical form (and so of the checksum) |
//!
//! Parsing is strict: unknown fields anywhere, a field named twice in one object (JSON
//! text), wrong types, duplicate ids and out-of-range values are `invalid_topology`
//! errors whose message starts with the path of the field (`nodes[3].weight: ...`).
//! Sizes beyond [`crate::limits`] are `limit_exceeded`, nesting of arrays and objects
//! past [`MAX_JSON_NESTING`](crate::limits::MAX_JSON_NESTING) (64) levels among them. An
//! empty node list is `no_nodes`.
//!
//! [`Topology::to_json`] writes the canonical form: every field spelled out (defaults
//! included), object keys sorted, u64 values above 2^53 - 1 as decimal strings so that
//! JavaScript reads them exactly. Parsing the canonical form gives an equal topology.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::limits;
use crate::node::{self, Node};
use crate::placement_names::PlacementNames;
use crate::salting::HotKeys;
use crate::strategy::Strategy;

pub mod tables;
pub mod tenants;

/// The one document format this version reads and writes.
pub const FORMAT: &str = "shardroute/1";

/// A parsed, validated topology document.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// Version of this topology; a higher epoch is newer.
    pub epoch: u64,
    /// How keys are hashed.
    pub hashing: KeyHashing,
    /// The nodes, in document order.
    pub nodes: Vec<Node>,
    /// The shard function and its parameters.
    pub strategy: Strategy,
    /// Name templates rendered per shard by `locate` (empty when absent).
    pub placement: Option<PlacementNames>,
    /// Hot keys salted over several shards.
    pub hot_keys: Option<HotKeys>,
    /// Global secondary indexes, sorted by name (empty when absent).
    pub indexes: Vec<crate::indexes::Index>,
    /// Node groups, table families and tenants (`None` when the document names none of
    /// them; see [`tables`] and [`tenants`]; [`Topology::tenants`] reads the last).
    pub tables: Option<tables::Tables>,
    /// Whether the canonical form carries a `checksum` (set when the loaded document had
    /// one; operations keep it).
    pub checksummed: bool,
}

impl Topology {
    /// Parses and validates a topology document from JSON text.
    ///
    /// # Errors
    /// `invalid_topology` (naming the field), `no_nodes` or `limit_exceeded`.
    pub fn from_json(text: &str) -> Result<Topology> {
        if text.len() as u64 > limits::MAX_DOCUMENT_BYTES {
            return Err(Error::limit(format!(
                "the document is {} bytes; the limit is {}",
                text.len(),
                limits::MAX_DOCUMENT_BYTES
            )));
        }
        let value = json::parse(text, "the document", ErrorKind::InvalidTopology)?;
        Topology::from_value(&value)
    }

    /// Parses and validates a topology document from a JSON value.
    ///
    /// # Errors
    /// As [`Topology::from_json`].
    pub fn from_value(value: &Value) -> Result<Topology> {
        let object = Object::new(
            "",
            value,
            &[
                "$schema",
                "format",
                "epoch",
                "hashing",
                "nodes",
                "strategy",
                "placement",
                "hot_keys",
                "indexes",
                "node_groups",
                "table_families",
                "tenants",
                "checksum",
            ],
        )?;
        // Where editors find the JSON Schema (docs/topology.schema.json): read, so a
        // misspelt value is caught, and otherwise ignored (the canonical form leaves it out).
        if let Some(value) = object.optional("$schema") {
            json::str("$schema", value)?;
        }
        let format = json::str("format", object.required("format")?)?;
        if format != FORMAT {
            return Err(json::at(
                "format",
                format_args!("unsupported format {format:?}; this version reads {FORMAT:?}"),
            ));
        }
        let epoch = json::u64("epoch", object.required("epoch")?)?;
        let hashing = match object.optional("hashing") {
            Some(value) => KeyHashing::from_value("hashing", value)?,
            None => KeyHashing::default(),
        };
        let nodes = node::parse_list(object.required("nodes")?)?;
        let strategy = Strategy::from_value("strategy", object.required("strategy")?, &nodes)?;
        let placement = match object.optional("placement") {
            Some(value) => Some(PlacementNames::from_value("placement", value)?),
            None => None,
        };
        let hot_keys = match object.optional("hot_keys") {
            Some(value) => Some(HotKeys::from_value("hot_keys", value)?),
            None => None,
        };
        let indexes = match object.optional("indexes") {
            Some(value) => crate::indexes::parse("indexes", value, &nodes)?,
            None => Vec::new(),
        };
        #[cfg(feature = "tables")]
        let tables = tables::Tables::parse(object.optional("node_groups"), object.optional("table_families"), &nodes)?;
        #[cfg(not(feature = "tables"))]
        let tables = tables::not_built_in(object.optional("node_groups"), object.optional("table_families"))?;
        #[cfg(feature = "tables")]
        let tenants = match object.optional("tenants") {
            Some(value) => Some(tenants::Tenants::parse(value)?),
            None => None,
        };
        #[cfg(not(feature = "tables"))]
        let tenants = tenants::not_built_in(object.optional("tenants"))?;
        // Tenants ride with the node groups they are placed on.
        let tables = match (tables, tenants) {
            (tables, None) => tables,
            (Some(tables), tenants) => Some(tables::Tables { tenants, ..tables }),
            (None, tenants) => Some(tables::Tables { tenants, ..tables::Tables::default() }),
        };
        let checksum = match object.optional("checksum") {
            Some(value) => Some(json::str("checksum", value)?),
            None => None,
        };
        let topology = Topology {
            epoch,
            hashing,
            nodes,
            strategy,
            placement,
            hot_keys,
            indexes,
            tables,
            checksummed: checksum.is_some(),
        };
        topology.check_tenants()?;
        topology.check_hot_keys()?;
        if let Some(given) = checksum {
            let expected = topology.checksum();
            if given != expected {
                return Err(json::at(
                    "checksum",
                    format_args!(
                        "{given:?} does not match the content ({expected}): the document was truncated or edited"
                    ),
                ));
            }
        }
        Ok(topology)
    }

    /// The rules of a whole document, on typed values: the node list's
    /// ([`check_list`](crate::node)) and the strategy's against it (weights, and the
    /// tables that name nodes). Parsing ends with the same checks, and so does every
    /// operation ([`crate::ops`]), so an edit cannot produce what a document could not say.
    ///
    /// # Errors
    /// `no_nodes`, `invalid_topology` or `limit_exceeded`, as parsing would report them.
    pub(crate) fn check(&self) -> Result<()> {
        node::check_list(&self.nodes)?;
        self.strategy.check(&self.nodes)?;
        for index in &self.indexes {
            index.strategy.check(&self.nodes)?;
        }
        // The tenants first: an operation that would break a placement is refused naming
        // the tenant, before the groups' own rule names the group.
        self.check_tenants()?;
        #[cfg(feature = "tables")]
        if let Some(tables) = &self.tables {
            tables.check(&self.nodes)?;
        }
        self.check_hot_keys()
    }

    /// The `tenants` section's rules against the rest of the document ([`tenants`]).
    fn check_tenants(&self) -> Result<()> {
        // Without the `tables` feature no document has tenants (the reader refuses them).
        #[cfg(feature = "tables")]
        if let Some(tenants) = self.tenants() {
            return tenants.check(self);
        }
        Ok(())
    }

    /// The `tenants` section, when the document has one ([`tenants`]).
    pub fn tenants(&self) -> Option<&tenants::Tenants> {
        self.tables.as_ref().and_then(|tables| tables.tenants.as_ref())
    }

    /// Refuses hot keys whose salt the `partition_key` rule cuts off: their salted keys
    /// would share one partition key, so one shard, and salting would spread nothing.
    /// Also refuses hot keys when the keys are integers (`hashing.keys: "u64"`): a salted key
    /// is text (`key + separator + salt`), never an integer, so it could not be routed.
    fn check_hot_keys(&self) -> Result<()> {
        let Some(hot) = &self.hot_keys else { return Ok(()) };
        if self.hashing.keys == crate::hashing::KeyType::U64 {
            return Err(json::at(
                "hot_keys",
                "the keys are integers (hashing.keys: \"u64\") and a salted key is text (key + separator + salt), which no integer key type routes; leave hot_keys out, or declare the keys as bytes",
            ));
        }
        if self.hashing.partition_key == crate::hashing::PartitionKey::Whole {
            return Ok(());
        }
        for (key, fanout) in &hot.keys {
            let (first, second) = (hot.salt(key, 0), hot.salt(key, 1));
            if *fanout > 1 && self.hashing.routed_bytes(&first) == self.hashing.routed_bytes(&second) {
                return Err(json::at(
                    "hot_keys.keys",
                    format_args!(
                        "{}: the partition_key rule cuts its salt off ({} and {} have one partition key), so salting it would spread nothing; salt the partition key instead",
                        crate::strategy::partitioned::key_table::key_to_value(crate::Key::Bytes(key)),
                        crate::strategy::partitioned::key_table::key_to_value(crate::Key::Bytes(&first)),
                        crate::strategy::partitioned::key_table::key_to_value(crate::Key::Bytes(&second)),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The epoch of the topology that follows this one: one more, refusing to wrap. What
    /// every operation ([`crate::ops::next_epoch`]) and [`Router::moved`](crate::Router::moved)
    /// give their result.
    ///
    /// # Errors
    /// `invalid_topology` at `u64::MAX`: `epoch: already at its maximum; cannot advance`.
    pub(crate) fn next_epoch(&self) -> Result<u64> {
        self.epoch.checked_add(1).ok_or_else(|| json::at("epoch", "already at its maximum; cannot advance"))
    }

    /// The canonical JSON value of this topology.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.put("format", FORMAT.into());
        map.put("epoch", json::u64_value(self.epoch));
        map.put("hashing", self.hashing.to_value());
        let nodes = self.nodes.iter().map(Node::to_value).collect();
        map.put("nodes", Value::Array(nodes));
        map.put("strategy", self.strategy.to_value(&self.nodes));
        if !self.indexes.is_empty() {
            map.put("indexes", crate::indexes::to_value(&self.indexes, &self.nodes));
        }
        #[cfg(feature = "tables")]
        if let Some(tables) = &self.tables {
            // A document with tenants and neither of the other sections keeps them out.
            if tables.tenants.is_none() || !tables.groups.is_empty() || !tables.families.is_empty() {
                let (groups, families) = tables.to_values(&self.nodes);
                map.put("node_groups", groups);
                map.put("table_families", families);
            }
            if let Some(tenants) = &tables.tenants {
                map.put("tenants", tenants.to_value());
            }
        }
        if let Some(placement) = &self.placement {
            map.put("placement", placement.to_value());
        }
        if let Some(hot_keys) = &self.hot_keys {
            map.put("hot_keys", hot_keys.to_value());
        }
        if self.checksummed {
            map.put("checksum", Value::String(self.checksum()));
        }
        Value::Object(map)
    }

    /// The checksum of the content: `"xxh64:"` and the 16 hex digits of XXH64 (seed 0) of
    /// the canonical compact JSON of the document without its `checksum` field.
    pub fn checksum(&self) -> String {
        let content = Topology { checksummed: false, ..self.clone() }.to_json();
        format!("xxh64:{:016x}", crate::hash::xxh64(content.as_bytes(), 0))
    }

    /// The canonical JSON text of this topology (compact, keys sorted).
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}
