//! [`Migration`]: the JavaScript class over [`sr::migration::Migration`].

use std::sync::Arc;

use napi::{Env, Unknown};
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};
use crate::key;
use crate::router::{self, Router};

/// A migration between two routers; `index.js` wraps it as the public `Migration`.
#[napi]
pub struct Migration {
    pub(crate) inner: sr::migration::Migration,
}

#[napi]
impl Migration {
    /// The migration from `before` to `after` (native routers; `index.js` unwraps its
    /// public `Router`s), over copies of both: the routers passed in are left as they are.
    ///
    /// # Errors
    /// `invalid_argument` when a router is not a `Router`; `stale_epoch` unless `after`'s
    /// epoch is higher than `before`'s.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: &Env, before: Unknown, after: Unknown) -> Result<Self> {
        let before = router::argument(env, before, "before")?;
        let after = router::argument(env, after, "after")?;
        let inner = sr::migration::Migration::new((*before.inner).clone(), (*after.inner).clone()).or_throw()?;
        Ok(Migration { inner })
    }

    /// The migration a vbucket dictionary in motion describes
    /// ([`sr::migration::Migration::of_dictionary`]).
    ///
    /// # Errors
    /// `invalid_argument` when `router` is not a `Router`, not a vbucket dictionary, or
    /// has no `forward_map`.
    #[napi(catch_unwind)]
    pub fn of_dictionary(env: &Env, router: Unknown) -> Result<Migration> {
        let router = router::argument(env, router, "router")?;
        Ok(Migration { inner: sr::migration::Migration::of_dictionary(&router.inner).or_throw()? })
    }

    /// A router of the topology data moves from. `index.js` wraps it as a public
    /// `Router`, once (a `Migration` made from two public routers gives those instead).
    #[napi(getter, catch_unwind)]
    pub fn before(&self) -> Router {
        Router { inner: Arc::new(self.inner.before().clone()) }
    }

    /// A router of the topology data moves to, as for [`before`](Migration::before).
    #[napi(getter, catch_unwind)]
    pub fn after(&self) -> Router {
        Router { inner: Arc::new(self.inner.after().clone()) }
    }

    /// `{ from, to }` when `key` changes node, `null` when it stays.
    ///
    /// # Errors
    /// `invalid_key`, and either topology's routing errors.
    #[napi(catch_unwind)]
    pub fn moves(&self, key: Unknown) -> Result<Option<Move>> {
        let key = key::from_js(key)?;
        let moves = self.inner.moves(key.as_core()).or_throw()?;
        Ok(moves.map(|(from, to)| Move { from: from.to_owned(), to: to.to_owned() }))
    }

    /// Where a write of `key` goes: its new owner.
    ///
    /// # Errors
    /// `invalid_key`, and the new topology's routing errors.
    #[napi(catch_unwind)]
    pub fn write_target(&self, key: Unknown) -> Result<String> {
        let key = key::from_js(key)?;
        Ok(self.inner.write_target(key.as_core()).or_throw()?.to_owned())
    }

    /// Where a read of `key` looks, in order: the old owner, then the new one, unless
    /// `moved` (a boolean; `undefined`: false) or the key stays.
    ///
    /// # Errors
    /// `invalid_key`; `invalid_argument` when `moved` is not a boolean or `undefined`.
    #[napi(catch_unwind)]
    pub fn read_targets(&self, key: Unknown, moved: Unknown) -> Result<Vec<String>> {
        let key = key::from_js(key)?;
        let moved = crate::optional_bool_argument(moved, "moved")?;
        let targets = self.inner.read_targets(key.as_core(), moved).or_throw()?;
        Ok(targets.into_iter().map(str::to_owned).collect())
    }

    /// The keys a read of a hot key gathers while clients may hold either topology
    /// ([`sr::migration::Migration::read_keys`]), each the type `key` came in as.
    ///
    /// # Errors
    /// `invalid_key`.
    #[napi(catch_unwind)]
    pub fn read_keys(&self, key: Unknown) -> Result<Vec<key::JsKey>> {
        let key = key::from_js(key)?;
        let keys = self.inner.read_keys(key.as_core());
        keys.into_iter().map(|read| key::to_js(&key, read)).collect()
    }

    /// The key a write with `salt` goes to: the after topology's salted key.
    ///
    /// # Errors
    /// `invalid_key`; `invalid_argument` when `salt` is not an integer in `0..=2^32-1`.
    #[napi(catch_unwind)]
    pub fn write_key(&self, key: Unknown, salt: Unknown) -> Result<key::JsKey> {
        let key = key::from_js(key)?;
        let salt = crate::u32_argument(salt, "salt")?;
        key::to_js(&key, self.inner.write_key(key.as_core(), salt))
    }

    /// The shards whose owner changes, in shard order
    /// ([`sr::migration::Migration::moving_shards`]).
    ///
    /// # Errors
    /// `invalid_argument` when the shards of the two topologies are not the same fixed
    /// partitions.
    #[napi(catch_unwind)]
    pub fn moving_shards(&self) -> Result<Vec<MovingShard>> {
        let shards = self.inner.moving_shards().or_throw()?;
        Ok(shards
            .into_iter()
            .map(|moving| MovingShard { shard: moving.shard, from: moving.from.to_owned(), to: moving.to.to_owned() })
            .collect())
    }

    /// The node ids a query over every key reads while data moves, in the order to read
    /// them ([`sr::migration::Migration::scan_nodes`]): old owners before new ones, a
    /// node possibly twice; merge their rows by identity.
    #[napi(catch_unwind)]
    pub fn scan_nodes(&self) -> Vec<String> {
        self.inner.scan_nodes().into_iter().map(str::to_owned).collect()
    }

    /// The indices of the keys of an array that change node, in increasing order.
    ///
    /// # Errors
    /// `invalid_argument` when `keys` is not an array; `invalid_key` naming the index of a
    /// bad key; either topology's routing errors.
    #[napi(catch_unwind)]
    pub fn moving_keys(&self, keys: Unknown) -> Result<Vec<u32>> {
        let keys = key::many_from_js(keys)?;
        self.inner.moving_keys(keys.iter().map(key::Key::as_core)).or_throw()
    }
}

/// A key that changes node: `{ from, to }`.
#[napi(object, object_from_js = false)]
pub struct Move {
    /// Its node in the old topology.
    pub from: String,
    /// Its node in the new one.
    pub to: String,
}

/// A shard whose owner changes: `{ shard, from, to }`.
#[napi(object, object_from_js = false)]
pub struct MovingShard {
    /// The shard (vbucket, slot, partition, bucket).
    pub shard: u32,
    /// Its owner in the old topology.
    pub from: String,
    /// Its owner in the new one.
    pub to: String,
}
