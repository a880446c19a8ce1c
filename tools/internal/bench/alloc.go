package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Allocs is what the guest's Go heap did over a workload, scaled to
// AllocPer exchanges (requests or SSE streams of o.StreamBytes).
type Allocs struct {
	Bytes    float64 // heap bytes allocated
	Count    float64 // heap allocations
	GCCycles float64 // garbage collection cycles completed
}

// AllocPer is the number of exchanges Allocs figures are given for.
const AllocPer = 100_000

// allocCounter is a wazero function listener on the guest's Go runtime:
// every call into its allocator (runtime.mallocgc and the size-specialised
// runtime.mallocgc* it may call directly), outermost ones only, with the
// size asked for, and every garbage collection cycle's end
// (runtime.gcMarkTermination, once per cycle).
//
// Go's wasm port passes arguments on its own stack in linear memory: at a
// function's entry the stack pointer (the module's global 0) points at the
// return address, the first argument (mallocgc's size) 8 bytes above.
// Only fresh calls count (fresh).
type allocCounter struct {
	depth        int
	bytes, count int64
	gcs          int64
	err          error
}

func (c *allocCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	switch name := def.Name(); {
	case strings.HasPrefix(name, "runtime.mallocgc"):
		return mallocListener{c}
	case name == "runtime.gcMarkTermination":
		return gcListener{c}
	}
	return nil
}

type mallocListener struct{ c *allocCounter }

func (l mallocListener) Before(_ context.Context, mod api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	c := l.c
	if c.depth == 0 && fresh(params) {
		c.count++
		im, ok := mod.(experimental.InternalModule)
		if !ok || im.NumGlobal() == 0 {
			c.err = fmt.Errorf("bench: the guest's stack pointer cannot be read")
		} else if size, ok := mod.Memory().ReadUint64Le(uint32(im.Global(0).Get()) + 8); !ok {
			c.err = fmt.Errorf("bench: mallocgc's size out of memory")
		} else {
			c.bytes += int64(size)
		}
	}
	c.depth++
}

func (l mallocListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {
	l.c.depth--
}

func (l mallocListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {
	l.c.depth--
}

type gcListener struct{ c *allocCounter }

func (l gcListener) Before(_ context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	if fresh(params) {
		l.c.gcs++
	}
}

func (gcListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}
func (gcListener) Abort(context.Context, api.Module, api.FunctionDefinition, error)    {}

// reset starts a new count.
func (c *allocCounter) reset() { c.bytes, c.count, c.gcs = 0, 0, 0 }

// per scales the count to AllocPer exchanges out of n.
func (c *allocCounter) per(n int) Allocs {
	k := float64(AllocPer) / float64(n)
	return Allocs{Bytes: float64(c.bytes) * k, Count: float64(c.count) * k, GCCycles: float64(c.gcs) * k}
}

// allocations runs each workload through the guard in a VM whose Go
// allocator is listened to: after the seed and one warm-up pass over the
// population (pools filled, buffers grown: the steady state), o.AllocRequests
// exchanges of each request workload and o.AllocStreams streams, counted.
func allocations(ctx context.Context, guard []byte, o Options) (map[string]Allocs, error) {
	c := &allocCounter{}
	maxT := o.TombstoneMaxSessions
	h, err := wasmhost.New(ctx, wasmhost.Options{Wasm: guard, PluginConfig: []byte(GuardConfigWith(maxT)), VMs: 1, Listener: c})
	if err != nil {
		return nil, fmt.Errorf("bench: starting a host: %w", err)
	}
	defer h.Close(ctx)
	r := &runner{h: h}
	pop := newPopulation(o.Sessions)
	if err := pop.seed(r); err != nil {
		return nil, err
	}
	stream := benchStream(o.StreamBytes)
	out := map[string]Allocs{}
	// The tombstones last: the other workloads run on an empty table.
	for _, wl := range []string{WorkGuarded, WorkUnguarded, WorkResume, WorkSSE, WorkTombstoned} {
		if wl == WorkTombstoned {
			o.progress("allocations: %d tombstones first", TombstoneFactor*maxT)
			if err := fillTombstones(r, TombstoneFactor*maxT); err != nil {
				return nil, err
			}
		}
		n := o.AllocRequests
		if wl == WorkSSE {
			n = o.AllocStreams
		}
		xs, unit := pop.exchanges(wl, stream)
		run := cycle(r, xs, unit)
		if _, err := run(len(xs)); err != nil {
			return nil, err
		}
		o.progress("allocations: %d exchanges of %s", n, wl)
		c.reset()
		if _, err := run(n); err != nil {
			return nil, err
		}
		if c.err != nil {
			return nil, c.err
		}
		out[wl] = c.per(n)
	}
	return out, nil
}

// fresh reports whether a Go function of the wasm port was entered by a
// call, not to rebuild a goroutine's stack: its one i32 parameter (the
// resume point; wazero leaves the upper half of the word undefined) is 0.
func fresh(params []uint64) bool { return len(params) == 1 && uint32(params[0]) == 0 }
