//! [`Router`]: the JavaScript class over [`sr::Router`].

use std::sync::Arc;

use napi::bindgen_prelude::{
    Array, BigInt, BigUint64ArraySlice, External, TypedArrayType, Uint32Array, Uint32ArraySlice, Uint8ArraySlice,
};
use napi::{Env, Unknown};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{self, Result, Throw};
use crate::key::{self, JsKey};

/// A router built from a topology document; `index.js` wraps it as the public `Router`.
#[napi]
pub struct Router {
    pub(crate) inner: Arc<sr::Router>,
}

/// A router shared with [`Router`] as an N-API external: what the hot single-key calls
/// ([`route_with`], [`node_with`]) take. napi-rs checks an external with one registry
/// lookup, while a `&self` method also records and releases a borrow of the class
/// instance, which on this package's benchmark costs about as much as routing itself.
pub type Handle = External<Arc<sr::Router>>;

/// The shard of `key` under `router`'s handle: the same as `Router.route`.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn route_with(router: &Handle, key: Unknown) -> Result<u32> {
    router.route(key::from_js(key)?.as_core()).or_throw()
}

/// The id of the node that owns `key` under `router`'s handle: the same as `Router.node`.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn node_with(router: &Handle, key: Unknown) -> Result<String> {
    Ok(router.node(key::from_js(key)?.as_core()).or_throw()?.to_owned())
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

    /// This router as a [`Handle`] for [`route_with`] and [`node_with`] (`index.js`
    /// takes it once per router).
    #[napi(catch_unwind)]
    pub fn handle(&self) -> Handle {
        External::new(Arc::clone(&self.inner))
    }

    /// The shard of `key` (a `u32`).
    #[napi(catch_unwind)]
    pub fn route(&self, key: Unknown) -> Result<u32> {
        self.inner.route(key::from_js(key)?.as_core()).or_throw()
    }

    /// The id of the node that owns `key`.
    #[napi(catch_unwind)]
    pub fn node(&self, key: Unknown) -> Result<String> {
        Ok(self.inner.node(key::from_js(key)?.as_core()).or_throw()?.to_owned())
    }

    /// `count` distinct node ids for `key`, owner first.
    #[napi(catch_unwind)]
    pub fn replicas(&self, key: Unknown, count: Unknown) -> Result<Vec<String>> {
        let key = key::from_js(key)?;
        let count = crate::u32_argument(count, "replica count")?;
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
        let keys = key::many_from_js(keys)?;
        let mut shards = Vec::new();
        let routed = self.inner.route_many_into(keys.iter().map(key::Key::as_core), &mut shards);
        // On error `shards` holds the shards before the failing key: its length is the index.
        routed.or_throw().map_err(|err| key::at(shards.len(), err))?;
        Ok(Uint32Array::new(shards))
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
        let mut shards = Vec::new();
        self.inner.route_packed_into(&data, &offsets, &mut shards).map_err(|err| {
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

    /// The ids of the nodes that own an array of keys, in order
    /// ([`sr::Router::node_index_many_into`]): each id is made once and shared.
    ///
    /// # Errors
    /// As [`route_many`](Router::route_many).
    #[napi(catch_unwind)]
    pub fn node_many<'env>(&self, env: &'env Env, keys: Unknown<'env>) -> Result<Array<'env>> {
        let keys = key::many_from_js(keys)?;
        let mut indices = Vec::new();
        let routed = self.inner.node_index_many_into(keys.iter().map(key::Key::as_core), &mut indices);
        routed.or_throw().map_err(|err| key::at(indices.len(), err))?;
        let ids = self.inner.nodes().iter().map(|node| env.create_string(&node.id)).collect::<napi::Result<Vec<_>>>();
        let ids = ids.or_throw()?;
        let mut array = env.create_array(indices.len() as u32).or_throw()?;
        for (position, &index) in indices.iter().enumerate() {
            array.set(position as u32, ids[index as usize]).or_throw()?;
        }
        Ok(array)
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
