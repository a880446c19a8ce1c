package sse

// Recognising the field of a line. A line whole in the chunk is known by its
// first bytes (fieldOf); a line the chunk's end cuts is matched byte by byte
// against the field names (nameByte), its value read as it comes
// (valueStartByte, valueRun), and handed to the event at its end
// (endValue).

// lineKind is what the first bytes of a line say it is.
type lineKind uint8

const (
	lineOther lineKind = iota // a comment, retry, an unknown field
	lineData                  // "data:"
	lineEvent                 // "event:"
	lineID                    // "id:"
	lineEmpty                 // an empty line: it dispatches the event
	// lineMaybe: starts with 'd', 'e' or 'i' but is too short (or has no
	// colon where the names end) to tell; nameByte decides.
	lineMaybe
)

// fieldOf tells a line by its first bytes; rest starts at the line's first
// byte and is not empty. Field names are compared as bytes: the usual
// "data:", "event:" and "id:" take one comparison each.
func fieldOf(rest []byte) lineKind {
	switch rest[0] {
	case 'd':
		if len(rest) >= 5 && string(rest[:5]) == "data:" {
			return lineData
		}
		return lineMaybe
	case 'e':
		if len(rest) >= 6 && string(rest[:6]) == "event:" {
			return lineEvent
		}
		return lineMaybe
	case 'i':
		if len(rest) >= 3 && string(rest[:3]) == "id:" {
			return lineID
		}
		return lineMaybe
	case '\n', '\r':
		return lineEmpty
	}
	return lineOther
}

// startName starts matching, byte by byte, a line that begins with the
// first byte of a field name but does not show the whole name and its
// colon (phName). A line that may be an id field is held from its first
// byte.
func (r *Rewriter) startName(p int) int {
	switch r.chunk[p] {
	case 'i':
		r.flushTo(p)
		r.holdLine("i")
		r.edited = true
		r.field = fieldID
		r.fwd = p + 1
	case 'd':
		r.field = fieldData
	default:
		r.field = fieldEvent
	}
	r.nameN, r.ph = 1, phName
	return p + 1
}

// nameByte matches the byte at p against the field name being read
// (phName).
func (r *Rewriter) nameByte(p int) int {
	c := r.chunk[p]
	name := fieldNames[r.field]
	n := int(r.nameN)
	switch {
	case n < len(name) && c == name[n]:
		r.nameN++
	case n == len(name) && c == ':':
		r.ph = phValueStart
	case n == len(name) && (c == '\n' || c == '\r'):
		// A field name alone: the value is empty. valueRun ends the line
		// at this same byte.
		r.startValue()
		r.ph = phValue
		return p
	default:
		// Another field: release what was held and let the line pass; c
		// is looked at again by skipLine.
		if r.field == fieldID {
			r.releaseLine()
		}
		r.ph = phSkip
		return p
	}
	if r.field == fieldID {
		r.hold = append(r.hold, c)
		r.fwd = p + 1
	}
	if r.ph == phValueStart {
		r.startValue()
	}
	return p + 1
}

// valueStartByte drops the one space SSE drops after the colon
// (phValueStart).
func (r *Rewriter) valueStartByte(p int) int {
	r.ph = phValue
	if r.chunk[p] != ' ' {
		return p
	}
	if r.field == fieldID {
		r.hold = append(r.hold, ' ')
		r.idValue++
		r.fwd = p + 1
	}
	return p + 1
}

// valueRun reads the value of the current field from p up to its line's
// end or the chunk's (phValue): data into the data buffer, an event type and
// an id value into their bounded buffers (past the bound the stream
// overflows).
func (r *Rewriter) valueRun(p int) int {
	chunk := r.chunk
	e := nextEOL(chunk, p, &r.crAt)
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
				return r.overflowAt(r.fwd)
			}
			r.field = fieldLong
			break
		}
		r.evType.buf = append(r.evType.buf, seg...)
	case fieldID:
		if len(r.hold)-r.idValue+len(seg) > r.max {
			return r.overflowAt(r.fwd)
		}
		r.hold = append(r.hold, seg...)
		r.fwd = end
	}
	if e < 0 {
		return end
	}
	if r.endValue(chunk[e]) {
		r.fwd = e + 1
	}
	p = r.endLine(chunk[e], e)
	if r.field == fieldLong {
		r.ph = phOverflowNext
	}
	return p
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

// endValue processes the complete value of a data, event or id field read
// byte by byte, at the end of its line, eol being the byte that ends it. It
// reports whether an id line is now held until its event dispatches (eol
// included).
func (r *Rewriter) endValue(eol byte) (held bool) {
	switch r.field {
	case fieldData:
		r.hasData = true
		r.appendData(newline)
	case fieldEvent:
		r.setEndpoint(string(r.evType.buf) == "endpoint")
	case fieldID:
		return r.endIDValue(eol)
	}
	return false
}

// valueStart returns where the value of a field whose colon ends at p
// starts, in a line that ends at e: SSE drops one space after the colon.
func valueStart(chunk []byte, p, e int) int {
	if p < e && chunk[p] == ' ' {
		return p + 1
	}
	return p
}
