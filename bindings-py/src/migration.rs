//! `shardroute.Migration`: a shell over [`sr::migration::Migration`].

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyType};
use shardroute as sr;

use crate::errors;
use crate::key::{owned_to_py, type_name, u32_from_py, Key};
use crate::router::{router_arg, with_all_keys, Router};

/// A move of data from one topology to the next while the application runs:
/// Migration(before, after) over two Routers, the topology data moves from and the one
/// it moves to (any two strategies: modulo 5 to 10, a ring that gained a node, a vbucket
/// dictionary and its forward map). It answers where a key goes (moves), where services
/// write (write_target: the new owner, always) and read (read_targets: the old owner,
/// then the new one until the key's data has moved), and what a copy job works through
/// (moving_shards for fixed partitions, moving_keys for a list of keys). It keeps no
/// state: whether a key or unit has moved is the caller's flag, kept where the data is.
///
/// Neither router changes, and both stay usable; the migration holds its own copies.
///
/// Raises StaleEpochError unless after.epoch > before.epoch (a migration goes forward),
/// InvalidArgumentError when before or after is not a Router.
#[pyclass(module = "shardroute", frozen)]
pub struct Migration {
    pub(crate) inner: sr::migration::Migration,
    /// The Routers the `before` and `after` properties give: those passed in, or for
    /// `of_dictionary` the two sides of the dictionary, wrapped once.
    before: Py<Router>,
    after: Py<Router>,
}

#[pymethods]
impl Migration {
    #[new]
    fn new(before: &Bound<'_, PyAny>, after: &Bound<'_, PyAny>) -> PyResult<Migration> {
        let before = router_arg(before, "before")?;
        let after = router_arg(after, "after")?;
        let inner = sr::migration::Migration::new(before.get().inner.clone(), after.get().inner.clone())
            .map_err(errors::to_py)?;
        Ok(Migration { inner, before: before.clone().unbind(), after: after.clone().unbind() })
    }

    /// The migration a vbucket dictionary in motion describes: from its "map" (before,
    /// at the dictionary's epoch) to its "forward_map" (after, at the next epoch), both
    /// without vbucket states. The router is unchanged.
    ///
    /// Raises InvalidArgumentError when router is not a Router, not a vbucket
    /// dictionary, or has no forward_map (nothing is moving).
    #[staticmethod]
    fn of_dictionary(router: &Bound<'_, PyAny>) -> PyResult<Migration> {
        let py = router.py();
        let router = router_arg(router, "router")?;
        let inner = sr::migration::Migration::of_dictionary(&router.get().inner).map_err(errors::to_py)?;
        let before = Py::new(py, Router::wrap(py, inner.before().clone()))?;
        let after = Py::new(py, Router::wrap(py, inner.after().clone()))?;
        Ok(Migration { inner, before, after })
    }

    /// The Router data moves from.
    #[getter]
    fn before(&self, py: Python<'_>) -> Py<Router> {
        self.before.clone_ref(py)
    }

    /// The Router data moves to.
    #[getter]
    fn after(&self, py: Python<'_>) -> Py<Router> {
        self.after.clone_ref(py)
    }

    /// Move(from_, to) when the key changes node (a named tuple: its node before and
    /// after), None when it stays.
    ///
    /// Raises InvalidKeyError for a value that is not a key (or one either topology
    /// refuses).
    fn moves<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = key.py();
        let key = Key::from_py(key)?;
        match self.inner.moves(key.as_core()).map_err(errors::to_py)? {
            Some(moved) => Ok(Some(crate::records::MOVE.class(py)?.call1(moved)?)),
            None => Ok(None),
        }
    }

    /// Where a write of the key goes during the move: its new owner, after.node(key),
    /// so that nothing written during the move is left behind on the old one.
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn write_target(&self, key: &Bound<'_, PyAny>) -> PyResult<&str> {
        let key = Key::from_py(key)?;
        self.inner.write_target(key.as_core()).map_err(errors::to_py)
    }

    /// Where a read of the key looks, in order: [old owner, new owner] while the key's
    /// data may still be on the old owner (old first: a copy landing between the two reads
    /// is found on the new owner, read last), [new owner] once it has moved (moved=True)
    /// or when the key does not change node. A read that looks at both merges what it finds.
    ///
    /// Raises InvalidKeyError for a value that is not a key, InvalidArgumentError when
    /// moved is not a bool.
    #[pyo3(signature = (key, moved = Moved(false)), text_signature = "($self, key, moved=False)")]
    fn read_targets(&self, key: &Bound<'_, PyAny>, moved: Moved) -> PyResult<Vec<&str>> {
        let key = Key::from_py(key)?;
        self.inner.read_targets(key.as_core(), moved.0).map_err(errors::to_py)
    }

    /// The keys a read of a hot key gathers while clients may hold either topology:
    /// every salted form under after (salt 0 first), then those under before that after
    /// lacks. A key becoming hot is read unsalted too, one cooling salted too; a key hot
    /// on neither side is [key]. Keys have the key's type, as for Router.salted_key.
    ///
    /// Raises InvalidKeyError for a value that is not a key.
    fn read_keys<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let source = key;
        let key = Key::from_py(source)?;
        let keys = self.inner.read_keys(key.as_core());
        keys.iter().map(|read| owned_to_py(source, read)).collect()
    }

    /// The key a write with salt goes to: after.salted_key(key, salt), so that writes
    /// follow the newest hot-key list.
    ///
    /// Raises InvalidKeyError for a value that is not a key, InvalidArgumentError when
    /// salt is not an integer in 0..2**32.
    fn write_key<'py>(&self, key: &Bound<'py, PyAny>, salt: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let source = key;
        let key = Key::from_py(source)?;
        let salt = u32_from_py(salt, "salt")?;
        owned_to_py(source, &self.inner.write_key(key.as_core(), salt))
    }

    /// The shards whose owner changes, in shard order, as MovingShard(shard, from_, to)
    /// named tuples (the shard, its owner before and after): the units a background copy job moves. For topologies whose shards are
    /// the same fixed partitions on both sides (vbuckets, Redis slots, Kafka partitions,
    /// vshard buckets, multilevel partitions, of one strategy and count).
    ///
    /// Raises InvalidArgumentError otherwise (shards that are node indices, as for
    /// modulo, jump or a ring, or different partition counts): list the keys that move
    /// with moving_keys.
    fn moving_shards<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let shards = self.inner.moving_shards().map_err(errors::to_py)?;
        let class = crate::records::MOVING_SHARD.class(py)?;
        shards.into_iter().map(|moving| class.call1((moving.shard, moving.from, moving.to))).collect()
    }

    /// The node ids a query over every key (a time range, a local index) reads while
    /// data moves, in the order to read them: old owners before new ones, so that a row
    /// copied and then deleted from its old node between two reads is still found; a
    /// node may be listed twice. Merge the rows they return by identity.
    fn scan_nodes(&self) -> Vec<&str> {
        self.inner.scan_nodes()
    }

    /// The indices of the keys that change node, in increasing order. Keys as for
    /// Router.route_many (any iterable of keys, or a numpy uint64 array).
    ///
    /// Raises as Router.route_many.
    fn moving_keys(&self, keys: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        with_all_keys(keys, |keys| self.inner.moving_keys(keys))
    }

    fn __repr__(&self) -> String {
        let (before, after) = (self.inner.before().epoch(), self.inner.after().epoch());
        format!("<shardroute.Migration epoch {before} -> {after}>")
    }

    /// Pickles as its two routers.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (Py<Router>, Py<Router>)) {
        let py = slf.py();
        let migration = slf.get();
        (slf.get_type(), (migration.before.clone_ref(py), migration.after.clone_ref(py)))
    }
}

/// The `moved` argument of `read_targets`: a bool, False when omitted; any other value,
/// an int included, is `InvalidArgumentError`.
struct Moved(bool);

impl<'a, 'py> FromPyObject<'a, 'py> for Moved {
    type Error = PyErr;

    fn extract(moved: Borrowed<'a, 'py, PyAny>) -> PyResult<Moved> {
        match moved.cast::<PyBool>() {
            Ok(flag) => Ok(Moved(flag.is_true())),
            Err(_) => Err(errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("moved must be a bool, not {}", type_name(&moved)),
            )),
        }
    }
}
