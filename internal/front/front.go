// Package front is the load balancer of the replicated end-to-end topology:
// an HTTP reverse proxy that spreads MCP traffic over several guard replicas
// the way the proxies in front of them do in production, and records which
// replica served each request.
//
// Two policies:
//
//   - [RoundRobin]: every new downstream connection goes to the next backend,
//     and every request on that connection to the same one — what an L4 load
//     balancer (or an L7 one without affinity, per connection) does.
//   - [SessionHash]: consistent hashing on the MCP session, the key of
//     [SessionKey]: the Mcp-Session-Id header, or on legacy routes the
//     sessionId query parameter — exactly what envoy/ha/front.yaml,
//     envoy/istio/destinationrule.yaml and the Envoy Gateway
//     BackendTrafficPolicy hash on. A request without a session (the first
//     initialize, the legacy GET /sse) falls back to its connection's
//     round-robin backend, as Envoy's ring hash picks some host when no hash
//     policy yields a value.
//
// Response bodies are flushed as they arrive (SSE), request headers such as
// Last-Event-ID pass unchanged, and a client that goes away cancels the
// backend request, so the replica sees the downstream disconnect.
package front

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Policy says how a [Front] spreads requests over its backends.
type Policy int

const (
	// RoundRobin sends each new connection to the next backend.
	RoundRobin Policy = iota
	// SessionHash sends each MCP session to one backend by consistent hashing.
	SessionHash
)

// String returns "round_robin" or "session_hash".
func (p Policy) String() string {
	switch p {
	case RoundRobin:
		return "round_robin"
	case SessionHash:
		return "session_hash"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy parses "round_robin" and "session_hash".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "round_robin":
		return RoundRobin, nil
	case "session_hash":
		return SessionHash, nil
	}
	return 0, fmt.Errorf("front policy %q: want round_robin or session_hash", s)
}

// SessionKey returns the MCP session a request carries: the Mcp-Session-Id
// header, else the sessionId query parameter (legacy HTTP+SSE message
// POSTs), else "".
func SessionKey(r *http.Request) string {
	if s := r.Header.Get("Mcp-Session-Id"); s != "" {
		return s
	}
	return r.URL.Query().Get("sessionId")
}

// Placement is where the front sent one request.
type Placement struct {
	// Seq numbers the requests in the order the front received them.
	Seq int
	// Method and Path (without the query) of the request.
	Method, Path string
	// Session is the request's [SessionKey] ("" when it carried none).
	Session string
	// Backend is the index of the backend that served it.
	Backend int
}

// Front is the reverse proxy. Serve it with the [http.Server] of
// [Front.Server], which assigns connections to backends.
type Front struct {
	backends []*url.URL
	policy   Policy
	ring     ring
	next     atomic.Uint64
	rp       *httputil.ReverseProxy

	mu         sync.Mutex
	placements []Placement
	errs       []string
}

type connBackendKey struct{}

type backendKey struct{}

// New returns a Front over backends (scheme and host are used).
func New(backends []*url.URL, policy Policy) (*Front, error) {
	if len(backends) == 0 {
		return nil, errors.New("front: no backends")
	}
	if policy != RoundRobin && policy != SessionHash {
		return nil, fmt.Errorf("front: unknown %v", policy)
	}
	f := &Front{backends: backends, policy: policy, ring: newRing(len(backends))}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 64
	f.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(f.backends[pr.In.Context().Value(backendKey{}).(int)])
			pr.Out.Host = pr.In.Host
		},
		Transport:     t,
		FlushInterval: -1, // SSE: every write reaches the client at once
		ErrorLog:      log.New(errorWriter{f}, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil { // not the client going away
				f.logError("front: " + r.Method + " " + r.URL.Path + ": backend: " + err.Error())
				http.Error(w, "front: backend: "+err.Error(), http.StatusBadGateway)
			}
		},
	}
	return f, nil
}

// Server returns an http.Server that serves f and assigns every accepted
// connection its round-robin backend.
func (f *Front) Server() *http.Server {
	return &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 30 * time.Second,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			n := f.next.Add(1) - 1
			return context.WithValue(ctx, connBackendKey{}, int(n%uint64(len(f.backends))))
		},
	}
}

// Backend returns the backend a request with this session key and arriving
// on a connection assigned connBackend goes to.
func (f *Front) Backend(session string, connBackend int) int {
	if f.policy == SessionHash && session != "" {
		return f.ring.pick(session)
	}
	return connBackend
}

// ServeHTTP implements http.Handler.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, ok := r.Context().Value(connBackendKey{}).(int)
	if !ok {
		http.Error(w, "front: served without Front.Server's ConnContext", http.StatusInternalServerError)
		return
	}
	session := SessionKey(r)
	b := f.Backend(session, conn)
	f.mu.Lock()
	f.placements = append(f.placements, Placement{Seq: len(f.placements), Method: r.Method, Path: r.URL.Path, Session: session, Backend: b})
	f.mu.Unlock()
	// A proxy streams both ways at once: without full duplex, Go's HTTP/1
	// server consumes what is left of the request body when the response
	// starts, under the transport still sending it, and the backend
	// connection breaks off mid-response.
	if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
		http.Error(w, "front: "+err.Error(), http.StatusInternalServerError)
		return
	}
	f.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, b)))
}

// Placements returns where every request went, in arrival order.
func (f *Front) Placements() []Placement {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.placements)
}

// Errors returns what went wrong between the front and its backends, in
// order: failed requests and response bodies cut off mid-stream (the
// reverse proxy's log), but not clients that went away first.
func (f *Front) Errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.errs)
}

func (f *Front) logError(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, msg)
}

// errorWriter collects the reverse proxy's log lines as errors.
type errorWriter struct{ f *Front }

func (w errorWriter) Write(p []byte) (int, error) {
	if msg := strings.TrimSpace(string(p)); !strings.Contains(msg, context.Canceled.Error()) {
		w.f.logError(msg) // not a client that went away
	}
	return len(p), nil
}

// vnodes is the number of points each backend has on the ring: enough for
// an even spread over a handful of backends.
const vnodes = 160

// ring is a consistent-hash ring (Envoy's RING_HASH in miniature, with
// FNV-1a instead of xxHash): a key goes to the first point at or after its
// hash, wrapping around.
type ring struct {
	points []uint64
	owner  map[uint64]int
}

func newRing(backends int) ring {
	r := ring{owner: make(map[uint64]int, backends*vnodes)}
	for b := range backends {
		for v := range vnodes {
			h := hash64("backend-" + strconv.Itoa(b) + "-" + strconv.Itoa(v))
			if _, taken := r.owner[h]; taken {
				continue
			}
			r.owner[h] = b
			r.points = append(r.points, h)
		}
	}
	slices.Sort(r.points)
	return r
}

func (r ring) pick(key string) int {
	h := hash64(key)
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i] >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.owner[r.points[i]]
}

// hash64 is FNV-1a with a final avalanche (splitmix64's finalizer), so that
// short, similar keys ("backend-0-1", "backend-0-2") spread over the ring.
func hash64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
