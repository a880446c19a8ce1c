package sse

// Stage 1, scan: chunk → lines. "\n", "\r\n" and "\r" each end a line; a
// "\r\n" may be cut by a chunk boundary (afterCR carries the '\r' over), a
// UTF-8 BOM may lead the stream (bom), and a line may be cut anywhere: its
// first bytes wait in head until they tell its field (fieldOf), and the
// scanner remembers which field it is inside (in). Each line goes to the
// event step (event.go) by its field: a line whole in the chunk at once
// (wholeLine), a cut one piece by piece (startField, fieldBytes, endField).

// scan runs the chunk through the line scanner, up to its end or until the
// stream overflows.
func (r *Rewriter) scan() {
	for p := 0; p < len(r.chunk) && !r.overflowed; {
		switch {
		case r.bom >= 0:
			p = r.scanBOM(p)
		case r.in != atLineStart:
			p = r.linePiece(p, r.nextEOL(p))
		case r.afterCR:
			p = r.afterCRByte(p)
		case r.overflowNext:
			p = r.overflowAt(p)
		default:
			// An event of the SDKs' usual shape goes in one step
			// (fastpath.go); else an empty line dispatches the event, any
			// other line whole in the chunk goes at once, by its field,
			// and one the chunk's end cuts, piece by piece.
			if r.tryCommon() {
				if q, ok := r.commonEvent(p); ok {
					p = r.endLine(q)
					continue
				}
			}
			if c := r.chunk[p]; c == '\n' || c == '\r' {
				r.dispatch(p)
				p = r.endLine(p)
				continue
			}
			if e := r.nextEOL(p); e >= 0 {
				f, v, _ := fieldOf(r.chunk[p:e], true)
				r.wholeLine(f, p, v, e)
				p = r.endLine(e)
			} else {
				r.firstLineBeforeBOM(p)
				r.in, r.headN = inName, 0
				p = r.linePiece(p, e)
			}
		}
	}
}

// endLine steps over the line ending at e and returns the next line's
// start.
func (r *Rewriter) endLine(e int) int {
	r.afterCR = r.chunk[e] == '\r'
	r.bomLine = false
	r.in = atLineStart
	return e + 1
}

// scanBOM matches the byte at p against a UTF-8 BOM at the start of the
// stream: a whole one is skipped by SSE (and forwarded), a part of one
// starts a line that is no field.
func (r *Rewriter) scanBOM(p int) int {
	if r.chunk[p] == bom[r.bom] {
		if r.bom++; r.bom == len(bom) {
			r.bom, r.bomLine = -1, true
		}
		return p + 1
	}
	if r.bom > 0 {
		r.in = inOther
	}
	r.bom = -1
	return p
}

// afterCRByte takes the byte at p, at the start of a line after one that
// ended with '\r': a '\n' completes that "\r\n"; anything else makes the
// '\r' a lone line end.
func (r *Rewriter) afterCRByte(p int) int {
	r.afterCR = false
	if r.chunk[p] == '\n' {
		r.pendCRLF(p)
		return p + 1
	}
	r.sawLoneCR = true
	r.pendLoneCR(p)
	return p
}

// linePiece reads the current line, which a chunk's end cuts, from p up to
// its end e (-1: the chunk's end): its field first (readName), then its
// value, handed to the event step piece by piece.
func (r *Rewriter) linePiece(p, e int) int {
	end := e
	if e < 0 {
		end = len(r.chunk)
	}
	if r.in == inName {
		if p = r.readName(p, end, e >= 0); r.in == inName {
			return end // the chunk ends inside the field's name
		}
	}
	r.fieldBytes(p, end)
	if e < 0 || r.overflowed {
		return end
	}
	r.endField(e)
	return r.endLine(e)
}

// readName adds the line's first bytes from p (up to end, where the line
// ends if ended) to head until fieldOf tells the line's field, then starts
// that field (startField) and returns where its value starts. While the
// name is cut by the chunk's end, it returns end.
func (r *Rewriter) readName(p, end int, ended bool) int {
	n := min(end-p, len(r.head)-r.headN)
	head := r.chunk[p : p+n]
	if r.headN > 0 {
		head = append(r.head[:r.headN], head...)
	}
	f, value, known := fieldOf(head, ended && n == end-p)
	if !known {
		r.headN = copy(r.head[:], head)
		r.startName(p, end)
		return end
	}
	q := p + max(value-r.headN, 0) // a name cut earlier holds no value byte
	r.headN = 0
	r.startField(f, p, q)
	return q
}

// fieldOf tells a line's field from its first bytes, head (the whole line
// when ended): the field, the offset of its value (after the colon; the
// end of the line for a name alone), and whether head shows enough to
// tell. Field names are compared as bytes, by their first letter first.
func fieldOf(head []byte, ended bool) (f lineState, value int, known bool) {
	if len(head) == 0 {
		return inEmpty, 0, ended
	}
	var name string
	switch head[0] {
	case 'd':
		f, name = inData, "data"
	case 'e':
		f, name = inEvent, "event"
	case 'i':
		f, name = inID, "id"
	default:
		return inOther, 0, true
	}
	n := min(len(head), len(name))
	switch {
	case string(head[:n]) != name[:n]:
		return inOther, 0, true
	case len(head) > n && head[n] == ':':
		return f, n + 1, true
	case len(head) > n || n < len(name):
		return inOther, 0, ended || len(head) > n
	case ended: // the name alone: an empty value
		return f, n, true
	}
	return inOther, 0, false
}

// nextEOL returns the index of the first '\n' or '\r' in the chunk at or
// after p (0 <= p <= len(chunk)), or -1 (indexEOL, eol.go).
func (r *Rewriter) nextEOL(p int) int {
	if i := indexEOL(r.chunk[p:]); i >= 0 {
		return p + i
	}
	return -1
}
