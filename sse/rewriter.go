package sse

import (
	"bytes"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// DefaultMaxLineBytes is the bound on a buffered id or event type value used
// when NewRewriter or Reset is given a non-positive maxLineBytes.
const DefaultMaxLineBytes = 4096

// Rewriter rewrites one response stream. Feed it the upstream body chunk by
// chunk with Rewrite; it allocates nothing per chunk in steady state. A
// Rewriter is not safe for concurrent use; Reset makes it ready for another
// stream without allocating.
//
// By default it tags each id value in place and the only bytes it ever holds
// back are those of a line that starts with 'i' while it may still be an id
// field (an id line is held until its end, which tells whether its value is
// empty or contains NUL); everything else is forwarded in the call that
// delivered it.
//
// With SetMint, an event's id line is held until the event dispatches and
// then written just before the dispatching empty line, its value replaced by
// the self-describing cursor of cursor.AppendMinted (see SetMint). Data,
// comments and other fields are still forwarded at once.
type Rewriter struct {
	// Configuration.
	t       cursor.Transport
	prefix  string // tag prefix of the route's transport
	max     int    // bound on a buffered id or event type value
	mint    bool   // SetMint, kept across Reset
	minting bool   // mint, on a transport with a prefix, for this stream

	stream // the state that crosses chunks
	pass   // the state of one Rewrite call

	// The events reported for one call (Events).
	events []Event
	stale  int    // events[len(events):stale] may still refer to an earlier chunk
	arena  []byte // backs the events' ID, Type and Data
}

// NewRewriter returns a Rewriter for a stream served on transport t.
// maxLineBytes bounds the id and event type values it buffers; a value of 0
// or less means DefaultMaxLineBytes.
func NewRewriter(t cursor.Transport, maxLineBytes int) *Rewriter {
	r := &Rewriter{
		stream: stream{
			hold: make([]byte, 0, 64),
			prev: make([]byte, 0, 64),
			building: building{
				id:     value{buf: make([]byte, 0, 64)},
				evType: value{buf: make([]byte, 0, 32)},
				data:   make([]byte, 0, DataPrefixBytes+1),
			},
		},
	}
	r.Reset(t, maxLineBytes)
	return r
}

// Reset prepares r for a new stream on transport t, keeping its buffers.
func (r *Rewriter) Reset(t cursor.Transport, maxLineBytes int) {
	if maxLineBytes <= 0 {
		maxLineBytes = DefaultMaxLineBytes
	}
	clear(r.events) // they may point into the last stream's chunk
	*r = Rewriter{
		t:       t,
		prefix:  t.Prefix(),
		max:     maxLineBytes,
		mint:    r.mint,
		minting: r.mint && t.Prefix() != "",
		stream: stream{
			hold: r.hold[:0],
			prev: r.prev[:0],
			building: building{
				id:     value{buf: r.id.buf[:0]},
				evType: value{buf: r.evType.buf[:0]},
				data:   r.data[:0],
			},
		},
		events: r.events[:0],
		arena:  r.arena[:0],
	}
}

// Events returns the events dispatched during the last Rewrite call, in
// order. The slice and the bytes it refers to are reused by the next call;
// they may refer to that call's chunk (see Event).
func (r *Rewriter) Events() []Event { return r.events }

// SetMint sets whether the Rewriter mints self-describing cursors. When on,
// the last valid non-empty id line of each event is held until the event
// dispatches and written just before the empty line that dispatches it,
// with its value replaced by cursor.AppendMinted(nil, t, id, prev, kind):
// kind is the event's Kind (Classify of its type and data) and prev the
// upstream ID of the stream's previous event with an ID (see Resume). The line keeps its own
// bytes otherwise: field name, colon, optional space and line ending. An id line that already
// ends its event (C#, Rust rmcp) thus stays where it is. A compliant SSE
// client applies an event's id only at dispatch, so it cannot observe the
// move. The rare bytes written elsewhere are:
//
//   - an id line overridden by a later non-empty one, or followed by an empty
//     one (which resets the ID), goes out tagged prefix+id where that later
//     line starts, keeping the id fields in their order;
//   - an event the stream leaves unterminated (which WHATWG readers
//     discard and the Go SDK's dispatches) gets its held id line, minted,
//     as a line of its own after its last byte; a last line cut by the end
//     is ended first (see flushHeld);
//   - an id line a lone '\r' ends, and every id line after the stream's
//     first lone '\r', stays in place, tagged prefix+id (the Go SDK's
//     reader ends lines at '\n' only: a move would glue lines for it);
//   - an id line that starts the stream stays in place, tagged prefix+id,
//     when the next line starts with a BOM's first byte (moved, a BOM
//     there would lead the stream, and a client would skip it), or when it
//     follows a BOM (the Go SDK's reader keeps the BOM in the stream's
//     first line, so a move there would change which field it hides);
//   - when the stream overflows (see Overflowed), the held line goes out
//     tagged prefix+id at the start of the line that overflows (an event
//     type: of the line after it): that line is a later id, which overrides
//     it, or an event type too long to be "message".
//
// With minting off or on, an id value that starts with '~' goes out escaped
// (cursor.AppendMinted of kind KindOther), so that no upstream ID reads as a
// minted cursor when it comes back.
//
// When off, each id value is tagged in place. Nothing is minted on
// TransportNone. The setting applies from the next Reset, or at once if the
// stream has not started; Reset keeps it.
func (r *Rewriter) SetMint(on bool) {
	r.mint = on
	if r.ph == phBOM && r.nameN == 0 {
		r.minting = on && r.prefix != ""
	}
}

// Resume sets the previous ID of the stream's first event with an ID, for a
// stream that resumes after the upstream event ID prev (untagged): call it
// after Reset, before the first Rewrite. A prev longer than maxLineBytes is
// ignored (the first event then names no previous ID).
func (r *Rewriter) Resume(prev []byte) {
	if len(prev) > r.max {
		prev = nil
	}
	r.prev = append(r.prev[:0], prev...)
}

// Held returns the bytes Rewrite has consumed but not yet written out: the
// start of a line that may be an id field, cut by a chunk boundary, and,
// while minting, the id line held until its event dispatches (which may span
// many chunks). They come out (tagged or not) in a later call. A caller that
// stops feeding the rewriter must forward them itself, in front of the next
// chunk, or they are lost: they then still lie inside the event they came
// from, so a client sees the same events, with that event's ID untagged —
// provided HeldPrependable reports true. The slice is valid until the next
// Rewrite or Reset.
func (r *Rewriter) Held() []byte { return r.hold }

// HeldPrependable reports whether Held, sent in front of the next chunk,
// lands where a client sees the same events. It does unless a minting
// Rewriter holds an id line while it stands inside a later line it has
// partly written out (the held bytes would cut that line in two), or right
// after a '\r' that the next chunk may complete with a '\n'. A caller that
// gets false should instead place Held after the end of the current line in
// the next chunk, or drop it (that event then loses its ID, so a client
// resuming from it gets it again). It is always true when not minting.
func (r *Rewriter) HeldPrependable() bool {
	if !r.pend.on || len(r.hold) > r.pend.n {
		return true // nothing held but a line, from its first byte
	}
	if r.afterCR || r.hold[len(r.hold)-1] == '\r' {
		return false
	}
	switch r.ph {
	case phLineStart, phBOM:
		return true
	}
	return false
}

// Overflowed reports whether the stream exceeded maxLineBytes (an id or event
// type value longer than that) and now passes through untouched: no more ids
// are tagged and no more events are reported. (While minting holds an id
// line, an event type too long overflows the stream at the end of its line,
// where the held line goes out.)
func (r *Rewriter) Overflowed() bool { return r.ph == phOverflow }

// Tagged returns how many id fields were tagged during the last Rewrite call
// (always 0 on TransportNone, whose prefix is empty). While minting, an id
// line counts in the call that writes it out.
func (r *Rewriter) Tagged() int { return r.tagged }

// Rewrite consumes the next chunk of the upstream body and appends to dst the
// bytes to send downstream now, returning the extended slice. changed is
// false when the appended bytes equal chunk exactly (the caller may then
// leave the host's buffer alone). eos marks the last chunk: every held byte
// is flushed, and an unterminated final event is not reported in Events
// (WHATWG readers discard it) though its bytes are forwarded (see flushHeld
// for its ID). Call Reset before feeding
// another stream. dst must not overlap chunk.
//
// The events dispatched by the empty lines in chunk are available from
// Events until the next call, so a caller can record them before the bytes
// that carry them leave.
func (r *Rewriter) Rewrite(dst, chunk []byte, eos bool) (out []byte, changed bool) {
	r.releaseEvents()
	defer r.clearStale()
	if r.ph == phOverflow {
		r.tagged = 0
		return append(dst, chunk...), false
	}
	// Bytes held by an earlier call come out now or later.
	r.pass = pass{chunk: chunk, out: dst, start: len(dst), crAt: -1, edited: len(r.hold) > 0}
	for p := 0; p < len(chunk) && r.ph != phOverflow; {
		p = r.step(p)
	}
	r.flushTo(len(chunk))
	r.wrote = r.wrote || len(r.out) > r.start
	// The event being built may go on in the next chunk.
	r.id.detach(chunk)
	r.evType.detach(chunk)
	r.detachData()
	r.detachPend()
	r.chunk = nil
	if eos && len(r.hold) > 0 {
		r.endOfStream()
	}
	out, start, edited := r.out, r.start, r.edited
	r.out = nil
	if !edited {
		return out, false
	}
	return out, !bytes.Equal(out[start:], chunk)
}

// step advances over the chunk from p by the rule of the current phase and
// returns the next position: lines whole in the chunk go by the fast path
// (lines), a line cut by the chunk's end byte by byte.
func (r *Rewriter) step(p int) int {
	switch r.ph {
	case phBOM:
		return r.bomByte(p)
	case phLineStart:
		return r.lines(p)
	case phName:
		return r.nameByte(p)
	case phValueStart:
		return r.valueStartByte(p)
	case phValue:
		return r.valueRun(p)
	case phSkip:
		return r.skipLine(p)
	case phOverflowNext:
		return r.overflowNext(p)
	}
	return len(r.chunk)
}

// Bounds on the per-call event storage kept between calls. A chunk of tiny
// events (at 7 bytes an event, "data:\n\n", the Event slice takes about 12
// times the chunk) may need more; it is then allocated for that call and
// dropped at the next, so a stream keeps at most this much.
const (
	keepEvents     = 1024
	keepArenaBytes = 256 << 10
)

// releaseEvents empties the previous call's events, dropping storage that
// grew past the bounds above. Their slots are reused in place by dispatch;
// clearStale zeroes those the new call leaves over.
func (r *Rewriter) releaseEvents() {
	r.stale = len(r.events)
	if cap(r.events) > keepEvents {
		r.events, r.stale = nil, 0
	}
	if cap(r.arena) > keepArenaBytes {
		r.arena = nil
	}
	r.events = r.events[:0]
	r.arena = r.arena[:0]
}

// clearStale zeroes the slots past this call's events that still hold an
// earlier call's events, whose slices may point into the caller's earlier
// chunks: the Rewriter must not keep those alive.
func (r *Rewriter) clearStale() {
	if n := len(r.events); r.stale > n {
		clear(r.events[n:r.stale])
	}
	r.stale = 0
}
