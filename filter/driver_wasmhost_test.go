package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// builtWasm is the artifact the wasm driver tests; `make test` builds it
// before running the tests.
const builtWasm = "../build/mcp-resume-guard.wasm"

// wasmBytes reads the built plugin once per test binary. wasmhost keeps one
// process-wide wazero compilation cache, so only the first Host compiles it.
var wasmBytes = sync.OnceValues(func() ([]byte, error) { return builder.ReadFresh(builtWasm, ".") })

// faultsWasm is the plugin built with -tags faults (filter/faults_on.go:
// fault points that panic when the host's property
// mcp_resume_guard_test.panic_at names them), built once per test binary
// next to the product build.
var faultsWasm = sync.OnceValues(func() ([]byte, error) {
	const out = "../build/mcp-resume-guard-faults.wasm"
	if _, err := builder.Build(context.Background(), builder.Options{Package: ".", Output: out, Tags: []string{"faults"}, Log: io.Discard}); err != nil {
		return nil, fmt.Errorf("building the fault-point variant: %w", err)
	}
	return os.ReadFile(out)
})

// wasmDriver runs the built plugin in the embedded proxy-wasm host.
type wasmDriver struct {
	t    *testing.T
	host *wasmhost.Host
	log  *logCapture
}

func startWasm(t *testing.T, cfg string, vms int, panicAt, logLevel string) (driver, error) {
	t.Helper()
	b, err := wasmBytes()
	var props map[string][]byte
	if panicAt != "" {
		b, err = faultsWasm()
		props = map[string][]byte{"mcp_resume_guard_test.panic_at": []byte(panicAt)}
	}
	if err != nil {
		t.Fatal(err)
	}
	logs := &logCapture{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wasm host log:\n%s", logs.dump())
		}
	})
	h, err := wasmhost.New(context.Background(), wasmhost.Options{
		Wasm:         b,
		PluginConfig: []byte(cfg),
		VMs:          vms,
		Logger:       slog.New(logs),
		LogLevel:     logLevel,
		Properties:   props,
		// Every wasm test also records growths of linear memory inside
		// proxy_on_memory_allocate (TestNoMemoryGrowthInsideAllocate).
		CountAllocGrowth: true,
		// ... and counts its host calls (TestHeaderMapSizeAskedOnlyWhenTheArenaIsTooSmall).
		CountHostCalls: true,
	})
	d := &wasmDriver{t: t, host: h, log: logs}
	if err != nil {
		return d, fmt.Errorf("%w; critical log: %s", err, strings.Join(logs.lines(logCritical), "\n"))
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return d, nil
}

func (d *wasmDriver) open(hs [][2]string, eos bool) (stream, types.Action) {
	d.t.Helper()
	s, err := d.host.NewStream(wasmhost.StreamInfo{})
	if err != nil {
		d.t.Fatalf("new stream: %v", err)
	}
	ws := &wasmStream{d: d, s: s}
	act, err := s.OnRequestHeaders(toHost(hs), eos)
	if err != nil {
		d.t.Fatalf("request headers: %v", err)
	}
	return ws, types.Action(act)
}

func (d *wasmDriver) counter(name string) (uint64, bool) {
	v, ok := d.host.Metric(name)
	return uint64(v), ok
}

func (d *wasmDriver) logs(level logLevel) []string { return d.log.lines(level) }

func (d *wasmDriver) failSharedData(op string) {
	d.host.SetSharedDataFault(func(o wasmhost.SharedDataOp, _ string) bool { return string(o) == op })
}

type wasmStream struct {
	d *wasmDriver
	s *wasmhost.Stream
}

func (s *wasmStream) requestHeaders() [][2]string { return fromHost(s.s.RequestHeaders()) }

func (s *wasmStream) localReply() *localReply {
	lr := s.s.LocalReply()
	if lr == nil {
		return nil
	}
	return &localReply{status: lr.Status, headers: fromHost(lr.Headers), body: lr.Body}
}

func (s *wasmStream) runLocalReply() ([][2]string, []byte) {
	hs, body, err := s.s.RunLocalReply()
	if err != nil {
		s.d.t.Fatalf("local reply: %v", err)
	}
	return fromHost(hs), body
}

func (s *wasmStream) onResponseHeaders(hs [][2]string, eos bool) types.Action {
	act, err := s.s.OnResponseHeaders(toHost(hs), eos)
	if err != nil {
		s.d.t.Fatalf("response headers: %v", err)
	}
	return types.Action(act)
}

func (s *wasmStream) responseHeaders() [][2]string { return fromHost(s.s.ResponseHeaders()) }

func (s *wasmStream) onResponseBody(chunk []byte, eos bool) []byte {
	out, _, err := s.s.OnResponseBody(chunk, eos)
	if err != nil {
		s.d.t.Fatalf("response body: %v", err)
	}
	return bytes.Clone(out) // owned by the caller, like the native driver's
}

func (s *wasmStream) end(cut bool) {
	reason := wasmhost.EndComplete
	if cut {
		reason = wasmhost.EndDownstreamDisconnect
	}
	if err := s.s.Finish(reason); err != nil {
		s.d.t.Fatalf("finish: %v", err)
	}
}

// endDeferredLog ends the stream as Envoy does for HTTP/3 with deferred
// logging: proxy_on_done and proxy_on_delete, then proxy_on_log.
func (s *wasmStream) endDeferredLog() {
	if err := s.s.FinishDeferredLog(wasmhost.EndComplete); err != nil {
		s.d.t.Fatalf("finish (deferred log): %v", err)
	}
}

func (s *wasmStream) endWithFlags(flags uint64) {
	s.s.AddFlags(flags)
	if err := s.s.Finish(wasmhost.EndComplete); err != nil {
		s.d.t.Fatalf("finish: %v", err)
	}
}

func (s *wasmStream) onResponseTrailers(hs [][2]string) types.Action {
	act, err := s.s.OnResponseTrailers(toHost(hs))
	if err != nil {
		s.d.t.Fatalf("response trailers: %v", err)
	}
	return types.Action(act)
}

func (s *wasmStream) vm() int { return s.s.VM() }

func toHost(hs [][2]string) wasmhost.Headers {
	out := make(wasmhost.Headers, len(hs))
	for i, kv := range hs {
		out[i] = wasmhost.Header{Key: kv[0], Value: kv[1]}
	}
	return out
}

func fromHost(hs wasmhost.Headers) [][2]string {
	out := make([][2]string, len(hs))
	for i, h := range hs {
		out[i] = [2]string{h.Key, h.Value}
	}
	return out
}

// logCapture is a slog.Handler that keeps every record: the plugin's
// proxy_log lines (attribute source=wasm) by level, and the host's own.
type logCapture struct {
	mu   sync.Mutex
	recs []logRecord
}

type logRecord struct {
	level  slog.Level
	msg    string
	plugin bool
	attrs  string
}

// slog levels wasmhost logs the proxy-wasm levels at.
var slogLevels = map[logLevel]slog.Level{
	logWarn:     slog.LevelWarn,
	logError:    slog.LevelError,
	logCritical: slog.LevelError + 4,
	logInfo:     slog.LevelInfo,
	logDebug:    slog.LevelDebug,
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message}
	var attrs strings.Builder
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "source" && a.Value.String() == "wasm" {
			rec.plugin = true
		}
		fmt.Fprintf(&attrs, " %s=%v", a.Key, a.Value)
		return true
	})
	rec.attrs = attrs.String()
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	return nil
}

// WithAttrs and WithGroup drop the attributes: the host logs none that way.
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

// lines returns the plugin's messages at exactly level.
func (c *logCapture) lines(level logLevel) []string {
	want := slogLevels[level]
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.recs {
		if r.plugin && r.level == want {
			out = append(out, r.msg)
		}
	}
	return out
}

// dump returns every record, one a line.
func (c *logCapture) dump() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, r := range c.recs {
		fmt.Fprintf(&b, "%v %s%s\n", r.level, r.msg, r.attrs)
	}
	return b.String()
}
