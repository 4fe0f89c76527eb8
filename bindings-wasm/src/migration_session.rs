//! `MigrationSession`: the core's migration session ([`ss::migration`]) as a JavaScript
//! class, the same shape as the Node addon's. Conversion only, every decision is the
//! core's; what the two JavaScript packages share of it (the refusals the core does not
//! word, the names of its results' fields) is `bindings-js/migration_session.rs`, included
//! as [`crate::js_migration_session`].
//!
//! The session needs routing only, not the topology operations: it is in every build, a
//! slim one too. It keeps no state, so no call borrows it mutably.

use alloc::string::String;
use alloc::vec::Vec;

use js_sys::{Array, Object};
use shardroute as sr;
use sr::session as ss;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::js_migration_session::{self as shared, FlatPlan};
use crate::key::{self, Key};
use crate::migration::Migration;
use crate::router::Router;
use crate::topology::record;
#[cfg(feature = "full-api")]
use crate::u32_from_js;

/// What services and a copy job do while data moves from one topology to the next: the
/// read plan (the new owner, then the old one until the key or unit has moved), the write
/// plan under the fence epoch, a key's lazy move (mode `"lazy"`), the background copy's
/// batches from a stored cursor (mode `"background"`), and what a fence refusal means.
#[wasm_bindgen]
pub struct MigrationSession {
    inner: ss::MigrationSession,
}

#[wasm_bindgen]
impl MigrationSession {
    /// The session of `migration` (a live `Migration`, copied: it stays usable and free to
    /// be freed) in `mode`, `"background"`, `"lazy"` or `"expiration"` (with `untilMs`,
    /// its deadline).
    ///
    /// Throws `invalid_argument` when `migration` is not a live `Migration`, for another
    /// mode, a bad `untilMs`, `"expiration"` without it or `untilMs` with another mode.
    #[wasm_bindgen(constructor)]
    pub fn new(migration: &JsValue, mode: &JsValue, until_ms: &JsValue) -> Result<MigrationSession> {
        let mut copied = None;
        let lent = lend_migration(migration, &mut |migration: &Migration| copied = Some(migration.inner.clone()));
        let migration = match (lent, copied) {
            (Ok(()), Some(migration)) => migration,
            _ => return Err(key::with_type(migration, shared::not_a_migration).into()),
        };
        let mode = ss::Mode::from_name(&key::text_argument(mode, "mode")?)?;
        let until_ms = key::with_type(until_ms, |got| shared::until_ms(got, || key::bigint_u64(until_ms)))?;
        Ok(MigrationSession { inner: ss::MigrationSession::of_mode(migration, mode, until_ms)? })
    }

    /// The routing a service uses, its mode decided by the core from `topology` (a live
    /// `Router`, copied), `previous` and `held` (live `Router`s, or `null`/`undefined`).
    ///
    /// Throws `invalid_argument` when an argument is not a live `Router` (or absent).
    #[wasm_bindgen(js_name = ofTopology)]
    pub fn of_topology(topology: &JsValue, previous: &JsValue, held: &JsValue) -> Result<MigrationSession> {
        let topology = Router::lend(topology, "topology", sr::Router::clone)?;
        let optional = |value: &JsValue, what: &str| -> sr::Result<Option<sr::Router>> {
            if value.is_null() || value.is_undefined() {
                Ok(None)
            } else {
                Router::lend(value, what, sr::Router::clone).map(Some)
            }
        };
        let (previous, held) = (optional(previous, "previous")?, optional(held, "held")?);
        Ok(MigrationSession { inner: ss::MigrationSession::of_topology(topology, previous, held)? })
    }

    /// `"plain"`, `"background"`, `"lazy"`, `"expiration"` or `"catch-up"`.
    #[wasm_bindgen(getter)]
    pub fn mode(&self) -> String {
        self.inner.mode().name().into()
    }

    /// The deadline of an expiration session (a bigint, the caller's clock), or `null`.
    #[wasm_bindgen(getter, js_name = untilMs)]
    pub fn until_ms(&self) -> JsValue {
        self.inner.until_ms().map_or(JsValue::NULL, JsValue::from)
    }

    /// Where a read of the key looks at `nowMs`: in expiration mode the new owner alone
    /// from the deadline on; otherwise as `readPlan(key, moved)`.
    ///
    /// Throws `invalid_key`; `invalid_argument` for a bad `nowMs` or `moved`.
    #[wasm_bindgen(js_name = readPlanAt)]
    pub fn read_plan_at(&self, key: &JsValue, now_ms: &JsValue, moved: &JsValue) -> Result<Vec<String>> {
        let key = Key::from_js(key)?;
        let now_ms = key::milliseconds(now_ms)?;
        let moved = key::with_type(moved, |got| sr::argument::optional_flag("moved", got))?;
        Ok(crate::owned_ids(self.inner.read_plan_at(key.as_key(), moved, now_ms)?))
    }

    /// When to wake the session, once `nowMs`: an expiration session's deadline (a bigint)
    /// while `nowMs` is before it; `null` otherwise.
    ///
    /// Throws `invalid_argument` for a bad `nowMs`.
    #[wasm_bindgen(js_name = nextDeadline)]
    pub fn next_deadline(&self, now_ms: &JsValue) -> Result<JsValue> {
        Ok(self.inner.next_deadline(key::milliseconds(now_ms)?).map_or(JsValue::NULL, JsValue::from))
    }

    /// The epoch reads and writes run under (the topology's; a dictionary in motion's
    /// own), a bigint.
    #[wasm_bindgen(getter, js_name = fenceEpoch)]
    pub fn fence_epoch(&self) -> u64 {
        self.inner.fence_epoch()
    }

    /// Where a read of the key looks, in order: the old owner, then the new one, unless
    /// `moved` (omitted: false); plain: the owner.
    ///
    /// Throws `invalid_key`; `invalid_argument` when `moved` is not a boolean.
    #[wasm_bindgen(js_name = readPlan)]
    pub fn read_plan(&self, key: &JsValue, moved: &JsValue) -> Result<Vec<String>> {
        let key = Key::from_js(key)?;
        let moved = key::with_type(moved, |got| sr::argument::optional_flag("moved", got))?;
        Ok(crate::owned_ids(self.inner.read_plan(key.as_key(), moved)?))
    }

    /// Where a write of the key goes: `{node, fence_epoch}`.
    ///
    /// Throws `invalid_key`.
    #[wasm_bindgen(js_name = writePlan)]
    pub fn write_plan(&self, key: &JsValue) -> Result<Object> {
        let key = Key::from_js(key)?;
        Ok(plan(self.inner.write_plan(key.as_key())?.into())?)
    }

    /// The lazy move of the key, `{readFrom, writeTo, retireFrom, fenceEpoch}`, or
    /// `null` when it stays or the mode is not lazy.
    ///
    /// Throws `invalid_key`.
    #[wasm_bindgen(js_name = lazySteps)]
    pub fn lazy_steps(&self, key: &JsValue) -> Result<JsValue> {
        let key = Key::from_js(key)?;
        Ok(match self.inner.lazy_steps(key.as_key())? {
            Some(steps) => plan(steps.into())?.into(),
            None => JsValue::NULL,
        })
    }

    /// What a write's refusal by a shard fenced at `minEpoch` means: `"refresh"` (the
    /// topology moved on: follow it, plan again, retry).
    ///
    /// Throws `invalid_argument` for a bad epoch, or one that admits the fence epoch (not a
    /// fence's refusal).
    pub fn fenced(&self, min_epoch: &JsValue) -> Result<String> {
        let min_epoch = key::with_type(min_epoch, |got| shared::min_epoch(got, || key::bigint_u64(min_epoch)))?;
        Ok(shared::fenced(self.inner.fenced(min_epoch)?).into())
    }
}

/// The background copy's batches, which a routing tier does not make (a copy job does):
/// left out of a build without the `full-api` feature (the route build,
/// `shardroute-wasm/route`).
#[cfg(feature = "full-api")]
#[wasm_bindgen]
impl MigrationSession {
    /// The next `max` units of a background copy from the stored `cursor` (0 to start):
    /// `{units, next}`, each unit `[shard, from, to]`, `next` the cursor to store once they
    /// are copied (`null`: the copy is complete).
    ///
    /// Throws `invalid_argument` for a cursor or max that is not an integer in
    /// `0..=2^32-1`, in every mode but background, for max 0, or a cursor past the
    /// moving units.
    #[wasm_bindgen(js_name = copyBatch)]
    pub fn copy_batch(&self, cursor: &JsValue, max: &JsValue) -> Result<Object> {
        let cursor = u32_from_js(cursor, "cursor")?;
        let max = u32_from_js(max, "max")?;
        let batch = self.inner.copy_batch(cursor, max)?;
        let units: Array =
            batch.units.iter().map(|unit| Array::of3(&unit.shard.into(), &unit.from.into(), &unit.to.into())).collect();
        let next = batch.next.map_or(JsValue::NULL, JsValue::from);
        Ok(record(&Array::of2(&Array::of2(&"units".into(), &units), &Array::of2(&"next".into(), &next)))?)
    }

    /// What to do at `nowMs`: `[{kind: "retire", node}]`, one per node the move emptied,
    /// once the move's reads of it are over (the deadline; or `moved`, a boolean). Left out
    /// of the route build: an operator's step, not routing.
    ///
    /// Throws `invalid_argument` for a bad `nowMs` or `moved`.
    pub fn actions(&self, now_ms: &JsValue, moved: &JsValue) -> Result<Array> {
        let now_ms = key::milliseconds(now_ms)?;
        let moved = key::with_type(moved, |got| sr::argument::optional_flag("moved", got))?;
        self.inner
            .actions(now_ms, moved)
            .into_iter()
            .map(|action| {
                let entries = Array::of2(
                    &Array::of2(&"kind".into(), &action.kind().into()),
                    &Array::of2(&"node".into(), &action.node().into()),
                );
                Ok(JsValue::from(record(&entries)?))
            })
            .collect::<sr::Result<Array>>()
            .map_err(Into::into)
    }

    /// The consistency check: of `keys` (an array, as for `Router.routeMany`) found on
    /// `holder` (a node id, a string, or a shard number) under `router` (a live `Router`),
    /// those `holder` does not own: `{misplaced, count, checked}`. Left out of the route
    /// build: a check, not routing.
    ///
    /// Throws `invalid_argument` for a `router` that is not a live `Router`, a `holder` of
    /// another type, a node the topology does not list or a shard outside its range;
    /// `limit_exceeded` past `MAX_SAMPLE_KEYS` keys; `invalid_key`.
    pub fn misplaced(router: &JsValue, holder: &JsValue, keys: &JsValue) -> Result<Object> {
        let node;
        let holder = match key::with_type(holder, shared::holder_form)? {
            shared::HolderForm::Node => {
                node = key::text_argument(holder, "holder")?;
                sr::migration::Holder::Node(&node)
            }
            shared::HolderForm::Shard => sr::migration::Holder::Shard(u32_from_js(holder, "holder")?),
        };
        let batch = crate::router::Batch::from_js(keys)?;
        let found = Router::lend(router, "router", |router| sr::migration::misplaced(router, holder, batch.keys()))??;
        let indices: Array = found.indices.iter().map(|&index| JsValue::from(index)).collect();
        Ok(record(&Array::of3(
            &Array::of2(&"misplaced".into(), &indices),
            &Array::of2(&"count".into(), &found.count().into()),
            &Array::of2(&"checked".into(), &found.checked.into()),
        ))?)
    }

    /// The lazy moves of `keys` (an array, as for `Router.routeMany`) grouped by their
    /// steps: `[{steps, indices}]`, `steps` as `lazySteps` gives them, `indices` the keys'
    /// (increasing), one entry per distinct steps in the order of its first key; keys that
    /// stay are left out; empty unless the mode is lazy. Left out of the route build: a
    /// mover's call, not routing.
    ///
    /// Throws `invalid_argument` when `keys` is not an array; `invalid_key`.
    #[wasm_bindgen(js_name = lazyGroups)]
    pub fn lazy_groups(&self, keys: &JsValue) -> Result<Array> {
        let batch = crate::router::Batch::from_js(keys)?;
        self.inner
            .lazy_groups(batch.keys())?
            .into_iter()
            .map(|group| {
                let indices: Array = group.indices.iter().map(|&index| JsValue::from(index)).collect();
                let steps = plan(group.steps.into())?;
                let entries =
                    Array::of2(&Array::of2(&"steps".into(), &steps), &Array::of2(&"indices".into(), &indices));
                Ok(JsValue::from(record(&entries)?))
            })
            .collect::<sr::Result<Array>>()
            .map_err(Into::into)
    }

    /// When a copy job starts its next step (a bigint, the caller's clock), once the last
    /// one ran from `startedMs` to `finishedMs`: the core's pace of `dutyPerMille`
    /// (thousandths of the wall time the job works, 1 to 1000) and `minPauseMs` (the
    /// shortest rest), each `undefined` or `null` for the core's default. Left out of the
    /// route build: a copy job's call.
    ///
    /// Throws `invalid_argument` for a bad time or duty, a duty outside `1..=1000`, or
    /// `finishedMs` before `startedMs`.
    #[wasm_bindgen(js_name = resumeAt)]
    pub fn resume_at(
        &self,
        started_ms: &JsValue,
        finished_ms: &JsValue,
        duty_per_mille: &JsValue,
        min_pause_ms: &JsValue,
    ) -> Result<u64> {
        let time = |value: &JsValue, what: &str| {
            key::with_type(value, |got| shared::step_time(what, got, || key::bigint_u64(value)))
        };
        let (started_ms, finished_ms) = (time(started_ms, "startedMs")?, time(finished_ms, "finishedMs")?);
        let pace = key::with_type(duty_per_mille, |duty| {
            key::with_type(min_pause_ms, |pause| shared::pace(duty, pause, || key::bigint_u64(min_pause_ms)))
        })?;
        Ok(self.inner.resume_at(started_ms, finished_ms, pace)?)
    }

    /// The nodes a query over every key reads, in order (each once when that is safe),
    /// left out of the route build as `Migration.scanNodes` is.
    #[wasm_bindgen(js_name = scanNodes)]
    pub fn scan_nodes(&self) -> Vec<String> {
        crate::owned_ids(self.inner.scan_nodes())
    }
}

/// A plan as the package's plain object: its node ids, then `fence_epoch` (a bigint).
fn plan(plan: FlatPlan<'_>) -> sr::Result<Object> {
    let entries: Array = plan.nodes.iter().map(|&(name, node)| Array::of2(&name.into(), &node.into())).collect();
    entries.push(&Array::of2(&shared::FENCE_EPOCH.into(), &plan.fence_epoch.into()));
    record(&entries)
}

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// Calls `lend(migration)`: the glue of the callback checks that `migration` is a live
    /// `Migration` and lends it; a failed check throws, which `catch` makes an `Err`.
    #[wasm_bindgen(catch, js_name = lend)]
    fn lend_migration(migration: &JsValue, lend: &mut dyn FnMut(&Migration)) -> core::result::Result<(), JsValue>;
}
