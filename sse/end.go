package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// The end of a stream inside an event (endOfStream): what is held goes out
// last. (The other way a stream stops being rewritten, an overflow, is in
// idline.go, with the held bytes it lets go.)

// endOfStream writes out what is held when the stream ends inside an event.
func (r *Rewriter) endOfStream() {
	if r.overflowNext || r.in == inLong {
		r.eosLineStart()
		r.giveUp()
		return
	}
	r.flushHeld()
	r.in = inOther
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
	k := cursor.KindOther
	if r.minting {
		data, cut := r.eventData()
		k = r.mintKind(r.evType, data, cut) // a last data line counts, terminated or not
	}
	at := idValueAt(r.line)
	v := r.line[at:]
	idField := at >= 3 && string(r.line[:3]) == "id:" // its name and colon seen
	blank, nul := idValueIs(v)
	valid := idField && !blank && !nul
	switch {
	case len(r.line) > 0 && idField && !nul:
		// A valid or empty id value in the current line overrides the
		// held one, which goes out before it, at a line start.
		r.writePend(cursor.KindOther, nil)
	case len(r.line) > 0:
		r.writePend(k, r.prev)
	case len(r.pend) > 0:
		r.eosLineStart()
		r.writePend(k, r.prev)
	}
	switch {
	case valid && r.minting:
		r.out = append(r.out, r.line[:at]...)
		r.out = cursor.AppendMinted(r.out, r.t, v, r.prev, k)
		r.tagged++
	case valid:
		r.out = append(r.out, r.line[:at]...)
		r.out = r.appendTagged(r.out, v)
	default:
		r.out = append(r.out, r.line...)
	}
	r.line = r.line[:0]
}

// eosLineStart ends, at the end of the stream, what the output ends with so
// that the held id line that follows starts a line for every reader: a line
// partly written out gets the id line's own line ending ("\r\n" for a lone
// '\r', which the Go SDK's reader does not take as one), and a line that
// ended with a lone '\r' (other than the held line itself) a '\n'.
func (r *Rewriter) eosLineStart() {
	switch {
	case len(r.pend) == 0:
		return
	case r.in != atLineStart:
		if eol := r.pend[r.pendEOL():]; string(eol) != "\r" {
			r.out = append(r.out, eol...)
		} else {
			r.out = append(r.out, '\r', '\n')
		}
	case r.afterCR && r.pend[len(r.pend)-1] != '\r':
		r.out = append(r.out, '\n')
	}
}
