package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/front"
)

// TestLegacyDrainRace plays the seed's drain race on the legacy transport
// alone: a legacy stream is cut after the search_index result was read and
// before it was processed, and the client reconnects GET /sse with
// Last-Event-ID = the result's ID, which the upstream (resuming legacy
// streams as the seed's migration shim does, strictly after the cursor)
// answers by skipping the result. A legacy reconnect carries no session, so
// no watermark can tell this apart from a clean reconnect; the cursor can.
// Straight to the upstream the result is lost; through the guard, under
// the default policy and under unacked_cursor reinit alike (the cursor rule
// never re-initializes a legacy route), it is replayed and the tool runs
// once.
func TestLegacyDrainRace(t *testing.T) {
	skipExternal(t, "the upstream must resume legacy streams (dualstack LegacyResume), which docker-compose's does not")
	for _, tc := range []struct {
		name    string
		unacked any // nil: the plugin's default
		direct  bool
	}{
		{name: "baseline", direct: true},
		{name: "default"},
		{name: "reinit", unacked: "reinit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := StartReplicas(context.Background(), ReplicaOptions{
				Wasm:         pluginWasm(t),
				PluginConfig: pluginConfigWith(t, map[string]any{"unacked_cursor": tc.unacked}),
				Replicas:     1,
				Front:        front.RoundRobin,
				Upstream:     dualstack.Options{FirstEventID: seedFirstEventID, LegacyResume: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(rs.Close)
			c := newScenarioClient(rs, nil)
			defer c.close()
			if tc.direct {
				c.direct()
			}
			ctx := testContext(t)
			before := counters(rs.Counters())
			sid, cursor, err := c.legacyCut(ctx, dualstack.ToolSearchIndex)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.resume(ctx, "/sse", "", cursor, callTool)
			if err != nil {
				t.Fatal(err)
			}
			delta := counters(rs.Counters()).since(before)
			runs := rs.Upstream.ToolRuns(dualstack.ToolSearchIndex)
			t.Logf("session %s, cursor %s: resume %+v, search_index ran %d times; counters %s", sid, cursor, res, runs, delta)
			summary("legacy_drain_race_"+tc.name, b2i(res.silentLoss()), runs, b2i(res.reinit()))

			if tc.direct {
				if !res.silentLoss() {
					t.Errorf("straight to the upstream: %+v, want the seed's silent loss (the resume skips the result)", res)
				}
				return
			}
			if res.status != 200 || !res.delivered || runs != 1 {
				t.Errorf("through the guard: resume %+v, search_index ran %d times; want the result replayed on the resumed stream and one run", res, runs)
			}
			if got := fmt.Sprint(delta.get("drain_race_from_cursor_total"), delta.get("rewinds_total"), delta.reinits()); got != "1 1 0" {
				t.Errorf("drain_race_from_cursor_total, rewinds_total, re-initializations grew by %s, want 1 1 0 (counters %s)", got, delta)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
