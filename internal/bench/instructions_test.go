package bench

import (
	"context"
	"strings"
	"testing"
)

// TestCountedRunEveryWorkloadAndPlugin: -count runs every workload through
// every plugin it names (the full tombstone table only through the floor
// here: the guard's takes 30,000 sessions), and refuses names it does not
// know, saying which it knows.
func TestCountedRunEveryWorkloadAndPlugin(t *testing.T) {
	w := testWasm(t)
	o := QuickOptions()
	o.Sessions = 20
	o.StreamBytes = 16 << 10
	for name := range countedWorkloads {
		for plugin := range countedPlugins {
			if name == "fullbucket" && plugin == "guard" {
				continue
			}
			if err := CountedRun(context.Background(), w, o, name, plugin, 2); err != nil {
				t.Errorf("%s:%s: %v", name, plugin, err)
			}
		}
	}
	err := CountedRun(context.Background(), w, o, "nosuch", "guard", 1)
	if err == nil || !strings.Contains(err.Error(), "fullbucket") {
		t.Errorf("unknown workload: %v, want an error naming the known ones", err)
	}
}
