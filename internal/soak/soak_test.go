package soak

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
)

// TestShortSoak runs the soak's code on 100 sessions (make soak runs
// 2,000): every fault, restart and the flood happen, nothing may be lost,
// nothing may fail open, and every part of the traffic must really have
// run.
func TestShortSoak(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "mcp-resume-guard.wasm"))
	if err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	envoy, err := envoyconf.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Wasm: wasm, Envoy: envoy, Sessions: 100, CallsPerSession: 10, RestartEvery: 200, FloodSessions: 100, Workers: 32}
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
		if kindOf(i) == seedSession {
			seeds++
		}
	}
	if want := plannedCalls(full); rep.Calls != want {
		t.Errorf("%d calls made, want %d", rep.Calls, want)
	}
	if rep.Lost != 0 || rep.FailOpen != 0 || rep.ErrorCount != 0 || rep.FloodOdd != 0 {
		t.Errorf("failures: %s", strings.Join(rep.Failures(), "; "))
	}
	// Every part of the traffic ran: cuts at every point, restarts, the
	// flood, and the seed's sessions refused as cross-transport.
	for _, p := range cutPointNames {
		if rep.CutsAt[p] == 0 {
			t.Errorf("no stream cut %s the result: %v", p, rep.CutsAt)
		}
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
