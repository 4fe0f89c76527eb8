//! [`Router`]: the JavaScript class over [`sr::Router`].

use std::sync::Arc;

use napi::bindgen_prelude::{
    Array, BigInt, BigUint64ArraySlice, ClassInstance, TypedArrayType, Uint16ArraySlice, Uint32Array, Uint32ArraySlice,
    Uint8ArraySlice,
};
use napi::{Env, Unknown, ValueType};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{self, Result, Throw};
use crate::key::{self, JsKey};

/// A router built from a topology document; `index.js` wraps it as the public `Router`.
#[napi]
pub struct Router {
    pub(crate) inner: Arc<sr::Router>,
}

#[napi]
impl Router {
    /// Builds a router from the topology document's JSON text.
    ///
    /// # Errors
    /// The core's (`invalid_topology`, `no_nodes`, `limit_exceeded`); `invalid_topology`
    /// for a value that is not a string.
    #[napi(constructor, catch_unwind)]
    pub fn new(topology: Unknown) -> Result<Self> {
        let text = crate::document_text(topology, "topology", sr::ErrorKind::InvalidTopology)?;
        Ok(Router { inner: Arc::new(sr::Router::from_json(&text).or_throw()?) })
    }

    /// `[route, nodeIndex]`: plain N-API functions of one key over this router, the same
    /// as [`route`](Router::route) and the index of [`node`](Router::node)'s node in
    /// [`node_ids`](Router::node_ids), at a fraction of a `#[napi]` method's call cost
    /// ([`crate::hot`]). `index.js` makes them once per router.
    #[napi(catch_unwind)]
    pub fn hot_functions<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        crate::hot::functions(env, &self.inner)
    }

    /// The node ids in document order (the core's node indices index it).
    #[napi(catch_unwind)]
    pub fn node_ids(&self) -> Vec<String> {
        self.inner.nodes().iter().map(|node| node.id.clone()).collect()
    }

    // `route` and `node` are the plain N-API functions of `hotFunctions` (hot.rs).

    /// `count` distinct node ids for `key`, owner first.
    #[napi(catch_unwind)]
    pub fn replicas(&self, key: Unknown, count: Unknown) -> Result<Vec<String>> {
        let key = key::from_js(key)?;
        let count = crate::u32_argument(count, "count")?;
        let ids = self.inner.replicas(key.as_core(), count).or_throw()?;
        Ok(ids.into_iter().map(str::to_owned).collect())
    }

    /// The shards of an array of keys, in order ([`sr::Router::route_many_into`]).
    ///
    /// # Errors
    /// `invalid_argument` when `keys` is not an array; a key's error, its message
    /// prefixed with the key's index.
    #[napi(catch_unwind)]
    pub fn route_many(&self, keys: Unknown) -> Result<Uint32Array> {
        each_key(keys, |keys, shards| self.inner.route_many_into(keys.iter().map(key::Key::as_core), shards))
    }

    /// The shards of integer keys given as one `BigUint64Array`, read in place
    /// ([`sr::Router::route_u64s_into`]).
    ///
    /// # Errors
    /// `invalid_argument` when `keys` is not a `BigUint64Array`.
    #[napi(js_name = "routeU64s", catch_unwind)]
    pub fn route_u64s(&self, keys: Unknown) -> Result<Uint32Array> {
        let keys: BigUint64ArraySlice = key::typed_array(keys, TypedArrayType::BigUint64, "keys")?;
        let mut shards = Vec::new();
        self.inner.route_u64s_into(&keys, &mut shards).or_throw()?;
        Ok(Uint32Array::new(shards))
    }

    /// The shards of byte keys packed in one `Uint8Array` (a `Buffer` too): key `i` is
    /// `data[offsets[i]..offsets[i + 1]]` ([`sr::Router::route_packed_into`]). Both
    /// arrays are read in place.
    ///
    /// # Errors
    /// `invalid_argument` when `data` is not a `Uint8Array`, `offsets` not a
    /// `Uint32Array`, or the offsets are empty, decrease or point past `data`; a key's
    /// error, its message prefixed with the key's index.
    #[napi(catch_unwind)]
    pub fn route_packed(&self, data: Unknown, offsets: Unknown) -> Result<Uint32Array> {
        let data: Uint8ArraySlice = key::typed_array(data, TypedArrayType::Uint8, "data")?;
        let offsets: Uint32ArraySlice = key::typed_array(offsets, TypedArrayType::Uint32, "offsets")?;
        self.route_packed_bytes(&data, &offsets)
    }

    /// [`route_packed`](Router::route_packed) over `data` and `offsets` read in place.
    fn route_packed_bytes(&self, data: &[u8], offsets: &[u32]) -> Result<Uint32Array> {
        let mut shards = Vec::new();
        self.inner.route_packed_into(data, offsets, &mut shards).map_err(|err| {
            // A key's own error (not the offsets' `invalid_argument`) names the key, as
            // `route_many` does: `shards` then holds the shards before it.
            let keyed = err.kind() != sr::ErrorKind::InvalidArgument;
            let err = errors::new(err.kind(), err.message());
            if keyed {
                key::at(shards.len(), err)
            } else {
                err
            }
        })?;
        Ok(Uint32Array::new(shards))
    }

    /// The shards of string keys packed as UTF-16 code units (`index.js` packs an array of
    /// strings this way: one call instead of an N-API read per key): key `i` is
    /// `units[offsets[i]..offsets[i + 1]]`, converted to UTF-8 on its own
    /// ([`key::for_each_packed_utf16`]).
    ///
    /// # Errors
    /// As [`route_many`](Router::route_many) over the same strings;
    /// `invalid_argument` for a bad `units` or `offsets`.
    #[napi(js_name = "routeManyUtf16", catch_unwind)]
    pub fn route_many_utf16(&self, units: Unknown, offsets: Unknown) -> Result<Uint32Array> {
        let (units, offsets) = packed_utf16(units, offsets)?;
        if let Some(bytes) = key::ascii_from_packed_utf16(&units) {
            return self.route_packed_bytes(&bytes, &offsets);
        }
        each_packed_utf16(&units, &offsets, |bytes| self.inner.route(bytes))
    }

    /// The node indices (into [`node_ids`](Router::node_ids)) of string keys packed as
    /// UTF-16 code units, as for [`route_many_utf16`](Router::route_many_utf16).
    ///
    /// # Errors
    /// As [`route_many_utf16`](Router::route_many_utf16).
    #[napi(js_name = "nodeIndexManyUtf16", catch_unwind)]
    pub fn node_index_many_utf16(&self, units: Unknown, offsets: Unknown) -> Result<Uint32Array> {
        let (units, offsets) = packed_utf16(units, offsets)?;
        each_packed_utf16(&units, &offsets, |bytes| self.inner.node_index(bytes))
    }

    /// The node indices (into [`node_ids`](Router::node_ids)) of an array of keys, in order
    /// ([`sr::Router::node_index_many_into`]). `index.js` maps them to the ids: one shared
    /// string per node, and no N-API call per key to build the array.
    ///
    /// # Errors
    /// As [`route_many`](Router::route_many).
    #[napi(catch_unwind)]
    pub fn node_index_many(&self, keys: Unknown) -> Result<Uint32Array> {
        each_key(keys, |keys, indices| self.inner.node_index_many_into(keys.iter().map(key::Key::as_core), indices))
    }

    /// The shards a scan over keys in `[start, end)` must visit, in key order; `end`
    /// `undefined` or `null` scans to the end of the key space.
    ///
    /// # Errors
    /// `invalid_key` for a bound that is not a key; the core's (`invalid_argument` when
    /// `end` is not after `start` for a range strategy).
    #[napi(catch_unwind)]
    pub fn shards_for_range(&self, start: Unknown, end: Unknown) -> Result<Vec<u32>> {
        let start = key::from_js(start)?;
        let end = key::optional_from_js(end)?;
        self.inner.shards_for_range(start.as_core(), end.as_ref().map(key::Key::as_core)).or_throw()
    }

    /// Decodes an id (a `bigint` or a decimal string) that carries its shard.
    /// `index.js` turns `fields` into an object in field order.
    ///
    /// # Errors
    /// `invalid_key` for an id outside `0..2^64`; the core's (`invalid_argument` when the
    /// strategy's ids do not carry a shard).
    #[napi(catch_unwind)]
    pub fn decode_id(&self, id: Unknown) -> Result<DecodedId> {
        let id = key::u64_from_js(id, "id")?;
        let decoded = self.inner.decode_id(id).or_throw()?;
        Ok(DecodedId {
            shard: decoded.shard,
            fields: decoded.fields.into_iter().map(|(name, value)| (name.to_owned(), BigInt::from(value))).collect(),
        })
    }

    /// The scatter/gather plan of a query over every shard, in columns ([`ScatterColumns`];
    /// `index.js` names the nodes): see [`sr::scatter`]. `readFrom` `"primary"` (default), `"replicas"` or
    /// `"zone"`; `turn` a count (default 0); `zone` a string or `undefined`/`null`.
    #[napi(catch_unwind)]
    pub fn scatter_every(&self, read_from: Unknown, turn: Unknown, zone: Unknown) -> Result<ScatterColumns> {
        self.scatter(sr::scatter::Scope::Every, read_from, turn, zone)
    }

    /// As [`scatter_every`](Router::scatter_every), for the keys in `[start, end)`.
    #[napi(catch_unwind)]
    pub fn scatter_range(
        &self,
        start: Unknown,
        end: Unknown,
        read_from: Unknown,
        turn: Unknown,
        zone: Unknown,
    ) -> Result<ScatterColumns> {
        let start = key::from_js(start)?;
        let end = match end.get_type().or_throw()? {
            ValueType::Undefined | ValueType::Null => None,
            _ => Some(key::from_js(end)?),
        };
        let scope = sr::scatter::Scope::Range { start: start.as_core(), end: end.as_ref().map(key::Key::as_core) };
        self.scatter(scope, read_from, turn, zone)
    }

    /// As [`scatter_every`](Router::scatter_every), for an array of keys.
    #[napi(catch_unwind)]
    pub fn scatter_keys(
        &self,
        keys: Unknown,
        read_from: Unknown,
        turn: Unknown,
        zone: Unknown,
    ) -> Result<ScatterColumns> {
        let keys = key::many_from_js(keys)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(key::Key::as_core).collect();
        self.scatter(sr::scatter::Scope::Keys(&keys), read_from, turn, zone)
    }

    /// The router of the global index `name` (`invalid_argument` when there is none).
    #[napi(catch_unwind)]
    pub fn index(&self, name: Unknown) -> Result<Router> {
        let name = crate::text_argument(name, "name")?;
        Ok(Router { inner: Arc::new(self.inner.index(&name).or_throw()?.clone()) })
    }

    /// The names of the global indexes, sorted.
    #[napi(catch_unwind)]
    pub fn index_names(&self) -> Vec<String> {
        self.inner.index_names().map(str::to_owned).collect()
    }

    /// The router of the table family that lists `table` (`invalid_argument` when none does).
    #[napi(catch_unwind)]
    pub fn table(&self, table: Unknown) -> Result<Router> {
        let table = crate::text_argument(table, "table")?;
        Ok(Router { inner: Arc::new(self.inner.table(&table).or_throw()?.clone()) })
    }

    /// The node a caller in `zone` (a string, or `undefined`/`null`) reads `key` from: the
    /// core's `read_near`.
    #[napi(catch_unwind)]
    pub fn read_near(&self, key: Unknown, zone: Unknown) -> Result<String> {
        let key = key::from_js(key)?;
        let zone = match zone.get_type().or_throw()? {
            ValueType::Undefined | ValueType::Null => None,
            _ => Some(crate::text_argument(zone, "zone")?),
        };
        Ok(self.inner.read_near(key.as_core(), zone.as_deref()).or_throw()?.to_owned())
    }

    /// What one write touches, as the JSON text of the core's plan (`index.js` parses it):
    /// the document's shard and node, then each index shard its `[name, term]` pairs touch.
    #[napi(catch_unwind)]
    pub fn index_write_plan(&self, key: Unknown, terms: Unknown) -> Result<String> {
        let key = key::from_js(key)?;
        let pairs = key::pairs_from_js(terms, "terms")?;
        let borrowed: Vec<(&str, sr::Key<'_>)> =
            pairs.iter().map(|(name, term)| (name.as_str(), term.as_core())).collect();
        let plan = self.inner.index_write_plan(key.as_core(), &borrowed).or_throw()?;
        Ok(plan.to_value(&self.inner).to_string())
    }

    /// Where `key` lives: shard, node, address, zone and the rendered placement names.
    /// `index.js` turns `names` into an object.
    #[napi(catch_unwind)]
    pub fn locate(&self, key: Unknown) -> Result<Location> {
        let location = self.inner.locate(key::from_js(key)?.as_core()).or_throw()?;
        Ok(Location {
            shard: location.shard,
            node: location.node.to_owned(),
            address: location.address.map(str::to_owned),
            zone: location.zone.map(str::to_owned),
            names: location.names.into_iter().map(|(name, value)| (name.to_owned(), value)).collect(),
        })
    }

    /// How many salted keys `key` is spread over (1 when it is not hot).
    #[napi(catch_unwind)]
    pub fn fanout(&self, key: Unknown) -> Result<u32> {
        Ok(self.inner.fanout(key::from_js(key)?.as_core()))
    }

    /// The key to write `key`'s value under for `salt`, as the type `key` came in as.
    ///
    /// # Errors
    /// `invalid_key`; `invalid_argument` when `salt` is not an integer in `0..=2^32-1`.
    #[napi(catch_unwind)]
    pub fn salted_key(&self, key: Unknown, salt: Unknown) -> Result<JsKey> {
        let key = key::from_js(key)?;
        let salt = crate::u32_argument(salt, "salt")?;
        key::to_js(&key, self.inner.salted_key(key.as_core(), salt))
    }

    /// Every salted form of `key` with its shard, salt 0 first: `[key, shard]` pairs, each
    /// key the type `key` came in as.
    #[napi(catch_unwind)]
    pub fn salted_keys(&self, key: Unknown) -> Result<Vec<(JsKey, u32)>> {
        let key = key::from_js(key)?;
        let pairs = self.inner.salted_keys(key.as_core()).or_throw()?;
        pairs.into_iter().map(|(salted, shard)| Ok((key::to_js(&key, salted)?, shard))).collect()
    }

    /// The node that serves reads of `key`: the same as `node` except for a vbucket in
    /// motion, whose reads go to its old owner.
    #[napi(catch_unwind)]
    pub fn route_read(&self, key: Unknown) -> Result<String> {
        Ok(self.inner.route_read(key::from_js(key)?.as_core()).or_throw()?.to_owned())
    }

    /// The node ids a write of `key` goes to, the deciding one first: `[node(key)]`, or
    /// for a migrating vbucket `[new owner, old owner]`.
    ///
    /// # Errors
    /// `invalid_key`; `read_only` for a read-only vbucket.
    #[napi(catch_unwind)]
    pub fn route_write(&self, key: Unknown) -> Result<Vec<String>> {
        let ids = self.inner.route_write(key::from_js(key)?.as_core()).or_throw()?;
        Ok(ids.into_iter().map(str::to_owned).collect())
    }

    /// The node id to read `key` from when reads may go to replicas
    /// ([`sr::Router::read_replica`]): a replica of its chain picked by `turn`
    /// (`undefined`: 0), or the owner when the chain has none.
    ///
    /// # Errors
    /// `invalid_key`; `invalid_argument` when `turn` is not an integer in `0..=2^32-1`.
    #[napi(catch_unwind)]
    pub fn read_replica(&self, key: Unknown, turn: Unknown) -> Result<String> {
        let key = key::from_js(key)?;
        let turn = crate::optional_u32_argument(turn, "turn")?;
        Ok(self.inner.read_replica(key.as_core(), turn).or_throw()?.to_owned())
    }

    /// How many of `keys` each node owns and how evenly they spread
    /// ([`sr::Router::stats`]), its fields in `camelCase`, as JSON text that `index.js` parses.
    ///
    /// # Errors
    /// As [`route_many`](Router::route_many).
    #[napi(catch_unwind)]
    pub fn stats(&self, keys: Unknown) -> Result<String> {
        let keys = key::many_from_js(keys)?;
        let stats = self.inner.stats(keys.iter().map(key::Key::as_core)).or_throw()?;
        Ok(crate::js_session::camel_fields(stats.to_value(&self.inner)).to_string())
    }

    /// The one shard all keys of an array share ([`sr::Router::same_slot`]).
    ///
    /// # Errors
    /// As [`route_many`](Router::route_many); `cross_slot` for keys in different shards,
    /// `invalid_argument` for no keys.
    #[napi(catch_unwind)]
    pub fn same_slot(&self, keys: Unknown) -> Result<u32> {
        let keys = key::many_from_js(keys)?;
        self.inner.same_slot(keys.iter().map(key::Key::as_core)).or_throw()
    }

    /// The keys of an array grouped by the node that owns them
    /// ([`sr::Router::group_by_node`]), flattened ([`flat_groups`]) for `index.js`.
    ///
    /// # Errors
    /// As [`route_many`](Router::route_many).
    #[napi(catch_unwind)]
    pub fn group_by_node(&self, keys: Unknown) -> Result<Uint32Array> {
        let keys = key::many_from_js(keys)?;
        Ok(flat_groups(self.inner.group_by_node(keys.iter().map(key::Key::as_core)).or_throw()?))
    }

    /// [`group_by_node`](Router::group_by_node) of string keys packed as UTF-16 code
    /// units, as for [`route_many_utf16`](Router::route_many_utf16): the keys are
    /// converted to UTF-8 into one buffer ([`sr::key::utf8_from_packed_utf16`]), then
    /// grouped in one core call.
    ///
    /// # Errors
    /// As [`route_many_utf16`](Router::route_many_utf16).
    #[napi(js_name = "groupByNodeUtf16", catch_unwind)]
    pub fn group_by_node_utf16(&self, units: Unknown, offsets: Unknown) -> Result<Uint32Array> {
        let (units, offsets) = packed_utf16(units, offsets)?;
        let (data, ends) = sr::key::utf8_from_packed_utf16(&units, &offsets).or_throw()?;
        let keys = ends.windows(2).map(|pair| &data[pair[0] as usize..pair[1] as usize]);
        Ok(flat_groups(self.inner.group_by_node(keys).or_throw()?))
    }

    /// The router after a Redis Cluster `MOVED` ([`sr::Router::moved`]); this router is
    /// unchanged. `index.js` wraps the result as a public `Router`.
    ///
    /// # Errors
    /// `invalid_argument` for a slot that is not an integer in `0..16384`, an address
    /// that is not a string with a port, a topology that is not `redis_cluster`.
    #[napi(catch_unwind)]
    pub fn moved(&self, slot: Unknown, address: Unknown) -> Result<Router> {
        let slot = crate::u32_argument(slot, "slot")?;
        let address = crate::text_argument(address, "address")?;
        Ok(Router { inner: Arc::new(self.inner.moved(slot, &address).or_throw()?) })
    }

    /// Where the next command for a key of `slot` goes after a Redis Cluster `ASK`
    /// ([`sr::Router::ask`]): `address`.
    ///
    /// # Errors
    /// As [`moved`](Router::moved).
    #[napi(catch_unwind)]
    pub fn ask(&self, slot: Unknown, address: Unknown) -> Result<String> {
        let slot = crate::u32_argument(slot, "slot")?;
        let address = crate::text_argument(address, "address")?;
        Ok(self.inner.ask(slot, &address).or_throw()?.to_owned())
    }

    /// The id of the node that owns a shard ([`sr::Router::shard_owner`]).
    ///
    /// # Errors
    /// `invalid_argument` for a shard that is not an integer of the topology's shards;
    /// `no_nodes` for a Couchbase vbucket without an active node.
    #[napi(catch_unwind)]
    pub fn shard_owner(&self, shard: Unknown) -> Result<String> {
        let shard = crate::u32_argument(shard, "shard")?;
        Ok(self.inner.shard_owner(shard).or_throw()?.to_owned())
    }

    /// A new router for `topology` (JSON text, as for the constructor) when it is newer
    /// than this one's ([`sr::Router::replace`]); this router is unchanged. `index.js`
    /// wraps the result as a public `Router`.
    ///
    /// # Errors
    /// The topology's errors as for the constructor; `stale_epoch` for an older epoch,
    /// or the same epoch with different content (the message names the held epoch).
    #[napi(catch_unwind)]
    pub fn replace(&self, topology: Unknown) -> Result<Router> {
        let next = Router::new(topology)?;
        let next = Arc::try_unwrap(next.inner).unwrap_or_else(|shared| (*shared).clone());
        Ok(Router { inner: Arc::new(self.inner.replace(next).or_throw()?) })
    }

    /// The topology's epoch, a `bigint`.
    #[napi(getter, catch_unwind)]
    pub fn epoch(&self) -> BigInt {
        BigInt::from(self.inner.epoch())
    }

    /// The canonical JSON of the topology, byte for byte the core's.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }
}

/// Reads a `Router` argument (a native router; `index.js` unwraps its public ones);
/// `what` names it in the message.
///
/// # Errors
/// `invalid_argument` for any other value.
pub fn argument<'env>(env: &Env, value: Unknown<'env>, what: &str) -> Result<ClassInstance<'env, Router>> {
    key::instance(env, value, |got| sr::argument::not_a_router(what, got))
}

/// `many_into` (a core batch call, appending a result per key) over an array of keys, read
/// with [`key::many_from_js`].
///
/// # Errors
/// As [`key::many_from_js`]; a key's error from the core, its message prefixed with the
/// key's index.
fn each_key(
    keys: Unknown<'_>,
    many_into: impl FnOnce(&[key::Key<'_>], &mut Vec<u32>) -> sr::Result<()>,
) -> Result<Uint32Array> {
    let keys = key::many_from_js(keys)?;
    let mut results = Vec::new();
    let done = many_into(&keys, &mut results);
    // On error `results` holds the results before the failing key: its length is the index.
    done.or_throw().map_err(|err| key::at(results.len(), err))?;
    Ok(Uint32Array::new(results))
}

/// The groups of [`sr::Router::group_by_node`] in one array, for `index.js` to make the
/// `{ node, indices }` objects (one N-API call in all, rather than one per index): for
/// each group, its node index, its number of keys, then the keys' indices.
fn flat_groups(groups: Vec<(u32, Vec<u32>)>) -> Uint32Array {
    let keys: usize = groups.iter().map(|(_, indices)| indices.len()).sum();
    let mut flat = Vec::with_capacity(2 * groups.len() + keys);
    for (node, indices) in groups {
        // Fewer keys than a JavaScript array holds: the count fits.
        flat.extend([node, indices.len() as u32]);
        flat.extend(indices);
    }
    Uint32Array::new(flat)
}

/// The `units` (a `Uint16Array`) and `offsets` (a `Uint32Array`) of string keys packed as
/// UTF-16 code units, read in place.
///
/// # Errors
/// `invalid_argument` for another type.
fn packed_utf16<'env>(
    units: Unknown<'env>,
    offsets: Unknown<'env>,
) -> Result<(Uint16ArraySlice<'env>, Uint32ArraySlice<'env>)> {
    Ok((
        key::typed_array(units, TypedArrayType::Uint16, "units")?,
        key::typed_array(offsets, TypedArrayType::Uint32, "offsets")?,
    ))
}

/// `lookup` of the UTF-8 bytes of every string key packed as UTF-16 code units
/// ([`key::for_each_packed_utf16`]), in order; a key's error names its index.
fn each_packed_utf16(
    units: &[u16],
    offsets: &[u32],
    mut lookup: impl FnMut(&[u8]) -> sr::Result<u32>,
) -> Result<Uint32Array> {
    let mut results = Vec::with_capacity(offsets.len().saturating_sub(1));
    key::for_each_packed_utf16(units, offsets, |bytes| {
        let result = lookup(bytes).or_throw().map_err(|err| key::at(results.len(), err))?;
        results.push(result);
        Ok(())
    })?;
    Ok(Uint32Array::new(results))
}

/// [`sr::DecodedId`] for JavaScript: `fields` as `[name, bigint]` pairs in field order.
#[napi(object, object_from_js = false)]
pub struct DecodedId {
    /// The shard the id routes to.
    pub shard: u32,
    /// The id's other fields, most significant first.
    pub fields: Vec<(String, BigInt)>,
}

/// [`sr::Location`] for JavaScript: absent address and zone are `null`; `names` as
/// `[name, text]` pairs in name order.
#[napi(object, object_from_js = false, use_nullable = true)]
pub struct Location {
    /// The shard number.
    pub shard: u32,
    /// The owning node's id.
    pub node: String,
    /// The node's address, or `null`.
    pub address: Option<String>,
    /// The node's zone, or `null`.
    pub zone: Option<String>,
    /// Each placement template rendered for the shard.
    pub names: Vec<(String, String)>,
}

impl Router {
    /// The scatter calls: the policy read (`undefined`/`null` for the defaults), the
    /// core's plan as JSON text.
    fn scatter(
        &self,
        scope: sr::scatter::Scope<'_, '_>,
        read_from: Unknown,
        turn: Unknown,
        zone: Unknown,
    ) -> Result<ScatterColumns> {
        let optional = |value: Unknown<'_>, what: &str| -> Result<Option<String>> {
            match value.get_type().or_throw()? {
                ValueType::Undefined | ValueType::Null => Ok(None),
                _ => crate::text_argument(value, what).map(Some),
            }
        };
        let name = optional(read_from, "readFrom")?;
        let turn = match turn.get_type().or_throw()? {
            ValueType::Undefined | ValueType::Null => 0,
            _ => crate::u32_argument(turn, "turn")?,
        };
        let zone = optional(zone, "zone")?;
        let read_from =
            sr::scatter::ReadFrom::from_name(name.as_deref().unwrap_or("primary"), turn, zone.as_deref()).or_throw()?;
        let keys = matches!(scope, sr::scatter::Scope::Keys(_));
        let plan = self.inner.scatter(scope, read_from).or_throw()?;
        Ok(ScatterColumns {
            gather: plan.gather.name(),
            shards: Uint32Array::new(plan.visits.iter().map(|visit| visit.shard).collect()),
            nodes: Uint32Array::new(plan.visits.iter().map(|visit| visit.node).collect()),
            keys: keys.then(|| plan.visits.into_iter().map(|visit| visit.keys).collect()),
        })
    }
}

/// A scatter plan in columns: shard `i` is `shards[i]`, asked of node index `nodes[i]`
/// (`index.js` maps it to the node's id), with `keys[i]` the key indices it holds
/// (`scatterKeys`; `null` otherwise).
#[napi(object, object_from_js = false)]
pub struct ScatterColumns {
    /// `union`, `concat` or `merge`.
    pub gather: &'static str,
    /// The shards, in plan order.
    pub shards: Uint32Array,
    /// Each shard's node, as an index in the router's nodes.
    pub nodes: Uint32Array,
    /// Each shard's key indices, for a set of keys.
    pub keys: Option<Vec<Vec<u32>>>,
}
