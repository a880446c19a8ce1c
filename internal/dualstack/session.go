package dualstack

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
)

// Transport names the listener a session was created on or an event went out
// on.
type Transport string

const (
	// TransportSSE is the legacy HTTP+SSE listener (/sse, /messages).
	TransportSSE Transport = "sse"
	// TransportHTTP is the Streamable HTTP listener (/mcp).
	TransportHTTP Transport = "http"
	// TransportNone marks an event that was logged while the session had no
	// open stream to carry it: "sent" to nobody, available only to a resume.
	TransportNone Transport = ""
)

// EventKind classifies a logged event.
type EventKind string

const (
	// KindResponse is a JSON-RPC response (result or error).
	KindResponse EventKind = "response"
	// KindNotification is a JSON-RPC notification.
	KindNotification EventKind = "notification"
	// KindPriming is an event with an ID and empty data.
	KindPriming EventKind = "priming"
)

// Event is one event of a session's log: every event the server sent to the
// session, on any transport, in order.
type Event struct {
	// ID is the event's ID from the shared allocator.
	ID EventID
	// Kind classifies the event.
	Kind EventKind
	// Transport is the listener whose stream carried the event when it was
	// first sent, or TransportNone.
	Transport Transport
	// Data is the event's data: one encoded JSON-RPC message, or empty for a
	// priming event.
	Data []byte

	// Stream names the stream the event belongs to, as the Python SDK keys
	// its event store: a POST /mcp answer's request ID, "_GET_stream" for
	// the standalone GET /mcp stream, "sse" for the legacy stream. A resume
	// in the Python layout replays the cursor's stream only.
	Stream string
	// Wire is the event's ID on the wire when it is not ID's "e-N": a
	// random UUID in the Python layouts, as the SDK's example event store
	// mints them. See [Event.WireID].
	Wire string

	// final marks the response that completes the POST stream it was
	// addressed to.
	final bool
}

// WireID returns the event's ID as the server writes it and as clients send
// it back in Last-Event-ID: Wire when set, else ID's "e-N" form.
func (ev Event) WireID() string {
	if ev.Wire != "" {
		return ev.Wire
	}
	return ev.ID.String()
}

// SessionInfo describes a session for tests and /debug/stats.
type SessionInfo struct {
	// ID is the session ID (the legacy sessionId and the Mcp-Session-Id).
	ID string `json:"id"`
	// Origin is the listener that created the session.
	Origin Transport `json:"origin"`
	// ProtocolVersion is the version negotiated by initialize, if any.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Events is the number of logged events.
	Events int `json:"events"`
	// LastEventID is the last logged event's ID.
	LastEventID EventID `json:"lastEventId"`
	// OpenStreams counts the session's open SSE streams.
	OpenStreams int `json:"openStreams"`
	// Layout is the layout of the session's Streamable HTTP streams.
	Layout string `json:"layout"`
}

// streamKind tells how a stream ends.
type streamKind int

const (
	streamLegacy     streamKind = iota // GET /sse
	streamPost                         // POST /mcp SSE response
	streamStandalone                   // GET /mcp
	streamReplay                       // GET /mcp resuming a stream (Python layout)
)

// streamBuffer bounds the events queued for one stream's writer.
const streamBuffer = 1024

// maxLogEvents bounds a session's log; the oldest events are forgotten first
// (a cursor naming one then answers 400, like any unknown cursor).
const maxLogEvents = 4096

// stream is one open SSE response of a session. Events reach its writer
// through events; kill ends it from the server side.
type stream struct {
	kind      streamKind
	transport Transport
	layout    Layout // how its events are written
	key       string // the Event.Stream of its events
	events    chan Event
	kill      chan struct{}
	killOnce  sync.Once
	dead      bool // guarded by the session's mu
}

func newStream(kind streamKind, t Transport, l Layout, key string) *stream {
	return &stream{kind: kind, transport: t, layout: l, key: key, events: make(chan Event, streamBuffer), kill: make(chan struct{})}
}

func (st *stream) stop() { st.killOnce.Do(func() { close(st.kill) }) }

// Session is one MCP session, shared by both listeners (the seed's bridging).
type Session struct {
	id     string
	origin Transport
	layout Layout // of its Streamable HTTP streams

	mu              sync.Mutex
	protocolVersion string
	log             []Event
	streams         map[*stream]struct{}
	legacy          *stream   // the GET /sse stream while open
	gets            []*stream // the open GET /mcp streams, oldest first
	closed          bool
}

func newSession(origin Transport, idBytes int, layout Layout) *Session {
	id := newSessionID(idBytes)
	if layout.Python() && idBytes < minJWTSessionID {
		id = newUUIDHex() // the Python SDK's uuid4().hex
	}
	return &Session{id: id, origin: origin, layout: layout, streams: map[*stream]struct{}{}}
}

// minJWTSessionID is the shortest SessionIDBytes that mints a JWT-shaped
// session ID; shorter values mean the default.
const minJWTSessionID = 43

// newSessionID returns "s-" and 16 random hex digits: visible ASCII, as the
// specification requires. With n over 18 it returns a JWT-shaped ID of
// exactly n bytes: a fixed header part, a payload part that starts with the
// same random hex, and a signature part of filler; IDs then differ only
// after their first 37 bytes, as JWTs of one issuer do.
func newSessionID(n int) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "s-" + hex.EncodeToString(b[:])
	const head = "eyJhbGciOiJIUzI1NiJ9."
	if n < len(head)+4+len(id) {
		return id
	}
	body := head + "eyJ" + strings.Repeat("A", max(0, (n-len(head)-len(id)-4)/2)) + "."
	return body + id + strings.Repeat("Z", n-len(body)-len(id))
}

// ID returns the session ID.
func (s *Session) ID() string { return s.id }

// attach registers st as an open stream of the session. It reports false when
// the session was closed.
func (s *Session) attach(st *stream) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attachLocked(st)
}

func (s *Session) attachLocked(st *stream) bool {
	if s.closed {
		return false
	}
	s.streams[st] = struct{}{}
	switch st.kind {
	case streamLegacy:
		s.legacy = st
	case streamStandalone:
		s.gets = append(s.gets, st)
	}
	return true
}

// detach forgets st once its writer has returned.
func (s *Session) detach(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.dead = true
	delete(s.streams, st)
	if s.legacy == st {
		s.legacy = nil
	}
	s.gets = slices.DeleteFunc(s.gets, func(g *stream) bool { return g == st })
}

// defaultStreamLocked is where an event with no request stream goes: the
// legacy stream while open, else the newest open GET /mcp stream (a client
// reconnecting its standalone stream may open the new one before the server
// sees the old one close), else nowhere.
func (s *Session) defaultStreamLocked() *stream {
	if s.legacy != nil && !s.legacy.dead {
		return s.legacy
	}
	for i := len(s.gets) - 1; i >= 0; i-- {
		if !s.gets[i].dead {
			return s.gets[i]
		}
	}
	return nil
}

// liveStreamLocked returns an open stream of the session that writes the
// events of stream key, or nil.
func (s *Session) liveStreamLocked(key string) *stream {
	for st := range s.streams {
		if st.key == key && !st.dead && st.kind != streamLegacy {
			return st
		}
	}
	return nil
}

// appendLocked logs ev and hands it to target (or the default stream when
// target is nil). In the Python layouts an event whose stream is gone goes to
// the open stream resuming its stream, if any, as the SDK routes by stream
// ID. A stream whose queue is full loses the event on the wire but the log
// keeps it, as for a stream that was cut.
func (s *Session) appendLocked(ev Event, target *stream) Event {
	dst := target
	if dst == nil {
		dst = s.defaultStreamLocked()
	}
	if ev.Stream == "" {
		switch {
		case target != nil:
			ev.Stream = target.key
		case dst != nil:
			ev.Stream = dst.key
		default:
			ev.Stream = pythonGetStreamKey
		}
	}
	if s.layout.Python() && (dst == nil || dst.dead) {
		dst = s.liveStreamLocked(ev.Stream)
	}
	if s.layout.Python() && ev.Wire == "" {
		ev.Wire = newUUID4()
	}
	if dst != nil && !dst.dead {
		ev.Transport = dst.transport
		select {
		case dst.events <- ev:
		default:
			ev.Transport = TransportNone
		}
	}
	s.logLocked(ev)
	return ev
}

// logLocked appends ev to the session's log, forgetting the oldest events
// beyond maxLogEvents.
func (s *Session) logLocked(ev Event) {
	if len(s.log) >= maxLogEvents {
		s.log = slices.Delete(s.log, 0, len(s.log)-maxLogEvents+1)
	}
	s.log = append(s.log, ev)
}

// close ends the session and every open stream.
func (s *Session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for st := range s.streams {
		st.stop()
	}
}

// info snapshots the session.
func (s *Session) info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := SessionInfo{ID: s.id, Origin: s.origin, ProtocolVersion: s.protocolVersion, Events: len(s.log), OpenStreams: len(s.streams), Layout: s.layout.String()}
	if n := len(s.log); n > 0 {
		in.LastEventID = s.log[n-1].ID
	}
	return in
}

// events copies the session's log.
func (s *Session) events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, len(s.log))
	for i, ev := range s.log {
		ev.Data = append([]byte(nil), ev.Data...)
		out[i] = ev
	}
	return out
}

// store holds every session of both listeners, keyed by session ID.
type store struct {
	mu       sync.Mutex
	sessions map[string]*Session
}

func newStore() *store { return &store{sessions: map[string]*Session{}} }

func (st *store) add(s *Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sessions[s.id] = s
}

func (st *store) get(id string) *Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sessions[id]
}

func (st *store) remove(id string) *Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.sessions[id]
	delete(st.sessions, id)
	return s
}

func (st *store) all() []*Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]*Session, 0, len(st.sessions))
	for _, s := range st.sessions {
		out = append(out, s)
	}
	return out
}
