package shardroute

/*
#include "shardroute.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
)

// Migration is a migration from one router to the next. Immutable; Close frees it.
type Migration struct {
	ptr *C.sr_migration
}

func newMigration(e *C.sr_error, p *C.sr_migration) (*Migration, error) {
	if err := check(e); err != nil {
		return nil, err
	}
	m := &Migration{ptr: p}
	runtime.SetFinalizer(m, (*Migration).Close)
	return m, nil
}

// NewMigration is the migration from before to after (stale_epoch unless after is newer).
func NewMigration(before, after *Router) (*Migration, error) {
	var out *C.sr_migration
	e := C.sr_migration_new(before.handle(), after.handle(), &out)
	runtime.KeepAlive(before)
	runtime.KeepAlive(after)
	return newMigration(e, out)
}

// MigrationOfDictionary is the migration a dictionary topology describes.
func MigrationOfDictionary(dictionary *Router) (*Migration, error) {
	var out *C.sr_migration
	e := C.sr_migration_of_dictionary(dictionary.handle(), &out)
	runtime.KeepAlive(dictionary)
	return newMigration(e, out)
}

// Close frees the migration. Closing twice is safe.
func (m *Migration) Close() error {
	if m != nil && m.ptr != nil {
		C.sr_migration_free(m.ptr)
		m.ptr = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

func (m *Migration) handle() *C.sr_migration {
	if m == nil {
		return nil
	}
	return m.ptr
}

func (m *Migration) decodeOut(e *C.sr_error, out *C.char, v interface{}) error {
	runtime.KeepAlive(m)
	if err := check(e); err != nil {
		return err
	}
	return decode(out, v)
}

// Moves tells whether key moves: nil, or the old and the new node.
func (m *Migration) Moves(key Key) (*[2]string, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var moves *[2]string
	return moves, m.decodeOut(C.sr_migration_moves(m.handle(), k, &out), out, &moves)
}

// ReadTargets is the nodes a read of key asks, the new owner first.
func (m *Migration) ReadTargets(key Key, moved bool) ([]string, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var nodes []string
	return nodes, m.decodeOut(C.sr_migration_read_targets(m.handle(), k, C.bool(moved), &out), out, &nodes)
}

// ReadKeys is the keys a read of key looks under while salting changes.
func (m *Migration) ReadKeys(key Key) ([]Key, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var keys []Key
	return keys, m.decodeOut(C.sr_migration_read_keys(m.handle(), k, &out), out, &keys)
}

// WriteKey is the key a write of key with salt goes under.
func (m *Migration) WriteKey(key Key, salt uint32) (Key, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	var written Key
	return written, m.decodeOut(C.sr_migration_write_key(m.handle(), k, C.uint32_t(salt), &out), out, &written)
}

// WriteTarget is the node a write of key goes to.
func (m *Migration) WriteTarget(key Key) (string, error) {
	k := cKey(key)
	defer free(k)
	var node *C.char
	var n C.size_t
	if err := check(C.sr_migration_write_target(m.handle(), k, &node, &n)); err != nil {
		runtime.KeepAlive(m)
		return "", err
	}
	s := borrowed(node, n)
	runtime.KeepAlive(m)
	return s, nil
}

// MovingShards is the shards that change owner: [[shard, old node, new node], ...].
func (m *Migration) MovingShards() (json.RawMessage, error) {
	var out *C.char
	var raw json.RawMessage
	return raw, m.decodeOut(C.sr_migration_moving_shards(m.handle(), &out), out, &raw)
}

// ScanNodes is the nodes a query over every key reads, in order.
func (m *Migration) ScanNodes() ([]string, error) {
	var out *C.char
	var nodes []string
	return nodes, m.decodeOut(C.sr_migration_scan_nodes(m.handle(), &out), out, &nodes)
}

// MovingKeys is the indices of keys that change node.
func (m *Migration) MovingKeys(keys []Key) ([]int, error) {
	k, n := cKeys(keys)
	defer free(k)
	var out *C.char
	var indices []int
	return indices, m.decodeOut(C.sr_migration_moving_keys(m.handle(), k, n, &out), out, &indices)
}

// Misplaced tells which keys held by node (or, when node is nil, by shard) belong
// elsewhere under router: {"misplaced": [indices], "count", "checked"}.
func Misplaced(router *Router, node *string, shard uint32, keys []Key) (json.RawMessage, error) {
	k, n := cKeys(keys)
	defer free(k)
	np, nn := optStrArg(node)
	var out *C.char
	return router.jsonOut(C.sr_misplaced(router.handle(), np, nn, C.uint32_t(shard), k, n, &out), out)
}

// MigrationSession is the plan of a service during a migration. Immutable; Close frees it.
type MigrationSession struct {
	ptr *C.sr_migration_session
}

func newMigrationSession(e *C.sr_error, p *C.sr_migration_session) (*MigrationSession, error) {
	if err := check(e); err != nil {
		return nil, err
	}
	s := &MigrationSession{ptr: p}
	runtime.SetFinalizer(s, (*MigrationSession).Close)
	return s, nil
}

// NewMigrationSession is a session over m in mode ("background", "lazy" or
// "expiration"); untilMs (nil: none) is an expiration's end.
func NewMigrationSession(m *Migration, mode string, untilMs *uint64) (*MigrationSession, error) {
	p, n := strArg(mode)
	var until C.uint64_t
	if untilMs != nil {
		until = C.uint64_t(*untilMs)
	}
	var out *C.sr_migration_session
	e := C.sr_migration_session_new(m.handle(), p, n, C.bool(untilMs != nil), until, &out)
	runtime.KeepAlive(m)
	return newMigrationSession(e, out)
}

// MigrationSessionOfTopology is the session for the routing a service holds:
// topology, the previous one and the one held (each nil when none).
func MigrationSessionOfTopology(topology, previous, held *Router) (*MigrationSession, error) {
	var out *C.sr_migration_session
	e := C.sr_migration_session_of_topology(topology.handle(), previous.handle(), held.handle(), &out)
	runtime.KeepAlive(topology)
	runtime.KeepAlive(previous)
	runtime.KeepAlive(held)
	return newMigrationSession(e, out)
}

// Close frees the session. Closing twice is safe.
func (s *MigrationSession) Close() error {
	if s != nil && s.ptr != nil {
		C.sr_migration_session_free(s.ptr)
		s.ptr = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

func (s *MigrationSession) handle() *C.sr_migration_session {
	if s == nil {
		return nil
	}
	return s.ptr
}

func (s *MigrationSession) jsonOut(e *C.sr_error, out *C.char) (json.RawMessage, error) {
	runtime.KeepAlive(s)
	if err := check(e); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

func (s *MigrationSession) nodes(e *C.sr_error, out *C.char) ([]string, error) {
	runtime.KeepAlive(s)
	if err := check(e); err != nil {
		return nil, err
	}
	var nodes []string
	return nodes, decode(out, &nodes)
}

// Mode is the session's mode: "plain", "background", "lazy" or "catch-up".
func (s *MigrationSession) Mode() (string, error) {
	var p *C.char
	var n C.size_t
	err := check(C.sr_migration_session_mode(s.handle(), &p, &n))
	runtime.KeepAlive(s)
	if err != nil {
		return "", err
	}
	return borrowed(p, n), nil
}

// FenceEpoch is the epoch writes are fenced with.
func (s *MigrationSession) FenceEpoch() (uint64, error) {
	var v C.uint64_t
	err := check(C.sr_migration_session_fence_epoch(s.handle(), &v))
	runtime.KeepAlive(s)
	return uint64(v), err
}

// ScanNodes is the nodes a query over every key reads.
func (s *MigrationSession) ScanNodes() ([]string, error) {
	var out *C.char
	return s.nodes(C.sr_migration_session_scan_nodes(s.handle(), &out), out)
}

// ReadPlan is the nodes a read of key asks, in order.
func (s *MigrationSession) ReadPlan(key Key, moved bool) ([]string, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	return s.nodes(C.sr_migration_session_read_plan(s.handle(), k, C.bool(moved), &out), out)
}

// ReadPlanAt is ReadPlan at time nowMs.
func (s *MigrationSession) ReadPlanAt(key Key, moved bool, nowMs uint64) ([]string, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	return s.nodes(C.sr_migration_session_read_plan_at(s.handle(), k, C.bool(moved), C.uint64_t(nowMs), &out), out)
}

// WritePlan is where a write of key goes: {"node", "fence_epoch"}.
func (s *MigrationSession) WritePlan(key Key) (json.RawMessage, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	return s.jsonOut(C.sr_migration_session_write_plan(s.handle(), k, &out), out)
}

// LazySteps is a lazy session's steps for key: null or {"read_from", "write_to",
// "retire_from", "fence_epoch"}.
func (s *MigrationSession) LazySteps(key Key) (json.RawMessage, error) {
	k := cKey(key)
	defer free(k)
	var out *C.char
	return s.jsonOut(C.sr_migration_session_lazy_steps(s.handle(), k, &out), out)
}

// LazyGroups is the lazy moves of keys grouped by their steps: [{"steps":
// {"read_from", "write_to", "retire_from", "fence_epoch"}, "indices": [...]}], one per
// distinct steps in the order of its first key; keys that stay are left out; [] unless
// the session is lazy.
func (s *MigrationSession) LazyGroups(keys []Key) (json.RawMessage, error) {
	k, n := cKeys(keys)
	defer free(k)
	var out *C.char
	return s.jsonOut(C.sr_migration_session_lazy_groups(s.handle(), k, n, &out), out)
}

// ResumeAt is when a copy job starts its next step, once the last one ran from
// startedMs to finishedMs: the core's pace of dutyPerMille (thousandths of the wall
// time the job works, 1 to 1000) and minPauseMs (the shortest rest), each nil for the
// core's default.
func (s *MigrationSession) ResumeAt(startedMs, finishedMs uint64, dutyPerMille *uint32, minPauseMs *uint64) (uint64, error) {
	var duty C.uint32_t
	var pause C.uint64_t
	if dutyPerMille != nil {
		duty = C.uint32_t(*dutyPerMille)
	}
	if minPauseMs != nil {
		pause = C.uint64_t(*minPauseMs)
	}
	var v C.uint64_t
	err := check(C.sr_migration_session_resume_at(s.handle(), C.uint64_t(startedMs), C.uint64_t(finishedMs),
		C.bool(dutyPerMille != nil), duty, C.bool(minPauseMs != nil), pause, &v))
	runtime.KeepAlive(s)
	return uint64(v), err
}

// CopyBatch is a background copy's next batch from cursor, at most max units.
func (s *MigrationSession) CopyBatch(cursor, max uint32) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(C.sr_migration_session_copy_batch(s.handle(), C.uint32_t(cursor), C.uint32_t(max), &out), out)
}

// Actions is what the service does at nowMs: [{"kind": "retire", "node"}].
func (s *MigrationSession) Actions(nowMs uint64, moved bool) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(C.sr_migration_session_actions(s.handle(), C.uint64_t(nowMs), C.bool(moved), &out), out)
}

// Fenced is what a write refused by a fence at minEpoch means.
func (s *MigrationSession) Fenced(minEpoch uint64) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(C.sr_migration_session_fenced(s.handle(), C.uint64_t(minEpoch), &out), out)
}

// NextDeadline is when to call the session next after nowMs (ok false: never).
func (s *MigrationSession) NextDeadline(nowMs uint64) (deadlineMs uint64, ok bool, err error) {
	var present C.bool
	var d C.uint64_t
	err = check(C.sr_migration_session_next_deadline(s.handle(), C.uint64_t(nowMs), &present, &d))
	runtime.KeepAlive(s)
	return uint64(d), bool(present), err
}
