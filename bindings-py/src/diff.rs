//! `shardroute.diff`: a shell over [`sr::diff::diff`], key movement between two routers.

use pyo3::prelude::*;
use shardroute as sr;

use crate::json::value_to_py;
use crate::router::{router_arg, with_all_keys};

/// Where keys go when a topology changes: routes every key under old and new and
/// returns plain JSON data {"keys": [{"old_shard", "new_shard", "old_node",
/// "new_node", "moved"}, ...] (one per key, in order), "total", "moved", "moved_ppm"
/// (moved keys per million, an int), "flows": [{"from", "to", "keys"}, ...] (every
/// pair of nodes that exchange keys, sorted by node ids)}. A key moves when its node
/// changes; the two routers may use different strategies.
///
/// keys is any iterable of keys (a list, a generator, ...), or a uint64 array as for
/// Router.route_many.
///
/// Raises InvalidArgumentError when old or new is not a Router or keys is not an
/// iterable of keys, InvalidKeyError at the first value that is not a key, and the
/// first routing error of either router.
#[pyfunction]
pub fn diff<'py>(
    old: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let old = router_arg(old, "old")?;
    let new = router_arg(new, "new")?;
    let (old_router, new_router) = (&old.get().inner, &new.get().inner);
    let report = with_all_keys(keys, |keys| sr::diff::diff(old_router, new_router, keys))?;
    value_to_py(old.py(), &report.to_value())
}
