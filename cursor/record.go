package cursor

import (
	"encoding/binary"
	"errors"
	"strings"
	"unsafe"
)

// Limits of a watermark record.
const (
	// MaxTails is how many recent stream tails a record keeps per session.
	MaxTails = 4
	// MaxRecordBytes bounds an encoded record; tails are evicted (see
	// Record.Observe) until the record fits.
	MaxRecordBytes = 512
	// MaxEventIDBytes is the longest event ID a tail keeps; longer IDs are
	// not recorded (a resume with them is "unknown").
	MaxEventIDBytes = 256
)

const (
	recordVersion  = 2
	tailFlagAcked  = 1 << 0
	tailKindShift  = 1
	tailKindMask   = 0x7
	tailTransShift = 4
	tailTransMask  = 0x3
	// tailPrevShift: bits 6-7 hold the class of the previous event's kind
	// (prevClass); builds that predate it ignore them.
	tailPrevShift   = 6
	emptySlotMarker = 0
	// recordFlagOwner: the record carries its owner's principal.
	recordFlagOwner = 1 << 0
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
	// PrevKind is what is known of the kind of the event before the last
	// (KindOther when nothing is: records of earlier builds, a resumed
	// stream's cursor). A result followed by a priming event (the Python
	// SDK's replay) is a drain race when the client resumes from the result.
	PrevKind EventKind
	Acked    bool // the stream reached end-of-stream cleanly
}

// Record is everything the filter keeps about one MCP session, in one
// shared-data slot.
type Record struct {
	Session SessionKey // digest of the session ID (KeyOf)
	Created uint32     // unix seconds
	Updated uint32     // unix seconds
	Tails   []Tail     // newest first, at most MaxTails

	// Owner is the principal of the request of the last stream that ended
	// with its tail here (Store.EndStream; HasOwner: one did, records of
	// earlier builds have none): a principal the upstream served this
	// session to. Only the owner's refused requests tombstone the session
	// (Store.LoadAs).
	Owner    Principal
	HasOwner bool

	// Tombstoned is set by Store.Load when the session is in the
	// tombstone table (a re-initialization was forced): every request with
	// it is refused. It is not part of the encoded record.
	Tombstoned bool
}

// Expired reports whether r was last updated more than ttl seconds before now.
func (r *Record) Expired(now, ttl uint32) bool {
	return now > r.Updated && now-r.Updated > ttl
}

// Observe records that stream sent last (and before it prev) on transport t,
// and reports whether the record changed. An ID longer than MaxEventIDBytes
// is not recorded (nothing changes). The stream's tail moves to the front.
//
// When the record already holds MaxTails other streams, or would no longer
// fit MaxRecordBytes, a tail is evicted, chosen by what can still change a
// decision under p (Record.victim).
func (r *Record) Observe(stream uint32, t Transport, last, prev string, kind EventKind, now uint32, p Policy) bool {
	return r.observe(Tail{Stream: stream, Transport: t, LastID: last, PrevID: prev, LastKind: kind}, now, p)
}

// observe is Observe of a whole tail (its Acked is ignored: a tail that is
// written again has sent more since its end was last recorded).
func (r *Record) observe(tail Tail, now uint32, p Policy) bool {
	tail.Acked = false
	if len(tail.LastID) > MaxEventIDBytes {
		return false
	}
	if len(tail.PrevID) > MaxEventIDBytes {
		tail.PrevID, tail.PrevKind = "", KindOther
	}
	stream := tail.Stream
	if r.headerLen()+tail.encodedLen() > MaxRecordBytes {
		// Two long IDs (from about 237 bytes each) do not fit one record
		// together: keep the last ID, which is what a decision matches, and
		// drop the previous one (a minted cursor carries it anyway).
		tail.PrevID, tail.PrevKind = "", KindOther
	}
	if i := r.tailIndex(stream); i >= 0 {
		r.Tails = append(r.Tails[:i], r.Tails[i+1:]...)
	}
	r.Tails = append(r.Tails, Tail{})
	copy(r.Tails[1:], r.Tails)
	r.Tails[0] = tail
	for len(r.Tails) > MaxTails || len(r.Tails) > 1 && r.encodedLen() > MaxRecordBytes {
		r.evict(p)
	}
	r.Updated = now
	return true
}

// evict drops the victim among r.Tails[1:] (the newest tail is the one
// being written and is never the victim).
func (r *Record) evict(p Policy) {
	i := r.victim(p)
	r.Tails = append(r.Tails[:i], r.Tails[i+1:]...)
}

// victim returns the index of the tail to drop when the record is full.
//
// Under unknown_cursor: forward, a tail whose cursor would be forwarded
// anyway makes no difference to any decision when it goes ("normal" and
// "unknown" both forward): the oldest acknowledged tail goes first, then the
// oldest whose last event is out of scope, and only then the oldest of the
// unacknowledged in-scope tails — the ones that stop the seed's loss. Under
// unknown_cursor: reinit every tail turns a later cursor from "unknown"
// (re-initialized) into "normal", so the oldest goes.
func (r *Record) victim(p Policy) int {
	oldest := len(r.Tails) - 1
	if p.Unknown == UnknownReinit {
		return oldest
	}
	acked, outOfScope := -1, -1
	for i := oldest; i >= 1; i-- {
		tl := &r.Tails[i]
		switch {
		case tl.Acked:
			if acked < 0 {
				acked = i
			}
		case !tl.inScope(true, p) && !tl.inScope(false, p):
			if outOfScope < 0 {
				outOfScope = i
			}
		}
	}
	switch {
	case acked >= 0:
		return acked
	case outOfScope >= 0:
		return outOfScope
	}
	return oldest
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

func (r *Record) tailIndex(stream uint32) int {
	for i := range r.Tails {
		if r.Tails[i].Stream == stream {
			return i
		}
	}
	return -1
}

// kindOf returns the kind of the tail's last event, or of the one before it.
func (t *Tail) kindOf(last bool) EventKind {
	if last {
		return t.LastKind
	}
	return t.PrevKind
}

// inScope reports whether the tail's last event, or the one before it, is in
// scope under p.
func (t *Tail) inScope(last bool, p Policy) bool {
	if last {
		return p.InScope(t.LastKind)
	}
	return p.prevInScope(t.PrevKind)
}

// Sighting is what a tail about to be written shows of the seed's
// conditions (docs/operations.md, "Do we need it?"): whether the session
// already has a tail of the other transport here (a bridged session), and
// whether that tail's last ID and this one look drawn from one sequence (a
// shared allocator: the same text before a run of digits, another number).
type Sighting struct {
	Bridged, SharedAllocator bool
}

// sight returns what writing a tail of transport t whose last ID is id shows.
func (r *Record) sight(t Transport, id string) Sighting {
	var s Sighting
	for i := range r.Tails {
		tl := &r.Tails[i]
		if tl.Transport == t || tl.Transport == TransportNone {
			continue
		}
		s.Bridged = true
		s.SharedAllocator = s.SharedAllocator || oneSequence(tl.LastID, id)
	}
	return s
}

// oneSequence reports whether two event IDs look drawn from one counter:
// both end in digits, the text before the digits is the same, the numbers
// differ ("e-104" and "e-105"; not "s1_4" and "s2_5", the Go SDK's
// per-stream IDs).
func oneSequence(a, b string) bool {
	pa, na := splitNumber(a)
	pb, nb := splitNumber(b)
	return na != "" && nb != "" && pa == pb && strings.TrimLeft(na, "0") != strings.TrimLeft(nb, "0")
}

// splitNumber splits id into the text before its trailing digits and them.
func splitNumber(id string) (prefix, digits string) {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	return id[:i], id[i:]
}

// find returns the newest tail of transport t whose last or previous event ID
// is id, or nil, and whether it is the last one (the caller need not compare
// the IDs again). An empty PrevID means "no previous event" and matches
// nothing.
func (r *Record) find(t Transport, id string) (tl *Tail, last bool) {
	for i := range r.Tails {
		tl := &r.Tails[i]
		if tl.Transport != t {
			continue
		}
		if tl.LastID == id {
			return tl, true
		}
		if tl.PrevID != "" && tl.PrevID == id {
			return tl, false
		}
	}
	return nil, false
}

// encodedLen bounds len(r.AppendEncode(nil)) with every tail kept (exact
// but for the varints it counts at their largest).
func (r *Record) encodedLen() int {
	n := r.headerLen()
	for i := range r.Tails {
		n += r.Tails[i].encodedLen()
	}
	return n
}

// headerLen is the encoded size of r without its tails. Updated is counted
// at its largest (5 bytes), as Observe is about to set it.
func (r *Record) headerLen() int {
	n := 2 + uvarintLen(uint64(r.Created)) + 5 + len(r.Session) + 1
	if r.HasOwner {
		n += 8
	}
	return n
}

// encodedLen is the encoded size of t in a record. The stream nonce is
// counted at its largest (5 bytes).
func (t *Tail) encodedLen() int {
	shared := commonPrefix(t.LastID, t.PrevID)
	rest := len(t.PrevID) - shared
	return 5 + 1 +
		uvarintLen(uint64(len(t.LastID))) + len(t.LastID) +
		uvarintLen(uint64(shared)) + uvarintLen(uint64(rest)) + rest
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// AppendEncode appends the wire form of r to dst. The format (version 2):
//
//	u8 version=2, u8 flags (bit 0: owner follows the key),
//	uvarint created, uvarint updated, 16 bytes session key,
//	[8 bytes owner principal, little-endian, when flag bit 0 is set]
//	u8 tail count, then per tail, newest first:
//	  uvarint stream, u8 (acked | kind<<1 | transport<<4 | prevClass<<6),
//	  uvarint len(last), last,
//	  uvarint n (bytes prev shares with the start of last),
//	  uvarint len(rest of prev), rest of prev
//
// For example one unacked response tail e-104 after e-103 is
// 02 00 <created> <updated> <16-byte key> 01 <stream> 22 05 "e-104" 04 01 "3":
// the shared-allocator IDs cost one byte for the previous ID.
//
// Only what Decode accepts is written: at most MaxTails tails, and a tail
// with an ID longer than MaxEventIDBytes is left out. Tails are dropped,
// oldest first, until the record fits MaxRecordBytes (Observe already keeps
// a record within it, choosing what to evict).
func (r *Record) AppendEncode(dst []byte) []byte {
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
	return dst
}

// appendTails encodes r with the given tails, whatever their size.
func (r *Record) appendTails(dst []byte, tails []Tail) []byte {
	var flags byte
	if r.HasOwner {
		flags |= recordFlagOwner
	}
	dst = append(dst, recordVersion, flags)
	dst = binary.AppendUvarint(dst, uint64(r.Created))
	dst = binary.AppendUvarint(dst, uint64(r.Updated))
	dst = append(dst, r.Session[:]...)
	if r.HasOwner {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Owner))
	}
	dst = append(dst, byte(len(tails)))
	for i := range tails {
		t := &tails[i]
		b := byte(t.LastKind&tailKindMask)<<tailKindShift | byte(t.Transport&tailTransMask)<<tailTransShift |
			prevClass(t.PrevKind)<<tailPrevShift
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

// prevKinds maps the two bits a tail keeps of its previous event's kind
// back to a kind: only whether it was a result, an error, another message
// (a request or a notification: in scope under unacked_scope all), or
// nothing known (other, priming).
var prevKinds = [4]EventKind{KindOther, KindResponse, KindError, KindRequest}

func prevClass(k EventKind) byte {
	switch k {
	case KindResponse:
		return 1
	case KindError:
		return 2
	case KindRequest, KindNotification:
		return 3
	}
	return 0
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
	// The IDs are views of one buffer no one else holds (DecodeInto): the
	// strings are as immutable as if each had been allocated on its own.
	// Their bytes never exceed twice len(b) (a previous ID shares at most
	// the whole last ID), so the buffer never grows.
	var text []byte
	if len(b) > 2 && len(b) <= MaxRecordBytes {
		text = make([]byte, 0, 2*len(b))
	}
	if ok, _, err = r.DecodeInto(b, text); !ok {
		return Record{}, false, err
	}
	return r, true, nil
}

// DecodeInto parses b as Decode does into r, reusing the backing array of
// r.Tails: with a text of room enough and a record reused, it allocates
// nothing (the store decodes every lookup this way). The tails' IDs are appended to text and are views of it
// (unsafe.String), not copies: they stay valid only while the bytes of text
// they view are not overwritten. It returns text, grown if it had to be
// (views made before a growth keep viewing the old array, which the GC keeps
// alive). On failure (ok false) r holds no meaningful record.
func (r *Record) DecodeInto(b, text []byte) (ok bool, _ []byte, err error) {
	*r = Record{Tails: r.Tails[:0]}
	if len(b) == 0 || (len(b) == 1 && b[0] == emptySlotMarker) {
		return false, text, nil
	}
	if len(b) > MaxRecordBytes || b[0] != recordVersion || len(b) < 2 {
		return false, text, errCorrupt
	}
	if b[1]&^recordFlagOwner != 0 {
		return false, text, errCorrupt
	}
	d := decoder{b: b, i: 2}
	r.Created = d.u32()
	r.Updated = d.u32()
	d.key(&r.Session)
	if b[1]&recordFlagOwner != 0 {
		r.Owner, r.HasOwner = Principal(d.u64le()), true
	}
	n := int(d.byte())
	if n > MaxTails {
		return false, text, errCorrupt
	}
	if n > 0 && d.err == nil {
		if cap(r.Tails) < n {
			r.Tails = make([]Tail, n)
		}
		r.Tails = r.Tails[:n]
	}
	for i := 0; i < n && d.err == nil; i++ {
		t := &r.Tails[i]
		t.Stream = d.u32()
		f := d.byte()
		t.Acked = f&tailFlagAcked != 0
		t.LastKind = EventKind(f >> tailKindShift & tailKindMask)
		t.Transport = Transport(f >> tailTransShift & tailTransMask)
		t.PrevKind = prevKinds[f>>tailPrevShift]
		last := d.bytes(MaxEventIDBytes)
		shared := int(d.u32())
		rest := d.bytes(MaxEventIDBytes)
		if d.err != nil || shared > len(last) || shared+len(rest) > MaxEventIDBytes {
			d.err = errCorrupt
			break
		}
		t.LastID, text = appendView(text, last)
		switch {
		case len(rest) == 0:
			t.PrevID = t.LastID[:shared]
		case shared == 0:
			t.PrevID, text = appendView(text, rest)
		default:
			start := len(text)
			text = append(append(text, last[:shared]...), rest...)
			t.PrevID = viewOf(text[start:])
		}
	}
	if d.err != nil || d.i != len(b) {
		return false, text, errCorrupt
	}
	return true, text, nil
}

// appendView appends b to text and returns a string viewing the copy.
func appendView(text, b []byte) (string, []byte) {
	start := len(text)
	text = append(text, b...)
	return viewOf(text[start:]), text
}

// viewOf returns a string viewing b, which must not change while the string
// is in use.
func viewOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
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
	if d.i < len(d.b) && d.b[d.i] < 0x80 {
		// One byte: lengths, counts, shared prefixes (the common case).
		d.i++
		return uint32(d.b[d.i-1])
	}
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 || v > 1<<32-1 {
		d.err = errCorrupt
		return 0
	}
	d.i += n
	return uint32(v)
}

// u64le reads 8 bytes, little-endian.
func (d *decoder) u64le() uint64 {
	if d.err != nil || len(d.b)-d.i < 8 {
		d.err = errCorrupt
		return 0
	}
	d.i += 8
	return binary.LittleEndian.Uint64(d.b[d.i-8:])
}

func (d *decoder) key(k *SessionKey) {
	if d.err != nil || len(d.b)-d.i < len(k) {
		d.err = errCorrupt
		return
	}
	d.i += copy(k[:], d.b[d.i:])
}

// bytes returns the next length-prefixed field of at most max bytes, a
// slice of the input.
func (d *decoder) bytes(max int) []byte {
	n := int(d.u32())
	if d.err != nil || n > max || n > len(d.b)-d.i {
		d.err = errCorrupt
		return nil
	}
	b := d.b[d.i : d.i+n]
	d.i += n
	return b
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
