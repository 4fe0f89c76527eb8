package shardroute

/*
#include "shardroute.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
)

// FollowerConfigDefaults is the follower's default config as JSON.
func FollowerConfigDefaults() (json.RawMessage, error) {
	var out *C.char
	if err := check(C.sr_follower_config_defaults(&out)); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

// Follower follows a topology: it is offered documents and decides which to install.
// One goroutine's at a time; Close frees it.
type Follower struct {
	ptr *C.sr_follower
}

// NewFollower is a follower with a config (JSON; nil for the defaults).
func NewFollower(config []byte) (*Follower, error) {
	p, n := textArg(config)
	if config == nil {
		p, n = nil, 0
	}
	var out *C.sr_follower
	if err := check(C.sr_follower_new(p, n, &out)); err != nil {
		return nil, err
	}
	f := &Follower{ptr: out}
	runtime.SetFinalizer(f, (*Follower).Close)
	return f, nil
}

// Close frees the follower. Closing twice is safe.
func (f *Follower) Close() error {
	if f != nil && f.ptr != nil {
		C.sr_follower_free(f.ptr)
		f.ptr = nil
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

func (f *Follower) handle() *C.sr_follower {
	if f == nil {
		return nil
	}
	return f.ptr
}

func (f *Follower) jsonOut(e *C.sr_error, out *C.char) (json.RawMessage, error) {
	runtime.KeepAlive(f)
	if err := check(e); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

// Offer offers a document (JSON) seen at revision: {"installed": {"epoch"}},
// {"unchanged": {}} or {"refused": {"code"}}.
func (f *Follower) Offer(document []byte, revision, nowMs uint64) (json.RawMessage, error) {
	p, n := textArg(document)
	var out *C.char
	return f.jsonOut(C.sr_follower_offer(f.handle(), p, n, C.uint64_t(revision), C.uint64_t(nowMs), &out), out)
}

// OfferDictionary offers a binary dictionary, as Offer.
func (f *Follower) OfferDictionary(data []byte, revision, nowMs uint64) (json.RawMessage, error) {
	p, n := bytesArg(data)
	var out *C.char
	return f.jsonOut(C.sr_follower_offer_dictionary(f.handle(), p, n, C.uint64_t(revision), C.uint64_t(nowMs), &out), out)
}

// OfferBytes offers a stored value (a JSON document or a binary dictionary), as Offer.
func (f *Follower) OfferBytes(data []byte, revision, nowMs uint64) (json.RawMessage, error) {
	p, n := bytesArg(data)
	var out *C.char
	return f.jsonOut(C.sr_follower_offer_bytes(f.handle(), p, n, C.uint64_t(revision), C.uint64_t(nowMs), &out), out)
}

// Disconnected tells the follower the watch was lost: when to reconnect.
func (f *Follower) Disconnected(nowMs uint64) (uint64, error) {
	var v C.uint64_t
	err := check(C.sr_follower_disconnected(f.handle(), C.uint64_t(nowMs), &v))
	runtime.KeepAlive(f)
	return uint64(v), err
}

// Connected tells the follower the watch is back.
func (f *Follower) Connected() error {
	err := check(C.sr_follower_connected(f.handle()))
	runtime.KeepAlive(f)
	return err
}

// NextDeadline is the pending reconnect time (ok false: none).
func (f *Follower) NextDeadline() (deadlineMs uint64, ok bool, err error) {
	var present C.bool
	var d C.uint64_t
	err = check(C.sr_follower_next_deadline(f.handle(), &present, &d))
	runtime.KeepAlive(f)
	return uint64(d), bool(present), err
}

// Publish is the write that publishes document after the one held:
// {"expected_revision", "epoch", "document"}.
func (f *Follower) Publish(document []byte) (json.RawMessage, error) {
	p, n := textArg(document)
	var out *C.char
	return f.jsonOut(C.sr_follower_publish(f.handle(), p, n, &out), out)
}

// Router is the router held (nil before the first document); close it apart.
func (f *Follower) Router() (*Router, error) {
	var out *C.sr_router
	err := check(C.sr_follower_router(f.handle(), &out))
	runtime.KeepAlive(f)
	if err != nil || out == nil {
		return nil, err
	}
	return newRouter(out), nil
}

// Revision is the revision held (ok false before the first document).
func (f *Follower) Revision() (revision uint64, ok bool, err error) {
	var present C.bool
	var v C.uint64_t
	err = check(C.sr_follower_revision(f.handle(), &present, &v))
	runtime.KeepAlive(f)
	return uint64(v), bool(present), err
}

// Stats is the follower's counters.
func (f *Follower) Stats() (json.RawMessage, error) {
	var out *C.char
	return f.jsonOut(C.sr_follower_stats(f.handle(), &out), out)
}
