package trial

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
)

// recordingTransport keeps every response body the client read, so a test
// can see the event IDs the client was given.
type recordingTransport struct{ read logbuf.Buffer }

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(resp.Body, &rt.read), resp.Body}
	}
	return resp, err
}

func (rt *recordingTransport) text() string { return rt.read.String() }

// eventIDOf returns the id of the SSE event whose data holds sub.
func eventIDOf(stream, sub string) string {
	for _, ev := range strings.Split(stream, "\n\n") {
		if !strings.Contains(ev, sub) {
			continue
		}
		for _, line := range strings.Split(ev, "\n") {
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				return id
			}
		}
	}
	return ""
}

// TestCutAfterResult: make run ARGS='-cut /mcp=result' with the official
// Go SDK client and the reference server. Every /mcp stream is reset right
// after its result event: the client gets each result, finishes its call
// and resumes nothing (it resumes only while it lacks its response, so the
// guard sees no false drain race), and the tool runs once. A client that
// kept the result's event ID without having processed the result (the
// seed's drain race: a crash between parse and dispatch, a persisted
// resumption token) resumes with it: the guard rewinds (decision=rewound
// reason=drain_race), the upstream replays the result, and the tool still
// ran once.
func TestCutAfterResult(t *testing.T) {
	bs, err := envoyconf.Parse(readFile(t, envoyFile))
	if err != nil {
		t.Fatal(err)
	}
	cuts, err := ParseCuts("/mcp=" + CutAfterResult)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	s, err := Start(context.Background(), Options{Wasm: readFile(t, wasmFile), Envoy: bs, Cuts: cuts,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt := &recordingTransport{}
	client := mcp.NewClient(&mcp.Implementation{Name: "cut-after-result", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + s.ProxyAddr + "/mcp",
		HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: dualstack.ToolSearchIndex, Arguments: map[string]any{"query": "q"}})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("CallTool through -cut /mcp=result: %v, %v", res, err)
	}
	const answer = "search_index run 1: 3 documents match"
	if text, _ := res.Content[0].(*mcp.TextContent); text == nil || !strings.Contains(text.Text, answer) {
		t.Fatalf("CallTool result %+v", res.Content[0])
	}
	tag := cursor.SessionTag(cs.ID())
	callLine := "method=POST path=/mcp status=200 "
	if !logs.WaitFor("end=cut session="+tag+" decision=forward resume=false", 2*time.Second) {
		t.Fatalf("no POST stream of the session cut after its result:\n%s", logs)
	}
	// The initialize's line comes when its stream ends, which may be after
	// the client went on.
	if !logs.WaitForLines(callLine, 2, 2*time.Second) {
		t.Errorf("%d POST /mcp streams answered 200 (initialize and tools/call expected):\n%s", len(logs.Lines(callLine)), logs)
	}
	// The 400 of the SDK's server/discover probe, which the reference
	// server (2025 revisions only) refuses before the client falls back
	// to initialize.
	if len(logs.Lines("method=POST path=/mcp status=400 ")) != 1 {
		t.Errorf("want one 400 (the server/discover probe):\n%s", logs)
	}
	time.Sleep(300 * time.Millisecond)
	if lines := logs.Lines("resume=true"); len(lines) != 0 {
		t.Fatalf("the Go SDK client resumed after it had its result:\n%s", strings.Join(lines, "\n"))
	}

	// The result's event ID, as the guard minted it and the client read it.
	id := eventIDOf(rt.text(), answer)
	if c, ok := cursor.ParseCursor(id); !ok || c.Transport != cursor.TransportHTTP || !strings.HasPrefix(id, "http:~1r") {
		t.Fatalf("the result's event ID %q is not a minted result cursor; the client read:\n%s", id, rt.text())
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", "http://"+s.ProxyAddr+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Last-Event-ID", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	replayed := readUntil(resp.Body, answer)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(replayed, answer) {
		t.Fatalf("resume with the result's ID: %d, replayed %q", resp.StatusCode, replayed)
	}
	for _, want := range []string{
		"session=" + tag + " decision=rewound resume=true reason=drain_race",
		"mcp-resume-guard: drain race: resume cursor equals the last event of a stream cut before it was acknowledged",
	} {
		if !logs.WaitFor(want, 3*time.Second) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if runs := s.Reference.ToolRuns(dualstack.ToolSearchIndex); runs != 1 {
		t.Errorf("search_index ran %d times, want 1 (the replay re-ran nothing)", runs)
	}
}

// readUntil reads body until it holds sub or ends.
func readUntil(body io.Reader, sub string) string {
	var b strings.Builder
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(b.String(), sub) {
			break
		}
	}
	return b.String()
}
