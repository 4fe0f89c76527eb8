//! `shardroute.Router`: a shell over [`sr::Router`].

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyString, PyTuple, PyType};
use shardroute as sr;

use crate::arrays::{array_from_py, u32s_to_py, Array, Item, DETACH_MIN_KEYS};
use crate::errors;
use crate::json::document_text;
use crate::key::{
    for_each_key_chunk, keys_from_py, owned_to_py, single_key_error, str_from_py, type_name, u32_from_py, u64_from_py,
    Key,
};
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
    /// The node ids as Python strings, made once: `node` and `node_many` share them
    /// rather than make a new `str` per key.
    ids: Vec<Py<PyString>>,
}

#[pymethods]
impl Router {
    #[new]
    fn new(topology: &Bound<'_, PyAny>) -> PyResult<Router> {
        let text = document_text(topology, "topology")?;
        let inner = sr::Router::from_json(&text).map_err(errors::to_py)?;
        Ok(Router::wrap(topology.py(), inner))
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
    fn node<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
        let py = key.py();
        let key = Key::from_py(key)?;
        let index = self.inner.node_index(key.as_core()).map_err(errors::to_py)?;
        Ok(self.ids[index as usize].bind(py).clone())
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

    /// The shards of many keys, in order: the same as [route(k) for k in keys].
    ///
    /// keys is any iterable of keys (a list of str, bytes or int, a generator...), giving
    /// a list of ints; or an array of uint64 integer keys: a 1-D C-contiguous numpy
    /// array (read in place, giving a numpy uint32 array) or another buffer of uint64
    /// such as array.array("Q") or its memoryview (copied, giving a list). Batches over
    /// arrays release the GIL while they are routed.
    ///
    /// Raises InvalidKeyError at the first value that is not a key, as route would;
    /// InvalidArgumentError when keys is not iterable or is a single key (a str or bytes
    /// is iterable, but routing its characters is never what was meant), and for an
    /// array of another dtype than uint64, not 1-D, or not contiguous.
    fn route_many<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.many(keys, Output::Shards)
    }

    /// The node index (position in the topology's "nodes" list) that owns each key:
    /// the same as the index of node(k) for each k in keys. Keys and results as for
    /// route_many (a numpy uint32 array for a numpy array of keys, else a list).
    ///
    /// Raises as route_many.
    fn node_index_many<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.many(keys, Output::NodeIndices)
    }

    /// The id of the node that owns each key, as a list of str: the same as
    /// [node(k) for k in keys]. Keys as for route_many, numpy arrays included.
    ///
    /// Raises as route_many.
    fn node_many<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.many(keys, Output::NodeIds)
    }

    /// The shards of byte keys packed in one buffer, Arrow-style: key i is
    /// data[offsets[i]:offsets[i + 1]], so offsets has one more entry than there are
    /// keys. data is bytes (read in place), or a bytearray, memoryview or numpy uint8
    /// array; offsets an iterable of ints or an array of int32, uint32, int64 or uint64
    /// (a numpy uint32 array is read in place). Gives a numpy uint32 array when data or
    /// offsets is a numpy array, else a list. Releases the GIL for large batches.
    ///
    /// Raises InvalidArgumentError when offsets is empty, decreases, points past data or
    /// holds a value outside 0..2**32, or when data is not bytes-like.
    fn route_packed<'py>(&self, data: &Bound<'py, PyAny>, offsets: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = data.py();
        let data = packed_data(data)?;
        let (offsets, offsets_numpy) =
            match array_from_py(offsets, "offsets", &[Item::U32, Item::I32, Item::I64, Item::U64])? {
                Some(array) => (array.u32s("offsets")?.into_owned().into(), array.numpy),
                None => {
                    let values = offsets.try_iter().map_err(|err| {
                        errors::convert(py, err, sr::ErrorKind::InvalidArgument, "offsets must be an iterable of ints")
                    })?;
                    let values: Vec<u32> =
                        values.map(|value| u32_from_py(&value?, "offset")).collect::<PyResult<_>>()?;
                    (std::borrow::Cow::Owned(values), false)
                }
            };
        let mut out = Vec::new();
        let bytes = data.bytes();
        detach_for(py, offsets.len(), || self.inner.route_packed_into(bytes, &offsets, &mut out)).map_err(|err| {
            // A key's own error (not the offsets' `invalid_argument`) names the key, as the
            // JavaScript packages do: `out` then holds the shards before it.
            if err.kind() == sr::ErrorKind::InvalidArgument {
                errors::to_py(err)
            } else {
                errors::to_py(sr::argument::at_index(out.len(), err))
            }
        })?;
        u32s_to_py(py, &out, data.numpy || offsets_numpy)
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

    /// The scatter/gather plan of a query over every shard (a local secondary index, an
    /// aggregation): {"gather": "union", "visits": [{"shard", "node", "keys": []}]}, each
    /// shard once, with the node to ask under read_from: "primary" (the owner),
    /// "replicas" (shard i of the plan reads replica turn + i of its chain; the owner
    /// where there is none) or "zone" (a node of the chain in that zone, else the owner).
    ///
    /// Raises InvalidArgumentError for another read_from, or "zone" without a zone;
    /// NoNodesError for a shard without an owner.
    #[pyo3(signature = (read_from = None, turn = None, zone = None))]
    fn scatter_every<'py>(
        &self,
        py: Python<'py>,
        read_from: Option<&Bound<'py, PyAny>>,
        turn: Option<&Bound<'py, PyAny>>,
        zone: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.scatter(py, sr::scatter::Scope::Every, read_from, turn, zone)
    }

    /// The scatter/gather plan of a scan over the keys in [start, end) (end None: to the
    /// end of the key space): the shards of shards_for_range, in key order, one node
    /// each as for scatter_every; "gather" is "concat" where each shard holds one
    /// contiguous stretch in that order (key_range), else "merge" (merge the shards'
    /// sorted answers by key).
    ///
    /// Raises as shards_for_range and scatter_every.
    #[pyo3(signature = (start, end = None, read_from = None, turn = None, zone = None))]
    fn scatter_range<'py>(
        &self,
        start: &Bound<'py, PyAny>,
        end: Option<&Bound<'py, PyAny>>,
        read_from: Option<&Bound<'py, PyAny>>,
        turn: Option<&Bound<'py, PyAny>>,
        zone: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = start.py();
        let start = Key::from_py(start)?;
        let end = end.map(Key::from_py).transpose()?;
        let scope = sr::scatter::Scope::Range { start: start.as_core(), end: end.as_ref().map(Key::as_core) };
        self.scatter(py, scope, read_from, turn, zone)
    }

    /// The scatter/gather plan of a set of keys (a multi-get): each distinct shard once,
    /// in the order of its first key, with "keys" the indices of the keys it holds, one
    /// node each as for scatter_every; "gather" is "union".
    ///
    /// Raises InvalidKeyError (naming the key's index) and as scatter_every.
    #[pyo3(signature = (keys, read_from = None, turn = None, zone = None))]
    fn scatter_keys<'py>(
        &self,
        keys: &Bound<'py, PyAny>,
        read_from: Option<&Bound<'py, PyAny>>,
        turn: Option<&Bound<'py, PyAny>>,
        zone: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (name, turn, zone) = scatter_policy(read_from, turn, zone)?;
        let read_from = sr::scatter::ReadFrom::from_name(&name, turn, zone.as_deref()).map_err(errors::to_py)?;
        // Keys as route_many reads them: a numpy uint64 array in place, else any iterable.
        let plan = with_all_keys(keys, |keys| {
            let keys: Vec<sr::Key<'_>> = keys.collect();
            self.inner.scatter(sr::scatter::Scope::Keys(&keys), read_from)
        })?;
        self.plan_to_py(keys.py(), &plan, true)
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

    /// The id of the node that owns a shard: a node index for the modulo, jump, ring and
    /// rendezvous strategies (1-based for 1-based modulo), a vbucket, a slot, a partition.
    /// What a copy job needs to know where a unit lives (Migration.moving_shards lists
    /// the units that change owner).
    ///
    /// Raises InvalidArgumentError when shard is not an int of the topology's shards
    /// (the range route can return), NoNodesError for a Couchbase vbucket without an
    /// active node.
    fn shard_owner(&self, shard: &Bound<'_, PyAny>) -> PyResult<&str> {
        let shard = u32_from_py(shard, "shard")?;
        self.inner.shard_owner(shard).map_err(errors::to_py)
    }

    /// The node to read a key from when reads may go to replicas (Redis READONLY
    /// connections, Couchbase replica reads): one of the replicas of the key's chain,
    /// picked by turn (turn % the number of replicas, so a growing counter spreads reads
    /// round-robin), or the owner when the chain has none. Strategies without replica
    /// chains (the hashed ones) answer node(key). Writes go to node(key).
    ///
    /// Raises InvalidKeyError for a value that is not a key, InvalidArgumentError when
    /// turn is not an int in 0..2**32.
    #[pyo3(signature = (key, turn = Turn(0)), text_signature = "($self, key, turn=0)")]
    fn read_replica(&self, key: &Bound<'_, PyAny>, turn: Turn) -> PyResult<&str> {
        let key = Key::from_py(key)?;
        self.inner.read_replica(key.as_core(), turn.0).map_err(errors::to_py)
    }

    /// The one shard all keys share (for redis_cluster, their hash slot): what a
    /// multi-key command (MGET, MSET, a transaction) needs, since one node must hold
    /// every key. Hash tags ("{user1}.name", "{user1}.mail") are how keys share a slot.
    /// Keys as for route_many.
    ///
    /// Raises CrossSlotError when two keys are in different shards (the message names
    /// the first key that differs and both shards), InvalidArgumentError for no keys;
    /// otherwise as route_many.
    fn same_slot(&self, keys: &Bound<'_, PyAny>) -> PyResult<u32> {
        with_all_keys(keys, |keys| self.inner.same_slot(keys))
    }

    /// How many of keys each node owns and how evenly they spread (what the CLI's
    /// stats prints of a sample): {"total", "nodes": [{"id", "weight", "load", "share",
    /// "load_per_weight"}], "mean", "max_over_mean", "cv"}, the spread of the load per
    /// unit of weight (max over mean; standard deviation over mean). Keys as for
    /// route_many. The load measured per shard is the operation suggest's "nodes".
    ///
    /// Raises as route_many.
    fn stats<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let stats = with_all_keys(keys, |keys| self.inner.stats(keys))?;
        crate::json::value_to_py(keys.py(), &stats.to_value(&self.inner))
    }

    /// The keys grouped by the node that owns them, for pipelines and for splitting
    /// MGET/MSET by node: a list of NodeGroup(node, indices) named tuples (the node's id,
    /// the indices of its keys in keys), one for each node that owns at least one key, in the topology's node order, each
    /// list of indices in input order. Every key is in exactly one group, the group of
    /// node(key). Keys as for route_many (any iterable of keys, or a uint64 array).
    ///
    /// Raises as route_many.
    fn group_by_node<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let py = keys.py();
        let groups = with_all_keys(keys, |keys| self.inner.group_by_node(keys))?;
        let class = crate::records::NODE_GROUP.class(py)?;
        groups
            .iter()
            .map(|(node, indices)| class.call1((self.ids[*node as usize].bind(py), PyList::new(py, indices)?)))
            .collect()
    }

    /// The router after a Redis Cluster "MOVED <slot> <address>" reply: slot is served
    /// by the node at address ("host:port"; a node with that address as its id is
    /// added when no node has it), and the epoch is one more. This router is
    /// unchanged. The same as apply() with {"op": "redis_moved", "slot": slot,
    /// "address": address}. parse_redirect reads the reply.
    ///
    /// Raises InvalidArgumentError for a topology that is not redis_cluster, a slot that
    /// is not an int in 0..16384, an address that is not a str with a port.
    fn moved(&self, slot: &Bound<'_, PyAny>, address: &Bound<'_, PyAny>) -> PyResult<Router> {
        let py = slot.py();
        let slot = u32_from_py(slot, "slot")?;
        let address = str_from_py(address, "address")?;
        let inner = self.inner.moved(slot, &address).map_err(errors::to_py)?;
        Ok(Router::wrap(py, inner))
    }

    /// Where the next command for a key of slot goes after a Redis Cluster "ASK <slot>
    /// <address>" reply: address, once, preceded by ASKING. Nothing changes: the slot is
    /// being migrated and stays with its owner until a MOVED (moved) says otherwise.
    ///
    /// Raises InvalidArgumentError as moved does.
    fn ask(&self, slot: &Bound<'_, PyAny>, address: &Bound<'_, PyAny>) -> PyResult<String> {
        let slot = u32_from_py(slot, "slot")?;
        let address = str_from_py(address, "address")?;
        self.inner.ask(slot, &address).map(str::to_owned).map_err(errors::to_py)
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
        Ok(Router::wrap(topology.py(), inner))
    }

    /// The router of the global index name: it routes terms over this topology's nodes,
    /// at its epoch (route a term, or plan a term range with scatter_range). Each call
    /// builds a new Router (a copy of the index's tables): keep it while this topology
    /// holds rather than asking per lookup.
    ///
    /// Raises InvalidArgumentError when the topology has no index of that name.
    fn index(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Router> {
        let name = str_from_py(name, "name")?;
        let index = self.inner.index(&name).map_err(errors::to_py)?;
        Ok(Router::wrap(py, index.clone()))
    }

    /// The names of the global indexes, sorted.
    fn index_names(&self) -> Vec<&str> {
        self.inner.index_names().collect()
    }

    /// The router of the table family that lists table: its strategy and hashing over
    /// its node group, at this topology's epoch. For a reference table, node(key) and
    /// route_read(key) give the read node, read_near(key, zone) the read node for a
    /// caller's zone, route_write(key) every node of the group. Each call builds a new
    /// Router: keep it while this topology holds.
    ///
    /// Raises InvalidArgumentError when no table family of the topology lists table.
    fn table(&self, py: Python<'_>, table: &Bound<'_, PyAny>) -> PyResult<Router> {
        let table = str_from_py(table, "table")?;
        let family = self.inner.table(&table).map_err(errors::to_py)?;
        Ok(Router::wrap(py, family.clone()))
    }

    /// The node a caller in zone reads key from: for a reference table's router, a node
    /// of its group in that zone (picked by the key's hash) when there is one, else
    /// node(key); for any other router route_read(key).
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    #[pyo3(signature = (key, zone = None))]
    fn read_near(&self, key: &Bound<'_, PyAny>, zone: Option<&Bound<'_, PyAny>>) -> PyResult<&str> {
        let key = Key::from_py(key)?;
        let zone = zone.map(|zone| str_from_py(zone, "zone")).transpose()?;
        self.inner.read_near(key.as_core(), zone.as_deref()).map_err(errors::to_py)
    }

    /// What one write touches: a dict {"shard": int, "node": str, "indexes": [{"index":
    /// str, "shard": int, "node": str, "terms": [int]}]}: the document's shard and node,
    /// then one entry per index shard the terms' entries live on, with the positions of
    /// its terms in terms, in first-term order. terms is an iterable of (index name,
    /// term) pairs, tuples or lists of two; terms are keys as for route.
    ///
    /// Raises InvalidArgumentError for an index the topology does not have or terms that
    /// are not (name, term) pairs, InvalidKeyError for a key or term that is not a key.
    fn index_write_plan<'py>(&self, key: &Bound<'py, PyAny>, terms: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let key = Key::from_py(key)?;
        let mut pairs: Vec<(String, Key)> = Vec::new();
        for (position, item) in terms.try_iter().map_err(|_| not_pairs(terms))?.enumerate() {
            let item = item?;
            // A tuple or a list of two: (name, term).
            let (name, term) = if let Ok(pair) = item.cast::<PyTuple>() {
                (pair.len() == 2).then(|| (pair.get_item(0), pair.get_item(1)))
            } else if let Ok(pair) = item.cast::<PyList>() {
                (pair.len() == 2).then(|| (pair.get_item(0), pair.get_item(1)))
            } else {
                None
            }
            .ok_or_else(|| not_pairs(&item))?;
            let name = str_from_py(&name?, &format!("terms[{position}][0]"))?;
            pairs.push((name, Key::from_py(&term?)?));
        }
        let borrowed: Vec<(&str, sr::Key<'_>)> =
            pairs.iter().map(|(name, term)| (name.as_str(), term.as_core())).collect();
        let plan = self.inner.index_write_plan(key.as_core(), &borrowed).map_err(errors::to_py)?;
        crate::json::value_to_py(terms.py(), &plan.to_value(&self.inner))
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

/// What a batch method gives for each key.
#[derive(Clone, Copy)]
enum Output {
    Shards,
    NodeIndices,
    NodeIds,
}

impl Router {
    /// The scatter methods: the core's plan of `scope` under the policy, as a dict.
    fn scatter<'py>(
        &self,
        py: Python<'py>,
        scope: sr::scatter::Scope<'_, '_>,
        read_from: Option<&Bound<'py, PyAny>>,
        turn: Option<&Bound<'py, PyAny>>,
        zone: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (name, turn, zone) = scatter_policy(read_from, turn, zone)?;
        let read_from = sr::scatter::ReadFrom::from_name(&name, turn, zone.as_deref()).map_err(errors::to_py)?;
        let plan = self.inner.scatter(scope, read_from).map_err(errors::to_py)?;
        self.plan_to_py(py, &plan, false)
    }

    /// A plan as the scatter calls return it, in columns: {"gather", "shards": [int],
    /// "nodes": [node id], "keys": [[key index]] for scatter_keys, else None}. Columns
    /// cost a list append per shard (the ids are the router's own strings), where a dict
    /// per shard cost ~20 times as much.
    fn plan_to_py<'py>(
        &self,
        py: Python<'py>,
        plan: &sr::scatter::ScatterPlan,
        keys: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let dict = PyDict::new(py);
        dict.set_item(pyo3::intern!(py, "gather"), PyString::intern(py, plan.gather.name()))?;
        dict.set_item(pyo3::intern!(py, "shards"), PyList::new(py, plan.visits.iter().map(|visit| visit.shard))?)?;
        let nodes = PyList::new(py, plan.visits.iter().map(|visit| self.ids[visit.node as usize].bind(py)))?;
        dict.set_item(pyo3::intern!(py, "nodes"), nodes)?;
        if keys {
            let lists = plan.visits.iter().map(|visit| PyList::new(py, &visit.keys)).collect::<PyResult<Vec<_>>>()?;
            dict.set_item(pyo3::intern!(py, "keys"), PyList::new(py, lists)?)?;
        } else {
            dict.set_item(pyo3::intern!(py, "keys"), py.None())?;
        }
        Ok(dict.into_any())
    }

    /// The batch methods: converts the keys (an array or an iterable), calls core's
    /// batch entry point for `output`, converts the results.
    fn many<'py>(&self, keys: &Bound<'py, PyAny>, output: Output) -> PyResult<Bound<'py, PyAny>> {
        let py = keys.py();
        let mut out = Vec::new();
        let numpy = match Batch::from_py(keys)? {
            Batch::Array(array) => {
                let keys = array.u64s();
                detach_for(py, keys.len(), || match output {
                    Output::Shards => self.inner.route_u64s_into(&keys, &mut out),
                    _ => self.inner.node_index_many_into(keys.iter().map(|&key| sr::Key::U64(key)), &mut out),
                })
                .map_err(errors::to_py)?;
                array.numpy
            }
            Batch::Iterable => {
                let mut chunk_out = Vec::new();
                if keys.is_instance_of::<PyList>() || keys.is_instance_of::<PyTuple>() {
                    out.reserve(keys.len()?);
                }
                for_each_key_chunk(keys, |chunk| {
                    let chunk = chunk.iter().map(Key::as_core);
                    match output {
                        Output::Shards => self.inner.route_many_into(chunk, &mut chunk_out),
                        _ => self.inner.node_index_many_into(chunk, &mut chunk_out),
                    }
                    // `chunk_out` holds the results before the failing key.
                    .map_err(|err| errors::to_py(sr::argument::at_index(out.len() + chunk_out.len(), err)))?;
                    out.extend_from_slice(&chunk_out);
                    Ok(())
                })?;
                false
            }
        };
        match output {
            Output::NodeIds => self.node_ids(py, &out),
            _ => u32s_to_py(py, &out, numpy),
        }
    }

    pub(crate) fn wrap(py: Python<'_>, inner: sr::Router) -> Router {
        let ids = inner.nodes().iter().map(|node| PyString::new(py, &node.id).unbind()).collect();
        Router { inner, ids }
    }

    /// A session's `router` property: `router` wrapped once per epoch (`cache` holds the
    /// last one, so a caller that reads the property per command does not copy the table).
    pub(crate) fn cached(
        py: Python<'_>,
        cache: &mut Option<(u64, Py<Router>)>,
        router: Option<&sr::Router>,
    ) -> PyResult<Option<Py<Router>>> {
        let Some(router) = router else { return Ok(None) };
        match cache {
            Some((epoch, wrapped)) if *epoch == router.epoch() => Ok(Some(wrapped.clone_ref(py))),
            _ => {
                let wrapped = Py::new(py, Router::wrap(py, router.clone()))?;
                *cache = Some((router.epoch(), wrapped.clone_ref(py)));
                Ok(Some(wrapped))
            }
        }
    }

    /// Node indices as a list of node ids (the shared `str` objects).
    fn node_ids<'py>(&self, py: Python<'py>, indices: &[u32]) -> PyResult<Bound<'py, PyAny>> {
        let items = indices.iter().map(|&index| self.ids[index as usize].bind(py));
        Ok(PyList::new(py, items)?.into_any())
    }
}

/// The keys of a batch argument, as [`Router::many`] reads them.
enum Batch<'py> {
    /// A uint64 array of integer keys (numpy, read in place; or another buffer, copied).
    Array(Array<'py>),
    /// Any other value: an iterable of keys, converted key by key (or not iterable).
    Iterable,
}

impl<'py> Batch<'py> {
    /// # Errors
    /// `invalid_argument` for a single `str` or bytes key, and for an array of another
    /// item type than uint64, not 1-D or not contiguous.
    fn from_py(keys: &Bound<'py, PyAny>) -> PyResult<Batch<'py>> {
        if Key::is_text_or_bytes(keys) && !is_array_view(keys) {
            return Err(single_key_error());
        }
        Ok(array_from_py(keys, "keys", &[Item::U64])?.map_or(Batch::Iterable, Batch::Array))
    }
}

/// `call` over every key of a batch argument at once, for the core calls that need all
/// keys together (`same_slot`, `group_by_node`, `Migration.moving_keys`). Keys as for
/// `route_many`: a uint64 array read in place (the GIL released for large batches), or
/// any other iterable of keys converted as `route_many` converts them (no `bytes` object
/// per `str`).
pub(crate) fn with_all_keys<T: Send>(
    keys: &Bound<'_, PyAny>,
    call: impl for<'a, 'py> Fn(AllKeys<'a, 'py>) -> sr::Result<T> + Sync,
) -> PyResult<T> {
    match Batch::from_py(keys)? {
        Batch::Array(array) => {
            let integers = array.u64s();
            detach_for(keys.py(), integers.len(), || call(AllKeys::Integers(integers.iter())))
        }
        Batch::Iterable => call(AllKeys::Converted(keys_from_py(keys)?.iter())),
    }
    .map_err(errors::to_py)
}

/// `each` over every key of a batch argument, one at a time, for the core calls that
/// stream (`diff`): a uint64 array read in place, or any other iterable read in chunks
/// as it is iterated, so no call holds more than a chunk of converted keys.
pub(crate) fn for_each_batch_key(
    keys: &Bound<'_, PyAny>,
    mut each: impl for<'k> FnMut(sr::Key<'k>) -> sr::Result<()>,
) -> PyResult<()> {
    match Batch::from_py(keys)? {
        Batch::Array(array) => array.u64s().iter().try_for_each(|&key| each(sr::Key::U64(key))).map_err(errors::to_py),
        Batch::Iterable => for_each_key_chunk(keys, |chunk| {
            chunk.iter().try_for_each(|key| each(key.as_core())).map_err(errors::to_py)
        }),
    }
}

/// The keys [`with_all_keys`] hands to core: one concrete iterator over either source,
/// so that core's batch loop is compiled for it (through a `dyn Iterator`, a call per
/// key, a batch takes twice as long).
/// The policy arguments of the scatter calls, `None` for their defaults: the
/// `read_from` name ("primary"), the turn (0) and the zone.
fn scatter_policy(
    read_from: Option<&Bound<'_, PyAny>>,
    turn: Option<&Bound<'_, PyAny>>,
    zone: Option<&Bound<'_, PyAny>>,
) -> PyResult<(String, u32, Option<String>)> {
    let name = read_from.map(|name| str_from_py(name, "read_from")).transpose()?;
    let turn = turn.map(|turn| u32_from_py(turn, "turn")).transpose()?.unwrap_or(0);
    let zone = zone.map(|zone| str_from_py(zone, "zone")).transpose()?;
    Ok((name.unwrap_or_else(|| "primary".to_owned()), turn, zone))
}

pub(crate) enum AllKeys<'a, 'py> {
    Integers(std::slice::Iter<'a, u64>),
    Converted(std::slice::Iter<'a, Key<'py>>),
}

impl<'a> Iterator for AllKeys<'a, '_> {
    type Item = sr::Key<'a>;

    fn next(&mut self) -> Option<sr::Key<'a>> {
        match self {
            AllKeys::Integers(keys) => keys.next().map(|&key| sr::Key::U64(key)),
            AllKeys::Converted(keys) => keys.next().map(Key::as_core),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            AllKeys::Integers(keys) => keys.size_hint(),
            AllKeys::Converted(keys) => keys.size_hint(),
        }
    }
}

/// The `turn` argument of `read_replica`: an int in 0..2**32, 0 when omitted; any other
/// value, `None` included, is `InvalidArgumentError`, as for every count.
struct Turn(u32);

impl<'a, 'py> FromPyObject<'a, 'py> for Turn {
    type Error = PyErr;

    fn extract(turn: Borrowed<'a, 'py, PyAny>) -> PyResult<Turn> {
        u32_from_py(&turn, "turn").map(Turn)
    }
}

/// A `memoryview` of a buffer that is not bytes (`memoryview(array("Q", ...))`): an
/// array of keys rather than one byte-string key.
fn is_array_view(value: &Bound<'_, PyAny>) -> bool {
    value.cast::<PyMemoryView>().is_ok_and(|view| {
        view.getattr(pyo3::intern!(value.py(), "format"))
            .and_then(|format| format.extract::<String>())
            .is_ok_and(|format| !matches!(format.as_str(), "B" | "b" | "c" | "@B" | "@b" | "@c" | "=B"))
    })
}

/// Runs `route` with the GIL released when the batch is large (it then touches no
/// Python object), else with it held (releasing costs more than a small batch).
fn detach_for<T: Send>(py: Python<'_>, keys: usize, route: impl FnOnce() -> T + Send) -> T {
    if keys >= DETACH_MIN_KEYS {
        py.detach(route)
    } else {
        route()
    }
}

/// Packed keys' data: `bytes` in place, other byte buffers (bytearray, memoryview,
/// numpy uint8 arrays) through [`array_from_py`].
struct PackedData<'py> {
    numpy: bool,
    bytes: Option<Bound<'py, PyBytes>>,
    array: Option<Array<'py>>,
}

impl PackedData<'_> {
    fn bytes(&self) -> &[u8] {
        match (&self.bytes, &self.array) {
            (Some(bytes), _) => bytes.as_bytes(),
            (None, Some(array)) => array.bytes(),
            (None, None) => &[],
        }
    }
}

fn packed_data<'py>(data: &Bound<'py, PyAny>) -> PyResult<PackedData<'py>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(PackedData { numpy: false, bytes: Some(bytes.clone()), array: None });
    }
    if data.is_instance_of::<PyByteArray>() {
        let bytes = PyBytes::new(data.py(), &data.cast::<PyByteArray>()?.to_vec());
        return Ok(PackedData { numpy: false, bytes: Some(bytes), array: None });
    }
    if !data.is_instance_of::<PyString>() {
        if let Some(array) = array_from_py(data, "data", &[Item::U8])? {
            return Ok(PackedData { numpy: array.numpy, bytes: None, array: Some(array) });
        }
    }
    Err(errors::new(
        sr::ErrorKind::InvalidArgument,
        format!("data must be bytes, bytearray, memoryview or a numpy uint8 array, not {}", type_name(data)),
    ))
}

/// A `Router` argument; `what` names it in the error.
///
/// # Errors
/// `invalid_argument` for any other value.
pub(crate) fn router_arg<'a, 'py>(value: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, Router>> {
    value.cast::<Router>().map_err(|_| {
        errors::new(sr::ErrorKind::InvalidArgument, format!("{what} must be a Router, not {}", type_name(value)))
    })
}

/// `invalid_argument`: terms must be (index name, term) pairs.
fn not_pairs(value: &Bound<'_, PyAny>) -> PyErr {
    errors::to_py(sr::Error::new(
        sr::ErrorKind::InvalidArgument,
        format!("index_write_plan: terms must be an iterable of (index name, term) pairs, got {}", type_name(value)),
    ))
}
