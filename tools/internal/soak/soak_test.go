package soak

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
)

// shortOptions are the short soak's: the built plugin behind
// envoy/envoy.yaml, 100 sessions of 10 calls, a restart every 200 calls, a
// flood of 100 made-up sessions.
func shortOptions(t *testing.T) Options {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "..", "build", "mcp-resume-guard.wasm"))
	if err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	envoy, err := envoyconf.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Wasm: wasm, Envoy: envoy, Sessions: 100, CallsPerSession: 10, RestartEvery: 200, FloodSessions: 100, Workers: 32}
}

// TestShortSoak runs the soak's code on 100 sessions (make soak runs
// 2,000): every fault, restart and the flood happen, nothing may be lost,
// nothing may fail open, and every part of the traffic must really have
// run.
func TestShortSoak(t *testing.T) {
	t.Parallel()
	o := shortOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Line())
	t.Log("\n" + rep.Details())
	full, _ := o.withDefaults()
	seeds := 0
	for i := range o.Sessions {
		if kindOf(o, i) == seedSession {
			seeds++
		}
	}
	if want := plannedCalls(full); rep.Calls != want {
		t.Errorf("%d calls made, want %d", rep.Calls, want)
	}
	if rep.Lost != 0 || rep.FailOpen != 0 || rep.ErrorCount != 0 || rep.FloodOdd != 0 {
		t.Errorf("failures: %s", strings.Join(rep.Failures(), "; "))
	}
	// Every part of the traffic ran: cuts at every point, of the default
	// layout's POST streams and of the Python layout's GET polls, restarts,
	// the flood, and the seed's sessions refused as cross-transport.
	for _, p := range cutPointNames {
		if rep.CutsAt[p] == 0 || rep.CutsAt["python_"+p] == 0 {
			t.Errorf("no stream cut %s the result, in the default layout or the Python layout: %v", p, rep.CutsAt)
		}
	}
	if n := rep.SessionsBy["sdk_python"]; n != o.Sessions/4 {
		t.Errorf("%d sessions against the Python layout, want a quarter of %d: %v", n, o.Sessions, rep.SessionsBy)
	}
	if rep.Restarts == 0 || rep.Flood != 2*int64(o.FloodSessions) || rep.ReinitsBy["cross_transport"] != seeds {
		t.Errorf("restarts %d, flood requests %d, cross-transport re-initializations %d; want > 0, %d, %d",
			rep.Restarts, rep.Flood, rep.ReinitsBy["cross_transport"], 2*o.FloodSessions, seeds)
	}
	if rep.Memory.Samples < 10 || rep.Memory.MaxMiB == 0 || rep.Memory.VMs == 0 {
		t.Errorf("guest memory: %+v; want samples of every VM, and VMs that lived through the late windows", rep.Memory)
	}
	if r := rep.ToolRunsPerCall(); r < 1 || r > 1.2 {
		t.Errorf("%.3f tool runs per call, want 1 to 1.2 (a few calls run again after an explicit failure)", r)
	}
}

// TestSoakSeesGrowingMemory runs a short soak through a plugin that keeps
// 256 KiB per request (internal/refplugins/leak, built as the plugin is): the memory
// verdict must say it keeps growing. The plugin guards nothing, so the
// traffic is the SDK client's only, without faults.
func TestSoakSeesGrowingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	t.Parallel()
	dir := t.TempDir()
	res, err := builder.Build(context.Background(), builder.Options{
		Package: "./internal/refplugins/leak", Output: filepath.Join(dir, "leak.wasm"),
		Dir: filepath.Join("..", "..", ".."), Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	o := shortOptions(t)
	if o.Wasm, err = os.ReadFile(res.Output); err != nil {
		t.Fatal(err)
	}
	o.Replicas, o.Sessions, o.CallsPerSession, o.SDKOnly = 1, 8, 16, true
	o.CutRate, o.RestartEvery, o.FloodSessions = -1, -1, -1
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Line())
	t.Log("\n" + rep.Details())
	if rep.Memory.Growing == "" || !slices.ContainsFunc(rep.Failures(), func(f string) bool { return strings.HasPrefix(f, "guest memory: ") }) {
		t.Errorf("memory verdict %+v, failures %q: want growing guest memory among the failures", rep.Memory, rep.Failures())
	}
}
