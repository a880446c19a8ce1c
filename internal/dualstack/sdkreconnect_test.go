package dualstack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var errCut = errors.New("stream cut by the test")

// cutWriter lets limit SSE events through, then fails every write and
// cancels the handler, which the middleware turns into an aborted connection.
type cutWriter struct {
	http.ResponseWriter
	limit  int
	events int
	cut    bool
	cancel context.CancelFunc
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.cut {
		return 0, errCut
	}
	n, err := c.ResponseWriter.Write(p)
	c.events += bytes.Count(p, []byte("\n\n"))
	if c.events >= c.limit {
		c.cut = true
		c.cancel()
	}
	return n, err
}

func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// cutter aborts, once, the first response its match accepts after limit
// events (limit 0: when cutNow is closed).
type cutter struct {
	h      http.Handler
	match  func(r *http.Request, body []byte) bool
	limit  int
	cutNow chan struct{}
	done   atomic.Bool
}

func (c *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if c.done.Load() || !c.match(r, body) || !c.done.CompareAndSwap(false, true) {
		c.h.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if c.limit > 0 {
		w = &cutWriter{ResponseWriter: w, limit: c.limit, cancel: cancel}
	} else {
		go func() {
			select {
			case <-c.cutNow:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	c.h.ServeHTTP(w, r.WithContext(ctx))
	panic(http.ErrAbortHandler) // an unclean cut: no end of the chunked body
}

// TestOfficialClientReconnects: the SDK client resumes its standalone stream
// after a cut, and resumes a POST stream cut in the middle of a call (not
// the drain race: the result comes after the cursor, so it is replayed).
func TestOfficialClientReconnects(t *testing.T) {
	srv := dualstack.New(dualstack.Options{})
	cutGET := &cutter{h: srv, cutNow: make(chan struct{}), match: func(r *http.Request, _ []byte) bool {
		return r.Method == http.MethodGet && r.URL.Path == "/mcp" && r.Header.Get("Last-Event-ID") == ""
	}}
	cutPOST := &cutter{h: cutGET, limit: 2, match: func(r *http.Request, body []byte) bool {
		return r.Method == http.MethodPost && bytes.Contains(body, []byte(`"slow_op"`))
	}}
	ts := httptest.NewServer(cutPOST)
	t.Cleanup(func() { srv.Close(); ts.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var mu sync.Mutex
	got := map[string]bool{}
	arrived := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-reconnect", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got[req.Params.Message] = true
			mu.Unlock()
			arrived <- struct{}{}
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	waitFor := func(msg string) {
		t.Helper()
		for {
			mu.Lock()
			ok := got[msg]
			mu.Unlock()
			if ok {
				return
			}
			select {
			case <-arrived:
			case <-ctx.Done():
				t.Fatalf("notification %q never arrived", msg)
			}
		}
	}

	// Standalone stream: one notification, a cut, one more after the
	// client's reconnect (with Last-Event-ID of the first).
	waitOpen := func(n int) {
		t.Helper()
		for srv.Sessions()[0].OpenStreams < n {
			select {
			case <-ctx.Done():
				t.Fatal("the standalone stream never opened")
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	waitOpen(1)
	if _, err := srv.EmitProgress(cs.ID(), "bg", 1, 0, "before the cut"); err != nil {
		t.Fatal(err)
	}
	waitFor("before the cut")
	close(cutGET.cutNow)
	before := srv.Resumes()
	for srv.Resumes() == before {
		select {
		case <-ctx.Done():
			t.Fatal("the client never resumed its standalone stream")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := srv.EmitProgress(cs.ID(), "bg", 2, 0, "after the reconnect"); err != nil {
		t.Fatal(err)
	}
	waitFor("after the reconnect")

	// A POST stream cut after its priming event and first progress.
	params := &mcp.CallToolParams{Name: dualstack.ToolSlowOp, Arguments: map[string]any{"steps": 3, "interval_ms": 20}}
	params.SetProgressToken("slow")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("CallTool slow_op across a cut: %v", err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "slow_op finished 3 steps" {
		t.Errorf("slow_op result %q", text)
	}
	if !cutPOST.done.Load() || srv.Resumes() < 2 {
		t.Errorf("POST stream cut %t, resumes %d; want the call's stream resumed", cutPOST.done.Load(), srv.Resumes())
	}
	if srv.ToolRuns(dualstack.ToolSlowOp) != 1 {
		t.Errorf("slow_op ran %d times, want 1", srv.ToolRuns(dualstack.ToolSlowOp))
	}
}
