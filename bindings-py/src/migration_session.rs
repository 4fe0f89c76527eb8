//! `shardroute.MigrationSession`: a shell over core's migration session
//! ([`sr::session::migration`]). Converts arguments and results; every decision is the core's.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shardroute as sr;
use sr::session as ss;

use crate::errors;
use crate::key::{str_from_py, type_name, u32_from_py, u64_from_py, Key};
use crate::migration::Migration;
use crate::router::router_arg;

/// The routing in force while data moves, or while nothing does: its mode ("plain",
/// "background", "lazy" or "catch-up"), the read plan (old owner first, then new, until
/// moved), the write plan under the fence epoch, a key's lazy move (None unless
/// "lazy"), the background copy's batches from a stored cursor, the nodes a query over
/// every key reads (scan_nodes), and what a fence refusal means.
///
/// MigrationSession(migration, mode): migration a Migration, mode "background" or "lazy";
/// MigrationSession.of_topology(topology, previous=None, held=None): the session decides
/// the mode from what a service holds.
///
/// Raises InvalidArgumentError for another mode, a migration that is not a Migration, or
/// a background session of topologies that share no fixed partitions (modulo, jump,
/// rings: move those lazily).
#[pyclass(module = "shardroute", frozen)]
pub struct MigrationSession {
    inner: ss::MigrationSession,
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
    fn new(migration: &Bound<'_, PyAny>, mode: &Bound<'_, PyAny>) -> PyResult<MigrationSession> {
        let migration = migration.cast::<Migration>().map_err(|_| {
            errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("migration must be a Migration, not {}", type_name(migration)),
            )
        })?;
        let mode = ss::Mode::from_name(&str_from_py(mode, "mode")?).map_err(errors::to_py)?;
        let inner = ss::MigrationSession::new(migration.get().inner.clone(), mode).map_err(errors::to_py)?;
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

    /// "plain", "background", "lazy" or "catch-up".
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

    /// Where a write of key goes: (node id, fence epoch).
    fn write_plan(&self, key: &Bound<'_, PyAny>) -> PyResult<(String, u64)> {
        let key = Key::from_py(key)?;
        let plan = self.inner.write_plan(key.as_core()).map_err(errors::to_py)?;
        Ok((plan.node.to_string(), plan.fence_epoch))
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
        let epoch = u64_from_py(min_epoch, "min_epoch").map_err(|_| {
            errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("min_epoch must be an int in 0..2**64, not {}", type_name(min_epoch)),
            )
        })?;
        match self.inner.fenced(epoch).map_err(errors::to_py)? {
            ss::Fenced::Refresh => Ok("refresh"),
        }
    }
}
