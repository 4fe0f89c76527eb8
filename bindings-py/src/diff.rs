//! `shardroute.diff`: a shell over [`sr::diff::Tally`], key movement between two routers.

use pyo3::prelude::*;
use pyo3::types::PyBool;
use shardroute as sr;

use crate::errors;
use crate::json::value_to_py;
use crate::router::{for_each_batch_key, router_arg};

/// Where keys go when a topology changes: routes every key under old and new and
/// returns plain JSON data {"total", "moved", "moved_ppm" (moved keys per million, an
/// int), "flows": [{"from", "to", "keys"}, ...] (every pair of nodes that exchange keys,
/// sorted by node ids)}, and with per_key=True also "keys": [{"old_shard", "new_shard",
/// "old_node", "new_node", "moved"}, ...] (one per key, in order). A key moves when its
/// node changes; the two routers may use different strategies.
///
/// keys is any iterable of keys (a list, a generator, ...), read as it is routed, or a
/// uint64 array as for Router.route_many: the counts take any number of keys in bounded
/// memory. The per-key list holds at most
/// 65,536 keys (LimitExceededError past that; diff a larger set in batches).
///
/// Raises InvalidArgumentError when old or new is not a Router, keys is not an iterable
/// of keys or per_key is not a bool, InvalidKeyError at the first value that is not a
/// key, and the first routing error of either router.
#[pyfunction]
#[pyo3(signature = (old, new, keys, *, per_key = None), text_signature = "(old, new, keys, *, per_key=False)")]
pub fn diff<'py>(
    old: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
    keys: &Bound<'py, PyAny>,
    per_key: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let old = router_arg(old, "old")?;
    let new = router_arg(new, "new")?;
    let per_key = match per_key {
        None => false,
        Some(flag) => flag
            .cast::<PyBool>()
            .map(|flag| flag.is_true())
            .map_err(|_| errors::new(sr::ErrorKind::InvalidArgument, "per_key must be a bool"))?,
    };
    let mut tally = sr::diff::Tally::new(&old.get().inner, &new.get().inner, per_key);
    for_each_batch_key(keys, |key| tally.add(key))?;
    value_to_py(old.py(), &tally.finish().to_value())
}
