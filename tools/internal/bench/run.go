package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/sharedusage"
)

// Options size a run.
type Options struct {
	Rounds      int // interleaved rounds per comparison
	Requests    int // requests per side and round
	Streams     int // SSE streams per side and round
	StreamBytes int // bytes per SSE stream
	Sessions    int // sessions every workload rotates over
	GCRequests  int // GC probe requests per side and round
	// TombstoneMaxSessions is max_sessions of the tombstoned workload's
	// guard, which tombstones TombstoneFactor times as many sessions.
	TombstoneMaxSessions int
	// Guest memory is read at request GrowthFrom and GrowthTo of a mix;
	// the heap reaches its steady size only after ~200,000 requests.
	GrowthFrom, GrowthTo int
	SharedSessions       int // sessions in the shared-data-per-session measure
	// AllocRequests and AllocStreams are the exchanges whose heap
	// allocations are counted, per request workload and for SSE.
	AllocRequests, AllocStreams int

	// Progress receives one line per step (nil: silent).
	Progress io.Writer
}

// DefaultOptions are the figures of make bench.
func DefaultOptions() Options {
	return Options{
		Rounds: 15, Requests: 20000, Streams: 32, StreamBytes: 1 << 20, Sessions: 1000, GCRequests: 100,
		TombstoneMaxSessions: DefaultMaxSessions,
		GrowthFrom:           200_000, GrowthTo: 400_000,
		SharedSessions: 10_000, AllocRequests: 100_000, AllocStreams: 100,
	}
}

// QuickOptions are a small run for tests: every figure, little precision.
func QuickOptions() Options {
	return Options{
		Rounds: 3, Requests: 400, Streams: 2, StreamBytes: 128 << 10, Sessions: 100, GCRequests: 10,
		TombstoneMaxSessions: 200,
		GrowthFrom:           1000, GrowthTo: 3000,
		SharedSessions: 100, AllocRequests: 1000, AllocStreams: 4,
	}
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "bench: "+format+"\n", args...)
	}
}

// Report holds every figure of a run.
type Report struct {
	Machine string
	Options Options
	// GuardName and BaselineName say what was measured ("" baseline: the
	// budget's comparisons did not run).
	GuardName, BaselineName string
	// Cost marks a run that measured the cost figures (the guard against
	// the do-nothing plugins), not only the budget.
	Cost bool

	Wazero Results
	V8     *V8Run // nil: node not on PATH

	Allocs                   map[string]Allocs // the guard's, by workload
	GrowthFrom, GrowthTo     int
	MemoryAtFrom, MemoryAtTo int64 // guest linear memory, bytes
	PerSession               sharedusage.Usage

	WasmBytes, PassthroughWasmBytes, BaselineWasmBytes int
	// Compile and VM start: the guard against passthrough, ns.
	V8Compile, V8CompileCPU, WazeroCompile, WazeroVMStart Pair
	NodeVersion                                           string

	Elapsed time.Duration
}

// Run measures the cost figures (cost) and the budget against baseline
// (nil: no budget comparisons) of the guard w.Guard.
func Run(ctx context.Context, w *Wasm, baseline []byte, o Options, cost bool) (*Report, error) {
	start := time.Now()
	rep := &Report{
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()),
		Options: o, Cost: cost,
		WasmBytes: len(w.Guard), PassthroughWasmBytes: len(w.Passthrough), BaselineWasmBytes: len(baseline),
	}
	if cost {
		if err := compileTimes(ctx, w, o, rep); err != nil {
			return rep, err
		}
	}
	p := newPlan(w, baseline, o, cost)
	var err error
	if rep.Wazero, err = p.runWazero(ctx, o); err != nil {
		return rep, err
	}
	if rep.V8, err = p.runV8(ctx, o); err != nil {
		return rep, err
	}
	if rep.Allocs, err = allocations(ctx, w.Guard, o); err != nil {
		return rep, err
	}
	if err := growth(ctx, w.Guard, o, rep); err != nil {
		return rep, err
	}
	if cost {
		if err := perSession(ctx, w.Guard, o, rep); err != nil {
			return rep, err
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// costKey is the comparison of workload's cost figure: the guard against
// passthrough (the copy plugin for SSE; the guard with a full tombstone
// table for the tombstoned workload).
func costKey(workload string) key {
	k := key{workload, modGuard, modPassthrough}
	switch workload {
	case WorkTombstoned:
		k.a = modGuardT
	case WorkSSE:
		k.b = modCopy
	}
	return k
}

// budgetKey is the comparison of workload's budget figure: the guard
// against the baseline; in the guard's VMs of the budget when the run
// measures the cost too (newPlan).
func budgetKey(workload string, cost bool) key {
	a, at := modGuard, modGuardT
	if cost {
		a, at = modBudget, modBudgetT
	}
	if workload == WorkTombstoned {
		return key{workload, at, modBaselineT}
	}
	return key{workload, a, modBaseline}
}
