package bench

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestV8Host runs the JS host (v8host.js) on a small plan so that it cannot
// rot: every module starts, the guards do their work in V8 (runV8 fails
// when a resume's cursor is not forwarded untagged or the last tombstoned
// session is not refused), and every comparison yields its rounds.
func TestV8Host(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not on PATH")
	}
	w := testWasm(t)
	o := QuickOptions()
	o.Rounds, o.Requests, o.Sessions, o.Streams, o.StreamBytes, o.TombstoneMaxSessions = 1, 100, 20, 1, 64<<10, 40
	p := newPlan(w, w.Guard, o, true)
	run, err := p.runV8(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.comparisons {
		if pr := run.Results[c.key]; pr.Ratio() <= 0 || pr.A() <= 0 {
			t.Errorf("%v: no figure (%+v)", c.key, pr)
		}
	}
	if len(run.Results) != len(p.comparisons) {
		t.Errorf("%d results for %d comparisons", len(run.Results), len(p.comparisons))
	}
	if run.VMStartNs[modGuard] <= 0 || run.VMStartNs[modPassthrough] <= 0 || run.MemoryBytes[modGuard] < 1<<20 {
		t.Errorf("VM starts %v, memory %v", run.VMStartNs, run.MemoryBytes)
	}
}

// TestParseV8 reads every kind of line and refuses what is not one.
func TestParseV8(t *testing.T) {
	run, checks, err := parseV8([]byte("start guard 2000000\n" +
		"check guard/resume {\"header\":\"e-1\",\"local\":false,\"shared_keys\":3}\n" +
		"round guarded guard passthrough 4.1 2000:500,2100:500,1950:500\n" +
		"round guarded guard passthrough 4.0 2000:400\n" +
		"memory guard 6291456\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := run.Results[key{"guarded", "guard", "passthrough"}]
	if p.Ratio() != 4.1 || len(p.Rounds) != 2 || p.A() != 2000 || p.B() != 500 || run.VMStartNs["guard"] != 2e6 || run.MemoryBytes["guard"] != 6<<20 ||
		checks["guard/resume"].Header == nil || *checks["guard/resume"].Header != "e-1" || checks["guard/resume"].SharedKeys != 3 {
		t.Errorf("parsed %+v, checks %+v", run, checks)
	}
	for _, bad := range []string{"round guarded guard passthrough 1", "round guarded guard passthrough 1 1:0", "round g a b 1 1:2,x", "round g a b 1 1:2 3:4",
		"start guard", "memory guard -1", "what 1 2", "check guard/resume {"} {
		if _, _, err := parseV8([]byte(bad + "\n")); err == nil || !strings.Contains(err.Error(), "unexpected line") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
