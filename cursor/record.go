package cursor

import (
	"encoding/binary"
	"errors"
)

// Limits of a watermark record.
const (
	// MaxTails is how many recent stream tails a record keeps per session.
	MaxTails = 4
	// MaxRecordBytes bounds an encoded record; Encode drops the oldest tails
	// until the record fits.
	MaxRecordBytes = 512
	// MaxSessionIDBytes is the longest session ID the filter tracks. Longer
	// IDs are legal MCP but are treated as "no watermark".
	MaxSessionIDBytes = 128
	// MaxEventIDBytes is the longest event ID a tail keeps; longer IDs are
	// not recorded (a resume with them is "unknown").
	MaxEventIDBytes = 256
)

const (
	recordVersion   = 1
	flagTombstone   = 1 << 0
	tailFlagAcked   = 1 << 0
	tailKindShift   = 1
	tailKindMask    = 0x7
	tailTransShift  = 4
	tailTransMask   = 0x3
	emptySlotMarker = 0
)

// Tail is the watermark of one response stream: the last event ID sent
// downstream on it, the one before, the kind of the last event, and whether
// the stream ended cleanly (the client drained everything it was sent).
type Tail struct {
	Stream    uint32    // the filter's nonce for the HTTP stream
	Transport Transport // the transport of the route the stream was served on
	LastID    string    // upstream (untagged) ID of the last event sent
	PrevID    string    // upstream ID of the event before it, "" if none
	LastKind  EventKind // kind of the last event
	Acked     bool      // the stream reached end-of-stream cleanly
}

// Record is everything the filter keeps about one MCP session, in one
// shared-data slot.
type Record struct {
	SessionID  string
	Tombstoned bool   // a re-initialization was forced; every request with the session gets one
	Created    uint32 // unix seconds
	Updated    uint32 // unix seconds
	Tails      []Tail // newest first, at most MaxTails
}

// Expired reports whether r was last updated more than ttl seconds before now.
func (r *Record) Expired(now, ttl uint32) bool {
	return now > r.Updated && now-r.Updated > ttl
}

// Observe records that stream sent last (and before it prev) on transport t.
// The stream's tail moves to the front; the oldest tail beyond MaxTails goes.
// An ID longer than MaxEventIDBytes is not recorded.
func (r *Record) Observe(stream uint32, t Transport, last, prev string, kind EventKind, now uint32) {
	if len(last) > MaxEventIDBytes {
		return
	}
	if len(prev) > MaxEventIDBytes {
		prev = ""
	}
	tail := Tail{Stream: stream, Transport: t, LastID: last, PrevID: prev, LastKind: kind}
	i := r.tailIndex(stream)
	if i < 0 {
		if len(r.Tails) < MaxTails {
			r.Tails = append(r.Tails, Tail{})
		}
		i = len(r.Tails) - 1
	}
	copy(r.Tails[1:i+1], r.Tails[:i])
	r.Tails[0] = tail
	r.Updated = now
}

// Ack marks stream's tail acknowledged. It reports whether the record changed.
func (r *Record) Ack(stream uint32, now uint32) bool {
	i := r.tailIndex(stream)
	if i < 0 || r.Tails[i].Acked {
		return false
	}
	r.Tails[i].Acked = true
	r.Updated = now
	return true
}

// Tombstone marks the session force-re-initialized.
func (r *Record) Tombstone(now uint32) {
	r.Tombstoned = true
	r.Updated = now
}

func (r *Record) tailIndex(stream uint32) int {
	for i := range r.Tails {
		if r.Tails[i].Stream == stream {
			return i
		}
	}
	return -1
}

// find returns the newest tail of transport t whose last or previous event ID
// is id, or nil. An empty PrevID means "no previous event" and matches nothing.
func (r *Record) find(t Transport, id string) *Tail {
	for i := range r.Tails {
		tl := &r.Tails[i]
		if tl.Transport == t && (tl.LastID == id || tl.PrevID != "" && tl.PrevID == id) {
			return tl
		}
	}
	return nil
}

// AppendEncode appends the wire form of r to dst. The format (version 1):
//
//	u8 version=1, u8 flags (bit 0: tombstoned),
//	uvarint created, uvarint updated, uvarint len(session), session,
//	u8 tail count, then per tail, newest first:
//	  uvarint stream, u8 (acked | kind<<1 | transport<<4),
//	  uvarint len(last), last,
//	  uvarint n (bytes prev shares with the start of last),
//	  uvarint len(rest of prev), rest of prev
//
// For example session "s-77", one unacked response tail e-104 after e-103 is
// 01 00 <created> <updated> 04 "s-77" 01 <stream> 22 05 "e-104" 04 01 "3":
// the shared-allocator IDs cost one byte for the previous ID.
//
// Only what Decode accepts is written: at most MaxTails tails, and a tail
// with an ID longer than MaxEventIDBytes is left out. Tails are dropped,
// oldest first, until the record fits MaxRecordBytes; an error is returned
// only if the session ID alone does not fit.
func (r *Record) AppendEncode(dst []byte) ([]byte, error) {
	if len(r.SessionID) > MaxSessionIDBytes {
		return dst, errors.New("cursor: session ID longer than 128 bytes is not tracked")
	}
	var keep [MaxTails]Tail
	tails := keep[:0]
	for _, t := range r.Tails {
		if len(tails) == MaxTails {
			break
		}
		if len(t.LastID) <= MaxEventIDBytes && len(t.PrevID) <= MaxEventIDBytes {
			tails = append(tails, t)
		}
	}
	start := len(dst)
	for n := len(tails); ; n-- {
		dst = r.appendTails(dst[:start], tails[:n])
		if len(dst)-start <= MaxRecordBytes || n == 0 {
			break
		}
	}
	return dst, nil
}

// appendTails encodes r with the given tails, whatever their size.
func (r *Record) appendTails(dst []byte, tails []Tail) []byte {
	var flags byte
	if r.Tombstoned {
		flags |= flagTombstone
	}
	dst = append(dst, recordVersion, flags)
	dst = binary.AppendUvarint(dst, uint64(r.Created))
	dst = binary.AppendUvarint(dst, uint64(r.Updated))
	dst = appendString(dst, r.SessionID)
	dst = append(dst, byte(len(tails)))
	for i := range tails {
		t := &tails[i]
		b := byte(t.LastKind&tailKindMask)<<tailKindShift | byte(t.Transport&tailTransMask)<<tailTransShift
		if t.Acked {
			b |= tailFlagAcked
		}
		dst = binary.AppendUvarint(dst, uint64(t.Stream))
		dst = append(dst, b)
		dst = appendString(dst, t.LastID)
		n := commonPrefix(t.LastID, t.PrevID)
		dst = binary.AppendUvarint(dst, uint64(n))
		dst = appendString(dst, t.PrevID[n:])
	}
	return dst
}

// EmptySlot is the value that marks a free shared-data slot (proxy-wasm 0.2.1
// has no delete).
var EmptySlot = []byte{emptySlotMarker}

// errCorrupt is returned for every malformed record; the store treats such a
// slot as free.
var errCorrupt = errors.New("cursor: malformed watermark record")

// Decode parses a record written by AppendEncode. An empty slot returns
// ok=false and no error. Decode never panics and allocates at most about
// twice len(b), whatever b holds.
func Decode(b []byte) (r Record, ok bool, err error) {
	if len(b) == 0 || (len(b) == 1 && b[0] == emptySlotMarker) {
		return Record{}, false, nil
	}
	if len(b) > MaxRecordBytes || b[0] != recordVersion || len(b) < 2 {
		return Record{}, false, errCorrupt
	}
	d := decoder{b: b, i: 2}
	r.Tombstoned = b[1]&flagTombstone != 0
	r.Created = d.u32()
	r.Updated = d.u32()
	r.SessionID = d.str(MaxSessionIDBytes)
	n := int(d.byte())
	if n > MaxTails {
		return Record{}, false, errCorrupt
	}
	if n > 0 && d.err == nil {
		r.Tails = make([]Tail, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		t := &r.Tails[i]
		t.Stream = d.u32()
		f := d.byte()
		t.Acked = f&tailFlagAcked != 0
		t.LastKind = EventKind(f >> tailKindShift & tailKindMask)
		t.Transport = Transport(f >> tailTransShift & tailTransMask)
		t.LastID = d.str(MaxEventIDBytes)
		shared := int(d.u32())
		rest := d.str(MaxEventIDBytes)
		if shared > len(t.LastID) || shared+len(rest) > MaxEventIDBytes {
			d.err = errCorrupt
			break
		}
		t.PrevID = t.LastID[:shared] + rest
	}
	if d.err != nil || d.i != len(b) {
		return Record{}, false, errCorrupt
	}
	return r, true, nil
}

type decoder struct {
	b   []byte
	i   int
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil || d.i >= len(d.b) {
		d.err = errCorrupt
		return 0
	}
	c := d.b[d.i]
	d.i++
	return c
}

func (d *decoder) u32() uint32 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 || v > 1<<32-1 {
		d.err = errCorrupt
		return 0
	}
	d.i += n
	return uint32(v)
}

func (d *decoder) str(max int) string {
	n := int(d.u32())
	if d.err != nil || n > max || n > len(d.b)-d.i {
		d.err = errCorrupt
		return ""
	}
	s := string(d.b[d.i : d.i+n])
	d.i += n
	return s
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
