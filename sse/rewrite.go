package sse

import "bytes"

// The entry of the response path: one chunk goes through the scan (scan.go),
// which hands each line to the event step (event.go, idline.go); what is
// held at the end of the stream goes out last (end.go).

// Rewrite consumes the next chunk of the upstream body and appends to dst the
// bytes to send downstream now, returning the extended slice. changed is
// false when the appended bytes equal chunk exactly (the caller may then
// leave the host's buffer alone). eos marks the last chunk: every held byte
// is flushed, and an unterminated final event is not reported in Events
// (WHATWG readers discard it) though its bytes are forwarded (see flushHeld
// for its ID). Call Reset before feeding another stream. dst must not
// overlap chunk.
//
// The events dispatched by the empty lines in chunk are available from
// Events until the next call, so a caller can record them before the bytes
// that carry them leave.
func (r *Rewriter) Rewrite(dst, chunk []byte, eos bool) (out []byte, changed bool) {
	r.releaseEvents()
	r.tagged = 0
	if r.overflowed {
		return append(dst, chunk...), false
	}
	// Bytes held by an earlier call come out now or later.
	r.chunk, r.out, r.start, r.fwd = chunk, dst, len(dst), 0
	r.edited = len(r.pend) > 0 || len(r.line) > 0
	r.scan()
	r.flushTo(len(chunk))
	r.wrote = r.wrote || len(r.out) > r.start
	if eos && (len(r.pend) > 0 || len(r.line) > 0) {
		r.endOfStream()
	}
	out, r.out, r.chunk = r.out, nil, nil
	if !r.edited {
		return out, false
	}
	return out, !bytes.Equal(out[r.start:], chunk)
}
