package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// Holding and writing id lines. Without minting, an id value is tagged in
// place; a line that may be an id field is held only until its end, which
// tells whether its value is empty or holds NUL (then it passes as it came).
// With minting, the event's last valid id line is held (pend) until the
// empty line that dispatches the event, and written just before it with its
// value minted (dispatchHeld); an id line overridden by a later one goes out
// tagged prefix+id where that later line starts.

// idField handles a line that starts "id:" at p. Whole in the chunk, it is
// tagged in place, held (minting), or, empty, resets the ID; else it is held
// from its first byte and read on by valueRun.
func (r *Rewriter) idField(p int) int {
	chunk := r.chunk
	e := nextEOL(chunk, p+3, &r.crAt)
	if e < 0 {
		r.flushTo(p)
		r.holdLine("id:")
		r.edited = true
		r.field, r.ph = fieldID, phValueStart
		r.startValue()
		r.fwd = p + 3
		return p + 3
	}
	vs := valueStart(chunk, p+3, e)
	switch v := chunk[vs:e]; {
	case len(v) > r.max:
		return r.overflowAt(p)
	case len(v) == 0: // resets the last event ID
		if r.pend.on {
			r.flushTo(p)
			r.flushPend()
			r.edited = true
		}
		r.id.clear()
		r.hasID = false
	case hasNUL(v): // SSE ignores the field
	default:
		r.wholeID(p, vs, e)
	}
	return r.endLine(chunk[e], e)
}

// wholeID takes the valid id line chunk[p:e+1] whose value starts at vs:
// minting, it is held as a span of the chunk; else its value is tagged in
// place.
func (r *Rewriter) wholeID(p, vs, e int) {
	chunk := r.chunk
	v := chunk[vs:e]
	if r.pend.on {
		// Overridden by this one, it goes out where this one starts.
		r.flushTo(p)
		r.flushPend()
		r.edited = true
	}
	switch {
	case r.holds():
		r.flushTo(p)
		r.fwd = e + 1
		r.pend = pendLine{on: true, inChunk: true, lo: p, hi: e + 1, val: vs - p, end: e - p, cr: chunk[e] == '\r'}
		r.edited = true
	case r.prefix == "":
	case v[0] == '~':
		// Escaped, so that it cannot read as minted.
		r.flushTo(vs)
		r.out = cursor.AppendMinted(r.out, r.t, v, nil, cursor.KindOther)
		r.fwd = e
		r.edited = true
		r.tagged++
	default:
		r.flushTo(vs)
		r.out = appendShort(r.out, r.prefix)
		r.edited = true
		r.tagged++
	}
	r.id.setSpan(vs, e)
	r.hasID = true
}

// endIDValue ends an id line read byte by byte (held whole in hold after any
// pending line), eol being the byte that ends it: an empty value resets the
// ID, one with NUL passes as it came, a valid one is held (minting) or goes
// out tagged in place. It reports whether the line is now held.
func (r *Rewriter) endIDValue(eol byte) (held bool) {
	line := r.hold[r.pend.n:]
	v := r.hold[r.idValue:]
	switch {
	case len(v) == 0: // "id", "id:", "id: " reset the last event ID
		if r.pend.on {
			r.appendPend(cursor.KindOther, nil)
		}
		r.out = append(r.out, line...)
		r.hold = r.hold[:0]
		r.pend = pendLine{}
		r.id.clear()
		r.hasID = false
	case hasNUL(v): // SSE ignores the field
		r.out = append(r.out, line...)
		r.hold = r.hold[:r.pend.n]
	case r.pend.on: // overridden by this one, at its place
		r.appendPend(cursor.KindOther, nil)
		r.dropPend()
		return r.endIDValue(eol)
	case r.holds():
		r.id.clear()
		r.id.buf = append(r.id.buf, r.hold[r.idValue:]...)
		r.hasID = true
		r.hold = append(r.hold, eol)
		r.pend = pendLine{on: true, n: len(r.hold), val: r.idValue, end: len(r.hold) - 1, cr: eol == '\r'}
		return true
	default:
		r.out = append(r.out, r.hold[:r.idValue]...)
		r.appendInPlace(v)
		r.id.clear()
		r.id.buf = append(r.id.buf, v...)
		r.hasID = true
		r.hold = r.hold[:0]
	}
	return false
}

// appendInPlace appends the tag of an id value v tagged in place, and v:
// prefix+v, or for a v that starts with '~' its escaped form
// (cursor.AppendMinted of kind KindOther), so that no plain cursor reads as
// minted, whether the guard mints or not. On TransportNone v is appended as
// it is.
func (r *Rewriter) appendInPlace(v []byte) {
	if r.prefix == "" {
		r.out = append(r.out, v...)
		return
	}
	r.tagged++
	r.out = cursor.AppendMinted(r.out, r.t, v, nil, cursor.KindOther)
}

// holdLine starts holding the current line, whose first bytes are s.
func (r *Rewriter) holdLine(s string) {
	r.detachPend()
	r.hold = append(r.hold[:r.pend.n], s...)
}

// releaseLine lets the held current line pass: it is not an id field.
func (r *Rewriter) releaseLine() {
	r.out = append(r.out, r.hold[r.pend.n:]...)
	r.hold = r.hold[:r.pend.n]
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

// appendPend appends the held id line to the output with its value tagged:
// cursor.AppendMinted with kind k and previous ID prev, its line ending as
// it came. (A held line never ends with a lone '\r' that a '\n' could join
// where it goes: a '\r' no '\n' follows writes it out at once, loneCR.)
func (r *Rewriter) appendPend(k cursor.EventKind, prev []byte) {
	line := r.pendBytes()
	id := line[r.pend.val:r.pend.end]
	r.tagged++
	r.out = append(r.out, line[:r.pend.val]...)
	if !cursor.NeedsMint(id, k) {
		// prefix+id and the line ending as they are: most events.
		r.out = appendShort(r.out, r.prefix)
		r.out = append(r.out, line[r.pend.val:]...)
		return
	}
	r.out = cursor.AppendMinted(r.out, r.t, id, prev, k)
	r.out = append(r.out, line[r.pend.end:]...)
}

// flushPend appends the held id line tagged prefix+id and forgets it; the
// current line is not held.
func (r *Rewriter) flushPend() {
	r.appendPend(cursor.KindOther, nil)
	r.dropPend()
}

// dispatchHeld dispatches the event at an empty line, appending its held id
// line, minted, to the output.
func (r *Rewriter) dispatchHeld() {
	k := r.dispatch()
	line := r.pendBytes()
	r.appendPend(k, r.prev)
	r.prev = append(r.prev[:0], line[r.pend.val:r.pend.end]...)
	r.dropPend()
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
