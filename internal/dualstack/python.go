package dualstack

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Layout is how the server writes and resumes its Streamable HTTP streams:
// as this server always did, or as the official Python SDK's server does.
type Layout int

const (
	// LayoutDefault writes "event: message", "id", "data" with LF line ends
	// and replays, on a resume, every event of the session after the cursor
	// (the seed's shared namespace).
	LayoutDefault Layout = iota
	// LayoutPython answers as the Python SDK's server does
	// (src/mcp/server/streamable_http.py with an event store and a retry
	// interval): see [Options.Layout]. Events that the SDK writes with an
	// await between them are flushed one by one.
	LayoutPython
	// LayoutPythonOneChunk is LayoutPython with the events that are ready
	// together (a replay and its priming event, a burst of queued events)
	// written in one body chunk, as a proxy reading a fast SDK server often
	// receives them.
	LayoutPythonOneChunk
)

var layoutNames = [...]string{"default", "python", "python-one-chunk"}

// String returns "default", "python" or "python-one-chunk".
func (l Layout) String() string {
	if l >= 0 && int(l) < len(layoutNames) {
		return layoutNames[l]
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// ParseLayout parses "default" (or ""), "python" and "python-one-chunk".
func ParseLayout(s string) (Layout, error) {
	if s == "" {
		return LayoutDefault, nil
	}
	if i := slices.Index(layoutNames[:], s); i >= 0 {
		return Layout(i), nil
	}
	return 0, fmt.Errorf("layout %q: want default, python or python-one-chunk", s)
}

// Python reports whether l is one of the Python SDK's layouts.
func (l Layout) Python() bool { return l == LayoutPython || l == LayoutPythonOneChunk }

// HeaderLayout, on an initialize request to /mcp, selects the layout of the
// session it creates (a [Layout] name), whatever [Options.Layout] says; other
// requests' values are ignored. It lets one server hold sessions of both
// layouts, as a fleet of mixed upstreams would.
const HeaderLayout = "X-Dualstack-Layout"

// Python SDK constants the layout mirrors (src/mcp/server/streamable_http.py
// and mcp.types).
const (
	// pythonGetStreamKey is the stream ID of the standalone GET stream.
	pythonGetStreamKey = "_GET_stream"
	// pythonDefaultVersion is the protocol version the SDK assumes for a
	// request without an MCP-Protocol-Version header.
	pythonDefaultVersion = "2025-03-26"
	// pythonPrimingVersion is the first version the SDK sends priming events
	// to (and offers its tools close_sse_stream for): older clients fail on
	// empty data. The SDK compares versions as strings, as this package does.
	pythonPrimingVersion = "2025-11-25"
)

// pythonVersion is the protocol version the Python SDK decides priming and
// polling by: an initialize request's protocolVersion parameter, any other
// request's MCP-Protocol-Version header (default 2025-03-26). It does not
// read the version the session negotiated.
func pythonVersion(r *http.Request, initializeVersion string) string {
	if initializeVersion != "" {
		return initializeVersion
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" {
		return v
	}
	return pythonDefaultVersion
}

// pythonPrimes reports whether the SDK sends a priming event to a request of
// protocol version v.
func pythonPrimes(v string) bool { return v >= pythonPrimingVersion }

// newUUID4 returns a random version-4 UUID in its 36-character text form,
// as Python's str(uuid.uuid4()) writes it: the event IDs of the SDK's
// example event store.
func newUUID4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newUUIDHex returns uuid.uuid4().hex: the session IDs of the SDK's session
// manager (32 hex digits).
func newUUIDHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// encodePython renders ev as the SDK's SSE library (sse-starlette) does:
// CRLF line ends, the fields in the order id, event, data, retry. A message
// is "event: message"; a priming event has empty data and, when retryMillis
// is positive, the retry the SDK adds to priming events only.
func encodePython(ev Event, retryMillis int) []byte {
	var b bytes.Buffer
	b.Grow(len(ev.Data) + 96)
	if id := ev.WireID(); id != "" {
		b.WriteString("id: ")
		b.WriteString(id)
		b.WriteString("\r\n")
	}
	if ev.Kind != KindPriming {
		b.WriteString("event: message\r\n")
	}
	b.WriteString("data: ")
	b.Write(ev.Data)
	b.WriteString("\r\n")
	if ev.Kind == KindPriming && retryMillis > 0 {
		b.WriteString("retry: ")
		b.WriteString(strconv.Itoa(retryMillis))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// writeBurst writes events that the server has ready at once to a stream of
// layout l and flushes: one chunk for LayoutPythonOneChunk, else one flush
// per event (with [Options.EventGap] between them in the Python layout),
// as separate awaited sends of the SDK reach the wire. Once written, the
// server considers the events delivered.
func (srv *Server) writeBurst(w http.ResponseWriter, l Layout, evs []Event) error {
	rc := http.NewResponseController(w)
	if l == LayoutPythonOneChunk {
		var b bytes.Buffer
		for _, ev := range evs {
			b.Write(srv.encode(l, ev))
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		return rc.Flush()
	}
	for i, ev := range evs {
		if i > 0 && l.Python() && srv.opts.EventGap > 0 {
			time.Sleep(srv.opts.EventGap)
		}
		if _, err := w.Write(srv.encode(l, ev)); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// encode renders one event in layout l.
func (srv *Server) encode(l Layout, ev Event) []byte {
	if l.Python() {
		return encodePython(ev, srv.opts.RetryMillis)
	}
	name := "message"
	if ev.Kind == KindPriming {
		name = ""
	}
	return encodeEvent(name, ev.WireID(), ev.Data)
}

// pythonReplay is what a GET with Last-Event-ID gets in the Python layout.
type pythonReplay struct {
	events []Event // the replayed events, then the fresh priming event if any
	found  bool    // the cursor is an event of the session
	open   bool    // the stream stays open for the replayed stream's events
}

// resumePython answers a resume the way the SDK's _replay_events does with
// its example event store: the events of the cursor's stream after the
// cursor (from it, under ReplayInclusive), priming events skipped; then,
// when no other response is writing that stream and the request's protocol
// version is 2025-11-25 or later, a fresh priming event of that stream,
// after which the stream closes (SEP-1699 polling: the client comes back
// after retry). Under an older version the stream instead stays open for the
// stream's later events, and the SDK sends no priming event. A cursor that is
// no event of the session replays nothing (an empty stream, as the SDK
// answers it). Snapshot, priming event and attach happen under one lock, so
// no event of the stream falls between the replay and the priming event.
func (srv *Server) resumePython(sess *Session, cursor, version string, mode ReplayMode, st *stream) pythonReplay {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	at := slices.IndexFunc(sess.log, func(ev Event) bool { return ev.WireID() == cursor })
	if at < 0 {
		return pythonReplay{}
	}
	key := sess.log[at].Stream
	from := at + 1
	if mode == ReplayInclusive {
		from = at
	}
	out := pythonReplay{found: true}
	for _, ev := range sess.log[from:] {
		if ev.Stream == key && ev.Kind != KindPriming {
			out.events = append(out.events, ev)
		}
	}
	if sess.liveStreamLocked(key) != nil {
		// The SDK sends nothing more when the stream is still registered:
		// its replay ends after the replayed events.
		return out
	}
	st.key = key
	if !srv.opts.NoPriming && pythonPrimes(version) {
		prime := Event{ID: srv.ids.next(), Kind: KindPriming, Transport: st.transport, Stream: key, Wire: newUUID4()}
		sess.logLocked(prime)
		out.events = append(out.events, prime)
		return out
	}
	out.open = sess.attachLocked(st)
	return out
}
