//! `shardroute.jump` and `shardroute.modulo_moves`: shells over [`sr::jump`] and
//! [`sr::strategy::hashed::modulo::moves`]; and [`sr::DecodedId`] as Python data.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shardroute as sr;

use crate::errors;
use crate::key::{u32_from_py, u64_from_py};

/// Jump consistent hash (Lamping & Veach, 2014): the bucket in 0..buckets of a 64-bit
/// hash. Growing from n to n + 1 buckets moves only the keys that land in the new
/// bucket.
///
/// hash is an int in 0..2**64 (InvalidKeyError otherwise, as for integer keys);
/// buckets an int in 0..2**32 (InvalidArgumentError otherwise). Raises NoNodesError
/// when buckets is 0.
#[pyfunction]
pub fn jump(hash: &Bound<'_, PyAny>, buckets: &Bound<'_, PyAny>) -> PyResult<u32> {
    let hash = u64_from_py(hash, "hash")?;
    let buckets = u32_from_py(buckets, "bucket count")?;
    sr::jump(hash, buckets).map_err(errors::to_py)
}

/// Where each shard's keys can go when a modulo cluster changes from old to new
/// shards, one count being a whole multiple of the other.
///
/// Growing by a factor m (new == m * old), entry k lists k, k + old, ..., k +
/// (m-1)*old: a key on shard k stays or moves to one of them. Shrinking by a factor
/// (old == m * new), entry k is [k % new]. 0-based shards; modulo_moves(n, n) is the
/// identity. For example modulo_moves(2, 4) == [[0, 2], [1, 3]].
///
/// Raises InvalidArgumentError when a count is not an int in 0..2**32 or neither count
/// divides the other (then nearly every key moves), NoNodesError when a count is 0,
/// LimitExceededError past the vbucket limit.
#[pyfunction]
pub fn modulo_moves(old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u32>>> {
    let old = u32_from_py(old, "old shard count")?;
    let new = u32_from_py(new, "new shard count")?;
    sr::strategy::hashed::modulo::moves(old, new).map_err(errors::to_py)
}

/// A decoded id as the `DecodedId` dict: `{"shard": int, "fields": {name: int}}`, the
/// fields in the id's layout order (most significant first).
pub fn decoded_id_to_py<'py>(py: Python<'py>, decoded: &sr::DecodedId) -> PyResult<Bound<'py, PyDict>> {
    let fields = PyDict::new(py);
    for (name, value) in &decoded.fields {
        fields.set_item(name, value)?;
    }
    let dict = PyDict::new(py);
    dict.set_item("shard", decoded.shard)?;
    dict.set_item("fields", fields)?;
    Ok(dict)
}
