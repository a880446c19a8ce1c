package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// The two ways a stream stops being rewritten: its end, inside an event
// (endOfStream), and an overflow (a value longer than maxLineBytes), after
// which everything passes untouched.

// endOfStream writes out what is held when the stream ends inside an event.
func (r *Rewriter) endOfStream() {
	if r.ph == phOverflowNext || r.field == fieldLong && r.ph == phValue {
		r.eosLineStart()
		r.overflow(nil, 0)
		return
	}
	r.flushHeld()
	r.ph = phSkip
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
func (r *Rewriter) flushHeld() {
	line := r.hold[r.pend.n:]
	k := cursor.KindOther
	if r.minting {
		k = r.eosKind()
	}
	v, idField := r.eosIDValue()
	ignored := hasNUL(v) // WHATWG ignores the field; the Go SDK reads no NUL ID back either
	isID := idField && len(v) > 0 && !ignored
	if r.pend.on {
		switch {
		case len(line) > 0 && idField && !ignored:
			// A valid or empty id value in the current line overrides the
			// held one, which goes out before it, at a line start.
			r.appendPend(cursor.KindOther, nil)
		case len(line) > 0:
			r.appendPend(k, r.prev)
		default:
			r.eosLineStart()
			r.appendPend(k, r.prev)
		}
	}
	if isID {
		r.out = append(r.out, line[:r.idValue-r.pend.n]...)
		if r.minting {
			r.tagged++
			r.out = cursor.AppendMinted(r.out, r.t, v, r.prev, k)
		} else {
			r.appendInPlace(v)
		}
	} else {
		r.out = append(r.out, line...)
	}
	r.hold = r.hold[:0]
	r.pend = pendLine{}
}

// eosIDValue returns the value of the current line at the end of the
// stream and whether that line is an id field (its name and colon seen).
func (r *Rewriter) eosIDValue() ([]byte, bool) {
	if r.field != fieldID || r.ph != phValueStart && r.ph != phValue {
		return nil, false
	}
	return r.hold[r.idValue:], true
}

// eosKind is the kind (Classify) a minted cursor needs of the event the stream leaves
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
	return Classify(r.evType.buf, data, truncated)
}

// eosLineStart ends, at the end of the stream, what the output ends with so
// that the held id line that follows starts a line for every reader: a line
// partly written out gets the id line's own line ending ("\r\n" for a lone
// '\r', which the Go SDK's reader does not take as one), and a line that
// ended with a lone '\r' (other than the held line itself) a '\n'.
func (r *Rewriter) eosLineStart() {
	switch r.ph {
	case phName, phValueStart, phValue, phSkip:
		eol := r.pendBytes()[r.pend.end:]
		if len(eol) == 1 && eol[0] == '\r' {
			r.out = append(r.out, '\r', '\n')
			return
		}
		r.out = append(r.out, eol...)
		return
	}
	if r.afterCR && !r.pend.cr {
		r.out = append(r.out, '\n')
	}
}

// overflowNext overflows the stream at the start of the line after an
// event type too long (phOverflowNext), once a '\n' completing its "\r\n"
// is passed.
func (r *Rewriter) overflowNext(p int) int {
	if r.afterCR {
		r.afterCR = false
		if r.chunk[p] == '\n' {
			return p + 1
		}
	}
	return r.overflowAt(p)
}

// overflowAt gives up on the stream at the line that starts at at (see
// overflow) and returns the chunk's end.
func (r *Rewriter) overflowAt(at int) int {
	r.overflow(r.chunk, at)
	r.fwd = len(r.chunk)
	return len(r.chunk)
}

// overflow gives up on the stream: chunk[fwd:at], what is held and
// chunk[at:] pass as they are (the held id line, if any, tagged at the
// start of the line at at), and so does every later chunk.
func (r *Rewriter) overflow(chunk []byte, at int) {
	if chunk != nil {
		r.flushTo(at)
	}
	line := r.hold[r.pend.n:]
	if r.pend.on {
		// Tagged prefix+id: the line that overflows is a later id line,
		// which overrides it, or an event type too long to be "message",
		// whose event is no JSON-RPC message.
		r.appendPend(cursor.KindOther, nil)
	}
	r.out = append(r.out, line...)
	r.out = append(r.out, chunk[at:]...)
	r.hold = r.hold[:0]
	r.pend = pendLine{}
	r.ph = phOverflow
}
