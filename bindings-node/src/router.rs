//! [`Router`]: the JavaScript class over [`sr::Router`].

use napi::bindgen_prelude::{Array, BigInt, Uint32Array};
use napi::{JsValue, Unknown};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{self, Result, Throw};
use crate::key;

/// A router built from a topology document; `index.js` wraps it as the public `Router`.
#[napi]
pub struct Router {
    inner: sr::Router,
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
        let text = crate::document_text(topology, "topology")?;
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
        if !keys.is_array().or_throw()? {
            let kind = keys.get_type().or_throw()?;
            return Err(errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("keys must be an array, got {}", key::describe(keys, kind)?),
            ));
        }
        // SAFETY: `is_array` said this is an array.
        let keys: Array = unsafe { keys.cast() }.or_throw()?;
        let mut shards = Vec::with_capacity(keys.len() as usize);
        for index in 0..keys.len() {
            let at = |err: errors::Error| napi::Error::new(err.status, format!("keys[{index}]: {}", err.reason));
            let value: Unknown = keys.get(index).or_throw()?.ok_or_else(|| at(missing()))?;
            let key = key::from_js(value).map_err(at)?;
            shards.push(self.inner.route(key.as_core()).or_throw().map_err(at)?);
        }
        Ok(Uint32Array::new(shards))
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

fn missing() -> errors::Error {
    errors::new(sr::ErrorKind::InvalidArgument, "the array changed while it was read")
}
