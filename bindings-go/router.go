package shardroute

/*
#include <stdlib.h>
#include "shardroute.h"

// The hot calls take the router as an integer and return the shard, or the error's
// address with the top bit set, as one integer: a *C.sr_router argument (a pointer to
// an incomplete type) and an out-parameter in Go memory are each boxed on the Go heap,
// an allocation per call. User-space addresses never have the top bit set.
#define SR_GO_ERROR (1ull << 63)
static uint64_t sr_go_route(uintptr_t r, const uint8_t *key, size_t len) {
  uint32_t shard = 0;
  sr_error *e = sr_router_route((const sr_router *)r, key, len, &shard);
  return e ? ((uint64_t)(uintptr_t)e | SR_GO_ERROR) : shard;
}
static uint64_t sr_go_route_u64(uintptr_t r, uint64_t key) {
  uint32_t shard = 0;
  sr_error *e = sr_router_route_u64((const sr_router *)r, key, &shard);
  return e ? ((uint64_t)(uintptr_t)e | SR_GO_ERROR) : shard;
}
static uint64_t sr_go_route_packed(uintptr_t r, const uint8_t *data, size_t data_len, const uint32_t *offsets,
                                   size_t offsets_count, uint32_t *out, size_t capacity) {
  sr_error *e = sr_router_route_packed((const sr_router *)r, data, data_len, offsets, offsets_count, out, capacity);
  return e ? ((uint64_t)(uintptr_t)e | SR_GO_ERROR) : 0;
}
static uint64_t sr_go_route_u64s(uintptr_t r, const uint64_t *keys, size_t count, uint32_t *out, size_t capacity) {
  sr_error *e = sr_router_route_u64s((const sr_router *)r, keys, count, out, capacity);
  return e ? ((uint64_t)(uintptr_t)e | SR_GO_ERROR) : 0;
}
static sr_error *sr_go_error(uint64_t packed) { return (sr_error *)(uintptr_t)(packed & ~SR_GO_ERROR); }
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// Router routes keys under one topology. It is immutable and safe to share between
// goroutines; Close frees it (calls on a closed router return invalid_argument).
type Router struct {
	ptr *C.sr_router
}

func newRouter(p *C.sr_router) *Router {
	r := &Router{ptr: p}
	runtime.SetFinalizer(r, (*Router).Close)
	return r
}

// NewRouter builds a router from a topology document (JSON text). Errors:
// invalid_topology, limit_exceeded.
func NewRouter(doc []byte) (*Router, error) {
	p, n := textArg(doc)
	var out *C.sr_router
	if err := check(C.sr_router_new(p, n, &out)); err != nil {
		return nil, err
	}
	return newRouter(out), nil
}

// Close frees the router. Closing twice is safe. Routers made from it stay valid.
func (r *Router) Close() error {
	if r != nil && r.ptr != nil {
		C.sr_router_free(r.ptr)
		r.ptr = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}

func (r *Router) handle() *C.sr_router {
	if r == nil {
		return nil
	}
	return r.ptr
}

// routerOut wraps a router a call returned.
func (r *Router) routerOut(e *C.sr_error, out *C.sr_router) (*Router, error) {
	runtime.KeepAlive(r)
	if err := check(e); err != nil {
		return nil, err
	}
	return newRouter(out), nil
}

// jsonOut keeps r alive through the call and returns its JSON result.
func (r *Router) jsonOut(e *C.sr_error, out *C.char) (json.RawMessage, error) {
	runtime.KeepAlive(r)
	if err := check(e); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

func (r *Router) decodeOut(e *C.sr_error, out *C.char, v interface{}) error {
	runtime.KeepAlive(r)
	if err := check(e); err != nil {
		return err
	}
	return decode(out, v)
}

func (r *Router) nodeOut(e *C.sr_error, p *C.char, n C.size_t) (string, error) {
	if err := check(e); err != nil {
		runtime.KeepAlive(r)
		return "", err
	}
	s := borrowed(p, n)
	runtime.KeepAlive(r)
	return s, nil
}

// Clone is a second handle on the same router (cheap), closed independently.
func (r *Router) Clone() (*Router, error) {
	var out *C.sr_router
	return r.routerOut(C.sr_router_clone(r.handle(), &out), out)
}

// Epoch is the router's epoch.
func (r *Router) Epoch() (uint64, error) {
	var v C.uint64_t
	err := check(C.sr_router_epoch(r.handle(), &v))
	runtime.KeepAlive(r)
	return uint64(v), err
}

// JSON is the canonical JSON text of the router's document.
func (r *Router) JSON() (string, error) {
	var out *C.char
	raw, err := r.jsonOut(C.sr_router_to_json(r.handle(), &out), out)
	return string(raw), err
}

// addr is the router's address as an integer, for the hot calls (0 when closed).
func (r *Router) addr() C.uintptr_t {
	if r == nil {
		return 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(r.ptr)))
}

// shard unpacks a hot call's result (sr_go_route).
func (r *Router) shard(packed C.uint64_t) (uint32, error) {
	runtime.KeepAlive(r)
	if packed&C.SR_GO_ERROR != 0 {
		return 0, check(C.sr_go_error(packed))
	}
	return uint32(packed), nil
}

// Route is the shard of a key of bytes (the hot path: allocates nothing).
func (r *Router) Route(key []byte) (uint32, error) {
	p, n := bytesArg(key)
	return r.shard(C.sr_go_route(r.addr(), p, n))
}

// RouteU64 is the shard of an integer key.
func (r *Router) RouteU64(key uint64) (uint32, error) {
	return r.shard(C.sr_go_route_u64(r.addr(), C.uint64_t(key)))
}

// Node is the id of the node that owns a key of bytes.
func (r *Router) Node(key []byte) (string, error) {
	p, n := bytesArg(key)
	var node *C.char
	var len C.size_t
	return r.nodeOut(C.sr_router_node(r.handle(), p, n, &node, &len), node, len)
}

// NodeU64 is the id of the node that owns an integer key.
func (r *Router) NodeU64(key uint64) (string, error) {
	var node *C.char
	var len C.size_t
	return r.nodeOut(C.sr_router_node_u64(r.handle(), C.uint64_t(key), &node, &len), node, len)
}

func shardsArg(out []uint32) (*C.uint32_t, C.size_t) {
	if len(out) == 0 {
		return nil, 0
	}
	return (*C.uint32_t)(unsafe.Pointer(&out[0])), C.size_t(len(out))
}

// RoutePackedInto routes byte keys packed in one buffer (Arrow's binary layout: key
// i is data[offsets[i]:offsets[i+1]]) into out (at least len(offsets)-1 entries).
func (r *Router) RoutePackedInto(data []byte, offsets []uint32, out []uint32) error {
	d, dn := bytesArg(data)
	var o *C.uint32_t
	if len(offsets) > 0 {
		o = (*C.uint32_t)(unsafe.Pointer(&offsets[0]))
	}
	s, sn := shardsArg(out)
	_, err := r.shard(C.sr_go_route_packed(r.addr(), d, dn, o, C.size_t(len(offsets)), s, sn))
	return err
}

// RoutePacked is RoutePackedInto into a new slice.
func (r *Router) RoutePacked(data []byte, offsets []uint32) ([]uint32, error) {
	n := len(offsets) - 1
	if n < 0 {
		n = 0
	}
	out := make([]uint32, n)
	return out, r.RoutePackedInto(data, offsets, out)
}

// RouteU64sInto routes integer keys into out (at least len(keys) entries).
func (r *Router) RouteU64sInto(keys []uint64, out []uint32) error {
	var k *C.uint64_t
	if len(keys) > 0 {
		k = (*C.uint64_t)(unsafe.Pointer(&keys[0]))
	}
	s, sn := shardsArg(out)
	_, err := r.shard(C.sr_go_route_u64s(r.addr(), k, C.size_t(len(keys)), s, sn))
	return err
}

// RouteU64s is RouteU64sInto into a new slice.
func (r *Router) RouteU64s(keys []uint64) ([]uint32, error) {
	out := make([]uint32, len(keys))
	return out, r.RouteU64sInto(keys, out)
}

// RouteMany routes keys of any kind.
func (r *Router) RouteMany(keys []Key) ([]uint32, error) {
	k, n := cKeys(keys)
	defer free(k)
	out := make([]uint32, len(keys))
	s, sn := shardsArg(out)
	err := check(C.sr_router_route_many(r.handle(), k, n, s, sn))
	runtime.KeepAlive(r)
	return out, err
}

// Replicas is the owner and up to count-1 replicas of key, owner first.
func (r *Router) Replicas(key Key, count uint32) ([]string, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var nodes []string
	return nodes, r.decodeOut(C.sr_router_replicas(r.handle(), k, C.uint32_t(count), &out), out, &nodes)
}

// Locate is where key lives: {"shard", "node", "address", "zone", "names"}.
func (r *Router) Locate(key Key) (json.RawMessage, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	return r.jsonOut(C.sr_router_locate(r.handle(), k, &out), out)
}

// SaltedKey is key with salt appended (a hot key spread over shards).
func (r *Router) SaltedKey(key Key, salt uint32) (Key, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var salted Key
	return salted, r.decodeOut(C.sr_router_salted_key(r.handle(), k, C.uint32_t(salt), &out), out, &salted)
}

// Salted is one salted form of a key and its shard.
type Salted struct {
	Key   Key
	Shard uint32
}

// UnmarshalJSON reads the [key object, shard] pair of the library.
func (s *Salted) UnmarshalJSON(data []byte) error {
	var pair [2]json.RawMessage
	if err := json.Unmarshal(data, &pair); err != nil {
		return err
	}
	if err := json.Unmarshal(pair[0], &s.Key); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &s.Shard)
}

// SaltedKeys is every salted form of key and its shard, salt 0 first.
func (r *Router) SaltedKeys(key Key) ([]Salted, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var all []Salted
	return all, r.decodeOut(C.sr_router_salted_keys(r.handle(), k, &out), out, &all)
}

// RouteWrite is the nodes a write of key goes to, the deciding one first.
func (r *Router) RouteWrite(key Key) ([]string, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var nodes []string
	return nodes, r.decodeOut(C.sr_router_route_write(r.handle(), k, &out), out, &nodes)
}

// RouteRead is the node a read of key goes to.
func (r *Router) RouteRead(key Key) (string, error) {
	k := cKey(key)
	defer free(k)
	var node *C.char
	var n C.size_t
	return r.nodeOut(C.sr_router_route_read(r.handle(), k, &node, &n), node, n)
}

// ReadReplica is the replica of key a read at turn goes to (round robin).
func (r *Router) ReadReplica(key Key, turn uint32) (string, error) {
	k := cKey(key)
	defer free(k)
	var node *C.char
	var n C.size_t
	return r.nodeOut(C.sr_router_read_replica(r.handle(), k, C.uint32_t(turn), &node, &n), node, n)
}

// ShardOwner is the node that owns shard (invalid_argument out of range).
func (r *Router) ShardOwner(shard uint32) (string, error) {
	var node *C.char
	var n C.size_t
	return r.nodeOut(C.sr_router_shard_owner(r.handle(), C.uint32_t(shard), &node, &n), node, n)
}

// ShardsForRange is the shards holding keys from start to end (nil: to the end).
func (r *Router) ShardsForRange(start Key, end *Key) ([]uint32, error) {
	s := cKey(start)
	defer free(s)
	e := cOptKey(end)
	defer free(e)
	var out *C.char
	var shards []uint32
	return shards, r.decodeOut(C.sr_router_shards_for_range(r.handle(), s, e, &out), out, &shards)
}

// DecodeID is the fields of an id under an id strategy: {"shard", "fields"}.
func (r *Router) DecodeID(id uint64) (json.RawMessage, error) {
	var out *C.char
	return r.jsonOut(C.sr_router_decode_id(r.handle(), C.uint64_t(id), &out), out)
}

// SameSlot is the one slot of keys (cross_slot when they are in two).
func (r *Router) SameSlot(keys []Key) (uint32, error) {
	k, n := cKeys(keys)
	defer free(k)
	var s C.uint32_t
	err := check(C.sr_router_same_slot(r.handle(), k, n, &s))
	runtime.KeepAlive(r)
	return uint32(s), err
}

// GroupByNode is the keys grouped by owner: [[node id, [key indices]], ...].
func (r *Router) GroupByNode(keys []Key) (json.RawMessage, error) {
	k, n := cKeys(keys)
	defer free(k)
	var out *C.char
	return r.jsonOut(C.sr_router_group_by_node(r.handle(), k, n, &out), out)
}

// Stats is the load of keys over the nodes.
func (r *Router) Stats(keys []Key) (json.RawMessage, error) {
	k, n := cKeys(keys)
	defer free(k)
	var out *C.char
	return r.jsonOut(C.sr_router_stats(r.handle(), k, n, &out), out)
}

// Moved is a new router with a Redis Cluster MOVED slot address applied.
func (r *Router) Moved(slot uint32, address string) (*Router, error) {
	p, n := strArg(address)
	var out *C.sr_router
	return r.routerOut(C.sr_router_moved(r.handle(), C.uint32_t(slot), p, n, &out), out)
}

// Ask checks a Redis Cluster ASK slot address: the address to ask. The ABI answers
// with an offset and a length into the argument; the text is read from address itself.
func (r *Router) Ask(slot uint32, address string) (string, error) {
	p, n := strArg(address)
	var offset, length C.size_t
	err := check(C.sr_router_ask(r.handle(), C.uint32_t(slot), p, n, &offset, &length))
	runtime.KeepAlive(r)
	if err != nil {
		return "", err
	}
	if uint64(offset) > uint64(len(address)) || uint64(length) > uint64(len(address))-uint64(offset) {
		return "", &Error{Code: CodeInternal, Message: "ask answered a span outside its argument (a bug)"}
	}
	return address[offset : offset+length], nil
}

// Replace is the router to use when next replaces r (stale_epoch unless newer).
func (r *Router) Replace(next *Router) (*Router, error) {
	var out *C.sr_router
	e := C.sr_router_replace(r.handle(), next.handle(), &out)
	runtime.KeepAlive(next)
	return r.routerOut(e, out)
}

// Scope is what a scatter-gather plan covers: every shard, a key range or some keys.
type Scope struct {
	kind       C.uint32_t
	start, end *Key
	keys       []Key
}

// ScopeEvery covers every shard.
func ScopeEvery() Scope { return Scope{kind: C.SR_SCOPE_EVERY} }

// ScopeRange covers the keys from start to end (nil: to the end).
func ScopeRange(start Key, end *Key) Scope {
	return Scope{kind: C.SR_SCOPE_RANGE, start: &start, end: end}
}

// ScopeKeys covers some keys.
func ScopeKeys(keys []Key) Scope { return Scope{kind: C.SR_SCOPE_KEYS, keys: keys} }

// Scatter is a scatter-gather plan: readFrom is "primary", "replicas" or "zone" (with
// turn and zone, nil for none). {"gather", "visits": [{"shard", "node", "keys"}]}.
func (r *Router) Scatter(scope Scope, readFrom string, turn uint32, zone *string) (json.RawMessage, error) {
	s := cOptKey(scope.start)
	defer free(s)
	e := cOptKey(scope.end)
	defer free(e)
	var k *C.sr_key
	var n C.size_t
	if scope.kind == C.SR_SCOPE_KEYS {
		k, n = cKeys(scope.keys)
		defer free(k)
	}
	rp, rn := strArg(readFrom)
	zp, zn := optStrArg(zone)
	var out *C.char
	return r.jsonOut(C.sr_router_scatter(r.handle(), scope.kind, s, e, k, n, rp, rn, C.uint32_t(turn), zp, zn, &out), out)
}

// Index is the router of secondary index name.
func (r *Router) Index(name string) (*Router, error) {
	p, n := strArg(name)
	var out *C.sr_router
	return r.routerOut(C.sr_router_index(r.handle(), p, n, &out), out)
}

// Table is the router of the table family that holds table name.
func (r *Router) Table(name string) (*Router, error) {
	p, n := strArg(name)
	var out *C.sr_router
	return r.routerOut(C.sr_router_table(r.handle(), p, n, &out), out)
}

// TableNames is the tables the table families list, sorted.
func (r *Router) TableNames() ([]string, error) {
	var out *C.char
	var names []string
	return names, r.decodeOut(C.sr_router_table_names(r.handle(), &out), out, &names)
}

// IndexNames is the secondary indexes' names.
func (r *Router) IndexNames() ([]string, error) {
	var out *C.char
	var names []string
	return names, r.decodeOut(C.sr_router_index_names(r.handle(), &out), out, &names)
}

// ReadNear is the node a caller in zone (nil: none) reads key from.
func (r *Router) ReadNear(key Key, zone *string) (string, error) {
	k := cKey(key)
	defer free(k)
	zp, zn := optStrArg(zone)
	var node *C.char
	var n C.size_t
	return r.nodeOut(C.sr_router_read_near(r.handle(), k, zp, zn, &node, &n), node, n)
}

// Term is an index_write_plan term: a secondary index's name and the term's key.
type Term struct {
	Index string
	Key   Key
}

// IndexWritePlan is where a row and its index entries are written:
// {"shard", "node", "indexes": [{"index", "shard", "node", "terms"}]}.
func (r *Router) IndexWritePlan(key Key, terms []Term) (json.RawMessage, error) {
	k := cKey(key)
	defer free(k)
	keys := make([]Key, len(terms))
	names := make([]string, len(terms))
	for i, t := range terms {
		keys[i], names[i] = t.Key, t.Index
	}
	tk, _ := cKeys(keys)
	defer free(tk)
	ns, _ := cStrs(names)
	defer C.free(unsafe.Pointer(ns))
	size := C.size_t(unsafe.Sizeof(C.sr_term{}))
	mem := C.malloc(size*C.size_t(len(terms)) + 1)
	defer C.free(mem)
	arr := unsafe.Slice((*C.sr_term)(mem), len(terms))
	tks := unsafe.Slice(tk, len(terms))
	nss := unsafe.Slice(ns, len(terms))
	for i := range terms {
		arr[i] = C.sr_term{name: nss[i].ptr, name_len: nss[i].len, term: tks[i]}
	}
	var out *C.char
	return r.jsonOut(C.sr_router_index_write_plan(r.handle(), k, (*C.sr_term)(mem), C.size_t(len(terms)), &out), out)
}

// Diff is what changes from old to new for keys (with the per-key list when perKey).
func Diff(old, new *Router, keys []Key, perKey bool) (json.RawMessage, error) {
	k, n := cKeys(keys)
	defer free(k)
	var out *C.char
	e := C.sr_diff(old.handle(), new.handle(), k, n, C.bool(perKey), &out)
	runtime.KeepAlive(new)
	return old.jsonOut(e, out)
}
