//! [`Router`]: a compiled topology that answers "which shard, which node" for a key.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::hashing::{IntegerKeys, KeyHashing, KeyType};
use crate::key::{Key, OwnedKey};
use crate::node::Node;
use crate::placement_names::Location;
#[cfg(feature = "redis_cluster")]
use crate::strategy::compat::redis_cluster::redirect::node_index;
use crate::strategy::compat::redis_cluster::redirect::{check_address, check_moved_address_length, check_slot};
use crate::strategy::compat::redis_cluster::RedisClusterSpec;
use crate::strategy::{Placement, Strategy, Variant};
use crate::topology::tenants::{Compiled as Tenants, Route as TenantRoute};
use crate::topology::Topology;

/// Each table with the position of its family's router, sorted by table.
type TableIndex = Vec<(String, usize)>;

/// A router: a validated topology compiled for lookups.
///
/// Built once from a topology document, then shared: lookups take `&self`, allocate
/// nothing (except [`replicas`](Router::replicas), which returns a `Vec`) and never
/// panic. The same document gives the same answers in every language and on every
/// platform.
///
/// # Example
/// ```
/// use shardroute::Router;
/// let router = Router::from_json(r#"{
///     "format": "shardroute/1", "epoch": 1,
///     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
///     "strategy": {"type": "jump"}
/// }"#).unwrap();
/// let shard = router.route("user:42").unwrap();
/// assert!(shard < 3);
/// assert_eq!(router.node("user:42").unwrap(), ["a", "b", "c"][shard as usize]);
/// assert_eq!(router.replicas("user:42", 2).unwrap().len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Router {
    topology: Topology,
    placement: Placement,
    /// Most replicas any key can get (the shortest vbucket chain, else the node count).
    max_replicas: u32,
    /// The router of each global index, by name ([`crate::indexes`]).
    indexes: Vec<(String, Router)>,
    /// Each table, sorted, with the position of its family's router in `families`
    /// ([`crate::topology::tables`]).
    tables: TableIndex,
    /// The router of each table family, in family-name order.
    families: Vec<Router>,
    /// Whether this is the router of a reference family: every node of its group holds
    /// every row.
    reference: bool,
    /// The `tenants` section compiled ([`crate::topology::tenants`]); `None` without one.
    tenants: Option<alloc::boxed::Box<Tenants>>,
}

impl Router {
    /// Parses, validates and compiles a topology document.
    ///
    /// # Errors
    /// `invalid_topology` naming the offending field, `no_nodes` for an empty node
    /// list, `limit_exceeded` past [`crate::limits`].
    pub fn from_json(text: &str) -> Result<Router> {
        Router::new(Topology::from_json(text)?)
    }

    /// As [`from_json`](Router::from_json), from a parsed JSON value.
    ///
    /// # Errors
    /// As [`from_json`](Router::from_json).
    pub fn from_value(value: &Value) -> Result<Router> {
        Router::new(Topology::from_value(value)?)
    }

    /// Compiles a validated topology.
    ///
    /// # Errors
    /// `limit_exceeded` when the compiled form would be too large (ring points, table
    /// cells); `invalid_topology` for pairings checked only when the strategy compiles
    /// (a `token_ring` with 32-bit `crc32` hashing, a `key_range` with a hash tag);
    /// `no_nodes` when a strategy is left with no node to place on.
    pub fn new(topology: Topology) -> Result<Router> {
        let placement = Placement::compile(&topology.strategy, &topology.hashing, &topology.nodes)?;
        let max_replicas = placement.max_replicas();
        let indexes = topology
            .indexes
            .iter()
            .map(|index| {
                let alone = Topology {
                    epoch: topology.epoch,
                    hashing: index.hashing,
                    nodes: topology.nodes.clone(),
                    strategy: index.strategy.clone(),
                    placement: None,
                    hot_keys: None,
                    indexes: Vec::new(),
                    tables: None,
                    checksummed: false,
                };
                let router = Router::new(alone)
                    .map_err(|err| Error::new(err.kind(), format!("indexes.{}: {}", index.name, err.message())))?;
                Ok((index.name.clone(), router))
            })
            .collect::<Result<Vec<_>>>()?;
        let (tables, families) = match &topology.tables {
            #[cfg(feature = "tables")]
            Some(tables) => Router::families(&topology, tables)?,
            // Without the feature no document has tables (the reader refuses them).
            _ => (Vec::new(), Vec::new()),
        };
        let tenants = match topology.tenants() {
            #[cfg(feature = "tables")]
            Some(tenants) => {
                Some(alloc::boxed::Box::new(Tenants::new(&topology, tenants, placement.shard_range(), |shard| {
                    placement.owner(shard)
                })?))
            }
            _ => None,
        };
        Ok(Router { topology, placement, max_replicas, indexes, tables, families, reference: false, tenants })
    }

    /// The router of each table family (its strategy over its group, or for a reference
    /// family jump over its group), and the sorted table → family list.
    #[cfg(feature = "tables")]
    fn families(topology: &Topology, tables: &crate::topology::tables::Tables) -> Result<(TableIndex, Vec<Router>)> {
        let mut names = Vec::new();
        let mut routers = Vec::with_capacity(tables.families.len());
        let index = &crate::topology::tables::NodeIndex::new(&topology.nodes);
        for family in &tables.families {
            let at = format!("table_families.{}", family.name);
            let nodes = tables.group_nodes(&format!("{at}.group"), family.group.as_deref(), index)?;
            let strategy = match &family.strategy {
                Some(strategy) => strategy.clone(),
                None => Strategy::from_value(&format!("{at}.reference"), &serde_json::json!({"type": "jump"}), &nodes)?,
            };
            let alone = Topology {
                epoch: topology.epoch,
                hashing: family.hashing.unwrap_or(topology.hashing),
                nodes,
                strategy,
                placement: None,
                hot_keys: None,
                indexes: Vec::new(),
                tables: None,
                checksummed: false,
            };
            let mut router =
                Router::new(alone).map_err(|err| Error::new(err.kind(), format!("{at}: {}", err.message())))?;
            router.reference = family.is_reference();
            names.extend(family.tables.iter().map(|table| (table.clone(), routers.len())));
            routers.push(router);
        }
        names.sort_unstable();
        Ok((names, routers))
    }

    /// The router of the table family that lists `table` ([`crate::topology::tables`]):
    /// its strategy and hashing over its node group, at this document's epoch. Every call
    /// of a router works on it; for a reference table, [`node`](Router::node) and
    /// [`route_read`](Router::route_read) give the read node,
    /// [`read_near`](Router::read_near) the read node for a caller's zone, and
    /// [`route_write`](Router::route_write) every node of the group.
    ///
    /// # Errors
    /// `invalid_argument` when no table family of this topology lists `table` (tables
    /// outside every family route by this router itself).
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a", "zone": "eu"}, {"id": "b", "zone": "us"}, {"id": "c", "zone": "us"}],
    ///     "strategy": {"type": "jump"},
    ///     "node_groups": {"us": ["b", "c"]},
    ///     "table_families": {
    ///         "orders": {"tables": ["orders"], "group": "us", "strategy": {"type": "modulo"}},
    ///         "catalog": {"tables": ["countries"], "reference": true}}}"#)?;
    /// assert!(["b", "c"].contains(&router.table("orders")?.node("order:1")?));
    /// let countries = router.table("countries")?;
    /// assert_eq!(countries.route_write("FR")?.len(), 3);
    /// assert_eq!(countries.read_near("FR", Some("eu"))?, "a");
    /// assert_eq!(router.table("users").unwrap_err().code(), "invalid_argument");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn table(&self, table: &str) -> Result<&Router> {
        crate::topology::tables::find(&self.tables, &self.families, table)
    }

    /// The tables the table families list, sorted.
    pub fn table_names(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|(name, _)| name.as_str())
    }

    /// Whether this is the router of a reference family ([`table`](Router::table)):
    /// every node holds every row; reads go to one, writes to all.
    pub fn is_reference(&self) -> bool {
        self.reference
    }

    /// The node a caller in `zone` reads a key from. For a reference family's router:
    /// jump consistent hash of the key's hash over the nodes in `zone` (in node order)
    /// when any node is there, else [`node`](Router::node) (jump over every node), so
    /// callers of one zone spread their reads over its nodes and the pick is the same in
    /// every language. For every other router: [`route_read`](Router::route_read), the
    /// zone ignored (one node holds the key). `None` is `route_read`.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn read_near<'k>(&self, key: impl Into<Key<'k>>, zone: Option<&str>) -> Result<&str> {
        let key = key.into();
        let (true, Some(zone)) = (self.reference, zone) else { return self.route_read(key) };
        let hashing = &self.topology.hashing;
        let typed = hashing.typed(key)?;
        let near = self.topology.nodes.iter().filter(|node| node.zone.as_deref() == Some(zone)).count() as u32;
        if near == 0 {
            return self.route_read(typed);
        }
        let pick = crate::strategy::hashed::jump::jump_unchecked(hashing.hash(typed), near) as usize;
        let node = self.topology.nodes.iter().filter(|node| node.zone.as_deref() == Some(zone)).nth(pick);
        Ok(node.map_or("", |node| node.id.as_str()))
    }

    /// The router of the global index `name` ([`crate::indexes`]): it routes terms over
    /// this topology's nodes, at its epoch. Route a term with it, or plan a term range with
    /// its [`scatter`](Router::scatter) plans.
    ///
    /// # Errors
    /// `invalid_argument` when the topology has no index of that name.
    pub fn index(&self, name: &str) -> Result<&Router> {
        crate::indexes::find(&self.indexes, name)
    }

    /// The names of the global indexes, sorted.
    pub fn index_names(&self) -> impl Iterator<Item = &str> {
        self.indexes.iter().map(|(name, _)| name.as_str())
    }

    /// What one write touches: the document's shard (of `key`), and for each `(index,
    /// term)` pair the index shard that holds the term's entry, one visit per index and
    /// shard with the positions of its terms in `terms`, in first-term order.
    ///
    /// # Errors
    /// `invalid_argument` naming an index the topology does not have; as
    /// [`route`](Router::route) for the key and each term.
    pub fn index_write_plan<'k>(
        &self,
        key: impl Into<Key<'k>>,
        terms: &[(&str, Key<'_>)],
    ) -> Result<crate::indexes::WritePlan> {
        let key = key.into();
        let shard = self.route(key)?;
        let mut visits: Vec<crate::indexes::IndexVisit> = Vec::new();
        // (index, shard) -> its visit: one lookup per term, however many shards.
        let mut seen: alloc::collections::BTreeMap<(&str, u32), usize> = alloc::collections::BTreeMap::new();
        for (position, (name, term)) in (0u32..).zip(terms) {
            let index = self.index(name)?;
            let term_shard = index.route(*term)?;
            match seen.entry((*name, term_shard)) {
                alloc::collections::btree_map::Entry::Occupied(at) => visits[*at.get()].terms.push(position),
                alloc::collections::btree_map::Entry::Vacant(at) => {
                    at.insert(visits.len());
                    visits.push(crate::indexes::IndexVisit {
                        index: String::from(*name),
                        shard: term_shard,
                        node: index.placement.owner(term_shard),
                        terms: alloc::vec![position],
                    });
                }
            }
        }
        Ok(crate::indexes::WritePlan { shard, node: self.placement.owner(shard), indexes: visits })
    }

    /// The topology this router was built from.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The topology's epoch.
    pub fn epoch(&self) -> u64 {
        self.topology.epoch
    }

    /// The nodes, in document order.
    pub fn nodes(&self) -> &[Node] {
        &self.topology.nodes
    }

    /// The strategy.
    pub fn strategy(&self) -> &Strategy {
        &self.topology.strategy
    }

    /// The key-hashing spec.
    pub fn hashing(&self) -> &KeyHashing {
        &self.topology.hashing
    }

    /// The largest `count` that [`replicas`](Router::replicas) accepts for every key:
    /// the node count, or for `vbucket` the length of the shortest chain.
    pub fn max_replica_count(&self) -> u32 {
        self.max_replicas
    }

    /// The canonical JSON of the topology; [`Router::from_json`] of it gives an equal router.
    pub fn to_json(&self) -> String {
        self.topology.to_json()
    }

    /// The hash of a key under this topology's hashing spec.
    pub fn hash<'k>(&self, key: impl Into<Key<'k>>) -> u64 {
        self.topology.hashing.hash(key.into())
    }

    /// The shard of a key: a node index for `modulo`, `jump`, `ring` and `rendezvous`
    /// (`1..=n` for 1-based modulo), the vbucket number for `vbucket`. A key whose tenant
    /// has an entry in the topology's `tenants` section routes by it (placed on its group
    /// or zone, or spread over its shards: [`crate::topology::tenants`]), here and in
    /// every other call of a router.
    ///
    /// # Errors
    /// `invalid_key` for a key the strategy cannot place (an id outside its groups, a
    /// text key for an integer-only strategy), and under `"hashing": {"keys": "u64"}` for
    /// a text or byte key that is not the canonical decimal text of a `u64`
    /// ([`KeyHashing::typed`]); such text otherwise routes as its integer.
    #[inline]
    pub fn route<'k>(&self, key: impl Into<Key<'k>>) -> Result<u32> {
        let hashing = &self.topology.hashing;
        let key = hashing.typed(key.into())?;
        if let Some((tenants, route)) = self.tenant(key) {
            return self.tenant_shard(tenants, &route);
        }
        self.placement.shard(hashing, key)
    }

    /// Where a (typed) key goes when the topology's `tenants` section has an entry for its
    /// tenant ([`crate::topology::tenants`]); `None` for every other key.
    #[inline]
    fn tenant(&self, key: Key<'_>) -> Option<(&Tenants, TenantRoute)> {
        #[cfg(feature = "tables")]
        if let Some(tenants) = &self.tenants {
            return tenants.resolve(&self.topology.hashing, key).map(|route| (&**tenants, route));
        }
        let _ = key;
        None
    }

    /// The shard of a tenant's key: its spread key's, or its node's.
    fn tenant_shard(&self, tenants: &Tenants, route: &TenantRoute) -> Result<u32> {
        match route {
            TenantRoute::Spread(bucket) => self.placement.shard(&tenants.whole, Key::Bytes(bucket.as_bytes())),
            TenantRoute::Placed { node, .. } => Ok(tenants.first_shard + node),
        }
    }

    /// The index in [`nodes`](Router::nodes) of the node that owns a key.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    #[inline]
    pub fn node_index<'k>(&self, key: impl Into<Key<'k>>) -> Result<u32> {
        let shard = self.route(key)?;
        Ok(self.placement.owner(shard))
    }

    /// The id of the node that owns a key.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    #[inline]
    pub fn node<'k>(&self, key: impl Into<Key<'k>>) -> Result<&str> {
        let index = self.node_index(key)?;
        Ok(&self.topology.nodes[index as usize].id)
    }

    /// `count` distinct node ids for a key in preference order, owner first.
    ///
    /// `replicas(key, 1)[0] == node(key)` always holds.
    ///
    /// # Errors
    /// `invalid_argument` when `count` is 0 or more than the topology can give (the node
    /// count, or for `vbucket` the length of the key's chain).
    pub fn replicas<'k>(&self, key: impl Into<Key<'k>>, count: u32) -> Result<Vec<&str>> {
        let mut indices = Vec::with_capacity(count.min(64) as usize);
        self.replica_indices(key, count, &mut indices)?;
        Ok(indices.iter().map(|&index| self.topology.nodes[index as usize].id.as_str()).collect())
    }

    /// As [`replicas`](Router::replicas), as node indices written into `out`.
    ///
    /// # Errors
    /// As [`replicas`](Router::replicas).
    pub fn replica_indices<'k>(&self, key: impl Into<Key<'k>>, count: u32, out: &mut Vec<u32>) -> Result<()> {
        let node_count = self.topology.nodes.len() as u32;
        if count == 0 || count > node_count {
            return Err(Error::argument(format!(
                "replica count must be in 1..={node_count} (the number of nodes), got {count}"
            )));
        }
        // Tables may give a key fewer nodes than the list holds (a vbucket chain, a
        // group): the placement checks the key's own and names it in the error.
        let hashing = &self.topology.hashing;
        let key = hashing.typed(key.into())?;
        match self.tenant(key) {
            Some((tenants, TenantRoute::Spread(bucket))) => {
                self.placement.replicas(&tenants.whole, Key::Bytes(bucket.as_bytes()), count, out)
            }
            // A placed tenant: the chosen node, then the rest of its place in order.
            Some((tenants, TenantRoute::Placed { node, place })) => {
                let members = tenants.place(place);
                if count as usize > members.len() {
                    return Err(Error::argument(format!(
                        "replica count must be in 1..={} for this key: its tenant is placed on {} nodes (tenants), got {count}",
                        members.len(),
                        members.len()
                    )));
                }
                out.clear();
                out.push(node);
                out.extend(members.iter().copied().filter(|&other| other != node).take(count as usize - 1));
                Ok(())
            }
            None => self.placement.replicas(hashing, key, count, out),
        }
    }

    /// The shard numbers this router can return, in order (`0..n` for most strategies).
    pub fn shard_range(&self) -> core::ops::Range<u32> {
        self.placement.shard_range()
    }

    /// The id of the node that owns a shard (a vbucket, a slot, a partition, a node
    /// index for the hashed strategies).
    ///
    /// # Errors
    /// `invalid_argument` for a shard outside [`shard_range`](Router::shard_range);
    /// `no_nodes` for a Couchbase vbucket without an active node.
    pub fn shard_owner(&self, shard: u32) -> Result<&str> {
        Ok(&self.topology.nodes[self.shard_owner_index(shard)? as usize].id)
    }

    /// As [`shard_owner`](Router::shard_owner), the owner's index in the nodes.
    pub(crate) fn shard_owner_index(&self, shard: u32) -> Result<u32> {
        let range = self.placement.shard_range();
        if !range.contains(&shard) {
            return Err(Error::argument(format!("shard {shard} is not in {}..{}", range.start, range.end)));
        }
        // A Couchbase row may have no active node (`-1`).
        let owner = self.placement.owner(shard);
        if owner as usize >= self.topology.nodes.len() {
            return Err(Error::new(crate::error::ErrorKind::NoNodes, format!("shard {shard} has no owner")));
        }
        Ok(owner)
    }

    /// The compiled strategy (for the query plans of [`crate::scatter`]).
    pub(crate) fn placement(&self) -> &Placement {
        &self.placement
    }

    /// The shards a scan over keys in `[start, end)` must visit, in key order (`end`
    /// `None`: to the end of the key space). Hash-based strategies scatter every range,
    /// so for them this is every shard; range-partitioned strategies return only the
    /// ranges that overlap.
    ///
    /// # Errors
    /// `invalid_argument` when `end` is not after `start` for a range strategy, and for a
    /// range strategy whose topology has tenants (a tenant's keys leave key order).
    pub fn shards_for_range<'a, 'b>(&self, start: impl Into<Key<'a>>, end: Option<Key<'b>>) -> Result<Vec<u32>> {
        let hashing = &self.topology.hashing;
        let end = match end {
            Some(end) => Some(hashing.typed(end)?),
            None => None,
        };
        if self.tenants.is_some() && self.placement.range_is_contiguous() {
            // A tenant entry routes its keys by tenant and bucket, not by where the key
            // falls in key order: the ranges alone do not say which shards hold them.
            return Err(Error::argument(
                "shards_for_range: this topology's tenants route their keys by tenant, not in key order, so a range of keys may be on any shard; visit every shard (shard_range)",
            ));
        }
        self.placement.shards_for_range(hashing, hashing.typed(start.into())?, end)
    }

    /// Decodes an id that carries its shard: the shard and the id's other fields.
    ///
    /// # Errors
    /// `invalid_argument` when the strategy's ids do not carry a shard.
    pub fn decode_id(&self, id: u64) -> Result<crate::strategy::DecodedId> {
        self.placement.decode_id(id)
    }

    /// One lookup retraced: the bytes hashed (after any hash tag), the hash, what the
    /// strategy hit (vbucket, slot, token, range, leaf, partition, ...), the shard and
    /// its owner, with [`Explanation::why`](crate::explain::Explanation::why) in one
    /// line. The shard is [`route`](Router::route)'s. See [`crate::explain`].
    ///
    /// # Errors
    /// As [`route`](Router::route).
    ///
    /// # Example
    /// ```
    /// use shardroute::{explain::Hit, Router};
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "vbucket", "vbuckets": 64}}"#)?;
    /// let explanation = router.explain("user:42")?;
    /// assert_eq!(explanation.shard, router.route("user:42")?);
    /// assert_eq!(explanation.node, router.node("user:42")?);
    /// assert!(matches!(explanation.hit, Hit::Vbucket { vbuckets: 64, overridden: false, .. }));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn explain<'k>(&self, key: impl Into<Key<'k>>) -> Result<crate::explain::Explanation> {
        let hashing = &self.topology.hashing;
        let key = hashing.typed(key.into())?;
        let (hashed, hit, shard) = match self.tenant(key) {
            None => self.placement.explain(hashing, key)?,
            Some((tenants, TenantRoute::Spread(bucket))) => {
                self.placement.explain(&tenants.whole, Key::Bytes(bucket.as_bytes()))?
            }
            // A placed tenant: jump over its place's nodes (the hash is the entry's, see
            // `topology::tenants`).
            Some((tenants, ref route @ TenantRoute::Placed { place, .. })) => {
                let buckets = tenants.place(place).len() as u32;
                (None, crate::explain::Hit::Jump { buckets }, self.tenant_shard(tenants, route)?)
            }
        };
        let node_index = self.placement.owner(shard);
        let node = self.topology.nodes[node_index as usize].id.clone();
        Ok(crate::explain::Explanation {
            strategy: self.topology.strategy.type_name(),
            hashed,
            hit,
            shard,
            node_index,
            node,
        })
    }

    /// Where a key lives: shard, node id, the node's address and zone, and the
    /// topology's `placement` templates rendered for the shard (`db_{shard}` ...).
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn locate<'k>(&self, key: impl Into<Key<'k>>) -> Result<Location<'_>> {
        let shard = self.route(key)?;
        let node = &self.topology.nodes[self.placement.owner(shard) as usize];
        let names = match &self.topology.placement {
            Some(placement) => placement
                .templates
                .iter()
                .map(|(name, template)| (name.as_str(), template.render(shard, &node.id)))
                .collect(),
            None => Vec::new(),
        };
        Ok(Location { shard, node: &node.id, address: node.address.as_deref(), zone: node.zone.as_deref(), names })
    }

    /// The fanout of a key: how many salted keys it is spread over (1 when not hot).
    pub fn fanout<'k>(&self, key: impl Into<Key<'k>>) -> u32 {
        match (key.into(), &self.topology.hot_keys) {
            (Key::Bytes(bytes), Some(hot)) => hot.fanout(bytes).unwrap_or(1),
            _ => 1,
        }
    }

    /// The key to write a hot key's value under for a caller-chosen `salt`: `key +
    /// separator + (salt % fanout)`. A key that is not hot is its own salted key, so
    /// callers can salt every write without knowing which keys are hot.
    pub fn salted_key<'k>(&self, key: impl Into<Key<'k>>, salt: u32) -> OwnedKey {
        let key = key.into();
        match (key, &self.topology.hot_keys) {
            // A fanout of 1 is the key itself, as `salted_keys` reads it: a write must go
            // where the read looks.
            (Key::Bytes(bytes), Some(hot)) => match hot.fanout(bytes) {
                Some(fanout) if fanout > 1 => OwnedKey::Bytes(hot.salt(bytes, salt % fanout)),
                _ => OwnedKey::from(key),
            },
            _ => OwnedKey::from(key),
        }
    }

    /// Every salted form of a key with its shard, salt 0 first: what a read of a hot key
    /// gathers. A key that is not hot gives one entry, itself.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn salted_keys<'k>(&self, key: impl Into<Key<'k>>) -> Result<Vec<(OwnedKey, u32)>> {
        let key = key.into();
        let fanout = self.fanout(key);
        (0..fanout)
            .map(|salt| {
                let salted = if fanout == 1 { OwnedKey::from(key) } else { self.salted_key(key, salt) };
                let shard = self.route(salted.as_key())?;
                Ok((salted, shard))
            })
            .collect()
    }

    /// The node that serves reads of a key. The same as [`node`](Router::node) except
    /// for vbuckets in motion, whose reads go to the old owner (see
    /// [`strategy::vbucket`](crate::strategy::partitioned::vbucket)).
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn route_read<'k>(&self, key: impl Into<Key<'k>>) -> Result<&str> {
        let hashing = &self.topology.hashing;
        let key = hashing.typed(key.into())?;
        let index = match self.tenant(key) {
            None => self.placement.read_node(hashing, key)?,
            Some((tenants, TenantRoute::Spread(bucket))) => {
                self.placement.read_node(&tenants.whole, Key::Bytes(bucket.as_bytes()))?
            }
            Some((_, TenantRoute::Placed { node, .. })) => node,
        };
        Ok(&self.topology.nodes[index as usize].id)
    }

    /// The nodes a write of a key goes to, the deciding one first: `[node(key)]`, or
    /// for a migrating vbucket `[new owner, old owner]`, or for a reference family's
    /// router ([`table`](Router::table)) every node of its group: `node(key)` first, then
    /// the others in the group's order.
    ///
    /// # Errors
    /// `read_only` for a read-only vbucket; otherwise as [`route`](Router::route).
    pub fn route_write<'k>(&self, key: impl Into<Key<'k>>) -> Result<Vec<&str>> {
        let mut indices = Vec::with_capacity(2);
        let hashing = &self.topology.hashing;
        let key = hashing.typed(key.into())?;
        match self.tenant(key) {
            None => self.placement.write_nodes(hashing, key, &mut indices)?,
            Some((tenants, TenantRoute::Spread(bucket))) => {
                self.placement.write_nodes(&tenants.whole, Key::Bytes(bucket.as_bytes()), &mut indices)?
            }
            Some((_, TenantRoute::Placed { node, .. })) => indices.push(node),
        }
        if self.reference {
            // A reference table: every node of the group, the read node first.
            let first = indices.first().copied();
            indices.extend((0..self.topology.nodes.len() as u32).filter(|&node| Some(node) != first));
        }
        Ok(indices.iter().map(|&index| self.topology.nodes[index as usize].id.as_str()).collect())
    }

    /// The node to read a key from when reads may go to replicas (Redis `READONLY`
    /// connections, Couchbase replica reads): one of the replicas of the key's chain,
    /// picked by `turn` (`turn % replicas`, so a caller's growing counter spreads reads
    /// round-robin), or the owner when the chain has none. Strategies without replica
    /// chains (the hashed ones) answer the owner. Writes always go to the owner
    /// ([`node`](Router::node), or [`route_write`](Router::route_write) while moving).
    ///
    /// # Errors
    /// As [`route`](Router::route).
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "m"}, {"id": "r1"}, {"id": "r2"}],
    ///     "strategy": {"type": "redis_cluster", "slots": [{"start": 0, "end": 16383, "nodes": ["m", "r1", "r2"]}]}}"#)?;
    /// assert_eq!(router.read_replica("user:1", 0)?, "r1");
    /// assert_eq!(router.read_replica("user:1", 1)?, "r2");
    /// assert_eq!(router.read_replica("user:1", 2)?, "r1");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn read_replica<'k>(&self, key: impl Into<Key<'k>>, turn: u32) -> Result<&str> {
        let hashing = &self.topology.hashing;
        let key = hashing.typed(key.into())?;
        let index = match self.tenant(key) {
            None => self.placement.read_replica(hashing, key, turn)?,
            Some((tenants, TenantRoute::Spread(bucket))) => {
                self.placement.read_replica(&tenants.whole, Key::Bytes(bucket.as_bytes()), turn)?
            }
            Some((_, TenantRoute::Placed { node, .. })) => node,
        };
        Ok(&self.topology.nodes[index as usize].id)
    }

    /// The one shard that all `keys` share (for `redis_cluster`, their slot): what a
    /// multi-key command (`MGET`, `MSET`, a transaction) needs, since one node must hold
    /// every key. Hash tags (`{user1}.a`, `{user1}.b`) are how keys share a slot.
    ///
    /// # Errors
    /// `cross_slot` when two keys map to different shards (the message names the first
    /// key that differs and both shards), `invalid_argument` for no keys; otherwise as
    /// [`route`](Router::route).
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "strategy": {"type": "redis_cluster"}}"#)?;
    /// let slot = router.same_slot(["{user1}.name", "{user1}.mail"])?;
    /// assert_eq!(slot, router.route("user1")?);
    /// assert_eq!(router.same_slot(["user1", "user2"]).unwrap_err().code(), "cross_slot");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn same_slot<'k, I>(&self, keys: I) -> Result<u32>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        let mut first: Option<u32> = None;
        for (index, key) in keys.into_iter().enumerate() {
            let shard = self.route(key)?;
            match first {
                None => first = Some(shard),
                Some(expected) if expected != shard => {
                    return Err(Error::new(
                        crate::error::ErrorKind::CrossSlot,
                        format!("key {index} is in shard {shard}, key 0 in shard {expected}: the keys of one multi-key command must share a shard (use a hash tag)"),
                    ))
                }
                Some(_) => {}
            }
        }
        first.ok_or_else(|| Error::argument("same_slot needs at least one key"))
    }

    /// The keys grouped by the node that owns them, for pipelines and for splitting
    /// `MGET`/`MSET` by node: `(node index, indices of its keys in order)` for each node
    /// that owns at least one key, in node order. Every key is in exactly one group.
    ///
    /// # Errors
    /// As [`route`](Router::route); nothing is returned then.
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "modulo"}}"#)?;
    /// let groups = router.group_by_node([0u64, 1, 2, 3].map(shardroute::Key::U64))?;
    /// let total: usize = groups.iter().map(|(_, keys)| keys.len()).sum();
    /// assert_eq!(total, 4);
    /// assert!(groups.windows(2).all(|pair| pair[0].0 < pair[1].0));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn group_by_node<'k, I>(&self, keys: I) -> Result<Vec<(u32, Vec<u32>)>>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        let mut owners = Vec::new();
        self.node_index_many_into(keys, &mut owners)?;
        Ok(group_indices(&owners, self.topology.nodes.len()))
    }

    /// Replaces this router by `next` when `next` is newer: returns `next`, or refuses.
    ///
    /// Epochs only grow. A lower epoch is refused, and so is the same epoch with
    /// different content (two dictionaries may not share an epoch); the same document
    /// again is accepted. The error names the epoch this router holds, so a client can
    /// tell it is behind (like Couchbase's NOT_MY_VBUCKET or Redis' MOVED).
    ///
    /// # Errors
    /// `stale_epoch` as above.
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let doc = |epoch: u64| format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{{"id": "a"}}], "strategy": {{"type": "jump"}}}}"#);
    /// let current = Router::from_json(&doc(5)).unwrap();
    /// let err = current.replace(Router::from_json(&doc(4)).unwrap()).unwrap_err();
    /// assert_eq!(err.code(), "stale_epoch");
    /// assert_eq!(current.replace(Router::from_json(&doc(6)).unwrap()).unwrap().epoch(), 6);
    /// ```
    pub fn replace(&self, next: Router) -> Result<Router> {
        let (held, offered) = (self.epoch(), next.epoch());
        if offered < held {
            return Err(Error::new(
                crate::error::ErrorKind::StaleEpoch,
                format!("this router holds epoch {held}; the offered topology has the older epoch {offered}"),
            ));
        }
        if offered == held && next.topology != self.topology {
            return Err(Error::new(
                crate::error::ErrorKind::StaleEpoch,
                format!(
                    "this router holds epoch {held}; the offered topology has the same epoch with different content"
                ),
            ));
        }
        Ok(next)
    }

    /// The router after a `MOVED <slot> <address>` reply: the slot is served by the node
    /// at `address` (added, with that address as its id, when the topology does not know
    /// it), and the epoch advances by one. `self` is unchanged. The same as the
    /// `redis_moved` operation ([`crate::ops`]).
    ///
    /// Cost: for a node the topology has, a copy of this router with one slot-table entry
    /// written and the slot's range cut (no check, no compile); otherwise a new topology,
    /// checked and compiled. A Redis Cluster session edits its own router in place and
    /// makes no copy (`session::redis`).
    ///
    /// # Errors
    /// `invalid_argument` for a topology that is not `redis_cluster`, a slot outside
    /// `0..16384` or an address without a port; `limit_exceeded` for an address longer
    /// than a node id may be (a node the redirect adds takes it as its id);
    /// `invalid_topology` when the epoch cannot advance.
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a", "address": "10.0.0.1:6379"}, {"id": "b", "address": "10.0.0.2:6379"}],
    ///     "strategy": {"type": "redis_cluster"}}"#)?;
    /// let slot = router.route("user:1")?;
    /// let moved = router.moved(slot, "10.0.0.9:6379")?;
    /// assert_eq!(moved.node("user:1")?, "10.0.0.9:6379");
    /// assert_eq!(moved.epoch(), 2);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn moved(&self, slot: u32, address: &str) -> Result<Router> {
        let slot = check_slot(slot)?;
        check_address(address).map_err(Error::argument)?;
        check_moved_address_length("address", address)?;
        // Worded as the operation words a strategy that does not take it.
        let spec = self.redis_cluster("redis_moved")?;
        // A node the table has, over joined ranges: the table edited in place (a copy of
        // this router, then one slot written), with the ranges the rebuild below gives.
        #[cfg(feature = "redis_cluster")]
        if self.moves_in_place() && spec.is_joined() {
            if let Some(target) = node_index(&self.topology.nodes, address) {
                let mut next = self.clone();
                if next.move_slot_in_place(slot, target)? {
                    return Ok(next);
                }
            }
        }
        self.moved_rebuilt(spec, slot, address)
    }

    /// [`moved`](Router::moved) by a new topology, checked and compiled: for a node the
    /// table lacks, ranges not joined, or a topology whose other parts name nodes.
    /// `slot` and `address` are checked.
    pub(crate) fn moved_rebuilt(&self, spec: &RedisClusterSpec, slot: u32, address: &str) -> Result<Router> {
        let mut next = self.topology.clone();
        let moved = spec.moved(&mut next.nodes, slot, address);
        next.strategy = moved.spec.into_strategy()?;
        next.epoch = self.topology.next_epoch()?;
        next.check()?;
        Router::new(next)
    }

    /// Whether a `MOVED` can edit this router in place: nothing else in the topology names
    /// its nodes or carries its epoch (placement names, hot keys, global indexes).
    #[cfg(feature = "redis_cluster")]
    pub(crate) fn moves_in_place(&self) -> bool {
        matches!(self.placement, Placement::RedisCluster(_))
            && self.topology.placement.is_none()
            && self.topology.hot_keys.is_none()
            && self.topology.indexes.is_empty()
    }

    /// This router after `MOVED <slot>` to node `target` (an index into the nodes), edited
    /// in place: the slot's entry of the slot table written, its range cut around it, the
    /// epoch advanced by one; the router [`moved`](Router::moved) builds for that node's
    /// address. Needs [`moves_in_place`](Router::moves_in_place) and joined ranges (the
    /// caller checks them, or knows them). `Ok(false)`, and nothing changed, when it
    /// cannot be done in place (a slot table with no room for another chain).
    ///
    /// # Errors
    /// `invalid_argument` for a slot outside `0..16384`, a node index outside the nodes or
    /// a topology that is not `redis_cluster`; `invalid_topology` when the epoch cannot
    /// advance. Nothing changes then.
    #[cfg(feature = "redis_cluster")]
    pub(crate) fn move_slot_in_place(&mut self, slot: u32, target: u32) -> Result<bool> {
        let slot = check_slot(slot)?;
        let node_count = self.topology.nodes.len() as u32;
        if target >= node_count {
            return Err(Error::argument(format!("node index {target} is not in nodes")));
        }
        let epoch = self.topology.next_epoch()?;
        // Irrefutable in a build with redis_cluster alone.
        #[allow(irrefutable_let_patterns)]
        let (Strategy::RedisCluster(spec), Placement::RedisCluster(table)) =
            (&mut self.topology.strategy, &mut self.placement)
        else {
            return Err(Error::argument("redis_moved: applies to redis_cluster topologies"));
        };
        if !table.move_slot(slot, target) {
            return Ok(false);
        }
        spec.move_slot(node_count, slot, target);
        self.topology.epoch = epoch;
        self.max_replicas = self.placement.max_replicas();
        Ok(true)
    }

    /// The compiled slot table of a `redis_cluster` router (tests compare it).
    #[cfg(all(test, feature = "redis_cluster"))]
    pub(crate) fn slot_table(&self) -> Option<&crate::strategy::compat::redis_cluster::SlotTable> {
        match &self.placement {
            Placement::RedisCluster(table) => Some(table),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Where the next command for a key of `slot` goes after an `ASK <slot> <address>`
    /// reply: `address`, once, preceded by `ASKING`. Nothing changes: the slot is being
    /// migrated and stays with its owner until a `MOVED` (or a refresh) says otherwise.
    ///
    /// # Errors
    /// `invalid_argument` for a topology that is not `redis_cluster`, a slot outside
    /// `0..16384` or an address without a port.
    pub fn ask<'a>(&self, slot: u32, address: &'a str) -> Result<&'a str> {
        self.redis_cluster("ask")?;
        check_slot(slot)?;
        check_address(address).map_err(Error::argument)?;
        Ok(address)
    }

    /// The slot table of a `redis_cluster` router; `invalid_argument` naming `call` for
    /// any other strategy.
    fn redis_cluster(&self, call: &str) -> Result<&RedisClusterSpec> {
        self.strategy().spec::<RedisClusterSpec>().ok_or_else(|| {
            Error::argument(format!("{call}: applies to redis_cluster topologies, not {}", self.strategy().type_name()))
        })
    }

    /// The shards of many keys written into `out` (cleared first), reusing its
    /// allocation: the batch form of [`route`](Router::route) for bindings and hot loops.
    ///
    /// # Errors
    /// As [`route`](Router::route); `out` then holds the shards before the failing key.
    pub fn route_many_into<'k, I>(&self, keys: I, out: &mut Vec<u32>) -> Result<()>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        // Under `"keys": "u64"` every key goes through `route`, which reads text as an
        // integer or refuses it.
        // With tenants every key goes through `route`, which finds its tenant's entry.
        if self.placement.batches_hashes() && self.topology.hashing.keys == KeyType::Bytes && self.tenants.is_none() {
            let hashing = &self.topology.hashing;
            if hashing.routes_whole_keys() {
                // Decided once for the batch, not per key.
                self.placement.shards_of_hashes(keys.into_iter().map(|key| hashing.hash_whole(key.into())), out);
            } else {
                self.placement.shards_of_hashes(keys.into_iter().map(|key| hashing.hash(key.into())), out);
            }
            return Ok(());
        }
        out.clear();
        for key in keys {
            out.push(self.route(key)?);
        }
        Ok(())
    }

    /// The shards of integer keys (`Key::U64`), into `out` (cleared first).
    ///
    /// Where the placement batches (a `jump` topology runs many keys through jump's loop
    /// at once, [`jump`](crate::strategy::hashed::jump)), this and the other batch functions
    /// are 1.5-2x faster than [`route`](Router::route) per key, with the same results.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn route_u64s_into(&self, keys: &[u64], out: &mut Vec<u32>) -> Result<()> {
        if self.placement.batches_hashes() {
            let hashing = &self.topology.hashing;
            match hashing.integers {
                IntegerKeys::Identity => self.placement.shards_of_hash_slice(keys, out),
                _ => self.placement.shards_of_hashes(keys.iter().map(|&key| hashing.hash(Key::U64(key))), out),
            }
            return Ok(());
        }
        out.clear();
        out.reserve(keys.len());
        for &key in keys {
            out.push(self.route(Key::U64(key))?);
        }
        Ok(())
    }

    /// The shards of byte keys packed in one buffer, into `out` (cleared first): key `i`
    /// is `data[offsets[i]..offsets[i + 1]]`, so `offsets` has one more entry than there
    /// are keys (Arrow's layout for binary arrays).
    ///
    /// # Errors
    /// `invalid_argument` when `offsets` is empty, decreases, or points past `data`;
    /// otherwise as [`route`](Router::route).
    ///
    /// # Example
    /// ```
    /// let router = shardroute::Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}}"#).unwrap();
    /// let mut out = Vec::new();
    /// router.route_packed_into(b"user:1user:22", &[0, 6, 13], &mut out).unwrap();
    /// assert_eq!(out, [router.route("user:1").unwrap(), router.route("user:22").unwrap()]);
    /// ```
    pub fn route_packed_into(&self, data: &[u8], offsets: &[u32], out: &mut Vec<u32>) -> Result<()> {
        out.clear();
        if offsets.is_empty() {
            return Err(Error::argument("offsets must hold one more entry than there are keys (at least [0])"));
        }
        if self.placement.batches_hashes() && self.topology.hashing.keys == KeyType::Bytes && self.tenants.is_none() {
            // Route the keys before the first bad pair of offsets, if any, then let the
            // loop below report it, so `out` ends as it would without the fast path.
            let bad = offsets.windows(2).position(|pair| pair[0] > pair[1] || pair[1] as usize > data.len());
            let good = &offsets[..bad.map_or(offsets.len(), |index| index + 1)];
            let hashing = &self.topology.hashing;
            let key = |pair: &[u32]| &data[pair[0] as usize..pair[1] as usize];
            if hashing.routes_whole_keys() {
                // Decided once for the batch, not per key.
                self.placement
                    .shards_of_hashes(good.windows(2).map(|pair| hashing.hash_whole(Key::Bytes(key(pair)))), out);
            } else {
                self.placement.shards_of_hashes(good.windows(2).map(|pair| hashing.hash(Key::Bytes(key(pair)))), out);
            }
            if bad.is_none() {
                return Ok(());
            }
        }
        let routed = out.len();
        out.reserve(offsets.len() - 1);
        for (index, pair) in offsets.windows(2).enumerate().skip(routed) {
            let (start, end) = (pair[0] as usize, pair[1] as usize);
            let bytes = data.get(start..end).ok_or_else(|| {
                Error::argument(format!(
                    "offsets[{index}..={}] = {start}..{end} is not a range inside the {} bytes of data",
                    index + 1,
                    data.len()
                ))
            })?;
            out.push(self.route(Key::Bytes(bytes))?);
        }
        Ok(())
    }

    /// The node index (into [`nodes`](Router::nodes)) of many keys, into `out`.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn node_index_many_into<'k, I>(&self, keys: I, out: &mut Vec<u32>) -> Result<()>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        if self.placement.batches_hashes() && self.placement.shard_is_node() {
            return self.route_many_into(keys, out);
        }
        out.clear();
        for key in keys {
            out.push(self.node_index(key)?);
        }
        Ok(())
    }

    /// The shards of many keys, in order: the same as calling [`route`](Router::route)
    /// on each.
    ///
    /// # Errors
    /// As [`route`](Router::route).
    pub fn route_many<'k, I>(&self, keys: I) -> Result<Vec<u32>>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        keys.into_iter().map(|key| self.route(key)).collect()
    }
}

/// `(owner, indices)` groups of a list of owners (each below `node_count`): the indices
/// of each distinct owner, in order, groups in owner order. A counting pass when the
/// owners outnumber a quarter of the nodes (linear), a stable sort of the indices
/// otherwise (a handful of keys over thousands of nodes need no node-sized table).
pub(crate) fn group_indices(owners: &[u32], node_count: usize) -> Vec<(u32, Vec<u32>)> {
    if owners.len() * 4 >= node_count {
        let mut counts = alloc::vec![0u32; node_count];
        for &owner in owners {
            counts[owner as usize] += 1;
        }
        let mut groups: Vec<(u32, Vec<u32>)> = counts
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(|(owner, &count)| (owner as u32, Vec::with_capacity(count as usize)))
            .collect();
        // Each owner's position among the groups, reusing the counts.
        for (position, (owner, _)) in groups.iter().enumerate() {
            counts[*owner as usize] = position as u32;
        }
        for (index, &owner) in owners.iter().enumerate() {
            groups[counts[owner as usize] as usize].1.push(index as u32);
        }
        return groups;
    }
    let mut order: Vec<u32> = (0..owners.len() as u32).collect();
    // Stable, so each group keeps its keys in input order.
    order.sort_by_key(|&index| owners[index as usize]);
    let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
    for index in order {
        let owner = owners[index as usize];
        match groups.last_mut() {
            Some((last, members)) if *last == owner => members.push(index),
            _ => groups.push((owner, alloc::vec![index])),
        }
    }
    groups
}
