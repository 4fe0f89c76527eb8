package shardroute_test

// The Go conformance runner: every case of every file in conformance/vectors through
// this package, compared with its `expect` (conformance/README.md). Prints
// `conformance go: N passed, M failed, 0 skipped` and writes target/conformance/go.json.
// SHARDROUTE_VECTORS_FILTER keeps the cases whose name contains it; SHARDROUTE_VECTORS_DIR
// reads the vectors from another directory. The runner converts
// vector fields to the package's arguments and results back; it decides nothing.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	sr "github.com/shardroute/shardroute/bindings-go"
)

type object map[string]json.RawMessage

// malformed: the case cannot run (a bad vector or an unknown op); it fails.
type malformed string

// coreError: the core refused a call; it becomes the result {"error": code}.
type coreError struct{ code string }

func bad(format string, args ...interface{}) { panic(malformed(fmt.Sprintf(format, args...))) }

func ok(err error) {
	if err == nil {
		return
	}
	var e *sr.Error
	if errors.As(err, &e) {
		panic(coreError{e.Code})
	}
	panic(malformed(err.Error()))
}

func must[T any](v T, err error) T {
	ok(err)
	return v
}

// caught runs f, turning a core error into {"error": code}.
func caught(f func() interface{}) (result interface{}) {
	defer func() {
		if r := recover(); r != nil {
			e, isCore := r.(coreError)
			if !isCore {
				panic(r)
			}
			result = map[string]interface{}{"error": e.code}
		}
	}()
	return f()
}

func (o object) has(name string) bool { _, ok := o[name]; return ok }

func (o object) isNull(name string) bool { return string(o[name]) == "null" }

func (o object) str(name string) string {
	var s string
	if err := json.Unmarshal(o[name], &s); err != nil || !o.has(name) {
		bad("%s is not a string", name)
	}
	return s
}

func (o object) optStr(name string) *string {
	if !o.has(name) || o.isNull(name) {
		return nil
	}
	s := o.str(name)
	return &s
}

func (o object) u32(name string) uint32 {
	v, err := strconv.ParseUint(string(o[name]), 10, 32)
	if err != nil {
		bad("bad %s", name)
	}
	return uint32(v)
}

// integer: a non-negative integer field, 0 when absent.
func (o object) integer(name string) uint64 {
	if !o.has(name) {
		return 0
	}
	v, err := strconv.ParseUint(string(o[name]), 10, 64)
	if err != nil {
		bad("%s is not an integer", name)
	}
	return v
}

func (o object) boolean(name string) bool {
	switch string(o[name]) {
	case "true":
		return true
	case "false":
		return false
	}
	bad("%s is not a boolean", name)
	return false
}

// decimal: a decimal-string field as a u64.
func (o object) decimal(name string) uint64 {
	v, err := strconv.ParseUint(o.str(name), 10, 64)
	if err != nil {
		bad("bad %s", name)
	}
	return v
}

func (o object) strs(name string) []string {
	var list []string
	if err := json.Unmarshal(o[name], &list); err != nil || !o.has(name) {
		bad("%s is not an array of strings", name)
	}
	return list
}

func objectOf(raw json.RawMessage) object {
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		bad("not an object: %.80s", raw)
	}
	return o
}

func keyOf(raw json.RawMessage) sr.Key {
	o := objectOf(raw)
	if len(o) != 1 {
		bad("bad key")
	}
	switch {
	case o.has("utf8"):
		return sr.StringKey(o.str("utf8"))
	case o.has("hex"):
		b, err := hex.DecodeString(o.str("hex"))
		if err != nil {
			bad("bad hex")
		}
		return sr.BytesKey(b)
	case o.has("u64"):
		return sr.U64Key(must(sr.ParseU64(o.str("u64"))))
	case o.has("utf16"):
		var units []uint16
		if err := json.Unmarshal(o["utf16"], &units); err != nil {
			bad("bad utf16 unit")
		}
		return sr.BytesKey(must(sr.UTF8FromUTF16(units)))
	}
	bad("unknown key form %s", raw)
	return sr.Key{}
}

func keysOf(raw json.RawMessage) []sr.Key {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || raw == nil {
		bad("keys is not an array")
	}
	keys := make([]sr.Key, len(list))
	for i, k := range list {
		keys[i] = keyOf(k)
	}
	return keys
}

// keyForm: a returned key in the form of the key it came from (text stays utf8).
func keyForm(source json.RawMessage, key sr.Key) interface{} {
	o := objectOf(source)
	if !key.IsU64() && (o.has("utf8") || o.has("utf16")) && utf8.Valid(key.Bytes()) {
		return map[string]string{"utf8": string(key.Bytes())}
	}
	return key
}

func decimal(v uint64) string { return strconv.FormatUint(v, 10) }

func optionalDecimal(v uint64, present bool) interface{} {
	if !present {
		return nil
	}
	return decimal(v)
}

type result = map[string]interface{}

// runner holds the current file's topologies, its routers, and what a case closes.
type runner struct {
	topologies map[string]json.RawMessage
	cache      map[string]*sr.Router
	closers    []io.Closer
}

func (r *runner) own(c io.Closer) { r.closers = append(r.closers, c) }

func (r *runner) doc(id string) []byte {
	doc, found := r.topologies[id]
	if !found {
		bad("unknown topology %s", id)
	}
	return doc
}

// router: the file's router of a topology id (cached).
func (r *runner) router(id string) *sr.Router {
	if router, found := r.cache[id]; found {
		return router
	}
	router := must(sr.NewRouter(r.doc(id)))
	r.cache[id] = router
	return router
}

// fresh: a router built afresh from the topology id in field name.
func (r *runner) fresh(c object, name string) *sr.Router {
	router := must(sr.NewRouter(r.doc(c.str(name))))
	r.own(router)
	return router
}

// routerField: the router a case names in field name, through its table when it names one.
func (r *runner) routerField(c object, name string) *sr.Router {
	router := r.router(c.str(name))
	if c.has("table") {
		router = must(router.Table(c.str("table")))
		r.own(router)
	}
	return router
}

func nodeResult(router *sr.Router, key sr.Key) result {
	var shard uint32
	var node string
	if key.IsU64() {
		shard = must(router.RouteU64(key.U64()))
		node = must(router.NodeU64(key.U64()))
	} else {
		shard = must(router.Route(key.Bytes()))
		node = must(router.Node(key.Bytes()))
	}
	return result{"shard": shard, "node": node}
}

// routeMany: each batch form in turn: packed bytes, u64s, or mixed keys.
func routeMany(router *sr.Router, keys []sr.Key) interface{} {
	bytesKeys, u64Keys := 0, 0
	for _, k := range keys {
		if k.IsU64() {
			u64Keys++
		} else {
			bytesKeys++
		}
	}
	var shards []uint32
	switch {
	case bytesKeys == len(keys):
		var data []byte
		offsets := []uint32{0}
		for _, k := range keys {
			data = append(data, k.Bytes()...)
			offsets = append(offsets, uint32(len(data)))
		}
		shards = must(router.RoutePacked(data, offsets))
	case u64Keys == len(keys):
		values := make([]uint64, len(keys))
		for i, k := range keys {
			values[i] = k.U64()
		}
		shards = must(router.RouteU64s(values))
	default:
		shards = must(router.RouteMany(keys))
	}
	if shards == nil {
		shards = []uint32{}
	}
	return result{"shards": shards}
}

func (r *runner) migration(c object) *sr.Migration {
	var m *sr.Migration
	switch {
	case c.has("dictionary") && !c.has("before") && !c.has("after"):
		m = must(sr.MigrationOfDictionary(r.routerField(c, "dictionary")))
	case !c.has("dictionary") && c.has("before") && c.has("after"):
		m = must(sr.NewMigration(r.routerField(c, "before"), r.routerField(c, "after")))
	default:
		bad("a migration case names before and after, or dictionary")
	}
	r.own(m)
	return m
}

func (r *runner) migrationOp(c object, op string) interface{} {
	m := r.migration(c)
	switch op {
	case "migration":
		key := keyOf(c["key"])
		moved := c.boolean("moved")
		moves := must(m.Moves(key))
		var movesValue interface{}
		if moves != nil {
			movesValue = moves[:]
		}
		return result{"moves": movesValue, "write_target": must(m.WriteTarget(key)), "read_targets": must(m.ReadTargets(key, moved))}
	case "migration_salted":
		key := keyOf(c["key"])
		salt := c.u32("salt")
		forms := []interface{}{}
		for _, k := range must(m.ReadKeys(key)) {
			forms = append(forms, keyForm(c["key"], k))
		}
		return result{"read_keys": forms, "write_key": keyForm(c["key"], must(m.WriteKey(key, salt)))}
	case "migration_scan":
		return result{"nodes": must(m.ScanNodes())}
	case "migration_shards":
		return result{"shards": must(m.MovingShards())}
	case "migration_keys":
		return result{"indices": must(m.MovingKeys(keysOf(c["keys"])))}
	}
	bad("unknown op %s", op)
	return nil
}

func (r *runner) evaluate(c object) interface{} {
	op := c.str("op")
	switch op {
	case "load", "apply", "encode_dictionary":
		var text []byte
		if c.has("topology_json") {
			text = []byte(c.str("topology_json"))
		} else {
			text = r.doc(c.str("topology"))
		}
		switch op {
		case "load":
			router := must(sr.NewRouter(text))
			r.own(router)
			return result{"epoch": decimal(must(router.Epoch())), "to_json": must(router.JSON())}
		case "apply":
			if !c.has("operation") {
				bad("case has no operation")
			}
			return result{"result": must(sr.Apply(text, c["operation"]))}
		}
		return result{"hex": hex.EncodeToString(must(sr.EncodeDictionary(text)))}
	case "route", "replicas":
		router := r.routerField(c, "topology")
		key := keyOf(c["key"])
		if op == "route" {
			return nodeResult(router, key)
		}
		return result{"nodes": must(router.Replicas(key, c.u32("count")))}
	case "route_many":
		router := r.routerField(c, "topology")
		return routeMany(router, keysOf(c["keys"]))
	case "hash_key":
		var spec []byte
		if c.has("hashing") {
			spec = c["hashing"]
		}
		var key sr.Key
		keyResult := caught(func() interface{} { key = keyOf(c["key"]); return nil })
		if keyResult != nil {
			// The spec's error comes first, as in every runner.
			if _, err := sr.HashKey(sr.U64Key(0), spec); err != nil {
				ok(err)
			}
			return keyResult
		}
		return result{"hash": decimal(must(sr.HashKey(key, spec)))}
	case "jump":
		buckets := c.u32("buckets")
		hash := must(sr.ParseU64(c.str("hash")))
		return result{"shard": must(sr.Jump(hash, buckets))}
	case "scatter":
		router := r.routerField(c, "topology")
		zone := c.optStr("zone")
		turn := c.u32("turn")
		readFrom := c.str("read_from")
		var scope sr.Scope
		switch c.str("scope") {
		case "every":
			scope = sr.ScopeEvery()
		case "range":
			start := keyOf(c["start"])
			var end *sr.Key
			if !c.isNull("end") {
				k := keyOf(c["end"])
				end = &k
			}
			scope = sr.ScopeRange(start, end)
		case "keys":
			scope = sr.ScopeKeys(keysOf(c["keys"]))
		default:
			bad("unknown scope")
		}
		return must(router.Scatter(scope, readFrom, turn, zone))
	case "shards_for_range":
		router := r.routerField(c, "topology")
		start := keyOf(c["start"])
		var end *sr.Key
		if !c.isNull("end") {
			k := keyOf(c["end"])
			end = &k
		}
		return result{"shards": must(router.ShardsForRange(start, end))}
	case "decode_id":
		router := r.routerField(c, "topology")
		return must(router.DecodeID(must(sr.ParseU64(c.str("id")))))
	case "locate":
		router := r.routerField(c, "topology")
		return must(router.Locate(keyOf(c["key"])))
	case "salted_key":
		router := r.routerField(c, "topology")
		salt := c.u32("salt")
		key := keyOf(c["key"])
		return result{"key": keyForm(c["key"], must(router.SaltedKey(key, salt)))}
	case "salted_keys":
		router := r.routerField(c, "topology")
		list := []interface{}{}
		for _, s := range must(router.SaltedKeys(keyOf(c["key"]))) {
			list = append(list, []interface{}{keyForm(c["key"], s.Key), s.Shard})
		}
		return result{"keys": list}
	case "modulo_moves":
		return result{"moves": must(sr.ModuloMoves(c.u32("old"), c.u32("new")))}
	case "route_read":
		router := r.routerField(c, "topology")
		return result{"node": must(router.RouteRead(keyOf(c["key"])))}
	case "read_replica":
		router := r.routerField(c, "topology")
		key := keyOf(c["key"])
		return result{"node": must(router.ReadReplica(key, c.u32("turn")))}
	case "route_write":
		router := r.routerField(c, "topology")
		return result{"nodes": must(router.RouteWrite(keyOf(c["key"])))}
	case "read_near":
		router := r.routerField(c, "topology")
		key := keyOf(c["key"])
		return result{"node": must(router.ReadNear(key, c.optStr("zone")))}
	case "stats", "same_slot", "group_by_node":
		router := r.routerField(c, "topology")
		keys := keysOf(c["keys"])
		switch op {
		case "same_slot":
			return result{"shard": must(router.SameSlot(keys))}
		case "stats":
			return result{"result": must(router.Stats(keys))}
		}
		return result{"groups": must(router.GroupByNode(keys))}
	case "moved":
		router := r.routerField(c, "topology")
		next := must(router.Moved(c.u32("slot"), c.str("address")))
		r.own(next)
		return result{"to_json": must(next.JSON())}
	case "ask":
		router := r.routerField(c, "topology")
		return result{"address": must(router.Ask(c.u32("slot"), c.str("address")))}
	case "parse_redirect":
		return must(sr.ParseRedirect(c.str("line")))
	case "migration", "migration_salted", "migration_scan", "migration_shards", "migration_keys":
		return r.migrationOp(c, op)
	case "index_route":
		router := r.routerField(c, "topology")
		key := keyOf(c["key"])
		index := must(router.Index(c.str("index")))
		r.own(index)
		return nodeResult(index, key)
	case "index_write_plan":
		router := r.routerField(c, "topology")
		key := keyOf(c["key"])
		var pairs [][2]json.RawMessage
		if err := json.Unmarshal(c["terms"], &pairs); err != nil || !c.has("terms") {
			bad("terms is not an array of pairs")
		}
		terms := make([]sr.Term, len(pairs))
		for i, pair := range pairs {
			var name string
			if err := json.Unmarshal(pair[0], &name); err != nil {
				bad("a term pair has no name")
			}
			terms[i] = sr.Term{Index: name, Key: keyOf(pair[1])}
		}
		return must(router.IndexWritePlan(key, terms))
	case "shard_owner":
		router := r.routerField(c, "topology")
		return result{"node": must(router.ShardOwner(c.u32("shard")))}
	case "replace":
		router := r.routerField(c, "topology")
		next := r.routerField(c, "next")
		replaced := must(router.Replace(next))
		r.own(replaced)
		return result{"epoch": decimal(must(replaced.Epoch()))}
	case "diff":
		old := r.routerField(c, "old")
		new := r.routerField(c, "new")
		keys := keysOf(c["keys"])
		return result{"result": must(sr.Diff(old, new, keys, string(c["per_key"]) == "true"))}
	case "decode_dictionary":
		b, err := hex.DecodeString(c.str("hex"))
		if err != nil {
			bad("bad hex")
		}
		return result{"to_json": must(sr.DecodeDictionary(b))}
	case "redis_session":
		return r.redisSession(c)
	case "topology_follower":
		return r.topologyFollower(c)
	case "migration_session":
		return r.migrationSession(c)
	case "misplaced":
		return r.misplaced(c)
	case "session_source":
		return r.sessionSource(c)
	}
	bad("unknown op %s", op)
	return nil
}

func stepsOf(c object) []object {
	var steps []object
	if err := json.Unmarshal(c["steps"], &steps); err != nil {
		bad("steps is not an array of objects")
	}
	return steps
}

func (r *runner) redisSession(c object) interface{} {
	seeds := c.strs("seeds")
	var config []byte
	if c.has("config") {
		config = c["config"]
	}
	session := must(sr.NewClusterSession(seeds, config))
	r.own(session)
	var commands []*sr.Command
	results := []interface{}{}
	for _, step := range stepsOf(c) {
		now := step.integer("now_ms")
		call := step.str("call")
		var command *sr.Command
		if step.has("command") {
			i, err := strconv.Atoi(string(step["command"]))
			if err != nil || i < 0 || i >= len(commands) {
				bad("%s: no command %s", call, step["command"])
			}
			command = commands[i]
		} else if len(commands) > 0 {
			command = commands[len(commands)-1]
		}
		results = append(results, caught(func() interface{} {
			deadline := func(d uint64, present bool, err error) interface{} {
				ok(err)
				return result{"deadline_ms": optionalDecimal(d, present)}
			}
			switch call {
			case "command", "plan":
				keys := keysOf(step["keys"])
				access := step.str("access")
				if call == "plan" {
					return must(session.Plan(keys, access))
				}
				begun, slot, err := session.Command(keys, access, now)
				ok(err)
				r.own(begun)
				commands = append(commands, begun)
				return result{"slot": slot}
			case "poll", "succeeded", "stalled", "on_deadline", "failed", "unreachable", "deadline":
				if command == nil {
					bad("%s: no command begun", call)
				}
				switch call {
				case "poll":
					return must(session.Poll(command, now))
				case "succeeded":
					return must(session.Succeeded(command, now))
				case "stalled":
					return must(session.Stalled(command, now))
				case "on_deadline":
					return must(session.OnDeadline(command, now))
				case "failed":
					return must(session.Failed(command, step.str("text"), step.strs("names"), now))
				case "unreachable":
					return must(session.Unreachable(command, step.str("why"), now))
				}
				return deadline(session.Deadline(command))
			case "refresh_sent":
				return deadline(session.RefreshSent(step.str("address"), now))
			case "next_deadline":
				return deadline(session.NextDeadline())
			case "batch_deadline":
				return deadline(session.BatchDeadline(now))
			case "pipeline_queued", "pipeline_take", "pipeline_done", "pipeline_withdrawn", "pipeline_pending":
				address := step.str("address")
				readonly := step.boolean("readonly")
				switch call {
				case "pipeline_queued":
					return result{"queued": must(session.PipelineQueued(address, readonly))}
				case "pipeline_take":
					return result{"write": must(session.PipelineTake(address, readonly))}
				case "pipeline_done":
					return result{"write": must(session.PipelineDone(address, readonly))}
				case "pipeline_withdrawn":
					ok(session.PipelineWithdrawn(address, readonly, step.u32("count")))
					return result{"ok": true}
				}
				queued, writes, err := session.PipelinePending(address, readonly)
				ok(err)
				return result{"queued": queued, "writes": writes}
			case "timeout":
				return result{"timed_out": must(session.Timeout(now))}
			case "refreshed":
				if !step.has("reply") {
					bad("refreshed has no reply")
				}
				ok(session.Refreshed(step["reply"], now))
				return result{"ok": true}
			case "refresh_failed":
				ok(session.RefreshFailed(now))
				return result{"ok": true}
			case "candidates":
				return result{"addresses": must(session.Candidates())}
			case "stats":
				return must(session.Stats())
			}
			bad("unknown session call %s", call)
			return nil
		}))
	}
	return result{"results": results}
}

// document: a step's document, a topology id or raw text.
func (r *runner) document(step object) []byte {
	switch {
	case step.has("document") && !step.has("document_json"):
		return r.doc(step.str("document"))
	case step.has("document_json") && !step.has("document"):
		return []byte(step.str("document_json"))
	}
	bad("a step names document (an id) or document_json (text)")
	return nil
}

func (r *runner) topologyFollower(c object) interface{} {
	var config []byte
	if c.has("config") {
		config = c["config"]
	}
	follower := must(sr.NewFollower(config))
	r.own(follower)
	results := []interface{}{}
	for _, step := range stepsOf(c) {
		now := step.integer("now_ms")
		call := step.str("call")
		results = append(results, caught(func() interface{} {
			switch call {
			case "offer", "publish":
				document := r.document(step)
				if call == "publish" {
					return must(follower.Publish(document))
				}
				return must(follower.Offer(document, step.integer("revision"), now))
			case "offer_dictionary", "offer_bytes":
				b, err := hex.DecodeString(step.str("hex"))
				if err != nil {
					bad("bad hex")
				}
				if call == "offer_bytes" {
					return must(follower.OfferBytes(b, step.integer("revision"), now))
				}
				return must(follower.OfferDictionary(b, step.integer("revision"), now))
			case "disconnected":
				return result{"reconnect_at_ms": decimal(must(follower.Disconnected(now)))}
			case "connected":
				ok(follower.Connected())
				return result{"ok": true}
			case "state":
				router := must(follower.Router())
				var epoch interface{}
				if router != nil {
					defer router.Close()
					epoch = decimal(must(router.Epoch()))
				}
				revision, present, err := follower.Revision()
				ok(err)
				return result{"epoch": epoch, "revision": optionalDecimal(revision, present)}
			case "stats":
				return must(follower.Stats())
			case "next_deadline":
				d, present, err := follower.NextDeadline()
				ok(err)
				return result{"deadline_ms": optionalDecimal(d, present)}
			}
			bad("unknown follower call %s", call)
			return nil
		}))
	}
	return result{"results": results}
}

func (r *runner) misplaced(c object) interface{} {
	router := r.fresh(c, "topology")
	var node *string
	var shard uint32
	switch {
	case c.has("node") && !c.has("shard"):
		s := c.str("node")
		node = &s
	case c.has("shard") && !c.has("node"):
		shard = c.u32("shard")
	default:
		bad("a misplaced case names node or shard")
	}
	return must(sr.Misplaced(router, node, shard, keysOf(c["keys"])))
}

func (r *runner) migrationSession(c object) interface{} {
	var session *sr.MigrationSession
	if c.has("topology") {
		topology := r.fresh(c, "topology")
		var previous, held *sr.Router
		if c.has("previous") {
			previous = r.fresh(c, "previous")
		}
		if c.has("held") {
			held = r.fresh(c, "held")
		}
		session = must(sr.MigrationSessionOfTopology(topology, previous, held))
	} else {
		var m *sr.Migration
		switch {
		case c.has("before") && c.has("after") && !c.has("dictionary"):
			a := r.fresh(c, "before")
			b := r.fresh(c, "after")
			m = must(sr.NewMigration(a, b))
		case c.has("dictionary") && !c.has("before") && !c.has("after"):
			m = must(sr.MigrationOfDictionary(r.fresh(c, "dictionary")))
		default:
			bad("a migration_session case names topology, before and after, or dictionary")
		}
		r.own(m)
		mode := c.str("mode")
		var until *uint64
		if c.has("until_ms") {
			v := c.decimal("until_ms")
			until = &v
		}
		session = must(sr.NewMigrationSession(m, mode, until))
	}
	r.own(session)
	results := []interface{}{}
	for _, step := range stepsOf(c) {
		call := step.str("call")
		results = append(results, caught(func() interface{} {
			switch call {
			case "fence_epoch":
				return result{"epoch": decimal(must(session.FenceEpoch()))}
			case "mode":
				return result{"mode": must(session.Mode())}
			case "scan_nodes":
				return result{"nodes": must(session.ScanNodes())}
			case "read_plan", "read_plan_at":
				moved := step.boolean("moved")
				var now uint64
				if call == "read_plan_at" {
					now = step.decimal("now_ms")
				}
				key := keyOf(step["key"])
				if call == "read_plan" {
					return result{"nodes": must(session.ReadPlan(key, moved))}
				}
				return result{"nodes": must(session.ReadPlanAt(key, moved, now))}
			case "write_plan":
				return must(session.WritePlan(keyOf(step["key"])))
			case "lazy_steps":
				return result{"steps": must(session.LazySteps(keyOf(step["key"])))}
			case "copy_batch":
				cursor, max := step.u32("cursor"), step.u32("max")
				return must(session.CopyBatch(cursor, max))
			case "next_deadline":
				d, present, err := session.NextDeadline(step.decimal("now_ms"))
				ok(err)
				return result{"deadline_ms": optionalDecimal(d, present)}
			case "actions":
				now := step.decimal("now_ms")
				return result{"actions": must(session.Actions(now, step.boolean("moved")))}
			case "fenced":
				return must(session.Fenced(step.decimal("min_epoch")))
			case "lazy_groups":
				return result{"groups": must(session.LazyGroups(keysOf(step["keys"])))}
			case "resume_at":
				// The duty and the pause absent (nil): the core's defaults.
				var duty *uint32
				var pause *uint64
				if step.has("duty_per_mille") {
					d := step.u32("duty_per_mille")
					duty = &d
				}
				if step.has("min_pause_ms") {
					p := step.decimal("min_pause_ms")
					pause = &p
				}
				return result{"resume_ms": decimal(must(session.ResumeAt(step.decimal("started_ms"), step.decimal("finished_ms"), duty, pause)))}
			}
			bad("unknown migration session call %s", call)
			return nil
		}))
	}
	return result{"results": results}
}

// payload: the bytes of field text (UTF-8) or b64 (base64, padding optional).
func payload(step object, text, b64 string, required bool) []byte {
	switch {
	case step.has(text) && !step.has(b64):
		return []byte(step.str(text))
	case step.has(b64) && !step.has(text):
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(step.str(b64), "="))
		if err != nil {
			bad("not base64")
		}
		return b
	case !step.has(text) && !step.has(b64) && !required:
		return nil
	}
	bad("bad %s / %s", text, b64)
	return nil
}

func sourceDeadline(session *sr.SourceSession) interface{} {
	d, present, err := session.Deadline()
	if err != nil {
		return result{"error": err.(*sr.Error).Code}
	}
	if !present {
		return nil
	}
	return d
}

func (r *runner) sessionSource(c object) interface{} {
	if !c.has("config") {
		bad("case has no config")
	}
	session, err := sr.NewSourceSession(c["config"])
	if err != nil {
		return result{"error": result{"code": err.(*sr.Error).Code}}
	}
	r.own(session)
	results := []interface{}{}
	for _, step := range stepsOf(c) {
		now := step.integer("now")
		call := step.str("call")
		var id uint64
		switch call {
		case "response", "chunk", "opened", "failed":
			id = step.integer("id")
			if !step.has("id") {
				bad("id is not an integer")
			}
		}
		results = append(results, caught(func() interface{} {
			var actions json.RawMessage
			var err error
			switch call {
			case "start":
				actions, err = session.Start(now)
			case "call":
				if !step.has("op") {
					bad("call has no op")
				}
				number, actions, err := session.Call(step["op"], now)
				if err != nil {
					return result{"error": result{"code": err.(*sr.Error).Code}, "deadline": sourceDeadline(session)}
				}
				return result{"call": number, "actions": actions, "deadline": sourceDeadline(session)}
			case "response":
				status := step.u32("status")
				if status > 65535 {
					bad("status is not a u16")
				}
				body := payload(step, "body", "body_b64", false)
				var headers []byte
				if step.has("headers") {
					headers = step["headers"]
				}
				actions, err = session.Response(id, uint16(status), headers, body, now)
			case "chunk":
				actions, err = session.Chunk(id, payload(step, "data", "data_b64", true), now)
			case "opened":
				actions, err = session.Opened(id, now)
			case "failed":
				actions, err = session.Failed(id, step.str("code"), step.str("message"), now)
			case "timer":
				actions, err = session.Timer(now)
			case "close":
				actions, err = session.Shutdown(now)
			case "state":
				return must(session.State())
			default:
				bad("unknown source session call %s", call)
			}
			ok(err)
			return result{"actions": actions, "deadline": sourceDeadline(session)}
		}))
	}
	return result{"results": results}
}

// run evaluates one case: its result, or why it could not run.
func (r *runner) run(c object) (actual interface{}, reason string) {
	defer func() {
		for i := len(r.closers) - 1; i >= 0; i-- {
			r.closers[i].Close()
		}
		r.closers = r.closers[:0]
		if p := recover(); p != nil {
			m, isMalformed := p.(malformed)
			if !isMalformed {
				panic(p)
			}
			actual, reason = nil, string(m)
		}
	}()
	return caught(func() interface{} { return r.evaluate(c) }), ""
}

// normalize reads JSON back with numbers kept as text.
func normalize(v interface{}) (interface{}, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	decoder := json.NewDecoder(strings.NewReader(string(text)))
	decoder.UseNumber()
	var out interface{}
	return out, decoder.Decode(&out)
}

// same compares JSON values; numbers by value.
func same(a, b interface{}) bool {
	switch x := a.(type) {
	case json.Number:
		y, isNumber := b.(json.Number)
		if !isNumber {
			return false
		}
		if x == y {
			return true
		}
		if strings.ContainsAny(string(x)+string(y), ".eE") {
			fx, errx := x.Float64()
			fy, erry := y.Float64()
			return errx == nil && erry == nil && fx == fy
		}
		return false
	case map[string]interface{}:
		y, isMap := b.(map[string]interface{})
		if !isMap || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, found := y[k]
			if !found || !same(v, w) {
				return false
			}
		}
		return true
	case []interface{}:
		y, isList := b.([]interface{})
		if !isList || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

type vectorFile struct {
	Format     string                     `json:"format"`
	Topologies map[string]json.RawMessage `json:"topologies"`
	Cases      []object                   `json:"cases"`
}

func TestConformance(t *testing.T) {
	if sr.Version() != sr.HeaderVersion {
		t.Fatalf("libshardroute %s under a header of %s", sr.Version(), sr.HeaderVersion)
	}
	dir := os.Getenv("SHARDROUTE_VECTORS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "conformance", "vectors")
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no vectors in %s", dir)
	}
	sort.Strings(names)
	filter := os.Getenv("SHARDROUTE_VECTORS_FILTER")
	passed, failed := 0, 0
	var failures []string
	for _, name := range names {
		text, err := os.ReadFile(name)
		var file vectorFile
		if err == nil {
			err = json.Unmarshal(text, &file)
		}
		if err != nil || file.Format != "shardroute-vectors/1" {
			failed++
			failures = append(failures, fmt.Sprintf("%s: unreadable or unknown vector format (%v)", name, err))
			continue
		}
		r := &runner{topologies: file.Topologies, cache: map[string]*sr.Router{}}
		for _, c := range file.Cases {
			caseName := "<unnamed>"
			if c.has("name") {
				json.Unmarshal(c["name"], &caseName)
			}
			if !strings.Contains(caseName, filter) {
				continue
			}
			actual, reason := r.run(c)
			var expect interface{}
			decoder := json.NewDecoder(strings.NewReader(string(c["expect"])))
			decoder.UseNumber()
			expectErr := decoder.Decode(&expect)
			var got interface{}
			if reason == "" {
				got, err = normalize(actual)
				if err != nil {
					reason = err.Error()
				}
			}
			if reason == "" && expectErr == nil && same(got, expect) {
				passed++
				continue
			}
			failed++
			if reason == "" {
				g, _ := json.Marshal(got)
				reason = fmt.Sprintf("expected %.400s, got %.400s", c["expect"], g)
			}
			failures = append(failures, caseName+": "+reason)
		}
		for _, router := range r.cache {
			router.Close()
		}
	}
	fmt.Printf("conformance go: %d passed, %d failed, 0 skipped\n", passed, failed)
	counts := fmt.Sprintf("{\"runner\": \"go\", \"passed\": %d, \"failed\": %d, \"skipped\": 0}\n", passed, failed)
	if err := os.MkdirAll(filepath.Join("..", "target", "conformance"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "target", "conformance", "go.json"), []byte(counts), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, f := range failures {
		if i == 50 {
			t.Errorf("... and %d more", len(failures)-50)
			break
		}
		t.Error("FAILED " + f)
	}
}
