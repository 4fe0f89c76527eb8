//! `Router`: the core's [`sr::Router`] as a JavaScript class.

use alloc::string::String;
use alloc::vec::Vec;

use core::sync::atomic::{AtomicU8, Ordering};

use js_sys::Array;
#[cfg(feature = "full-api")]
use js_sys::{Object, Uint32Array};
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key::{self, Key};
#[cfg(feature = "full-api")]
use crate::numbers;
use crate::topology;
#[cfg(feature = "full-api")]
use crate::topology::record;
use crate::u32_from_js;

/// A router: a validated topology compiled for lookups.
///
/// Built from a topology document (JSON text, or an object); every lookup gives the same
/// answer as the Rust core, the Python package and the Node addon. Errors are thrown as
/// `ShardrouteError` with a stable `.code`.
#[wasm_bindgen]
pub struct Router {
    inner: sr::Router,
    /// The node ids as JavaScript strings, made once: `node` and `nodeMany` hand out
    /// these rather than decode a new string from wasm memory per key (measured: that
    /// decoding was most of a `node()` call).
    ids: Vec<JsValue>,
}

#[wasm_bindgen]
impl Router {
    /// Parses, validates and compiles a topology document: JSON text, or an object
    /// (serialized with `JSON.stringify`, BigInt values as decimal strings).
    ///
    /// Throws `invalid_topology`, `no_nodes` or `limit_exceeded`.
    #[wasm_bindgen(constructor)]
    pub fn new(topology: &JsValue) -> Result<Router> {
        let text = topology::json_text(topology, "topology")?;
        Ok(Router::wrap(sr::Router::from_json(&text)?))
    }

    /// The shard of a key (a node index, or the vbucket number for `vbucket`).
    pub fn route(&self, key: &JsValue) -> Result<u32> {
        Ok(self.inner.route(Key::from_js(key)?.as_key())?)
    }

    /// Where `installFastPaths` (`js/support.mjs`) writes a short ASCII string key for
    /// [`route_buffered`](Router::route_buffered) and
    /// [`node_index_buffered`](Router::node_index_buffered): `[memory, offset, length]`,
    /// the module's `WebAssembly.Memory` and [`KEY_BUFFER`]'s place in it.
    #[wasm_bindgen(js_name = __keyBuffer)]
    pub fn key_buffer() -> Array {
        Array::of3(&wasm_bindgen::memory(), &(KEY_BUFFER.as_ptr() as u32).into(), &(KEY_BUFFER.len() as u32).into())
    }

    /// `route` of the key in the first `length` bytes of [`KEY_BUFFER`], or `undefined`
    /// when `length` is too long or the core refuses the key (`installFastPaths` then
    /// calls `route`, which throws the core's error). A short ASCII string, the common key,
    /// crosses this way with no allocation and no imported call. Measured per call (jump,
    /// 10 nodes, Node 20): `route`'s general path costs ~2x this, and crossing as `&str`
    /// (the glue's allocation and copy) ~1.3x.
    #[wasm_bindgen(js_name = __routeBuffered)]
    pub fn route_buffered(&self, length: usize) -> Option<u32> {
        self.inner.route(buffered_key(&mut [0; KEY_BUFFER_LEN], length)?).ok()
    }

    /// The index of the node that owns the key in [`KEY_BUFFER`], as
    /// [`route_buffered`](Router::route_buffered) is for `route`: `installFastPaths` makes
    /// `node` hand out that entry of [`node_ids`](Router::node_ids) (measured: ~25%
    /// cheaper than returning the id string itself).
    #[wasm_bindgen(js_name = __nodeIndexBuffered)]
    pub fn node_index_buffered(&self, length: usize) -> Option<u32> {
        self.inner.node_index(buffered_key(&mut [0; KEY_BUFFER_LEN], length)?).ok()
    }

    /// The node ids in document order, the strings `node` hands out (for `installFastPaths`).
    #[wasm_bindgen(js_name = __nodeIds)]
    pub fn node_ids(&self) -> Vec<JsValue> {
        self.ids.clone()
    }

    /// The id of the node that owns a key.
    pub fn node(&self, key: &JsValue) -> Result<JsValue> {
        let index = self.inner.node_index(Key::from_js(key)?.as_key())?;
        Ok(self.ids[index as usize].clone())
    }

    /// `count` distinct node ids for a key in preference order, owner first.
    ///
    /// Throws `invalid_argument` when `count` is not an integer in `1..=` the number of
    /// nodes (or, for `vbucket`, the length of the key's chain).
    pub fn replicas(&self, key: &JsValue, count: &JsValue) -> Result<Vec<String>> {
        let key = Key::from_js(key)?;
        let count = u32_from_js(count, "count")?;
        Ok(crate::owned_ids(self.inner.replicas(key.as_key(), count)?))
    }

    /// The shards of an array of keys, in order: the same as `route` on each.
    ///
    /// An array of strings crosses as one buffer of UTF-16 code units plus offsets
    /// (`packStrings` in `js/support.mjs`), is converted to UTF-8 key by key and routed by
    /// the core's packed path; any other array key by key.
    #[wasm_bindgen(js_name = routeMany)]
    pub fn route_many(&self, keys: &JsValue) -> Result<Vec<u32>> {
        many(
            keys,
            |data, offsets, shards| self.inner.route_packed_into(data, offsets, shards),
            |keys, shards| self.inner.route_many_into(keys.iter().map(Key::as_key), shards),
        )
    }

    /// The ids of the nodes that own an array of keys, in order: the same as `node` on each.
    #[wasm_bindgen(js_name = nodeMany)]
    pub fn node_many(&self, keys: &JsValue) -> Result<Array> {
        let indices = self.node_index_many(keys)?;
        Ok(indices.iter().map(|&index| self.ids[index as usize].clone()).collect())
    }

    /// `nodeMany` as node indices (into [`node_ids`](Router::node_ids)), in a `Uint32Array`:
    /// `installFastPaths` maps them to the ids in JavaScript (measured: ~30% cheaper than
    /// building the array of ids from Rust, one imported call per key).
    #[wasm_bindgen(js_name = __nodeIndexMany)]
    pub fn node_index_many(&self, keys: &JsValue) -> Result<Vec<u32>> {
        many(
            keys,
            // The offsets were checked, so slicing does not fail.
            |data, offsets, indices| {
                let keys = offsets.windows(2).map(|pair| sr::Key::Bytes(&data[pair[0] as usize..pair[1] as usize]));
                self.inner.node_index_many_into(keys, indices)
            },
            |keys, indices| self.inner.node_index_many_into(keys.iter().map(Key::as_key), indices),
        )
    }

    /// The id of the node that serves reads of a key: the same as `node` except for a
    /// vbucket in motion, whose reads go to its old owner.
    #[wasm_bindgen(js_name = routeRead)]
    pub fn route_read(&self, key: &JsValue) -> Result<String> {
        Ok(self.inner.route_read(Key::from_js(key)?.as_key())?.into())
    }

    /// The ids of the nodes a write of a key goes to, the deciding one first: `[node(key)]`,
    /// or `[new owner, old owner]` for a migrating vbucket.
    ///
    /// Throws `read_only` for a key of a read-only vbucket.
    #[wasm_bindgen(js_name = routeWrite)]
    pub fn route_write(&self, key: &JsValue) -> Result<Vec<String>> {
        let key = Key::from_js(key)?;
        Ok(crate::owned_ids(self.inner.route_write(key.as_key())?))
    }

    /// The id of the node to read a key from when reads may go to replicas (Redis
    /// `READONLY` connections): a replica of the key's chain picked by `turn` (`turn %`
    /// the number of replicas; omitted: 0), or the owner when the chain has none.
    ///
    /// Throws `invalid_argument` when `turn` is not an integer in `0..=2^32-1`.
    #[wasm_bindgen(js_name = readReplica)]
    pub fn read_replica(&self, key: &JsValue, turn: &JsValue) -> Result<String> {
        let key = Key::from_js(key)?;
        let turn = key::with_type(turn, |got| sr::argument::optional_count("turn", got))?;
        Ok(self.inner.read_replica(key.as_key(), turn)?.into())
    }

    /// The id of the node that owns a shard: a node index for the hashed strategies
    /// (1-based for 1-based modulo), a vbucket, a slot, a partition.
    ///
    /// Throws `invalid_argument` for a shard that is not an integer of the topology's
    /// shards, `no_nodes` for a Couchbase vbucket without an active node.
    #[wasm_bindgen(js_name = shardOwner)]
    pub fn shard_owner(&self, shard: &JsValue) -> Result<String> {
        let shard = u32_from_js(shard, "shard")?;
        Ok(self.inner.shard_owner(shard)?.into())
    }

    /// A new router for a newer topology document (JSON text or an object, as for the
    /// constructor); this router is unchanged. The same document again is accepted.
    ///
    /// Throws as the constructor does, and `stale_epoch` (its message names the epoch this
    /// router holds) for a lower epoch, or the same epoch with different content.
    pub fn replace(&self, topology: &JsValue) -> Result<Router> {
        let next = Router::new(topology)?;
        Ok(Router::wrap(self.inner.replace(next.inner)?))
    }

    /// The topology's epoch, as a BigInt (a u64, exact above 2^53).
    #[wasm_bindgen(getter)]
    pub fn epoch(&self) -> u64 {
        self.inner.epoch()
    }

    /// The canonical JSON of the topology, byte for byte the core's.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }
}

/// The calls of the full package that a routing tier does not make: the bulk batches
/// (`routeU64s`, `routePacked`), keys grouped by node or slot, salting, ids, range scans,
/// locations and the Redis Cluster redirections. A build without the `full-api` feature
/// (the route build, `shardroute-wasm/route`) leaves them out of the class.
#[cfg(feature = "full-api")]
#[wasm_bindgen]
impl Router {
    /// The router of the global index `name`: it routes terms over this topology's nodes.
    ///
    /// Throws `invalid_argument` when the topology has no index of that name.
    pub fn index(&self, name: &JsValue) -> Result<Router> {
        let name = key::text_argument(name, "name")?;
        Ok(Router::wrap(self.inner.index(&name)?.clone()))
    }

    /// The names of the global indexes, sorted.
    #[wasm_bindgen(js_name = indexNames)]
    pub fn index_names(&self) -> Vec<String> {
        self.inner.index_names().map(String::from).collect()
    }

    /// The router of the table family that lists `table` (`invalid_argument` when none does).
    pub fn table(&self, table: &JsValue) -> Result<Router> {
        Ok(Router::wrap(self.inner.table(&key::text_argument(table, "table")?)?.clone()))
    }

    /// The node a caller in `zone` (a string, or `undefined`/`null`) reads a key from: the
    /// core's `read_near`.
    #[wasm_bindgen(js_name = readNear)]
    pub fn read_near(&self, key: &JsValue, zone: &JsValue) -> Result<String> {
        let zone = if zone.is_null() || zone.is_undefined() { None } else { Some(key::text_argument(zone, "zone")?) };
        Ok(self.inner.read_near(Key::from_js(key)?.as_key(), zone.as_deref())?.into())
    }

    /// What one write touches: `{shard, node, indexes: [{index, shard, node, terms}]}`,
    /// the document's shard and node, then each index shard its `[name, term]` pairs touch.
    #[wasm_bindgen(js_name = indexWritePlan)]
    pub fn index_write_plan(&self, key: &JsValue, terms: &JsValue) -> Result<JsValue> {
        let key = Key::from_js(key)?;
        let pairs = key::pairs_from_js(terms, "terms")?;
        let borrowed: Vec<(&str, sr::Key<'_>)> =
            pairs.iter().map(|(name, term)| (name.as_str(), term.as_key())).collect();
        let plan = self.inner.index_write_plan(key.as_key(), &borrowed)?;
        Ok(crate::topology::value_to_js(&plan.to_value(&self.inner), "index write plan")?)
    }

    /// The shards of integer keys given as one `BigUint64Array`, as a `Uint32Array` (the
    /// array is copied into WebAssembly memory in one step).
    ///
    /// Throws `invalid_argument` when `keys` is not a `BigUint64Array`.
    #[wasm_bindgen(js_name = routeU64s)]
    pub fn route_u64s(&self, keys: &JsValue) -> Result<Vec<u32>> {
        let keys = key::u64s_from_js(keys, "keys")?;
        let mut shards = Vec::new();
        self.inner.route_u64s_into(&keys, &mut shards)?;
        Ok(shards)
    }

    /// The shards of byte keys packed in one `Uint8Array`: key `i` is
    /// `data[offsets[i]..offsets[i + 1]]` (`offsets` a `Uint32Array` with one more entry
    /// than there are keys), as a `Uint32Array`.
    ///
    /// Throws `invalid_argument` when `data` is not a `Uint8Array`, `offsets` not a
    /// `Uint32Array`, or the offsets are empty, decrease or point past `data`.
    #[wasm_bindgen(js_name = routePacked)]
    pub fn route_packed(&self, data: &JsValue, offsets: &JsValue) -> Result<Vec<u32>> {
        let data = key::bytes_from_js(data, "data")?;
        let offsets = key::u32s_from_js(offsets, "offsets")?;
        let mut shards = Vec::new();
        self.inner.route_packed_into(&data, &offsets, &mut shards).map_err(|err| {
            // A key's own error (not the offsets' `invalid_argument`) names the key, as
            // `routeMany` does: `shards` then holds the shards before it.
            if err.kind() == sr::ErrorKind::InvalidArgument {
                err
            } else {
                key::at(shards.len(), err)
            }
        })?;
        Ok(shards)
    }

    /// The one shard all keys of an array share (for `redis_cluster`, their slot): what a
    /// multi-key command needs.
    ///
    /// Throws `cross_slot` for keys in different shards, `invalid_argument` for no keys,
    /// and as `routeMany` for the keys.
    #[wasm_bindgen(js_name = sameSlot)]
    pub fn same_slot(&self, keys: &JsValue) -> Result<u32> {
        Ok(self.inner.same_slot(Batch::from_js(keys)?.keys())?)
    }

    /// How many of `keys` each node owns and how evenly they spread: `{total, nodes:
    /// [{id, weight, load, share, loadPerWeight}], mean, maxOverMean, cv}` (the CLI's
    /// `stats`, its fields in `camelCase`; `load` a number, a decimal string past 2^53 - 1).
    /// Keys as for `routeMany`.
    pub fn stats(&self, keys: &JsValue) -> Result<JsValue> {
        let stats = self.inner.stats(Batch::from_js(keys)?.keys())?;
        let stats = crate::js_session::camel_fields(stats.to_value(&self.inner));
        Ok(crate::topology::value_to_js(&stats, "stats")?)
    }

    /// The keys of an array grouped by the node that owns them: `{node, indices}` for each
    /// node that owns a key, in node order, the indices in input order. Keys cross as for
    /// `routeMany`.
    #[wasm_bindgen(js_name = groupByNode)]
    pub fn group_by_node(&self, keys: &JsValue) -> Result<Array> {
        let groups = self.inner.group_by_node(Batch::from_js(keys)?.keys())?;
        let keys: usize = groups.iter().map(|(_, indices)| indices.len()).sum();
        // `groupsOf`'s layout: for each group, its node index, its number of keys, then
        // the keys' indices (fewer than a JavaScript array holds: the count fits).
        let mut flat = Vec::with_capacity(2 * groups.len() + keys);
        for (node, indices) in groups {
            flat.extend([node, indices.len() as u32]);
            flat.extend(indices);
        }
        let ids: Array = self.ids.iter().collect();
        Ok(groups_of(&Uint32Array::from(flat.as_slice()), &ids))
    }

    /// The router after a Redis Cluster `MOVED <slot> <address>` reply: the slot served by
    /// the node at `address` (added when unknown), epoch + 1; this router is unchanged.
    ///
    /// Throws `invalid_argument` for a slot that is not an integer in `0..16384`, an
    /// address that is not a string with a port, a topology that is not `redis_cluster`.
    pub fn moved(&self, slot: &JsValue, address: &JsValue) -> Result<Router> {
        let slot = u32_from_js(slot, "slot")?;
        let address = key::text_argument(address, "address")?;
        Ok(Router::wrap(crate::operations::moved(&self.inner, slot, &address)?))
    }

    /// Where the next command for a key of `slot` goes after a Redis Cluster `ASK <slot>
    /// <address>` reply: `address`, once; nothing changes.
    ///
    /// Throws as `moved` does.
    pub fn ask(&self, slot: &JsValue, address: &JsValue) -> Result<String> {
        let slot = u32_from_js(slot, "slot")?;
        let address = key::text_argument(address, "address")?;
        Ok(self.inner.ask(slot, &address)?.into())
    }

    /// The shards a scan over keys in `[start, end)` must visit, in key order, as an
    /// array of numbers; `end` omitted, `undefined` or `null` scans to the end of the key
    /// space. Hash-based strategies scatter every range: for them it is every shard.
    ///
    /// Throws `invalid_key` for a bad key, `invalid_argument` when `end` is not after
    /// `start` (range strategies).
    #[wasm_bindgen(js_name = shardsForRange)]
    pub fn shards_for_range(&self, start: &JsValue, end: &JsValue) -> Result<Array> {
        let start = Key::from_js(start)?;
        let end = if end.is_undefined() || end.is_null() { None } else { Some(Key::from_js(end)?) };
        Ok(numbers(&self.inner.shards_for_range(start.as_key(), end.as_ref().map(Key::as_key))?))
    }

    /// The scatter/gather plan of a query over every shard: `{gather, visits: [{shard,
    /// node, keys}]}` (see index.d.ts; the core's `scatter`). `readFrom` `'primary'`
    /// (default), `'replicas'` or `'zone'`; `turn` a count (default 0); `zone` a string.
    #[wasm_bindgen(js_name = scatterEvery)]
    pub fn scatter_every(&self, read_from: &JsValue, turn: &JsValue, zone: &JsValue) -> Result<JsValue> {
        self.scatter(sr::scatter::Scope::Every, read_from, turn, zone)
    }

    /// As `scatterEvery`, for the keys in `[start, end)`.
    #[wasm_bindgen(js_name = scatterRange)]
    pub fn scatter_range(
        &self,
        start: &JsValue,
        end: &JsValue,
        read_from: &JsValue,
        turn: &JsValue,
        zone: &JsValue,
    ) -> Result<JsValue> {
        let start = Key::from_js(start)?;
        let end = if end.is_undefined() || end.is_null() { None } else { Some(Key::from_js(end)?) };
        let scope = sr::scatter::Scope::Range { start: start.as_key(), end: end.as_ref().map(Key::as_key) };
        self.scatter(scope, read_from, turn, zone)
    }

    /// As `scatterEvery`, for an array of keys.
    #[wasm_bindgen(js_name = scatterKeys)]
    pub fn scatter_keys(&self, keys: &JsValue, read_from: &JsValue, turn: &JsValue, zone: &JsValue) -> Result<JsValue> {
        let keys = key::keys_from_js(keys)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_key).collect();
        self.scatter(sr::scatter::Scope::Keys(&keys), read_from, turn, zone)
    }

    /// Decodes an id (a bigint, or its decimal string) that carries its shard:
    /// `{shard, fields}`, `fields` mapping each of the id's other fields to a bigint, in
    /// the id's layout order (most significant first).
    ///
    /// Throws `invalid_key` for an id outside `0..=2^64-1`, `invalid_argument` when the
    /// strategy's ids do not carry a shard.
    #[wasm_bindgen(js_name = decodeId)]
    pub fn decode_id(&self, id: &JsValue) -> Result<Object> {
        let decoded = self.inner.decode_id(key::u64_from_js(id, "id")?)?;
        let fields: Array =
            decoded.fields.iter().map(|&(name, value)| Array::of2(&JsValue::from_str(name), &value.into())).collect();
        let fields = record(&fields)?;
        Ok(record(&Array::of2(
            &Array::of2(&JsValue::from_str("shard"), &decoded.shard.into()),
            &Array::of2(&JsValue::from_str("fields"), &fields),
        ))?)
    }

    /// Where a key lives: `{shard, node, address, zone, names}`, `address` and `zone`
    /// `null` when the node has none, `names` the topology's `placement` templates
    /// rendered for the shard.
    pub fn locate(&self, key: &JsValue) -> Result<JsValue> {
        let location = self.inner.locate(Key::from_js(key)?.as_key())?;
        Ok(topology::value_to_js(&location.to_value(), "location")?)
    }

    /// How many salted keys a key is spread over: its fanout in `hot_keys`, 1 when it is
    /// not hot.
    pub fn fanout(&self, key: &JsValue) -> Result<u32> {
        Ok(self.inner.fanout(Key::from_js(key)?.as_key()))
    }

    /// The key to write a hot key's value under for a caller-chosen `salt` (`key +
    /// separator + salt % fanout`); a key that is not hot is returned as is. The result
    /// has the key's type: string, `Uint8Array`, or bigint for a bigint or number.
    ///
    /// Throws `invalid_argument` when `salt` is not an integer in `0..=2^32-1`.
    #[wasm_bindgen(js_name = saltedKey)]
    pub fn salted_key(&self, key: &JsValue, salt: &JsValue) -> Result<JsValue> {
        let key = Key::from_js(key)?;
        let salt = u32_from_js(salt, "salt")?;
        Ok(key.salted_to_js(self.inner.salted_key(key.as_key(), salt))?)
    }

    /// Every salted form of a key with its shard, salt 0 first, as `[key, shard]` pairs
    /// (keys of the input key's type, as for `saltedKey`): what a read of a hot key
    /// gathers. A key that is not hot gives one pair, itself.
    #[wasm_bindgen(js_name = saltedKeys)]
    pub fn salted_keys(&self, key: &JsValue) -> Result<Array> {
        let key = Key::from_js(key)?;
        let pairs = Array::new();
        for (salted, shard) in self.inner.salted_keys(key.as_key())? {
            pairs.push(&Array::of2(&key.salted_to_js(salted)?, &shard.into()));
        }
        Ok(pairs)
    }
}

impl Router {
    pub(crate) fn wrap(inner: sr::Router) -> Router {
        let ids = inner.nodes().iter().map(|node| JsValue::from_str(&node.id)).collect();
        Router { inner, ids }
    }

    /// Lends the core router of `value`, which must be a live `Router` of this package (not
    /// freed), to `f`, leaving it with its JavaScript owner; `invalid_argument` otherwise.
    /// `what` names the argument in the message.
    pub(crate) fn lend<R>(value: &JsValue, what: &str, f: impl FnOnce(&sr::Router) -> R) -> sr::Result<R> {
        let mut f = Some(f);
        let mut result = None;
        let lent = lend_router(value, &mut |router: &Router| result = f.take().map(|f| f(&router.inner)));
        match (lent, result) {
            (Ok(()), Some(result)) => Ok(result),
            _ => Err(key::with_type(value, |got| sr::argument::not_a_router(what, got))),
        }
    }
}

/// The results of a batch call (`routeMany`, `nodeMany`) over an array of keys: `packed`
/// over the array's strings in one buffer ([`key::packed_strings`]: UTF-8 bytes and
/// checked offsets), else `each` over its keys read one by one. Both are the core's batch
/// calls, appending to the results: a key's error names its index, the results' length.
fn many(
    keys: &JsValue,
    packed: impl FnOnce(&[u8], &[u32], &mut Vec<u32>) -> sr::Result<()>,
    each: impl FnOnce(&[Key], &mut Vec<u32>) -> sr::Result<()>,
) -> Result<Vec<u32>> {
    let mut results = Vec::new();
    let done = match Batch::from_js(keys)? {
        Batch::Packed(data, offsets) => packed(&data, &offsets, &mut results),
        Batch::Keys(keys) => each(&keys, &mut results),
    };
    done.map_err(|err| key::at(results.len(), err))?;
    Ok(results)
}

/// The keys of a batch argument (an array of keys), read as `routeMany` reads them.
pub(crate) enum Batch {
    /// An array of strings, packed ([`key::packed_strings`]): UTF-8 bytes and checked
    /// offsets, key `i` being `data[offsets[i]..offsets[i + 1]]`.
    Packed(Vec<u8>, Vec<u32>),
    /// Any other array, read key by key ([`key::keys_from_js`]).
    Keys(Vec<Key>),
}

impl Batch {
    /// Reads `keys`: `invalid_argument` when it is not an array, `invalid_key` naming the
    /// index of the first bad key.
    pub(crate) fn from_js(keys: &JsValue) -> sr::Result<Batch> {
        Ok(match key::packed_strings(keys) {
            Some(strings) => {
                let (data, offsets) = strings?;
                Batch::Packed(data, offsets)
            }
            None => Batch::Keys(key::keys_from_js(keys)?),
        })
    }

    /// Every key, for the core calls that take them all at once (`same_slot`,
    /// `group_by_node`, `Migration.moving_keys`).
    #[cfg(feature = "full-api")]
    pub(crate) fn keys(&self) -> BatchKeys<'_> {
        match self {
            Batch::Packed(data, offsets) => BatchKeys::Packed(data, offsets.windows(2)),
            Batch::Keys(keys) => BatchKeys::Keys(keys.iter()),
        }
    }
}

/// The keys of a [`Batch`]: one concrete iterator over either form, so that the core's
/// batch loop is compiled for it (through a `dyn Iterator`, a call per key, a batch
/// takes twice as long).
#[cfg(feature = "full-api")]
pub(crate) enum BatchKeys<'a> {
    Packed(&'a [u8], core::slice::Windows<'a, u32>),
    Keys(core::slice::Iter<'a, Key>),
}

#[cfg(feature = "full-api")]
impl<'a> Iterator for BatchKeys<'a> {
    type Item = sr::Key<'a>;

    fn next(&mut self) -> Option<sr::Key<'a>> {
        match self {
            // The offsets were checked, so slicing does not fail.
            BatchKeys::Packed(data, offsets) => {
                offsets.next().map(|pair| sr::Key::Bytes(&data[pair[0] as usize..pair[1] as usize]))
            }
            BatchKeys::Keys(keys) => keys.next().map(Key::as_key),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            BatchKeys::Packed(_, offsets) => offsets.size_hint(),
            BatchKeys::Keys(keys) => keys.size_hint(),
        }
    }
}

/// Length of [`KEY_BUFFER`]: longer string keys take the general path.
const KEY_BUFFER_LEN: usize = 128;

/// The bytes of a short ASCII string key, written by JavaScript (`installFastPaths`) right
/// before it calls [`Router::route_buffered`] or [`Router::node_index_buffered`]. Atomics,
/// so that memory changed behind Rust's back is sound without `unsafe` (on wasm32 without
/// threads they are plain loads and stores). One buffer for the module: JavaScript is
/// single-threaded and every write is read by the call right after it.
static KEY_BUFFER: [AtomicU8; KEY_BUFFER_LEN] = [const { AtomicU8::new(0) }; KEY_BUFFER_LEN];

/// The first `length` bytes of [`KEY_BUFFER`] copied into `key`, or `None` when `length`
/// exceeds it.
fn buffered_key(key: &mut [u8; KEY_BUFFER_LEN], length: usize) -> Option<&[u8]> {
    let written = KEY_BUFFER.get(..length)?;
    for (byte, cell) in key.iter_mut().zip(written) {
        *byte = cell.load(Ordering::Relaxed);
    }
    Some(&key[..length])
}

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// Calls `lend(router)`. The glue of the callback checks that `router` is a `Router`
    /// (`instanceof`, not freed) and borrows it, as for `this` in a method; a failed check
    /// throws, which `catch` makes an `Err`.
    #[wasm_bindgen(catch, js_name = lend)]
    fn lend_router(router: &JsValue, lend: &mut dyn FnMut(&Router)) -> core::result::Result<(), JsValue>;

    /// The `{node, indices}` objects of `groupByNode` from its groups in one array (the
    /// layout `group_by_node` writes), the node ids looked up in `ids`: JavaScript makes
    /// the arrays of indices several times faster than imported calls per index would.
    #[cfg(feature = "full-api")]
    #[wasm_bindgen(js_name = groupsOf)]
    fn groups_of(flat: &Uint32Array, ids: &Array) -> Array;
}

#[cfg(feature = "full-api")]
impl Router {
    /// The scatter calls: the policy read (`undefined`/`null` for the defaults), the
    /// core's plan as a plain object.
    fn scatter(
        &self,
        scope: sr::scatter::Scope<'_, '_>,
        read_from: &JsValue,
        turn: &JsValue,
        zone: &JsValue,
    ) -> Result<JsValue> {
        let optional = |value: &JsValue, what: &str| -> sr::Result<Option<String>> {
            if value.is_undefined() || value.is_null() {
                Ok(None)
            } else {
                key::text_argument(value, what).map(Some)
            }
        };
        let name = optional(read_from, "readFrom")?;
        let turn = if turn.is_undefined() || turn.is_null() { 0 } else { crate::u32_from_js(turn, "turn")? };
        let zone = optional(zone, "zone")?;
        let read_from = sr::scatter::ReadFrom::from_name(name.as_deref().unwrap_or("primary"), turn, zone.as_deref())?;
        let keys = matches!(scope, sr::scatter::Scope::Keys(_));
        let plan = self.inner.scatter(scope, read_from)?;
        // In columns, as index.d.ts's ScatterPlan: the node ids are the router's own strings.
        let shards: Array = plan.visits.iter().map(|visit| JsValue::from(visit.shard)).collect();
        let nodes: Array = plan.visits.iter().map(|visit| self.ids[visit.node as usize].clone()).collect();
        let keys = if keys {
            plan.visits.iter().map(|visit| JsValue::from(numbers(&visit.keys))).collect::<Array>().into()
        } else {
            JsValue::NULL
        };
        let entries: Array = [
            ("gather", JsValue::from_str(plan.gather.name())),
            ("shards", shards.into()),
            ("nodes", nodes.into()),
            ("keys", keys),
        ]
        .into_iter()
        .map(|(name, value)| JsValue::from(Array::of2(&JsValue::from_str(name), &value)))
        .collect();
        Ok(crate::topology::record(&entries)?.into())
    }
}
