// Command soak is make soak: tool calls under faults through replicas of the
// trial proxy behind a round-robin front (package tools/internal/soak). It prints
// progress and details on stderr and exactly one line on stdout:
//
//	SOAK calls=… cuts=… lost=… duplicated_to_app=… tool_runs_per_call=… reinits=… fail_open=… vm_memory_mib_max=… vm_memory_mib_end=…
//
// It exits 1 on a lost result, a fail-open, guest memory that keeps
// growing, a scenario that could not be played or a run over -timeout; 2
// when it could not run.
//
//	build/bin/soak -wasm build/mcp-resume-guard.wasm -envoy envoy/envoy.yaml -timeout 10m
//
// as make soak runs it from the repository's root, after building it from
// the tools module into build/bin/ (ARGS adds flags).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/soak"
)

func main() {
	var (
		o       soak.Options
		wasm    = flag.String("wasm", "build/mcp-resume-guard.wasm", "the plugin (make build)")
		envoy   = flag.String("envoy", "envoy/envoy.yaml", "the Envoy bootstrap that configures every replica")
		timeout = flag.Duration("timeout", 10*time.Minute, "the whole soak's bound")
	)
	flag.IntVar(&o.Sessions, "sessions", 2000, "sessions (half of them the official Go SDK client's, a quarter the same client against the upstream's Python SDK layout)")
	flag.IntVar(&o.CallsPerSession, "calls-per-session", 11, "tool calls per session (the seed's sessions make one)")
	flag.IntVar(&o.Replicas, "replicas", 3, "replicas of the trial proxy")
	flag.IntVar(&o.VMs, "vms", 2, "plugin VMs per replica")
	flag.Float64Var(&o.CutRate, "cut-rate", 0.1, "share of the SDK's tools/call streams the replicas cut")
	flag.IntVar(&o.RestartEvery, "restart-every", 3000, "completed calls between restarts of the last replica")
	flag.IntVar(&o.FloodSessions, "flood", 2000, "made-up sessions in the flood")
	flag.IntVar(&o.Workers, "workers", 64, "sessions at once")
	flag.Parse()
	if err := run(o, *wasm, *envoy, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
}

func run(o soak.Options, wasmPath, envoyPath string, timeout time.Duration) error {
	var err error
	if o.Wasm, err = os.ReadFile(wasmPath); err != nil {
		return fmt.Errorf("%w (make build writes it)", err)
	}
	raw, err := os.ReadFile(envoyPath)
	if err != nil {
		return err
	}
	if o.Envoy, err = envoyconf.Parse(raw); err != nil {
		return fmt.Errorf("%s: %w", envoyPath, err)
	}
	o.Log = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rep, err := soak.Run(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprint(os.Stderr, rep.Details())
	fmt.Println(rep.Line())
	failures := rep.Failures()
	if ctx.Err() != nil {
		failures = append(failures, fmt.Sprintf("the soak did not finish within %s", timeout))
	}
	for _, f := range failures {
		fmt.Fprintln(os.Stderr, "soak: FAIL:", f)
	}
	if len(failures) > 0 {
		os.Exit(1)
	}
	return nil
}
