package bench

import (
	"context"
	"os"
	"testing"
)

// TestQuickRun runs every measure with QuickOptions, the guard against
// itself as the baseline, and prints the report: every figure of the
// table and every check of the budget is measured (node on PATH). It takes
// about a minute, so it runs only with BENCH_QUICK=1.
func TestQuickRun(t *testing.T) {
	if os.Getenv("BENCH_QUICK") == "" {
		t.Skip("set BENCH_QUICK=1 to run every measure on a small scale")
	}
	w := testWasm(t)
	o := QuickOptions()
	o.Progress = os.Stderr
	rep, err := Run(context.Background(), w, w.Guard, o, true)
	if err != nil {
		t.Fatal(err)
	}
	rep.GuardName, rep.BaselineName = "now", "now"
	if err := rep.WriteText(os.Stdout); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Budget() {
		if !c.Measured {
			t.Errorf("%s not measured", c.Name)
		}
	}
	for _, wl := range Workloads {
		for host, res := range map[string]Results{"V8": rep.v8Results(), "wazero": rep.Wazero} {
			if !res[costKey(wl)].Measured() {
				t.Errorf("%s: %s cost not measured", host, wl)
			}
		}
	}
	if rep.PerSession.Live == 0 || !rep.WazeroCompile.Measured() || !rep.WazeroVMStart.Measured() {
		t.Errorf("shared data %+v, compile %v, VM start %v", rep.PerSession, rep.WazeroCompile, rep.WazeroVMStart)
	}
}
