package cursor

// StreamTail follows the events one response stream sends downstream and
// decides when its watermark must reach shared data. The plugin feeds it the
// events with an ID of each chunk in order (Add; only the last two change
// it, so a caller may add just those), then, before the chunk leaves,
// writes the tail when Due says so (Store.RecordTail).
//
// A tail matters only while its last event is in scope (a possible drain
// race) or to overwrite one that was: any other tail would only turn a later
// cursor from "normal" into "unknown", and both are forwarded — unless the
// policy re-initializes unknown cursors, in which case every tail is written.
type StreamTail struct {
	Stream    uint32    // the nonce naming the stream in records
	Transport Transport // the transport of the route it is served on

	last, prev []byte
	kind       EventKind // of the last event
	prevKind   EventKind // of the event before it (KindOther: a resume cursor, or none)
	pending    bool      // events were added since the last write
	written    bool      // a tail of this stream is in shared data
	inScope    bool      // ...and one of its two events was in scope (holdsInScope)
	sighted    Sighting  // what writing it showed so far (Sighted)
	reported   Sighting  // ...and has been returned
}

// Reset prepares t for a new stream, keeping its buffers.
func (t *StreamTail) Reset(stream uint32, tr Transport) {
	*t = StreamTail{Stream: stream, Transport: tr, last: t.last[:0], prev: t.prev[:0]}
}

// Resume tells t that the stream resumes after the upstream event id (the
// cursor the filter forwarded, tag stripped): the stream's first event then
// has id as its previous event, and a drain race on it can be rewound to id
// like any other. Call it after Reset, before the first Add.
func (t *StreamTail) Resume(id string) {
	t.last = append(t.last[:0], id...)
}

// Last returns the upstream ID of the last event added, or the cursor given
// to Resume before any was: the stream's previous ID for its next event. The
// slice is t's own buffer, valid until the next Add, Resume or Reset.
func (t *StreamTail) Last() []byte { return t.last }

// Add records that an event with ID id and kind k was sent. Only the last two
// events added before a write matter. IDs longer than
// MaxEventIDBytes are kept here but never recorded (Record.Observe).
func (t *StreamTail) Add(id []byte, k EventKind) {
	t.prev = append(t.prev[:0], t.last...)
	t.last = append(t.last[:0], id...)
	t.prevKind, t.kind = t.kind, k
	t.pending = true
}

// Due reports whether the tail must be written now under policy p. A tail
// whose last ID is too long to record (MaxEventIDBytes) is never due: writing
// it would change nothing but could create a record, evicting another.
func (t *StreamTail) Due(p Policy) bool {
	return t.pending && len(t.last) <= MaxEventIDBytes &&
		(t.holdsInScope(p) || t.inScope || p.Unknown == UnknownReinit)
}

// holdsInScope reports whether either event the tail holds is in scope under
// p: a resume from the one before the last (a result followed by a priming
// event) is a drain race too.
func (t *StreamTail) holdsInScope(p Policy) bool {
	return p.InScope(t.kind) || len(t.prev) > 0 && p.prevInScope(t.prevKind)
}

// Sighted returns what writing the tail showed of the seed's conditions
// that was not returned before: each condition once per stream.
func (t *StreamTail) Sighted() Sighting {
	news := Sighting{
		Bridged:         t.sighted.Bridged && !t.reported.Bridged,
		SharedAllocator: t.sighted.SharedAllocator && !t.reported.SharedAllocator,
	}
	t.reported = t.sighted
	return news
}

// Written reports whether a tail of this stream is in shared data, so that
// its end can acknowledge it.
func (t *StreamTail) Written() bool { return t.written }

// RecordTail writes t into the record of session k (creating it), and marks
// t written.
func (s *Store) RecordTail(k SessionKey, t *StreamTail, p Policy, now uint32) error {
	// Views of t's buffers, not copies: Update only encodes them into the
	// store's write buffer, and t does not change during the call. The
	// scratch record keeps the views afterwards, but the Store never reads
	// it again before decoding another record into it.
	last, prev := viewOf(t.last), viewOf(t.prev)
	sent := Tail{Stream: t.Stream, Transport: t.Transport, LastID: last, PrevID: prev, LastKind: t.kind, PrevKind: t.prevKind}
	err := s.Update(k, now, true, func(r *Record) bool {
		seen := r.sight(t.Transport, last)
		t.sighted.Bridged = t.sighted.Bridged || seen.Bridged
		t.sighted.SharedAllocator = t.sighted.SharedAllocator || seen.SharedAllocator
		return r.observe(sent, now, p)
	})
	if err == nil {
		t.pending, t.written, t.inScope = false, true, t.holdsInScope(p)
	}
	return err
}

// EndStream records how a stream whose tail was written ended, in the record
// of session k: its tail acknowledged when acked, and the record owned by
// owner, the principal of the stream's request — one the upstream served
// the session to (Record.Owner) — when the record still holds the stream's
// tail. The caller reads owner when the stream ends (Envoy makes the request
// headers readable again in the log phase), so ordinary requests never read
// the credential header. It writes at most once, and nothing when neither
// changes: a clean end writes as Ack did, a cut stream writes its owner.
func (s *Store) EndStream(k SessionKey, stream uint32, acked bool, owner Principal, now uint32) error {
	return s.Update(k, now, false, func(r *Record) bool {
		changed := acked && r.Ack(stream, now)
		if r.tailIndex(stream) >= 0 && (!r.HasOwner || r.Owner != owner) {
			r.Owner, r.HasOwner = owner, true
			changed = true
		}
		return changed
	})
}

// Ack marks the tail of stream acknowledged in the record of session k.
func (s *Store) Ack(k SessionKey, stream uint32, now uint32) error {
	return s.Update(k, now, false, func(r *Record) bool {
		return r.Ack(stream, now)
	})
}
