//! `Migration`: the core's [`sr::migration::Migration`] as a JavaScript class.

use alloc::string::String;
use alloc::vec::Vec;

use js_sys::Array;
#[cfg(feature = "full-api")]
use js_sys::Object;
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key::{self, Key};
#[cfg(feature = "full-api")]
use crate::numbers;
#[cfg(feature = "full-api")]
use crate::router::Batch;
use crate::router::Router;
use crate::topology::record;

/// A move of data from one topology to the next while the application runs: where a key
/// goes, where services write (the new owner) and read (the old owner, then the new one
/// until the key's data has moved), and what a copy job moves.
///
/// It holds copies of its two routers: the `Router` objects passed in stay as they were,
/// usable and free to be freed.
#[wasm_bindgen]
pub struct Migration {
    pub(crate) inner: sr::migration::Migration,
}

#[wasm_bindgen]
impl Migration {
    /// The migration from `before` to `after`, two `Router`s.
    ///
    /// Throws `invalid_argument` when either is not a live `Router`, `stale_epoch` unless
    /// `after`'s epoch is higher than `before`'s.
    #[wasm_bindgen(constructor)]
    pub fn new(before: &JsValue, after: &JsValue) -> Result<Migration> {
        let before = Router::lend(before, "before", sr::Router::clone)?;
        let after = Router::lend(after, "after", sr::Router::clone)?;
        Ok(Migration { inner: sr::migration::Migration::new(before, after)? })
    }

    /// The migration a vbucket dictionary in motion describes: from its `map` (at its
    /// epoch) to its `forward_map` (at the next). The router is not modified.
    ///
    /// Throws `invalid_argument` when `router` is not a live `Router`, not a vbucket
    /// dictionary, or has no `forward_map`.
    #[wasm_bindgen(js_name = ofDictionary)]
    pub fn of_dictionary(router: &JsValue) -> Result<Migration> {
        let inner = Router::lend(router, "router", sr::migration::Migration::of_dictionary)??;
        Ok(Migration { inner })
    }

    /// A router of the topology data moves from (a new object each time).
    #[wasm_bindgen(getter)]
    pub fn before(&self) -> Router {
        Router::wrap(self.inner.before().clone())
    }

    /// A router of the topology data moves to (a new object each time).
    #[wasm_bindgen(getter)]
    pub fn after(&self) -> Router {
        Router::wrap(self.inner.after().clone())
    }

    /// `{from, to}` when the key changes node, `null` when it stays.
    pub fn moves(&self, key: &JsValue) -> Result<JsValue> {
        let key = Key::from_js(key)?;
        Ok(match self.inner.moves(key.as_key())? {
            Some((from, to)) => record(&Array::of2(
                &Array::of2(&JsValue::from_str("from"), &JsValue::from_str(from)),
                &Array::of2(&JsValue::from_str("to"), &JsValue::from_str(to)),
            ))?
            .into(),
            None => JsValue::NULL,
        })
    }

    /// Where a write of the key goes: its new owner.
    #[wasm_bindgen(js_name = writeTarget)]
    pub fn write_target(&self, key: &JsValue) -> Result<String> {
        Ok(self.inner.write_target(Key::from_js(key)?.as_key())?.into())
    }

    /// Where a read of the key looks, in order: the old owner, then the new one, unless
    /// `moved` (omitted: false) or the key stays.
    ///
    /// Throws `invalid_argument` when `moved` is not a boolean.
    #[wasm_bindgen(js_name = readTargets)]
    pub fn read_targets(&self, key: &JsValue, moved: &JsValue) -> Result<Vec<String>> {
        let key = Key::from_js(key)?;
        let moved = key::with_type(moved, |got| sr::argument::optional_flag("moved", got))?;
        Ok(crate::owned_ids(self.inner.read_targets(key.as_key(), moved)?))
    }

    /// The keys a read of a hot key gathers while clients may hold either topology: every
    /// salted form under `after` (salt 0 first), then those under `before` that `after`
    /// lacks; keys of the input key's type, as for `Router.saltedKey`.
    #[wasm_bindgen(js_name = readKeys)]
    pub fn read_keys(&self, key: &JsValue) -> Result<Array> {
        let key = Key::from_js(key)?;
        let keys = Array::new();
        for read in self.inner.read_keys(key.as_key()) {
            keys.push(&key.salted_to_js(read)?);
        }
        Ok(keys)
    }

    /// The key a write with `salt` goes to: `after`'s salted key.
    ///
    /// Throws `invalid_argument` when `salt` is not an integer in `0..=2^32-1`.
    #[wasm_bindgen(js_name = writeKey)]
    pub fn write_key(&self, key: &JsValue, salt: &JsValue) -> Result<JsValue> {
        let key = Key::from_js(key)?;
        let salt = crate::u32_from_js(salt, "salt")?;
        Ok(key.salted_to_js(self.inner.write_key(key.as_key(), salt))?)
    }
}

/// What a copy job asks, which a routing tier does not: left out of a build without the
/// `full-api` feature (the route build, `shardroute-wasm/route`).
#[cfg(feature = "full-api")]
#[wasm_bindgen]
impl Migration {
    /// The shards whose owner changes, in shard order, as `{shard, from, to}`: for two
    /// topologies whose shards are the same fixed partitions (vbuckets, slots, partitions).
    ///
    /// Throws `invalid_argument` for any other two (list the keys that move with
    /// `movingKeys`).
    #[wasm_bindgen(js_name = movingShards)]
    pub fn moving_shards(&self) -> Result<Array> {
        let shards = Array::new();
        for moving in self.inner.moving_shards()? {
            let shard: Object = record(&Array::of3(
                &Array::of2(&JsValue::from_str("shard"), &moving.shard.into()),
                &Array::of2(&JsValue::from_str("from"), &JsValue::from_str(moving.from)),
                &Array::of2(&JsValue::from_str("to"), &JsValue::from_str(moving.to)),
            ))?;
            shards.push(&shard);
        }
        Ok(shards)
    }

    /// The node ids a query over every key reads while data moves, in the order to read
    /// them (old owners before new ones; a node may be listed twice): merge their rows
    /// by identity. See `Migration::scan_nodes` in the core.
    #[wasm_bindgen(js_name = scanNodes)]
    pub fn scan_nodes(&self) -> Array {
        self.inner.scan_nodes().into_iter().map(JsValue::from_str).collect()
    }

    /// The indices of the keys of an array that change node, in increasing order, as a
    /// plain array. Keys cross as for `Router.routeMany`.
    #[wasm_bindgen(js_name = movingKeys)]
    pub fn moving_keys(&self, keys: &JsValue) -> Result<Array> {
        Ok(numbers(&self.inner.moving_keys(Batch::from_js(keys)?.keys())?))
    }
}
