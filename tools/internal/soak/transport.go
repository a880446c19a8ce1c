package soak

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// Where a fault cuts a tools/call stream, relative to the result's event.
const (
	cutBefore = iota // somewhere before the result's event starts
	cutInside        // after its first byte, before its last
	cutAfter         // right after it, before the stream's clean end
	cutPoints
)

var cutPointNames = [cutPoints]string{"before", "inside", "after"}

// layout is where the result's event lies in a tools/call stream as the
// client receives it: bytes [start, end) of the body.
type layout struct{ start, end int64 }

// layoutOf finds the event carrying the JSON-RPC result in a complete SSE
// body, LF line ends (the reference upstream's default layout) or CRLF (its
// Python layouts).
func layoutOf(body []byte) (layout, bool) {
	i := bytes.Index(body, []byte(`"result"`))
	if i < 0 {
		return layout{}, false
	}
	// The event starts after the last blank line before the result, or at
	// the body's first byte.
	start := 0
	for _, blank := range [][]byte{[]byte("\n\n"), []byte("\n\r\n")} {
		if j := bytes.LastIndex(body[:i], blank); j >= 0 {
			start = max(start, j+len(blank))
		}
	}
	end := -1
	for _, blank := range [][]byte{[]byte("\n\n"), []byte("\n\r\n")} {
		if n := bytes.Index(body[i:], blank); n >= 0 && (end < 0 || i+n+len(blank) < end) {
			end = i + n + len(blank)
		}
	}
	if end < 0 {
		return layout{}, false
	}
	return layout{int64(start), int64(end)}, true
}

// faults picks the tools/call streams a replica cuts and where, from the
// layout of the last stream that ran uncut.
type faults struct {
	rate   float64
	mu     sync.Mutex
	rng    *rand.Rand
	layout atomic.Pointer[layout]
	asked  [cutPoints]atomic.Int64 // cuts requested
	fired  [cutPoints]atomic.Int64 // cuts the client saw: its stream broke off
}

// pick returns where to cut the next tools/call stream (0: no cut) and the
// cut point's kind.
func (f *faults) pick() (after int64, point int) {
	l := f.layout.Load()
	if l == nil {
		return 0, 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.rate {
		return 0, 0
	}
	point = f.rng.IntN(cutPoints)
	switch point {
	case cutBefore:
		after = 1 + f.rng.Int64N(max(l.start, 1))
	case cutInside:
		after = l.start + 1 + f.rng.Int64N(max(l.end-l.start-1, 1))
	default:
		after = l.end
	}
	return after, point
}

// stats is what the clients saw on the wire.
type stats struct {
	mu      sync.Mutex
	reinits map[string]string // session → reason of its forced re-initialization
}

func (s *stats) reinit(session, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.reinits[session]; !ok {
		s.reinits[session] = reason
	}
}

// reinitCount returns how many sessions were force-re-initialized, and by
// reason.
func (s *stats) reinitCount() (int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	by := map[string]int{}
	for _, r := range s.reinits {
		by[r]++
	}
	return len(s.reinits), by
}

// transport is the clients' HTTP transport: it notes every forced
// re-initialization (the guard's 404 with a reason) per session and, with
// faults, asks the replica to cut some tools/call streams, or, for a client
// of the upstream's Python layout, some of the GET streams that fetch the
// calls' results.
type transport struct {
	base   http.RoundTripper
	stats  *stats
	faults *faults // nil: no faults
	// layout, when set, is sent as the dualstack.HeaderLayout of every
	// request (the upstream reads it on initialize): the session's layout.
	// The faults then cut GET streams with Last-Event-ID (polls and
	// resumes, where the Python layout delivers results), not POSTs.
	layout string
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.layout != "" {
		req = req.Clone(req.Context())
		req.Header.Set(dualstack.HeaderLayout, t.layout)
	}
	call := t.faults != nil && ((t.layout == "" && isToolCall(req)) || (t.layout != "" && isResume(req)))
	cutAt, point := int64(0), 0
	if call {
		if cutAt, point = t.faults.pick(); cutAt > 0 {
			req = req.Clone(req.Context())
			req.Header.Set(cutHeader, strconv.FormatInt(cutAt, 10))
			t.faults.asked[point].Add(1)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if sid := req.Header.Get("Mcp-Session-Id"); resp.StatusCode == http.StatusNotFound && sid != "" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if reason := cursor.ReinitReason(body); reason != "" {
			t.stats.reinit(sid, reason)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	if call && resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &watched{ReadCloser: resp.Body, f: t.faults, cut: cutAt > 0, point: point}
	}
	return resp, nil
}

// isToolCall reports whether req posts a tools/call (read from a copy of
// its body).
func isToolCall(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	b, err := req.GetBody()
	if err != nil {
		return false
	}
	defer b.Close()
	head, _ := io.ReadAll(io.LimitReader(b, 4096))
	return bytes.Contains(head, []byte(`"method":"tools/call"`))
}

// isResume reports whether req is a GET with Last-Event-ID: in the Python
// layout, a poll or resume that replays a call's events.
func isResume(req *http.Request) bool {
	return req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != ""
}

// maxWatched bounds the bytes a watched stream keeps to learn the layout.
const maxWatched = 64 << 10

// watched is a tools/call stream's body: an uncut one that ends cleanly
// teaches the faults its layout; a cut one counts as fired when it breaks
// off.
type watched struct {
	io.ReadCloser
	f     *faults
	cut   bool
	point int
	seen  []byte
	done  bool
}

func (w *watched) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if !w.cut && len(w.seen)+n <= maxWatched {
		w.seen = append(w.seen, p[:n]...)
	}
	if err != nil && !w.done {
		w.done = true
		switch {
		case w.cut && err != io.EOF:
			w.f.fired[w.point].Add(1)
		case !w.cut && err == io.EOF:
			if l, ok := layoutOf(w.seen); ok {
				w.f.layout.Store(&l)
			}
		}
	}
	return n, err
}
