package sse

import (
	"bytes"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// DefaultMaxLineBytes is the bound on a buffered id or event type value used
// when NewRewriter or Reset is given a non-positive maxLineBytes.
const DefaultMaxLineBytes = 4096

// phase is where the rewriter stands inside the current line.
type phase uint8

const (
	// phBOM: at the start of the stream, bomN bytes of a UTF-8 BOM seen.
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
	t      cursor.Transport
	prefix string // tag prefix of the route's transport
	max    int    // bound on a buffered id or event type value

	mint    bool // SetMint, kept across Reset
	minting bool // mint, on a transport with a prefix, for this stream

	ph      phase
	field   field // the field of the current line (phName, phValueStart, phValue)
	nameN   uint8 // bytes of the field name matched (phName), BOM bytes seen (phBOM)
	afterCR bool  // the previous line ended with '\r'
	wrote   bool  // a byte of the stream has been written out

	// hold is what was consumed and not yet written: the pending id line
	// (hold[:pend.n], when minting and it is not a span of the chunk), then
	// the current line, from its first byte, while it is (or may be) an id
	// field. idValue is the offset in hold of the current line's value
	// (after the colon and the optional space).
	hold    []byte
	idValue int
	pend    pendLine

	// prev is the upstream ID of the stream's previous event with an ID (or
	// the one the stream resumed after): the previous ID of minted cursors.
	prev []byte

	// The event being built, cleared at dispatch. A value set by a line
	// that lies whole in the current chunk is a span of it (no copy) until
	// the call returns; see value.
	id        value // value of the last valid non-empty id field
	hasID     bool
	evType    value
	endpoint  bool   // the event type is "endpoint": its data is kept whole
	data      []byte // data buffer (lines joined, each followed by '\n'), at most dataLimit()+1 bytes
	hasData   bool
	dataTrunc bool // data holds only a prefix of the data buffer
	// dataInChunk: the data buffer is chunk[dataLo:dataHi] followed by
	// '\n' (one data line, whole in the current chunk), not data.
	dataInChunk    bool
	dataLo, dataHi int

	// chunk is the chunk of the current Rewrite call, nil between calls.
	chunk []byte

	// lastIDOnly: classify only the last event with an ID of each call.
	lastIDOnly bool
	// lastIDMint is the minting decision (ResponseKind) of this call's last
	// event with an ID, KindOther when none was made for it.
	lastIDMint cursor.EventKind
	// memo makes the minting decision (ResponseKind) cheap for events that
	// start like an earlier one.
	memo kindMemo

	// Per Rewrite call.
	events []Event
	stale  int    // events[len(events):stale] may still refer to an earlier chunk
	arena  []byte // backs the events' ID, Type and Data
	tagged int
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

// NewRewriter returns a Rewriter for a stream served on transport t.
// maxLineBytes bounds the id and event type values it buffers; a value of 0
// or less means DefaultMaxLineBytes.
func NewRewriter(t cursor.Transport, maxLineBytes int) *Rewriter {
	r := &Rewriter{
		hold:   make([]byte, 0, 64),
		prev:   make([]byte, 0, 64),
		id:     value{buf: make([]byte, 0, 64)},
		evType: value{buf: make([]byte, 0, 32)},
		data:   make([]byte, 0, DataPrefixBytes+1),
		memo:   kindMemo{read: [2][]byte{make([]byte, 0, 64), make([]byte, 0, 64)}},
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
		t:          t,
		prefix:     t.Prefix(),
		max:        maxLineBytes,
		mint:       r.mint,
		minting:    r.mint && t.Prefix() != "",
		lastIDOnly: r.lastIDOnly,
		hold:       r.hold[:0],
		prev:       r.prev[:0],
		id:         value{buf: r.id.buf[:0]},
		evType:     value{buf: r.evType.buf[:0]},
		data:       r.data[:0],
		events:     r.events[:0],
		arena:      r.arena[:0],
		memo:       r.memo,
	}
	r.memo.reset()
}

// Events returns the events dispatched during the last Rewrite call, in
// order. The slice and the bytes it refers to are reused by the next call;
// they may refer to that call's chunk (see Event).
func (r *Rewriter) Events() []Event { return r.events }

// ClassifyLastIDOnly sets whether Rewrite classifies only the last event
// carrying an ID among each call's Events, the one a caller recording a
// stream's tail needs; every other event then reports KindOther. JSON-RPC
// classification is most of the rewriter's work on typical MCP traffic (many
// small notifications per chunk). While minting (SetMint), every event with
// an ID still needs to know whether it is a response, for its cursor: it
// gets that from ResponseKind, which stops at the first decisive key, while
// Events reports Classify's kind for the last event with an ID only, as
// without minting. Reset keeps the setting.
func (r *Rewriter) ClassifyLastIDOnly(on bool) { r.lastIDOnly = on }

// SetMint sets whether the Rewriter mints self-describing cursors. When on,
// the last valid non-empty id line of each event is held until the event
// dispatches and written just before the empty line that dispatches it,
// with its value replaced by cursor.AppendMinted(nil, t, id, prev, kind):
// kind is ResponseKind of the event's type and data (which differs from its
// Kind only for a message with "method" before "result" or "error", not
// valid JSON-RPC: such a cursor stays plain) and prev the upstream ID of the
// stream's previous event with an ID (see Resume). The line keeps its own
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
//   - a held id line ended by a lone '\r' that lands right before a '\n'
//     ends with '\n' instead, so that the two do not read as one "\r\n";
//   - an id line that starts the stream stays in place, tagged prefix+id,
//     when the next line starts with a BOM's first byte (moved, a BOM
//     there would lead the stream, and a client would skip it);
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
	r.tagged = 0
	if r.ph == phOverflow {
		return append(dst, chunk...), false
	}
	start := len(dst)
	out = dst
	r.chunk = chunk
	edited := len(r.hold) > 0 // bytes held by an earlier call come out now or later
	fwd := 0                  // chunk[fwd:p] is seen and passes unchanged, not yet appended
	crAt := -1                // next '\r' at or after p (len(chunk): none); -1: not searched

scan:
	for p := 0; p < len(chunk); {
		c := chunk[p]
		switch r.ph {
		case phBOM:
			if c == bom[r.nameN] {
				r.nameN++
				p++
				if int(r.nameN) == len(bom) {
					r.ph = phLineStart
				}
				continue
			}
			if r.nameN == 0 {
				r.ph = phLineStart
			} else {
				// The first line starts with part of a BOM: not a field
				// this rewriter cares about.
				r.ph = phSkip
			}

		case phLineStart:
			// Lines whole in the chunk are handled here, one after the
			// other; a line that goes on in the next chunk, or starts
			// with "i", "d" or "e" without being an id, data or event
			// field, goes through the byte-wise phases.
		lines:
			for p < len(chunk) {
				c := chunk[p]
				if r.afterCR {
					r.afterCR = false
					if c == '\n' {
						if r.pend.cr {
							// The "\r\n" of the held id line.
							r.pend.cr = false
							r.pendLF()
							fwd = p + 1
						}
						p++
						continue lines
					}
					r.pend.cr = false
				}
				// Fast path: the usual field names; a line whole in this
				// chunk is handled at once, with one search for its end.
				switch rest := chunk[p:]; {
				case c == 'd' && len(rest) >= 5 && string(rest[:5]) == "data:":
					if e := nextEOL(chunk, p+5, &crAt); e >= 0 {
						r.dataLine(valueStart(chunk, p+5, e), e)
						p = r.endLine(chunk[e], e)
						continue
					}
					r.field, r.ph = fieldData, phValueStart
					p += 5
					continue scan
				case c == 'e' && len(rest) >= 6 && string(rest[:6]) == "event:":
					if e := nextEOL(chunk, p+6, &crAt); e >= 0 {
						vs := valueStart(chunk, p+6, e)
						if e-vs > r.max {
							if !r.pend.on {
								out, fwd = r.overflow(out, chunk, fwd, p), len(chunk)
								break scan
							}
							// The line passes; the held id line goes
							// out after it.
							r.field, r.ph = fieldLong, phValue
							p = vs
							continue scan
						}
						r.evType.setSpan(vs, e) // the last event field wins
						if ep := string(chunk[vs:e]) == "endpoint"; ep != r.endpoint {
							r.setEndpoint(ep)
						}
						p = r.endLine(chunk[e], e)
						continue
					}
					r.field, r.ph = fieldEvent, phValueStart
					r.startValue()
					p += 6
					continue scan
				case c == 'i' && len(rest) >= 3 && string(rest[:3]) == "id:":
					if e := nextEOL(chunk, p+3, &crAt); e >= 0 {
						vs := valueStart(chunk, p+3, e)
						v := chunk[vs:e]
						switch {
						case len(v) > r.max:
							out, fwd = r.overflow(out, chunk, fwd, p), len(chunk)
							break scan
						case len(v) == 0: // resets the last event ID
							if r.pend.on {
								out = append(out, chunk[fwd:p]...)
								fwd = p
								out = r.flushPend(out, c)
								edited = true
							}
							r.id.clear()
							r.hasID = false
						case hasNUL(v): // SSE ignores the field
						default:
							if r.minting {
								out = append(out, chunk[fwd:p]...)
								if r.pend.on {
									out = r.flushPend(out, c)
								}
								fwd = e + 1
								r.pend = pendLine{on: true, inChunk: true, lo: p, hi: fwd, val: vs - p, end: e - p, cr: chunk[e] == '\r'}
								edited = true
							} else if r.prefix != "" {
								out = append(out, chunk[fwd:vs]...)
								if v[0] == '~' {
									// Escaped, so that it cannot read as minted.
									out = cursor.AppendMinted(out, r.t, v, nil, cursor.KindOther)
									fwd = e
								} else {
									out = appendShort(out, r.prefix)
									fwd = vs
								}
								edited = true
								r.tagged++
							}
							r.id.setSpan(vs, e)
							r.hasID = true
						}
						p = r.endLine(chunk[e], e)
						continue
					}
					out = append(out, chunk[fwd:p]...)
					r.holdLine("id:")
					edited = true
					r.field, r.ph = fieldID, phValueStart
					r.startValue()
					p += 3
					fwd = p
					continue scan
				}
				switch c {
				case '\n', '\r':
					if r.pend.on {
						out = append(out, chunk[fwd:p]...)
						fwd = p
						out = r.dispatchHeld(out, c)
					} else {
						r.dispatch()
					}
					r.afterCR = c == '\r'
					p++
				case 'i':
					out = append(out, chunk[fwd:p]...)
					r.holdLine("i")
					edited = true
					r.field, r.nameN, r.ph = fieldID, 1, phName
					p++
					fwd = p
					continue scan
				case 'd':
					r.field, r.nameN, r.ph = fieldData, 1, phName
					p++
					continue scan
				case 'e':
					r.field, r.nameN, r.ph = fieldEvent, 1, phName
					p++
					continue scan
				default: // a comment or another field passes untouched
					if c == bom[0] && r.pend.on && !r.wrote && len(out) == start && fwd == p {
						// The held id line is the stream's first: if it
						// moved, a BOM here would lead the stream and be
						// skipped. It goes out first, tagged.
						out = r.flushPend(out, c)
						edited = true
					}
					e := nextEOL(chunk, p+1, &crAt)
					if e < 0 {
						r.ph = phSkip
						p = len(chunk)
						continue scan
					}
					p = r.endLine(chunk[e], e)
				}
			}

		case phName:
			name := fieldNames[r.field]
			n := int(r.nameN)
			switch {
			case n < len(name) && c == name[n]:
				r.nameN++
			case n == len(name) && c == ':':
				r.ph = phValueStart
			case n == len(name) && (c == '\n' || c == '\r'):
				// A field name alone: the value is empty. phValue
				// ends the line at this same byte.
				r.startValue()
				r.ph = phValue
				continue
			default:
				// Another field: release what was held and let the
				// line pass; c is looked at again by phSkip.
				if r.field == fieldID {
					out = r.releaseLine(out)
				}
				r.ph = phSkip
				continue
			}
			if r.field == fieldID {
				r.hold = append(r.hold, c)
				fwd = p + 1
			}
			if r.ph == phValueStart {
				r.startValue()
			}
			p++

		case phValueStart:
			r.ph = phValue
			if c == ' ' {
				if r.field == fieldID {
					r.hold = append(r.hold, c)
					r.idValue++
					fwd = p + 1
				}
				p++
			}

		case phValue:
			e := nextEOL(chunk, p, &crAt)
			end := e
			if e < 0 {
				end = len(chunk)
			}
			switch seg := chunk[p:end]; r.field {
			case fieldData:
				r.appendData(seg)
			case fieldEvent:
				if len(r.evType.buf)+len(seg) > r.max {
					if !r.pend.on {
						out, fwd = r.overflow(out, chunk, fwd, fwd), len(chunk)
						break scan
					}
					r.field = fieldLong
					break
				}
				r.evType.buf = append(r.evType.buf, seg...)
			case fieldID:
				if len(r.hold)-r.idValue+len(seg) > r.max {
					out, fwd = r.overflow(out, chunk, fwd, fwd), len(chunk)
					break scan
				}
				r.hold = append(r.hold, seg...)
				fwd = end
			}
			p = end
			if e >= 0 {
				var held bool
				if out, held = r.endValue(out, chunk[e]); held {
					fwd = e + 1
				}
				p = r.endLine(chunk[e], p)
				if r.field == fieldLong {
					r.ph = phOverflowNext
				}
			}

		case phSkip:
			e := nextEOL(chunk, p, &crAt)
			if e < 0 {
				p = len(chunk)
				break
			}
			p = r.endLine(chunk[e], e)

		case phOverflowNext:
			if r.afterCR {
				r.afterCR = false
				if c == '\n' {
					p++
					continue
				}
			}
			out, fwd = r.overflow(out, chunk, fwd, p), len(chunk)
			break scan
		}
	}

	out = append(out, chunk[fwd:]...)
	r.wrote = r.wrote || len(out) > start
	if r.lastIDOnly {
		r.classifyLastID()
	}
	// The event being built may go on in the next chunk.
	r.id.detach(chunk)
	r.evType.detach(chunk)
	r.detachData()
	r.detachPend()
	r.chunk = nil
	if eos && len(r.hold) > 0 {
		// An unterminated last event: see flushHeld.
		if r.ph == phOverflowNext || r.field == fieldLong && r.ph == phValue {
			out = r.overflow(r.eosLineStart(out), nil, 0, 0)
		} else {
			out = r.flushHeld(out)
			r.ph = phSkip
		}
	}
	if !edited {
		return out, false
	}
	return out, !bytes.Equal(out[start:], chunk)
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
	r.lastIDMint = cursor.KindOther
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

// endLine steps over the line ending c at e and returns the next position.
func (r *Rewriter) endLine(c byte, e int) int {
	r.afterCR = c == '\r'
	r.ph = phLineStart
	return e + 1
}

// startValue is called when the field name of the current line is complete.
func (r *Rewriter) startValue() {
	switch r.field {
	case fieldEvent:
		r.evType.clear() // the last event field wins
	case fieldID:
		r.idValue = len(r.hold)
	}
}

// setEndpoint records whether the event type is now "endpoint", which sets
// how much of the data lines that follow is kept. A data line still a span
// of the chunk is cut first by the bound of its own time, as if it had been
// copied then.
func (r *Rewriter) setEndpoint(on bool) {
	if on != r.endpoint && r.dataInChunk {
		r.detachData()
	}
	r.endpoint = on
}

// endValue processes the complete value of a data, event or id field at the
// end of its line, eol being the byte that ends it. It appends the
// (possibly tagged) held id line to out, or, while minting, holds a valid
// one until its event dispatches, eol included: held reports that.
func (r *Rewriter) endValue(out []byte, eol byte) (_ []byte, held bool) {
	switch r.field {
	case fieldData:
		r.hasData = true
		r.appendData(newline)
	case fieldEvent:
		r.setEndpoint(string(r.evType.buf) == "endpoint")
	case fieldID:
		line := r.hold[r.pend.n:]
		v := r.hold[r.idValue:]
		switch {
		case len(v) == 0: // "id", "id:", "id: " reset the last event ID
			if r.pend.on {
				out = r.appendPend(out, cursor.KindOther, nil, line[0])
			}
			out = append(out, line...)
			r.hold = r.hold[:0]
			r.pend = pendLine{}
			r.id.clear()
			r.hasID = false
		case bytes.IndexByte(v, 0) >= 0: // SSE ignores the field
			out = append(out, line...)
			r.hold = r.hold[:r.pend.n]
		case r.minting:
			if r.pend.on { // overridden by this one, at its place
				out = r.appendPend(out, cursor.KindOther, nil, line[0])
				r.dropPend()
			}
			r.id.clear()
			r.id.buf = append(r.id.buf, r.hold[r.idValue:]...)
			r.hasID = true
			r.hold = append(r.hold, eol)
			r.pend = pendLine{on: true, n: len(r.hold), val: r.idValue, end: len(r.hold) - 1, cr: eol == '\r'}
			return out, true
		default:
			out = append(out, r.hold[:r.idValue]...)
			out = r.appendInPlace(out, v)
			r.id.clear()
			r.id.buf = append(r.id.buf, v...)
			r.hasID = true
			r.hold = r.hold[:0]
		}
	}
	return out, false
}

// holdLine starts holding the current line, whose first bytes are s.
func (r *Rewriter) holdLine(s string) {
	r.detachPend()
	r.hold = append(r.hold[:r.pend.n], s...)
}

// releaseLine lets the held current line pass: it is not an id field.
func (r *Rewriter) releaseLine(out []byte) []byte {
	out = append(out, r.hold[r.pend.n:]...)
	r.hold = r.hold[:r.pend.n]
	return out
}

// pendBytes returns the held id line.
func (r *Rewriter) pendBytes() []byte {
	if r.pend.inChunk {
		return r.chunk[r.pend.lo:r.pend.hi]
	}
	return r.hold[:r.pend.n]
}

// detachPend copies a held id line that is a span of the current chunk into
// hold, so that it outlives the call or a current line can follow it there.
func (r *Rewriter) detachPend() {
	if r.pend.inChunk {
		r.hold = append(r.hold[:0], r.chunk[r.pend.lo:r.pend.hi]...)
		r.pend.n, r.pend.inChunk = len(r.hold), false
	}
}

// dropPend forgets the held id line, keeping the current line held after
// it.
func (r *Rewriter) dropPend() {
	if !r.pend.inChunk {
		r.hold = r.hold[:copy(r.hold, r.hold[r.pend.n:])]
		r.idValue -= r.pend.n
	}
	r.pend = pendLine{}
}

// pendLF adds the '\n' of a "\r\n" to the held id line; it follows the line
// at once, at a line start.
func (r *Rewriter) pendLF() {
	if r.pend.inChunk {
		r.pend.hi++
		return
	}
	r.hold = append(r.hold, '\n')
	r.pend.n++
}

// appendPend appends the held id line to out with its value tagged:
// cursor.AppendMinted with kind k and previous ID prev. next is the byte
// that follows it in the output (0: none).
func (r *Rewriter) appendPend(out []byte, k cursor.EventKind, prev []byte, next byte) []byte {
	line := r.pendBytes()
	id, eol := line[r.pend.val:r.pend.end], line[r.pend.end:]
	r.tagged++
	out = append(out, line[:r.pend.val]...)
	if !cursor.NeedsMint(id, k) && (next != '\n' || eol[0] != '\r' || len(eol) > 1) {
		// prefix+id and the line ending as they are: most events.
		out = appendShort(out, r.prefix)
		return append(out, line[r.pend.val:]...)
	}
	out = cursor.AppendMinted(out, r.t, id, prev, k)
	return appendEOL(out, eol, next)
}

// flushPend appends the held id line tagged prefix+id and forgets it; the
// current line is not held.
func (r *Rewriter) flushPend(out []byte, next byte) []byte {
	out = r.appendPend(out, cursor.KindOther, nil, next)
	r.dropPend()
	return out
}

// appendEOL appends the line ending eol of a moved id line: a lone '\r'
// right before a '\n' becomes '\n', or the two would end one line.
func appendEOL(out, eol []byte, next byte) []byte {
	if next == '\n' && len(eol) == 1 && eol[0] == '\r' {
		return append(out, '\n')
	}
	return append(out, eol...)
}

// dispatchHeld dispatches the event at an empty line whose first byte is
// next, appending its held id line, minted, to out.
func (r *Rewriter) dispatchHeld(out []byte, next byte) []byte {
	k := r.dispatch()
	line := r.pendBytes()
	out = r.appendPend(out, k, r.prev, next)
	r.prev = append(r.prev[:0], line[r.pend.val:r.pend.end]...)
	r.dropPend()
	return out
}

// flushHeld appends what is held at the end of a stream that ends inside an
// event: the held id line, and the current line when it is held (an id
// line, or one that may be). WHATWG readers (eventsource-parser, the
// TypeScript SDK's) discard such an event, but the Go SDK's reader
// dispatches it at EOF, the last line too, terminated or not. So the held id
// line goes out as a line of its own, where a line starts for every reader
// (eosLineStart ends a partly written line first, with the line ending of
// the id line itself), minted with the kind of the event's data as the Go
// SDK reads it; and a last line that is itself a valid id field is tagged
// like any other (it overrides the held one, which goes out tagged
// prefix+id before it). Either reader then sees what it saw without the
// guard, IDs aside.
func (r *Rewriter) flushHeld(out []byte) []byte {
	line := r.hold[r.pend.n:]
	k := cursor.KindOther
	if r.minting {
		k = r.eosKind()
	}
	v, idField := r.eosIDValue()
	ignored := hasNUL(v) // a reader ignores the field (WHATWG; the Go SDK does not, but it reads no NUL ID back either)
	isID := idField && len(v) > 0 && !ignored
	if r.pend.on {
		if len(line) > 0 {
			// The current line follows at a line start; a valid or empty
			// id value there overrides the held one.
			if idField && !ignored {
				out = r.appendPend(out, cursor.KindOther, nil, line[0])
			} else {
				out = r.appendPend(out, k, r.prev, line[0])
			}
		} else {
			out = r.appendPend(r.eosLineStart(out), k, r.prev, 0)
		}
	}
	if isID {
		out = append(out, line[:r.idValue-r.pend.n]...)
		if r.minting {
			r.tagged++
			out = cursor.AppendMinted(out, r.t, v, r.prev, k)
		} else {
			out = r.appendInPlace(out, v)
		}
	} else {
		out = append(out, line...)
	}
	r.hold = r.hold[:0]
	r.pend = pendLine{}
	return out
}

// eosIDValue returns the value of the current line at the end of the
// stream and whether that line is an id field (its name and colon seen).
func (r *Rewriter) eosIDValue() ([]byte, bool) {
	if r.field != fieldID || r.ph != phValueStart && r.ph != phValue {
		return nil, false
	}
	return r.hold[r.idValue:], true
}

// eosKind is the kind a minted cursor needs of the event the stream leaves
// unterminated, from its type and data so far (a last data line counts,
// terminated or not, as the Go SDK's reader counts it).
func (r *Rewriter) eosKind() cursor.EventKind {
	data, truncated := r.data, r.dataTrunc
	if !truncated && len(data) > 0 && data[len(data)-1] == '\n' {
		data = data[:len(data)-1]
	}
	if limit := r.dataLimit(); len(data) > limit {
		data, truncated = data[:limit], true
	}
	return r.memo.responseKind(r.evType.buf, data, truncated)
}

// eosLineStart ends, at the end of the stream, what out ends with so that the
// held id line that follows starts a line for every reader: a line partly
// written out gets the id line's own line ending ("\r\n" for a lone '\r', which
// the Go SDK's reader does not take as one), and a line that ended with a
// lone '\r' (other than the held line itself) a '\n'.
func (r *Rewriter) eosLineStart(out []byte) []byte {
	switch r.ph {
	case phName, phValueStart, phValue, phSkip:
		eol := r.pendBytes()[r.pend.end:]
		if len(eol) == 1 && eol[0] == '\r' {
			return append(out, '\r', '\n')
		}
		return append(out, eol...)
	}
	if r.afterCR && !r.pend.cr {
		return append(out, '\n')
	}
	return out
}

// appendInPlace appends the tag of an id value v tagged in place, and v:
// prefix+v, or for a v that starts with '~' its escaped form
// (cursor.AppendMinted of kind KindOther), so that no plain cursor reads as
// minted, whether the guard mints or not. On TransportNone v is appended as
// it is.
func (r *Rewriter) appendInPlace(out, v []byte) []byte {
	if r.prefix == "" {
		return append(out, v...)
	}
	r.tagged++
	return cursor.AppendMinted(out, r.t, v, nil, cursor.KindOther)
}

var newline = []byte{'\n'}

// appendData appends b to the data buffer, keeping at most dataLimit()+1
// bytes of it (the +1 is the '\n' that SSE strips from the end, so that a
// data of exactly the limit is not truncated).
func (r *Rewriter) appendData(b []byte) {
	if r.dataInChunk {
		r.detachData()
	}
	if room := r.dataLimit() + 1 - len(r.data); len(b) > room {
		b = b[:max(room, 0)]
		r.dataTrunc = true
	}
	r.data = append(r.data, b...)
}

// hasNUL reports whether v contains a NUL byte. An id value is usually a
// few bytes long: an inlined loop costs less than a call to
// bytes.IndexByte, most of all in Wasm.
func hasNUL(v []byte) bool {
	for _, c := range v {
		if c == 0 {
			return true
		}
	}
	return false
}

// appendShort appends a short s, such as a tag prefix, to out byte by
// byte when it fits: cheaper than a memmove call, most of all in Wasm.
func appendShort(out []byte, s string) []byte {
	n := len(out)
	if cap(out)-n < len(s) {
		return append(out, s...)
	}
	out = out[:n+len(s)]
	for i := 0; i < len(s); i++ {
		out[n+i] = s[i]
	}
	return out
}

// valueStart returns where the value of a field whose colon ends at p
// starts, in a line that ends at e: SSE drops one space after the colon.
func valueStart(chunk []byte, p, e int) int {
	if p < e && chunk[p] == ' ' {
		return p + 1
	}
	return p
}

// dataLine processes a data line whose value is chunk[lo:hi], whole in the
// current chunk. The first data line of an event stays a span of the chunk.
func (r *Rewriter) dataLine(lo, hi int) {
	if r.hasData {
		r.appendDataLine(lo, hi)
		return
	}
	r.dataInChunk, r.dataLo, r.dataHi, r.hasData = true, lo, hi, true
}

// appendDataLine appends chunk[lo:hi] and a '\n' to the data buffer.
func (r *Rewriter) appendDataLine(lo, hi int) {
	r.appendData(r.chunk[lo:hi])
	r.appendData(newline)
}

// detachData copies a data buffer that is a span of the current chunk into
// data, so that it outlives the call or can be appended to.
func (r *Rewriter) detachData() {
	if r.dataInChunk {
		r.dataInChunk = false
		r.data = r.data[:0]
		r.appendData(r.chunk[r.dataLo:r.dataHi])
		r.appendData(newline)
	}
}

// overflow gives up on the stream: chunk[fwd:at], what is held and
// chunk[at:] pass as they are (the held id line, if any, at the start of the
// line at at), and so does every later chunk.
func (r *Rewriter) overflow(out, chunk []byte, fwd, at int) []byte {
	out = append(out, chunk[fwd:at]...)
	line := r.hold[r.pend.n:]
	if r.pend.on {
		var next byte
		switch {
		case len(line) > 0:
			next = line[0]
		case at < len(chunk):
			next = chunk[at]
		}
		// Tagged prefix+id: the line that overflows is a later id line,
		// which overrides it, or an event type too long to be "message",
		// whose event is no JSON-RPC message.
		out = r.appendPend(out, cursor.KindOther, nil, next)
	}
	out = append(out, line...)
	out = append(out, chunk[at:]...)
	r.hold = r.hold[:0]
	r.pend = pendLine{}
	r.ph = phOverflow
	return out
}
