//! The package's named tuples made from Rust: what a call returns where its JS twin
//! returns an object (`docs/api.md`'s rule: never a bare tuple then). Each class is a
//! `typing.NamedTuple` defined in the package's `__init__.py` (typed in `__init__.pyi`),
//! imported on first use, when the package is fully imported; a named tuple unpacks and
//! compares as the tuple it replaces.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// One named tuple class of the package, by name.
pub struct Record {
    name: &'static str,
    class: PyOnceLock<Py<PyType>>,
}

impl Record {
    const fn new(name: &'static str) -> Self {
        Record { name, class: PyOnceLock::new() }
    }

    /// The class, `shardroute.<name>`.
    pub fn class<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyType>> {
        self.class.import(py, "shardroute", self.name)
    }
}

/// `shardroute.NodeGroup(node, indices)`: one group of `Router.group_by_node`.
pub static NODE_GROUP: Record = Record::new("NodeGroup");
/// `shardroute.Move(from_, to)`: `Migration.moves`.
pub static MOVE: Record = Record::new("Move");
/// `shardroute.MovingShard(shard, from_, to)`: one unit of `Migration.moving_shards`.
pub static MOVING_SHARD: Record = Record::new("MovingShard");
/// `shardroute.WritePlan(node, fence_epoch)`: `MigrationSession.write_plan`.
pub static WRITE_PLAN: Record = Record::new("WritePlan");
/// `shardroute.SourceCall(call, actions)`: `SourceSession.call`.
pub static SOURCE_CALL: Record = Record::new("SourceCall");
/// `shardroute.PlanGroup(address, readonly, slots)`: one group of `ClusterSession.plan`.
pub static PLAN_GROUP: Record = Record::new("PlanGroup");
/// `shardroute.Endpoint(host, port)`: `parse_address`.
pub static ENDPOINT: Record = Record::new("Endpoint");
