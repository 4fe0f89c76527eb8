// Package shardroute is the Go binding of shardroute: a thin cgo layer over
// libshardroute, the C ABI of the shardroute core (docs/c.md).
//
// Like the Python and Node bindings it converts types and maps errors; every routing
// and session decision is the core's. Handles (Router, Migration, the sessions) hold
// memory of the C library: free them with Close (a finalizer is only a safety net).
// Structured results are decoded into Go values where their shape is fixed, and
// returned as json.RawMessage (the shapes of conformance/README.md) where it is data.
package shardroute

/*
#cgo CFLAGS: -I${SRCDIR}/../target/capi/include
#cgo LDFLAGS: ${SRCDIR}/../target/capi/lib/libshardroute.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
#include <stdlib.h>
#include "shardroute.h"
*/
import "C"

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"unsafe"
)

// HeaderVersion is the version of the header this package was built against
// (SHARDROUTE_VERSION); Version returns the library's.
const HeaderVersion = C.SHARDROUTE_VERSION

// Version is the linked library's version, e.g. "0.1.0" (sr_version).
func Version() string { return C.GoString(C.sr_version()) }

// Error is an error of the core: Code is its stable code ("invalid_key",
// "invalid_topology", "limit_exceeded", ...: the same as .code in Python and
// JavaScript), Message its text.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// The stable error codes (docs/c.md, "Error codes").
const (
	CodeInvalidTopology  = "invalid_topology"
	CodeInvalidKey       = "invalid_key"
	CodeInvalidArgument  = "invalid_argument"
	CodeNoNodes          = "no_nodes"
	CodeLimitExceeded    = "limit_exceeded"
	CodeStaleEpoch       = "stale_epoch"
	CodeReadOnly         = "read_only"
	CodeCrossSlot        = "cross_slot"
	CodeTooManyRedirects = "too_many_redirects"
	CodeUnavailable      = "unavailable"
	CodeInternal         = "internal"
)

// check maps an sr_error (nil: success) to a *Error and frees it.
func check(e *C.sr_error) error {
	if e == nil {
		return nil
	}
	err := &Error{Code: C.GoString(C.sr_error_code(e)), Message: C.GoString(C.sr_error_message(e))}
	C.sr_error_free(e)
	return err
}

// takeJSON copies JSON text the library returned and frees it.
func takeJSON(p *C.char) json.RawMessage {
	if p == nil {
		return nil
	}
	s := C.GoString(p)
	C.sr_string_free(p)
	return json.RawMessage(s)
}

// decode copies, frees and decodes JSON text into out.
func decode(p *C.char, out interface{}) error {
	raw := takeJSON(p)
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("libshardroute returned unreadable JSON: %v", err)}
	}
	return nil
}

// borrowed copies (pointer, length) text borrowed from a handle.
func borrowed(p *C.char, n C.size_t) string { return C.GoStringN(p, C.int(n)) }

// bytesArg passes a Go byte slice for the call (NULL with length 0 when empty).
func bytesArg(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

// textArg passes Go bytes as (char *, length).
func textArg(b []byte) (*C.char, C.size_t) {
	p, n := bytesArg(b)
	return (*C.char)(unsafe.Pointer(p)), n
}

// strArg passes a Go string (copied to Go memory the call borrows).
func strArg(s string) (*C.char, C.size_t) { return textArg([]byte(s)) }

// optStrArg passes nil as NULL.
func optStrArg(s *string) (*C.char, C.size_t) {
	if s == nil {
		return nil, 0
	}
	return strArg(*s)
}

// Key is a key: bytes (text is its UTF-8 bytes) or an unsigned 64-bit integer.
type Key struct {
	isU64 bool
	bytes []byte
	value uint64
}

// BytesKey is a key of bytes.
func BytesKey(b []byte) Key { return Key{bytes: b} }

// StringKey is a text key (its UTF-8 bytes).
func StringKey(s string) Key { return Key{bytes: []byte(s)} }

// U64Key is an integer key.
func U64Key(v uint64) Key { return Key{isU64: true, value: v} }

// IsU64 tells an integer key from a key of bytes.
func (k Key) IsU64() bool { return k.isU64 }

// Bytes is the key's bytes (nil for an integer key).
func (k Key) Bytes() []byte { return k.bytes }

// U64 is the integer key's value (0 for a key of bytes).
func (k Key) U64() uint64 { return k.value }

// MarshalJSON writes the key object of the vectors: {"hex": "..."} or {"u64": "..."}.
func (k Key) MarshalJSON() ([]byte, error) {
	if k.isU64 {
		return json.Marshal(map[string]string{"u64": strconv.FormatUint(k.value, 10)})
	}
	return json.Marshal(map[string]string{"hex": hex.EncodeToString(k.bytes)})
}

// UnmarshalJSON reads a key object the library returns ({"hex"} or {"u64"}).
func (k *Key) UnmarshalJSON(data []byte) error {
	var object map[string]string
	if err := json.Unmarshal(data, &object); err != nil {
		return err
	}
	if text, ok := object["u64"]; ok && len(object) == 1 {
		v, err := strconv.ParseUint(text, 10, 64)
		*k = U64Key(v)
		return err
	}
	if text, ok := object["hex"]; ok && len(object) == 1 {
		b, err := hex.DecodeString(text)
		*k = BytesKey(b)
		return err
	}
	return fmt.Errorf("shardroute: not a key object: %s", data)
}

var keySize = C.size_t(unsafe.Sizeof(C.sr_key{}))

// cKeys copies keys into C memory (an sr_key may not point into Go memory); free
// with C.free on the returned pointer.
func cKeys(keys []Key) (*C.sr_key, C.size_t) {
	total := 0
	for _, k := range keys {
		total += len(k.bytes)
	}
	mem := C.malloc(keySize*C.size_t(len(keys)) + C.size_t(total) + 1)
	arr := unsafe.Slice((*C.sr_key)(mem), len(keys))
	data := unsafe.Slice((*byte)(unsafe.Add(mem, uintptr(keySize)*uintptr(len(keys)))), total+1)
	at := 0
	for i, k := range keys {
		if k.isU64 {
			arr[i] = C.sr_key{kind: C.SR_KEY_U64, value: C.uint64_t(k.value)}
			continue
		}
		n := copy(data[at:], k.bytes)
		arr[i] = C.sr_key{kind: C.SR_KEY_BYTES, bytes: (*C.uint8_t)(unsafe.Pointer(&data[at])), len: C.size_t(n)}
		if n == 0 {
			arr[i].bytes = nil
		}
		at += n
	}
	return (*C.sr_key)(mem), C.size_t(len(keys))
}

// cKey is cKeys for one key.
func cKey(k Key) *C.sr_key {
	p, _ := cKeys([]Key{k})
	return p
}

// cOptKey is cKey, NULL for nil.
func cOptKey(k *Key) *C.sr_key {
	if k == nil {
		return nil
	}
	return cKey(*k)
}

func free(p *C.sr_key) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// cStrs copies texts into C memory as sr_str (free with C.free).
func cStrs(texts []string) (*C.sr_str, C.size_t) {
	total := 0
	for _, s := range texts {
		total += len(s)
	}
	size := C.size_t(unsafe.Sizeof(C.sr_str{}))
	mem := C.malloc(size*C.size_t(len(texts)) + C.size_t(total) + 1)
	arr := unsafe.Slice((*C.sr_str)(mem), len(texts))
	data := unsafe.Slice((*byte)(unsafe.Add(mem, uintptr(size)*uintptr(len(texts)))), total+1)
	at := 0
	for i, s := range texts {
		n := copy(data[at:], s)
		arr[i] = C.sr_str{ptr: (*C.char)(unsafe.Pointer(&data[at])), len: C.size_t(n)}
		if n == 0 {
			arr[i].ptr = nil
		}
		at += n
	}
	return (*C.sr_str)(mem), C.size_t(len(texts))
}

// ParseU64 parses a decimal u64 the way every binding reads one (invalid_key for a
// sign, a fraction or a value past 2^64 - 1).
func ParseU64(text string) (uint64, error) {
	p, n := strArg(text)
	var v C.uint64_t
	if err := check(C.sr_parse_u64(p, n, &v)); err != nil {
		return 0, err
	}
	return uint64(v), nil
}

// UTF8FromUTF16 converts UTF-16 code units to UTF-8 (invalid_key for a lone surrogate).
func UTF8FromUTF16(units []uint16) ([]byte, error) {
	var p *C.uint16_t
	if len(units) > 0 {
		p = (*C.uint16_t)(unsafe.Pointer(&units[0]))
	}
	var out *C.uint8_t
	var n C.size_t
	if err := check(C.sr_utf8_from_utf16(p, C.size_t(len(units)), &out, &n)); err != nil {
		return nil, err
	}
	b := C.GoBytes(unsafe.Pointer(out), C.int(n))
	C.sr_bytes_free(out, n)
	return b, nil
}

// HashKey is the 64-bit hash of key under a hashing spec (JSON; nil: the default).
func HashKey(key Key, spec []byte) (uint64, error) {
	k := cKey(key)
	defer free(k)
	p, n := textArg(spec)
	var h C.uint64_t
	if err := check(C.sr_hash_key(k, p, n, &h)); err != nil {
		return 0, err
	}
	return uint64(h), nil
}

// Jump is jump consistent hash: the bucket of hash among buckets.
func Jump(hash uint64, buckets uint32) (uint32, error) {
	var s C.uint32_t
	if err := check(C.sr_jump(C.uint64_t(hash), C.uint32_t(buckets), &s)); err != nil {
		return 0, err
	}
	return uint32(s), nil
}

// ModuloMoves tells which shards' keys move when hash % old becomes hash % new.
func ModuloMoves(old, new uint32) ([][]uint32, error) {
	var out *C.char
	if err := check(C.sr_modulo_moves(C.uint32_t(old), C.uint32_t(new), &out)); err != nil {
		return nil, err
	}
	var moves [][]uint32
	return moves, decode(out, &moves)
}

// ParseRedirect reads a Redis MOVED/ASK error line: {"kind", "slot", "address"}.
func ParseRedirect(line string) (json.RawMessage, error) {
	p, n := strArg(line)
	var out *C.char
	if err := check(C.sr_parse_redirect(p, n, &out)); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

// Address is a host and a port.
type Address struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

// ParseAddress reads a host:port address.
func ParseAddress(address string) (Address, error) {
	p, n := strArg(address)
	var out *C.char
	var a Address
	if err := check(C.sr_parse_address(p, n, &out)); err != nil {
		return a, err
	}
	return a, decode(out, &a)
}

// Apply applies an operation (JSON) to a topology document (JSON): the result object
// {"topology", ...report}.
func Apply(topology, operation []byte) (json.RawMessage, error) {
	tp, tn := textArg(topology)
	op, on := textArg(operation)
	var out *C.char
	if err := check(C.sr_apply(tp, tn, op, on, &out)); err != nil {
		return nil, err
	}
	return takeJSON(out), nil
}

// EncodeDictionary is the binary dictionary of a topology document.
func EncodeDictionary(topology []byte) ([]byte, error) {
	tp, tn := textArg(topology)
	var out *C.uint8_t
	var n C.size_t
	if err := check(C.sr_encode_dictionary(tp, tn, &out, &n)); err != nil {
		return nil, err
	}
	b := C.GoBytes(unsafe.Pointer(out), C.int(n))
	C.sr_bytes_free(out, n)
	return b, nil
}

// DecodeDictionary reads a binary dictionary back: the topology's canonical JSON.
func DecodeDictionary(data []byte) (string, error) {
	p, n := bytesArg(data)
	var out *C.char
	if err := check(C.sr_decode_dictionary(p, n, &out)); err != nil {
		return "", err
	}
	return string(takeJSON(out)), nil
}
