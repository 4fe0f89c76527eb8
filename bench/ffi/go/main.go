// The Go rows of bench/ffi/bench.sh: Route, RouteU64 and RoutePackedInto of the Go package
// (bindings-go) on the topology and keys of capi/src/bin/bench-route.rs, and two cgo call
// floors: an empty C function of this file's preamble (the floor of any cgo call) and
// sr_version of libshardroute (an exported function returning a static pointer, linked as
// the package links the library). `gobench ROUNDS` prints `row NAME NS` lines, ns per key
// (per call for the floors).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../../target/capi/include
#include <stdint.h>
#include "shardroute.h"
static void sr_bench_empty(void) {}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"

	sr "github.com/shardroute/shardroute/bindings-go"
)

const jump16 = `{"format": "shardroute/1", "epoch": 1, "nodes": [` +
	`{"id": "n0"}, {"id": "n1"}, {"id": "n2"}, {"id": "n3"}, {"id": "n4"}, {"id": "n5"}, {"id": "n6"}, {"id": "n7"}, ` +
	`{"id": "n8"}, {"id": "n9"}, {"id": "n10"}, {"id": "n11"}, {"id": "n12"}, {"id": "n13"}, {"id": "n14"}, {"id": "n15"}` +
	`], "strategy": {"type": "jump"}}`

const keys = 1024

var sum uint64

func run(name string, rounds int, body func(rounds int)) {
	body(rounds/10 + 1) // warm-up
	start := time.Now()
	body(rounds)
	fmt.Printf("row %s %.3f\n", name, float64(time.Since(start).Nanoseconds())/float64(rounds*keys))
}

func main() {
	rounds := 1000
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	if rounds < 1 {
		rounds = 1
	}
	r, err := sr.NewRouter([]byte(jump16))
	if err != nil {
		panic(err)
	}
	defer r.Close()
	byteKeys := make([][]byte, keys)
	var data []byte
	offsets := []uint32{0}
	for i := range byteKeys {
		byteKeys[i] = []byte("user:" + strconv.Itoa(i))
		data = append(data, byteKeys[i]...)
		offsets = append(offsets, uint32(len(data)))
	}
	out := make([]uint32, keys)
	run("go.route", rounds, func(n int) {
		for ; n > 0; n-- {
			for _, k := range byteKeys {
				s, err := r.Route(k)
				if err != nil {
					panic(err)
				}
				sum += uint64(s)
			}
		}
	})
	run("go.route_u64", rounds, func(n int) {
		for ; n > 0; n-- {
			for i := uint64(0); i < keys; i++ {
				s, err := r.RouteU64(i)
				if err != nil {
					panic(err)
				}
				sum += uint64(s)
			}
		}
	})
	run("go.packed", rounds, func(n int) {
		for ; n > 0; n-- {
			if err := r.RoutePackedInto(data, offsets, out); err != nil {
				panic(err)
			}
			sum += uint64(out[n%keys])
		}
	})
	run("go.floor", rounds, func(n int) {
		for ; n > 0; n-- {
			for i := 0; i < keys; i++ {
				C.sr_bench_empty()
			}
		}
	})
	run("go.floor_version", rounds, func(n int) {
		for ; n > 0; n-- {
			for i := 0; i < keys; i++ {
				sum += uint64(uintptr(unsafe.Pointer(C.sr_version())))
			}
		}
	})
	if sum == 42 {
		fmt.Println() // keeps the loops
	}
}
