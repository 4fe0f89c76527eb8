package shardroute_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sr "github.com/shardroute/shardroute/bindings-go"
)

const jumpDoc = `{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "strategy": {"type": "jump"}}`

const u64Doc = `{"format": "shardroute/1", "epoch": 1, "hashing": {"keys": "u64", "integers": "identity"}, "nodes": [{"id": "k0"}, {"id": "k1"}, {"id": "k2"}, {"id": "k3"}, {"id": "k4"}], "strategy": {"type": "modulo"}}`

func code(t *testing.T, err error) string {
	t.Helper()
	var e *sr.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *shardroute.Error, got %T %v", err, err)
	}
	if e.Message == "" || !strings.HasPrefix(e.Error(), e.Code+": ") {
		t.Fatalf("error without a message: %#v", e)
	}
	return e.Code
}

func mustRouter(t *testing.T, doc string) *sr.Router {
	t.Helper()
	r, err := sr.NewRouter([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestVersionMatchesHeader(t *testing.T) {
	if sr.Version() != sr.HeaderVersion || sr.Version() == "" {
		t.Fatalf("library %q, header %q", sr.Version(), sr.HeaderVersion)
	}
}

func TestErrorCodes(t *testing.T) {
	if _, err := sr.NewRouter([]byte("{}")); code(t, err) != sr.CodeInvalidTopology {
		t.Fatalf("{}: %v", err)
	}
	if _, err := sr.NewRouter([]byte{0xff, 0xfe}); code(t, err) != sr.CodeInvalidTopology {
		t.Fatalf("not UTF-8: %v", err)
	}
	if _, err := sr.NewRouter(nil); code(t, err) != sr.CodeInvalidTopology {
		t.Fatalf("empty: %v", err)
	}
	if _, err := sr.ParseU64("-1"); code(t, err) != sr.CodeInvalidKey {
		t.Fatalf("ParseU64(-1): %v", err)
	}
	if v, err := sr.ParseU64("18446744073709551615"); err != nil || v != ^uint64(0) {
		t.Fatalf("ParseU64(max): %d %v", v, err)
	}
	if _, err := sr.UTF8FromUTF16([]uint16{0xd800}); code(t, err) != sr.CodeInvalidKey {
		t.Fatalf("lone surrogate: %v", err)
	}
	// The header says invalid_argument; the core (and the jump vectors) say no_nodes.
	if _, err := sr.Jump(1, 0); code(t, err) != sr.CodeNoNodes {
		t.Fatalf("Jump(1, 0): %v", err)
	}
	r := mustRouter(t, jumpDoc)
	if _, err := r.ShardOwner(3); code(t, err) != sr.CodeInvalidArgument {
		t.Fatalf("ShardOwner(3): %v", err)
	}
	if _, err := r.RoutePacked([]byte("ab"), []uint32{0, 3}); code(t, err) != sr.CodeInvalidArgument {
		t.Fatalf("offset past the data: %v", err)
	}
	newer := mustRouter(t, strings.Replace(jumpDoc, `"epoch": 1`, `"epoch": 2`, 1))
	if _, err := newer.Replace(r); code(t, err) != sr.CodeStaleEpoch {
		t.Fatalf("Replace by an older epoch: %v", err)
	}
}

// A text key under "keys": "u64" that is not an integer is a *Error of code invalid_key,
// on every path (bytes, batch, structured).
func TestBadKeyIsInvalidKey(t *testing.T) {
	r := mustRouter(t, u64Doc)
	if _, err := r.Route([]byte("07")); code(t, err) != sr.CodeInvalidKey {
		t.Fatalf("Route: %v", err)
	}
	if _, err := r.Node([]byte("user")); code(t, err) != sr.CodeInvalidKey {
		t.Fatalf("Node: %v", err)
	}
	if _, err := r.RouteMany([]sr.Key{sr.U64Key(1), sr.StringKey("x")}); code(t, err) != sr.CodeInvalidKey {
		t.Fatalf("RouteMany: %v", err)
	}
	if _, err := r.Replicas(sr.StringKey("x"), 2); code(t, err) != sr.CodeInvalidKey {
		t.Fatalf("Replicas: %v", err)
	}
	if shard, err := r.Route([]byte("7")); err != nil || shard != 2 {
		t.Fatalf("Route(7) = %d, %v", shard, err)
	}
}

// Close twice is safe, and a closed handle is refused (invalid_argument), never used.
func TestCloseTwice(t *testing.T) {
	r, err := sr.NewRouter([]byte(jumpDoc))
	if err != nil {
		t.Fatal(err)
	}
	clone, err := r.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if r.Close() != nil || r.Close() != nil {
		t.Fatal("Close returned an error")
	}
	if _, err := r.Route([]byte("user:42")); code(t, err) != sr.CodeInvalidArgument {
		t.Fatalf("Route on a closed router: %v", err)
	}
	if node, err := clone.Node([]byte("user:42")); err != nil || node != "b" {
		t.Fatalf("the clone outlives the router: %q %v", node, err)
	}
	clone.Close()
	var nilRouter *sr.Router
	if nilRouter.Close() != nil {
		t.Fatal("Close on nil")
	}
	m, err := sr.NewMigration(mustRouter(t, jumpDoc), mustRouter(t, strings.Replace(jumpDoc, `"epoch": 1`, `"epoch": 2`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m.Close()
	if _, err := m.ScanNodes(); code(t, err) != sr.CodeInvalidArgument {
		t.Fatalf("ScanNodes on a closed migration: %v", err)
	}
	s, err := sr.NewClusterSession([]string{"127.0.0.1:7000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := s.Command([]sr.Key{sr.StringKey("k")}, "read", 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Close()
	s.Close()
	s.Close()
	f, err := sr.NewFollower(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	f.Close()
}

// The batch calls give the single call's shards; u64 stays uint64.
func TestBatchesAgreeWithRoute(t *testing.T) {
	r := mustRouter(t, jumpDoc)
	var data []byte
	offsets := []uint32{0}
	var keys []sr.Key
	var ints []uint64
	for _, k := range []string{"user:1", "", "user:3", "héllo"} {
		data = append(data, k...)
		offsets = append(offsets, uint32(len(data)))
		keys = append(keys, sr.StringKey(k))
	}
	for _, v := range []uint64{0, 1, 1 << 63, ^uint64(0)} {
		ints = append(ints, v)
		keys = append(keys, sr.U64Key(v))
	}
	packed, err := r.RoutePacked(data, offsets)
	if err != nil {
		t.Fatal(err)
	}
	u64s, err := r.RouteU64s(ints)
	if err != nil {
		t.Fatal(err)
	}
	many, err := r.RouteMany(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		var want uint32
		if k.IsU64() {
			want, err = r.RouteU64(k.U64())
		} else {
			want, err = r.Route(k.Bytes())
		}
		if err != nil || many[i] != want {
			t.Fatalf("key %d: many %d, single %d (%v)", i, many[i], want, err)
		}
		if i < 4 && packed[i] != want || i >= 4 && u64s[i-4] != want {
			t.Fatalf("key %d: packed/u64s differ from %d", i, want)
		}
	}
	if err := r.RouteU64sInto(ints, make([]uint32, 1)); code(t, err) != sr.CodeInvalidArgument {
		t.Fatalf("an out array too short: %v", err)
	}
}

// README.md's example, built and run as a user's program, prints what README says.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := func(fence string) string {
		_, rest, found := strings.Cut(string(readme), "```"+fence+"\n")
		body, _, closed := strings.Cut(rest, "```\n")
		if !found || !closed {
			t.Fatalf("README.md has no %s block", fence)
		}
		return body
	}
	dir := t.TempDir()
	here, _ := os.Getwd()
	mod := "module example\n\ngo 1.19\n\nrequire github.com/shardroute/shardroute/bindings-go v0.0.0\n\n" +
		"replace github.com/shardroute/shardroute/bindings-go => " + here + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(block("go")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, stderr.String())
	}
	if want := block("text"); string(out) != want {
		t.Fatalf("README example printed\n%s\nREADME says\n%s", out, want)
	}
}

// Ask answers with an offset and a length into its argument (never a pointer into it):
// the address comes back whole for many lengths, from a fresh buffer each call.
func TestAskAnswersFromItsArgument(t *testing.T) {
	cluster := `{"format": "shardroute/1", "epoch": 5, "nodes": [{"id": "m1", "address": "127.0.0.1:7001"},
		{"id": "m2", "address": "127.0.0.1:7002"}], "strategy": {"type": "redis_cluster", "slots": [
		{"nodes": ["m1"], "start": 0, "end": 8191}, {"nodes": ["m2"], "start": 8192, "end": 16383}]}}`
	router, err := sr.NewRouter([]byte(cluster))
	if err != nil {
		t.Fatal(err)
	}
	defer router.Close()
	for i := 0; i < 200; i++ {
		address := fmt.Sprintf("%s:%d", strings.Repeat("h", i), 7000+i)
		got, err := router.Ask(7, address)
		if err != nil || got != address {
			t.Fatalf("Ask(7, %q) = %q, %v", address, got, err)
		}
	}
	if _, err := router.Ask(7, "no-port"); code(t, err) != sr.CodeInvalidArgument {
		t.Fatalf("Ask without a port: %v", err)
	}
}
