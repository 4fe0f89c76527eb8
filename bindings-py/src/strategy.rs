//! `shardroute.jump`: a shell over [`sr::jump`], the bare shard function.

use pyo3::prelude::*;
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
