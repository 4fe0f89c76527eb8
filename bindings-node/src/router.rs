//! [`Router`]: the JavaScript class over [`sr::Router`].

use napi::bindgen_prelude::{BigInt, Uint32Array};
use napi::Unknown;
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};
use crate::key::{self, JsKey};

/// A router built from a topology document; `index.js` wraps it as the public `Router`.
#[napi]
pub struct Router {
    pub(crate) inner: sr::Router,
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
        Ok(Router { inner: sr::Router::from_json(&text).or_throw()? })
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

    /// The shards of an array of keys, in order.
    ///
    /// # Errors
    /// `invalid_argument` when `keys` is not an array; a key's error, its message
    /// prefixed with the key's index.
    #[napi(catch_unwind)]
    pub fn route_many(&self, keys: Unknown) -> Result<Uint32Array> {
        let keys = key::many_from_js(keys)?;
        let shards = keys
            .iter()
            .enumerate()
            .map(|(index, key)| self.inner.route(key.as_core()).or_throw().map_err(|err| key::at(index, err)))
            .collect::<Result<Vec<u32>>>()?;
        Ok(Uint32Array::new(shards))
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
        Ok(Router { inner: self.inner.replace(next.inner).or_throw()? })
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
