package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// Stage 2, the event step for id lines: tag, hold, mint. A line that is (or
// may be) an id field is held from its first byte (line) until its end,
// which tells whether its value is empty (it resets the ID) or holds NUL
// (it is ignored): then it passes as it came. A valid one is tagged in place,
// or, minting, held (pend) until the empty line that dispatches its event,
// and written just before it, its value minted (dispatch, writePend); an id
// line overridden by a later one goes out tagged prefix+id where that later
// line starts.

// startName holds, from its first byte, a line whose name the chunk's end
// cut while it may be an id field.
func (r *Rewriter) startName(p, end int) {
	if r.head[0] == 'i' {
		r.holdTo(p, end)
	}
}

// holdTo adds chunk[p:q] to the held current line; bytes before p pass.
func (r *Rewriter) holdTo(p, q int) {
	r.flushTo(p)
	r.line = append(r.line, r.chunk[p:q]...)
	r.fwd = q
	r.edited = true
}

// releaseLine lets the held current line pass as it came.
func (r *Rewriter) releaseLine() {
	r.out = append(r.out, r.line...)
	r.line = r.line[:0]
}

// idBytes holds chunk[p:end], bytes of the current id line; a value longer
// than max overflows the stream.
func (r *Rewriter) idBytes(p, end int) {
	r.holdTo(p, end)
	if len(r.line)-idValueAt(r.line) > r.max {
		r.overflowAt(end)
	}
}

// idValueAt returns where the value of an id line starts: after "id:" and
// the one space SSE drops (the end of "id", a name alone).
func idValueAt(line []byte) int {
	if len(line) > 3 && line[3] == ' ' {
		return 4
	}
	return min(len(line), 3)
}

// idLine takes a whole id line, line, which ends at e: its bytes are not
// in the output yet and the chunk passes from e on. An empty value resets
// the event's ID, one with NUL is ignored (both pass as they came), a valid
// one is held until its event dispatches (minting) or tagged in place.
func (r *Rewriter) idLine(line []byte, e int) {
	v := line[idValueAt(line):]
	switch blank, nul := idValueIs(v); {
	case blank:
		// "id", "id:", "id: " reset the last event ID; so, on the wire, does
		// an ID of white space: the Go SDK's reader trims it to nothing,
		// and a WHATWG client's Last-Event-ID header loses it as optional
		// white space. Tagged, it would become a cursor ("http:") where
		// there was none.
		r.writePend(cursor.KindOther, nil)
		r.out = append(r.out, line...)
		r.id = r.id[:0]
	case nul: // SSE ignores the field
		r.out = append(r.out, line...)
	default:
		r.writePend(cursor.KindOther, nil) // overridden by this one, where this one starts
		r.id = append(r.id[:0], v...)
		if r.holds() {
			r.pend = append(append(r.pend[:0], line...), r.chunk[e])
			r.fwd = e + 1
			return
		}
		r.out = append(r.out, line[:len(line)-len(v)]...)
		r.out = r.appendTagged(r.out, v)
	}
}

// idValueIs reports whether an id value is blank (empty or only spaces
// and tabs) and whether it holds a NUL byte (an id field SSE ignores), in
// one pass.
func idValueIs(v []byte) (blank, nul bool) {
	blank = true
	for _, c := range v {
		switch c {
		case ' ', '\t':
		case 0:
			return false, true
		default:
			blank = false
		}
	}
	return blank, false
}

// holds reports whether a valid id line that ends now is held until its
// event dispatches (minting), rather than tagged in place: not on the
// stream's first line after a BOM, nor once the stream has ended a line
// with a lone '\r' (both not lines of their own to the Go SDK's reader).
func (r *Rewriter) holds() bool { return r.minting && !r.bomLine && !r.sawLoneCR }

// appendTagged appends an id value v tagged in place: prefix+v, or for a v
// that starts with '~' its escaped form (cursor.AppendMinted of kind
// KindOther), so that no plain cursor reads as minted, whether the guard
// mints or not. On TransportNone v is appended as it is.
func (r *Rewriter) appendTagged(out, v []byte) []byte {
	if r.prefix == "" {
		return append(out, v...)
	}
	r.tagged++
	r.edited = true
	return cursor.AppendMinted(out, r.t, v, nil, cursor.KindOther)
}

// writePend appends the held id line, if any, to the output and forgets it:
// its value becomes cursor.AppendMinted of kind k and previous ID prev (for
// anything but a response, prefix+id), its line ending stays as it came.
func (r *Rewriter) writePend(k cursor.EventKind, prev []byte) {
	if len(r.pend) == 0 {
		return
	}
	at, end := idValueAt(r.pend), r.pendEOL()
	r.out = append(r.out, r.pend[:at]...)
	r.out = cursor.AppendMinted(r.out, r.t, r.pend[at:end], prev, k)
	r.out = append(r.out, r.pend[end:]...)
	r.pend = r.pend[:0]
	r.tagged++
	r.edited = true
}

// pendEOL returns where the line ending of the held id line starts: its
// last bytes, "\n", "\r" or "\r\n".
func (r *Rewriter) pendEOL() int {
	end := len(r.pend) - 1
	if end > 0 && r.pend[end] == '\n' && r.pend[end-1] == '\r' {
		end--
	}
	return end
}

// pendCRLF takes the '\n' at p that completes a "\r\n": when the held id
// line ended with that '\r', the '\n' joins it.
func (r *Rewriter) pendCRLF(p int) {
	if len(r.pend) > 0 && r.pend[len(r.pend)-1] == '\r' {
		r.pend = append(r.pend, '\n')
		r.fwd = p + 1
	}
}

// pendLoneCR takes the news, at the line start p, that the line before
// ended with a '\r' no '\n' follows: a line end the Go SDK's reader does
// not know (it ends lines at '\n' only; id lines are no longer held, see
// holds). A held id line that this '\r' ends goes out at once, where it
// was, tagged prefix+id: moved, it would be glued to its neighbours for
// that reader.
func (r *Rewriter) pendLoneCR(p int) {
	if len(r.pend) > 0 && r.pend[len(r.pend)-1] == '\r' {
		r.flushTo(p)
		r.writePend(cursor.KindOther, nil)
	}
}

// firstLineBeforeBOM writes out the held id line when it is the stream's
// first line and the line that starts at p begins with a BOM's first byte:
// moved after that line, it would let a BOM lead the stream, which a
// client skips.
func (r *Rewriter) firstLineBeforeBOM(p int) {
	if r.chunk[p] == bom[0] && len(r.pend) > 0 && !r.wrote && len(r.out) == r.start && r.fwd == p {
		r.writePend(cursor.KindOther, nil)
	}
}

// An overflow: a value longer than maxLineBytes stops the rewriting; what is
// held goes out as it may, and every later byte passes untouched.

// overflowAt gives up on the stream at p (see giveUp): the chunk's bytes
// up to p pass, then what is held, then the rest of the chunk. It returns
// the chunk's end.
func (r *Rewriter) overflowAt(p int) int {
	r.flushTo(p)
	r.giveUp()
	r.out = append(r.out, r.chunk[p:]...)
	r.fwd = len(r.chunk)
	return len(r.chunk)
}

// giveUp stops rewriting the stream: the held id line goes out tagged
// prefix+id (the line that overflows is a later id, which overrides it, or
// an event type too long to be "message", whose event is no JSON-RPC
// message), the held current line as it came, and every later byte passes
// untouched.
func (r *Rewriter) giveUp() {
	r.writePend(cursor.KindOther, nil)
	r.releaseLine()
	r.overflowed = true
}
