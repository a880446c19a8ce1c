package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// guardOptions configure [startGuard].
type guardOptions struct {
	wasm, pluginConfig []byte
	vms                int
	streamIdleTimeout  time.Duration
	logger             *slog.Logger
	onDone             func(wasmhost.StreamRecord)
	// fault, when set, picks the fault the host injects into each
	// request's response stream (wasmhost.ProxyOptions.Fault).
	fault func(*http.Request) wasmhost.Fault
}

// Guard is one guard proxy listening on 127.0.0.1: the embedded proxy-wasm
// host running the plugin's VMs, with their own shared data, in front of an
// upstream. It is what one Envoy process is: several Guards share nothing.
type Guard struct {
	// URL is the guard's front door, e.g. "http://127.0.0.1:41234".
	URL string

	upstream *url.URL
	opts     guardOptions
	srv      *http.Server
	cur      atomic.Pointer[guardGen]
	inflight atomic.Int64
	restarts atomic.Int64
}

// guardGen is one life of a guard: a host and the proxy running through it.
type guardGen struct {
	host  *wasmhost.Host
	proxy *wasmhost.Proxy
}

// startGuard starts a guard in front of upstreamURL and returns when it
// listens. Stop it with [Guard.Close].
func startGuard(ctx context.Context, upstreamURL string, opts guardOptions) (*Guard, error) {
	up, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, fmt.Errorf("e2e: upstream URL: %w", err)
	}
	g := &Guard{upstream: up, opts: opts}
	gen, err := g.newGen(ctx)
	if err != nil {
		return nil, err
	}
	g.cur.Store(gen)
	if g.srv, g.URL, err = serveLoopback(&http.Server{Handler: http.HandlerFunc(g.serve)}); err != nil {
		_ = gen.host.Close(ctx)
		return nil, fmt.Errorf("e2e: proxy listener: %w", err)
	}
	return g, nil
}

// serveLoopback serves srv on a free port of 127.0.0.1 and returns it with
// its URL ("http://127.0.0.1:PORT").
func serveLoopback(srv *http.Server) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	if srv.ReadHeaderTimeout == 0 {
		srv.ReadHeaderTimeout = 30 * time.Second
	}
	go func() { _ = srv.Serve(ln) }()
	return srv, "http://" + ln.Addr().String(), nil
}

func (g *Guard) newGen(ctx context.Context) (*guardGen, error) {
	host, err := wasmhost.New(ctx, wasmhost.Options{
		Wasm: g.opts.wasm, PluginConfig: g.opts.pluginConfig, VMs: g.opts.vms, Logger: g.opts.logger,
	})
	if err != nil {
		return nil, fmt.Errorf("e2e: loading the plugin: %w", err)
	}
	proxy := wasmhost.NewProxy(host, g.upstream, wasmhost.ProxyOptions{
		Routes:            Routes,
		StreamIdleTimeout: g.opts.streamIdleTimeout,
		OnDone:            g.opts.onDone,
		Fault:             g.opts.fault,
	})
	return &guardGen{host: host, proxy: proxy}, nil
}

// serve counts the request in flight until its stream ended in the plugin
// and OnDone ran.
func (g *Guard) serve(w http.ResponseWriter, r *http.Request) {
	g.inflight.Add(1)
	defer g.inflight.Add(-1)
	g.cur.Load().proxy.ServeHTTP(w, r)
}

// Host returns the host running the plugin now (a new one after each
// [Guard.Restart]).
func (g *Guard) Host() *wasmhost.Host { return g.cur.Load().host }

// Restart replaces the plugin's VMs by fresh ones with empty shared data,
// as an Envoy restart or a plugin upgrade does: every watermark the guard
// held is gone. New requests go to the new VMs at once; the old ones are
// closed once their streams ended (at most 5s).
func (g *Guard) Restart(ctx context.Context) error {
	gen, err := g.newGen(ctx)
	if err != nil {
		return err
	}
	old := g.cur.Swap(gen)
	g.restarts.Add(1)
	g.Settle(5 * time.Second)
	return old.host.Close(ctx)
}

// Restarts returns how many times the guard was restarted.
func (g *Guard) Restarts() int64 { return g.restarts.Load() }

// Settle waits until the guard has no request in flight, or at most
// timeout, and reports whether it saw that.
func (g *Guard) Settle(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for g.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// InFlight returns the number of requests not yet finished.
func (g *Guard) InFlight() int64 { return g.inflight.Load() }

// Close stops listening, waits up to 5s for the streams in flight to end
// (each one's proxy_on_log, proxy_on_done and proxy_on_delete) and closes
// the VMs. Close the upstream first, so that held streams end.
func (g *Guard) Close() {
	_ = g.srv.Close()
	g.Settle(5 * time.Second)
	_ = g.Host().Close(context.Background())
}

// Counters returns every plugin counter of the guard's current VMs, by full
// name.
func (g *Guard) Counters() map[string]int64 {
	out := map[string]int64{}
	for name, v := range g.Host().Metrics() {
		if strings.HasPrefix(name, MetricPrefix) {
			out[name] = v
		}
	}
	return out
}
