package bench

import (
	"context"
	"fmt"
)

// Workloads and plugins CountedRun knows, by name.
var (
	countedWorkloads = map[string]func(*runner, *population, Options) workload{
		"request":   func(r *runner, p *population, _ Options) workload { return requestWorkload(r, p) },
		"resume":    func(r *runner, p *population, _ Options) workload { return resumeWorkload(r, p) },
		"unguarded": func(r *runner, p *population, _ Options) workload { return unguardedWorkload(r, p) },
		// fullbucket is request on a full tombstone table (CountedRun
		// fills it).
		"fullbucket": func(r *runner, p *population, _ Options) workload { return requestWorkload(r, p) },
		"sse": func(r *runner, p *population, o Options) workload {
			return sseWorkload(r, p, Chunks(SSEStream(o.StreamBytes, 1000, 1), ChunkBytes))
		},
	}
	countedPlugins = map[string]func(*Wasm) ([]byte, string){
		"guard":       func(w *Wasm) ([]byte, string) { return w.Guard, GuardConfig },
		"floor":       func(w *Wasm) ([]byte, string) { return w.Floor, "" },
		"passthrough": func(w *Wasm) ([]byte, string) { return w.Passthrough, "" },
		"pathfloor":   func(w *Wasm) ([]byte, string) { return w.PathFloor, "" },
		"copy":        func(w *Wasm) ([]byte, string) { return w.PassthroughCopy, "" },
	}
)

// CountedRun runs n exchanges of workload ("request", "resume",
// "unguarded", "sse": one benchmark stream, "fullbucket": request on a full
// tombstone table) through plugin ("guard",
// "floor", "passthrough", "pathfloor", "copy") after the
// same seeding and one warm-up pass as the timed figures, the n exchanges
// inside Counted alone: under valgrind --tool=callgrind
// --zero-before='*bench.Counted' --dump-before='*bench.CountedDone' the
// first dump holds the instructions of the n exchanges (host and guest),
// which a busy machine does not change (docs/performance.md).
// (--toggle-collect does not work: wazero's calls into compiled code switch
// stacks, and callgrind then takes Counted for returned.)
func CountedRun(ctx context.Context, w *Wasm, o Options, workloadName, plugin string, n int) error {
	mk, ok := countedWorkloads[workloadName]
	pick, ok2 := countedPlugins[plugin]
	if !ok || !ok2 {
		return fmt.Errorf("bench: count: want a workload of request, resume, unguarded, sse, fullbucket and a plugin of guard, floor, passthrough, pathfloor, copy; got %q and %q", workloadName, plugin)
	}
	wasm, cfg := pick(w)
	h, err := newHost(ctx, wasm, cfg, 1)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	pop := newPopulation(o.Sessions)
	r := &runner{h: h}
	if err := pop.seed(r); err != nil {
		return err
	}
	if workloadName == "fullbucket" {
		// Requests on a full tombstone table: the guard's built as
		// request_overhead_ratio_tombstones builds it, the floor's
		// lookups finding a full bucket's value.
		switch plugin {
		case "guard":
			err = fillTombstones(r, TombstoneFactor*DefaultMaxSessions)
		case "floor":
			err = fillFloorTombstones(h, pop)
		}
		if err != nil {
			return err
		}
	}
	run := mk(r, pop, o)
	if _, err := run(len(pop.sessions)); err != nil {
		return err
	}
	return Counted(run, n)
}

// Counted runs n operations of run, then calls CountedDone: callgrind's
// --zero-before and --dump-before name them.
//
//go:noinline
func Counted(run workload, n int) error {
	_, err := run(n)
	CountedDone()
	return err
}

// CountedDone marks the end of Counted's operations.
//
//go:noinline
func CountedDone() { countedDone++ }

var countedDone int
