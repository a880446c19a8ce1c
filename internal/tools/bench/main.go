// Command bench is the driver of make bench: it builds the plugin and its
// baselines (package internal/bench), measures them side by side in the
// embedded proxy-wasm host, prints every figure with its method, and ends
// with one BENCH name=value line per figure (issues 5 and 9).
//
//	go run ./internal/tools/bench            # the full run (a few minutes)
//	go run ./internal/tools/bench -quick     # every figure, little precision
//	go run ./internal/tools/bench -ab old.wasm  # this guard against another build
//	go run ./internal/tools/bench -a new.wasm -ab old.wasm  # two builds
//	go run ./internal/tools/bench -tombstones   # only request_overhead_ratio_tombstones and its floor
//	go run ./internal/tools/bench -v8           # only the V8 figures (node on PATH)
//	go run ./internal/tools/bench -overheads    # only the wazero request, resume, floor, unguarded and SSE figures
//
// It exits 1 when a measure fails; a missed target is reported, not an
// error (-strict makes it one). A target against a baseline that the job's
// floor misses too in the same run is reported out of reach on the
// machine, never an error: its floor ratio holds the guard there.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/bench"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

func main() {
	o := bench.DefaultOptions()
	quick := flag.Bool("quick", false, "a small run: every figure, little precision")
	dir := flag.String("dir", "build", "`directory` for the built modules")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed (not one out of reach: its job's floor misses it too)")
	rounds := flag.Int("rounds", 0, "interleaved rounds per comparison (default 9)")
	churn := flag.Int("churn", 0, "sessions through the churn measure (default 1000000)")
	tombstones := flag.Bool("tombstones", false, "only measure request_overhead_ratio_tombstones (the request overhead on a table that has seen 3 x max_sessions tombstones) and its floor's figures")
	v8 := flag.Bool("v8", false, "only measure the V8 figures (v8_*: the request, unguarded and resume workloads in node's V8 with Envoy's flags)")
	overheads := flag.Bool("overheads", false, "only measure the wazero request, resume, floor, unguarded and SSE figures")
	count := flag.String("count", "", "only run `workload:plugin:n` (e.g. resume:guard:2000; workloads request, resume, unguarded, sse (n streams), fullbucket (request on a full tombstone table); plugins guard, floor, passthrough, pathfloor, copy) for instruction counts: see bench.CountedRun")
	ab := flag.String("ab", "", "only compare the guard built now (A) with the guard `module` at this path (B), A/B interleaved")
	a := flag.String("a", "", "with -ab: the guard `module` at this path is A instead of the guard built now")
	flag.Parse()
	if *quick {
		o = bench.QuickOptions()
	}
	if *rounds > 0 {
		o.Rounds = *rounds
	}
	if *churn > 0 {
		o.ChurnSessions = *churn
	}
	o.Progress = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *count != "" {
		countRun(ctx, o, *dir, *count)
		return
	}
	w, err := bench.BuildPlugins(ctx, bench.BuildOptions{Dir: *dir, Log: os.Stderr})
	if err != nil {
		fail(err)
	}
	if *ab != "" {
		b, err := os.ReadFile(*ab)
		if err != nil {
			fail(err)
		}
		guard, name := w.Guard, "now"
		if *a != "" {
			if guard, err = os.ReadFile(*a); err != nil {
				fail(err)
			}
			name = *a
		}
		rep, err := bench.CompareBuilds(ctx, guard, b, o)
		if err != nil {
			fail(err)
		}
		if err := rep.WriteText(os.Stdout, name, *ab); err != nil {
			fail(err)
		}
		return
	}
	if *tombstones {
		rep, err := bench.RunTombstones(ctx, w, o)
		if err != nil {
			fail(err)
		}
		if err := rep.WriteTombstones(os.Stdout); err != nil {
			fail(err)
		}
		return
	}
	var rep *bench.Report
	if *v8 || *overheads {
		rep, err = bench.RunSteps(ctx, w, o, *v8, *overheads)
	} else {
		rep, err = bench.Run(ctx, w, o)
	}
	if err != nil {
		fail(err)
	}
	if err := rep.WriteText(os.Stdout); err != nil {
		fail(err)
	}
	if err := rep.WriteBench(os.Stdout); err != nil {
		fail(err)
	}
	if missed := rep.Figures().Missed(); *strict && len(missed) > 0 {
		fmt.Fprintf(os.Stderr, "bench: targets missed: %s\n", strings.Join(missed, "; "))
		os.Exit(1)
	}
}

// countRun runs -count's exchanges on the modules a build left in dir (it
// builds nothing: see bench.ReadPlugins).
func countRun(ctx context.Context, o bench.Options, dir, spec string) {
	parts := strings.Split(spec, ":")
	n := 0
	if len(parts) == 3 {
		n, _ = strconv.Atoi(parts[2])
	}
	if n <= 0 {
		fail(fmt.Errorf("-count %q: want workload:plugin:n", spec))
	}
	if err := wasmhost.UseCompilationCacheDir(filepath.Join(dir, "wazero-cache")); err != nil {
		fail(err)
	}
	w, err := bench.ReadPlugins(dir)
	if err != nil {
		fail(err)
	}
	if err := bench.CountedRun(ctx, w, o, parts[0], parts[1], n); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "bench: %v\n", err)
	os.Exit(1)
}
