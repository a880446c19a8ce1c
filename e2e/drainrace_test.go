package e2e

import (
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// runDrainRace plays the same-transport drain race through the proxy: a
// tools/call answered on a POST /mcp SSE stream that the upstream holds
// open, cut by the client after it read the result's event and before it
// dispatched it, then a resume with that event's cursor.
func runDrainRace(t *testing.T, tg *target, opts ...func(*seedclient.Config)) (*seedclient.Report, counters) {
	t.Helper()
	before := tg.counters(t)
	cfg := seedclient.Config{
		BaseURL: tg.proxyURL, ControlURL: tg.upstreamURL, HTTPClient: tg.resumingClient(t),
		ResumeWait: 5 * time.Second, Retry: true,
	}
	for _, o := range opts {
		o(&cfg)
	}
	rep, err := seedclient.RunDrainRace(testContext(t), cfg)
	if err != nil {
		t.Fatalf("RunDrainRace: %v", err)
	}
	delta := tg.counters(t).since(before)
	t.Log(rep)
	t.Log("\n" + rep.Describe())
	t.Log("counters:", delta)
	if len(rep.StreamEventIDs) < 2 || rep.Cursor != rep.StreamEventIDs[len(rep.StreamEventIDs)-1] {
		t.Fatalf("POST stream carried %v, cursor %q: want at least a priming event and the result, the cursor the result's", rep.StreamEventIDs, rep.Cursor)
	}
	for _, id := range rep.StreamEventIDs {
		if !strings.HasPrefix(id, "http:") {
			t.Errorf("event ID %q on the Streamable HTTP stream is not tagged http:", id)
		}
	}
	if !rep.CutObserved {
		t.Errorf("the upstream did not notice the cut POST stream")
	}
	return rep, delta
}

// TestDrainRaceReinit: under unacked_cursor reinit (plugin-config/reinit.json) the
// resume with the unacknowledged result's cursor is answered at once with a
// forced re-initialization, reason drain_race, counted and logged.
func TestDrainRaceReinit(t *testing.T) {
	skipExternal(t, "unacked_cursor reinit is a different plugin configuration than envoy/envoy.yaml's (rewind)")
	tg := newTarget(t, targetOptions{config: "reinit.json"})
	rep, delta := runDrainRace(t, tg)
	summary("drain_race_reinit", seedLosses(rep), rep.Runs(), reinitCount(rep))

	if rep.ResumeStatus != 404 {
		t.Fatalf("resume answered %d (%s), want the forced re-initialization 404", rep.ResumeStatus, rep.ResumeBody)
	}
	if got := cursor.ReinitReason([]byte(rep.ResumeBody)); got != "drain_race" {
		t.Errorf("re-initialization reason %q, want drain_race; body %s", got, rep.ResumeBody)
	}
	if n := delta.get("reinit_drain_race_total"); n < 1 {
		t.Errorf("reinit_drain_race_total grew by %d, want ≥ 1 (counters: %s)", n, delta)
	}
	if n := delta.get("drain_race_detected_total"); n < 1 {
		t.Errorf("drain_race_detected_total grew by %d, want ≥ 1", n)
	}
	if !rep.Reinitialized || !rep.RetryResultArrived {
		t.Errorf("want the retry on a new session with a result: reinit=%t arrived=%t (%s)", rep.Reinitialized, rep.RetryResultArrived, rep.RetryError)
	}
	if rep.Runs() != 2 {
		t.Errorf("search_index ran %d times, want 2 (the cut call and the retry)", rep.Runs())
	}
	if tg.stack != nil && !tg.hasLogLine("mcp-resume-guard: drain race:") {
		t.Errorf("no drain race warn line; the plugin logged %q", tg.guardLog())
	}
}

// TestDrainRaceRewind: with unacked_cursor rewind (envoy/plugin-config/
// rewind.json) the proxy forwards the stream's previous event ID, so the
// upstream, which replays strictly after the cursor, replays the result:
// the client gets it exactly once, on the resume, and the tool runs once.
func TestDrainRaceRewind(t *testing.T) {
	skipExternal(t, "the rewind policy is a different plugin configuration than envoy/envoy.yaml's")
	tg := newTarget(t, targetOptions{config: "rewind.json"})
	rep, delta := runDrainRace(t, tg)
	summary("drain_race_rewind", seedLosses(rep), rep.Runs(), reinitCount(rep))

	if rep.ResumeStatus != 200 {
		t.Fatalf("resume answered %d (%s), want 200 with the replayed result", rep.ResumeStatus, rep.ResumeBody)
	}
	if !rep.ResultArrived || eventID(rep.ResultEventID) != eventID(rep.Cursor) {
		t.Errorf("result arrived=%t on %q; want it replayed as %q", rep.ResultArrived, rep.ResultEventID, rep.Cursor)
	}
	copies := 0
	for _, ev := range rep.ResumeEvents {
		if eventID(ev.ID) == eventID(rep.Cursor) {
			copies++
		}
	}
	if copies != 1 || rep.DuplicateResults != 0 {
		t.Errorf("the result came %d time(s) on the resume (+%d duplicates), want exactly once", copies, rep.DuplicateResults)
	}
	prev := strings.TrimPrefix(rep.StreamEventIDs[len(rep.StreamEventIDs)-2], "http:")
	if got := tg.stack.UpstreamCursors(); !slices.Equal(got, []string{prev}) {
		t.Errorf("the upstream received Last-Event-ID %q, want the previous event %q", got, prev)
	}
	if rep.Retried || rep.Runs() != 1 {
		t.Errorf("retried=%t, search_index ran %d times; want no retry and one run", rep.Retried, rep.Runs())
	}
	if n := delta.get("rewinds_total"); n != 1 {
		t.Errorf("rewinds_total grew by %d, want 1 (counters: %s)", n, delta)
	}
	if n := delta.reinits(); n != 0 {
		t.Errorf("%d re-initializations counted, want none (counters: %s)", n, delta)
	}
	if !tg.hasLogLine("mcp-resume-guard: drain race:") {
		t.Errorf("no drain race warn line; the plugin logged %q", tg.guardLog())
	}
}
