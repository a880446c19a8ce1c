package sse

// value is the id or event type value of the event being built. While the
// line that set it lies whole in the chunk of the current Rewrite call it is
// the span chunk[lo:hi], which costs no copy; the rewriter copies it into
// buf before the call returns or when a later byte must be appended to it.
type value struct {
	buf     []byte
	lo, hi  int
	inChunk bool // the value is chunk[lo:hi], not buf
}

// setSpan makes the value chunk[lo:hi].
func (v *value) setSpan(lo, hi int) { v.lo, v.hi, v.inChunk = lo, hi, true }

// clear empties the value.
func (v *value) clear() {
	v.buf = v.buf[:0] // a length change only, no pointer store
	v.inChunk = false
}

// detach copies a span of chunk into buf, so that the value outlives the
// call.
func (v *value) detach(chunk []byte) {
	if v.inChunk {
		v.buf = append(v.buf[:0], chunk[v.lo:v.hi]...)
		v.inChunk = false
	}
}
