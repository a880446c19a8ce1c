package dualstack_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// do sends a request with headers given as "Name: value" strings.
func do(t *testing.T, method, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	initBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	listBody  = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	jsonCT    = "Content-Type: application/json"
	acceptAll = "Accept: application/json, text/event-stream"
)

// initJSON opens a Streamable HTTP session with a JSON answer.
func initJSON(t *testing.T, base string) string {
	t.Helper()
	resp := do(t, "POST", base+"/mcp", initBody, jsonCT, "Accept: application/json")
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %s: %s", resp.Status, readAll(t, resp))
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(readAll(t, resp)), &r); err != nil || r.Result.ProtocolVersion != "2025-06-18" {
		t.Fatalf("initialize answer: %v, version %q", err, r.Result.ProtocolVersion)
	}
	return sid
}

func TestStreamableStatusCodes(t *testing.T) {
	_, ts := start(t, dualstack.Options{})
	sid := initJSON(t, ts.URL)
	sidH := "Mcp-Session-Id: " + sid
	sseH := "Accept: text/event-stream"

	for _, tc := range []struct {
		name    string
		method  string
		body    string
		headers []string
		status  int
		inBody  string
	}{
		{"notification is accepted", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, []string{jsonCT, acceptAll, sidH}, 202, ""},
		{"JSON answer per Accept", "POST", listBody, []string{jsonCT, "Accept: application/json", sidH}, 200, `"search_index"`},
		{"request without session", "POST", listBody, []string{jsonCT, acceptAll}, 400, `"id":2`},
		{"unknown session", "POST", listBody, []string{jsonCT, acceptAll, "Mcp-Session-Id: s-nope"}, 404, ""},
		{"wrong content type", "POST", listBody, []string{"Content-Type: text/plain", acceptAll, sidH}, 415, ""},
		{"batch", "POST", "[" + listBody + "]", []string{jsonCT, acceptAll, sidH}, 400, `"id":null`},
		{"unsupported protocol version", "POST", listBody, []string{jsonCT, acceptAll, sidH, "MCP-Protocol-Version: 1999-01-01"}, 400, "unsupported"},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":9,"method":"server/discover"}`, []string{jsonCT, "Accept: application/json", sidH}, 200, `-32601`},
		{"initialize with a session", "POST", initBody, []string{jsonCT, acceptAll, sidH}, 400, ""},
		{"GET without session", "GET", "", []string{sseH}, 400, ""},
		{"GET unknown session", "GET", "", []string{sseH, "Mcp-Session-Id: s-nope"}, 404, ""},
		{"GET malformed cursor", "GET", "", []string{sseH, sidH, "Last-Event-ID: garbage"}, 400, "malformed"},
		{"GET tagged cursor", "GET", "", []string{sseH, sidH, "Last-Event-ID: sse:e-1"}, 400, "malformed"},
		{"GET unknown cursor", "GET", "", []string{sseH, sidH, "Last-Event-ID: e-999"}, 400, "unknown Last-Event-ID"},
		{"GET not accepting SSE", "GET", "", []string{"Accept: application/json", sidH}, 406, ""},
		{"PUT", "PUT", "", []string{sidH}, 405, ""},
		{"DELETE unknown session", "DELETE", "", []string{"Mcp-Session-Id: s-nope"}, 404, ""},
		{"legacy POST unknown session", "POST /messages?sessionId=s-nope", listBody, []string{jsonCT}, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, path := tc.method, "/mcp"
			if m, p, ok := strings.Cut(tc.method, " "); ok {
				method, path = m, p
			}
			resp := do(t, method, ts.URL+path, tc.body, tc.headers...)
			body := readAll(t, resp)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.inBody) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, body, tc.status, tc.inBody)
			}
		})
	}

	if resp := do(t, "DELETE", ts.URL+"/mcp", "", sidH); resp.StatusCode != 204 {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	if resp := do(t, "POST", ts.URL+"/mcp", listBody, jsonCT, acceptAll, sidH); resp.StatusCode != 404 {
		t.Errorf("POST after DELETE: %s, want 404", resp.Status)
	}
}

// TestCursorOfAnotherSession: a cursor is resumable only in the session whose
// log holds it, even though every session shares the allocator.
func TestCursorOfAnotherSession(t *testing.T) {
	srv, ts := start(t, dualstack.Options{})
	a := initJSON(t, ts.URL)
	b := initJSON(t, ts.URL)
	id, err := srv.EmitProgress(a, "x", 1, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, "GET", ts.URL+"/mcp", "", "Accept: text/event-stream", "Mcp-Session-Id: "+b, "Last-Event-ID: "+id.String())
	if resp.StatusCode != 400 {
		t.Errorf("resume of %s with %s's cursor %s: %s, want 400", b, a, id, resp.Status)
	}
}

// TestBridgedLegacySession: a legacy sessionId is an Mcp-Session-Id, and
// events for it reach a GET /mcp stream once the legacy stream is gone.
func TestBridgedLegacySession(t *testing.T) {
	srv, ts := start(t, dualstack.Options{FirstEventID: 100})
	stream := do(t, "GET", ts.URL+"/sse", "", "Accept: text/event-stream")
	br := bufio.NewReader(stream.Body)
	var endpoint string
	for endpoint == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the endpoint event: %v", err)
		}
		if after, ok := strings.CutPrefix(line, "data: "); ok {
			endpoint = strings.TrimSpace(after)
		}
	}
	sid := strings.TrimPrefix(endpoint, "/messages?sessionId=")
	if resp := do(t, "POST", ts.URL+endpoint, initBody, jsonCT); resp.StatusCode != 202 {
		t.Fatalf("legacy initialize: %s", resp.Status)
	}
	stream.Body.Close()

	// tools/list on /mcp with the legacy session ID.
	resp := do(t, "POST", ts.URL+"/mcp", listBody, jsonCT, "Accept: application/json", "Mcp-Session-Id: "+sid)
	if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, "search_index") {
		t.Fatalf("tools/list on the bridged session: %s %s", resp.Status, body)
	}

	// Once the server noticed the cut, a standalone GET /mcp carries the
	// session's events.
	deadline := time.Now().Add(2 * time.Second)
	for srv.Sessions()[0].OpenStreams != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	get := do(t, "GET", ts.URL+"/mcp", "", "Accept: text/event-stream", "Mcp-Session-Id: "+sid)
	if get.StatusCode != 200 {
		t.Fatalf("GET /mcp: %s", get.Status)
	}
	id, err := srv.EmitProgress(sid, "other-request", 1, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	gr := bufio.NewReader(get.Body)
	for {
		line, err := gr.ReadString('\n')
		if err != nil {
			t.Fatalf("waiting for %s on GET /mcp: %v", id, err)
		}
		if strings.TrimSpace(line) == "id: "+id.String() {
			break
		}
	}
	evs, _ := srv.Events(sid)
	if last := evs[len(evs)-1]; last.ID != id || last.Transport != dualstack.TransportHTTP {
		t.Errorf("last logged event %s on %q, want %s on http", last.ID, last.Transport, id)
	}
}

func TestDebugEndpoints(t *testing.T) {
	srv, ts := start(t, dualstack.Options{FirstEventID: 7, Replay: dualstack.ReplayInclusive})
	sid := initJSON(t, ts.URL)
	resp := do(t, "POST", ts.URL+"/debug/progress", `{"sessionId":"`+sid+`","progressToken":"t","progress":1}`, jsonCT)
	if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"eventId": "e-7"`) {
		t.Errorf("POST /debug/progress: %s %s", resp.Status, body)
	}
	if resp := do(t, "POST", ts.URL+"/debug/progress", `{"sessionId":"s-nope"}`, jsonCT); resp.StatusCode != 404 {
		t.Errorf("POST /debug/progress for an unknown session: %s", resp.Status)
	}
	var st dualstack.Stats
	if err := json.Unmarshal([]byte(readAll(t, do(t, "GET", ts.URL+"/debug/stats", ""))), &st); err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 1 || st.NextEventID != "e-8" || st.Replay != "inclusive" || st.SearchIndexRuns != 0 {
		t.Errorf("stats = %+v", st)
	}
	if body := readAll(t, do(t, "GET", ts.URL+"/debug/events?sessionId="+sid, "")); !strings.Contains(body, `"id": "e-7"`) {
		t.Errorf("GET /debug/events: %s", body)
	}
	if got := srv.Sessions(); len(got) != 1 || got[0].LastEventID != 7 {
		t.Errorf("Sessions() = %+v", got)
	}
}

func TestParseEventID(t *testing.T) {
	for in, want := range map[string]dualstack.EventID{"e-1": 1, "e-104": 104} {
		if got, err := dualstack.ParseEventID(in); err != nil || got != want || got.String() != in {
			t.Errorf("ParseEventID(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "e-", "e-0", "e--1", "e-+1", "104", "sse:e-104", "http:e-1", "e-1x", "E-1"} {
		if _, err := dualstack.ParseEventID(bad); err == nil {
			t.Errorf("ParseEventID(%q) succeeded", bad)
		}
	}
	if _, err := dualstack.ParseReplayMode("sometimes"); err == nil {
		t.Error("ParseReplayMode accepted nonsense")
	}
}

// TestLogBounded: a session's log keeps the newest 4096 events.
func TestLogBounded(t *testing.T) {
	srv, ts := start(t, dualstack.Options{})
	sid := initJSON(t, ts.URL) // initialize answered as JSON: no event
	for range 4100 {
		if _, err := srv.EmitProgress(sid, "x", 1, 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	evs, _ := srv.Events(sid)
	if len(evs) != 4096 || evs[0].ID != 5 || evs[len(evs)-1].ID != 4100 {
		t.Errorf("log holds %d events, %s … %s; want 4096, e-5 … e-4100", len(evs), evs[0].ID, evs[len(evs)-1].ID)
	}
	resp := do(t, "GET", ts.URL+"/mcp", "", "Accept: text/event-stream", "Mcp-Session-Id: "+sid, "Last-Event-ID: e-4")
	if resp.StatusCode != 400 {
		t.Errorf("resume from a forgotten event: %s, want 400", resp.Status)
	}
}
