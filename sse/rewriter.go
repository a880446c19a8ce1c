package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

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
	// Configuration (Reset, SetMint).
	t       cursor.Transport
	prefix  string // tag prefix of t; "" on TransportNone, where nothing is tagged
	max     int    // bound on a buffered id or event type value
	mint    bool   // SetMint; kept across Reset
	minting bool   // mint on this stream (never on TransportNone)

	// The scanner's state across chunks (scan.go).
	in   lineState // where the scanner stands: at a line start, or inside a line the chunk's end cut
	head [6]byte   // the first bytes of a cut line while they do not yet tell its field (in == inName)
	// headN is how many bytes of head are set.
	headN int
	// bom counts the bytes of a UTF-8 BOM matched at the stream's start;
	// -1 once the stream's first line has begun.
	bom int
	// afterCR: the line before ended with '\r', so a '\n' next completes
	// it ("\r\n") rather than being an empty line.
	afterCR bool
	// spaceNext: the current data or event value starts at the next byte,
	// where SSE drops one space.
	spaceNext bool

	// What the id lines need to know of the stream (idline.go).
	// bomLine: the current line is the stream's first and follows a BOM,
	// which the Go SDK's reader keeps in it: an id line there is tagged in
	// place, never held.
	bomLine bool
	// sawLoneCR: a line ended with a '\r' no '\n' followed, which the Go
	// SDK's reader does not take as a line end: from then on id lines are
	// tagged in place, never held.
	sawLoneCR bool
	wrote     bool // some byte of the stream has been written out
	// lineByLine: commonEvent is never tried (tests compare the two).
	lineByLine bool
	// overflowed: a value outgrew max; the stream passes untouched.
	overflowed bool
	// overflowNext: an event type outgrew max while an id line was held;
	// the stream overflows at the next line start, after its line ending.
	overflowNext bool

	// Held bytes (idline.go).
	line []byte // the current line from its first byte, while it is (or may be) an id field
	pend []byte // minting: the event's id line, held until the event dispatches
	both []byte // pend followed by line, for Held
	prev []byte // upstream ID of the stream's previous event with an ID: a minted cursor's previous ID

	// The event being built, cleared at dispatch (event.go).
	id     []byte // the last valid non-empty id value; empty: the event has no ID
	evType []byte // the value of the last event field, at most max bytes
	// dataAt: the event's data lines, each followed by '\n', are
	// arena[dataAt:], where its Event will point; at most dataLimit()+1
	// bytes of them.
	dataAt  int
	dataCut bool     // the data lines were cut at that bound
	memo    kindMemo // minting: what decided the last events' response class (memo.go)

	// One Rewrite call.
	chunk  []byte // the chunk being rewritten; nil between calls
	out    []byte // dst, extended with the output so far; nil between calls
	start  int    // len(dst): out[start:] is this call's output
	fwd    int    // chunk[fwd:p] was seen, passes unchanged and is not yet in out
	edited bool   // the output may differ from the chunk
	tagged int    // id fields tagged in this call (Tagged)
	events []Event
	arena  []byte // the events' ID, Type and Data, then the data of the event being built
}

// NewRewriter returns a Rewriter for a stream served on transport t.
// maxLineBytes bounds the id and event type values it buffers; a value of 0
// or less means DefaultMaxLineBytes.
func NewRewriter(t cursor.Transport, maxLineBytes int) *Rewriter {
	r := &Rewriter{}
	r.Reset(t, maxLineBytes)
	return r
}

// Reset prepares r for a new stream on transport t, keeping its buffers and
// its SetMint setting.
func (r *Rewriter) Reset(t cursor.Transport, maxLineBytes int) {
	if maxLineBytes <= 0 {
		maxLineBytes = DefaultMaxLineBytes
	}
	*r = Rewriter{
		t:       t,
		prefix:  t.Prefix(),
		max:     maxLineBytes,
		mint:    r.mint,
		minting: r.mint && t.Prefix() != "",
		line:    r.line[:0],
		pend:    r.pend[:0],
		both:    r.both[:0],
		prev:    r.prev[:0],
		id:      r.id[:0],
		evType:  r.evType[:0],
		events:  r.events[:0],
		arena:   r.arena[:0],
		memo:    r.memo, // it holds only what the rule decides from bytes
	}
}

// SetMint sets whether the Rewriter mints self-describing cursors. When on,
// the last valid non-empty id line of each event is held until the event
// dispatches and written just before the empty line that dispatches it,
// with its value replaced by cursor.AppendMinted(nil, t, id, prev, kind):
// kind is the event's ResponseClass (of its type and data) and prev the
// upstream ID of the stream's previous event with an ID (see Resume). The
// line keeps its own bytes otherwise: field name, colon, optional space and
// line ending. An id line that already ends its event (C#, Rust rmcp) thus
// stays where it is. A compliant SSE client applies an event's id only at
// dispatch, so it cannot observe the move. The rare bytes written elsewhere
// are:
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
	if r.bom == 0 {
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
// many chunks), that one first. They come out (tagged or not) in a later
// call. A caller that stops feeding the rewriter must forward them itself,
// in front of the next chunk, or they are lost: they then still lie inside
// the event they came from, so a client sees the same events, with that
// event's ID untagged — provided HeldPrependable reports true. The slice is
// valid until the next Rewrite or Reset.
func (r *Rewriter) Held() []byte {
	switch {
	case len(r.pend) == 0:
		return r.line
	case len(r.line) == 0:
		return r.pend
	}
	r.both = append(append(r.both[:0], r.pend...), r.line...)
	return r.both
}

// HeldPrependable reports whether Held, sent in front of the next chunk,
// lands where a client sees the same events. It does unless a minting
// Rewriter holds an id line while it stands inside a later line it has
// partly written out (the held bytes would cut that line in two), or right
// after a '\r' that the next chunk may complete with a '\n'. A caller that
// gets false should instead place Held after the end of the current line in
// the next chunk, or drop it (that event then loses its ID, so a client
// resuming from it gets it again). It is always true when not minting.
func (r *Rewriter) HeldPrependable() bool {
	if len(r.pend) == 0 || len(r.line) > 0 {
		return true // nothing held but a line, from its first byte
	}
	if r.afterCR || r.pend[len(r.pend)-1] == '\r' {
		return false
	}
	return r.in == atLineStart && !r.overflowNext
}

// Overflowed reports whether the stream exceeded maxLineBytes (an id or event
// type value longer than that) and now passes through untouched: no more ids
// are tagged and no more events are reported. (While minting holds an id
// line, an event type too long overflows the stream at the end of its line,
// where the held line goes out.)
func (r *Rewriter) Overflowed() bool { return r.overflowed }

// Tagged returns how many id fields were tagged during the last Rewrite call
// (always 0 on TransportNone, whose prefix is empty). While minting, an id
// line counts in the call that writes it out.
func (r *Rewriter) Tagged() int { return r.tagged }

// Events returns the events dispatched during the last Rewrite call, in
// order. The slice and the bytes it refers to are reused by the next call.
func (r *Rewriter) Events() []Event { return r.events }

// flushTo appends the chunk's bytes seen up to p, which pass unchanged, to
// the output.
func (r *Rewriter) flushTo(p int) {
	r.out = append(r.out, r.chunk[r.fwd:p]...)
	r.fwd = p
}

// lineState is where the scanner stands: at a line start, or inside a line
// of a known field, or of one whose name the chunk's end cut.
type lineState uint8

const (
	atLineStart lineState = iota
	inName                // the line's first bytes, in head, do not yet tell its field
	inEmpty               // an empty line: it dispatches the event
	inData                // a "data" field
	inEvent               // an "event" field
	inID                  // an "id" field, held whole until its end (idline.go)
	inOther               // a comment, retry, an unknown field: it passes untouched
	// inLong: an event field whose value outgrew max while an id line was
	// held; the line passes, then the stream overflows.
	inLong
)

var bom = [3]byte{0xEF, 0xBB, 0xBF}

// Event is an SSE event the rewriter dispatched: one that carried an id
// field, a data field, or both. Its byte slices are copies, or views of the
// chunk when the chunk held the whole event (fastpath.go), valid until the
// next Rewrite call as long as the caller leaves the chunk as it is; each is
// capped at its length, so appending to it never writes into another event.
type Event struct {
	// ID is the upstream's original (untagged) id value, when HasID.
	ID []byte
	// HasID reports that the event carried a non-empty id field (the last
	// id field wins, as in SSE; one with an empty value resets it, one
	// containing NUL is ignored).
	HasID bool
	// Type is the value of the event field; empty means "message".
	Type []byte
	// Data is the event's data, its lines joined with '\n' as SSE joins
	// them, cut to DataPrefixBytes. For an event of type "endpoint" (the
	// legacy transport's announcement of the session's message URL), the
	// data lines that follow its event field are kept up to the Rewriter's
	// maxLineBytes (at least DataPrefixBytes), so that a session ID of that
	// length reaches the caller whole; an endpoint event that names its type
	// only after its data keeps just DataPrefixBytes of it.
	Data []byte
	// Truncated reports that the data is longer than Data.
	Truncated bool
}
