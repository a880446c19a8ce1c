package dualstack_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	pyVersion = "2025-11-25"
	pyInit    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	pyRetry   = 7
)

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	uuidHexRE = regexp.MustCompile(`^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$`)
)

// pyEvent is one event of a Python-layout stream.
type pyEvent struct {
	id, data string
	priming  bool
}

// parsePython splits body into events and checks each is laid out exactly
// as the Python SDK writes it: CRLF line ends, "id", then "event: message"
// and "data" for a message, or an empty "data" and "retry: 7" for a priming
// event.
func parsePython(t *testing.T, body string) []pyEvent {
	t.Helper()
	if strings.Contains(strings.ReplaceAll(body, "\r\n", ""), "\n") || strings.Contains(strings.ReplaceAll(body, "\r\n", ""), "\r") {
		t.Fatalf("a line does not end with CRLF: %q", body)
	}
	if body == "" {
		return nil
	}
	if !strings.HasSuffix(body, "\r\n\r\n") {
		t.Fatalf("the stream does not end with a complete event: %q", body)
	}
	var out []pyEvent
	for _, raw := range strings.Split(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n") {
		lines := strings.Split(raw, "\r\n")
		id, ok := strings.CutPrefix(lines[0], "id: ")
		if !ok || !uuidRE.MatchString(id) {
			t.Fatalf("event %q: first line is not id: <uuid4>", raw)
		}
		switch {
		case len(lines) == 3 && lines[1] == "data: " && lines[2] == fmt.Sprintf("retry: %d", pyRetry):
			out = append(out, pyEvent{id: id, priming: true})
		case len(lines) == 3 && lines[1] == "event: message" && strings.HasPrefix(lines[2], "data: {"):
			out = append(out, pyEvent{id: id, data: strings.TrimPrefix(lines[2], "data: ")})
		default:
			t.Fatalf("event %q is neither a priming event nor a message in the Python layout", raw)
		}
	}
	return out
}

// kinds describes events as "priming", "progress" or "result:<id>".
func kinds(evs []pyEvent) []string {
	var out []string
	for _, ev := range evs {
		switch {
		case ev.priming:
			out = append(out, "priming")
		case strings.Contains(ev.data, `"notifications/progress"`):
			out = append(out, "progress")
		case strings.Contains(ev.data, `"result"`):
			id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(ev.data)
			out = append(out, "result:"+id[1])
		default:
			out = append(out, "other")
		}
	}
	return out
}

// pyClient is a raw client of a Python-layout server.
type pyClient struct {
	t    *testing.T
	srv  *dualstack.Server
	base string
	sid  string
}

func pyServer(t *testing.T, opts dualstack.Options) *pyClient {
	t.Helper()
	if opts.Layout == dualstack.LayoutDefault {
		opts.Layout = dualstack.LayoutPython
	}
	opts.RetryMillis = pyRetry
	srv, ts := start(t, opts)
	c := &pyClient{t: t, srv: srv, base: ts.URL}
	resp := do(t, "POST", ts.URL+"/mcp", pyInit, jsonCT, acceptAll)
	evs := parsePython(t, readAll(t, resp))
	if got := strings.Join(kinds(evs), " "); got != "priming result:1" {
		t.Fatalf("initialize answered %q, want a priming event and the result", got)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	if !uuidHexRE.MatchString(c.sid) {
		t.Fatalf("session ID %q is not uuid4().hex", c.sid)
	}
	return c
}

// call posts a tools/call of search_index with a progress token.
func (c *pyClient) call(id int) []pyEvent {
	c.t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_index","arguments":{"query":"q"},"_meta":{"progressToken":"tok"}}}`, id)
	resp := do(c.t, "POST", c.base+"/mcp", body, jsonCT, acceptAll, "Mcp-Session-Id: "+c.sid, "Mcp-Protocol-Version: "+pyVersion)
	return parsePython(c.t, readAll(c.t, resp))
}

// logged waits until the server logged the response to call id.
func (c *pyClient) logged(id int) {
	c.t.Helper()
	want := fmt.Sprintf(`"id":%d,`, id)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		evs, _ := c.srv.Events(c.sid)
		for _, ev := range evs {
			if ev.Kind == dualstack.KindResponse && bytes.Contains(ev.Data, []byte(want)) {
				return
			}
		}
	}
	c.t.Fatalf("the server never logged the response to call %d", id)
}

// resume sends GET /mcp with the cursor and reads the stream to its end.
func (c *pyClient) resume(cursor string) []pyEvent {
	c.t.Helper()
	resp := do(c.t, "GET", c.base+"/mcp", "", "Accept: text/event-stream", "Mcp-Session-Id: "+c.sid, "Mcp-Protocol-Version: "+pyVersion, "Last-Event-ID: "+cursor)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("resume from %s: %s", cursor, resp.Status)
	}
	return parsePython(c.t, readAll(c.t, resp))
}

// TestPythonLayoutPolling: a tools/call's POST stream is only its priming
// event; the GET with its ID replays the call's progress and result, then a
// fresh priming event; resumes replay strictly after the cursor, the
// cursor's stream only, priming events never.
func TestPythonLayoutPolling(t *testing.T) {
	c := pyServer(t, dualstack.Options{})
	post := c.call(3)
	if got := strings.Join(kinds(post), " "); got != "priming" {
		t.Fatalf("tools/call POST stream: %q, want only a priming event (SEP-1699 polling)", got)
	}
	c.logged(3)
	poll := c.resume(post[0].id)
	if got := strings.Join(kinds(poll), " "); got != "progress progress result:3 priming" {
		t.Fatalf("GET from the POST's priming event: %q, want progress progress result:3 priming", got)
	}
	seen := map[string]bool{post[0].id: true}
	for _, ev := range poll {
		if seen[ev.id] {
			t.Errorf("event ID %s written twice", ev.id)
		}
		seen[ev.id] = true
	}

	// Strictly after the cursor: from the result, only a new priming event
	// (the previous priming event is not replayed).
	if got := c.resume(poll[2].id); len(got) != 1 || !got[0].priming || seen[got[0].id] {
		t.Errorf("GET from the result: %q, want one fresh priming event", kinds(got))
	}
	if got := strings.Join(kinds(c.resume(poll[1].id)), " "); got != "result:3 priming" {
		t.Errorf("GET from the second progress: %q, want result:3 priming", got)
	}

	// Another call's stream is not replayed from this one's cursor.
	if got := kinds(c.call(4)); len(got) != 1 {
		t.Fatalf("second tools/call POST stream: %q", got)
	}
	c.logged(4)
	if got := strings.Join(kinds(c.resume(post[0].id)), " "); got != "progress progress result:3 priming" {
		t.Errorf("GET from call 3's priming event after call 4: %q, want call 3's stream only", got)
	}

	// A cursor the session never sent: an empty stream, as the SDK answers.
	if got := c.resume("9e107d9d-372b-4b6b-a1f6-2d0c1a3e4f50"); len(got) != 0 {
		t.Errorf("GET from an unknown cursor: %q, want an empty stream", kinds(got))
	}
	if n := c.srv.Resumes(); n != 4 {
		t.Errorf("Resumes() = %d, want 4 (the unknown cursor is not one)", n)
	}
}

// TestPythonLayoutInclusive: under ReplayInclusive the replay starts at the
// cursor's event.
func TestPythonLayoutInclusive(t *testing.T) {
	c := pyServer(t, dualstack.Options{Replay: dualstack.ReplayInclusive})
	post := c.call(3)
	c.logged(3)
	poll := c.resume(post[0].id)
	if got := strings.Join(kinds(c.resume(poll[2].id)), " "); got != "result:3 priming" {
		t.Errorf("inclusive GET from the result: %q, want result:3 priming", got)
	}
}

// chunkRecorder is a ResponseWriter that records the body chunk by chunk,
// a chunk being what was written between two flushes.
type chunkRecorder struct {
	h      http.Header
	cur    bytes.Buffer
	chunks []string
}

func (c *chunkRecorder) Header() http.Header {
	if c.h == nil {
		c.h = http.Header{}
	}
	return c.h
}
func (c *chunkRecorder) WriteHeader(int)             {}
func (c *chunkRecorder) Write(p []byte) (int, error) { return c.cur.Write(p) }
func (c *chunkRecorder) Flush() {
	if c.cur.Len() > 0 {
		c.chunks = append(c.chunks, c.cur.String())
		c.cur.Reset()
	}
}

// TestPythonLayoutChunks: LayoutPython flushes every event of a replay on
// its own, LayoutPythonOneChunk writes the replay and its priming event in
// one chunk; the bytes are the same.
func TestPythonLayoutChunks(t *testing.T) {
	bodies := map[dualstack.Layout]string{}
	for _, l := range []dualstack.Layout{dualstack.LayoutPython, dualstack.LayoutPythonOneChunk} {
		t.Run(l.String(), func(t *testing.T) {
			c := pyServer(t, dualstack.Options{Layout: l, EventGap: time.Millisecond})
			post := c.call(3)
			c.logged(3)
			req := httptest.NewRequest("GET", "/mcp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", c.sid)
			req.Header.Set("Mcp-Protocol-Version", pyVersion)
			req.Header.Set("Last-Event-ID", post[0].id)
			rec := &chunkRecorder{}
			c.srv.ServeHTTP(rec, req) // returns: the stream closes after its priming event
			rec.Flush()
			body := strings.Join(rec.chunks, "")
			if got := strings.Join(kinds(parsePython(t, body)), " "); got != "progress progress result:3 priming" {
				t.Fatalf("replay %q", got)
			}
			want := 4
			if l == dualstack.LayoutPythonOneChunk {
				want = 1
			}
			if len(rec.chunks) != want {
				t.Errorf("%d chunks %q, want %d", len(rec.chunks), rec.chunks, want)
			}
			for _, ch := range rec.chunks {
				if !strings.HasSuffix(ch, "\r\n\r\n") {
					t.Errorf("chunk %q does not end with an event", ch)
				}
			}
			bodies[l] = regexp.MustCompile(`[0-9a-f-]{36}`).ReplaceAllString(body, "ID")
		})
	}
	if bodies[dualstack.LayoutPython] != bodies[dualstack.LayoutPythonOneChunk] {
		t.Errorf("the layouts differ in more than chunking:\n%q\n%q", bodies[dualstack.LayoutPython], bodies[dualstack.LayoutPythonOneChunk])
	}
}

// TestPythonLayoutOldProtocol: below 2025-11-25 the SDK sends no priming
// event and does not poll: the POST stream carries the call to its result.
func TestPythonLayoutOldProtocol(t *testing.T) {
	_, ts := start(t, dualstack.Options{Layout: dualstack.LayoutPython, RetryMillis: pyRetry})
	resp := do(t, "POST", ts.URL+"/mcp", initBody, jsonCT, acceptAll) // 2025-06-18
	if got := kinds(parsePython(t, readAll(t, resp))); strings.Join(got, " ") != "result:1" {
		t.Fatalf("initialize of 2025-06-18: %q, want the result without a priming event", got)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_index","arguments":{"query":"q"},"_meta":{"progressToken":"tok"}}}`
	resp = do(t, "POST", ts.URL+"/mcp", body, jsonCT, acceptAll, "Mcp-Session-Id: "+sid, "Mcp-Protocol-Version: 2025-06-18")
	if got := strings.Join(kinds(parsePython(t, readAll(t, resp))), " "); got != "progress progress result:3" {
		t.Errorf("tools/call of 2025-06-18: %q, want progress progress result:3 on the POST stream", got)
	}
}

// TestLayoutHeader: the layout header of an initialize request chooses the
// session's layout on a server of the default layout; a long SessionIDBytes
// still mints JWT-shaped IDs; an unknown layout is refused.
func TestLayoutHeader(t *testing.T) {
	srv, ts := start(t, dualstack.Options{SessionIDBytes: 300, RetryMillis: pyRetry})
	resp := do(t, "POST", ts.URL+"/mcp", pyInit, jsonCT, acceptAll, dualstack.HeaderLayout+": python-one-chunk")
	if got := strings.Join(kinds(parsePython(t, readAll(t, resp))), " "); got != "priming result:1" {
		t.Fatalf("initialize: %q", got)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if len(sid) != 300 {
		t.Errorf("session ID of %d bytes, want 300", len(sid))
	}
	resp = do(t, "POST", ts.URL+"/mcp", pyInit, jsonCT, acceptAll) // the server's default
	_ = readAll(t, resp)
	layouts := map[string]string{}
	for _, s := range srv.Sessions() {
		layouts[s.ID] = s.Layout
	}
	if layouts[sid] != "python-one-chunk" || layouts[resp.Header.Get("Mcp-Session-Id")] != "default" {
		t.Errorf("session layouts %v: want python-one-chunk for the header's session, default for the other", layouts)
	}
	if resp := do(t, "POST", ts.URL+"/mcp", pyInit, jsonCT, acceptAll, dualstack.HeaderLayout+": perl"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown layout: %s, want 400", resp.Status)
	}
}

func TestParseLayout(t *testing.T) {
	for _, l := range []dualstack.Layout{dualstack.LayoutDefault, dualstack.LayoutPython, dualstack.LayoutPythonOneChunk} {
		if got, err := dualstack.ParseLayout(l.String()); err != nil || got != l {
			t.Errorf("ParseLayout(%q) = %v, %v", l, got, err)
		}
	}
	if l, err := dualstack.ParseLayout(""); err != nil || l != dualstack.LayoutDefault {
		t.Errorf(`ParseLayout("") = %v, %v`, l, err)
	}
	if _, err := dualstack.ParseLayout("python3"); err == nil {
		t.Error(`ParseLayout("python3") accepted`)
	}
}

// TestPythonLayoutOfficialClient: the official Go SDK client works against
// the Python layouts: it follows the polling (POST closed after its priming
// event, GET with Last-Event-ID after retry) to each call's result and
// progress, call after call.
func TestPythonLayoutOfficialClient(t *testing.T) {
	for _, l := range []dualstack.Layout{dualstack.LayoutPython, dualstack.LayoutPythonOneChunk} {
		t.Run(l.String(), func(t *testing.T) {
			srv, ts := start(t, dualstack.Options{Layout: l, RetryMillis: 5})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var mu sync.Mutex
			progress := 0
			client := mcp.NewClient(&mcp.Implementation{Name: "sdk-python-layout", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress++
				},
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			const calls = 3
			for i := range calls {
				q := fmt.Sprintf("python layout %d", i)
				params := &mcp.CallToolParams{Name: dualstack.ToolSearchIndex, Arguments: map[string]any{"query": q}}
				params.SetProgressToken(q)
				res, err := cs.CallTool(ctx, params)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if text, _ := res.Content[0].(*mcp.TextContent); text == nil || !strings.Contains(text.Text, fmt.Sprintf("%q", q)) {
					t.Fatalf("call %d: result %+v", i, res.Content)
				}
			}
			if runs := srv.ToolRuns(dualstack.ToolSearchIndex); runs != calls {
				t.Errorf("search_index ran %d times, want %d", runs, calls)
			}
			if srv.Resumes() < calls {
				t.Errorf("%d resumes, want at least one per call (the client polls with GET)", srv.Resumes())
			}
			// Notification handlers run asynchronously: a result can overtake
			// the last progress callbacks.
			got := 0
			for deadline := time.Now().Add(2 * time.Second); got < 2*calls && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				mu.Lock()
				got = progress
				mu.Unlock()
			}
			if got != 2*calls {
				t.Errorf("%d progress notifications, want %d", got, 2*calls)
			}
		})
	}
}
