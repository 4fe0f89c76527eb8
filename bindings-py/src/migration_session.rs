//! `shardroute.MigrationSession`: a shell over core's migration session
//! ([`sr::session::migration`]). Converts arguments and results; every decision is the core's.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shardroute as sr;
use sr::session as ss;

use crate::errors;
use crate::key::{str_from_py, type_name, u32_from_py, u64_from_py, Key};
use crate::migration::Migration;
use crate::router::{for_each_batch_key, router_arg, with_all_keys};

/// The routing in force while data moves, or while nothing does: its mode ("plain",
/// "background", "lazy", "expiration" or "catch-up"), the read plan (old owner first,
/// then new, until moved; in "expiration" mode until the deadline: read_plan_at), the
/// write plan under the fence epoch, a key's lazy move (None unless "lazy"), the
/// background copy's batches from a stored cursor, the nodes a query over every key
/// reads (scan_nodes), what a fence refusal means, the next deadline and the nodes to
/// retire once the move has emptied them (actions); for a copy job, the lazy moves of
/// many keys grouped by their steps (lazy_groups) and when to start its next step
/// (resume_at: its pace).
///
/// MigrationSession(migration, mode, until_ms=None): migration a Migration, mode
/// "background", "lazy" or "expiration" (nothing copied; until_ms, the keys' TTL
/// horizon on the caller's clock in ms, required); MigrationSession.of_topology(topology,
/// previous=None, held=None): the session decides the mode from what a service holds.
///
/// Raises InvalidArgumentError for another mode, a migration that is not a Migration, a
/// background session of topologies that share no fixed partitions (modulo, jump,
/// rings: move those lazily), "expiration" without until_ms, or until_ms with another
/// mode.
#[pyclass(module = "shardroute", frozen)]
pub struct MigrationSession {
    inner: ss::MigrationSession,
}

/// A u64 argument that is not a key (a time in ms, an epoch): an `int` in `0..2**64`,
/// `invalid_argument` otherwise.
fn u64_argument(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    u64_from_py(value, what).map_err(|_| {
        errors::new(
            sr::ErrorKind::InvalidArgument,
            format!("{what} must be an int in 0..2**64, not {}", type_name(value)),
        )
    })
}

/// An optional `Router` argument (None: absent).
fn optional_router(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<sr::Router>> {
    match value {
        Some(value) if !value.is_none() => Ok(Some(router_arg(value, what)?.get().inner.clone())),
        _ => Ok(None),
    }
}

#[pymethods]
impl MigrationSession {
    #[new]
    #[pyo3(signature = (migration, mode, until_ms = None))]
    fn new(
        migration: &Bound<'_, PyAny>,
        mode: &Bound<'_, PyAny>,
        until_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<MigrationSession> {
        let migration = migration.cast::<Migration>().map_err(|_| {
            errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("migration must be a Migration, not {}", type_name(migration)),
            )
        })?;
        let mode = ss::Mode::from_name(&str_from_py(mode, "mode")?).map_err(errors::to_py)?;
        let until_ms = match until_ms {
            Some(value) if !value.is_none() => Some(u64_argument(value, "until_ms")?),
            _ => None,
        };
        let inner =
            ss::MigrationSession::of_mode(migration.get().inner.clone(), mode, until_ms).map_err(errors::to_py)?;
        Ok(MigrationSession { inner })
    }

    /// The routing a service uses, its mode decided from what it holds: topology (the
    /// Router in force), previous (the Router of the document published with it as the
    /// one it replaces, or None) and held (the Router it routed under just before, or
    /// None). "background" for a vbucket dictionary with a forward_map; "lazy" when
    /// previous is one epoch older; "catch-up" when held is one epoch older and differs
    /// (not for a dictionary); else "plain".
    ///
    /// Raises InvalidArgumentError when an argument is not a Router (or None).
    #[staticmethod]
    #[pyo3(signature = (topology, previous = None, held = None))]
    fn of_topology(
        topology: &Bound<'_, PyAny>,
        previous: Option<&Bound<'_, PyAny>>,
        held: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<MigrationSession> {
        let topology = router_arg(topology, "topology")?.get().inner.clone();
        let (previous, held) = (optional_router(previous, "previous")?, optional_router(held, "held")?);
        let inner = ss::MigrationSession::of_topology(topology, previous, held).map_err(errors::to_py)?;
        Ok(MigrationSession { inner })
    }

    /// "plain", "background", "lazy", "expiration" or "catch-up".
    #[getter]
    fn mode(&self) -> &'static str {
        self.inner.mode().name()
    }

    /// The nodes a query over every key reads, in order: each once when that is safe
    /// (sources of moves before their targets); plain: every node that owns a shard.
    fn scan_nodes(&self) -> Vec<String> {
        self.inner.scan_nodes().into_iter().map(str::to_string).collect()
    }

    /// The epoch reads and writes run under: the topology's (a dictionary in motion's own).
    #[getter]
    fn fence_epoch(&self) -> u64 {
        self.inner.fence_epoch()
    }

    /// Where a read of key looks, in order: the old owner, then the new one, unless the
    /// key (background: its unit) has moved; plain: the owner. Old first: a copy that
    /// lands between the two reads is then found on the new owner, read last.
    #[pyo3(signature = (key, moved = false))]
    fn read_plan(&self, key: &Bound<'_, PyAny>, moved: bool) -> PyResult<Vec<String>> {
        let key = Key::from_py(key)?;
        let nodes = self.inner.read_plan(key.as_core(), moved).map_err(errors::to_py)?;
        Ok(nodes.into_iter().map(str::to_string).collect())
    }

    /// read_plan at now_ms (the caller's clock, in ms): in "expiration" mode the new owner
    /// alone from the deadline on (the old owner's copies have expired); in every other
    /// mode read_plan(key, moved), time changing nothing.
    #[pyo3(signature = (key, now_ms, moved = false))]
    fn read_plan_at(&self, key: &Bound<'_, PyAny>, now_ms: &Bound<'_, PyAny>, moved: bool) -> PyResult<Vec<String>> {
        let key = Key::from_py(key)?;
        let now_ms = u64_argument(now_ms, "now_ms")?;
        let nodes = self.inner.read_plan_at(key.as_core(), moved, now_ms).map_err(errors::to_py)?;
        Ok(nodes.into_iter().map(str::to_string).collect())
    }

    /// The time (ms) to wake the session at, once now_ms: the deadline of an "expiration"
    /// session while now_ms is before it; None otherwise.
    fn next_deadline(&self, now_ms: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        Ok(self.inner.next_deadline(u64_argument(now_ms, "now_ms")?))
    }

    /// The deadline of an "expiration" session (ms, the caller's clock); None otherwise.
    #[getter]
    fn until_ms(&self) -> Option<u64> {
        self.inner.until_ms()
    }

    /// What to do at now_ms: a list of {"kind": "retire", "node": id}, one per node the
    /// move emptied (it owned a shard before and owns none now), in the old topology's
    /// node order, once the move's reads of it are over: from the deadline in
    /// "expiration" mode; in "background" and "lazy" modes when moved (every moving unit,
    /// or every key of those nodes, has moved); never in "plain" or "catch-up".
    #[pyo3(signature = (now_ms, moved = false))]
    fn actions<'py>(
        &self,
        py: Python<'py>,
        now_ms: &Bound<'py, PyAny>,
        moved: bool,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let now_ms = u64_argument(now_ms, "now_ms")?;
        self.inner
            .actions(now_ms, moved)
            .into_iter()
            .map(|action| {
                let dict = PyDict::new(py);
                dict.set_item("kind", action.kind())?;
                dict.set_item("node", action.node())?;
                Ok(dict)
            })
            .collect()
    }

    /// The consistency check: of keys found on holder (a node id, a str, or a shard
    /// number, an int) under router (an epoch's Router), those holder does not own: a
    /// dict with misplaced (their indices in keys, in order), count (how many) and
    /// checked (how many keys). keys: any iterable of keys, as Router.route_many.
    ///
    /// Raises InvalidArgumentError for a node the topology does not list or a shard
    /// outside its range, LimitExceededError past MAX_SAMPLE_KEYS keys, and as
    /// Router.route for a key.
    #[staticmethod]
    fn misplaced<'py>(
        router: &Bound<'py, PyAny>,
        holder: &Bound<'py, PyAny>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = router.py();
        let router = router_arg(router, "router")?;
        let node;
        let holder = if holder.is_instance_of::<pyo3::types::PyString>() {
            node = str_from_py(holder, "holder")?;
            sr::migration::Holder::Node(&node)
        } else if holder.is_instance_of::<pyo3::types::PyInt>() && !holder.is_instance_of::<pyo3::types::PyBool>() {
            let shard = u32_from_py(holder, "holder").map_err(|_| {
                errors::new(
                    sr::ErrorKind::InvalidArgument,
                    format!(
                        "holder: a shard number must be an int in 0..2**32, not {}",
                        holder.repr().map_or_else(|_| type_name(holder), |r| r.to_string())
                    ),
                )
            })?;
            sr::migration::Holder::Shard(shard)
        } else {
            return Err(errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("holder must be a node id (str) or a shard number (int), not {}", type_name(holder)),
            ));
        };
        let mut check = sr::migration::MisplacedCheck::new(&router.get().inner, holder).map_err(errors::to_py)?;
        // Streamed: a large iterable is converted a chunk at a time.
        for_each_batch_key(keys, |key| check.check(key).map(drop))?;
        let found = check.finish();
        let dict = PyDict::new(py);
        dict.set_item("misplaced", &found.indices)?;
        dict.set_item("count", found.count())?;
        dict.set_item("checked", found.checked)?;
        Ok(dict)
    }

    /// Where a write of key goes: WritePlan(node, fence_epoch), a named tuple of the
    /// new owner's id and the epoch the write runs under.
    fn write_plan<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = key.py();
        let key = Key::from_py(key)?;
        let plan = self.inner.write_plan(key.as_core()).map_err(errors::to_py)?;
        crate::records::WRITE_PLAN.class(py)?.call1((plan.node, plan.fence_epoch))
    }

    /// The lazy move of key, or None when it stays or the mode is not "lazy": a dict
    /// with read_from, write_to, retire_from (node ids) and fence_epoch.
    fn lazy_steps<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let py = key.py();
        let key = Key::from_py(key)?;
        let Some(steps) = self.inner.lazy_steps(key.as_core()).map_err(errors::to_py)? else { return Ok(None) };
        let dict = PyDict::new(py);
        dict.set_item("read_from", steps.read_from)?;
        dict.set_item("write_to", steps.write_to)?;
        dict.set_item("retire_from", steps.retire_from)?;
        dict.set_item("fence_epoch", steps.fence_epoch)?;
        Ok(Some(dict))
    }

    /// The lazy moves of keys grouped by their steps: a list of dicts with steps (as
    /// lazy_steps gives them: read_from, write_to, retire_from, fence_epoch) and indices
    /// (the keys' indices in keys, increasing), one per distinct steps in the order of its
    /// first key; keys that stay are left out; empty unless the mode is "lazy". Move a
    /// group in one statement per step. keys: any iterable of keys, as Router.route_many.
    ///
    /// Raises as Router.route_many for a key.
    fn lazy_groups<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let py = keys.py();
        type Group = (String, String, String, u64, Vec<u32>);
        let groups: Vec<Group> = with_all_keys(keys, |keys| {
            Ok(self
                .inner
                .lazy_groups(keys)?
                .into_iter()
                .map(|g| {
                    let s = g.steps;
                    (s.read_from.to_owned(), s.write_to.to_owned(), s.retire_from.to_owned(), s.fence_epoch, g.indices)
                })
                .collect())
        })?;
        groups
            .into_iter()
            .map(|(read_from, write_to, retire_from, fence_epoch, indices)| {
                let steps = PyDict::new(py);
                steps.set_item("read_from", read_from)?;
                steps.set_item("write_to", write_to)?;
                steps.set_item("retire_from", retire_from)?;
                steps.set_item("fence_epoch", fence_epoch)?;
                let group = PyDict::new(py);
                group.set_item("steps", steps)?;
                group.set_item("indices", indices)?;
                Ok(group)
            })
            .collect()
    }

    /// When a copy job starts its next step, once the last one ran from started_ms to
    /// finished_ms (its monotonic clock, in ms): finished_ms + max(min_pause_ms,
    /// ceil(took * (1000 - duty_per_mille) / duty_per_mille)), so that the job works at
    /// most duty_per_mille thousandths of the wall time (None: the core's default, 50, 5%)
    /// and rests at least min_pause_ms between two steps (None: the core's default, 0);
    /// saturating at 2**64 - 1. The same in every mode. Sleep until then.
    ///
    /// Raises InvalidArgumentError when finished_ms is before started_ms, for a
    /// duty_per_mille outside 1..=1000, or a time that is not an int in 0..2**64.
    #[pyo3(signature = (started_ms, finished_ms, duty_per_mille = None, min_pause_ms = None))]
    fn resume_at(
        &self,
        started_ms: &Bound<'_, PyAny>,
        finished_ms: &Bound<'_, PyAny>,
        duty_per_mille: Option<&Bound<'_, PyAny>>,
        min_pause_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let started_ms = u64_argument(started_ms, "started_ms")?;
        let finished_ms = u64_argument(finished_ms, "finished_ms")?;
        let duty = match duty_per_mille {
            Some(value) if !value.is_none() => Some(u32_from_py(value, "duty_per_mille")?),
            _ => None,
        };
        let min_pause = match min_pause_ms {
            Some(value) if !value.is_none() => Some(u64_argument(value, "min_pause_ms")?),
            _ => None,
        };
        let pace = ss::Pace::of(duty, min_pause).map_err(errors::to_py)?;
        self.inner.resume_at(started_ms, finished_ms, pace).map_err(errors::to_py)
    }

    /// The next max units of a background copy from the stored cursor (0 to start): a
    /// dict with units (a list of (shard, from node, to node)) and next (the cursor to
    /// store once they are copied, None when the copy is complete).
    ///
    /// Raises InvalidArgumentError in every mode but "background", for max 0, or a
    /// cursor past the moving units.
    fn copy_batch<'py>(
        &self,
        py: Python<'py>,
        cursor: &Bound<'py, PyAny>,
        max: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let batch =
            self.inner.copy_batch(u32_from_py(cursor, "cursor")?, u32_from_py(max, "max")?).map_err(errors::to_py)?;
        let dict = PyDict::new(py);
        let units: Vec<(u32, &str, &str)> = batch.units.iter().map(|unit| (unit.shard, unit.from, unit.to)).collect();
        dict.set_item("units", units)?;
        dict.set_item("next", batch.next)?;
        Ok(dict)
    }

    /// What a write's refusal by a shard fenced at min_epoch means: "refresh" (the
    /// topology moved on: follow it, plan again, retry).
    ///
    /// Raises InvalidArgumentError when min_epoch admits the fence epoch (not a fence refusal).
    fn fenced(&self, min_epoch: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let epoch = u64_argument(min_epoch, "min_epoch")?;
        match self.inner.fenced(epoch).map_err(errors::to_py)? {
            ss::Fenced::Refresh => Ok("refresh"),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<shardroute.MigrationSession mode={} fence_epoch={}>",
            self.inner.mode().name(),
            self.inner.fence_epoch()
        )
    }
}
