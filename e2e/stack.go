package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// MetricPrefix starts the name of every counter the plugin defines.
const MetricPrefix = "mcp_resume_guard_"

// Routes map the upstream's paths to the route names of envoy/envoy.yaml,
// which the plugin configurations in envoy/plugin-config/ name.
var Routes = []wasmhost.Route{
	{PathPrefix: "/mcp", RouteName: "mcp-streamable"},
	{PathPrefix: "/sse", RouteName: "mcp-legacy-stream"},
	{PathPrefix: "/messages", RouteName: "mcp-legacy-messages"},
}

// Options configure [Start].
type Options struct {
	// Wasm is the plugin module (build/mcp-resume-guard.wasm).
	Wasm []byte
	// PluginConfig is the plugin configuration (JSON).
	PluginConfig []byte
	// VMs is the number of plugin VMs, like Envoy worker threads (default 2).
	VMs int
	// StreamIdleTimeout cuts proxied streams idle for this long (0: never).
	StreamIdleTimeout time.Duration
	// Upstream configures the reference upstream.
	Upstream dualstack.Options
	// Logger receives the proxy's request lines and the plugin's log lines
	// (default: discard). The plugin's warnings are also kept, see
	// [Stack.GuardLog].
	Logger *slog.Logger
}

// Stack is the reference upstream and, in front of it, the embedded
// proxy-wasm host running the plugin, both listening on 127.0.0.1.
type Stack struct {
	// Upstream is the reference MCP server.
	Upstream *dualstack.Server
	// UpstreamURL reaches the upstream directly, e.g. "http://127.0.0.1:41234".
	UpstreamURL string
	// ProxyURL is the proxy's front door.
	ProxyURL string
	// Host runs the plugin's VMs.
	Host *wasmhost.Host

	upstreamSrv *http.Server
	guard       *Guard
	guardLog    *logStore

	mu      sync.Mutex
	records []wasmhost.StreamRecord
	cursors []string
}

// Start starts the upstream and the proxy and returns when both listen.
// Stop them with [Stack.Close].
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if len(opts.Wasm) == 0 {
		return nil, errors.New("e2e: Options.Wasm is empty")
	}
	if opts.VMs <= 0 {
		opts.VMs = 2
	}
	s := &Stack{guardLog: &logStore{}}
	inner := slog.DiscardHandler
	if opts.Logger != nil {
		inner = opts.Logger.Handler()
	}
	logger := slog.New(&capturingHandler{inner: inner, store: s.guardLog})

	s.Upstream = dualstack.New(opts.Upstream)
	var err error
	s.upstreamSrv, s.UpstreamURL, err = serveLoopback(&http.Server{Handler: s.recordCursors(s.Upstream)})
	if err != nil {
		return nil, fmt.Errorf("e2e: upstream listener: %w", err)
	}

	s.guard, err = startGuard(ctx, s.UpstreamURL, guardOptions{
		wasm: opts.Wasm, pluginConfig: opts.PluginConfig, vms: opts.VMs, logger: logger,
		streamIdleTimeout: opts.StreamIdleTimeout, onDone: s.record,
	})
	if err != nil {
		s.closeUpstream()
		return nil, err
	}
	s.Host, s.ProxyURL = s.guard.Host(), s.guard.URL
	return s, nil
}

// Close stops the proxy, the upstream and the plugin's VMs. It waits up to
// 5s for the proxy's streams to end (each one's proxy_on_log,
// proxy_on_done and proxy_on_delete) before the VMs are closed.
func (s *Stack) Close() {
	s.Upstream.Close() // ends the upstream's open streams
	s.guard.Close()
	_ = s.upstreamSrv.Close()
}

func (s *Stack) closeUpstream() {
	s.Upstream.Close()
	_ = s.upstreamSrv.Close()
}

// Settle waits until the proxy has no request in flight, or at most
// timeout, and reports whether it saw that. After a client cut a stream, this is the
// moment the plugin has recorded how the stream ended.
func (s *Stack) Settle(timeout time.Duration) bool { return s.guard.Settle(timeout) }

// InFlight returns the number of proxy requests not yet finished.
func (s *Stack) InFlight() int64 { return s.guard.InFlight() }

func (s *Stack) record(rec wasmhost.StreamRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, rec)
}

// Records returns one record per finished proxy stream, in the order they
// ended: method, path, status, the VM that ran it, how it ended.
func (s *Stack) Records() []wasmhost.StreamRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// recordCursors keeps the Last-Event-ID of every request that reaches the
// upstream, to check what the proxy forwarded.
func (s *Stack) recordCursors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.Header.Get("Last-Event-ID"); c != "" {
			s.mu.Lock()
			s.cursors = append(s.cursors, c)
			s.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// UpstreamCursors returns the Last-Event-ID values the upstream received,
// in order.
func (s *Stack) UpstreamCursors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cursors)
}

// GuardLog returns the plugin's log lines at warning level and above, in
// order (e.g. "mcp-resume-guard: cross-transport cursor: …").
func (s *Stack) GuardLog() []string { return s.guardLog.lines() }

// Counter returns the value of the plugin counter name, with or without
// [MetricPrefix] (0 if the plugin did not define it).
func (s *Stack) Counter(name string) int64 {
	v, _ := s.Host.Metric(fullMetricName(name))
	return v
}

// Counters returns every plugin counter by full name.
func (s *Stack) Counters() map[string]int64 { return s.guard.Counters() }

func fullMetricName(name string) string {
	if strings.HasPrefix(name, MetricPrefix) {
		return name
	}
	return MetricPrefix + name
}
