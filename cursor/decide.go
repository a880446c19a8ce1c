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
}

// Detected reports whether the decision found one of the conditions the seed
// says must always be logged and counted: a drain race or a cross-transport
// cursor, whatever the policy did about it.
func (d Decision) Detected() bool {
	return d.Reason == ReasonDrainRace || d.Reason == ReasonCrossTransport
}

// Tombstones reports whether carrying out d tombstones the session: every
// forced re-initialization does, except the one that answers a tombstone.
func (d Decision) Tombstones() bool {
	return d.Action == Reinit && d.Reason != ReasonTombstoned
}

// Decide applies the resume decision table of DESIGN.md §2 to a request on a
// route of transport route, carrying the client's Last-Event-ID cursor ("" if
// none), for a session whose watermark record is rec (nil when the filter
// holds none: no session, unknown session, or expired record; a record with
// only Tombstoned set when the session is tombstoned but has no watermarks).
//
// A tombstoned session is refused on every request, with or without a
// cursor: the MCP spec says a server that terminated a session answers 404
// to every request carrying its ID. A cross-transport cursor is reported as
// such even on a tombstoned session: it is the seed's signature, logged and
// counted whatever else holds (both answers are the same 404).
//
//	| case            | condition                                     | default              |
//	| cross-transport | prefix transport ≠ route                      | Reinit, always       |
//	| tombstoned      | rec.Tombstoned (any request of the session)   | Reinit               |
//	| no cursor       | cursor == ""                                  | Forward              |
//	| untagged        | no sse:/http: prefix, or nothing after it     | Reinit (passthrough) |
//	| unknown         | no tail mentions the cursor                   | strip (reinit)       |
//	| drain race      | cursor = last ID of an unacked tail, in scope | Reinit (rewind, observe) |
//	| normal          | anything else                                 | strip                |
func Decide(route Transport, cursor string, rec *Record, p Policy) Decision {
	t, id := SplitTagged(cursor)
	if id == "" {
		// "sse:" or "http:" alone: the filter never tags an empty ID (an
		// empty id field resets the client's cursor), so it did not mint it.
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
		if p.Untagged == UntaggedPassthrough {
			return Decision{Action: Forward, Reason: ReasonUntagged}
		}
		return Decision{Action: Reinit, Reason: ReasonUntagged}
	}
	var tail *Tail
	if rec != nil {
		tail = rec.find(t, id)
	}
	if tail == nil {
		if p.Unknown == UnknownReinit {
			return Decision{Action: Reinit, Reason: ReasonUnknown}
		}
		return Decision{Action: ForwardCursor, Reason: ReasonUnknown, Cursor: id}
	}
	if tail.LastID != id || tail.Acked || !p.InScope(tail.LastKind) {
		return Decision{Action: ForwardCursor, Reason: ReasonNormal, Cursor: id, Tail: tail}
	}
	// The drain race: the client resumes from an event the filter saw sent
	// on a stream that was cut before it was acknowledged.
	race := Decision{Action: ForwardCursor, Reason: ReasonDrainRace, Cursor: id, Tail: tail}
	if p.Replay == ReplayInclusive {
		return race // the upstream replays the cursor's event itself
	}
	switch p.Unacked {
	case UnackedObserve:
		return race
	case UnackedRewind:
		if tail.PrevID != "" {
			race.Cursor, race.Rewound = tail.PrevID, true
			return race
		}
		// The unacked event was the stream's first: there is no earlier
		// cursor that replays it, so only a re-initialization is safe.
	}
	race.Action, race.Cursor = Reinit, ""
	return race
}
