package dualstack_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// legacyEvent is one event of a legacy stream: its name, ID and data.
type legacyEvent struct{ name, id, data string }

// openLegacy opens GET /sse (with a Last-Event-ID when cursor is set) and
// returns the response and a function reading its next event.
func openLegacy(t *testing.T, ctx context.Context, base, cursor string) (*http.Response, func() legacyEvent) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	return resp, func() legacyEvent {
		t.Helper()
		var ev legacyEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("legacy stream: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			if line == "" {
				return ev
			}
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "event":
				ev.name = v
			case "id":
				ev.id = v
			case "data":
				ev.data = v
			}
		}
	}
}

// TestLegacyResume: with LegacyResume, a GET /sse carrying Last-Event-ID
// resumes the session whose log holds the cursor, as the seed's migration
// shim does: the endpoint event again, then the replay, strictly after the
// cursor (so a cursor equal to the tool result skips it) or from it.
func TestLegacyResume(t *testing.T) {
	srv, ts := start(t, dualstack.Options{FirstEventID: 100, LegacyResume: true})
	ctx, cut := context.WithCancel(context.Background())
	_, next := openLegacy(t, ctx, ts.URL, "")
	endpoint := next()
	if endpoint.name != "endpoint" {
		t.Fatalf("first event %+v, want the endpoint event", endpoint)
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_index","arguments":{"query":"q"},"_meta":{"progressToken":"p"}}}`
	if resp := do(t, "POST", ts.URL+endpoint.data, call, jsonCT); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s: %s", endpoint.data, resp.Status)
	}
	var ids []string
	for range 3 { // two progress notifications, the result
		ids = append(ids, next().id)
	}
	if ids[2] != "e-102" {
		t.Fatalf("legacy stream carried %v, want e-100 … e-102", ids)
	}
	cut()
	sid := strings.TrimPrefix(endpoint.data, "/messages?sessionId=")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ss := srv.Sessions(); len(ss) == 1 && ss[0].OpenStreams == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not notice the cut")
		}
	}

	// From the progress before the result: the result is replayed.
	_, next = openLegacy(t, context.Background(), ts.URL, "e-101")
	if ev := next(); ev.name != "endpoint" || ev.data != endpoint.data {
		t.Fatalf("resumed stream starts with %+v, want the endpoint event of session %s", ev, sid)
	}
	if ev := next(); ev.id != "e-102" || !strings.Contains(ev.data, `"result"`) {
		t.Fatalf("resume from e-101 replayed %+v, want the result e-102", ev)
	}
	// From the result itself: strictly after it, so the next event is
	// whatever comes later (here a progress the test makes the server emit).
	_, next = openLegacy(t, context.Background(), ts.URL, "e-102")
	next() // endpoint
	if _, err := srv.EmitProgress(sid, "later", 1, 0, ""); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.id == "e-102" || !strings.Contains(ev.data, `"later"`) {
		t.Fatalf("resume from e-102 delivered %+v first, want the later progress (the result skipped: the seed's loss)", ev)
	}
	if got := srv.Stats().Resumes; got != 2 {
		t.Errorf("resumes %d, want 2", got)
	}
	if resp, _ := openLegacy(t, context.Background(), ts.URL, "e-999"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown cursor: %s, want 400", resp.Status)
	}

	// Without the option the cursor is ignored: a new session.
	_, ts2 := start(t, dualstack.Options{})
	_, next = openLegacy(t, context.Background(), ts2.URL, "e-101")
	if ev := next(); ev.name != "endpoint" || ev.data == endpoint.data {
		t.Errorf("without LegacyResume: %+v, want a new session's endpoint event", ev)
	}
}
