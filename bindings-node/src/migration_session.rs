//! [`MigrationSession`]: the core's migration session ([`ss::migration`]) for JavaScript.
//! Conversion only, every decision is the core's; what the two JavaScript packages share
//! of it (the refusals the core does not word, the names of its results' fields) is
//! `bindings-js/migration_session.rs`, included as [`crate::js_migration_session`].
//!
//! `index.js` wraps the native session as the public `MigrationSession`, handing it the
//! native migration of its public `Migration`. The session keeps no state, so no call
//! borrows it mutably.

use napi::bindgen_prelude::{BigInt, Object};
use napi::{Env, Unknown};
use napi_derive::napi;
use shardroute as sr;
use sr::session as ss;

use crate::errors::{Result, Throw};
use crate::js_migration_session::{self as shared, FlatPlan};
use crate::key;
use crate::migration::Migration;
use crate::router;
use crate::session::{milliseconds, unsigned};
use sr::argument::JsType;

/// A migration in one mode ([`ss::MigrationSession`]); `index.js` wraps it as the public
/// `MigrationSession`.
#[napi]
pub struct MigrationSession {
    inner: ss::MigrationSession,
}

#[napi]
impl MigrationSession {
    /// The session of `migration` (a native migration; `index.js` unwraps its public
    /// `Migration`) in `mode`, `"background"`, `"lazy"` or `"expiration"` (with
    /// `untilMs`, its deadline), over a copy of the migration.
    ///
    /// # Errors
    /// `invalid_argument` when `migration` is not a `Migration`, for another mode, a bad
    /// `untilMs` ([`shared::until_ms`]), and the core's (expiration without `untilMs`,
    /// `untilMs` with another mode).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: &Env, migration: Unknown, mode: Unknown, until_ms: Unknown) -> Result<Self> {
        let migration = key::instance::<Migration>(env, migration, shared::not_a_migration)?;
        let mode = ss::Mode::from_name(&crate::text_argument(mode, "mode")?).or_throw()?;
        let got = key::js_type(until_ms)?;
        let bigint = match got {
            JsType::BigInt => key::bigint_u64(until_ms)?,
            _ => Err(false),
        };
        let until_ms = shared::until_ms(got, || bigint).or_throw()?;
        let inner = ss::MigrationSession::of_mode(migration.inner.clone(), mode, until_ms).or_throw()?;
        Ok(MigrationSession { inner })
    }

    /// The consistency check ([`sr::migration::misplaced`]): of `keys` (an array) found on
    /// `holder` (a node id, a string, or a shard number) under `router` (a native router),
    /// those `holder` does not own: `{ misplaced, count, checked }`.
    ///
    /// # Errors
    /// `invalid_argument` for a `router` that is not a `Router` or a `holder` of another
    /// type ([`shared::holder_form`]), and the core's (a node the topology does not list,
    /// a shard outside its range, `limit_exceeded` past `MAX_SAMPLE_KEYS` keys,
    /// `invalid_key`).
    #[napi(catch_unwind)]
    pub fn misplaced<'env>(env: &'env Env, router: Unknown, holder: Unknown, keys: Unknown) -> Result<Object<'env>> {
        let router = router::argument(env, router, "router")?;
        let node;
        let holder = match shared::holder_form(key::js_type(holder)?).or_throw()? {
            shared::HolderForm::Node => {
                node = crate::text_argument(holder, "holder")?;
                sr::migration::Holder::Node(&node)
            }
            shared::HolderForm::Shard => sr::migration::Holder::Shard(crate::u32_argument(holder, "holder")?),
        };
        let keys = key::many_from_js(keys)?;
        let found =
            sr::migration::misplaced(router.inner.as_ref(), holder, keys.iter().map(key::Key::as_core)).or_throw()?;
        let mut object = Object::new(env).or_throw()?;
        let (count, checked) = (found.count(), found.checked);
        object.set("misplaced", found.indices).or_throw()?;
        object.set("count", count).or_throw()?;
        object.set("checked", checked).or_throw()?;
        Ok(object)
    }

    /// The routing a service uses, its mode decided by the core from `topology` (a
    /// native router), `previous` and `held` (native routers, or `null`/`undefined`).
    ///
    /// # Errors
    /// `invalid_argument` when an argument is not a `Router` (or absent), and the core's.
    #[napi(catch_unwind)]
    pub fn of_topology(env: &Env, topology: Unknown, previous: Unknown, held: Unknown) -> Result<MigrationSession> {
        let topology = router::argument(env, topology, "topology")?.inner.as_ref().clone();
        let optional = |value: Unknown, what: &str| -> Result<Option<sr::Router>> {
            match key::js_type(value)? {
                sr::argument::JsType::Undefined | sr::argument::JsType::Null => Ok(None),
                _ => Ok(Some(router::argument(env, value, what)?.inner.as_ref().clone())),
            }
        };
        let (previous, held) = (optional(previous, "previous")?, optional(held, "held")?);
        Ok(MigrationSession { inner: ss::MigrationSession::of_topology(topology, previous, held).or_throw()? })
    }

    /// `"plain"`, `"background"`, `"lazy"`, `"expiration"` or `"catch-up"`.
    #[napi(getter, catch_unwind)]
    pub fn mode(&self) -> &'static str {
        self.inner.mode().name()
    }

    /// The deadline of an expiration session (a `bigint`, the caller's clock), or `null`.
    #[napi(getter, catch_unwind)]
    pub fn until_ms(&self) -> Option<BigInt> {
        self.inner.until_ms().map(BigInt::from)
    }

    /// Where a read of `key` looks at `nowMs`: in expiration mode the new owner alone from
    /// the deadline on; otherwise as `readPlan(key, moved)`.
    ///
    /// # Errors
    /// `invalid_key`; `invalid_argument` for a bad `nowMs` or `moved`.
    #[napi(catch_unwind)]
    pub fn read_plan_at(&self, key: Unknown, now_ms: Unknown, moved: Unknown) -> Result<Vec<String>> {
        let key = key::from_js(key)?;
        let now_ms = milliseconds(now_ms)?;
        let moved = crate::optional_bool_argument(moved, "moved")?;
        let nodes = self.inner.read_plan_at(key.as_core(), moved, now_ms).or_throw()?;
        Ok(nodes.into_iter().map(str::to_owned).collect())
    }

    /// The time to wake the session at, once `nowMs` (a `bigint`): an expiration
    /// session's deadline while `nowMs` is before it; `null` otherwise.
    ///
    /// # Errors
    /// `invalid_argument` for a bad `nowMs`.
    #[napi(catch_unwind)]
    pub fn next_deadline(&self, now_ms: Unknown) -> Result<Option<BigInt>> {
        Ok(self.inner.next_deadline(milliseconds(now_ms)?).map(BigInt::from))
    }

    /// What to do at `nowMs`: `[{ kind: 'retire', node }]`, one per node the move emptied,
    /// once the move's reads of it are over (the deadline; or `moved`, a boolean).
    ///
    /// # Errors
    /// `invalid_argument` for a bad `nowMs` or `moved`.
    #[napi(catch_unwind)]
    pub fn actions<'env>(&self, env: &'env Env, now_ms: Unknown, moved: Unknown) -> Result<Vec<Object<'env>>> {
        let now_ms = milliseconds(now_ms)?;
        let moved = crate::optional_bool_argument(moved, "moved")?;
        self.inner
            .actions(now_ms, moved)
            .into_iter()
            .map(|action| {
                let mut object = Object::new(env).or_throw()?;
                object.set("kind", action.kind()).or_throw()?;
                object.set("node", action.node()).or_throw()?;
                Ok(object)
            })
            .collect()
    }

    /// The nodes a query over every key reads, in order (each once when that is safe).
    #[napi(catch_unwind)]
    pub fn scan_nodes(&self) -> Vec<String> {
        self.inner.scan_nodes().into_iter().map(str::to_owned).collect()
    }

    /// The epoch reads and writes run under: the topology's (a dictionary in motion's own).
    #[napi(getter, catch_unwind)]
    pub fn fence_epoch(&self) -> BigInt {
        BigInt::from(self.inner.fence_epoch())
    }

    /// Where a read of `key` looks, in order: the old owner, then the new one, unless
    /// `moved` (a boolean; `undefined`: false); plain: the owner.
    ///
    /// # Errors
    /// `invalid_key`; `invalid_argument` when `moved` is not a boolean or `undefined`.
    #[napi(catch_unwind)]
    pub fn read_plan(&self, key: Unknown, moved: Unknown) -> Result<Vec<String>> {
        let key = key::from_js(key)?;
        let moved = crate::optional_bool_argument(moved, "moved")?;
        let nodes = self.inner.read_plan(key.as_core(), moved).or_throw()?;
        Ok(nodes.into_iter().map(str::to_owned).collect())
    }

    /// Where a write of `key` goes: `{ node, fence_epoch }`.
    ///
    /// # Errors
    /// `invalid_key`, and the new topology's routing errors.
    #[napi(catch_unwind)]
    pub fn write_plan<'env>(&self, env: &'env Env, key: Unknown) -> Result<Object<'env>> {
        let key = key::from_js(key)?;
        plan(env, self.inner.write_plan(key.as_core()).or_throw()?.into())
    }

    /// The lazy move of `key`, `{ readFrom, writeTo, retireFrom, fenceEpoch }`, or
    /// `null` when it stays or the mode is not lazy.
    ///
    /// # Errors
    /// `invalid_key`.
    #[napi(catch_unwind)]
    pub fn lazy_steps<'env>(&self, env: &'env Env, key: Unknown) -> Result<Option<Object<'env>>> {
        let key = key::from_js(key)?;
        let steps = self.inner.lazy_steps(key.as_core()).or_throw()?;
        steps.map(|steps| plan(env, steps.into())).transpose()
    }

    /// The lazy moves of `keys` (an array) grouped by their steps: `[{ steps, indices }]`,
    /// `steps` as `lazySteps` gives them, `indices` the keys' (increasing), one entry per
    /// distinct steps in the order of its first key; keys that stay are left out; empty
    /// unless the mode is lazy.
    ///
    /// # Errors
    /// `invalid_key`, and `invalid_argument` when `keys` is not an array.
    #[napi(catch_unwind)]
    pub fn lazy_groups<'env>(&self, env: &'env Env, keys: Unknown) -> Result<Vec<Object<'env>>> {
        let keys = key::many_from_js(keys)?;
        let groups = self.inner.lazy_groups(keys.iter().map(key::Key::as_core)).or_throw()?;
        groups
            .into_iter()
            .map(|group| {
                let mut object = Object::new(env).or_throw()?;
                object.set("steps", plan(env, group.steps.into())?).or_throw()?;
                object.set("indices", group.indices).or_throw()?;
                Ok(object)
            })
            .collect()
    }

    /// When a copy job starts its next step (a `bigint`, the caller's clock), once the
    /// last one ran from `startedMs` to `finishedMs`: the core's pace
    /// ([`ss::Pace::next_start`]) of `dutyPerMille` (thousandths of the wall time the job
    /// works, 1 to 1000) and `minPauseMs` (the shortest rest), each `undefined` or `null`
    /// for the core's default.
    ///
    /// # Errors
    /// `invalid_argument` for a bad time or duty ([`shared::pace`]), a duty outside
    /// `1..=1000`, or `finishedMs` before `startedMs` (the core's).
    #[napi(catch_unwind)]
    pub fn resume_at(
        &self,
        started_ms: Unknown,
        finished_ms: Unknown,
        duty_per_mille: Unknown,
        min_pause_ms: Unknown,
    ) -> Result<BigInt> {
        let started_ms = unsigned(started_ms, |got, bigint| shared::step_time("startedMs", got, || bigint))?;
        let finished_ms = unsigned(finished_ms, |got, bigint| shared::step_time("finishedMs", got, || bigint))?;
        let (duty, min_pause) = (key::js_type(duty_per_mille)?, key::js_type(min_pause_ms)?);
        let bigint = match min_pause {
            JsType::BigInt => key::bigint_u64(min_pause_ms)?,
            _ => Err(false),
        };
        let pace = shared::pace(duty, min_pause, || bigint).or_throw()?;
        Ok(BigInt::from(self.inner.resume_at(started_ms, finished_ms, pace).or_throw()?))
    }

    /// The next `max` units of a background copy from the stored `cursor`: `{ units, next }`,
    /// each unit `[shard, from, to]`, `next` `null` when the copy is complete.
    ///
    /// # Errors
    /// `invalid_argument` for a cursor or max that is not an integer in `0..=2^32-1`, and
    /// the core's (lazy mode, max 0, a cursor past the moving units, shards that are not
    /// fixed units).
    #[napi(catch_unwind)]
    pub fn copy_batch<'env>(&self, env: &'env Env, cursor: Unknown, max: Unknown) -> Result<Object<'env>> {
        let cursor = crate::u32_argument(cursor, "cursor")?;
        let max = crate::u32_argument(max, "max")?;
        let batch = self.inner.copy_batch(cursor, max).or_throw()?;
        let units: Vec<(u32, &str, &str)> = batch.units.iter().map(|unit| (unit.shard, unit.from, unit.to)).collect();
        let mut object = Object::new(env).or_throw()?;
        object.set("units", units).or_throw()?;
        object.set("next", batch.next).or_throw()?;
        Ok(object)
    }

    /// What a write's refusal by a shard fenced at `minEpoch` means: `"refresh"`.
    ///
    /// # Errors
    /// `invalid_argument` for a bad epoch ([`shared::min_epoch`]), or one that admits the
    /// fence epoch (the core's).
    #[napi(catch_unwind)]
    pub fn fenced(&self, min_epoch: Unknown) -> Result<&'static str> {
        let min_epoch = unsigned(min_epoch, |got, bigint| shared::min_epoch(got, || bigint))?;
        Ok(shared::fenced(self.inner.fenced(min_epoch).or_throw()?))
    }
}

/// A plan as the package's plain object: its node ids, then `fence_epoch` (a `bigint`).
fn plan<'env>(env: &'env Env, plan: FlatPlan<'_>) -> Result<Object<'env>> {
    let mut object = Object::new(env).or_throw()?;
    for (name, node) in plan.nodes {
        object.set(name, node).or_throw()?;
    }
    object.set(shared::FENCE_EPOCH, BigInt::from(plan.fence_epoch)).or_throw()?;
    Ok(object)
}
