//! `shardroute.Router`: a shell over [`sr::Router`].

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use shardroute as sr;

use crate::errors;
use crate::json::document_text;
use crate::key::{keys_from_py, owned_to_py, u32_from_py, u64_from_py, Key};
use crate::placement_names::location_to_py;
use crate::strategy::decoded_id_to_py;

/// A router: a validated topology document compiled for lookups.
///
/// Router(topology) takes the document as JSON text (str) or as parsed data (a
/// dict, as from json.load). Lookups never change the router, so one instance can be
/// shared freely. The same document gives the same answers in every language.
///
/// A key is str (hashed as its UTF-8 bytes), bytes, bytearray, memoryview, or an int
/// in 0..2**64; the int 42 and the str "42" are different keys. bool is not a key.
///
/// Raises InvalidTopologyError for a malformed document, NoNodesError for an empty
/// node list, LimitExceededError past the documented size limits.
#[pyclass(module = "shardroute", frozen)]
pub struct Router {
    pub(crate) inner: sr::Router,
}

#[pymethods]
impl Router {
    #[new]
    fn new(topology: &Bound<'_, PyAny>) -> PyResult<Router> {
        let text = document_text(topology, "topology")?;
        let inner = sr::Router::from_json(&text).map_err(errors::to_py)?;
        Ok(Router { inner })
    }

    /// The shard of a key: a node index for the modulo, jump, ring and rendezvous
    /// strategies (1-based for 1-based modulo), the vbucket number for vbucket.
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn route(&self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        let key = Key::from_py(key)?;
        self.inner.route(key.as_core()).map_err(errors::to_py)
    }

    /// The id of the node that owns a key.
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn node(&self, key: &Bound<'_, PyAny>) -> PyResult<&str> {
        let key = Key::from_py(key)?;
        self.inner.node(key.as_core()).map_err(errors::to_py)
    }

    /// count distinct node ids for a key in preference order, owner first:
    /// replicas(key, 1)[0] == node(key).
    ///
    /// Raises InvalidArgumentError when count is not an int in 1..=the number of nodes
    /// (for vbucket, the length of the key's chain); InvalidKeyError for a bad key.
    fn replicas(&self, key: &Bound<'_, PyAny>, count: &Bound<'_, PyAny>) -> PyResult<Vec<&str>> {
        let key = Key::from_py(key)?;
        let count = u32_from_py(count, "replica count")?;
        self.inner.replicas(key.as_core(), count).map_err(errors::to_py)
    }

    /// The shards of many keys (any iterable), in order: the same as [route(k) for k
    /// in keys].
    ///
    /// Raises InvalidKeyError at the first value that is not a key, InvalidArgumentError
    /// when keys is not iterable or is a single key (a str or bytes is iterable, but
    /// routing its characters is never what was meant).
    fn route_many(&self, keys: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let keys = keys_from_py(keys)?;
        self.inner.route_many(keys.iter().map(Key::as_core)).map_err(errors::to_py)
    }

    /// The shards a scan over the keys in [start, end) must visit, in key order; end
    /// None (the default) scans to the end of the key space. Strategies that hash keys
    /// scatter every range, so for them this is every shard; range-partitioned
    /// strategies give only the ranges that overlap.
    ///
    /// Raises InvalidKeyError when start or end is not a key, InvalidArgumentError when
    /// end is not after start for a range strategy.
    #[pyo3(signature = (start, end = None))]
    fn shards_for_range(&self, start: &Bound<'_, PyAny>, end: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u32>> {
        let start = Key::from_py(start)?;
        let end = end.map(Key::from_py).transpose()?;
        self.inner.shards_for_range(start.as_core(), end.as_ref().map(Key::as_core)).map_err(errors::to_py)
    }

    /// Decodes an id whose strategy makes ids carry their shard: a DecodedId dict
    /// {"shard": int, "fields": {name: int}}, the fields (timestamp, sequence, ...) in
    /// the id's layout order, most significant first.
    ///
    /// Raises InvalidKeyError when id is not an int in 0..2**64, InvalidArgumentError
    /// when the strategy's ids do not carry a shard.
    fn decode_id<'py>(&self, py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let id = u64_from_py(id, "id")?;
        let decoded = self.inner.decode_id(id).map_err(errors::to_py)?;
        decoded_id_to_py(py, &decoded)
    }

    /// Where a key lives: a Location dict {"shard", "node", "address", "zone",
    /// "names"}, with the owning node's address and zone (None when the document gives
    /// none) and the topology's "placement" name templates rendered for the shard
    /// (e.g. {"database": "db_3"}; empty without templates).
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn locate<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let key = Key::from_py(key)?;
        let location = self.inner.locate(key.as_core()).map_err(errors::to_py)?;
        location_to_py(py, &location)
    }

    /// How many salted keys a key is spread over: its fanout in the topology's
    /// "hot_keys", 1 for a key that is not hot (integer keys are never hot).
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn fanout(&self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        let key = Key::from_py(key)?;
        Ok(self.inner.fanout(key.as_core()))
    }

    /// The key to write a hot key's value under for a caller-chosen salt: key +
    /// separator + str(salt % fanout). A key that is not hot is its own salted key, so
    /// every write can be salted. The result has the key's type: str for a str, bytes
    /// for bytes, bytearray or memoryview, int for an int.
    ///
    /// Raises InvalidKeyError for a value that is not a key, InvalidArgumentError when
    /// salt is not an int in 0..2**32.
    fn salted_key<'py>(&self, key: &Bound<'py, PyAny>, salt: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let source = key;
        let key = Key::from_py(source)?;
        let salt = u32_from_py(salt, "salt")?;
        owned_to_py(source, &self.inner.salted_key(key.as_core(), salt))
    }

    /// Every salted form of a key with its shard, salt 0 first: what a read of a hot
    /// key gathers, as a list of (salted key, shard) tuples. A key that is not hot
    /// gives [(key, route(key))]. Salted keys have the key's type, as for salted_key.
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn salted_keys<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Vec<(Bound<'py, PyAny>, u32)>> {
        let source = key;
        let key = Key::from_py(source)?;
        let pairs = self.inner.salted_keys(key.as_core()).map_err(errors::to_py)?;
        pairs.iter().map(|(salted, shard)| Ok((owned_to_py(source, salted)?, *shard))).collect()
    }

    /// The node that serves reads of a key: node(key), except for a vbucket being
    /// moved, whose reads go to the old owner until the move completes.
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn route_read(&self, key: &Bound<'_, PyAny>) -> PyResult<&str> {
        let key = Key::from_py(key)?;
        self.inner.route_read(key.as_core()).map_err(errors::to_py)
    }

    /// The nodes a write of a key goes to, the deciding one first: [node(key)], or
    /// for a vbucket being moved [new owner, old owner].
    ///
    /// Raises ReadOnlyError when the key's vbucket is read-only (frozen or being
    /// moved), InvalidKeyError for a value that is not a key.
    fn route_write(&self, key: &Bound<'_, PyAny>) -> PyResult<Vec<&str>> {
        let key = Key::from_py(key)?;
        self.inner.route_write(key.as_core()).map_err(errors::to_py)
    }

    /// A new Router for a newer topology (a document as for Router: JSON text or a
    /// mapping); this router is unchanged. Epochs only grow: a lower epoch is refused,
    /// and so is the same epoch with different content; the same document again is
    /// accepted.
    ///
    /// Raises StaleEpochError when the topology is not newer (the message names the
    /// epoch this router holds), and the errors of Router(topology) for a bad document.
    fn replace(&self, topology: &Bound<'_, PyAny>) -> PyResult<Router> {
        let next = Router::new(topology)?;
        let inner = self.inner.replace(next.inner).map_err(errors::to_py)?;
        Ok(Router { inner })
    }

    /// The topology's epoch (an int in 0..2**64).
    #[getter]
    fn epoch(&self) -> u64 {
        self.inner.epoch()
    }

    /// The canonical JSON text of the topology: every default spelled out, fields in a
    /// fixed order. Router(router.to_json()) gives an equal router, and the text is the
    /// same byte for byte in every language.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    fn __repr__(&self) -> String {
        format!("<shardroute.Router epoch={} nodes={}>", self.inner.epoch(), self.inner.nodes().len())
    }

    /// Pickles as the canonical JSON text.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (String,)) {
        (slf.get_type(), (slf.get().inner.to_json(),))
    }
}
