package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// seedIDs returns the IDs the seed's legacy stream carries when the
// upstream mints next first: the initialize and tools/list results, two
// progress notifications of the call, the call's result; and the ID of the
// progress notification for another request emitted after the cut.
func seedIDs(t *testing.T, next string, tag string) (stream []string, injected string) {
	t.Helper()
	first, err := dualstack.ParseEventID(next)
	if err != nil {
		t.Fatalf("upstream next_event_id: %v", err)
	}
	for i := range 5 {
		stream = append(stream, tag+(first+dualstack.EventID(i)).String())
	}
	return stream, (first + 5).String()
}

// eventID returns a tagged event ID as prefix and upstream ID, without
// what a minted cursor adds (kind, previous ID): "sse:~1r5.4.e-1043" is
// "sse:e-104". Anything else comes back as it is.
func eventID(tagged string) string {
	c, ok := cursor.ParseCursor(tagged)
	if !ok || c.Transport == cursor.TransportNone {
		return tagged
	}
	return c.Transport.Prefix() + c.ID
}

// eventIDs applies eventID to each ID.
func eventIDs(tagged []string) []string {
	out := make([]string, len(tagged))
	for i, id := range tagged {
		out[i] = eventID(id)
	}
	return out
}

// seedLosses counts the silent losses of a report: a resume accepted (2xx)
// that never delivered the result.
func seedLosses(rep *seedclient.Report) int {
	if rep.SilentLoss() {
		return 1
	}
	return 0
}

func reinitCount(rep *seedclient.Report) int {
	if rep.ForcedReinit() {
		return 1
	}
	return 0
}

// TestSeedBaseline reproduces the seed straight against the upstream: the
// legacy stream carries e-100 … e-104 (e-104 the search_index result), the
// client is cut before dispatching e-104, resumes at /mcp with the bridged
// session and Last-Event-ID e-104, is replayed only e-105, never gets the
// result, and its retry runs the tool a second time.
func TestSeedBaseline(t *testing.T) {
	tg := newTarget(t, targetOptions{})
	ctx := testContext(t)
	next := tg.upstreamStats(t).NextEventID
	if tg.stack != nil && next != "e-100" {
		t.Fatalf("in-process upstream starts at %s, want e-100", next)
	}
	wantStream, wantInjected := seedIDs(t, next, "")

	const wait = time.Second // the client's request timeout on the resume
	rep, err := seedclient.RunSeed(ctx, seedclient.Config{
		BaseURL: tg.upstreamURL, ControlURL: tg.upstreamURL, HTTPClient: tg.http,
		ResumeWait: wait, Retry: true,
	})
	if err != nil {
		t.Fatalf("RunSeed: %v", err)
	}
	t.Log(rep)
	t.Log("\n" + rep.Describe())
	summary("seed_baseline", seedLosses(rep), rep.Runs(), reinitCount(rep))

	if got := eventIDs(rep.StreamEventIDs); !slices.Equal(got, wantStream) {
		t.Errorf("legacy stream carried %v, want %v", got, wantStream)
	}
	if want := wantStream[4]; eventID(rep.Cursor) != want {
		t.Errorf("resume cursor %q, want the result's ID %q", rep.Cursor, want)
	}
	if !rep.CutObserved {
		t.Errorf("the upstream did not notice the cut stream")
	}
	if rep.InjectedEventID != wantInjected {
		t.Errorf("progress for another request got %q, want %q", rep.InjectedEventID, wantInjected)
	}
	if rep.ResumeStatus != 200 || rep.ResumeContentType != "text/event-stream" {
		t.Errorf("resume answered %d %q (%s), want an accepted event stream", rep.ResumeStatus, rep.ResumeContentType, rep.ResumeBody)
	}
	if got := rep.ResumeEventIDs(); !slices.Equal(got, []string{wantInjected}) {
		t.Errorf("resume replayed %v, want only %s", got, wantInjected)
	}
	if !rep.SilentLoss() {
		t.Errorf("want the seed's silent loss: the resume was accepted and the result never arrived")
	}
	if rep.ResumeDuration < wait {
		t.Errorf("the client waited %s on the resume, want its whole timeout %s", rep.ResumeDuration, wait)
	}
	if !rep.Retried || rep.Reinitialized || rep.RetrySessionID != rep.SessionID || !rep.RetryResultArrived {
		t.Errorf("want a retry on the same session that gets a result: retried=%t reinit=%t session=%s/%s arrived=%t (%s)",
			rep.Retried, rep.Reinitialized, rep.RetrySessionID, rep.SessionID, rep.RetryResultArrived, rep.RetryError)
	}
	if rep.Runs() != 2 {
		t.Errorf("search_index ran %d times, want 2 (the duplicate side effect)", rep.Runs())
	}
}

// TestSeedGuarded plays the same seed through the proxy: the legacy stream's
// IDs arrive tagged sse:, the resume at /mcp with sse:e-104 is refused at
// once with a forced re-initialization (404, reason cross_transport)
// instead of a silent hang, the counters and the warn line say so, and the
// refusal came from the other VM than the one that served the stream.
func TestSeedGuarded(t *testing.T) {
	tg := newTarget(t, targetOptions{})
	ctx := testContext(t)
	next := tg.upstreamStats(t).NextEventID
	wantStream, _ := seedIDs(t, next, "sse:")
	before := tg.counters(t)

	const wait = 10 * time.Second // a hang would cost the whole timeout
	rep, err := seedclient.RunSeed(ctx, seedclient.Config{
		BaseURL: tg.proxyURL, ControlURL: tg.upstreamURL, HTTPClient: tg.resumingClient(t),
		ResumeWait: wait, Retry: true,
	})
	if err != nil {
		t.Fatalf("RunSeed through the proxy: %v", err)
	}
	delta := tg.counters(t).since(before)
	t.Log(rep)
	t.Log("\n" + rep.Describe())
	t.Log("counters:", delta)
	summary("seed_guarded", seedLosses(rep), rep.Runs(), reinitCount(rep))

	if got := eventIDs(rep.StreamEventIDs); !slices.Equal(got, wantStream) {
		t.Errorf("legacy stream carried %v, want %v", got, wantStream)
	}
	if want := wantStream[4]; eventID(rep.Cursor) != want {
		t.Errorf("resume cursor %q, want %q", rep.Cursor, want)
	}
	if rep.ResumeStatus != 404 {
		t.Fatalf("resume answered %d %q, want the forced re-initialization 404", rep.ResumeStatus, rep.ResumeBody)
	}
	if got := cursor.ReinitReason([]byte(rep.ResumeBody)); got != "cross_transport" {
		t.Errorf("re-initialization reason %q, want cross_transport; body %s", got, rep.ResumeBody)
	}
	if rep.SilentLoss() {
		t.Errorf("silent loss through the guard")
	}
	if rep.ResumeDuration > wait/4 {
		t.Errorf("the refusal took %s; want it at once, well under the client's %s timeout", rep.ResumeDuration, wait)
	}
	if !rep.Retried || !rep.Reinitialized || rep.RetrySessionID == rep.SessionID || !rep.RetryResultArrived {
		t.Errorf("want the retry on a new session with a result: retried=%t reinit=%t arrived=%t (%s)",
			rep.Retried, rep.Reinitialized, rep.RetryResultArrived, rep.RetryError)
	}
	if rep.Runs() != 2 {
		t.Errorf("search_index ran %d times, want 2 (the cut call and the client's retry)", rep.Runs())
	}
	if n := delta.get("reinit_cross_transport_total"); n < 1 {
		t.Errorf("reinit_cross_transport_total grew by %d, want ≥ 1 (counters: %s)", n, delta)
	}
	if n := delta.get("events_tagged_total"); n < 5 {
		t.Errorf("events_tagged_total grew by %d, want ≥ 5", n)
	}
	if tg.stack == nil {
		t.Log("Envoy's log and VM placement are not visible from here; the warn line and the VM check are skipped")
		return
	}
	if !tg.hasLogLine("mcp-resume-guard: cross-transport cursor:") {
		t.Errorf("no cross-transport warn line; the plugin logged %q", tg.guardLog())
	}
	checkOtherVM(t, tg.stack.Records())
}

// checkOtherVM checks that the legacy stream and the refused resume ran on
// different VMs, so the refusal rested on the watermark in shared data, not
// on one VM's memory. The round-robin puts the resume, the 6th request, on
// the other VM of two; this checks it rather than assumes it.
func checkOtherVM(t *testing.T, recs []wasmhost.StreamRecord) {
	t.Helper()
	streamVM, resumeVM := -1, -1
	for _, r := range recs {
		switch {
		case r.Method == "GET" && strings.HasPrefix(r.Path, "/sse"):
			streamVM = r.VM
		case r.Method == "GET" && strings.HasPrefix(r.Path, "/mcp") && r.Status == 404:
			resumeVM = r.VM
		}
	}
	if streamVM < 0 || resumeVM < 0 {
		t.Fatalf("proxy records lack the legacy stream (VM %d) or the refused resume (VM %d): %+v", streamVM, resumeVM, recs)
	}
	if streamVM == resumeVM {
		t.Errorf("the legacy stream and the resume both ran on VM %d; want different VMs", streamVM)
	}
	t.Logf("legacy stream on VM %d, refused resume on VM %d", streamVM, resumeVM)
}
