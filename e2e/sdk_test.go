package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressLog collects the progress notifications an SDK client receives.
type progressLog struct {
	mu      sync.Mutex
	msgs    []string
	arrived chan struct{}
}

func newProgressLog() *progressLog { return &progressLog{arrived: make(chan struct{}, 1)} }

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.msgs = append(p.msgs, req.Params.Message)
	p.mu.Unlock()
	select {
	case p.arrived <- struct{}{}:
	default:
	}
}

// has reports whether a message starting with prefix arrived.
func (p *progressLog) has(prefix string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.msgs, func(m string) bool { return strings.HasPrefix(m, prefix) })
}

func (p *progressLog) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.msgs)
}

// wait waits up to d for a message starting with prefix.
func (p *progressLog) wait(prefix string, d time.Duration) bool {
	deadline := time.After(d)
	for !p.has(prefix) {
		select {
		case <-p.arrived:
		case <-deadline:
			return false
		}
	}
	return true
}

// toolRuns returns the upstream's run counts of both tools.
func (tg *target) toolRuns(t *testing.T) int {
	st := tg.upstreamStats(t)
	return st.SearchIndexRuns + st.SlowOpRuns
}

// callSearch calls search_index and checks its answer.
func callSearch(ctx context.Context, cs *mcp.ClientSession, query string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: dualstack.ToolSearchIndex, Arguments: map[string]any{"query": query}})
	if err != nil {
		return fmt.Errorf("CallTool search_index: %w", err)
	}
	if len(res.Content) == 0 {
		return fmt.Errorf("search_index returned no content")
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil || !strings.Contains(text.Text, fmt.Sprintf("%q", query)) {
		return fmt.Errorf("search_index result %+v does not answer %q", res.Content[0], query)
	}
	return nil
}

// sdkTransports are the official MCP Go SDK client's two transports, by
// scenario name, given the proxy's base URL.
var sdkTransports = []struct {
	name      string
	transport func(base string) mcp.Transport
}{
	{"sdk_streamable", func(base string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: base + "/mcp"} }},
	{"sdk_legacy_sse", func(base string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: base + "/sse"} }},
}

// TestSDKClients: the official MCP Go SDK client lists and calls tools
// through the proxy with the filter on, over Streamable HTTP and the legacy
// HTTP+SSE transport, progress included; the filter tags events and raises
// no alarm.
func TestSDKClients(t *testing.T) {
	for _, tc := range sdkTransports {
		t.Run(tc.name, func(t *testing.T) {
			sdkSession(t, newTarget(t, targetOptions{}), tc.name, tc.transport)
		})
	}
}

// sdkSession connects the SDK client through tg's proxy, lists tools, calls
// search_index and slow_op (with progress), and checks that each tool ran
// once, events were tagged and the filter raised no alarm.
func sdkSession(t *testing.T, tg *target, name string, transport func(base string) mcp.Transport) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runsBefore, before := tg.toolRuns(t), tg.counters(t)

	progress := newProgressLog()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-sdk", Version: "1"},
		&mcp.ClientOptions{ProgressNotificationHandler: progress.handler})
	cs, err := client.Connect(ctx, transport(tg.proxyURL), nil)
	if err != nil {
		t.Fatalf("Connect through the proxy: %v", err)
	}
	defer cs.Close()

	failed := 0
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		failed++
		t.Errorf("ListTools: %v", err)
	} else {
		var names []string
		for _, tool := range tools.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Contains(names, dualstack.ToolSearchIndex) || !slices.Contains(names, dualstack.ToolSlowOp) {
			t.Errorf("tools %v, want search_index and slow_op", names)
		}
	}
	if err := callSearch(ctx, cs, "through the guard"); err != nil {
		failed++
		t.Error(err)
	}
	params := &mcp.CallToolParams{Name: dualstack.ToolSlowOp, Arguments: map[string]any{"steps": 3, "interval_ms": 1}}
	params.SetProgressToken("slow")
	if _, err := cs.CallTool(ctx, params); err != nil {
		failed++
		t.Errorf("CallTool slow_op: %v", err)
	}
	// Progress notifications may trail the result on the legacy
	// stream's reader; give them a moment.
	for end := time.Now().Add(5 * time.Second); progress.count() < 3 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}

	delta := tg.counters(t).since(before)
	runs := tg.toolRuns(t) - runsBefore
	t.Logf("progress %d notifications; counters: %s", progress.count(), delta)
	summary(name, failed, runs, int(delta.reinits()))

	if progress.count() < 3 {
		t.Errorf("%d progress notifications arrived, want 3", progress.count())
	}
	if runs != 2 {
		t.Errorf("the tools ran %d times, want 2 (search_index, slow_op)", runs)
	}
	if n := delta.get("events_tagged_total"); n < 1 {
		t.Errorf("events_tagged_total grew by %d: the filter did not see the streams (counters: %s)", n, delta)
	}
	if n := delta.reinits() + delta.get("drain_race_detected_total"); n != 0 {
		t.Errorf("the filter raised %d alarms on a plain session (counters: %s)", n, delta)
	}
}

// TestSDKReconnect: behind a proxy whose 300ms stream idle timeout keeps
// cutting streams, the SDK's Streamable HTTP client resumes its standalone
// stream (with a Last-Event-ID the filter strips), calls tools after the
// cut, and completes a call whose own stream was cut before the result by
// resuming it through the proxy; each tool runs once and the filter raises
// no alarm. (The legacy transport has no resumption: a cut ends its
// session, with or without the filter, so it is not tested here.)
func TestSDKReconnect(t *testing.T) {
	skipExternal(t, "it needs a proxy stream idle timeout of 300ms; envoy.yaml's is 300s")
	tg := newTarget(t, targetOptions{streamIdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	runsBefore, before := tg.toolRuns(t), tg.counters(t)

	progress := newProgressLog()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-sdk-reconnect", Version: "1"},
		&mcp.ClientOptions{ProgressNotificationHandler: progress.handler})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: tg.proxyURL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("Connect through the proxy: %v", err)
	}
	defer cs.Close()

	// A notification on the standalone stream gives the client a cursor.
	// The stream is cut whenever it idles 300ms, so try until one lands.
	sid := cs.ID()
	for i := 0; !progress.has("tick"); i++ {
		if ctx.Err() != nil {
			t.Fatal("no notification reached the client's standalone stream")
		}
		if tg.openStreams(t, sid) == 0 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		tg.injectProgress(t, sid, fmt.Sprintf("tick %d", i))
		progress.wait("tick", 500*time.Millisecond)
	}
	// The idle timeout cuts the stream; the client resumes it.
	resumes := tg.upstreamStats(t).Resumes
	waitUntil(t, "the client to resume its standalone stream", func() bool { return tg.upstreamStats(t).Resumes > resumes })

	failed := 0
	if err := callSearch(ctx, cs, "after the cut"); err != nil {
		failed++
		t.Error(err)
	}
	// slow_op idles 600ms between steps: the proxy cuts the call's own
	// stream after its priming event, and the client resumes it.
	params := &mcp.CallToolParams{Name: dualstack.ToolSlowOp, Arguments: map[string]any{"steps": 2, "interval_ms": 600}}
	params.SetProgressToken("slow")
	res, err := cs.CallTool(ctx, params)
	switch {
	case err != nil:
		failed++
		t.Errorf("CallTool slow_op across an idle cut: %v", err)
	case len(res.Content) == 0:
		failed++
		t.Errorf("slow_op returned no content")
	}

	delta := tg.counters(t).since(before)
	runs := tg.toolRuns(t) - runsBefore
	var cuts int
	for _, r := range tg.stack.Records() {
		if r.End.String() == "stream_idle_timeout" {
			cuts++
		}
	}
	t.Logf("%d streams cut by the idle timeout, upstream cursors %v; counters: %s", cuts, tg.stack.UpstreamCursors(), delta)
	summary("sdk_reconnect", failed, runs, int(delta.reinits()))

	st := tg.upstreamStats(t)
	if st.SearchIndexRuns != 1 || st.SlowOpRuns != 1 {
		t.Errorf("search_index ran %d, slow_op %d times; want once each", st.SearchIndexRuns, st.SlowOpRuns)
	}
	if cuts < 2 {
		t.Errorf("%d streams were cut by the idle timeout, want ≥ 2 (the standalone stream and the call's)", cuts)
	}
	if n := delta.get("cursors_stripped_total"); n < 2 {
		t.Errorf("cursors_stripped_total grew by %d, want ≥ 2 (counters: %s)", n, delta)
	}
	for _, c := range tg.stack.UpstreamCursors() {
		if _, err := dualstack.ParseEventID(c); err != nil {
			t.Errorf("the upstream received Last-Event-ID %q: %v", c, err)
		}
	}
	if n := delta.reinits() + delta.get("drain_race_detected_total"); n != 0 {
		t.Errorf("the filter raised %d alarms on reconnects that lose nothing (counters: %s)", n, delta)
	}
}
