package cursor

// Guard holds the rules of one worker VM behind one entry point per
// callback: Request for a request's headers, Sent after a response chunk's
// events were added to the stream's tail, StreamEnd when the stream ends.
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
	// Delete: the request is a DELETE, which passes to the upstream so it
	// can free the session (its answer clears the record: Store.Delete).
	Delete bool
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
}

// Request applies the resume decision to a request: it reads what shared
// data holds of the session (only its tombstones when the request carries
// no cursor), decides (Decide), and tombstones the session when the
// decision re-initializes it — only a session the upstream is known to have
// served to this principal here (Store.LoadAs), and only for that
// principal, so a made-up session ID or a stranger's credentials write
// nothing.
func (g *Guard) Request(r *Request) Verdict {
	if r.Delete || r.Cursor == "" && !r.HasSession {
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
	return v
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
