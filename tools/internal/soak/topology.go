package soak

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/front"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// cutHeader names the request header that asks the replica serving the
// request to cut its response stream after that many body bytes (the trial
// proxy's fault injection, wasmhost.Fault.CutAfterBytes). The soak's client
// transport sets it; the upstream ignores it.
const cutHeader = "X-Soak-Cut-After-Bytes"

// cutFault reads cutHeader: the fault the trial proxy injects into r's
// response stream.
func cutFault(r *http.Request) wasmhost.Fault {
	n, err := strconv.ParseInt(r.Header.Get(cutHeader), 10, 64)
	if err != nil || n <= 0 {
		return wasmhost.Fault{}
	}
	return wasmhost.Fault{CutAfterBytes: n}
}

// topology is the soak's system under test, everything on 127.0.0.1: the
// reference upstream, replicas of the trial proxy in front of it, each its
// own plugin VMs and shared data (separate Envoy processes), and a
// round-robin front before them.
type topology struct {
	upstream    *dualstack.Server
	upstreamSrv *http.Server
	upstreamURL string
	replicas    []*replica
	front       *front.Front
	frontSrv    *http.Server
	frontURL    string

	quit     chan struct{}  // closed when the soak ends: drains stop
	draining sync.WaitGroup // replaced lives still draining
}

// replica is one trial proxy behind a stable address, restarted the way an
// Envoy hot restart does it: the new process (fresh VMs, empty shared data)
// takes every new request at once, the old one drains the requests it holds
// for up to drainTimeout and is then closed, cutting what is left (the
// clients' held streams, which they reconnect).
type replica struct {
	opts trial.Options
	srv  *http.Server // the stable address the front sends to
	url  string

	mu   sync.Mutex
	cur  *life
	gen  int   // lives before the current one
	dead ended // what the closed lives counted
}

// life is one process of a replica: the trial proxy and the reverse proxy
// that reaches it.
type life struct {
	srv      *trial.Server
	rp       *httputil.ReverseProxy
	inflight atomic.Int64
}

// pythonRetryMillis is the retry of the upstream's priming events in its
// Python layout (the default layout writes none): how long the SDK client
// waits before it polls for a call's result.
const pythonRetryMillis = 10

// drainTimeout bounds how long a replaced life keeps its requests.
const drainTimeout = 5 * time.Second

// ended is what lives of a replica counted: the plugin's counters (by
// name without counters.Prefix) and the VMs' traps.
type ended struct {
	counters map[string]int64
	traps    int64
}

// startTopology starts the upstream, n replicas of vms VMs each configured
// by the Envoy bootstrap, and the front.
func startTopology(ctx context.Context, wasm []byte, envoy *envoyconf.Bootstrap, n, vms int) (*topology, error) {
	t := &topology{upstream: dualstack.New(dualstack.Options{RetryMillis: pythonRetryMillis}), quit: make(chan struct{})}
	var err error
	if t.upstreamSrv, t.upstreamURL, err = serveLoopback(&http.Server{Handler: t.upstream, ReadHeaderTimeout: 30 * time.Second}); err != nil {
		return nil, fmt.Errorf("soak: upstream listener: %w", err)
	}
	var backends []*url.URL
	for range n {
		r := &replica{opts: trial.Options{Wasm: wasm, Envoy: envoy, Upstream: t.upstreamURL, VMs: vms, Fault: cutFault}}
		if r.cur, err = r.start(ctx); err != nil {
			t.close()
			return nil, fmt.Errorf("soak: replica %d: %w", len(t.replicas), err)
		}
		t.replicas = append(t.replicas, r)
		if r.srv, r.url, err = serveLoopback(&http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 30 * time.Second}); err != nil {
			t.close()
			return nil, fmt.Errorf("soak: replica listener: %w", err)
		}
		u, _ := url.Parse(r.url)
		backends = append(backends, u)
	}
	if t.front, err = front.New(backends, front.RoundRobin); err != nil {
		t.close()
		return nil, err
	}
	if t.frontSrv, t.frontURL, err = serveLoopback(t.front.Server()); err != nil {
		t.close()
		return nil, fmt.Errorf("soak: front listener: %w", err)
	}
	return t, nil
}

// start starts a life of the replica: a trial proxy on a free port.
func (r *replica) start(ctx context.Context) (*life, error) {
	srv, err := trial.Start(ctx, r.opts)
	if err != nil {
		return nil, err
	}
	target := &url.URL{Scheme: "http", Host: srv.ProxyAddr}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 64
	return &life{srv: srv, rp: &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.Host = pr.In.Host },
		Transport:     t,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}}, nil
}

// serve passes a request to the current life, which keeps it to its end.
func (r *replica) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	l := r.cur
	l.inflight.Add(1)
	r.mu.Unlock()
	defer l.inflight.Add(-1)
	// Both ways at once, as the front does (see front.ServeHTTP).
	if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	l.rp.ServeHTTP(w, req)
}

// restart starts a new life and sends every new request to it; the old one
// is closed once it drained (at most drainTimeout, or when the soak ends).
func (r *replica) restart(ctx context.Context, t *topology) error {
	next, err := r.start(ctx)
	if err != nil {
		return fmt.Errorf("soak: restarting a replica: %w", err)
	}
	r.mu.Lock()
	old := r.cur
	r.cur = next
	r.gen++
	r.mu.Unlock()
	t.draining.Go(func() {
		deadline := time.NewTimer(drainTimeout)
		defer deadline.Stop()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
	drain:
		for old.inflight.Load() > 0 {
			select {
			case <-deadline.C:
				break drain
			case <-t.quit:
				break drain
			case <-tick.C:
			}
		}
		r.mu.Lock()
		r.dead = r.dead.plus(old.counted())
		r.mu.Unlock()
		old.srv.Close()
	})
	return nil
}

// counted is what the life counted so far.
func (l *life) counted() ended {
	e := ended{counters: map[string]int64{}, traps: l.srv.Host.Stats().Traps}
	for _, name := range counters.Names() {
		e.counters[name], _ = l.srv.Host.Metric(counters.Prefix + name)
	}
	return e
}

// plus returns the sum of e and o.
func (e ended) plus(o ended) ended {
	sum := ended{counters: maps.Clone(e.counters), traps: e.traps + o.traps}
	if sum.counters == nil {
		sum.counters = map[string]int64{}
	}
	for k, v := range o.counters {
		sum.counters[k] += v
	}
	return sum
}

// totals returns what every life of the replica counted.
func (r *replica) totals() ended {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dead.plus(r.cur.counted())
}

// memory returns the current life and the linear memory of each of its VMs.
func (r *replica) memory() (gen int, bytes []uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen, r.cur.srv.Host.Stats().VMMemoryBytes
}

// close stops the front, the upstream (ending its open streams) and the
// replicas.
func (t *topology) close() {
	close(t.quit)
	t.draining.Wait()
	if t.frontSrv != nil {
		_ = t.frontSrv.Close()
	}
	t.upstream.Close()
	for _, r := range t.replicas {
		if r.srv != nil {
			_ = r.srv.Close()
		}
		r.mu.Lock()
		r.cur.srv.Close()
		r.mu.Unlock()
	}
	if t.upstreamSrv != nil {
		_ = t.upstreamSrv.Close()
	}
}

// serveLoopback serves srv on a free port of 127.0.0.1 and returns it and
// its URL.
func serveLoopback(srv *http.Server) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	go func() { _ = srv.Serve(ln) }()
	return srv, "http://" + ln.Addr().String(), nil
}
