// Command bench is the driver of make bench (package tools/internal/bench):
// what the guard costs, in V8 with Envoy's flags and in the embedded wazero
// host, and whether it keeps its performance budget against a baseline
// build. make bench builds it into build/bin/ and runs it from the
// repository's root, where it builds the plugins and reads its paths:
//
//	make bench                              # the cost table and the budget (about 4 minutes)
//	make bench ARGS=-ab                     # only the budget
//	make bench ARGS='-baseline old.wasm'    # the budget against another build
//	make bench ARGS='-ab -a HEAD'           # the budget of HEAD, not of the working tree
//	make bench ARGS=-quick                  # every figure, little precision
//
// A baseline or -a is a .wasm file or a commit; a commit is built in a git
// worktree of its own with its own make build, and kept in -dir. The run
// prints the cost table in the form of docs/performance.md, the heap
// allocations per workload, and every check of the budget. It exits 1 when
// a measure fails or the budget does not hold.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/bench"
)

func main() {
	o := bench.DefaultOptions()
	quick := flag.Bool("quick", false, "a small run: every figure, little precision")
	dir := flag.String("dir", "build", "`directory` for the built modules and the baseline's")
	rounds := flag.Int("rounds", 0, "interleaved rounds per comparison (default 15)")
	baseline := flag.String("baseline", bench.DefaultBaseline, "the budget's baseline: a `commit or .wasm file` (\"\": no budget)")
	ab := flag.Bool("ab", false, "only the budget: the guard against the baseline, memory, size, allocations")
	a := flag.String("a", "", "the guard measured: a `commit or .wasm file` instead of the working tree's build")
	flag.Parse()
	if *quick {
		o = bench.QuickOptions()
	}
	if *rounds > 0 {
		o.Rounds = *rounds
	}
	o.Progress = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	w, err := bench.BuildPlugins(ctx, bench.BuildOptions{Dir: *dir, Log: os.Stderr, NoGuard: *a != ""})
	if err != nil {
		fail(err)
	}
	guardName := "the working tree"
	if *a != "" {
		if w.Guard, guardName, err = bench.Baseline(ctx, ".", *a, *dir, os.Stderr); err != nil {
			fail(err)
		}
	}
	var base []byte
	baseName := ""
	if *baseline != "" {
		if base, baseName, err = bench.Baseline(ctx, ".", *baseline, *dir, os.Stderr); err != nil {
			fail(err)
		}
	} else if *ab {
		fail(fmt.Errorf("-ab needs a -baseline"))
	}
	rep, err := bench.Run(ctx, w, base, o, !*ab)
	if err != nil {
		fail(err)
	}
	rep.GuardName, rep.BaselineName = guardName, baseName
	if err := rep.WriteText(os.Stdout); err != nil {
		fail(err)
	}
	if ok, bad := rep.BudgetHolds(); !ok && base != nil {
		fmt.Fprintf(os.Stderr, "bench: the budget does not hold: %s\n", strings.Join(bad, "; "))
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "bench: %v\n", err)
	os.Exit(1)
}
