package trial

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// The request line. The embedded host logs one "request" line per stream;
// the trial proxy replaces it with the same line plus what the plugin
// decided, in the field names and values of the plugin's own decision line:
//
//	session=<8 hex digits|none> decision=<forward|stripped|rewound|reinit:<reason>> resume=<true|false> [reason=drain_race]
//
// (reason=drain_race follows a rewound decision, the only one that rewinds.)
// The decision is inferred from what the proxy sees on both sides of the
// plugin: the client's Last-Event-ID against the one the upstream received,
// and the reason of a 404 re-initialization.

// Decisions, as the request line spells them.
const (
	DecisionForward  = "forward"  // forwarded with the cursor it came with, or none
	DecisionStripped = "stripped" // forwarded with the cursor's tag removed
	DecisionRewound  = "rewound"  // forwarded with an earlier event's ID (unacked_cursor: rewind)
	// DecisionReinitPrefix precedes a forced re-initialization's reason;
	// a cursor dropped under legacy_reinit: drop_cursor is
	// "reinit:"+ReasonCursorDropped (the 404's reason never reaches the
	// proxy then: the plugin's own line names it).
	DecisionReinitPrefix = "reinit:"
	ReasonCursorDropped  = "cursor_dropped"
)

// NoSession is the session tag of a request that carries no session.
const NoSession = "none"

// sessionTag returns the tag the logs name a session by: cursor.SessionTag
// (8 zero-padded hex digits), or NoSession.
func sessionTag(session string) string {
	if session == "" {
		return NoSession
	}
	return cursor.SessionTag(session)
}

// requestSession returns the session a request carries: Mcp-Session-Id, or
// on a legacy message POST the sessionId (session_id: the Python SDK's)
// query parameter.
func requestSession(h http.Header, requestURI string) string {
	if s := h.Get("Mcp-Session-Id"); s != "" {
		return s
	}
	u, err := url.ParseRequestURI(requestURI)
	if err != nil {
		return ""
	}
	q := u.Query()
	if s := q.Get("sessionId"); s != "" {
		return s
	}
	return q.Get("session_id")
}

// decide infers the plugin's decision. in is the client's Last-Event-ID;
// out the upstream's, when forwarded; reason the re-initialization's.
func decide(in, out string, forwarded bool, reason string) string {
	switch {
	case reason != "":
		return DecisionReinitPrefix + reason
	case in == "" || !forwarded || out == in:
		return DecisionForward
	case out == "":
		return DecisionReinitPrefix + ReasonCursorDropped
	}
	if c, ok := cursor.ParseCursor(in); ok && c.Transport != cursor.TransportNone && out == c.ID {
		return DecisionStripped
	}
	return DecisionRewound
}

// reinitReason returns the reason of a forced re-initialization (the
// plugin's 404 with a JSON-RPC error), or "".
func reinitReason(rec wasmhost.StreamRecord) string {
	if !rec.Local || rec.Reply == nil || rec.Status != cursor.ReinitStatus {
		return ""
	}
	return cursor.ReinitReason(rec.Reply.Body)
}

// exchangeNote is what the proxy's upstream transport saw of one request.
type exchangeNote struct {
	mu        sync.Mutex
	forwarded bool   // the request reached the upstream transport
	cursor    string // the Last-Event-ID the upstream received
}

type noteKey struct{}

// notes finds a request's note from its StreamRecord: the record holds the
// request's header map itself, which the proxy handler created.
type notes struct{ m sync.Map }

func headerKey(h http.Header) uintptr { return reflect.ValueOf(h).Pointer() }

// begin returns r with a fresh header map and a note attached.
func (n *notes) begin(r *http.Request) (*http.Request, *exchangeNote) {
	note := &exchangeNote{}
	r = r.Clone(context.WithValue(r.Context(), noteKey{}, note))
	if r.Header == nil {
		r.Header = http.Header{}
	}
	n.m.Store(headerKey(r.Header), note)
	return r, note
}

func (n *notes) end(r *http.Request) { n.m.Delete(headerKey(r.Header)) }

func (n *notes) lookup(h http.Header) *exchangeNote {
	if h == nil {
		return nil
	}
	v, ok := n.m.Load(headerKey(h))
	if !ok {
		return nil
	}
	return v.(*exchangeNote)
}

// logRequest writes the request line of a finished stream.
func (s *Server) logRequest(rec wasmhost.StreamRecord) {
	in := rec.Header.Get("Last-Event-ID")
	var out string
	var forwarded bool
	if note := s.notes.lookup(rec.Header); note != nil {
		note.mu.Lock()
		out, forwarded = note.cursor, note.forwarded
		note.mu.Unlock()
	}
	decision := decide(in, out, forwarded, reinitReason(rec))
	attrs := []any{"method", rec.Method, "path", rec.Path, "status", rec.Status, "vm", rec.VM,
		"duration", rec.Duration.Round(time.Microsecond), "bytes", rec.Bytes, "route", rec.Route, "end", rec.EndName(),
		"session", sessionTag(requestSession(rec.Header, rec.Path)),
		"decision", decision,
		"resume", in != ""}
	if decision == DecisionRewound {
		// Only a drain race is rewound (unacked_cursor: rewind); the
		// plugin's own decision line names the reason in this place.
		attrs = append(attrs, "reason", cursor.ReasonDrainRace.String())
	}
	if rec.Err != nil {
		s.log.Error("request", append(attrs, "err", rec.Err)...)
		return
	}
	s.log.Info("request", attrs...)
}

// dropRequestLines is the embedded host's logger without its request
// lines, which the trial proxy writes itself (logRequest).
type dropRequestLines struct{ slog.Handler }

func (h dropRequestLines) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "request" {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h dropRequestLines) WithAttrs(as []slog.Attr) slog.Handler {
	return dropRequestLines{h.Handler.WithAttrs(as)}
}

func (h dropRequestLines) WithGroup(name string) slog.Handler {
	return dropRequestLines{h.Handler.WithGroup(name)}
}

// upstreamTransport is how the proxy reaches the upstream: the embedded
// host's default transport (no transparent compression, the cluster's
// connect timeout), noting the cursor each request carried and watching
// legacy endpoint events for paths the proxy does not guard.
type upstreamTransport struct {
	next http.RoundTripper
	s    *Server
}

func newUpstreamTransport(s *Server, connectTimeout time.Duration) *upstreamTransport {
	return &upstreamTransport{next: wasmhost.UpstreamTransport(connectTimeout), s: s}
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if note, ok := req.Context().Value(noteKey{}).(*exchangeNote); ok {
		note.mu.Lock()
		note.forwarded, note.cursor = true, req.Header.Get("Last-Event-ID")
		note.mu.Unlock()
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK &&
		strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		resp.Body = &endpointWatcher{ReadCloser: resp.Body, found: t.s.endpointEvent}
	}
	return resp, err
}

// endpointWatcher reads the first bytes of an event stream for a legacy
// endpoint event ("event: endpoint" with the message URL as its data) and
// reports its data once. It stops looking after the first endpoint event or
// maxEndpointScan bytes.
type endpointWatcher struct {
	io.ReadCloser
	found   func(data string)
	line    []byte
	event   string
	scanned int
	cr      bool // the last byte scanned was a CR: a LF right after it ends no line
	done    bool
}

const maxEndpointScan = 64 << 10

func (w *endpointWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if !w.done {
		w.scan(p[:n])
	}
	return n, err
}

func (w *endpointWatcher) scan(b []byte) {
	w.scanned += len(b)
	for len(b) > 0 && !w.done {
		if w.cr && b[0] == '\n' {
			b = b[1:]
		}
		w.cr = false
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			w.line = append(w.line, b...)
			break
		}
		w.line = append(w.line, b[:i]...)
		w.cr = b[i] == '\r'
		w.field(string(w.line))
		w.line = w.line[:0]
		b = b[i+1:]
	}
	if w.scanned > maxEndpointScan || len(w.line) > maxEndpointScan {
		w.done = true
	}
}

// field handles one line of the stream (SSE ends lines with CR LF, LF or
// CR).
func (w *endpointWatcher) field(line string) {
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch {
	case line == "":
		w.event = ""
	case name == "event":
		w.event = value
	case name == "data" && w.event == "endpoint":
		w.done = true
		w.found(value)
	}
}

// endpointEvent warns, once per path, when a legacy server names a message
// endpoint the proxy does not guard: its POSTs would pass unguarded.
func (s *Server) endpointEvent(data string) {
	u, err := url.Parse(strings.TrimSpace(data))
	if err != nil || u.Path == "" {
		return
	}
	if s.guards(u.Path) {
		return
	}
	if _, seen := s.warnedEndpoints.LoadOrStore(u.Path, true); seen {
		return
	}
	s.log.Warn("the server's legacy endpoint event names a path the proxy does not guard: its message POSTs pass unguarded; add a route for it (docs/configuration.md)",
		"path", u.Path, "endpoint", data)
}

// guards reports whether the plugin guards requests to path: the route
// the proxy picks runs the filter and the plugin configuration matches it.
func (s *Server) guards(path string) bool {
	rt := s.route(path)
	return !rt.Bypass && s.plugin.Match(rt.RouteName, path) != cursor.TransportNone
}

// route picks the route of path as the proxy does.
func (s *Server) route(path string) wasmhost.Route {
	return s.proxy.RouteFor(&http.Request{URL: &url.URL{Path: path}})
}
