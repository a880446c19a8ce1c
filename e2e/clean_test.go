package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// checkNoAlarm checks that a scenario counted no drain race and no
// re-initialization, and stripped at least one cursor.
func checkNoAlarm(t *testing.T, delta counters) {
	t.Helper()
	if n := delta.get("drain_race_detected_total"); n != 0 {
		t.Errorf("drain_race_detected_total grew by %d on a clean resume (counters: %s)", n, delta)
	}
	if n := delta.reinits(); n != 0 {
		t.Errorf("%d re-initializations counted on a clean resume (counters: %s)", n, delta)
	}
	if n := delta.get("cursors_stripped_total"); n < 1 {
		t.Errorf("cursors_stripped_total grew by %d, want ≥ 1 (counters: %s)", n, delta)
	}
}

// TestCleanResumeAfterEnd: a tools/call whose POST stream ended cleanly
// after the result, then a resume with the result's cursor. The resume is
// accepted with the tag stripped, the result is not sent again, the tool
// ran once, and the guard raised no alarm.
func TestCleanResumeAfterEnd(t *testing.T) {
	tg := newTarget(t, targetOptions{})
	before := tg.counters(t)
	rep, err := seedclient.RunCleanResume(testContext(t), seedclient.Config{
		BaseURL: tg.proxyURL, ControlURL: tg.upstreamURL, HTTPClient: tg.resumingClient(t),
		ResumeWait: time.Second, Retry: true,
	})
	if err != nil {
		t.Fatalf("RunCleanResume: %v", err)
	}
	delta := tg.counters(t).since(before)
	t.Log(rep)
	t.Log("\n" + rep.Describe())
	t.Log("counters:", delta)
	summary("clean_resume_after_end", seedLosses(rep), rep.Runs(), reinitCount(rep))

	if !strings.HasPrefix(rep.Cursor, "http:") {
		t.Errorf("cursor %q is not tagged http:", rep.Cursor)
	}
	if rep.ResumeStatus != 200 || rep.ResumeContentType != "text/event-stream" {
		t.Fatalf("resume answered %d %q (%s), want an accepted event stream", rep.ResumeStatus, rep.ResumeContentType, rep.ResumeBody)
	}
	if !rep.ResultArrived || rep.DuplicateResults != 0 || rep.Retried {
		t.Errorf("result arrived=%t duplicates=%d retried=%t; want it once, on the call's stream", rep.ResultArrived, rep.DuplicateResults, rep.Retried)
	}
	if rep.Runs() != 1 {
		t.Errorf("search_index ran %d times, want 1", rep.Runs())
	}
	checkNoAlarm(t, delta)
	if tg.stack != nil {
		want := strings.TrimPrefix(eventID(rep.Cursor), "http:")
		if got := tg.stack.UpstreamCursors(); !slices.Equal(got, []string{want}) {
			t.Errorf("the upstream received Last-Event-ID %q, want %q (the tag stripped)", got, want)
		}
	}
}

// TestCleanResumeAfterNotification: the session's standalone GET stream is
// cut right after a notification (not a response) arrived; the resume with
// that notification's cursor is accepted with the tag stripped, the live
// stream goes on, the earlier tool result is not sent again, and the guard
// raised no alarm.
func TestCleanResumeAfterNotification(t *testing.T) {
	tg := newTarget(t, targetOptions{})
	ctx := testContext(t)
	runsBefore := tg.upstreamStats(t).SearchIndexRuns
	before := tg.counters(t)
	c := &rawClient{base: tg.proxyURL, http: tg.resumingClient(t)}

	sid, err := c.initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := c.call(ctx, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_index","arguments":{"query":"clean"}}}`)
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].data, `"id":2`) {
		t.Fatalf("tools/call answer %+v: want the result last", evs)
	}

	// The standalone stream, one notification on it, then a cut.
	streamCtx, cut := context.WithCancel(ctx)
	defer cut()
	resp, err := c.openStream(streamCtx, "/mcp", sid, "", nil)
	if err != nil {
		t.Fatalf("GET /mcp: %v", err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /mcp: %s", resp.Status)
	}
	waitUntil(t, "the upstream to hold the standalone stream", func() bool { return tg.openStreams(t, sid) == 1 })
	upID := tg.injectProgress(t, sid, "before the cut")
	ev, err := readUntil(newSSEReader(resp.Body), "before the cut")
	if err != nil {
		t.Fatalf("standalone stream: %v", err)
	}
	if want := "http:" + upID; ev.id != want {
		t.Errorf("notification carried id %q, want %q", ev.id, want)
	}
	cut()
	resp.Body.Close()
	waitUntil(t, "the upstream to notice the cut", func() bool { return tg.openStreams(t, sid) == 0 })

	// The resume: accepted, live, and without the earlier result.
	resumeCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	resumed, err := c.openStream(resumeCtx, "/mcp", sid, ev.id, nil)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	defer resumed.Body.Close()
	reinit, losses := 0, 0
	if resumed.StatusCode == 404 {
		reinit = 1
	}
	if resumed.StatusCode != 200 {
		summary("clean_resume_after_notification", losses, tg.upstreamStats(t).SearchIndexRuns-runsBefore, reinit)
		t.Fatalf("resume with %s answered %s, want 200", ev.id, resumed.Status)
	}
	waitUntil(t, "the resumed stream to open", func() bool { return tg.openStreams(t, sid) == 1 })
	tg.injectProgress(t, sid, "after the resume")
	r := newSSEReader(resumed.Body)
	var replayed []sseEvent
	for {
		got, err := r.next()
		if err != nil {
			losses = 1
			t.Errorf("resumed stream ended before the next notification: %v", err)
			break
		}
		replayed = append(replayed, got)
		if strings.Contains(got.data, "after the resume") {
			break
		}
	}
	for _, e := range replayed {
		if strings.Contains(e.data, `"result"`) {
			t.Errorf("the resume sent a response again: %+v", e)
		}
	}
	delta := tg.counters(t).since(before)
	runs := tg.upstreamStats(t).SearchIndexRuns - runsBefore
	t.Logf("cursor %s, resumed stream carried %+v; counters: %s", ev.id, replayed, delta)
	summary("clean_resume_after_notification", losses, runs, reinit)

	if runs != 1 {
		t.Errorf("search_index ran %d times, want 1", runs)
	}
	checkNoAlarm(t, delta)
	if tg.stack != nil {
		if got := tg.stack.UpstreamCursors(); !slices.Equal(got, []string{upID}) {
			t.Errorf("the upstream received Last-Event-ID %q, want %q (the tag stripped)", got, upID)
		}
	}
}

// readUntil reads events until one whose data contains text.
func readUntil(r *sseReader, text string) (sseEvent, error) {
	for {
		ev, err := r.next()
		if err != nil || strings.Contains(ev.data, text) {
			return ev, err
		}
	}
}

// waitUntil polls cond for up to 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
