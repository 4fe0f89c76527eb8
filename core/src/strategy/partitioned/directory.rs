//! Directory (table) sharding: an explicit key → node table, with a fallback strategy
//! for every key the table does not list. This is directory-based partitioning, the
//! lookup table of a `user_to_shard` column: Vitess's lookup vindexes and the
//! shop-to-pod table of Shopify's pods are this shape, with a hash function behind it
//! for everything not yet pinned.
//!
//! **Algorithm.** The table is sorted once; a key is looked up by binary search. A
//! listed key goes to its entry's node; any other key goes where the `fallback`
//! strategy alone would send it. Entries match a key's *routing bytes*, the bytes its
//! hash would see: the whole key, or under `"hash_tag": "redis"` its `{tag}`, so keys
//! that share a hash tag keep sharing a node (an entry for `user:1` moves
//! `{user:1}.profile` and `{user:1}.posts` together). Byte keys and integer keys are
//! distinct kinds: the entry `{"u64": "42"}` never matches the text `"42"` or the 8
//! bytes of 42.
//!
//! **Guarantees.** Entries always win; every other key routes exactly as the fallback
//! strategy alone routes it, so adding or removing an entry moves that entry's keys
//! and nothing else, and a node change moves only what the fallback moves (for the
//! fallback's keys) plus nothing for listed keys. Balance is the fallback's, plus
//! whatever the table puts where. The shard of a key is its node index, as for the
//! fallback strategies.
//!
//! **Replicas.** The owner first, then the fallback's preference order for the same
//! key with the owner left out: a listed key's second choice is the fallback's
//! first choice (unless that is the owner itself), so promoting a replica after the
//! owner fails lands where the key would go without its entry.
//!
//! **The document.**
//! `{"type": "directory", "entries": [{"key": {"utf8": "user:1"}, "node": "b"}, {"key":
//! {"u64": "42"}, "node": "a"}], "fallback": {"type": "jump"}}`. A key is written as in
//! the conformance vectors: `{"utf8": text}`, `{"hex": bytes}` or `{"u64": integer}` (a
//! number or a decimal string). `entries` defaults to `[]`; `fallback` is required and
//! is any strategy whose shards are node indices: `modulo` (0-based), `jump`, `ring` or
//! `rendezvous` (a directory cannot fall back to another directory: merge the tables).
//! Node weights are the fallback's business (accepted by `ring` and `rendezvous`). At
//! most [`MAX_KEY_TABLE_ENTRIES`](crate::limits::MAX_KEY_TABLE_ENTRIES) entries (a
//! million pinned keys is far beyond a hot-key list; past that, a lookup service is
//! the better tool); a key may be listed once. Under `"hash_tag": "redis"` an entry
//! whose key has a tag could never match (its keys route by the tag), so building a
//! router from it fails with `invalid_topology`: list the tag instead.
//!
//! **Canonical form.** Entries sorted, byte keys (bytewise) before integer keys
//! (numerically); key objects as everywhere in the document (`u64` as a decimal string,
//! `utf8` for text without control characters, else lowercase `hex`). The fallback is
//! written in its own canonical form.
//!
//! **Cost.** A lookup is a binary search, `O(log E)` comparisons over `E` entries with
//! no allocation, then for unlisted keys the fallback's own cost. Memory: the key
//! bytes plus 8 bytes per entry (keys are stored back to back, not as separate
//! allocations).
//!
//! **Operations.** `directory_set` adds or replaces an entry, `directory_remove` drops
//! one (see [`crate::ops`]); `add_node` and `remove_node` edit the node list the
//! fallback is derived from.
//!
//! # Example
//! ```
//! use shardroute::Router;
//! let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
//!     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
//!     "hashing": {"hash_tag": "redis"},
//!     "strategy": {"type": "directory", "fallback": {"type": "jump"},
//!                  "entries": [{"key": {"utf8": "user:1"}, "node": "c"}]}}"#)?;
//! assert_eq!(router.node("user:1")?, "c");
//! assert_eq!(router.node("{user:1}.posts")?, "c"); // the tag is what is listed
//! assert_eq!(router.route("user:1")?, 2); // the shard is the node's index
//! assert_eq!(router.replicas("user:1", 3)?[0], "c");
//! # Ok::<(), shardroute::Error>(())
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::node::{self, Node};
use crate::strategy::hashed::jump::{Jump, JumpSpec};
use crate::strategy::hashed::modulo::{Modulo, ModuloSpec};
use crate::strategy::hashed::rendezvous::{Rendezvous, RendezvousSpec};
use crate::strategy::hashed::ring::{Ring, RingSpec};
use crate::strategy::partitioned::key_table::{check_table_keys, key_to_value, parse_key_table, routing_key, KeyTable};
use crate::strategy::spec::{check_weights, still_named, Place, Spec};

/// `{"type": "directory", "entries": [...], "fallback": {...}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectorySpec {
    /// `(key, node index)` pairs, sorted in canonical key order, keys unique.
    pub entries: Vec<(crate::key::OwnedKey, u32)>,
    /// Where unlisted keys go.
    pub fallback: Fallback,
}

/// What a directory falls back to: a strategy whose shards are node indices
/// (`owner(shard) == shard` over `0..n`), so a listed key and an unlisted one are
/// numbered alike.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Fallback {
    /// `modulo`, 0-based.
    Modulo(ModuloSpec),
    /// `jump`.
    Jump(JumpSpec),
    /// `ring`.
    Ring(RingSpec),
    /// `rendezvous`.
    Rendezvous(RendezvousSpec),
}

/// Reads a fallback of one of the allowed types `$spec` at `$path`.
macro_rules! read_fallback {
    ($kind:expr, $path:expr, $value:expr, $nodes:expr, $($variant:ident => $spec:ty,)*) => {
        $(
            if $kind == <$spec as Spec>::TYPE {
                let object = Object::new($path, $value, <$spec as Spec>::FIELDS)?;
                check_weights($kind, <$spec as Spec>::WEIGHTED, $nodes)?;
                let spec = <$spec as Spec>::parse(&object, $nodes)?;
                spec.check($nodes)?;
                return Ok(Fallback::$variant(spec));
            }
        )*
    };
}

impl Fallback {
    fn from_value(path: &str, value: &Value, nodes: &[Node]) -> Result<Fallback> {
        let kind = match value.get("type") {
            Some(kind) => json::str(&json::join(path, "type"), kind)?,
            None if value.is_object() => return Err(json::at(&json::join(path, "type"), "missing required field")),
            None => return Err(json::at(path, format_args!("expected an object, found {}", json::type_name(value)))),
        };
        if kind == DirectorySpec::TYPE {
            return Err(json::at(
                &json::join(path, "type"),
                "a directory cannot fall back to another directory; merge their entries",
            ));
        }
        let fallback = (|| -> Result<Fallback> {
            read_fallback!(kind, path, value, nodes,
                Modulo => ModuloSpec, Jump => JumpSpec, Ring => RingSpec, Rendezvous => RendezvousSpec,);
            Err(json::at(
                path,
                format_args!(
                    "the {kind} strategy does not number its shards by node; a fallback must be modulo (0-based), jump, ring or rendezvous"
                ),
            ))
        })()?;
        if matches!(fallback, Fallback::Modulo(ModuloSpec { one_based: true })) {
            return Err(json::at(
                path,
                "the modulo strategy with one_based does not number its shards by node; a fallback must be modulo (0-based), jump, ring or rendezvous",
            ));
        }
        Ok(fallback)
    }

    fn type_name(&self) -> &'static str {
        match self {
            Fallback::Modulo(_) => ModuloSpec::TYPE,
            Fallback::Jump(_) => JumpSpec::TYPE,
            Fallback::Ring(_) => RingSpec::TYPE,
            Fallback::Rendezvous(_) => RendezvousSpec::TYPE,
        }
    }

    fn to_value(&self, nodes: &[Node]) -> Value {
        let mut object = Map::new();
        object.put("type", self.type_name().into());
        match self {
            Fallback::Modulo(spec) => spec.write(&mut object, nodes),
            Fallback::Jump(spec) => spec.write(&mut object, nodes),
            Fallback::Ring(spec) => spec.write(&mut object, nodes),
            Fallback::Rendezvous(spec) => spec.write(&mut object, nodes),
        }
        Value::Object(object)
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        let weighted = match self {
            Fallback::Modulo(_) => ModuloSpec::WEIGHTED,
            Fallback::Jump(_) => JumpSpec::WEIGHTED,
            Fallback::Ring(_) => RingSpec::WEIGHTED,
            Fallback::Rendezvous(_) => RendezvousSpec::WEIGHTED,
        };
        check_weights(self.type_name(), weighted, nodes)
    }

    pub(crate) fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<FallbackPlacement> {
        Ok(match self {
            Fallback::Modulo(spec) => FallbackPlacement::Modulo(spec.compile(hashing, nodes)?),
            Fallback::Jump(spec) => FallbackPlacement::Jump(spec.compile(hashing, nodes)?),
            Fallback::Ring(spec) => FallbackPlacement::Ring(spec.compile(hashing, nodes)?),
            Fallback::Rendezvous(spec) => FallbackPlacement::Rendezvous(spec.compile(hashing, nodes)?),
        })
    }
}

/// A compiled fallback.
#[derive(Clone, Debug)]
pub(crate) enum FallbackPlacement {
    Modulo(Modulo),
    Jump(Jump),
    Ring(Ring),
    Rendezvous(Rendezvous),
}

impl FallbackPlacement {
    fn place(&self) -> &dyn Place {
        match self {
            FallbackPlacement::Modulo(place) => place,
            FallbackPlacement::Jump(place) => place,
            FallbackPlacement::Ring(place) => place,
            FallbackPlacement::Rendezvous(place) => place,
        }
    }

    /// The node a key goes to by the fallback alone.
    pub(crate) fn node_of(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        let place = self.place();
        Ok(place.owner(place.shard(hashing, key)?))
    }
}

impl Spec for DirectorySpec {
    const TYPE: &'static str = "directory";
    const FIELDS: &'static [&'static str] = &["type", "entries", "fallback"];
    // The fallback decides whether weights mean something; it checks them itself.
    const WEIGHTED: bool = true;
    type Placement = Directory;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<DirectorySpec> {
        let entries = match object.optional("entries") {
            None => Vec::new(),
            Some(value) => parse_key_table(&object.path_of("entries"), value, &["key", "node"], |path, value| {
                node::index_from_value(path, value, nodes)
            })?,
        };
        let fallback = Fallback::from_value(&object.path_of("fallback"), object.required("fallback")?, nodes)?;
        Ok(DirectorySpec { entries, fallback })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        if let Some(index) = self.entries.iter().position(|&(_, node)| node as usize >= nodes.len()) {
            return Err(json::at(
                &format!("strategy.entries[{index}].node"),
                format_args!("node index {} is past the node list", self.entries[index].1),
            ));
        }
        self.fallback.check(nodes)
    }

    fn follows_node_list(&self) -> bool {
        // Entries name nodes by id; the fallback is derived from the list.
        true
    }

    fn node_removed(&mut self, index: u32, nodes: &[Node]) -> Result<()> {
        for (position, (_, node)) in self.entries.iter_mut().enumerate() {
            match (*node).cmp(&index) {
                core::cmp::Ordering::Equal => {
                    return Err(still_named(&format!("strategy.entries[{position}].node"), nodes, index))
                }
                core::cmp::Ordering::Greater => *node -= 1,
                core::cmp::Ordering::Less => {}
            }
        }
        Ok(())
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        let entries = self
            .entries
            .iter()
            .map(|(key, node)| {
                let mut entry = Map::new();
                entry.put("key", key_to_value(key.as_key()));
                entry.put("node", Value::String(nodes[*node as usize].id.clone()));
                Value::Object(entry)
            })
            .collect();
        object.put("entries", Value::Array(entries));
        object.put("fallback", self.fallback.to_value(nodes));
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<Directory> {
        check_table_keys("strategy.entries", hashing, &self.entries)?;
        Ok(Directory {
            table: KeyTable::build(&self.entries),
            fallback: self.fallback.compile(hashing, nodes)?,
            nodes: nodes.len() as u32,
        })
    }
}

/// A compiled directory: the sorted table and the compiled fallback.
#[derive(Clone, Debug)]
pub struct Directory {
    table: KeyTable,
    fallback: FallbackPlacement,
    nodes: u32,
}

impl Directory {
    /// The node index of `key` by the table alone, `None` when the key is not listed.
    #[inline]
    fn entry(&self, hashing: &KeyHashing, key: Key<'_>) -> Option<u32> {
        self.table.get(routing_key(hashing, key))
    }
}

impl Place for Directory {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        match self.entry(hashing, key) {
            Some(node) => Ok(node),
            None => self.fallback.node_of(hashing, key),
        }
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        if let Some(node) = self.entry(hashing, key) {
            return Ok((None, Hit::Listed, node));
        }
        let place = self.fallback.place();
        let (hashed, hit, shard) = place.explain(hashing, key)?;
        Ok((hashed, hit, place.owner(shard)))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        shard
    }

    fn replicas(&self, hashing: &KeyHashing, key: Key<'_>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        self.fallback.place().replicas(hashing, key, count, out)?;
        if let Some(node) = self.entry(hashing, key) {
            match out.iter().position(|&other| other == node) {
                // Move the owner to the front, keeping the others' order.
                Some(position) => out[..=position].rotate_right(1),
                None => {
                    out.insert(0, node);
                    out.truncate(count as usize);
                }
            }
        }
        Ok(())
    }

    fn max_replicas(&self) -> u32 {
        self.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.nodes
    }
}
