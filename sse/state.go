package sse

// phase is where the rewriter stands inside the current line.
type phase uint8

const (
	// phBOM: at the start of the stream, nameN bytes of a UTF-8 BOM seen.
	phBOM phase = iota
	// phLineStart: before the first byte of a line (afterCR tells whether a
	// '\n' here still belongs to the previous "\r\n").
	phLineStart
	// phName: inside the name of a data, event or id field; nameN bytes of
	// fieldNames[field] matched so far.
	phName
	// phValueStart: right after the colon; a space here is dropped by SSE.
	phValueStart
	// phValue: inside the value of the field.
	phValue
	// phSkip: inside a line that is neither data, event nor id (a comment,
	// retry, an unknown field): it passes untouched up to its end.
	phSkip
	// phOverflow: the stream exceeded maxLineBytes; everything passes
	// untouched for the rest of the stream.
	phOverflow
	// phOverflowNext: the line that just ended held an event type longer
	// than maxLineBytes while an id line was held: the stream overflows at
	// the start of the next line, where the held line can go out.
	phOverflowNext
)

// field is a field name the rewriter cares about.
type field uint8

const (
	fieldData field = iota
	fieldEvent
	fieldID
	// fieldLong: an event field whose value outgrew maxLineBytes while an
	// id line was held; the line passes, then the stream overflows.
	fieldLong
)

var fieldNames = [...]string{fieldData: "data", fieldEvent: "event", fieldID: "id"}

var bom = [3]byte{0xEF, 0xBB, 0xBF}

// stream is the state of a Rewriter that crosses chunk boundaries: where it
// stands in the current line, the bytes it holds back, and the event being
// built. Everything else lives for one Rewrite call (pass) or is
// configuration.
type stream struct {
	ph      phase // where the rewriter stands inside the current line
	field   field // the field of the current line (phName, phValueStart, phValue)
	nameN   uint8 // bytes of the field name matched (phName), BOM bytes seen (phBOM)
	afterCR bool  // the previous line ended with '\r': a '\n' next ends it too
	// bomLine: the current line is the stream's first and follows a BOM,
	// which the Go SDK's reader keeps in it (an unknown field name to it):
	// an id line there is tagged in place, never held (moved, the BOM
	// would hide the next line's field instead).
	bomLine bool
	// sawLoneCR: a line of the stream ended with a '\r' no '\n' follows,
	// which the Go SDK's reader does not take as a line end: id lines are
	// tagged in place from then on, never held (loneCR).
	sawLoneCR bool
	wrote     bool // a byte of the stream has been written out

	// hold is what was consumed and not yet written: the pending id line
	// (hold[:pend.n], when minting and it is not a span of the chunk), then
	// the current line, from its first byte, while it is (or may be) an id
	// field.
	hold []byte
	// idValue is the offset in hold of the current id line's value (after
	// the colon and the optional space).
	idValue int
	// pend is the id line a minting Rewriter holds until its event
	// dispatches.
	pend pendLine

	// prev is the upstream ID of the stream's previous event with an ID (or
	// the one the stream resumed after): the previous ID of minted cursors.
	prev []byte

	// building is the event being built, cleared at dispatch.
	building
}

// building is the event being built. A value set by a line that lies whole
// in the current chunk is a span of it (no copy) until the call returns,
// when the Rewriter copies it (see value and detachData).
type building struct {
	id        value  // value of the last valid non-empty id field
	hasID     bool   // id holds the event's ID
	evType    value  // value of the last event field
	endpoint  bool   // the event type is "endpoint": its data is kept whole
	data      []byte // data buffer (lines joined, each followed by '\n'), at most dataLimit()+1 bytes
	hasData   bool   // a data field was seen
	dataTrunc bool   // data holds only a prefix of the data buffer
	// dataInChunk: the data buffer is chunk[dataLo:dataHi] followed by
	// '\n' (one data line, whole in the current chunk), not data.
	dataInChunk    bool
	dataLo, dataHi int
}

// pendLine is the id line a minting Rewriter holds until its event
// dispatches: the last valid non-empty id line of the event being built.
// It is the span chunk[lo:hi] while it lies whole in the current chunk,
// else hold[:n]. val and end are the offsets, from the line's start, of
// its value and of its line ending.
type pendLine struct {
	on       bool
	inChunk  bool
	lo, hi   int // chunk[lo:hi], when inChunk
	n        int // hold[:n], when not inChunk
	val, end int
	// cr: the line ended with '\r' and the next byte has not been seen:
	// a '\n' there still belongs to this line.
	cr bool
}

// pass is the state of one Rewrite call.
type pass struct {
	chunk  []byte // the chunk of the current Rewrite call, nil between calls
	out    []byte // dst extended with what the call wrote so far, nil between calls
	start  int    // len(dst): out[start:] is the call's output
	fwd    int    // chunk[fwd:p] is seen and passes unchanged, not yet appended to out
	crAt   int    // next '\r' at or after the position (len(chunk): none); -1: not searched
	edited bool   // the output may differ from the chunk

	tagged int // id fields written tagged (Tagged)
}

// flushTo appends the chunk's bytes seen up to p, which pass unchanged, to
// the output.
func (r *Rewriter) flushTo(p int) {
	r.out = append(r.out, r.chunk[r.fwd:p]...)
	r.fwd = p
}
