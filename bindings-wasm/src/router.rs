//! `Router`: the core's [`sr::Router`] as a JavaScript class.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use js_sys::{Array, Reflect};
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::{invalid_argument, invalid_key, Result};
use crate::key::{type_name, Key};
use crate::{topology, u32_from_js};

/// A router: a validated topology compiled for lookups.
///
/// Built from a topology document (JSON text, or an object); every lookup gives the same
/// answer as the Rust core, the Python package and the Node addon. Errors are thrown as
/// `ShardrouteError` with a stable `.code`.
#[wasm_bindgen]
pub struct Router {
    inner: sr::Router,
}

#[wasm_bindgen]
impl Router {
    /// Parses, validates and compiles a topology document: JSON text, or an object
    /// (serialized with `JSON.stringify`, BigInt values as decimal strings).
    ///
    /// Throws `invalid_topology`, `no_nodes` or `limit_exceeded`.
    #[wasm_bindgen(constructor)]
    pub fn new(topology: &JsValue) -> Result<Router> {
        let text = topology::json_text(topology, "topology")?;
        Ok(Router { inner: sr::Router::from_json(&text)? })
    }

    /// The shard of a key (a node index, or the vbucket number for `vbucket`).
    pub fn route(&self, key: &JsValue) -> Result<u32> {
        Ok(self.inner.route(Key::from_js(key)?.as_key())?)
    }

    /// The id of the node that owns a key.
    pub fn node(&self, key: &JsValue) -> Result<String> {
        Ok(self.inner.node(Key::from_js(key)?.as_key())?.into())
    }

    /// `count` distinct node ids for a key in preference order, owner first.
    ///
    /// Throws `invalid_argument` when `count` is not an integer in `1..=` the number of
    /// nodes (or, for `vbucket`, the length of the key's chain).
    pub fn replicas(&self, key: &JsValue, count: &JsValue) -> Result<Vec<String>> {
        let key = Key::from_js(key)?;
        let count = u32_from_js(count, "count")?;
        Ok(self.inner.replicas(key.as_key(), count)?.into_iter().map(String::from).collect())
    }

    /// The shards of an array of keys, in order: the same as `route` on each.
    #[wasm_bindgen(js_name = routeMany)]
    pub fn route_many(&self, keys: &JsValue) -> Result<Vec<u32>> {
        if !Array::is_array(keys) {
            return Err(invalid_argument(format!("keys must be an array, got {}", type_name(keys))).into());
        }
        // Read through `Reflect.get` (imported with `catch`): a proxy trap or getter that
        // throws becomes an error here instead of a JS exception unwinding through this call.
        let length = Reflect::get(keys, &JsValue::from_str("length"))
            .ok()
            .and_then(|length| u32_from_js(&length, "keys.length").ok())
            .ok_or_else(|| invalid_argument(String::from("keys has no readable length")))?;
        // The length comes from JavaScript: never reserve more than a small batch up front.
        let mut converted = Vec::with_capacity(length.min(1024) as usize);
        for index in 0..length {
            let key = Reflect::get_u32(keys, index)
                .map_err(|_| invalid_key(String::from("cannot be read (a getter or proxy trap threw)")))
                .and_then(|item| Key::from_js(&item))
                .map_err(|err| sr::Error::new(err.kind(), format!("keys[{index}]: {}", err.message())))?;
            converted.push(key);
        }
        Ok(self.inner.route_many(converted.iter().map(Key::as_key))?)
    }

    /// The topology's epoch, as a BigInt (a u64, exact above 2^53).
    #[wasm_bindgen(getter)]
    pub fn epoch(&self) -> u64 {
        self.inner.epoch()
    }

    /// The canonical JSON of the topology, byte for byte the core's.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }
}
