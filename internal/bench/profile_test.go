package bench

import (
	"context"
	"os"
	"testing"
)

// TestQuickRun runs every measure with QuickOptions against freshly built
// plugins and prints the report. It takes about half a minute, so it runs
// only with BENCH_QUICK=1.
func TestQuickRun(t *testing.T) {
	if os.Getenv("BENCH_QUICK") == "" {
		t.Skip("set BENCH_QUICK=1 to run every measure on a small scale")
	}
	rep, err := Run(context.Background(), testWasm(t), QuickOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteText(os.Stdout); err != nil {
		t.Fatal(err)
	}
	f := rep.Figures()
	for i, v := range f.values() {
		if v <= 0 && Targets[i].Name != "vm_memory_growth_mib" {
			t.Errorf("%s = %v", Targets[i].Name, v)
		}
	}
	if len(rep.Profiles) != 3 || rep.Churn.Keys == 0 || rep.Churn.Keys > QuickOptions().ChurnMaxSessions {
		t.Errorf("profiles %d, churn keys %d", len(rep.Profiles), rep.Churn.Keys)
	}
}
