//! Tenants: keep one tenant's keys on a node group or in a zone, or spread one large
//! tenant over several shards while the others share.
//!
//! A multi-tenant database keys its rows by tenant (`acme:order:17`): the document's
//! `partition_key` rule already keeps a tenant's keys together. The `tenants` section
//! names the tenants that need more (DDIA's multitenancy: a tenant whose data must stay in
//! a region, a tenant too big for one shard):
//!
//! ```json
//! "hashing": {"partition_key": {"rule": "prefix", "separator": ":"}},
//! "node_groups": {"eu": ["db-1", "db-2"]},
//! "tenants": {"entries": {
//!   "acme":    {"group": "eu"},
//!   "initech": {"zone": "us-1"},
//!   "globex":  {"shards": 8},
//!   "hooli":   {"group": "eu", "shards": 2}
//! }}
//! ```
//!
//! **A key's tenant** is its partition key under `tenants.partition_key` (a rule as in
//! [`hashing`](crate::hashing), default the document's `hashing.partition_key`): `acme`
//! for `acme:order:17` under a prefix rule with `:`. A key without that part is its own
//! tenant, as it is its own partition key. Integer keys have no tenant.
//!
//! **The routing rule**, the same in every language. A key whose tenant has no entry
//! routes exactly as without the section. For a tenant with an entry:
//!
//! 1. *Spread* (`"shards": N`): the key's bucket is `b = hash(whole key) % N` (the
//!    document's hash function over every byte of the key, no rule and no tag), and the
//!    key routes as the key `tenant + "#" + b` (decimal) would route, whole: a large
//!    tenant takes up to `N` shards, each of its keys one, under any strategy.
//! 2. *Place* (`"group"` and/or `"zone"`): the place is the group's nodes in the group's
//!    order (every node in document order without a group), keeping those in `zone` when
//!    one is named. The key goes to `place[jump(h, len(place))]`, where `h` is the
//!    document's hash of the key (so of its partition key), or for a spread tenant the hash
//!    of `tenant + "#" + b`. Its shard is that node's shard. Placing needs a strategy
//!    whose shards are its nodes (`modulo`, `jump`, `ring`, `rendezvous`, `maglev`,
//!    `ketama`, `token_ring`); [`Router::replicas`](crate::Router::replicas) of a placed
//!    key is the chosen node, then the rest of the place in its order.
//!
//! A placed tenant without `shards` keeps every key on one node of its place (its
//! partition key is the tenant): give it `shards` to use more of the place.
//!
//! Refused at load (`invalid_topology`, the message starting with the field's path): an
//! unknown field, an entry that neither places nor spreads, `shards` of 0, a group not in
//! `node_groups`, a place with no node, placing under another strategy, tenants whose
//! keys are integers (`hashing.keys: "u64"`), a document whose tenant rule is the whole
//! key, and a hot key of a tenant with an entry (its salting and the entry would
//! disagree). Past [`MAX_TENANTS`](crate::limits::MAX_TENANTS),
//! [`MAX_TENANT_SHARDS`](crate::limits::MAX_TENANT_SHARDS) or
//! [`MAX_TENANT_NAME_BYTES`](crate::limits::MAX_TENANT_NAME_BYTES): `limit_exceeded`. A
//! tenant listed twice is a field named twice in one object, refused by the reader. Every
//! operation ends with the same checks, so removing the last node of a tenant's zone, or a
//! node of its group, is refused with a message naming the tenant.
//!
//! Cost: a lookup of a key's tenant is the rule's pass over the key and a binary search of
//! the entries; a spread key hashes once more (its bucket). The section applies to the
//! document's own routing, not to table families ([`tables`](super::tables)) nor indexes.

// Without the `tables` feature only `not_built_in` is called: the rest is left out.
#![cfg_attr(not(feature = "tables"), allow(dead_code, unused_imports))]

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hashing::{HashTag, KeyHashing, KeyType, PartitionKey};
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::limits;
use crate::node::Node;

/// The separator between a spread tenant and its bucket: the key `acme#3`.
pub const BUCKET_SEPARATOR: &str = "#";

/// The strategies a tenant can be placed under: each node is one shard.
pub const PLACING_STRATEGIES: [&str; 7] = ["modulo", "jump", "ring", "rendezvous", "maglev", "ketama", "token_ring"];

/// The `tenants` section of a document.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Tenants {
    /// How a key's tenant is found; `None`: the document's `hashing.partition_key`.
    pub partition_key: Option<PartitionKey>,
    /// The entries, sorted by tenant name (bytewise).
    pub entries: Vec<Tenant>,
}

/// One tenant's entry: where its keys live, over how many shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant {
    /// The tenant: a key's partition key under the tenant rule.
    pub name: String,
    /// The node group its keys stay on.
    pub group: Option<String>,
    /// The zone its keys stay in (within the group when there is one).
    pub zone: Option<String>,
    /// How many buckets its keys are spread over.
    pub shards: Option<u32>,
}

impl Tenant {
    /// Whether the entry keeps its keys on a group or in a zone.
    pub fn is_placed(&self) -> bool {
        self.group.is_some() || self.zone.is_some()
    }

    fn path(&self) -> String {
        json::join("tenants.entries", &self.name)
    }
}

impl Tenants {
    /// Reads the section's own fields (the rules that tie it to the rest of the document
    /// are [`check`](Tenants::check)'s).
    pub(crate) fn parse(value: &Value) -> Result<Tenants> {
        let object = Object::new("tenants", value, &["partition_key", "entries"])?;
        let partition_key = match object.optional("partition_key") {
            // The hashing reader gives the rule's fields their paths (`tenants.partition_key.rule`).
            Some(rule) => {
                Some(KeyHashing::from_value("tenants", &serde_json::json!({ "partition_key": rule }))?.partition_key)
            }
            None => None,
        };
        let entries_path = object.path_of("entries");
        let map = object.required("entries")?.as_object().ok_or_else(|| {
            json::at(
                &entries_path,
                "expected an object mapping each tenant to its entry ({\"group\", \"zone\", \"shards\"})",
            )
        })?;
        if map.len() > limits::MAX_TENANTS as usize {
            return Err(Error::limit(format!(
                "{entries_path}: {} tenants; the limit is {}",
                map.len(),
                limits::MAX_TENANTS
            )));
        }
        let mut entries = Vec::with_capacity(map.len());
        for (name, spec) in map {
            let at = json::join(&entries_path, name);
            if name.is_empty() {
                return Err(json::at(&at, "a tenant's name must not be empty"));
            }
            if name.len() > limits::MAX_TENANT_NAME_BYTES as usize {
                return Err(Error::limit(format!(
                    "{at}: a tenant of {} bytes; the limit is {}",
                    name.len(),
                    limits::MAX_TENANT_NAME_BYTES
                )));
            }
            let object = Object::new(&at, spec, &["group", "zone", "shards"])?;
            let group = match object.optional("group") {
                Some(value) => Some(json::id(&object.path_of("group"), value)?.to_string()),
                None => None,
            };
            let zone = match object.optional("zone") {
                Some(value) => Some(json::id(&object.path_of("zone"), value)?.to_string()),
                None => None,
            };
            let shards = match object.optional("shards") {
                Some(value) => Some(json::u32_capped(&object.path_of("shards"), value, 1, limits::MAX_TENANT_SHARDS)?),
                None => None,
            };
            if group.is_none() && zone.is_none() && shards.is_none() {
                return Err(json::at(
                    &at,
                    "an entry places its tenant (\"group\", \"zone\") or spreads it (\"shards\"); name one",
                ));
            }
            entries.push(Tenant { name: name.clone(), group, zone, shards });
        }
        // serde_json's map iterates in key order, which is the bytewise order of UTF-8.
        entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        Ok(Tenants { partition_key, entries })
    }

    /// The rule a key's tenant is found by.
    pub fn rule(&self, hashing: &KeyHashing) -> PartitionKey {
        self.partition_key.unwrap_or(hashing.partition_key)
    }

    /// The entry of a tenant, by name.
    pub fn entry(&self, tenant: &[u8]) -> Option<&Tenant> {
        self.entries.binary_search_by(|entry| entry.name.as_bytes().cmp(tenant)).ok().map(|at| &self.entries[at])
    }

    /// The rules that tie the section to the document (what parsing checks, and every
    /// operation after it), each refusal naming the tenant.
    pub(crate) fn check(&self, topology: &super::Topology) -> Result<()> {
        let hashing = &topology.hashing;
        if hashing.keys == KeyType::U64 {
            return Err(json::at(
                "tenants",
                "the keys are integers (hashing.keys: \"u64\"), which have no tenant part; leave tenants out",
            ));
        }
        if self.rule(hashing) == PartitionKey::Whole {
            return Err(json::at(
                "tenants",
                "a key's tenant is a part of the key, and this document routes whole keys: name the rule in tenants.partition_key or hashing.partition_key (for example {\"rule\": \"prefix\", \"separator\": \":\"})",
            ));
        }
        let groups = topology.tables.as_ref().map(|tables| tables.groups.as_slice()).unwrap_or_default();
        let kind = topology.strategy.type_name();
        for entry in &self.entries {
            if entry.is_placed() && !PLACING_STRATEGIES.contains(&kind) {
                return Err(json::at(
                    &entry.path(),
                    format_args!(
                        "tenant {:?} is placed, and the {kind} strategy's shards are not its nodes; place tenants under {}, or spread them with shards",
                        entry.name,
                        PLACING_STRATEGIES.join(", ")
                    ),
                ));
            }
        }
        places(self, groups, &topology.nodes)?;
        if let Some(hot) = &topology.hot_keys {
            let rule = self.rule(hashing);
            for (key, _) in &hot.keys {
                let tenant = rule.select(key);
                if let Some(entry) = self.entry(tenant) {
                    return Err(json::at(
                        &entry.path(),
                        format_args!(
                            "tenant {:?} has a hot key, {:?} (hot_keys.keys): a key of a tenant with an entry routes by the entry, so salting it would disagree with it; leave the key out of hot_keys, or spread the tenant with shards",
                            entry.name,
                            String::from_utf8_lossy(key)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The canonical section.
    pub(crate) fn to_value(&self) -> Value {
        let mut entries = Map::new();
        for entry in &self.entries {
            let mut spec = Map::new();
            if let Some(group) = &entry.group {
                spec.put("group", Value::String(group.clone()));
            }
            if let Some(zone) = &entry.zone {
                spec.put("zone", Value::String(zone.clone()));
            }
            if let Some(shards) = entry.shards {
                spec.put("shards", Value::from(shards));
            }
            entries.insert(entry.name.clone(), Value::Object(spec));
        }
        let mut map = Map::new();
        if let Some(rule) = self.partition_key {
            let hashing = KeyHashing { partition_key: rule, ..KeyHashing::default() };
            if let Some(value) = hashing.to_value().get("partition_key") {
                map.put("partition_key", value.clone());
            } else {
                map.put("partition_key", serde_json::json!({"rule": "whole"}));
            }
        }
        map.put("entries", Value::Object(entries));
        Value::Object(map)
    }
}

/// Every distinct place's nodes, and each entry's place (`None`: not placed).
type Places = (Vec<Vec<u32>>, Vec<Option<u32>>);

/// The places of the placed entries, each computed once: a group's nodes in the group's
/// order (every node, in document order, without a group), those in a zone when one is
/// named, never empty. Each group is read once, its nodes split by zone as it is, so the
/// work is the size of the groups the entries name (and the nodes), however many entries
/// name them.
fn places(tenants: &Tenants, groups: &[(String, Vec<String>)], nodes: &[Node]) -> Result<Places> {
    let index: BTreeMap<&str, u32> = nodes.iter().zip(0u32..).map(|(node, at)| (node.id.as_str(), at)).collect();
    // A group's nodes, and the same by zone.
    type Split<'a> = (Vec<u32>, BTreeMap<&'a str, Vec<u32>>);
    let mut read: BTreeMap<Option<&str>, Split<'_>> = BTreeMap::new();
    let mut known: BTreeMap<(Option<&str>, Option<&str>), u32> = BTreeMap::new();
    let mut places: Vec<Vec<u32>> = Vec::new();
    let mut of_entry = Vec::with_capacity(tenants.entries.len());
    for entry in &tenants.entries {
        if !entry.is_placed() {
            of_entry.push(None);
            continue;
        }
        let key = (entry.group.as_deref(), entry.zone.as_deref());
        if let Some(&at) = known.get(&key) {
            of_entry.push(Some(at));
            continue;
        }
        let at = entry.path();
        if let alloc::collections::btree_map::Entry::Vacant(slot) = read.entry(key.0) {
            let members: Vec<u32> = match &entry.group {
                Some(name) => {
                    let Some((_, ids)) = groups.iter().find(|(listed, _)| listed == name) else {
                        let names: Vec<&str> = groups.iter().map(|(listed, _)| listed.as_str()).collect();
                        let have = if names.is_empty() {
                            String::from("there are none")
                        } else {
                            format!("it has {}", names.join(", "))
                        };
                        return Err(json::at(
                            &json::join(&at, "group"),
                            format_args!(
                                "tenant {:?} names group {name:?}, which is not in node_groups ({have})",
                                entry.name
                            ),
                        ));
                    };
                    ids.iter()
                        .map(|id| {
                            index.get(id.as_str()).copied().ok_or_else(|| {
                                json::at(
                                    &json::join(&at, "group"),
                                    format_args!(
                                        "group {name:?} names node {id:?}, which is not in nodes; tenant {:?} is placed on the group, so its nodes stay until the tenant moves",
                                        entry.name
                                    ),
                                )
                            })
                        })
                        .collect::<Result<_>>()?
                }
                None => (0..nodes.len() as u32).collect(),
            };
            let mut by_zone: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
            for &node in &members {
                if let Some(zone) = nodes[node as usize].zone.as_deref() {
                    by_zone.entry(zone).or_default().push(node);
                }
            }
            slot.insert((members, by_zone));
        }
        let (members, by_zone) = &read[&key.0];
        let place = match &entry.zone {
            None => members.clone(),
            Some(zone) => by_zone.get(zone.as_str()).cloned().ok_or_else(|| {
                let within = match &entry.group {
                    Some(group) => format!("of group {group:?} "),
                    None => String::new(),
                };
                json::at(
                    &json::join(&at, "zone"),
                    format_args!("no node {within}is in zone {zone:?}, where tenant {:?} is placed", entry.name),
                )
            })?,
        };
        let number = places.len() as u32;
        places.push(place);
        known.insert(key, number);
        of_entry.push(Some(number));
    }
    Ok((places, of_entry))
}

/// The longest routed key of a spread tenant: its name, the separator, a `u32` in decimal.
const BUCKET_BYTES: usize = limits::MAX_TENANT_NAME_BYTES as usize + BUCKET_SEPARATOR.len() + 10;

/// A spread tenant's routed key, `tenant + "#" + bucket`, held inline (a lookup allocates
/// nothing).
pub(crate) struct Bucket {
    bytes: [u8; BUCKET_BYTES],
    len: usize,
}

impl Bucket {
    fn new(tenant: &[u8], bucket: u32) -> Bucket {
        let mut bytes = [0u8; BUCKET_BYTES];
        // Entries are at most MAX_TENANT_NAME_BYTES long, and `tenant` matched one.
        let name = &tenant[..tenant.len().min(limits::MAX_TENANT_NAME_BYTES as usize)];
        bytes[..name.len()].copy_from_slice(name);
        let mut len = name.len();
        bytes[len..len + BUCKET_SEPARATOR.len()].copy_from_slice(BUCKET_SEPARATOR.as_bytes());
        len += BUCKET_SEPARATOR.len();
        let mut digits = [0u8; 10];
        let mut count = 0;
        let mut rest = bucket;
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for digit in digits[..count].iter().rev() {
            bytes[len] = *digit;
            len += 1;
        }
        Bucket { bytes, len }
    }

    /// The routed key's bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Where a key of a tenant with an entry goes.
// On the stack for one lookup: boxing the spread key would allocate per key.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Route {
    /// Route this key, whole, by the document's strategy.
    Spread(Bucket),
    /// This node (an index into the nodes), of place `place`.
    Placed {
        /// The node.
        node: u32,
        /// Its place ([`Compiled::place`]).
        place: u32,
    },
}

/// The section compiled for lookups (part of a [`Router`](crate::Router)).
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    rule: PartitionKey,
    /// The document's hashing, routing whole keys: how a spread key is routed.
    pub(crate) whole: KeyHashing,
    /// The shard of node 0 (1 for a 1-based modulo); node `i` is shard `first_shard + i`.
    pub(crate) first_shard: u32,
    /// `(tenant, buckets (0: not spread), place)`, sorted by tenant.
    entries: Vec<(Vec<u8>, u32, Option<u32>)>,
    /// Each distinct place's nodes.
    places: Vec<Vec<u32>>,
}

impl Compiled {
    /// Compiles the section of a checked topology over its compiled strategy.
    pub(crate) fn new(
        topology: &super::Topology,
        tenants: &Tenants,
        shard_range: core::ops::Range<u32>,
        owner: impl Fn(u32) -> u32,
    ) -> Result<Compiled> {
        let groups = topology.tables.as_ref().map(|tables| tables.groups.as_slice()).unwrap_or_default();
        let nodes = topology.nodes.len() as u32;
        let first_shard = shard_range.start;
        let (places, of_entry) = places(tenants, groups, &topology.nodes)?;
        if let Some(entry) = tenants.entries.iter().find(|entry| entry.is_placed()) {
            // Checked once: node `i` is shard `first_shard + i` (the placing strategies).
            if shard_range.len() != nodes as usize || (0..nodes).any(|node| owner(first_shard + node) != node) {
                return Err(json::at(
                    &entry.path(),
                    format_args!("tenant {:?} is placed, and this strategy's shards are not its nodes", entry.name),
                ));
            }
        }
        let entries = tenants
            .entries
            .iter()
            .zip(of_entry)
            .map(|(entry, place)| (entry.name.as_bytes().to_vec(), entry.shards.unwrap_or(0), place))
            .collect();
        let whole = KeyHashing { partition_key: PartitionKey::Whole, hash_tag: HashTag::None, ..topology.hashing };
        Ok(Compiled { rule: tenants.rule(&topology.hashing), whole, first_shard, entries, places })
    }

    /// Where `key` goes when its tenant has an entry; `None` routes it as without tenants.
    /// `hashing` is the document's, `key` already typed.
    #[inline]
    pub(crate) fn resolve(&self, hashing: &KeyHashing, key: Key<'_>) -> Option<Route> {
        let Key::Bytes(bytes) = key else { return None };
        let tenant = self.rule.select(bytes);
        let at = self.entries.binary_search_by(|(name, _, _)| name.as_slice().cmp(tenant)).ok()?;
        let (name, buckets, place) = &self.entries[at];
        let spread = (*buckets > 0).then(|| {
            let bucket = (hashing.hash_bytes(bytes) % u64::from(*buckets)) as u32;
            Bucket::new(name, bucket)
        });
        match (place, spread) {
            (None, Some(spread)) => Some(Route::Spread(spread)),
            (Some(place), spread) => {
                let nodes = &self.places[*place as usize];
                let hash = match &spread {
                    Some(spread) => self.whole.hash_bytes(spread.as_bytes()),
                    None => hashing.hash(key),
                };
                let pick = crate::strategy::hashed::jump::jump_unchecked(hash, nodes.len() as u32) as usize;
                Some(Route::Placed { node: nodes[pick], place: *place })
            }
            // Parsing refuses an entry that neither places nor spreads.
            (None, None) => None,
        }
    }

    /// A place's nodes, in its order.
    pub(crate) fn place(&self, place: u32) -> &[u32] {
        &self.places[place as usize]
    }
}

/// The reader of a build without the `tables` feature: a document with tenants is
/// refused, not routed by its top-level rule.
#[cfg(not(feature = "tables"))]
pub(crate) fn not_built_in(value: Option<&Value>) -> Result<Option<Tenants>> {
    match value {
        None => Ok(None),
        Some(_) => Err(Error::topology(
            "tenants: tenants, node groups and table families are not built in (the `tables` feature)",
        )),
    }
}

#[cfg(all(test, not(feature = "tables")))]
mod without_the_feature {
    #[test]
    fn a_document_with_tenants_is_refused_as_not_built_in() {
        let text = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "modulo"},
            "hashing": {"partition_key": {"rule": "prefix", "separator": ":"}},
            "tenants": {"entries": {"acme": {"shards": 2}}}}"#;
        let err = crate::Router::from_json(text).unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
        assert_eq!(
            err.message(),
            "tenants: tenants, node groups and table families are not built in (the `tables` feature)"
        );
    }
}

#[cfg(all(test, feature = "tables"))]
mod tests;
