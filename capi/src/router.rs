//! `sr_router`: a router over one topology document, and the calls that need none
//! (hashing, redirects, `apply`, `diff`, dictionaries).

use std::ffi::c_char;

use serde_json::{json, Value};
use sr::scatter::{ReadFrom, Scope};
use sr::strategy::compat::redis_cluster::redirect::Redirect;
use sr::{ErrorKind, Key, Router};

use crate::{
    arg_text, argument, array, borrowed_out, bytes, bytes_out, free_box, guard, handle, handle_out, json_out, key,
    key_of, key_value, keys, optional_key, out, put_span, sr_error, sr_key, string_out, text, value_out, Res, SCRATCH,
};

/// A router: immutable once built, safe to share between threads (every call on it
/// takes it `const`). Free with `sr_router_free`.
pub struct sr_router(pub(crate) Router);

/// An `index_write_plan` term: the name of a secondary index and the term's key, both
/// borrowed for the call.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sr_term {
    /// The index's name (UTF-8), `NULL` only with `name_len` 0.
    pub name: *const c_char,
    /// Its length in bytes.
    pub name_len: usize,
    /// The term.
    pub term: sr_key,
}

/// `sr_router_scatter`: every shard.
pub const SR_SCOPE_EVERY: u32 = 0;
/// `sr_router_scatter`: the shards of a key range (`start`, `end`).
pub const SR_SCOPE_RANGE: u32 = 1;
/// `sr_router_scatter`: the shards of some keys (`keys`, `count`).
pub const SR_SCOPE_KEYS: u32 = 2;

pub(crate) fn new_router(router: Router) -> *mut sr_router {
    Box::into_raw(Box::new(sr_router(router)))
}

pub(crate) unsafe fn router<'a>(pointer: *const sr_router) -> Res<&'a Router> {
    Ok(&handle(pointer, "the router")?.0)
}

/// An entry point writing a new router to `*out_router` (free with `sr_router_free`).
pub(crate) unsafe fn router_out(out_router: *mut *mut sr_router, body: impl FnOnce() -> Res<Router>) -> *mut sr_error {
    handle_out(out_router, || Ok(sr_router(body()?)))
}

/// A call on a router that writes a node id borrowed from it.
unsafe fn node_text<'r>(
    router: *const sr_router,
    node: *mut *const c_char,
    node_len: *mut usize,
    body: impl FnOnce(&'r Router) -> Res<&'r str>,
) -> *mut sr_error {
    borrowed_out(node, node_len, ("node", "node_len"), || body(self::router(router)?))
}

/// A topology document argument (`invalid_topology` when it is not UTF-8 or refused).
unsafe fn topology_arg(topology: *const c_char, topology_len: usize) -> Res<sr::Topology> {
    sr::Topology::from_json(text(topology, topology_len, "the topology", ErrorKind::InvalidTopology)?)
}

/// An optional text argument: `NULL` is `None`.
pub(crate) unsafe fn optional_text<'a>(data: *const c_char, len: usize, what: &str) -> Res<Option<&'a str>> {
    if data.is_null() {
        Ok(None)
    } else {
        arg_text(data, len, what).map(Some)
    }
}

/// The hot calls' key of bytes (`NULL` only with length 0).
unsafe fn key_bytes<'a>(key: *const u8, key_len: usize) -> Res<Key<'a>> {
    Ok(Key::Bytes(bytes(key, key_len, "the key", ErrorKind::InvalidKey)?))
}

/// Builds a router from a topology document (JSON text, `json_len` bytes, borrowed for
/// the call). On success `*out` receives a router the caller frees with
/// `sr_router_free`. Errors: `invalid_topology` (not UTF-8, not JSON, not a valid
/// document), `limit_exceeded`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_new(
    json: *const c_char,
    json_len: usize,
    out_router: *mut *mut sr_router,
) -> *mut sr_error {
    router_out(out_router, || {
        Router::from_json(text(json, json_len, "the topology document", ErrorKind::InvalidTopology)?)
    })
}

/// Frees a router. `NULL` is a no-op. Text borrowed from it (`sr_router_node`, ...)
/// is invalid afterwards; routers made from it (`sr_router_moved`, `sr_router_index`)
/// and migrations over it stay valid (they hold their own reference).
#[no_mangle]
pub unsafe extern "C" fn sr_router_free(router: *mut sr_router) {
    free_box(router)
}

/// A second handle on the same router (cheap: the topology is shared). `*out` is freed
/// with `sr_router_free`, independently of `router`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_clone(router: *const sr_router, out_router: *mut *mut sr_router) -> *mut sr_error {
    router_out(out_router, || Ok(self::router(router)?.clone()))
}

/// The router's epoch into `*epoch`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_epoch(router: *const sr_router, epoch: *mut u64) -> *mut sr_error {
    value_out(epoch, "epoch", || Ok(self::router(router)?.epoch()))
}

/// The canonical JSON text of the router's document into `*out` (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_to_json(router: *const sr_router, out_json: *mut *mut c_char) -> *mut sr_error {
    string_out(out_json, || Ok(self::router(router)?.to_json()))
}

/// The shard of a key of bytes (text: its UTF-8 bytes; `key` borrowed for the call) into
/// `*shard`. The hot path: allocates nothing. Errors as the core's `route`
/// (`invalid_key` for a text key under `"keys": "u64"` that is not an integer, ...).
#[no_mangle]
pub unsafe extern "C" fn sr_router_route(
    router: *const sr_router,
    key: *const u8,
    key_len: usize,
    shard: *mut u32,
) -> *mut sr_error {
    value_out(shard, "shard", || self::router(router)?.route(key_bytes(key, key_len)?))
}

/// The shard of an integer key into `*shard`. Allocates nothing.
#[no_mangle]
pub unsafe extern "C" fn sr_router_route_u64(router: *const sr_router, key: u64, shard: *mut u32) -> *mut sr_error {
    value_out(shard, "shard", || self::router(router)?.route(Key::U64(key)))
}

/// The node id that owns a key of bytes: `*node`/`*node_len` receive text *borrowed*
/// from the router (UTF-8, not NUL-terminated), valid until `sr_router_free(router)`.
/// Allocates nothing.
#[no_mangle]
pub unsafe extern "C" fn sr_router_node(
    router: *const sr_router,
    key: *const u8,
    key_len: usize,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    node_text(router, node, node_len, |router| router.node(key_bytes(key, key_len)?))
}

/// `sr_router_node` for an integer key.
#[no_mangle]
pub unsafe extern "C" fn sr_router_node_u64(
    router: *const sr_router,
    key: u64,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    node_text(router, node, node_len, |router| router.node(Key::U64(key)))
}

/// Copies the scratch shards into the caller's array of `capacity` entries.
unsafe fn copy_out(
    shards: *mut u32,
    capacity: usize,
    count: usize,
    fill: impl FnOnce(&mut Vec<u32>) -> Res<()>,
) -> Res<()> {
    if count > capacity {
        return Err(argument(format!("out_shards has room for {capacity} shards, the batch has {count} keys")));
    }
    if shards.is_null() && count > 0 {
        return Err(argument("out_shards is NULL"));
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.try_borrow_mut().map_err(|_| argument("a batch call re-entered"))?;
        fill(&mut scratch)?;
        if count > 0 {
            std::ptr::copy_nonoverlapping(scratch.as_ptr(), shards, scratch.len().min(count));
        }
        Ok(())
    })
}

/// The shards of `count` keys (`keys` borrowed for the call, mixed kinds allowed) into
/// `out_shards[0..count]` (`capacity` entries, at least `count`). Allocation-free once
/// the calling thread has routed a batch as large. On an error nothing is promised about
/// `out_shards`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_route_many(
    router: *const sr_router,
    keys: *const sr_key,
    count: usize,
    out_shards: *mut u32,
    capacity: usize,
) -> *mut sr_error {
    guard(|| {
        let router = self::router(router)?;
        let keys = array(keys, count, "keys")?;
        for key in keys {
            key_of(key)?;
        }
        copy_out(out_shards, capacity, count, |scratch| {
            router.route_many_into(keys.iter().map(|key| key_of(key).unwrap_or(Key::U64(0))), scratch)
        })
    })
}

/// The shards of byte keys packed in one buffer (Arrow's binary layout): key `i` is
/// `data[offsets[i]..offsets[i + 1]]`, so there are `offsets_count - 1` keys, written to
/// `out_shards` (`capacity` entries, at least that many). `data` and `offsets` are
/// borrowed for the call. Errors: `invalid_argument` for no offsets, decreasing ones or
/// ones past `data_len`; else as `sr_router_route`. Allocation-free once warm.
#[no_mangle]
pub unsafe extern "C" fn sr_router_route_packed(
    router: *const sr_router,
    data: *const u8,
    data_len: usize,
    offsets: *const u32,
    offsets_count: usize,
    out_shards: *mut u32,
    capacity: usize,
) -> *mut sr_error {
    guard(|| {
        let router = self::router(router)?;
        let data = bytes(data, data_len, "data", ErrorKind::InvalidArgument)?;
        let offsets = array(offsets, offsets_count, "offsets")?;
        copy_out(out_shards, capacity, offsets_count.saturating_sub(1), |scratch| {
            router.route_packed_into(data, offsets, scratch)
        })
    })
}

/// The shards of `count` integer keys (borrowed for the call) into `out_shards`
/// (`capacity` entries, at least `count`). Allocation-free once warm.
#[no_mangle]
pub unsafe extern "C" fn sr_router_route_u64s(
    router: *const sr_router,
    keys: *const u64,
    count: usize,
    out_shards: *mut u32,
    capacity: usize,
) -> *mut sr_error {
    guard(|| {
        let router = self::router(router)?;
        let keys = array(keys, count, "keys")?;
        copy_out(out_shards, capacity, count, |scratch| router.route_u64s_into(keys, scratch))
    })
}

/// A call on a router with one key that writes JSON text.
unsafe fn key_json<'r>(
    router: *const sr_router,
    key: *const sr_key,
    out_json: *mut *mut c_char,
    body: impl FnOnce(&'r Router, Key<'r>) -> Res<Value>,
) -> *mut sr_error {
    json_out(out_json, || body(self::router(router)?, self::key(key)?))
}

/// The owner and up to `count - 1` replicas of `key` (borrowed for the call): `*out`
/// is a JSON array of node ids, owner first (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_replicas(
    router: *const sr_router,
    key: *const sr_key,
    count: u32,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(router, key, out_json, |router, key| Ok(json!(router.replicas(key, count)?)))
}
/// Where `key` lives: `*out` is the JSON object `{"shard", "node", "address", "zone",
/// "names"}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_locate(
    router: *const sr_router,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(router, key, out_json, |router, key| Ok(router.locate(key)?.to_value()))
}
/// `key` with salt `salt` appended (a hot key spread over shards): `*out` is a JSON key
/// object, `{"hex": "..."}` for bytes or `{"u64": "..."}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_salted_key(
    router: *const sr_router,
    key: *const sr_key,
    salt: u32,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(router, key, out_json, |router, key| Ok(key_value(&router.salted_key(key, salt))))
}
/// Every salted form of `key` and its shard: `*out` is a JSON array of `[key object,
/// shard]`, salt 0 first (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_salted_keys(
    router: *const sr_router,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(router, key, out_json, |router, key| {
        Ok({
            json!(router
                .salted_keys(key)?
                .iter()
                .map(|(salted, shard)| json!([key_value(salted), shard]))
                .collect::<Vec<_>>())
        })
    })
}
/// The nodes a write of `key` goes to, the deciding one first: `*out` is a JSON array
/// of node ids (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_route_write(
    router: *const sr_router,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(router, key, out_json, |router, key| Ok(json!(router.route_write(key)?)))
}

/// The node a read of `key` (borrowed for the call) goes to: `*node`/`*node_len`
/// receive text borrowed from the router, valid until `sr_router_free(router)`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_route_read(
    router: *const sr_router,
    key: *const sr_key,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    node_text(router, node, node_len, |router| router.route_read(self::key(key)?))
}
/// The replica of `key` a read at turn `turn` goes to (round robin): text borrowed
/// from the router, valid until `sr_router_free(router)`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_read_replica(
    router: *const sr_router,
    key: *const sr_key,
    turn: u32,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    node_text(router, node, node_len, |router| router.read_replica(self::key(key)?, turn))
}
/// The node that owns shard `shard`: text borrowed from the router, valid until
/// `sr_router_free(router)`. `invalid_argument` for a shard out of range.
#[no_mangle]
pub unsafe extern "C" fn sr_router_shard_owner(
    router: *const sr_router,
    shard: u32,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    node_text(router, node, node_len, |router| router.shard_owner(shard))
}

/// The shards holding keys from `start` to `end` (`NULL`: to the end), in key order:
/// `*out` is a JSON array of integers (free with `sr_string_free`). Keys are borrowed
/// for the call.
#[no_mangle]
pub unsafe extern "C" fn sr_router_shards_for_range(
    router: *const sr_router,
    start: *const sr_key,
    end: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || Ok(json!(self::router(router)?.shards_for_range(key(start)?, optional_key(end)?)?)))
}

/// The fields of an id under an id strategy: `*out` is `{"shard", "fields": [[name,
/// "decimal"], ...]}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_decode_id(
    router: *const sr_router,
    id: u64,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let decoded = self::router(router)?.decode_id(id)?;
        let fields: Vec<Value> = decoded.fields.iter().map(|(name, value)| json!([name, value.to_string()])).collect();
        Ok(json!({"shard": decoded.shard, "fields": fields}))
    })
}

/// The one slot of `count` keys (borrowed for the call) into `*shard`; `cross_slot`
/// when they are in two.
#[no_mangle]
pub unsafe extern "C" fn sr_router_same_slot(
    router: *const sr_router,
    keys: *const sr_key,
    count: usize,
    shard: *mut u32,
) -> *mut sr_error {
    value_out(shard, "shard", || self::router(router)?.same_slot(self::keys(keys, count)?))
}

/// The keys grouped by owner: `*out` is a JSON array of `[node id, [key indices]]` in
/// node order (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_group_by_node(
    router: *const sr_router,
    keys: *const sr_key,
    count: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let router = self::router(router)?;
        let groups = router.group_by_node(self::keys(keys, count)?)?;
        let node = |index: u32| router.nodes()[index as usize].id.as_str();
        Ok(json!(groups.iter().map(|(n, indices)| json!([node(*n), indices])).collect::<Vec<_>>()))
    })
}

/// The load of `count` keys over the nodes: `*out` is `{"total", "nodes": [{"id",
/// "weight", "load", "share", "load_per_weight"}], "mean", "max_over_mean", "cv"}` (free
/// with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_stats(
    router: *const sr_router,
    keys: *const sr_key,
    count: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let router = self::router(router)?;
        Ok(router.stats(self::keys(keys, count)?)?.to_value(router))
    })
}

/// A Redis Cluster `MOVED slot address` applied: `*out` receives a new router (free with
/// `sr_router_free`); `router` is unchanged. `address` is borrowed for the call.
#[no_mangle]
pub unsafe extern "C" fn sr_router_moved(
    router: *const sr_router,
    slot: u32,
    address: *const c_char,
    address_len: usize,
    out_router: *mut *mut sr_router,
) -> *mut sr_error {
    router_out(out_router, || self::router(router)?.moved(slot, arg_text(address, address_len, "the address")?))
}

/// A Redis Cluster `ASK slot address` checked: the address to ask is part of the
/// `address` argument (borrowed for the call), and comes back as where it lies there:
/// `*out_offset` and `*out_len` (bytes), so the caller reads
/// `address[*out_offset .. *out_offset + *out_len]` from its own buffer. Never a pointer
/// into the argument: a binding may pass a temporary copy of its buffer (JNA does), gone
/// at return. `invalid_argument` for a router that is not `redis_cluster`, a slot past
/// 16383 or an address without a port.
#[no_mangle]
pub unsafe extern "C" fn sr_router_ask(
    router: *const sr_router,
    slot: u32,
    address: *const c_char,
    address_len: usize,
    out_offset: *mut usize,
    out_len: *mut usize,
) -> *mut sr_error {
    guard(|| {
        let (target, target_len) = (out(out_offset, "out_offset")?, out(out_len, "out_len")?);
        let address = arg_text(address, address_len, "the address")?;
        put_span(target, target_len, address, self::router(router)?.ask(slot, address)?);
        Ok(())
    })
}

/// `router` replaced by `next` (epochs only grow: `stale_epoch`): `*out` receives the
/// router to use (free with `sr_router_free`). Both arguments stay the caller's.
#[no_mangle]
pub unsafe extern "C" fn sr_router_replace(
    router: *const sr_router,
    next: *const sr_router,
    out_router: *mut *mut sr_router,
) -> *mut sr_error {
    router_out(out_router, || self::router(router)?.replace(self::router(next)?.clone()))
}

/// A scatter-gather plan. `scope`: `SR_SCOPE_EVERY`, `SR_SCOPE_RANGE` (`start`, and
/// `end` or `NULL` for the end) or `SR_SCOPE_KEYS` (`keys`, `count`). `read_from`:
/// `"primary"`, `"replicas"` or `"zone"` with `turn` and `zone` (`NULL`: none). All
/// borrowed for the call. `*out` is `{"gather", "visits": [{"shard", "node", "keys"}]}`
/// (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_scatter(
    router: *const sr_router,
    scope: u32,
    start: *const sr_key,
    end: *const sr_key,
    keys: *const sr_key,
    count: usize,
    read_from: *const c_char,
    read_from_len: usize,
    turn: u32,
    zone: *const c_char,
    zone_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let router = self::router(router)?;
        let zone = optional_text(zone, zone_len, "the zone")?;
        let read_from = ReadFrom::from_name(arg_text(read_from, read_from_len, "read_from")?, turn, zone)?;
        let keys = match scope {
            crate::router::SR_SCOPE_KEYS => self::keys(keys, count)?,
            _ => Vec::new(),
        };
        let scope = match scope {
            SR_SCOPE_EVERY => Scope::Every,
            SR_SCOPE_RANGE => Scope::Range { start: key(start)?, end: optional_key(end)? },
            SR_SCOPE_KEYS => Scope::Keys(&keys),
            other => return Err(argument(format!("scope {other} is not SR_SCOPE_EVERY, _RANGE or _KEYS"))),
        };
        Ok(router.scatter(scope, read_from)?.to_value(router))
    })
}

/// The router of secondary index `name` (borrowed for the call): `*out` receives a router
/// (free with `sr_router_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_index(
    router: *const sr_router,
    name: *const c_char,
    name_len: usize,
    out_router: *mut *mut sr_router,
) -> *mut sr_error {
    router_out(out_router, || Ok(self::router(router)?.index(arg_text(name, name_len, "the index name")?)?.clone()))
}

/// The router of the table family that holds table `name` (borrowed for the call):
/// `*out` receives a router (free with `sr_router_free`). `invalid_argument` for a table
/// no family lists.
#[no_mangle]
pub unsafe extern "C" fn sr_router_table(
    router: *const sr_router,
    name: *const c_char,
    name_len: usize,
    out_router: *mut *mut sr_router,
) -> *mut sr_error {
    router_out(out_router, || Ok(self::router(router)?.table(arg_text(name, name_len, "the table name")?)?.clone()))
}

/// The tables the table families list, sorted: `*out` is a JSON array of names (free
/// with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_table_names(router: *const sr_router, out_json: *mut *mut c_char) -> *mut sr_error {
    json_out(out_json, || Ok(json!(self::router(router)?.table_names().collect::<Vec<_>>())))
}

/// The secondary indexes' names: `*out` is a JSON array (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_index_names(router: *const sr_router, out_json: *mut *mut c_char) -> *mut sr_error {
    json_out(out_json, || Ok(json!(self::router(router)?.index_names().collect::<Vec<_>>())))
}

/// The node a caller in `zone` (borrowed; `NULL`: none) reads `key` (borrowed) from:
/// text borrowed from the router, valid until `sr_router_free(router)`.
#[no_mangle]
pub unsafe extern "C" fn sr_router_read_near(
    router: *const sr_router,
    key: *const sr_key,
    zone: *const c_char,
    zone_len: usize,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    node_text(router, node, node_len, |router| {
        router.read_near(self::key(key)?, optional_text(zone, zone_len, "the zone")?)
    })
}

/// Where a row and its index entries are written: `terms` (`count` of them, borrowed) are
/// `[index, term]` pairs. `*out` is `{"shard", "node", "indexes": [{"index", "shard",
/// "node", "terms"}]}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_router_index_write_plan(
    router: *const sr_router,
    key: *const sr_key,
    terms: *const sr_term,
    count: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let router = self::router(router)?;
        let key = self::key(key)?;
        let pairs: Vec<(&str, Key<'_>)> = array(terms, count, "terms")?
            .iter()
            .map(|t| Ok((arg_text(t.name, t.name_len, "an index name")?, key_of(&t.term)?)))
            .collect::<Res<_>>()?;
        Ok(router.index_write_plan(key, &pairs)?.to_value(router))
    })
}

/// The 64-bit hash of `key` under a hashing spec (JSON text, borrowed; `NULL`: the
/// default spec) into `*hash`. `invalid_topology` for a bad spec.
#[no_mangle]
pub unsafe extern "C" fn sr_hash_key(
    key: *const sr_key,
    spec: *const c_char,
    spec_len: usize,
    hash: *mut u64,
) -> *mut sr_error {
    value_out(hash, "hash", || {
        let spec = if spec.is_null() {
            sr::KeyHashing::default()
        } else {
            sr::KeyHashing::from_json(text(spec, spec_len, "the hashing spec", ErrorKind::InvalidTopology)?)?
        };
        Ok(sr::hash_key(self::key(key)?, &spec))
    })
}

/// Jump consistent hash: the bucket of `hash` among `buckets` into `*shard`
/// (`no_nodes` for 0 buckets).
#[no_mangle]
pub unsafe extern "C" fn sr_jump(hash: u64, buckets: u32, shard: *mut u32) -> *mut sr_error {
    value_out(shard, "shard", || sr::jump(hash, buckets))
}

/// Which shards' keys move when `hash % old` becomes `hash % new`: `*out` is a JSON array
/// of arrays of integers (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_modulo_moves(old: u32, new: u32, out_json: *mut *mut c_char) -> *mut sr_error {
    json_out(out_json, || Ok(json!(sr::strategy::hashed::modulo::moves(old, new)?)))
}

/// A Redis `MOVED`/`ASK` error line (borrowed): `*out` is `{"kind": "MOVED" | "ASK",
/// "slot", "address"}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_parse_redirect(
    line: *const c_char,
    line_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let redirect = Redirect::parse(arg_text(line, line_len, "the redirect line")?)?;
        Ok(json!({"kind": redirect.kind.as_str(), "slot": redirect.slot, "address": redirect.address}))
    })
}

/// A `host:port` address (borrowed): `*out` is `{"host", "port"}` (free with
/// `sr_string_free`); `invalid_argument` for one without a port.
#[no_mangle]
pub unsafe extern "C" fn sr_parse_address(
    address: *const c_char,
    address_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let endpoint = sr::session::Endpoint::parse(arg_text(address, address_len, "the address")?)?;
        Ok(json!({"host": endpoint.host(), "port": endpoint.port()}))
    })
}

/// Applies an operation (JSON text) to a topology document (JSON text), both borrowed:
/// `*out` is the result object, `{"topology", ...report}` (free with `sr_string_free`).
/// `invalid_topology` for the document, `invalid_argument` for the operation.
#[no_mangle]
pub unsafe extern "C" fn sr_apply(
    topology: *const c_char,
    topology_len: usize,
    operation: *const c_char,
    operation_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let topology = topology_arg(topology, topology_len)?;
        let operation = sr::ops::operation_from_json(arg_text(operation, operation_len, "the operation")?)?;
        sr::ops::apply(&topology, &operation)
    })
}

/// What changes from `old` to `new` for `count` keys (borrowed): `*out` is the report
/// object, with the per-key list when `per_key` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_diff(
    old: *const sr_router,
    new: *const sr_router,
    keys: *const sr_key,
    count: usize,
    per_key: bool,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || Ok(sr::diff::diff(router(old)?, router(new)?, self::keys(keys, count)?, per_key)?.to_value()))
}

/// The binary dictionary of a topology document (JSON text, borrowed): `*out`/`*out_len`
/// receive bytes the caller frees with `sr_bytes_free(*out, *out_len)`.
#[no_mangle]
pub unsafe extern "C" fn sr_encode_dictionary(
    topology: *const c_char,
    topology_len: usize,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> *mut sr_error {
    bytes_out(out_bytes, out_len, || sr::dictionary::encode(&topology_arg(topology, topology_len)?))
}

/// A binary dictionary (borrowed bytes) read back: `*out` is the topology's canonical
/// JSON text (free with `sr_string_free`). `invalid_topology` for damaged bytes.
#[no_mangle]
pub unsafe extern "C" fn sr_decode_dictionary(
    data: *const u8,
    data_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    string_out(out_json, || {
        Ok(sr::dictionary::decode(bytes(data, data_len, "the dictionary", ErrorKind::InvalidArgument)?)?.to_json())
    })
}
