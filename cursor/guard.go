package cursor

import "strings"

// Guard holds the rules of one worker VM behind one entry point per
// callback: Request for a request's headers, Response for its response's
// headers, Sent after a response chunk's events were added to the stream's
// tail, StreamEnd when the stream ends.
// The plugin maps the host's calls to these facts and the answers to host
// calls; every rule of docs/how-it-decides.md is here or in what these call.
//
// A Guard is used by one worker VM at a time (its Store holds scratch
// buffers).
type Guard struct {
	Policy Policy
	Store  *Store
	// Clock returns unix seconds. It is read only when a rule needs the
	// time: an ordinary request of a session never tombstoned needs none.
	Clock func() uint32
	// LegacyDropCursor: a forced re-initialization of a legacy (sse) GET is
	// delivered by forwarding it without its cursor (legacy_reinit:
	// drop_cursor), so that the client gets a fresh stream and session.
	LegacyDropCursor bool
	// Unwind: the way back out (unwind: true): no new event ID is tagged;
	// the cursors issued before are still read.
	Unwind bool
}

// Request is what the plugin knows of a request on a guarded route when its
// headers arrive.
type Request struct {
	Route Transport
	// Session is the digest of the request's session (Mcp-Session-Id, or a
	// legacy post's sessionId query); HasSession says there is one.
	Session    SessionKey
	HasSession bool
	// Principal is the digest of the configured credential header's value.
	Principal Principal
	// Cursor is the Last-Event-ID header ("" if none).
	Cursor string
	// Method is the request's :method. A DELETE passes to the upstream so
	// it can free the session (its answer clears the record: Response).
	Method string
	// LastEventIDs and SessionHeaders count the request's Last-Event-ID and
	// Mcp-Session-Id entries, empty ones too; QuerySessions reports that a
	// legacy request's query names its session more than once with
	// different values (ambiguous.go).
	LastEventIDs, SessionHeaders int
	QuerySessions                bool
}

// Verdict is the Guard's answer to a request.
type Verdict struct {
	Decision
	// Judged is false when the request had nothing to judge (no cursor and
	// no session, a DELETE, or a session never tombstoned without a
	// cursor): it passes and is neither logged nor counted.
	Judged bool
	// ReadErr is set when shared data could not be read: the request was
	// judged without a watermark, and never refused only because the
	// watermark could not be read (unknown_cursor: forward). TombstoneErr is
	// set when the session's tombstone could not be written.
	ReadErr, TombstoneErr error
	// DropCursor: the re-initialization is delivered by forwarding the
	// request without its Last-Event-ID rather than by the local reply
	// (Guard.LegacyDropCursor).
	DropCursor bool
	// Ambiguous, when not Unambiguous, says what the request names more
	// than once: it is refused with AmbiguousStatus and Ambiguous.Body(),
	// before anything is read or written (the rest of the verdict is empty).
	Ambiguous Ambiguity
}

// Request applies the resume decision to a request: it refuses one that
// names its cursor or session more than once (ambiguous.go), reads what shared
// data holds of the session (only its tombstones when the request carries
// no cursor), decides (Decide), and tombstones the session when the
// decision re-initializes it — only a session the upstream is known to have
// served to this principal here (Store.LoadAs), and only for that
// principal, so a made-up session ID or a stranger's credentials write
// nothing.
func (g *Guard) Request(r *Request) Verdict {
	if a := r.ambiguity(); a != Unambiguous {
		return Verdict{Ambiguous: a}
	}
	if r.Method == "DELETE" || r.Cursor == "" && !r.HasSession {
		return Verdict{Decision: Decision{Action: Forward, Reason: ReasonNoCursor}}
	}
	policy := g.Policy
	var (
		v     Verdict
		rec   *Record
		known bool
		now   uint32
	)
	switch {
	case r.Cursor == "":
		// Ordinary MCP traffic: only "is the session terminated for this
		// principal?", one bounded read, a miss while its bucket is unused.
		ts, err := g.Store.TombstonesOf(r.Session)
		if err == nil && !ts.Any() {
			return Verdict{Decision: Decision{Action: Forward, Reason: ReasonNoCursor}}
		}
		if now, v.ReadErr = g.Clock(), err; ts.LiveFor(r.Principal, now) {
			rec = &Record{Session: r.Session, Tombstoned: true}
		}
	case !r.HasSession:
		// A cursor without a session (a legacy GET /sse reconnect): judged
		// by its tag alone; nothing to look up, nothing to tombstone.
	default:
		now = g.Clock()
		rec, known, v.ReadErr = g.Store.LoadAs(r.Session, r.Principal, now)
	}
	if v.ReadErr != nil {
		rec, known, policy.Unknown = nil, false, UnknownForward
	}
	v.Decision, v.Judged = Decide(r.Route, r.Cursor, rec, policy), true
	if v.Tombstones() && r.HasSession && known {
		v.TombstoneErr = g.Store.TombstoneAs(r.Session, r.Principal, now)
	}
	v.DropCursor = v.Action == Reinit && g.LegacyDropCursor && r.Route == TransportSSE && r.Method == "GET"
	return v
}

// Response is what the plugin knows of the response to a request on a
// guarded route when its headers arrive.
type Response struct {
	Route      Transport
	Session    SessionKey // the request's session, as Request had it
	HasSession bool
	Delete     bool // the request was a DELETE
	// Body reports that the headers do not end the response.
	Body bool
	// Header returns a response header's value ("" when absent). Response
	// asks only for the headers its rules reach, in order: a response
	// without a body (the 202 that answers a notification) costs no read.
	Header func(name string) string
}

// StreamVerdict is the Guard's answer to a response: whether its body is an
// event stream whose IDs the plugin tags, and under which session.
type StreamVerdict struct {
	// Rewrite: the body is an event stream to tag (its content-length
	// goes, since tagging changes its length).
	Rewrite bool
	// Encoded: an event stream with a content-encoding other than identity,
	// which cannot be tagged without decoding it: it passes untouched, its
	// IDs untagged, and is counted.
	Encoded bool
	// Session, when not "", is the stream's session: the Mcp-Session-Id of
	// an initialize answered as a stream, which wins over a stale one the
	// request carried. NoSession: a legacy stream, whose session is only
	// the one its endpoint event names, never one the request's query
	// claimed (GET /sse?sessionId=<someone else's> must not file the
	// stream under that session).
	Session   string
	NoSession bool
	// ClearErr is set when the record of a session the upstream deleted
	// could not be cleared.
	ClearErr error
}

// Response decides what to do with a response's body: a DELETE the
// upstream accepted (2xx) clears the session's record here; a 200 whose
// content-type is text/event-stream is rewritten, unless the guard unwinds;
// anything else passes untouched (a 304, an error another filter answered
// with an event-stream type, JSON).
func (g *Guard) Response(r *Response) StreamVerdict {
	var v StreamVerdict
	if r.Delete {
		if status := r.Header(":status"); r.HasSession && len(status) == 3 && status[0] == '2' {
			v.ClearErr = g.Store.Delete(r.Session, g.Clock())
		}
		return v
	}
	if !r.Body || !IsEventStream(r.Header("content-type")) || r.Header(":status") != "200" || g.Unwind {
		return v
	}
	if r.Route == TransportSSE {
		v.NoSession = true
	} else {
		v.Session = r.Header("mcp-session-id")
	}
	if ce := r.Header("content-encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		v.Encoded = true
		return v
	}
	v.Rewrite = true
	return v
}

// IsEventStream reports whether a content-type is text/event-stream, in any
// case and with any parameters.
func IsEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// Sent writes the stream's tail to the record of its session when the tail
// says it must be (StreamTail.Due), before the chunk whose events were just
// added leaves, and returns what the write newly showed of the seed's
// conditions (in every mode, observe included). A stream without a session
// (a legacy stream before its endpoint event) records nothing.
func (g *Guard) Sent(session SessionKey, hasSession bool, t *StreamTail) (Sighting, error) {
	if !hasSession || !t.Due(g.Policy) {
		return Sighting{}, nil
	}
	err := g.Store.RecordTail(session, t, g.Policy, g.Clock())
	return t.Sighted(), err
}

// StreamEnd records how a stream whose tail was written ended. The ack
// rule: a stream that reached its end (end_of_stream or trailers) and
// completed with no response flag set at all acknowledges its tail; any
// flag (a downstream reset, disconnect or timeout, but also an upstream
// reset or a local reply after data was sent), or flags that could not be
// read (flagsRead false), leave it sent-but-unacknowledged: when in doubt,
// the last event was not delivered. owner is the principal of the stream's
// request, the record's owner (Store.EndStream).
func (g *Guard) StreamEnd(session SessionKey, t *StreamTail, reachedEnd, flagsRead bool, flags uint64, owner Principal) error {
	if !t.Written() {
		return nil
	}
	acked := reachedEnd && flagsRead && flags == 0
	return g.Store.EndStream(session, t.Stream, acked, owner, g.Clock())
}
