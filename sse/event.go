package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// DataPrefixBytes is how much of an event's data the rewriter keeps for
// classification. A JSON-RPC message names its kind ("method", "result",
// "error", "id") in its first few top-level keys, which MCP SDKs write
// before the large "params" or "result" values; data beyond this prefix is
// forwarded but never buffered.
const DataPrefixBytes = 512

// Event is an SSE event the rewriter dispatched: one that carried an id
// field, a data field, or both. Its byte slices are only valid until the
// next Rewrite call, and only while the chunk given to the call that
// dispatched it is left unchanged: a value that lies whole in that chunk is
// reported as a span of it, not copied. Each slice is capped at its length,
// so appending to it never writes into the chunk or into another event.
type Event struct {
	// ID is the upstream's original (untagged) id value, when HasID.
	ID []byte
	// HasID reports that the event carried a non-empty id field (the last
	// id field wins, as in SSE; one with an empty value resets it, one
	// containing NUL is ignored).
	HasID bool
	// Type is the value of the event field; empty means "message".
	Type []byte
	// Data is the event's data, its lines joined with '\n' as SSE joins
	// them, cut to DataPrefixBytes. For an event of type "endpoint" (the
	// legacy transport's announcement of the session's message URL), the
	// data lines that follow its event field are kept up to the Rewriter's
	// maxLineBytes (at least DataPrefixBytes), so that a session ID of that
	// length reaches the caller whole; an endpoint event that names its type
	// only after its data keeps just DataPrefixBytes of it.
	Data []byte
	// Truncated reports that the data is longer than Data.
	Truncated bool
	// Kind is the kind of JSON-RPC message the event carries; an event
	// with an ID and empty data is a priming event.
	Kind cursor.EventKind
}

// dispatch ends the current event at an empty line: it is reported when it
// carried an id or data, and the per-event state is cleared either way.
// It returns the event's kind (KindOther when none was reported), which a
// held id line's cursor takes (minting).
func (r *Rewriter) dispatch() (mint cursor.EventKind) {
	mint = cursor.KindOther
	if r.hasID || r.hasData {
		// The event is filled in place, every field of it, in a slot
		// that may hold an event of the previous call: copying one built
		// on the stack costs a store-forwarding stall, and zeroing the
		// slot first costs write barriers while a GC cycle runs.
		n := len(r.events)
		if n < cap(r.events) {
			r.events = r.events[:n+1]
		} else {
			r.events = append(r.events, Event{})
		}
		ev := &r.events[n]
		ev.HasID, ev.Truncated = r.hasID, r.dataTrunc
		limit := r.dataLimit()
		if r.dataInChunk {
			data := r.chunk[r.dataLo:r.dataHi]
			if len(data) > limit {
				data, ev.Truncated = data[:limit], true
			}
			ev.Data = span(data)
		} else {
			data := r.data
			if !ev.Truncated && len(data) > 0 {
				data = data[:len(data)-1] // the '\n' after the last line
			}
			if len(data) > limit {
				data, ev.Truncated = data[:limit], true
			}
			ev.Data = r.keep(data)
		}
		ev.ID = r.valueBytes(&r.id)
		ev.Type = r.valueBytes(&r.evType)
		ev.Kind = kindOf(ev.HasID, ev.Type, ev.Data, ev.Truncated)
		mint = ev.Kind // one classifier for the cursor and the stream tail
		if r.minting && ev.HasID && !r.pend.on {
			// An ID that went out in place (dispatchHeld records a held
			// one after minting it).
			r.prev = append(r.prev[:0], ev.ID...)
		}
	}
	r.id.clear()
	r.hasID = false
	r.evType.clear()
	r.endpoint = false
	r.data = r.data[:0]
	r.dataInChunk = false
	r.hasData = false
	r.dataTrunc = false
	return mint
}

// dataLimit is how much of the current event's data is kept: DataPrefixBytes,
// or for an "endpoint" event maxLineBytes (at least DataPrefixBytes), so that
// the session ID it announces reaches the caller whole.
func (r *Rewriter) dataLimit() int {
	if r.endpoint {
		return max(r.max, DataPrefixBytes)
	}
	return DataPrefixBytes
}

// valueBytes returns v for an Event: its span of the chunk, or a copy of
// its buffer in the arena.
func (r *Rewriter) valueBytes(v *value) []byte {
	if v.inChunk {
		return span(r.chunk[v.lo:v.hi])
	}
	return r.keep(v.buf)
}

// span returns b capped so that an append by the caller cannot write into
// the chunk, or nil when b is empty.
func span(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b[:len(b):len(b)]
}

// keep copies b into the per-call arena and returns the copy, capped so that
// an append by the caller cannot reach the next event's bytes. When the arena
// grows, earlier events keep pointing into the old array, which stays valid.
func (r *Rewriter) keep(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	i := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[i:len(r.arena):len(r.arena)]
}

// kindOf is an event's kind: priming for an ID with empty data, else what
// Classify makes of its type and data prefix.
func kindOf(hasID bool, evType, data []byte, truncated bool) cursor.EventKind {
	if hasID && len(data) == 0 && !truncated {
		return cursor.KindPriming
	}
	return Classify(evType, data, truncated)
}

// Assembling an event: data and event lines fill the event being built, an
// empty line dispatches it (the id lines are in idline.go).

// dataField handles a line that starts "data:" at p: whole in the chunk, its
// value is added to the data buffer at once; else it is read on by
// valueRun.
func (r *Rewriter) dataField(p int) int {
	chunk := r.chunk
	if e := nextEOL(chunk, p+5, &r.crAt); e >= 0 {
		r.dataLine(valueStart(chunk, p+5, e), e)
		return r.endLine(chunk[e], e)
	}
	r.field, r.ph = fieldData, phValueStart
	return p + 5
}

// eventField handles a line that starts "event:" at p: whole in the chunk,
// its value becomes the event type (a span of the chunk); else it is read on
// by valueRun. A value longer than maxLineBytes overflows the stream, at
// the start of the next line while an id line is held.
func (r *Rewriter) eventField(p int) int {
	chunk := r.chunk
	e := nextEOL(chunk, p+6, &r.crAt)
	if e < 0 {
		r.field, r.ph = fieldEvent, phValueStart
		r.startValue()
		return p + 6
	}
	vs := valueStart(chunk, p+6, e)
	if e-vs > r.max {
		if !r.pend.on {
			return r.overflowAt(p)
		}
		// The line passes; the held id line goes out after it.
		r.field, r.ph = fieldLong, phValue
		return vs
	}
	r.evType.setSpan(vs, e) // the last event field wins
	if ep := string(chunk[vs:e]) == "endpoint"; ep != r.endpoint {
		r.setEndpoint(ep)
	}
	return r.endLine(chunk[e], e)
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

// dataLine processes a data line whose value is chunk[lo:hi], whole in the
// current chunk. The first data line of an event stays a span of the chunk.
func (r *Rewriter) dataLine(lo, hi int) {
	if r.hasData {
		r.appendData(r.chunk[lo:hi])
		r.appendData(newline)
		return
	}
	r.dataInChunk, r.dataLo, r.dataHi, r.hasData = true, lo, hi, true
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
