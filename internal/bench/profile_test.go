package bench

import (
	"context"
	"os"
	"testing"
)

// TestProfileCallbacks prints per-callback profiles when BENCH_PROFILE is
// set (a diagnostic, not a check).
func TestProfileCallbacks(t *testing.T) {
	if os.Getenv("BENCH_PROFILE") == "" {
		t.Skip("set BENCH_PROFILE=1 to print per-callback profiles")
	}
	ctx := context.Background()
	w := testWasm(t)
	pop := newPopulation(500)
	var req, res, str []wasmhostExchange
	for i, s := range pop.sessions {
		req = append(req, Request(s))
		res = append(res, Resume(s, pop.cursors[i]))
	}
	stream := Chunks(SSEStream(256<<10, 1000, 1), ChunkBytes)
	for _, s := range pop.sessions[:50] {
		str = append(str, Stream(s, stream))
	}
	for _, c := range []struct {
		name string
		xs   []wasmhostExchange
		base []byte
	}{{"request", req, w.Passthrough}, {"resume", res, w.Passthrough}, {"sse 256 KiB", str, w.PassthroughCopy}} {
		g, err := ProfileCallbacks(ctx, w.Guard, GuardConfig, pop.streams, c.xs, 5)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ProfileCallbacks(ctx, c.base, "", pop.streams, c.xs, 5)
		if err != nil {
			t.Fatal(err)
		}
		WriteProfiles(os.Stdout, c.name, g, b)
	}
}
