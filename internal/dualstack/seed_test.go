package dualstack_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// start serves a new server on a loopback httptest.Server.
func start(t *testing.T, opts dualstack.Options) (*dualstack.Server, *httptest.Server) {
	t.Helper()
	srv := dualstack.New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return srv, ts
}

func seedConfig(url string) seedclient.Config {
	return seedclient.Config{BaseURL: url, ResumeWait: 400 * time.Millisecond, Retry: true}
}

func ids(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, dualstack.EventID(i).String())
	}
	return out
}

// TestSeedBaseline reproduces the seed's exact signature straight against the
// upstream: e-100 … e-104 on the legacy stream, a resume at /mcp from e-104
// that is accepted, replays e-105 only, never delivers the result, and a retry
// that runs the tool a second time.
func TestSeedBaseline(t *testing.T) {
	srv, ts := start(t, dualstack.Options{FirstEventID: 100})
	rep, err := seedclient.RunSeed(context.Background(), seedConfig(ts.URL))
	if err != nil {
		t.Fatalf("RunSeed: %v", err)
	}
	t.Log(rep)
	if want := ids(100, 104); !slices.Equal(rep.StreamEventIDs, want) {
		t.Errorf("legacy stream IDs = %v, want %v", rep.StreamEventIDs, want)
	}
	if rep.Cursor != "e-104" || rep.InjectedEventID != "e-105" {
		t.Errorf("cursor %q, injected %q; want e-104, e-105", rep.Cursor, rep.InjectedEventID)
	}
	if !rep.CutObserved {
		t.Error("the upstream never saw the legacy stream close")
	}
	if rep.ResumeStatus != 200 {
		t.Fatalf("resume status %d (%s), want 200: the bridged session and the legacy cursor are accepted", rep.ResumeStatus, rep.ResumeBody)
	}
	if got := rep.ResumeEventIDs(); !slices.Equal(got, []string{"e-105"}) {
		t.Errorf("resumed IDs = %v, want [e-105]", got)
	}
	if len(rep.ResumeEvents) > 0 && !strings.Contains(string(rep.ResumeEvents[0].Data), `"other-request"`) {
		t.Errorf("e-105 is not the unrelated progress notification: %s", rep.ResumeEvents[0].Data)
	}
	if d := rep.Describe(); !strings.Contains(d, "silently lost") || !strings.Contains(d, "ran 2 time(s)") {
		t.Errorf("Describe() does not tell the loss:\n%s", d)
	}
	if rep.ResultArrived || !rep.SilentLoss() {
		t.Errorf("result arrived=%t, silent loss=%t; want the silent loss", rep.ResultArrived, rep.SilentLoss())
	}
	if rep.ToolRunsBeforeRetry != 1 || !rep.Retried || !rep.RetryResultArrived || rep.ToolRuns != 2 {
		t.Errorf("runs before retry %d, retried %t (%s), runs %d; want 1, a successful retry, 2",
			rep.ToolRunsBeforeRetry, rep.Retried, rep.RetryError, rep.ToolRuns)
	}
	if got := srv.ToolRuns(dualstack.ToolSearchIndex); got != 2 {
		t.Errorf("ToolRuns = %d, want 2", got)
	}

	evs, ok := srv.Events(rep.SessionID)
	if !ok {
		t.Fatalf("session %s unknown to the server", rep.SessionID)
	}
	var logged []string
	for _, ev := range evs {
		logged = append(logged, ev.ID.String())
	}
	if !slices.Equal(logged[:6], ids(100, 105)) {
		t.Errorf("session log starts %v, want e-100 … e-105", logged)
	}
	if evs[4].Kind != dualstack.KindResponse || evs[4].Transport != dualstack.TransportSSE {
		t.Errorf("e-104 logged as %s on %q, want a response sent on the legacy stream", evs[4].Kind, evs[4].Transport)
	}
	if evs[5].Transport != dualstack.TransportNone {
		t.Errorf("e-105 carried by %q, want no stream (emitted after the cut)", evs[5].Transport)
	}
}

// TestSeedInclusiveReplay shows the same run with at-least-once replay: the
// resume from e-104 delivers the result and nothing needs a retry.
func TestSeedInclusiveReplay(t *testing.T) {
	srv, ts := start(t, dualstack.Options{FirstEventID: 100, Replay: dualstack.ReplayInclusive})
	rep, err := seedclient.RunSeed(context.Background(), seedConfig(ts.URL))
	if err != nil {
		t.Fatalf("RunSeed: %v", err)
	}
	t.Log(rep)
	if rep.ResumeStatus != 200 || !rep.ResultArrived || rep.ResultEventID != "e-104" {
		t.Fatalf("resume %d, arrived %t via %q; want the result replayed as e-104", rep.ResumeStatus, rep.ResultArrived, rep.ResultEventID)
	}
	if !strings.Contains(rep.ResultText, "search_index run 1") {
		t.Errorf("result text %q does not name run 1", rep.ResultText)
	}
	if rep.Retried || rep.ToolRuns != 1 || srv.ToolRuns(dualstack.ToolSearchIndex) != 1 {
		t.Errorf("retried %t, runs %d; want no retry and one run", rep.Retried, rep.ToolRuns)
	}
}

// TestDrainRaceStreamable plays the same-transport drain race: a POST SSE
// answer held open after its result and cut before dispatch. Exclusive replay
// loses the result; inclusive delivers it once.
func TestDrainRaceStreamable(t *testing.T) {
	for _, tc := range []struct {
		mode    dualstack.ReplayMode
		arrived bool
		runs    int
	}{
		{dualstack.ReplayExclusive, false, 2},
		{dualstack.ReplayInclusive, true, 1},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			_, ts := start(t, dualstack.Options{Replay: tc.mode})
			rep, err := seedclient.RunDrainRace(context.Background(), seedConfig(ts.URL))
			if err != nil {
				t.Fatalf("RunDrainRace: %v", err)
			}
			t.Log(rep)
			// initialize: priming e-1, result e-2; the call: priming e-3,
			// progress e-4 and e-5, result e-6.
			if want := ids(3, 6); !slices.Equal(rep.StreamEventIDs, want) {
				t.Errorf("POST stream IDs = %v, want %v", rep.StreamEventIDs, want)
			}
			if rep.Cursor != "e-6" || !rep.CutObserved {
				t.Errorf("cursor %q, cut observed %t; want e-6, true", rep.Cursor, rep.CutObserved)
			}
			if rep.ResumeStatus != 200 || rep.ResultArrived != tc.arrived || rep.ToolRuns != tc.runs {
				t.Errorf("resume %d, arrived %t, runs %d; want 200, %t, %d", rep.ResumeStatus, rep.ResultArrived, rep.ToolRuns, tc.arrived, tc.runs)
			}
		})
	}
}

// TestCleanResume: after a stream that ended cleanly, a resume from its last
// event is accepted and delivers nothing twice.
func TestCleanResume(t *testing.T) {
	_, ts := start(t, dualstack.Options{})
	rep, err := seedclient.RunCleanResume(context.Background(), seedConfig(ts.URL))
	if err != nil {
		t.Fatalf("RunCleanResume: %v", err)
	}
	t.Log(rep)
	if rep.ResumeStatus != 200 || !rep.ResultArrived || rep.DuplicateResults != 0 || rep.Retried || rep.ToolRuns != 1 {
		t.Errorf("resume %d, arrived %t, duplicates %d, retried %t, runs %d; want 200, true, 0, false, 1",
			rep.ResumeStatus, rep.ResultArrived, rep.DuplicateResults, rep.Retried, rep.ToolRuns)
	}
}

// TestSeedOnSharedUpstream: scenarios that share one upstream (as under
// docker-compose) keep the seed's signature and count their own tool runs.
func TestSeedOnSharedUpstream(t *testing.T) {
	srv, ts := start(t, dualstack.Options{FirstEventID: 100})
	for i := range 2 {
		rep, err := seedclient.RunSeed(context.Background(), seedConfig(ts.URL))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		t.Log(rep)
		last := rep.StreamEventIDs[len(rep.StreamEventIDs)-1]
		if len(rep.StreamEventIDs) != 5 || rep.Cursor != last || !rep.SilentLoss() ||
			!slices.Equal(rep.ResumeEventIDs(), []string{rep.InjectedEventID}) {
			t.Errorf("run %d lost the seed's signature: %s", i, rep)
		}
		if rep.ToolRunsAtStart != 2*i || rep.Runs() != 2 {
			t.Errorf("run %d: runs at start %d, during %d; want %d, 2", i, rep.ToolRunsAtStart, rep.Runs(), 2*i)
		}
	}
	if got := srv.ToolRuns(dualstack.ToolSearchIndex); got != 4 {
		t.Errorf("ToolRuns = %d, want 4", got)
	}
	if resp := do(t, "GET", ts.URL+"/", ""); !strings.Contains(readAll(t, resp), "GET /sse") {
		t.Error("GET / does not describe the endpoints")
	}
}
