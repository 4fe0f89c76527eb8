package shardroute

/*
#include "shardroute.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
)

// SourceSession is a sans-IO topology source (etcd, ZooKeeper, HTTP): it is fed
// connections, responses, bytes and time, and answers with actions (a JSON array).
// One goroutine's at a time; Close frees it.
type SourceSession struct {
	ptr *C.sr_source_session
}

// NewSourceSession is a session from a config (JSON: {"source": "etcd" | "http" |
// "zookeeper", ...}).
func NewSourceSession(config []byte) (*SourceSession, error) {
	p, n := textArg(config)
	var out *C.sr_source_session
	if err := check(C.sr_source_session_new(p, n, &out)); err != nil {
		return nil, err
	}
	s := &SourceSession{ptr: out}
	runtime.SetFinalizer(s, (*SourceSession).Close)
	return s, nil
}

// Close frees the session (it is not the protocol's close: see Shutdown). Closing
// twice is safe.
func (s *SourceSession) Close() error {
	if s != nil && s.ptr != nil {
		C.sr_source_session_free(s.ptr)
		s.ptr = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

func (s *SourceSession) handle() *C.sr_source_session {
	if s == nil {
		return nil
	}
	return s.ptr
}

func (s *SourceSession) actions(e *C.sr_error, out *C.char) (json.RawMessage, error) {
	runtime.KeepAlive(s)
	if err := check(e); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

// Start starts the session at nowMs: its actions.
func (s *SourceSession) Start(nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.actions(C.sr_source_session_start(s.handle(), C.uint64_t(nowMs), &out), out)
}

// Opened tells the session the connection of a connect action (id) is open.
func (s *SourceSession) Opened(id, nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.actions(C.sr_source_session_opened(s.handle(), C.uint64_t(id), C.uint64_t(nowMs), &out), out)
}

// Response is the response to request id: status, headers (a JSON object; nil for
// none) and body.
func (s *SourceSession) Response(id uint64, status uint16, headers, body []byte, nowMs uint64) (json.RawMessage, error) {
	hp, hn := textArg(headers)
	bp, bn := bytesArg(body)
	var out *C.char
	return s.actions(C.sr_source_session_response(s.handle(), C.uint64_t(id), C.uint16_t(status), hp, hn, bp, bn, C.uint64_t(nowMs), &out), out)
}

// Chunk is bytes read on stream or connection id.
func (s *SourceSession) Chunk(id uint64, data []byte, nowMs uint64) (json.RawMessage, error) {
	p, n := bytesArg(data)
	var out *C.char
	return s.actions(C.sr_source_session_chunk(s.handle(), C.uint64_t(id), p, n, C.uint64_t(nowMs), &out), out)
}

// Failed tells the session request or connection id failed (code: "unreachable",
// "closed", "limit_exceeded").
func (s *SourceSession) Failed(id uint64, code, message string, nowMs uint64) (json.RawMessage, error) {
	cp, cn := strArg(code)
	mp, mn := strArg(message)
	var out *C.char
	return s.actions(C.sr_source_session_failed(s.handle(), C.uint64_t(id), cp, cn, mp, mn, C.uint64_t(nowMs), &out), out)
}

// Timer tells the session its deadline came.
func (s *SourceSession) Timer(nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.actions(C.sr_source_session_timer(s.handle(), C.uint64_t(nowMs), &out), out)
}

// Shutdown tells the session the shell closes it (sr_source_session_close): its
// last actions. Close still frees it.
func (s *SourceSession) Shutdown(nowMs uint64) (json.RawMessage, error) {
	var out *C.char
	return s.actions(C.sr_source_session_close(s.handle(), C.uint64_t(nowMs), &out), out)
}

// Call is a call on the source (op: JSON, e.g. {"op": "get", "key"}) at nowMs: the
// call's number and the actions.
func (s *SourceSession) Call(op []byte, nowMs uint64) (uint64, json.RawMessage, error) {
	p, n := textArg(op)
	var number C.uint64_t
	var out *C.char
	actions, err := s.actions(C.sr_source_session_call(s.handle(), p, n, C.uint64_t(nowMs), &number, &out), out)
	return uint64(number), actions, err
}

// Deadline is when to call Timer next (ok false: no timer).
func (s *SourceSession) Deadline() (deadlineMs uint64, ok bool, err error) {
	var present C.bool
	var d C.uint64_t
	err = check(C.sr_source_session_deadline(s.handle(), &present, &d))
	runtime.KeepAlive(s)
	return uint64(d), bool(present), err
}

// State is the session's state as JSON.
func (s *SourceSession) State() (json.RawMessage, error) {
	var out *C.char
	return s.actions(C.sr_source_session_state(s.handle(), &out), out)
}
