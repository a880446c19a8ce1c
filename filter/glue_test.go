package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Tests of the built plugin with the ABI glue it is built with
// (internal/abiglue): host data lives in an arena that every outermost
// callback rewinds, so values kept across callbacks must be copies; and the
// hot paths must not allocate much.

// startGlueHost starts the built plugin in one VM with testConfig.
func startGlueHost(t *testing.T, opts wasmhost.Options) *wasmhost.Host {
	t.Helper()
	b, err := wasmBytes()
	if err != nil {
		t.Fatal(err)
	}
	opts.Wasm, opts.PluginConfig, opts.VMs = b, []byte(testConfig), 1
	h, err := wasmhost.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// TestKeptValuesSurviveArenaReuse keeps a legacy session (learnt from the
// endpoint event of its stream, in a response-body callback) and a session
// learnt from an initialize response's Mcp-Session-Id (response-headers callback)
// across other streams whose callbacks read values of the same lengths,
// which the glue places at the same arena offsets, while the guest collects
// garbage at nearly every allocation (GOGC=1) and overwrites freed memory
// (GODEBUG=clobberfree=1). Each stream's tail must still be recorded under
// its own session: the later resumes with the drained-but-unacked cursor are
// drain races, not unknown cursors.
func TestKeptValuesSurviveArenaReuse(t *testing.T) {
	h := startGlueHost(t, wasmhost.Options{Env: []string{"GOGC=1", "GODEBUG=clobberfree=1"}})
	open := func(hs wasmhost.Headers) *wasmhost.Stream {
		t.Helper()
		s, err := h.NewStream(wasmhost.StreamInfo{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.OnRequestHeaders(hs, true); err != nil {
			t.Fatal(err)
		}
		return s
	}
	sseHeaders := func(session string) wasmhost.Headers {
		hs := wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}}
		if session != "" {
			hs = append(hs, wasmhost.Header{Key: "mcp-session-id", Value: session})
		}
		return hs
	}
	respond := func(s *wasmhost.Stream, session string) {
		t.Helper()
		if _, err := s.OnResponseHeaders(sseHeaders(session), false); err != nil {
			t.Fatal(err)
		}
	}
	body := func(s *wasmhost.Stream, chunk string, eos bool) {
		t.Helper()
		if _, _, err := s.OnResponseBody([]byte(chunk), eos); err != nil {
			t.Fatal(err)
		}
	}
	const legacy, fresh = "legacy-session-aaaaaaaaaaaaaaaa", "fresh-session-bbbbbbbbbbbbbbbbb"
	noise := func(i int) string { // as long as either session, other bytes
		return strings.Repeat(string(rune('c'+i%20)), len(legacy))
	}

	endpoint := func(session string) string { return "event: endpoint\ndata: /messages?sessionId=" + session + "\n\n" }
	a := open(wasmhost.Headers{{Key: ":method", Value: "GET"}, {Key: ":path", Value: "/sse"}})
	respond(a, "")
	body(a, endpoint(legacy), false)
	b := open(wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/mcp"}, {Key: "mcp-session-id", Value: "stale"}})
	respond(b, fresh)
	for i := range 20 {
		s := open(wasmhost.Headers{
			{Key: ":method", Value: "GET"}, {Key: ":path", Value: "/sse?sessionId=" + noise(i)},
			{Key: "last-event-id", Value: "sse:e-" + noise(i)},
		})
		respond(s, noise(i))
		body(s, endpoint(noise(i))+"id: e-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"p\":\""+strings.Repeat(noise(i), 40)+"\"}}\n\n", true)
		if err := s.Finish(wasmhost.EndComplete); err != nil {
			t.Fatal(err)
		}
	}
	body(a, evNotification+evResponse, false)
	body(b, evNotification+evResponse, false)
	for _, s := range []*wasmhost.Stream{a, b} {
		if err := s.Finish(wasmhost.EndDownstreamDisconnect); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		name string
		req  wasmhost.Headers
	}{
		{"legacy session from the endpoint event", wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/messages?sessionId=" + legacy}, {Key: "last-event-id", Value: "sse:e-2"}}},
		{"session from the response header", wasmhost.Headers{{Key: ":method", Value: "GET"}, {Key: ":path", Value: "/mcp"}, {Key: "mcp-session-id", Value: fresh}, {Key: "last-event-id", Value: "http:e-2"}}},
	} {
		s := open(c.req)
		if lr := s.LocalReply(); lr == nil || lr.Status != 404 || !strings.Contains(string(lr.Body), "drain_race") {
			t.Errorf("%s: the resume at the cut stream's last event was not refused as a drain race (reply %+v): the tail went to another session", c.name, lr)
		}
	}
	if n, _ := h.Metric(MetricPrefix + "drain_race_detected_total"); n != 2 {
		t.Errorf("drain races detected: %d, want 2", n)
	}
}

// TestRewoundCursorSurvivesStoreReuse: a resume rewound to the previous
// event of a drain-raced tail forwards an ID taken from the watermark record,
// which the store decodes into scratch memory that its next record decode
// overwrites. The resumed stream keeps that ID for its response (the first
// event's previous ID), so it must be a copy: another session's resume, with
// IDs of the same lengths, runs between the request and the response, and
// the resumed stream's own drain race must still rewind to the original ID.
func TestRewoundCursorSurvivesStoreReuse(t *testing.T) {
	b, err := wasmBytes()
	if err != nil {
		t.Fatal(err)
	}
	h, err := wasmhost.New(context.Background(), wasmhost.Options{Wasm: b, VMs: 1, Env: []string{"GOGC=1", "GODEBUG=clobberfree=1"},
		PluginConfig: []byte(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind","mint_cursors":false}`)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	ev := func(id string) string {
		return "id: " + id + "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"
	}
	sse := wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}}
	cut := func(session, first, second string) { // a stream cut after two responses
		t.Helper()
		x := wasmhost.Exchange{
			Request:      wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/mcp"}, {Key: "mcp-session-id", Value: session}},
			Response:     sse,
			ResponseBody: [][]byte{[]byte(ev(first) + ev(second))},
			End:          wasmhost.EndDownstreamDisconnect,
		}
		if _, err := h.Simulate(x); err != nil {
			t.Fatal(err)
		}
	}
	resume := func(session, cursor string) wasmhost.Headers {
		return wasmhost.Headers{{Key: ":method", Value: "GET"}, {Key: ":path", Value: "/mcp"},
			{Key: "mcp-session-id", Value: session}, {Key: "last-event-id", Value: cursor}}
	}
	cut("session-a", "e-1", "e-2")
	cut("session-b", "x-8", "x-9")

	s, err := h.NewStream(wasmhost.StreamInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.OnRequestHeaders(resume("session-a", "http:e-2"), true); err != nil {
		t.Fatal(err)
	}
	if got := s.RequestHeaders().Value("last-event-id"); got != "e-1" {
		t.Fatalf("the drain race was forwarded as %q, want the rewind to e-1", got)
	}
	// Another session's rewound resume decodes its record into the same
	// scratch memory.
	res, err := h.Simulate(wasmhost.Exchange{Request: resume("session-b", "http:x-9"), Response: wasmhost.Headers{{Key: ":status", Value: "204"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Request.Value("last-event-id"); got != "x-8" {
		t.Fatalf("session-b's drain race was forwarded as %q, want x-8", got)
	}
	if _, err := s.OnResponseHeaders(sse, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.OnResponseBody([]byte(ev("e-3")), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(wasmhost.EndDownstreamDisconnect); err != nil {
		t.Fatal(err)
	}

	res, err = h.Simulate(wasmhost.Exchange{Request: resume("session-a", "http:e-3"), Response: wasmhost.Headers{{Key: ":status", Value: "204"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Request.Value("last-event-id"); got != "e-1" {
		t.Errorf("the resumed stream's drain race was rewound to %q, want e-1 (the cursor it resumed from)", got)
	}
}

// mallocCounter counts the guest's heap allocations: calls into the Go
// runtime's allocator entry points (runtime.mallocgc and the size-class
// specialised runtime.mallocgc* functions), outermost ones only, with the
// guest functions that called them.
type mallocCounter struct {
	depth, count int
	sites        map[string]int
}

func (c *mallocCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if !strings.HasPrefix(def.Name(), "runtime.mallocgc") {
		return nil
	}
	return c
}

func (c *mallocCounter) Before(_ context.Context, _ api.Module, _ api.FunctionDefinition, _ []uint64, si experimental.StackIterator) {
	if c.depth == 0 {
		c.count++
		if c.sites != nil {
			var names []string
			for si.Next() && len(names) < 6 {
				names = append(names, si.Function().Definition().Name())
			}
			c.sites[strings.Join(names, " < ")]++
		}
	}
	c.depth++
}

// report lists the allocation sites seen, most frequent first, per exchange.
func (c *mallocCounter) report(exchanges int) string {
	sites := make([]string, 0, len(c.sites))
	for s := range c.sites {
		sites = append(sites, s)
	}
	sort.Slice(sites, func(i, j int) bool { return c.sites[sites[i]] > c.sites[sites[j]] })
	var b strings.Builder
	for _, s := range sites {
		fmt.Fprintf(&b, "  %.2f  %s\n", float64(c.sites[s])/float64(exchanges), s)
	}
	return b.String()
}

func (c *mallocCounter) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {
	c.depth--
}

func (c *mallocCounter) Abort(context.Context, api.Module, api.FunctionDefinition, error) {
	c.depth--
}

// TestHeapAllocationsPerExchange counts the guest's heap allocations of the
// exchanges make bench measures, averaged over many (the first ones fill
// pools and grow buffers): an ordinary request, a request on a path no route
// guards, a short event stream whose tail is written and acknowledged, and
// a resume that reads a watermark record and forwards the cursor untagged,
// answered with JSON or (as make bench does) with an event stream. Stream
// contexts are reused once their stream ended (pluginContext.release); a
// guarded one keeps its session as a digest, not a copy. A resume decodes
// its watermark record into the store's scratch memory and keeps the cursor
// it forwards in a stream tail from the plugin's free list, and an
// event-stream answer takes its rewriter from another: none of it
// allocates, and with reused contexts neither does the stream itself (what
// a short event stream still allocates is the SDK's copy of the response
// flags). Before that the request made 2 and a resume 7 and 8 (a
// session copy, the record, its tail slice and strings, a cursor copy, the
// tail's ID buffer). Before the arena glue
// (f275d17) the request, unguarded and JSON-answered resume made 10, 6 and
// 20.
func TestHeapAllocationsPerExchange(t *testing.T) {
	counter := &mallocCounter{sites: map[string]int{}}
	h := startGlueHost(t, wasmhost.Options{Listener: counter})
	const sessions, rounds = 20, 10
	session := func(i int) string { return "s-" + strings.Repeat("0123456789abcdef", 2) + "-" + string(rune('a'+i)) }
	for i := range sessions {
		x := wasmhost.Exchange{
			Request: wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/mcp"}, {Key: "mcp-session-id", Value: session(i)}},
			Response: wasmhost.Headers{
				{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"},
			},
			ResponseBody: [][]byte{[]byte(evNotification + evResponse)},
		}
		if _, err := h.Simulate(x); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		max  float64
		x    func(i int) wasmhost.Exchange
	}{
		{"request", 0, func(i int) wasmhost.Exchange {
			return wasmhost.Exchange{
				Request:  wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/mcp"}, {Key: "mcp-session-id", Value: session(i)}},
				Response: wasmhost.Headers{{Key: ":status", Value: "202"}},
			}
		}},
		{"unguarded", 0, func(i int) wasmhost.Exchange {
			return wasmhost.Exchange{
				Request:  wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/api"}, {Key: "mcp-session-id", Value: session(i)}},
				Response: wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "application/json"}},
			}
		}},
		{"resume", 0, func(i int) wasmhost.Exchange {
			return wasmhost.Exchange{
				Request: wasmhost.Headers{{Key: ":method", Value: "GET"}, {Key: ":path", Value: "/mcp"},
					{Key: "mcp-session-id", Value: session(i)}, {Key: "last-event-id", Value: "http:e-2"}},
				Response: wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "application/json"}},
			}
		}},
		// A short event stream: its tail is written (RecordTail, which no
		// longer copies the IDs, 2 allocations before) and acknowledged; its
		// end reads the response flags (the SDK allocates the property).
		// It made 5 before (2 tail ID copies, a session copy).
		{"stream", 1, func(i int) wasmhost.Exchange {
			return wasmhost.Exchange{
				Request:      wasmhost.Headers{{Key: ":method", Value: "POST"}, {Key: ":path", Value: "/mcp"}, {Key: "mcp-session-id", Value: session(i)}},
				Response:     wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}},
				ResponseBody: [][]byte{[]byte(evNotification + evResponse)},
			}
		}},
		// As make bench resumes: the answer is an event stream, which takes
		// a rewriter (the plugin's free list) and uses the tail holding the
		// forwarded cursor.
		{"resume (event stream)", 0, func(i int) wasmhost.Exchange {
			return wasmhost.Exchange{
				Request: wasmhost.Headers{{Key: ":method", Value: "GET"}, {Key: ":path", Value: "/mcp"},
					{Key: "mcp-session-id", Value: session(i)}, {Key: "last-event-id", Value: "http:e-2"}},
				Response: wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}},
			}
		}},
	} {
		var warm, n int
		for r := range rounds {
			if r == 2 {
				warm = counter.count
				clear(counter.sites)
			}
			for i := range sessions {
				res, err := h.Simulate(c.x(i))
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(c.name, "resume") && res.Request.Value("last-event-id") != "e-2" {
					t.Fatalf("resume: cursor forwarded as %q, want e-2 (no watermark read?)", res.Request.Value("last-event-id"))
				}
				if r >= 2 {
					n++
				}
			}
		}
		per := float64(counter.count-warm) / float64(n)
		t.Logf("%s: %.2f heap allocations per exchange", c.name, per)
		if per > c.max {
			t.Errorf("%s: %.2f heap allocations per exchange, want at most %v; by call site:\n%s", c.name, per, c.max, counter.report(n))
		}
	}
}
