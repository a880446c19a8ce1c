package sse

// Finding line ends. "\n", "\r\n" and "\r" each end a line; a "\r\n" may be
// cut by a chunk boundary (afterCR carries the '\r' over), and a UTF-8 BOM
// may lead the stream. Lines whole in the chunk go by lines, one search for
// each line's end (nextEOL); a line the chunk's end cuts goes through the
// byte-wise phases of field.go.

// lines handles the lines that start at p, one after the other, while the
// rewriter stands at a line start: each line whole in the chunk at once, by
// its field (fieldOf): the usual field names by their own handler, an empty
// line by dispatching the event. It returns where it stopped: the chunk's
// end, or a line the chunk's end cuts, which the byte-wise phases take on.
func (r *Rewriter) lines(p int) int {
	chunk := r.chunk
	for p < len(chunk) && r.ph == phLineStart {
		c := chunk[p]
		if r.afterCR {
			r.afterCR = false
			if c == '\n' {
				p = r.crlf(p)
				continue
			}
			r.loneCR(p)
		}
		// The commonest lines are taken here without a call (Go's Wasm
		// calls are dear): a whole data line, the SDKs' "event: message",
		// an empty line.
		switch fieldOf(chunk[p:]) {
		case lineData:
			e := nextEOL(chunk, p+5, &r.crAt)
			if e < 0 {
				p = r.dataField(p)
				continue
			}
			if vs := valueStart(chunk, p+5, e); r.hasData {
				r.dataLine(vs, e)
			} else { // the first data line stays a span of the chunk
				r.dataInChunk, r.dataLo, r.dataHi, r.hasData = true, vs, e, true
			}
			p = r.endLine(chunk[e], e)
		case lineEvent:
			if e := p + 14; e < len(chunk) && chunk[e] == '\n' && string(chunk[p+6:e]) == " message" && r.max >= len("message") && !r.endpoint {
				r.evType.setSpan(p+7, e)
				p = r.endLine('\n', e)
				continue
			}
			p = r.eventField(p)
		case lineID:
			p = r.idField(p)
		case lineEmpty:
			if r.pend.on {
				r.flushTo(p)
				r.dispatchHeld()
			} else {
				r.dispatch()
			}
			r.afterCR = c == '\r'
			r.bomLine = false
			p++
		case lineMaybe:
			p = r.startName(p)
		default:
			p = r.otherLine(p)
		}
	}
	return p
}

// crlf steps over the '\n' at p that completes a "\r\n" line ending.
func (r *Rewriter) crlf(p int) int {
	if r.pend.cr {
		// The "\r\n" of the held id line.
		r.pend.cr = false
		r.pendLF()
		r.fwd = p + 1
	}
	return p + 1
}

// loneCR takes the news, at the line start p, that the line before ended
// with a '\r' no '\n' follows: a line end the Go SDK's reader does not
// know (it ends lines at '\n' only), so from here on the stream's id lines
// are tagged in place, never held (moved across such a line end, an id line
// would be glued to its neighbours for that reader). A held id line that
// this '\r' ends goes out at once, where it was, tagged prefix+id.
func (r *Rewriter) loneCR(p int) {
	r.sawLoneCR = true
	if r.pend.cr {
		r.pend.cr = false
		r.flushTo(p)
		r.flushPend()
		r.edited = true
	}
}

// holds reports whether a valid id line that ends now is held until its
// event dispatches (minting), rather than tagged in place: not on the
// stream's first line after a BOM, nor once the stream has ended a line
// with a lone '\r' (both not lines of their own to the Go SDK's reader).
func (r *Rewriter) holds() bool { return r.minting && !r.bomLine && !r.sawLoneCR }

// endLine steps over the line ending c at e and returns the next position.
func (r *Rewriter) endLine(c byte, e int) int {
	r.afterCR = c == '\r'
	r.bomLine = false
	r.ph = phLineStart
	return e + 1
}

// otherLine lets a line that is none of data, event and id (a comment,
// retry, an unknown field) pass untouched up to its end.
func (r *Rewriter) otherLine(p int) int {
	if r.chunk[p] == bom[0] && r.pend.on && !r.wrote && len(r.out) == r.start && r.fwd == p {
		// The held id line is the stream's first: if it moved, a BOM here
		// would lead the stream and be skipped. It goes out first, tagged.
		r.flushPend()
		r.edited = true
	}
	e := nextEOL(r.chunk, p+1, &r.crAt)
	if e < 0 {
		r.ph = phSkip
		return len(r.chunk)
	}
	return r.endLine(r.chunk[e], e)
}

// skipLine passes the rest of a line untouched (phSkip).
func (r *Rewriter) skipLine(p int) int {
	e := nextEOL(r.chunk, p, &r.crAt)
	if e < 0 {
		return len(r.chunk)
	}
	return r.endLine(r.chunk[e], e)
}

// bomByte matches the byte at p against a UTF-8 BOM at the start of the
// stream (phBOM): a whole one is skipped by SSE (and forwarded), a part of
// one starts a line that is no field.
func (r *Rewriter) bomByte(p int) int {
	if r.chunk[p] == bom[r.nameN] {
		r.nameN++
		if int(r.nameN) == len(bom) {
			r.ph = phLineStart
			r.bomLine = true
		}
		return p + 1
	}
	if r.nameN == 0 {
		r.ph = phLineStart
	} else {
		r.ph = phSkip
	}
	return p
}
