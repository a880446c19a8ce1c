package wasmhost

import (
	"context"
	"testing"
)

// Measured on the 2-CPU build machine (go test -bench . -benchtime 2s),
// per stream, quiet machine (busy machine in parentheses): HostFloor
// 0.26 µs (0.6) — six guest calls and the host's bookkeeping, 0
// allocations; NoopCreateHeadersLogDelete 1.35 µs (3–4) and NoopStream
// 1.5 µs (2.5) — the standard-Go guest's own entry cost dominates;
// Read3Stream 5.5 µs (7) — each header read allocates guest memory through
// proxy_on_memory_allocate, a re-entrant call into the Go guest, as in
// Envoy.

// benchExchange is the minimal stream: context create, request headers,
// response headers (no bodies), log, done, delete.
func benchExchange() Exchange {
	return Exchange{
		Request: get("/mcp", Header{"mcp-session-id", "s-1"}, Header{"last-event-id", "http:e-1"},
			Header{"accept", "text/event-stream"}),
		Response: ok200(),
	}
}

func benchmarkPlugin(b *testing.B, plugin string) {
	h, _ := newHost(b, plugin, Options{})
	x := benchExchange()
	if _, err := h.Simulate(x); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Simulate(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoopStream is the host's per-request cost with a do-nothing
// plugin.
func BenchmarkNoopStream(b *testing.B) { benchmarkPlugin(b, "noop") }

// BenchmarkRead3Stream reads three request headers per request.
func BenchmarkRead3Stream(b *testing.B) { benchmarkPlugin(b, "read3") }

// BenchmarkNoopCreateHeadersLogDelete is the unit: context create,
// request headers, log, done, delete.
func BenchmarkNoopCreateHeadersLogDelete(b *testing.B) {
	h, _ := newHost(b, "noop", Options{})
	req := benchExchange().Request
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := h.NewStream(StreamInfo{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.OnRequestHeaders(req, true); err != nil {
			b.Fatal(err)
		}
		if err := s.Finish(EndComplete); err != nil {
			b.Fatal(err)
		}
		s.Release()
	}
}

// BenchmarkHostFloor runs the stream of BenchmarkNoopStream against a
// module without a language runtime: the host's own cost.
func BenchmarkHostFloor(b *testing.B) {
	h, err := New(context.Background(), Options{Wasm: emptyPlugin()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	x := benchExchange()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Simulate(x); err != nil {
			b.Fatal(err)
		}
	}
}
