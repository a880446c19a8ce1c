package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cuttingTransport lets a test cut the SDK client's standalone GET stream
// (the network drops it) and records what the resumed GET streams carried
// to the client.
type cuttingTransport struct {
	base http.RoundTripper

	mu         sync.Mutex
	standalone io.Closer // the first GET /mcp's body
	resumed    bytes.Buffer
}

func (ct *cuttingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if r.Header.Get("Last-Event-ID") == "" {
		if ct.standalone == nil {
			ct.standalone = resp.Body
		}
	} else {
		resp.Body = teeBody{ReadCloser: resp.Body, ct: ct}
	}
	return resp, nil
}

// cut closes the standalone stream under the client's reader, which sees
// a broken stream and reconnects with its last event ID.
func (ct *cuttingTransport) cut() bool {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.standalone == nil {
		return false
	}
	_ = ct.standalone.Close()
	return true
}

func (ct *cuttingTransport) resumedText() string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ct.resumed.String()
}

type teeBody struct {
	io.ReadCloser
	ct *cuttingTransport
}

func (b teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.ct.mu.Lock()
	b.ct.resumed.Write(p[:n])
	b.ct.mu.Unlock()
	return n, err
}

// TestSDKDuplicateResponse: the official Go SDK client, given again a
// response it already processed, ignores it and carries on. A replay that
// includes a response the client processed is what at-least-once delivery
// (unacked_cursor rewind) costs whenever the client had processed the
// response after all; here the upstream makes it (it replays every event
// of the session after the cursor, across streams): the client's standalone
// stream is cut after a notification, the client calls search_index on a
// POST stream and processes the result, then resumes its standalone stream
// from the notification, and the replay carries the finished call's
// progress and response again. The client's next calls work, on the same
// session, and the tool ran once per call.
func TestSDKDuplicateResponse(t *testing.T) {
	tg := newTarget(t, targetOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	runsBefore := tg.upstreamStats(t).SearchIndexRuns

	ct := &cuttingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	progress := newProgressLog()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-sdk-duplicate", Version: "1"},
		&mcp.ClientOptions{ProgressNotificationHandler: progress.handler})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: tg.proxyURL + "/mcp", HTTPClient: &http.Client{Transport: ct}}, nil)
	if err != nil {
		t.Fatalf("Connect through the proxy: %v", err)
	}
	defer cs.Close()
	sid := cs.ID()

	waitUntil(t, "the client's standalone stream", func() bool { return tg.openStreams(t, sid) > 0 })
	tg.injectProgress(t, sid, "tick")
	if !progress.wait("tick", 10*time.Second) {
		t.Fatal("the notification did not reach the standalone stream")
	}
	if err := callSearch(ctx, cs, "first"); err != nil {
		t.Fatal(err)
	}
	resumes := tg.upstreamStats(t).Resumes
	if !ct.cut() {
		t.Fatal("the client opened no standalone stream")
	}
	waitUntil(t, "the client to resume its standalone stream", func() bool { return tg.upstreamStats(t).Resumes > resumes })
	// The replay carries the first call's response again, to a client that
	// has finished that call.
	waitUntil(t, "the replayed response to reach the client", func() bool {
		return strings.Contains(ct.resumedText(), "search_index run 1: 3 documents match")
	})

	failed := 0
	if err := callSearch(ctx, cs, "second"); err != nil {
		failed++
		t.Errorf("after the duplicate response: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		failed++
		t.Errorf("ListTools after the duplicate response: %v", err)
	}
	runs := tg.upstreamStats(t).SearchIndexRuns - runsBefore
	t.Logf("replayed to the client: %q", ct.resumedText())
	summary("sdk_duplicate_response", failed, runs, 0)
	if cs.ID() != sid {
		t.Errorf("the session changed from %s to %s", sid, cs.ID())
	}
	if runs != 2 {
		t.Errorf("search_index ran %d times, want 2 (one per call: the duplicate response re-ran nothing)", runs)
	}
	if tg.openStreams(t, sid) == 0 {
		t.Errorf("the client's resumed standalone stream is gone: the client gave up its session")
	}
}
