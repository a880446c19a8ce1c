package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// The common event in one step: one of the response path's speed tricks (its
// figure is in docs/performance.md#the-tricks-that-stay). Taken line by line,
// an event costs a dozen calls through scan and the event step, and Go's
// Wasm calls are dear; most events of an MCP stream have one shape, which
// commonEvent takes in one call with the very bytes, events and state the
// line-by-line step gives (FuzzCommonEvent compares the two).

// tryCommon reports whether commonEvent may take the line that starts next
// (scan asks it at a line start): minting, at an event's start with nothing
// held or built, in a stream whose id lines are held (holds).
func (r *Rewriter) tryCommon() bool {
	return r.minting && !r.lineByLine && !r.bomLine && !r.sawLoneCR &&
		len(r.pend) == 0 && len(r.line) == 0 && len(r.id) == 0 && len(r.evType) == 0 &&
		len(r.arena) == r.dataAt && !r.dataCut
}

// commonEvent takes, at p, an event whose lines lie whole in the chunk, each
// ended by "\n" or "\r\n": one id line with a valid value of at most max
// bytes, at most one event line (of at most max bytes, not "endpoint") and
// one data line, in any order, then the empty line that dispatches it. It
// writes the id line minted just before that empty line, reports the event,
// and returns where the empty line starts; ok is false, and nothing changed,
// for any other shape (a lone '\r' among them, or one the chunk's end cuts
// from its '\n').
func (r *Rewriter) commonEvent(p int) (next int, ok bool) {
	var idLine, id, evType, data []byte
	hasType, hasData := false, false
	idAt, idEnd, q := 0, 0, p
	for {
		i := indexEOL(r.chunk[q:])
		if i < 0 {
			return p, false
		}
		line, eol := r.chunk[q:q+i], 1
		if r.chunk[q+i] == '\r' {
			if q+i+1 == len(r.chunk) || r.chunk[q+i+1] != '\n' {
				return p, false
			}
			eol = 2
		}
		switch {
		case len(line) == 0:
			if len(id) == 0 {
				return p, false
			}
			r.writeCommon(q, idAt, idEnd, idLine, id, evType, data)
			return q, true
		case len(id) == 0 && len(line) >= 3 && line[0] == 'i' && line[1] == 'd' && line[2] == ':':
			idLine, idAt, idEnd, id = r.chunk[q:q+i+eol], q, i, line[idValueAt(line):]
			if blank, nul := idValueIs(id); blank || nul || len(id) > r.max {
				return p, false
			}
		case !hasType && len(line) >= 6 && string(line[:6]) == "event:":
			evType, hasType = valueOf(line[6:]), true
			if len(evType) > r.max || string(evType) == "endpoint" {
				return p, false
			}
		case !hasData && len(line) >= 5 && string(line[:5]) == "data:":
			data, hasData = valueOf(line[5:]), true
		default:
			return p, false
		}
		q += i + eol
	}
}

// valueOf returns a field's value without the one space SSE drops.
func valueOf(v []byte) []byte {
	if len(v) > 0 && v[0] == ' ' {
		return v[1:]
	}
	return v
}

// capped returns b capped at its length, or nil when it is empty.
func capped(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b[:len(b):len(b)]
}

// writeCommon writes and reports the event commonEvent read, whose empty
// line starts at q: the id line idLine (at idAt, with the value id, its line
// ending from idEnd on) moves before the empty line, minted.
func (r *Rewriter) writeCommon(q, idAt, idEnd int, idLine, id, evType, data []byte) {
	r.flushTo(idAt)
	r.out = append(r.out, r.chunk[idAt+len(idLine):q]...)
	cut := len(data) > DataPrefixBytes
	data = data[:min(len(data), DataPrefixBytes)]
	kind := r.mintKind(evType, data, cut)
	r.out = append(r.out, idLine[:idEnd-len(id)]...)
	r.out = append(cursor.AppendMinted(r.out, r.t, id, r.prev, kind), idLine[idEnd]) // '\n' or '\r'
	if idEnd+2 == len(idLine) {
		r.out = append(r.out, '\n') // of "\r\n"
	}
	r.fwd = q
	r.tagged++
	r.edited = true
	// The event's fields are views of the chunk, which stays as it is
	// until the next call (Event).
	ev := r.nextEvent()
	ev.ID, ev.HasID, ev.Type = capped(id), true, capped(evType)
	ev.Data, ev.Truncated = capped(data), cut
	r.prev = append(r.prev[:0], id...)
}
