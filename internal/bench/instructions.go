package bench

import (
	"context"
	"fmt"
)

// Workloads and plugins CountedRun knows, by name.
var (
	countedWorkloads = map[string]func(*runner, *population) workload{
		"request": requestWorkload, "resume": resumeWorkload, "unguarded": unguardedWorkload,
	}
	countedPlugins = map[string]func(*Wasm) ([]byte, string){
		"guard":       func(w *Wasm) ([]byte, string) { return w.Guard, GuardConfig },
		"floor":       func(w *Wasm) ([]byte, string) { return w.Floor, "" },
		"passthrough": func(w *Wasm) ([]byte, string) { return w.Passthrough, "" },
	}
)

// CountedRun runs n exchanges of workload ("request", "resume",
// "unguarded") through plugin ("guard", "floor", "passthrough") after the
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
		return fmt.Errorf("bench: count: want a workload of request, resume, unguarded and a plugin of guard, floor, passthrough; got %q and %q", workloadName, plugin)
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
	run := mk(r, pop)
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
