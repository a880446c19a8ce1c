package sse

import "github.com/mcp-resume-guard/mcp-resume-guard/cursor"

// Stage 2, the event step: each field of a line fills the event being built
// (data and event here, id lines in idline.go) and an empty line dispatches
// it: the event is reported and, while minting, its held id line goes out
// minted with its ResponseClass (classify.go, through the memo of memo.go).

// DataPrefixBytes is how much of an event's data the rewriter keeps for
// classification. A JSON-RPC message names its kind ("method", "result",
// "error", "id") in its first few top-level keys, which MCP SDKs write
// before the large "params" or "result" values; data beyond this prefix is
// forwarded but never buffered.
const DataPrefixBytes = 512

// Kind returns the kind of JSON-RPC message the event carries (Classify of
// its type and data); an event with an ID and empty data is a priming
// event. It classifies on every call: the rewriter itself reads of an
// event only what its minted cursor needs (ResponseClass).
func (e *Event) Kind() cursor.EventKind {
	if e.HasID && len(e.Data) == 0 && !e.Truncated {
		return cursor.KindPriming
	}
	return Classify(e.Type, e.Data, e.Truncated)
}

// TailEvents returns the shortest end of events that holds their last two
// events with an ID (all of events when they hold fewer): all a
// cursor.StreamTail needs of a chunk, since only the last two events added
// change it, so only those need their Kind.
func TailEvents(events []Event) []Event {
	i, ids := len(events), 0
	for i > 0 && ids < 2 {
		if i--; events[i].HasID {
			ids++
		}
	}
	return events[i:]
}

// wholeLine takes the non-empty line chunk[p:e], whole in the chunk, by its
// field f, whose value starts at offset v of the line (an empty line
// dispatches: scan).
func (r *Rewriter) wholeLine(f lineState, p, v, e int) {
	line := r.chunk[p:e]
	value := line[v:]
	if len(value) > 0 && value[0] == ' ' && f != inID {
		value = value[1:] // SSE drops one space after the colon
	}
	switch f {
	case inData:
		r.appendData(value)
		r.endDataLine()
	case inEvent:
		r.evType = r.evType[:0] // the last event field wins
		if r.typeBytes(p, value); r.in == inLong {
			r.overflowNext = true
		}
	case inID:
		if len(line)-idValueAt(line) > r.max {
			r.overflowAt(p)
			return
		}
		r.flushTo(p)
		r.fwd = e
		r.idLine(line, e)
		r.edited = true
	case inOther:
		r.firstLineBeforeBOM(p)
	}
}

// startField starts the field f of the line that starts before p, whose
// value starts at q.
func (r *Rewriter) startField(f lineState, p, q int) {
	r.in = f
	switch f {
	case inID:
		r.holdTo(p, q)
		return
	case inEvent:
		r.evType = r.evType[:0] // the last event field wins
	}
	r.spaceNext = q > p && r.chunk[q-1] == ':'
	if len(r.line) > 0 {
		r.releaseLine() // it began like an id field ("i", "id")
	}
}

// fieldBytes takes chunk[p:end], bytes of the current field's value: data
// is kept up to its bound, an event type up to max (past it the stream
// overflows), an id line held whole.
func (r *Rewriter) fieldBytes(p, end int) {
	switch r.in {
	case inData:
		r.appendData(r.value(p, end))
	case inEvent:
		r.typeBytes(p, r.value(p, end))
	case inID:
		r.idBytes(p, end)
	}
}

// typeBytes adds v, bytes of the event type's value from p on, to it: past
// max, the stream overflows at p, or, while an id line is held, after this
// line, which passes (inLong).
func (r *Rewriter) typeBytes(p int, v []byte) {
	switch {
	case len(r.evType)+len(v) <= r.max:
		r.evType = append(r.evType, v...)
	case len(r.pend) == 0:
		r.overflowAt(p)
	default:
		r.in = inLong
	}
}

// value returns chunk[p:end] without the one space SSE drops at the start
// of a value.
func (r *Rewriter) value(p, end int) []byte {
	if r.spaceNext && p < end {
		r.spaceNext = false
		if r.chunk[p] == ' ' {
			p++
		}
	}
	return r.chunk[p:end]
}

// endField ends the current field at its line's end e.
func (r *Rewriter) endField(e int) {
	switch r.in {
	case inEmpty:
		r.dispatch(e)
	case inData:
		r.endDataLine()
	case inID:
		r.idLine(r.line, e)
		r.line = r.line[:0]
	case inLong:
		r.overflowNext = true
	}
}

// appendData appends b to the event's data lines, keeping at most
// dataLimit()+1 bytes of them (the +1 is the '\n' that SSE strips from the
// end, so that a data of exactly the limit is not truncated).
func (r *Rewriter) appendData(b []byte) {
	if room := r.dataLimit() + 1 - (len(r.arena) - r.dataAt); len(b) > room {
		b = b[:max(room, 0)]
		r.dataCut = true
	}
	r.arena = append(r.arena, b...)
}

// endDataLine ends a data line: SSE adds a '\n' to the data.
func (r *Rewriter) endDataLine() {
	if len(r.arena)-r.dataAt > r.dataLimit() {
		r.dataCut = true
		return
	}
	r.arena = append(r.arena, '\n')
}

// dataLimit is how much of the current event's data is kept: DataPrefixBytes,
// or for an "endpoint" event maxLineBytes (at least DataPrefixBytes), so that
// the session ID it announces reaches the caller whole.
func (r *Rewriter) dataLimit() int {
	if string(r.evType) == "endpoint" {
		return max(r.max, DataPrefixBytes)
	}
	return DataPrefixBytes
}

// eventData returns the event's data as reported: without the '\n' after
// its last line, cut to dataLimit(), and whether it was cut.
func (r *Rewriter) eventData() ([]byte, bool) {
	data, cut := r.arena[r.dataAt:], r.dataCut
	if !cut && len(data) > 0 && data[len(data)-1] == '\n' {
		data = data[:len(data)-1]
	}
	if limit := r.dataLimit(); len(data) > limit {
		data, cut = data[:limit], true
	}
	return data, cut
}

// dispatch ends the event at the empty line that starts at p: it writes
// its held id line minted with its response class, reports the event when
// it carried an id or data, and clears it.
func (r *Rewriter) dispatch(p int) {
	data, cut := r.eventData()
	if len(r.pend) > 0 {
		r.flushTo(p)
		r.writePend(r.mintKind(r.evType, data, cut), r.prev)
	}
	r.report(data, cut)
	if r.minting && len(r.id) > 0 {
		r.prev, r.id = r.id, r.prev // the ID becomes the next event's previous one
	}
	r.id, r.evType, r.dataAt, r.dataCut = r.id[:0], r.evType[:0], len(r.arena), false
}

// report adds the event being built, whose data is data (eventData), to
// Events when it carried an id or data.
func (r *Rewriter) report(data []byte, cut bool) {
	if len(r.id) == 0 && len(r.arena) == r.dataAt {
		return
	}
	if len(data) == 0 {
		data = nil
	}
	ev := r.nextEvent()
	ev.ID, ev.HasID, ev.Type = r.keep(r.id), len(r.id) > 0, r.keep(r.evType)
	ev.Data, ev.Truncated = data[:len(data):len(data)], cut
}

// mintKind returns the kind an event of type evType with the data data
// (eventData) gives its minted cursor: its ResponseClass (a priming event,
// with empty data, is none).
func (r *Rewriter) mintKind(evType, data []byte, cut bool) cursor.EventKind {
	if len(data) == 0 && !cut {
		return cursor.KindOther
	}
	return r.memo.responseClass(evType, data, cut)
}

// nextEvent returns a slot for one more event, filled in place by the
// caller (it may hold an event of the previous call).
func (r *Rewriter) nextEvent() *Event {
	n := len(r.events)
	if n < cap(r.events) {
		r.events = r.events[:n+1]
	} else {
		r.events = append(r.events, Event{})
	}
	return &r.events[n]
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
// grew past the bounds above; the data of the event being built moves to
// the arena's start.
func (r *Rewriter) releaseEvents() {
	if cap(r.events) > keepEvents {
		r.events = nil
	}
	r.events = r.events[:0]
	building := r.arena[r.dataAt:]
	if cap(r.arena) > keepArenaBytes {
		r.arena = nil
	}
	r.arena, r.dataAt = append(r.arena[:0], building...), 0
}

// keep copies b into the per-call arena and returns the copy, capped so
// that an append by the caller cannot reach the next event's bytes, or nil
// when b is empty. When the arena grows, earlier events keep pointing into
// the old array, which stays valid.
func (r *Rewriter) keep(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	i := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[i:len(r.arena):len(r.arena)]
}
