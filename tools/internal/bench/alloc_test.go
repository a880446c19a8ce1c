package bench

import (
	"context"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// TestAllocCounter checks the allocation counter against plugins whose
// heap is known: the GC probe configured to keep 64 KiB allocates that much
// more than the do-nothing plugin at its start (64 blocks of 1 KiB and the
// slice that holds them) and runs one GC cycle per request, and neither
// allocates per request.
func TestAllocCounter(t *testing.T) {
	ctx := context.Background()
	w := testWasm(t)
	var start [2]int64
	for i, c := range []struct {
		name   string
		wasm   []byte
		config string
		gcs    int64 // over 20 requests
	}{
		{"passthrough", w.Passthrough, "", 0},
		{"gcprobe", w.GCProbe, "64", 20},
	} {
		counter := &allocCounter{}
		h, err := wasmhost.New(ctx, wasmhost.Options{Wasm: c.wasm, PluginConfig: []byte(c.config), VMs: 1, Listener: counter})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(ctx)
		if counter.err != nil {
			t.Fatal(counter.err)
		}
		start[i] = counter.bytes
		r := &runner{h: h}
		x := Request(Session(1))
		if err := r.run(&x); err != nil { // warm-up
			t.Fatal(err)
		}
		counter.reset()
		for range 20 {
			if err := r.run(&x); err != nil {
				t.Fatal(err)
			}
		}
		if counter.bytes != 0 || counter.count != 0 || counter.gcs != c.gcs {
			t.Errorf("%s: 20 requests: %d bytes in %d allocations, %d GC cycles; want nothing allocated and %d cycles",
				c.name, counter.bytes, counter.count, counter.gcs, c.gcs)
		}
		if a := counter.per(20); a.GCCycles != float64(c.gcs)*AllocPer/20 {
			t.Errorf("%s: per %d: %+v", c.name, AllocPer, a)
		}
	}
	if d := start[1] - start[0]; d < 64<<10 || d > 80<<10 {
		t.Errorf("the GC probe's start allocated %d bytes more than the do-nothing plugin's, want 64 KiB and a little", d)
	}
}
