package shardroute

/*
#include <stdlib.h>
#include "shardroute.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// ClusterConfigDefaults is the Redis Cluster session's default config as JSON.
func ClusterConfigDefaults() (json.RawMessage, error) {
	var out *C.char
	if err := check(C.sr_cluster_config_defaults(&out)); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

// ClusterSession is a sans-IO Redis Cluster session: it is fed replies and time and
// answers with actions (JSON). One goroutine's at a time; Close frees it.
type ClusterSession struct {
	ptr *C.sr_cluster_session
}

// Command is one command begun on a session, used only with that session; Close frees it.
type Command struct {
	ptr *C.sr_command
}

// NewClusterSession is a session with no table yet over seeds (host:port) and a
// config (JSON; nil for the defaults).
func NewClusterSession(seeds []string, config []byte) (*ClusterSession, error) {
	s, sn := cStrs(seeds)
	defer C.free(unsafe.Pointer(s))
	p, n := textArg(config)
	var out *C.sr_cluster_session
	if err := check(C.sr_cluster_session_new(s, sn, p, n, &out)); err != nil {
		return nil, err
	}
	session := &ClusterSession{ptr: out}
	runtime.SetFinalizer(session, (*ClusterSession).Close)
	return session, nil
}

// Close frees the session. Closing twice is safe. Its commands are closed apart.
func (s *ClusterSession) Close() error {
	if s != nil && s.ptr != nil {
		C.sr_cluster_session_free(s.ptr)
		s.ptr = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// Close frees the command. Closing twice is safe.
func (c *Command) Close() error {
	if c != nil && c.ptr != nil {
		C.sr_command_free(c.ptr)
		c.ptr = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

func (s *ClusterSession) handle() *C.sr_cluster_session {
	if s == nil {
		return nil
	}
	return s.ptr
}

func (c *Command) handle() *C.sr_command {
	if c == nil {
		return nil
	}
	return c.ptr
}

func (s *ClusterSession) jsonOut(c *Command, e *C.sr_error, out *C.char) (json.RawMessage, error) {
	runtime.KeepAlive(s)
	runtime.KeepAlive(c)
	if err := check(e); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

func (s *ClusterSession) deadline(c *Command, e *C.sr_error, present C.bool, d C.uint64_t) (uint64, bool, error) {
	runtime.KeepAlive(s)
	runtime.KeepAlive(c)
	if err := check(e); err != nil {
		return 0, false, err
	}
	return uint64(d), bool(present), nil
}

// Command begins a command on keys with access ("read" or "write") at nowMs: the
// command and its slot (cross_slot for keys in two slots).
func (s *ClusterSession) Command(keys []Key, access string, nowMs uint64) (*Command, uint32, error) {
	k, n := cKeys(keys)
	defer free(k)
	ap, an := strArg(access)
	var out *C.sr_command
	var slot C.uint32_t
	err := check(C.sr_cluster_session_command(s.handle(), k, n, ap, an, C.uint64_t(nowMs), &out, &slot))
	runtime.KeepAlive(s)
	if err != nil {
		return nil, 0, err
	}
	c := &Command{ptr: out}
	runtime.SetFinalizer(c, (*Command).Close)
	return c, uint32(slot), nil
}

// Poll is what to do next for c at nowMs: an action, one of {"send": {...}},
// {"wait": {...}}, {"refresh": {}}, {"done": {}}, {"fail": {"code"}}.
func (s *ClusterSession) Poll(c *Command, nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(c, C.sr_cluster_session_poll(s.handle(), c.handle(), C.uint64_t(nowMs), &out), out)
}

// Succeeded tells the session c's reply was a success: the next action.
func (s *ClusterSession) Succeeded(c *Command, nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(c, C.sr_cluster_session_succeeded(s.handle(), c.handle(), C.uint64_t(nowMs), &out), out)
}

// Stalled tells the session the attempt has had no reply for the stall time.
func (s *ClusterSession) Stalled(c *Command, nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(c, C.sr_cluster_session_stalled(s.handle(), c.handle(), C.uint64_t(nowMs), &out), out)
}

// OnDeadline tells the session c's deadline came.
func (s *ClusterSession) OnDeadline(c *Command, nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(c, C.sr_cluster_session_on_deadline(s.handle(), c.handle(), C.uint64_t(nowMs), &out), out)
}

// Failed tells the session the reply was an error: its text and class names or
// codes, most derived first.
func (s *ClusterSession) Failed(c *Command, text string, names []string, nowMs uint64) (json.RawMessage, error) {
	tp, tn := strArg(text)
	ns, nn := cStrs(names)
	defer C.free(unsafe.Pointer(ns))
	var out *C.char
	return s.jsonOut(c, C.sr_cluster_session_failed(s.handle(), c.handle(), tp, tn, ns, nn, C.uint64_t(nowMs), &out), out)
}

// Unreachable tells the session the connection failed (why: "refused", "reset", "timeout").
func (s *ClusterSession) Unreachable(c *Command, why string, nowMs uint64) (json.RawMessage, error) {
	wp, wn := strArg(why)
	var out *C.char
	return s.jsonOut(c, C.sr_cluster_session_unreachable(s.handle(), c.handle(), wp, wn, C.uint64_t(nowMs), &out), out)
}

// Deadline is when to ask about c next (ok false: no deadline).
func (s *ClusterSession) Deadline(c *Command) (deadlineMs uint64, ok bool, err error) {
	var present C.bool
	var d C.uint64_t
	e := C.sr_cluster_session_deadline(s.handle(), c.handle(), &present, &d)
	return s.deadline(c, e, present, d)
}

// RefreshSent tells the session a refresh request went to address at nowMs: its deadline.
func (s *ClusterSession) RefreshSent(address string, nowMs uint64) (deadlineMs uint64, ok bool, err error) {
	ap, an := strArg(address)
	var present C.bool
	var d C.uint64_t
	e := C.sr_cluster_session_refresh_sent(s.handle(), ap, an, C.uint64_t(nowMs), &present, &d)
	return s.deadline(nil, e, present, d)
}

// NextDeadline is the deadline of the session's own request in flight.
func (s *ClusterSession) NextDeadline() (deadlineMs uint64, ok bool, err error) {
	var present C.bool
	var d C.uint64_t
	e := C.sr_cluster_session_next_deadline(s.handle(), &present, &d)
	return s.deadline(nil, e, present, d)
}

// BatchDeadline is the deadline of one node's pipeline of a batch sent at nowMs.
func (s *ClusterSession) BatchDeadline(nowMs uint64) (deadlineMs uint64, ok bool, err error) {
	var present C.bool
	var d C.uint64_t
	e := C.sr_cluster_session_batch_deadline(s.handle(), C.uint64_t(nowMs), &present, &d)
	return s.deadline(nil, e, present, d)
}

// Timeout tells whether the session's request in flight was given up at nowMs.
func (s *ClusterSession) Timeout(nowMs uint64) (bool, error) {
	var v C.bool
	err := check(C.sr_cluster_session_timeout(s.handle(), C.uint64_t(nowMs), &v))
	runtime.KeepAlive(s)
	return bool(v), err
}

// Refreshed installs the table of a CLUSTER SHARDS reply (JSON) at nowMs.
func (s *ClusterSession) Refreshed(reply []byte, nowMs uint64) error {
	p, n := textArg(reply)
	err := check(C.sr_cluster_session_refreshed(s.handle(), p, n, C.uint64_t(nowMs)))
	runtime.KeepAlive(s)
	return err
}

// RefreshFailed tells the session no refresh candidate gave a usable reply.
func (s *ClusterSession) RefreshFailed(nowMs uint64) error {
	err := check(C.sr_cluster_session_refresh_failed(s.handle(), C.uint64_t(nowMs)))
	runtime.KeepAlive(s)
	return err
}

// Candidates is where a refresh asks, in order.
func (s *ClusterSession) Candidates() ([]string, error) {
	var out *C.char
	raw, err := s.jsonOut(nil, C.sr_cluster_session_candidates(s.handle(), &out), out)
	if err != nil {
		return nil, err
	}
	var addresses []string
	return addresses, json.Unmarshal(raw, &addresses)
}

// Stats is the session's counters.
func (s *ClusterSession) Stats() (json.RawMessage, error) {
	var out *C.char
	return s.jsonOut(nil, C.sr_cluster_session_stats(s.handle(), &out), out)
}

// Plan groups a batch of keys by connection: {"groups": [{"address", "readonly", "slots"}]}.
func (s *ClusterSession) Plan(keys []Key, access string) (json.RawMessage, error) {
	k, n := cKeys(keys)
	defer free(k)
	ap, an := strArg(access)
	var out *C.char
	return s.jsonOut(nil, C.sr_cluster_session_plan(s.handle(), k, n, ap, an, &out), out)
}

func (s *ClusterSession) count(e *C.sr_error, v C.uint32_t) (uint32, error) {
	runtime.KeepAlive(s)
	return uint32(v), check(e)
}

// PipelineQueued tells the session a command was queued on the connection: 0 (wait),
// 1 (schedule one flush at the end of the turn) or 2 (idle: write it now).
func (s *ClusterSession) PipelineQueued(address string, readonly bool) (uint32, error) {
	ap, an := strArg(address)
	var v C.uint32_t
	return s.count(C.sr_cluster_session_pipeline_queued(s.handle(), ap, an, C.bool(readonly), &v), v)
}

// PipelineTake is how many queued commands go in the next write (0: none now).
func (s *ClusterSession) PipelineTake(address string, readonly bool) (uint32, error) {
	ap, an := strArg(address)
	var v C.uint32_t
	return s.count(C.sr_cluster_session_pipeline_take(s.handle(), ap, an, C.bool(readonly), &v), v)
}

// PipelineDone tells the session one write ended: how many to write now.
func (s *ClusterSession) PipelineDone(address string, readonly bool) (uint32, error) {
	ap, an := strArg(address)
	var v C.uint32_t
	return s.count(C.sr_cluster_session_pipeline_done(s.handle(), ap, an, C.bool(readonly), &v), v)
}

// PipelineWithdrawn tells the session count queued, unwritten commands left the queue.
func (s *ClusterSession) PipelineWithdrawn(address string, readonly bool, count uint32) error {
	ap, an := strArg(address)
	_, err := s.count(C.sr_cluster_session_pipeline_withdrawn(s.handle(), ap, an, C.bool(readonly), C.uint32_t(count)), 0)
	return err
}

// PipelinePending is the commands queued and the writes in flight on the connection.
func (s *ClusterSession) PipelinePending(address string, readonly bool) (queued, writes uint32, err error) {
	ap, an := strArg(address)
	var q, w C.uint32_t
	err = check(C.sr_cluster_session_pipeline_pending(s.handle(), ap, an, C.bool(readonly), &q, &w))
	runtime.KeepAlive(s)
	return uint32(q), uint32(w), err
}
