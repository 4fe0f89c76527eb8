package shardroute_test

import (
	"strconv"
	"testing"

	sr "github.com/shardroute/shardroute/bindings-go"
)

const jump16 = `{"format": "shardroute/1", "epoch": 1, "nodes": [` +
	`{"id": "n0"}, {"id": "n1"}, {"id": "n2"}, {"id": "n3"}, {"id": "n4"}, {"id": "n5"}, {"id": "n6"}, {"id": "n7"}, ` +
	`{"id": "n8"}, {"id": "n9"}, {"id": "n10"}, {"id": "n11"}, {"id": "n12"}, {"id": "n13"}, {"id": "n14"}, {"id": "n15"}` +
	`], "strategy": {"type": "jump"}}`

// The hot calls allocate nothing on the Go side either (the ABI promises it on its side).
func TestHotPathAllocatesNothing(t *testing.T) {
	r := mustRouter(t, jump16)
	key := []byte("user:42")
	out := make([]uint32, 4)
	ints := []uint64{1, 2, 3, 4}
	for name, call := range map[string]func(){
		"Route":         func() { r.Route(key) },
		"RouteU64":      func() { r.RouteU64(42) },
		"RouteU64sInto": func() { r.RouteU64sInto(ints, out) },
	} {
		if n := testing.AllocsPerRun(100, call); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

func BenchmarkRoute(b *testing.B) {
	r, _ := sr.NewRouter([]byte(jump16))
	defer r.Close()
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte("user:" + strconv.Itoa(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Route(keys[i&1023])
	}
}

func BenchmarkRouteU64(b *testing.B) {
	r, _ := sr.NewRouter([]byte(jump16))
	defer r.Close()
	for i := 0; i < b.N; i++ {
		r.RouteU64(uint64(i & 1023))
	}
}

// BenchmarkRoutePacked routes 1024 keys per op.
func BenchmarkRoutePacked(b *testing.B) {
	r, _ := sr.NewRouter([]byte(jump16))
	defer r.Close()
	var data []byte
	offsets := []uint32{0}
	for i := 0; i < 1024; i++ {
		data = append(data, "user:"+strconv.Itoa(i)...)
		offsets = append(offsets, uint32(len(data)))
	}
	out := make([]uint32, 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.RoutePackedInto(data, offsets, out)
	}
}
