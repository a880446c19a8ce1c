package cursor

// Action is what the filter does with a request after the resume decision.
type Action uint8

const (
	// Forward sends the request upstream unchanged.
	Forward Action = iota
	// ForwardCursor sends the request upstream with Last-Event-ID set to
	// Decision.Cursor (the tag stripped, or rewound to the previous event).
	ForwardCursor
	// Reinit answers locally with a forced re-initialization; the request
	// never reaches the upstream.
	Reinit
)

// Reason says which row of the decision table applied. Its String is the
// value of the "reason" field of a re-initialization body and of log lines.
type Reason uint8

const (
	ReasonNoCursor Reason = iota
	ReasonNormal
	ReasonUnknown
	ReasonUntagged
	ReasonCrossTransport
	ReasonDrainRace
	ReasonTombstoned
)

var reasonNames = [...]string{
	"no_cursor", "normal", "unknown_cursor", "untagged_cursor",
	"cross_transport", "drain_race", "tombstoned",
}

// String returns the reason's wire name, e.g. "cross_transport".
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "invalid"
}

// Decision is the outcome of Decide.
type Decision struct {
	Action Action
	Reason Reason
	// Cursor is the Last-Event-ID to forward when Action is ForwardCursor.
	Cursor string
	// Rewound is set when Cursor is the previous event of a drain-raced
	// tail rather than the client's cursor.
	Rewound bool
	// Tail is the stream tail the cursor matched, if any.
	Tail *Tail
	// FromCursor is set for a drain race decided from a minted cursor
	// alone: this replica held no watermark that mentions it.
	FromCursor bool
	// Kind is what is known of the cursor's event: from the tail that
	// matched it, else from a minted cursor (KindOther when nothing is).
	Kind EventKind
	// ResumeAfter is the upstream event ID the response stream resumes
	// after ("" when the request goes upstream without a cursor, or is
	// refused): the previous event of the stream's first event, so that a
	// drain race on that event can be rewound to it.
	ResumeAfter string
}

// Detected reports whether the decision found one of the conditions the seed
// says must always be logged and counted: a drain race or a cross-transport
// cursor, whatever the policy did about it.
func (d Decision) Detected() bool {
	return d.Reason == ReasonDrainRace || d.Reason == ReasonCrossTransport
}

// Ordinary reports whether d is an ordinary resume: the client's cursor
// placed by a watermark or by a clean end, only its tag stripped (reason
// normal, which Decide gives only to such a strip). Like a request without a
// cursor, it is the everyday traffic of clients that reconnect after a cut:
// it is counted (cursors_stripped), not logged.
func (d Decision) Ordinary() bool { return d.Reason == ReasonNormal }

// Tombstones reports whether carrying out d tombstones the session: every
// forced re-initialization does, except the one that answers a tombstone.
func (d Decision) Tombstones() bool {
	return d.Action == Reinit && d.Reason != ReasonTombstoned
}

// Decide applies the resume decision table (docs/how-it-decides.md) to a
// request on a route of transport route, carrying the client's Last-Event-ID
// cursor ("" if none), for a session whose watermark record is rec (nil when
// the filter holds none: no session, unknown session, or expired record; a
// record with only Tombstoned set when the session is tombstoned but has no
// watermarks).
//
// A tombstoned session is refused on every request, with or without a
// cursor: the MCP spec says a server that terminated a session answers 404
// to every request carrying its ID. A cross-transport cursor is reported as
// such even on a tombstoned session: it is the seed's signature, logged and
// counted whatever else holds (both answers are the same 404).
//
// The cursor is read with ParseCursor: a minted cursor (format version 1)
// also says whether its event was a result or an error, and names the
// stream's previous event. That is what lets a replica without the
// watermark — another Envoy, a restarted one, one whose record was evicted
// — still catch the drain race ("drain race (cursor)").
//
//	| case               | condition                                        | default               |
//	| cross-transport    | prefix transport ≠ route                         | Reinit, always        |
//	| tombstoned         | rec.Tombstoned (any request of the session)      | Reinit                |
//	| no cursor          | cursor == ""                                     | Forward               |
//	| untagged           | no sse:/http: prefix, nothing after it, CR/LF/NUL| Reinit (passthrough)  |
//	| normal (clean end) | a tail mentions the cursor and was acked         | strip                 |
//	| drain race (state) | cursor = last, or the one before, of an unacked  | unacked_cursor policy |
//	|                    | tail, and that event is in scope                 |                       |
//	| drain race (cursor)| cursor says "result", no clean end proven        | unacked_cursor policy |
//	| normal (state)     | a tail mentions the cursor otherwise             | strip                 |
//	| unknown            | no tail mentions the cursor, it says nothing more| strip (reinit¹)       |
//
// ¹ unknown_cursor: reinit refuses it only while the guard does not mint
// (Policy.Minting): a minting guard gives every response a minted ID, so a
// plain cursor it cannot place names no result.
//
// A cursor that says "error" is in the cursor rule only under unacked_scope
// all: the TypeScript client resumes a POST stream after a JSON-RPC error, so
// an error cursor is no sign of a lost result. On a legacy (sse) route the
// cursor rule never re-initializes: a legacy reconnect carries no session,
// and an idle cut after a delivered response looks exactly like a drain race
// there; it rewinds when it can and otherwise only observes.
func Decide(route Transport, cursor string, rec *Record, p Policy) Decision {
	c, valid := ParseCursor(cursor)
	t, id := c.Transport, c.ID
	if id == "" || !valid {
		// "sse:" or "http:" alone: the filter never tags an empty ID (an
		// empty id field resets the client's cursor), so it did not mint
		// it; nor a cursor holding CR, LF or NUL, which must never be
		// forwarded.
		t = TransportNone
	}
	if t != TransportNone && t != route {
		return Decision{Action: Reinit, Reason: ReasonCrossTransport}
	}
	if rec != nil && rec.Tombstoned {
		return Decision{Action: Reinit, Reason: ReasonTombstoned}
	}
	if cursor == "" {
		return Decision{Action: Forward, Reason: ReasonNoCursor}
	}
	if t == TransportNone {
		if p.Untagged == UntaggedPassthrough && valid {
			// Forwarded as it came: the resumed stream's first event
			// follows it all the same.
			return Decision{Action: Forward, Reason: ReasonUntagged, ResumeAfter: cursor}
		}
		return Decision{Action: Reinit, Reason: ReasonUntagged}
	}
	var tail *Tail
	var atLast bool // the cursor is the tail's last event, not its previous
	if rec != nil {
		tail, atLast = rec.find(t, id)
	}
	// One truth per question: the watermark may only sharpen what the
	// cursor says. A tail that proves the stream ended cleanly after the
	// cursor's event makes it a normal resume; one that does not leaves the
	// cursor's own word standing, or adds what the tail knows of the event.
	switch {
	case tail != nil && tail.Acked:
	case tail != nil && tail.inScope(atLast, p):
		return raceFromState(c, tail, atLast, p)
	case c.Minted && p.cursorInScope(c.Kind):
		d := raceFromCursor(route, c, p)
		d.Tail = tail
		return d
	case tail == nil:
		if p.Unknown == UnknownReinit && !p.Minting {
			return Decision{Action: Reinit, Reason: ReasonUnknown}
		}
		return Decision{Action: ForwardCursor, Reason: ReasonUnknown, Cursor: id, Kind: c.Kind, ResumeAfter: id}
	}
	return Decision{Action: ForwardCursor, Reason: ReasonNormal, Cursor: id, Tail: tail, Kind: tail.kindOf(atLast), ResumeAfter: id}
}

// raceFromState answers the drain race the watermark shows: the cursor is
// an event in scope of a stream tail that was not acknowledged (its last, or
// the one before a last event that followed it).
func raceFromState(c Cursor, tail *Tail, atLast bool, p Policy) Decision {
	race := Decision{Action: ForwardCursor, Reason: ReasonDrainRace, Cursor: c.ID, Tail: tail, Kind: tail.kindOf(atLast)}
	if p.Replay == ReplayInclusive || p.Unacked == UnackedObserve {
		// Inclusive: the upstream replays the cursor's event itself.
		race.ResumeAfter = c.ID
		return race
	}
	if p.Unacked == UnackedRewind {
		// The tail's previous ID when the cursor is its last event, else
		// the cursor's own (a minted cursor names the event before it; the
		// record keeps only two IDs of a stream).
		switch {
		case atLast && tail.PrevID != "":
			return race.rewound(tail.PrevID)
		case c.HasPrev():
			return race.rewound(c.Prev())
		}
		// No earlier cursor is known that replays the unacked event:
		// only a re-initialization is safe.
	}
	race.Action, race.Cursor = Reinit, ""
	return race
}

// rewound is d forwarding prev, the event before the cursor's, instead.
func (d Decision) rewound(prev string) Decision {
	d.Cursor, d.Rewound, d.ResumeAfter = prev, true, prev
	return d
}

// raceFromCursor answers a drain race known from a minted cursor alone: no
// tail here mentions it, and it says its event was a response in scope.
func raceFromCursor(route Transport, c Cursor, p Policy) Decision {
	race := Decision{Action: ForwardCursor, Reason: ReasonDrainRace, Cursor: c.ID, FromCursor: true, Kind: c.Kind, ResumeAfter: c.ID}
	if p.Replay == ReplayInclusive || p.Unacked == UnackedObserve {
		return race
	}
	if c.HasPrev() && (p.Unacked == UnackedRewind || route == TransportSSE) {
		return race.rewound(c.Prev())
	}
	if route == TransportSSE {
		return race // never re-initialized by the cursor rule: observe only
	}
	race.Action, race.Cursor, race.ResumeAfter = Reinit, "", ""
	return race
}
