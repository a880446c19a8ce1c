package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/front"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// ReplicaOptions configure [StartReplicas].
type ReplicaOptions struct {
	// Wasm is the plugin module (build/mcp-resume-guard.wasm).
	Wasm []byte
	// PluginConfig is the plugin configuration of every replica (JSON).
	PluginConfig []byte
	// Replicas is the number of guard replicas (default 3).
	Replicas int
	// VMs is the number of plugin VMs of each replica (default 2).
	VMs int
	// Front is how the front spreads traffic over the replicas.
	Front front.Policy
	// Upstream configures the reference upstream.
	Upstream dualstack.Options
	// Fault, when set, picks the fault every replica's host injects into
	// each request's response stream (e.g. a cut after N events).
	Fault func(*http.Request) wasmhost.Fault
}

// Replicas is the replicated topology: one reference upstream, several
// guard replicas in front of it that share nothing (each its own VMs and
// shared data, as separate Envoy processes are), and a front spreading
// client traffic over the replicas. Everything listens on 127.0.0.1.
type Replicas struct {
	// Upstream is the reference MCP server, shared by every replica.
	Upstream *dualstack.Server
	// UpstreamURL reaches the upstream directly (its /debug hooks).
	UpstreamURL string
	// Guards are the replicas, in the front's backend order.
	Guards []*Guard
	// Front is the load balancer; FrontURL its front door, where clients go.
	Front    *front.Front
	FrontURL string

	upstreamSrv *http.Server
	frontSrv    *http.Server

	mu       sync.Mutex
	failures []string
	ended    map[string]*streamEnd // by StreamTokenHeader value
}

// StreamTokenHeader names a request header a client may set on a request
// whose stream it is going to cut; [Replicas.StreamDone] then tells when
// the replica that served it has finished the stream (its proxy_on_log and
// proxy_on_done ran: the plugin recorded how the stream ended). A real
// client reconnects after a backoff; this is the test's way to resume no
// sooner than the proxy noticed the cut, without guessing a delay.
const StreamTokenHeader = "X-E2e-Stream"

// streamEnd is closed once the stream carrying its token ended.
type streamEnd struct {
	ch   chan struct{}
	done bool
}

// StartReplicas starts the topology and returns when every part listens.
// Stop it with [Replicas.Close].
func StartReplicas(ctx context.Context, opts ReplicaOptions) (*Replicas, error) {
	if len(opts.Wasm) == 0 {
		return nil, errors.New("e2e: ReplicaOptions.Wasm is empty")
	}
	if opts.Replicas <= 0 {
		opts.Replicas = 3
	}
	if opts.VMs <= 0 {
		opts.VMs = 2
	}
	rs := &Replicas{Upstream: dualstack.New(opts.Upstream), ended: map[string]*streamEnd{}}
	var err error
	if rs.upstreamSrv, rs.UpstreamURL, err = serveLoopback(&http.Server{Handler: rs.Upstream}); err != nil {
		return nil, fmt.Errorf("e2e: upstream listener: %w", err)
	}
	var backends []*url.URL
	for i := range opts.Replicas {
		g, err := startGuard(ctx, rs.UpstreamURL, guardOptions{
			wasm: opts.Wasm, pluginConfig: opts.PluginConfig, vms: opts.VMs, fault: opts.Fault,
			onDone: func(rec wasmhost.StreamRecord) { rs.recordFailure(i, rec); rs.recordEnd(rec) },
		})
		if err != nil {
			rs.Close()
			return nil, err
		}
		rs.Guards = append(rs.Guards, g)
		u, _ := url.Parse(g.URL)
		backends = append(backends, u)
	}
	if rs.Front, err = front.New(backends, opts.Front); err != nil {
		rs.Close()
		return nil, err
	}
	if rs.frontSrv, rs.FrontURL, err = serveLoopback(rs.Front.Server()); err != nil {
		rs.Close()
		return nil, fmt.Errorf("e2e: front listener: %w", err)
	}
	return rs, nil
}

// Close stops the front, the upstream (ending its open streams) and the
// replicas.
func (rs *Replicas) Close() {
	if rs.frontSrv != nil {
		_ = rs.frontSrv.Close()
	}
	rs.Upstream.Close()
	for _, g := range rs.Guards {
		g.Close()
	}
	_ = rs.upstreamSrv.Close()
}

// recordFailure keeps a replica's stream that failed upstream or in the
// host.
func (rs *Replicas) recordFailure(replica int, rec wasmhost.StreamRecord) {
	if rec.Err == nil && rec.End != wasmhost.EndUpstreamFailure && rec.End != wasmhost.EndHostFailure {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.failures = append(rs.failures, fmt.Sprintf("replica %d: %s %s: status %d, end %v, vm %d: %v", replica, rec.Method, rec.Path, rec.Status, rec.End, rec.VM, rec.Err))
}

// recordEnd closes the channel of the stream's token, if it carried one.
func (rs *Replicas) recordEnd(rec wasmhost.StreamRecord) {
	tok := rec.Header.Get(StreamTokenHeader)
	if tok == "" {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	e := rs.endLocked(tok)
	if !e.done {
		e.done = true
		close(e.ch)
	}
}

func (rs *Replicas) endLocked(tok string) *streamEnd {
	e := rs.ended[tok]
	if e == nil {
		e = &streamEnd{ch: make(chan struct{})}
		rs.ended[tok] = e
	}
	return e
}

// StreamDone returns a channel closed once a replica finished a stream
// whose request carried StreamTokenHeader with value token.
func (rs *Replicas) StreamDone(token string) <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.endLocked(token).ch
}

// Failures returns the streams that failed in a replica (upstream failure
// or host failure) and what went wrong between the front and the replicas,
// in order.
func (rs *Replicas) Failures() []string {
	rs.mu.Lock()
	out := slices.Clone(rs.failures)
	rs.mu.Unlock()
	return append(out, rs.Front.Errors()...)
}

// Counters returns every plugin counter summed over the replicas' current
// VMs, by full name.
func (rs *Replicas) Counters() map[string]int64 {
	out := map[string]int64{}
	for _, g := range rs.Guards {
		for k, v := range g.Counters() {
			out[k] += v
		}
	}
	return out
}

// RestartAll restarts every replica (see [Guard.Restart]): all watermarks
// are lost, as when every Envoy of the tier is restarted or the plugin is
// upgraded.
func (rs *Replicas) RestartAll(ctx context.Context) error {
	var errs []error
	for i, g := range rs.Guards {
		if err := g.Restart(ctx); err != nil {
			errs = append(errs, fmt.Errorf("replica %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}
