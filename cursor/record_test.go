package cursor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// uuid is a 36-byte session ID, the common Mcp-Session-Id shape.
const uuid = "3f2b8c1e-9a4d-4e7f-b2c6-0d1e5a7f9c3b"

// now is a realistic unix time: its uvarint takes 5 bytes.
const now = 1_795_000_000

func id64(prefix string, n int) string {
	s := fmt.Sprintf("%s%d", prefix, n)
	return strings.Repeat("0", 64-len(s)) + s
}

func randomID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// roundTripRecords is a set of records that must survive AppendEncode and
// Decode unchanged.
func roundTripRecords() map[string]Record {
	rs := map[string]Record{
		"empty_session":  {},
		"bare":           {Session: KeyOf("s-77"), Created: 1, Updated: 2},
		"owned":          {Session: KeyOf("s-77"), Created: 1, Updated: 2, Owner: PrincipalOf("Bearer x"), HasOwner: true},
		"max_timestamps": {Session: KeyOf(uuid), Created: math.MaxUint32, Updated: math.MaxUint32},
		"jwt_session":    {Session: KeyOf(strings.Repeat("s", 4096)), Created: now, Updated: now},
		"binary_session": {Session: KeyOf("\x00\xff\n\""), Created: now, Updated: now},
		"tail_prev_shares_prefix": {Session: KeyOf("s-77"), Created: 10, Updated: 20, Tails: []Tail{
			tail(7, TransportSSE, "e-104", "e-103", KindResponse, false)}},
		"tail_prev_shares_nothing": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(7, TransportHTTP, "abc", "xyz", KindNotification, true)}},
		"tail_prev_is_prefix_of_last": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(7, TransportHTTP, "e-1000", "e-100", KindRequest, false)}},
		"tail_last_is_prefix_of_prev": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(7, TransportHTTP, "e-99", "e-999", KindPriming, true)}},
		"tail_prev_equals_last": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(7, TransportSSE, "same", "same", KindOther, false)}},
		"tail_no_prev": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(0, TransportSSE, "e-1", "", KindResponse, false)}},
		"tail_empty_ids": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(1, TransportNone, "", "", KindOther, false)}},
		"tail_max_stream": {Session: KeyOf("s-77"), Tails: []Tail{
			tail(math.MaxUint32, TransportHTTP, "e-1", "e-0", KindResponse, true)}},
		"tail_binary_ids": {Session: KeyOf("s"), Tails: []Tail{
			tail(3, TransportSSE, "\x00\xff\xfe", "\x00\xff", KindResponse, false)}},
		"tail_long_ids": {Session: KeyOf("s"), Tails: []Tail{
			tail(3, TransportSSE, strings.Repeat("a", MaxEventIDBytes), strings.Repeat("a", MaxEventIDBytes-1)+"b", KindResponse, false)}},
		"uuid_with_tails": {Session: KeyOf(uuid), Created: now, Updated: now, Tails: []Tail{
			tail(2, TransportHTTP, "1_7", "1_6", KindResponse, false),
			tail(1, TransportSSE, "e-5", "e-4", KindNotification, true)}},
	}
	for n := 0; n <= MaxTails; n++ {
		r := Record{Session: KeyOf(uuid), Created: now, Updated: now + uint32(n)}
		for i := 0; i < n; i++ {
			kind := EventKind(i % 5)
			tr := TransportSSE + Transport(i%2)
			r.Tails = append(r.Tails, tail(uint32(1000+i), tr, id64("e-", 100+i), id64("e-", 99+i), kind, i%2 == 0))
		}
		rs[fmt.Sprintf("%d_tails_64_byte_ids", n)] = r
	}
	return rs
}

func TestRecordRoundTrip(t *testing.T) {
	for name, r := range roundTripRecords() {
		t.Run(name, func(t *testing.T) {
			b := r.AppendEncode(nil)
			if len(b) > MaxRecordBytes {
				t.Fatalf("encoded %d bytes, more than MaxRecordBytes", len(b))
			}
			got, ok, err := Decode(b)
			if err != nil || !ok {
				t.Fatalf("Decode(%x) = ok %v, err %v", b, ok, err)
			}
			if !recordsEqual(got, r) {
				t.Fatalf("round trip changed the record:\n got %+v\nwant %+v", got, r)
			}
			// Appending keeps what dst held.
			if b2 := r.AppendEncode([]byte("head")); string(b2) != "head"+string(b) {
				t.Fatalf("AppendEncode onto \"head\" = %q; want head+%q", b2, b)
			}
		})
	}
}

func TestRecordRoundTripRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		r := Record{
			Session: KeyOf(randomID(rnd, rnd.IntN(8192))),
			Created: rnd.Uint32(),
			Updated: rnd.Uint32(),
		}
		for n := rnd.IntN(MaxTails + 1); n > 0; n-- {
			last := randomID(rnd, rnd.IntN(40))
			prev := randomID(rnd, rnd.IntN(40))
			if rnd.IntN(2) == 0 {
				prev = last[:rnd.IntN(len(last)+1)] + prev[:min(len(prev), 3)]
			}
			r.Tails = append(r.Tails, Tail{
				Stream: rnd.Uint32(), Transport: Transport(rnd.IntN(3)), LastID: last, PrevID: prev,
				LastKind: EventKind(rnd.IntN(5)), Acked: rnd.IntN(2) == 0,
			})
		}
		b := r.AppendEncode(nil)
		got, ok, err := Decode(b)
		if err != nil || !ok || !recordsEqual(got, r) {
			t.Fatalf("round trip of %+v: got %+v, ok %v, err %v", r, got, ok, err)
		}
	}
}

// TestRecordDocExample checks the example bytes of AppendEncode's doc comment.
func TestRecordDocExample(t *testing.T) {
	r := Record{Session: KeyOf("s-77"), Created: 1, Updated: 2, Tails: []Tail{
		tail(7, TransportHTTP, "e-104", "e-103", KindResponse, false)}}
	k := KeyOf("s-77")
	want := append(append([]byte{0x02, 0x00, 0x01, 0x02}, k[:]...),
		0x01, 0x07, 0x22, 0x05, 'e', '-', '1', '0', '4', 0x04, 0x01, '3')
	got := r.AppendEncode(nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendEncode = % x\n           want % x", got, want)
	}
	// The flags byte of a legacy, acked notification tail.
	r.Tails[0] = tail(7, TransportSSE, "e-104", "e-103", KindNotification, true)
	got = r.AppendEncode(nil)
	if f := got[4+len(k)+2]; f != 0x10|byte(KindNotification)<<1|1 {
		t.Errorf("tail flags byte = %#x, want %#x", f, 0x10|byte(KindNotification)<<1|1)
	}
	// Tombstoned lives in its own table, never in the record's bytes.
	r.Tombstoned = true
	if again := r.AppendEncode(nil); !bytes.Equal(again, got) {
		t.Errorf("Tombstoned changed the encoded record: % x", again)
	}
}

// TestRecordSizeBound: the bound, 4 tails of 64-byte IDs with a UUID
// session, fits in 512 bytes when IDs come from one allocator (the previous
// ID shares a prefix with the last).
func TestRecordSizeBound(t *testing.T) {
	r := Record{Session: KeyOf(uuid), Created: now, Updated: now}
	for i := 0; i < MaxTails; i++ {
		r.Tails = append(r.Tails, tail(math.MaxUint32-uint32(i), TransportHTTP, id64("stream-", 1_000_000+i), id64("stream-", 999_999+i), KindResponse, false))
	}
	for _, tl := range r.Tails {
		if len(tl.LastID) != 64 || len(tl.PrevID) != 64 {
			t.Fatalf("test IDs are %d and %d bytes, want 64", len(tl.LastID), len(tl.PrevID))
		}
	}
	b := r.AppendEncode(nil)
	if len(b) > MaxRecordBytes {
		t.Fatalf("4 tails of 64-byte IDs encode to %d bytes, more than %d", len(b), MaxRecordBytes)
	}
	got, _, _ := Decode(b)
	if len(got.Tails) != MaxTails {
		t.Fatalf("decoded %d tails, want all %d", len(got.Tails), MaxTails)
	}
	t.Logf("4 tails, 64-byte IDs, shared prefixes: %d bytes", len(b))

	// Without a previous ID (every stream's first event) all four fit too.
	for i := range r.Tails {
		r.Tails[i].PrevID = ""
	}
	b = r.AppendEncode(nil)
	if got, _, _ := Decode(b); len(got.Tails) != MaxTails || len(b) > MaxRecordBytes {
		t.Fatalf("4 tails without prev: %d bytes, %d tails", len(b), len(got.Tails))
	}
}

// TestRecordDropsOldestTails: with unrelated random 64-byte IDs four tails do
// not fit, and AppendEncode drops the oldest until the record does.
func TestRecordDropsOldestTails(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	r := Record{Session: KeyOf(uuid), Created: now, Updated: now}
	for i := 0; i < MaxTails; i++ {
		r.Tails = append(r.Tails, tail(math.MaxUint32-uint32(i), TransportSSE, randomID(rnd, 64), randomID(rnd, 64), KindResponse, false))
	}
	b := r.AppendEncode(nil)
	if len(b) > MaxRecordBytes {
		t.Fatalf("encoded %d bytes, more than %d", len(b), MaxRecordBytes)
	}
	got, ok, err := Decode(b)
	if err != nil || !ok {
		t.Fatalf("Decode: ok %v, err %v", ok, err)
	}
	if len(got.Tails) >= MaxTails || len(got.Tails) == 0 {
		t.Fatalf("kept %d tails; want fewer than %d (they cannot fit) but at least one", len(got.Tails), MaxTails)
	}
	for i := range got.Tails {
		if got.Tails[i] != r.Tails[i] {
			t.Fatalf("tail %d = %+v, want the newest tails kept in order (%+v)", i, got.Tails[i], r.Tails[i])
		}
	}
	// One more tail would not have fitted: the encoder keeps as many as fit.
	bigger := Record{Session: r.Session, Created: r.Created, Updated: r.Updated, Tails: r.Tails[:len(got.Tails)+1]}
	if n := len(bigger.appendTails(nil, bigger.Tails)); n <= MaxRecordBytes {
		t.Fatalf("%d tails would fit in %d bytes, but only %d were kept", len(bigger.Tails), n, len(got.Tails))
	}
	t.Logf("4 tails, random 64-byte IDs: kept %d in %d bytes", len(got.Tails), len(b))

	// Maximal IDs: even one tail of two unrelated 256-byte IDs does not
	// fit; the record keeps its session.
	r = Record{Session: KeyOf(strings.Repeat("s", 4096)), Created: now, Updated: now,
		Tails: []Tail{tail(1, TransportSSE, strings.Repeat("a", 256), strings.Repeat("b", 256), KindResponse, false)}}
	if b = r.AppendEncode(nil); len(b) > MaxRecordBytes {
		t.Fatalf("AppendEncode: %d bytes", len(b))
	}
	got, ok, _ = Decode(b)
	if !ok || got.Session != r.Session || len(got.Tails) != 0 {
		t.Fatalf("decoded %+v", got)
	}
}

// TestRecordAnySessionLength: a session ID of any length the spec allows
// encodes to the same record size (its 16-byte key).
func TestRecordAnySessionLength(t *testing.T) {
	var sizes []int
	for _, n := range []int{1, 36, 128, 129, 202, 1024, 8192} {
		r := Record{Session: KeyOf(strings.Repeat("j", n)), Created: now, Updated: now}
		b := r.AppendEncode([]byte("keep"))
		if string(b[:4]) != "keep" {
			t.Fatalf("%d-byte session: %q", n, b)
		}
		sizes = append(sizes, len(b))
	}
	for _, n := range sizes[1:] {
		if n != sizes[0] {
			t.Fatalf("encoded sizes %v: want one size for every session length", sizes)
		}
	}
}

// TestRecordEncodeOnlyDecodable: whatever a caller puts in a record, what
// AppendEncode writes decodes; a record it writes is never lost as corrupt.
func TestRecordEncodeOnlyDecodable(t *testing.T) {
	r := Record{Session: KeyOf("s-77")}
	for i := 0; i < MaxTails+3; i++ { // more tails than MaxTails, built by hand
		r.Tails = append(r.Tails, tail(uint32(i), TransportHTTP, fmt.Sprint("e-", i), "", KindResponse, false))
	}
	r.Tails[1].LastID = strings.Repeat("x", MaxEventIDBytes+1) // too long to keep
	r.Tails[2].PrevID = strings.Repeat("y", MaxEventIDBytes+1)
	b := r.AppendEncode(nil)
	got, ok, err := Decode(b)
	if err != nil || !ok {
		t.Fatalf("Decode of what AppendEncode wrote: ok %v, err %v", ok, err)
	}
	if len(got.Tails) == 0 || len(got.Tails) > MaxTails {
		t.Fatalf("decoded %d tails, want 1..%d", len(got.Tails), MaxTails)
	}
	if got.Tails[0] != r.Tails[0] {
		t.Errorf("newest tail %+v, want %+v", got.Tails[0], r.Tails[0])
	}
	for _, tl := range got.Tails {
		if len(tl.LastID) > MaxEventIDBytes || len(tl.PrevID) > MaxEventIDBytes {
			t.Errorf("kept a tail with an ID over MaxEventIDBytes: stream %d", tl.Stream)
		}
	}
}

func TestDecodeEmptyAndCorrupt(t *testing.T) {
	for _, b := range [][]byte{nil, {}, EmptySlot} {
		r, ok, err := Decode(b)
		if ok || err != nil || !recordsEqual(r, Record{}) {
			t.Errorf("Decode(%x) = %+v, %v, %v; want empty, false, nil", b, r, ok, err)
		}
	}
	valid := (&Record{Session: KeyOf("s-77"), Created: 1, Updated: 2, Tails: []Tail{
		tail(7, TransportHTTP, "e-104", "e-103", KindResponse, false)}}).AppendEncode(nil)
	corrupt := map[string][]byte{
		"version_0_with_more":   {0x00, 0x00},
		"version_1":             append([]byte{1}, valid[1:]...),
		"unknown_flags":         append([]byte{2, 1}, valid[2:]...),
		"only_version":          {0x02},
		"truncated_everywhere":  nil, // filled below
		"trailing_byte":         append(append([]byte{}, valid...), 0),
		"too_many_tails":        withKey([]byte{0x02, 0x00, 0x01, 0x02}, MaxTails+1),
		"session_key_short":     append([]byte{0x02, 0x00, 0x00, 0x00}, bytes.Repeat([]byte{'s'}, 15)...),
		"timestamp_over_32_bit": withKey([]byte{0x02, 0x00, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00}, 0x00),
		"uvarint_overflow":      {0x02, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"shared_longer_than_last": withKey([]byte{0x02, 0x00, 0x00, 0x00}, 0x01,
			0x01, 0x02, 0x01, 'a', 0x02, 0x00),
		"prev_longer_than_max": append(withKey([]byte{0x02, 0x00, 0x00, 0x00}, 0x01,
			0x01, 0x02, 0x01, 'a', 0x01, 0x80, 0x02), bytes.Repeat([]byte{'p'}, 256)...),
		"over_max_record_bytes": append([]byte{0x02}, bytes.Repeat([]byte{0}, MaxRecordBytes)...),
	}
	delete(corrupt, "truncated_everywhere")
	for name, b := range corrupt {
		if r, ok, err := Decode(b); err == nil || ok {
			t.Errorf("%s: Decode(%x) = %+v, %v, %v; want an error", name, b, r, ok, err)
		}
	}
	for i := 1; i < len(valid); i++ {
		if r, ok, err := Decode(valid[:i]); err == nil || ok {
			t.Errorf("Decode of the first %d bytes = %+v, %v, %v; want an error", i, r, ok, err)
		}
	}
}

// withKey returns head, a 16-byte session key, then rest: the frame of a
// version-2 record around hand-made bytes.
func withKey(head []byte, rest ...byte) []byte {
	k := KeyOf("s-77")
	return append(append(append([]byte{}, head...), k[:]...), rest...)
}

// TestDecodeAllocations: Decode's allocations do not depend on the bytes.
func TestDecodeAllocations(t *testing.T) {
	r := roundTripRecords()["4_tails_64_byte_ids"]
	b := r.AppendEncode(nil)
	// The tails slice, the session, and per tail the last ID, the rest of
	// the previous ID and their concatenation.
	const want = 2 + 3*MaxTails
	if n := testing.AllocsPerRun(100, func() { _, _, _ = Decode(b) }); n > want {
		t.Errorf("Decode of a 4-tail record allocates %v times, want at most %d", n, want)
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = Decode(EmptySlot) }); n != 0 {
		t.Errorf("Decode of an empty slot allocates %v times", n)
	}
	buf := make([]byte, 0, MaxRecordBytes)
	if n := testing.AllocsPerRun(100, func() { buf = r.AppendEncode(buf[:0]) }); n != 0 {
		t.Errorf("AppendEncode into a buffer with room allocates %v times", n)
	}
}

func TestObserve(t *testing.T) {
	var r Record
	r.Observe(1, TransportSSE, "e-1", "", KindOther, 10, Policy{})
	want := []Tail{tail(1, TransportSSE, "e-1", "", KindOther, false)}
	checkTails(t, "first observe", r, want)
	if r.Updated != 10 {
		t.Errorf("Updated = %d, want 10", r.Updated)
	}

	r.Observe(2, TransportHTTP, "e-2", "", KindResponse, 11, Policy{})
	r.Observe(1, TransportSSE, "e-3", "e-1", KindNotification, 12, Policy{})
	// Stream 1 moves to the front with its new tail; stream 2 follows.
	checkTails(t, "existing stream moves to front", r, []Tail{
		tail(1, TransportSSE, "e-3", "e-1", KindNotification, false),
		tail(2, TransportHTTP, "e-2", "", KindResponse, false),
	})

	for s := uint32(3); s <= 6; s++ {
		r.Observe(s, TransportHTTP, fmt.Sprint("e-", 10*s), "", KindResponse, 12+s, Policy{})
	}
	// Streams 1 and 2 are evicted: only the MaxTails newest stay.
	checkTails(t, "eviction beyond MaxTails", r, []Tail{
		tail(6, TransportHTTP, "e-60", "", KindResponse, false),
		tail(5, TransportHTTP, "e-50", "", KindResponse, false),
		tail(4, TransportHTTP, "e-40", "", KindResponse, false),
		tail(3, TransportHTTP, "e-30", "", KindResponse, false),
	})
	if r.Updated != 18 {
		t.Errorf("Updated = %d, want 18", r.Updated)
	}

	// The oldest tail, observed again, moves to the front; nothing is lost.
	r.Ack(3, 19)
	r.Observe(3, TransportHTTP, "e-31", "e-30", KindResponse, 20, Policy{})
	checkTails(t, "oldest moves to front", r, []Tail{
		tail(3, TransportHTTP, "e-31", "e-30", KindResponse, false),
		tail(6, TransportHTTP, "e-60", "", KindResponse, false),
		tail(5, TransportHTTP, "e-50", "", KindResponse, false),
		tail(4, TransportHTTP, "e-40", "", KindResponse, false),
	})

	// A middle tail moves to the front, the others keep their order.
	r.Observe(5, TransportHTTP, "e-51", "e-50", KindRequest, 21, Policy{})
	checkTails(t, "middle moves to front", r, []Tail{
		tail(5, TransportHTTP, "e-51", "e-50", KindRequest, false),
		tail(3, TransportHTTP, "e-31", "e-30", KindResponse, false),
		tail(6, TransportHTTP, "e-60", "", KindResponse, false),
		tail(4, TransportHTTP, "e-40", "", KindResponse, false),
	})

	// The front tail observed again stays in front.
	r.Observe(5, TransportHTTP, "e-52", "e-51", KindResponse, 22, Policy{})
	if r.Tails[0].LastID != "e-52" || len(r.Tails) != MaxTails {
		t.Errorf("front re-observe: %+v", r.Tails)
	}
}

func TestObserveLongIDs(t *testing.T) {
	var r Record
	long := strings.Repeat("x", MaxEventIDBytes+1)
	r.Observe(1, TransportSSE, long, "e-1", KindResponse, 10, Policy{})
	if len(r.Tails) != 0 || r.Updated != 0 {
		t.Fatalf("an over-long last ID was recorded: %+v", r)
	}
	r.Observe(1, TransportSSE, "e-2", long, KindResponse, 11, Policy{})
	checkTails(t, "over-long prev", r, []Tail{tail(1, TransportSSE, "e-2", "", KindResponse, false)})
	edge := strings.Repeat("y", MaxEventIDBytes)
	r.Observe(1, TransportSSE, edge, edge, KindResponse, 12, Policy{})
	checkTails(t, "IDs of exactly MaxEventIDBytes", r, []Tail{tail(1, TransportSSE, edge, edge, KindResponse, false)})
}

func TestAck(t *testing.T) {
	var r Record
	r.Observe(1, TransportSSE, "e-1", "", KindResponse, 10, Policy{})
	r.Observe(2, TransportSSE, "e-2", "", KindResponse, 11, Policy{})
	if r.Ack(3, 12) {
		t.Error("Ack of an unknown stream reported a change")
	}
	if r.Updated != 11 {
		t.Errorf("Ack of an unknown stream moved Updated to %d", r.Updated)
	}
	if !r.Ack(1, 13) {
		t.Error("first Ack reported no change")
	}
	if !r.Tails[1].Acked || r.Tails[0].Acked {
		t.Errorf("Ack(1) acked the wrong tail: %+v", r.Tails)
	}
	if r.Updated != 13 {
		t.Errorf("Updated = %d after Ack, want 13", r.Updated)
	}
	if r.Ack(1, 14) {
		t.Error("second Ack reported a change")
	}
	if r.Updated != 13 {
		t.Errorf("a no-op Ack moved Updated to %d", r.Updated)
	}
	// Ack does not reorder.
	if r.Tails[0].Stream != 2 {
		t.Errorf("Ack reordered the tails: %+v", r.Tails)
	}
}

// streams returns the Stream of every tail of r, newest first.
func streams(r *Record) []uint32 {
	var out []uint32
	for _, tl := range r.Tails {
		out = append(out, tl.Stream)
	}
	return out
}

// TestObserveCutResultOutlivesCleanCalls is issue 12's case: a stream cut
// after its result, then four more tool calls on the session that end
// cleanly. Under unknown_cursor: forward the unacknowledged result must stay
// (it is the one tail that can change a decision); under reinit every tail
// matters and the oldest goes.
func TestObserveCutResultOutlivesCleanCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		keep bool
	}{
		{"forward", Policy{}, true},
		{"reinit", Policy{Unknown: UnknownReinit}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Record
			r.Observe(1, TransportHTTP, "1_3", "1_2", KindResponse, 10, tc.p) // cut: never acked
			for s := uint32(2); s <= 5; s++ {
				r.Observe(s, TransportHTTP, fmt.Sprint(s, "_1"), fmt.Sprint(s, "_0"), KindResponse, 10+s, tc.p)
				r.Ack(s, 10+s)
			}
			d := Decide(TransportHTTP, "http:1_3", &r, Policy{Unknown: tc.p.Unknown})
			if got := d.Reason == ReasonDrainRace; got != tc.keep {
				t.Fatalf("tails %v: resume from the cut result decided %v, want drain race: %v", streams(&r), d.Reason, tc.keep)
			}
		})
	}
}

// TestObserveEvictionOrder: under unknown_cursor: forward, acknowledged tails
// go first, then out-of-scope ones, then the oldest.
func TestObserveEvictionOrder(t *testing.T) {
	var r Record
	p := Policy{}
	r.Observe(1, TransportHTTP, "a", "", KindResponse, 1, p)     // unacked, in scope: oldest
	r.Observe(2, TransportHTTP, "b", "", KindNotification, 2, p) // out of scope
	r.Observe(3, TransportHTTP, "c", "", KindResponse, 3, p)
	r.Ack(3, 3) // acknowledged
	r.Observe(4, TransportHTTP, "d", "", KindResponse, 4, p)
	for _, step := range []struct {
		stream uint32
		want   []uint32
	}{
		{5, []uint32{5, 4, 2, 1}}, // the acknowledged tail goes
		{6, []uint32{6, 5, 4, 1}}, // then the out-of-scope one
		{7, []uint32{7, 6, 5, 4}}, // then the oldest
	} {
		r.Observe(step.stream, TransportHTTP, fmt.Sprint("e", step.stream), "", KindResponse, step.stream, p)
		if got := streams(&r); fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Fatalf("after stream %d: tails %v, want %v", step.stream, got, step.want)
		}
	}
	// Priming events are out of scope even under unacked_scope: all.
	all := Policy{Scope: ScopeAll}
	r = Record{}
	r.Observe(1, TransportHTTP, "a", "", KindNotification, 1, all)
	r.Observe(2, TransportHTTP, "b", "", KindPriming, 2, all)
	r.Observe(3, TransportHTTP, "c", "", KindRequest, 3, all)
	r.Observe(4, TransportHTTP, "d", "", KindResponse, 4, all)
	r.Observe(5, TransportHTTP, "e", "", KindResponse, 5, all)
	if got := streams(&r); fmt.Sprint(got) != "[5 4 3 1]" {
		t.Fatalf("scope all: tails %v, want the priming tail evicted first", got)
	}
}

// TestObserveByteBudgetKeepsUnacked: when long IDs make the record overflow
// MaxRecordBytes, the same rule picks what goes, and the record fits.
func TestObserveByteBudgetKeepsUnacked(t *testing.T) {
	var r Record
	r.Session = KeyOf("s")
	id := func(c byte) string { return strings.Repeat(string(c), 200) }
	r.Observe(1, TransportHTTP, id('a'), "", KindResponse, 1, Policy{}) // unacked result
	r.Observe(2, TransportHTTP, id('b'), "", KindResponse, 2, Policy{})
	r.Ack(2, 2)
	r.Observe(3, TransportHTTP, id('c'), "", KindResponse, 3, Policy{})
	if got := streams(&r); fmt.Sprint(got) != "[3 1]" {
		t.Fatalf("tails %v, want [3 1]: the acknowledged tail goes to make room", got)
	}
	b := r.AppendEncode(nil)
	if len(b) > MaxRecordBytes {
		t.Fatalf("record of %d bytes", len(b))
	}
	if got, _, _ := Decode(b); len(got.Tails) != 2 {
		t.Fatalf("encoding dropped tails Observe kept: %d", len(got.Tails))
	}
}

func TestExpired(t *testing.T) {
	cases := []struct {
		updated, now, ttl uint32
		want              bool
	}{
		{100, 100, 10, false},
		{100, 110, 10, false}, // exactly ttl old: still live
		{100, 111, 10, true},
		{100, 99, 10, false}, // another worker's clock is a little ahead
		{0, math.MaxUint32, math.MaxUint32 - 1, true},
		{0, math.MaxUint32, math.MaxUint32, false},
		{100, 101, 0, true},
		{100, 100, 0, false},
	}
	for _, c := range cases {
		r := Record{Updated: c.updated, Created: 1}
		if got := r.Expired(c.now, c.ttl); got != c.want {
			t.Errorf("Updated %d, now %d, ttl %d: Expired = %v, want %v", c.updated, c.now, c.ttl, got, c.want)
		}
	}
}

func checkTails(t *testing.T, what string, r Record, want []Tail) {
	t.Helper()
	if len(r.Tails) != len(want) {
		t.Fatalf("%s: %d tails %+v, want %d %+v", what, len(r.Tails), r.Tails, len(want), want)
	}
	for i := range want {
		if r.Tails[i] != want[i] {
			t.Fatalf("%s: tail %d = %+v, want %+v", what, i, r.Tails[i], want[i])
		}
	}
}

// FuzzDecode: Decode never panics on arbitrary bytes; what it accepts
// re-encodes to a record that decodes identically; what it returns is
// bounded by the input.
func FuzzDecode(f *testing.F) {
	for _, r := range roundTripRecords() {
		b := r.AppendEncode(nil)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(EmptySlot)
	f.Add([]byte{0x01})
	f.Add(withKey([]byte{0x02, 0x00, 0x80, 0x80, 0x00}, 0x00))                         // non-minimal uvarint
	f.Add(withKey([]byte{0x02, 0xfe, 0x00, 0x00}, 0x01, 0x00, 0xff, 0x00, 0x00, 0x00)) // unused flag bits
	full := roundTripRecords()["4_tails_64_byte_ids"]
	fullEnc := full.AppendEncode(nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		r, ok, err := Decode(b)
		if !bytes.Equal(in, b) {
			t.Fatal("Decode modified its input")
		}
		// The Store's decode into reused scratch memory, which last held a
		// record with every tail set, agrees with Decode and keeps nothing
		// of b: its IDs are copies.
		var s Store
		s.scratch(0)
		s.decode(0, fullEnc)
		sok, serr := s.decode(0, b)
		if sok != ok || (serr == nil) != (err == nil) || ok && !recordsEqual(*s.scratch(0), r) {
			t.Fatalf("Store decode = %v, %v, %+v; Decode = %v, %v, %+v", sok, serr, *s.scratch(0), ok, err, r)
		}
		if ok {
			clear(b)
			if !recordsEqual(*s.scratch(0), r) {
				t.Fatalf("the Store's decoded record changed with its input: %+v", *s.scratch(0))
			}
			copy(b, in)
		}
		if err != nil || !ok {
			if ok {
				t.Fatal("Decode returned ok with an error")
			}
			if !recordsEqual(r, Record{}) {
				t.Fatalf("Decode failed but returned a record: %+v", r)
			}
			return
		}
		total := 0
		for _, tl := range r.Tails {
			total += len(tl.LastID) + len(tl.PrevID)
		}
		if total > 2*len(b) {
			t.Fatalf("decoded %d bytes of strings from %d input bytes", total, len(b))
		}
		if len(r.Tails) > MaxTails {
			t.Fatalf("decoded a record past the limits: %d tails", len(r.Tails))
		}
		for _, tl := range r.Tails {
			if len(tl.LastID) > MaxEventIDBytes || len(tl.PrevID) > MaxEventIDBytes {
				t.Fatalf("decoded an ID past MaxEventIDBytes")
			}
		}
		enc := r.AppendEncode(nil)
		if len(enc) > len(b) {
			t.Fatalf("re-encoding grew %d bytes to %d", len(b), len(enc))
		}
		r2, ok, err := Decode(enc)
		if err != nil || !ok {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !recordsEqual(r, r2) || r.HasOwner != r2.HasOwner || r.Owner != r2.Owner {
			t.Fatalf("re-encode changed the record:\n first %+v\nsecond %+v", r, r2)
		}
		// The canonical encoding is a fixed point.
		enc2 := r2.AppendEncode(nil)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not canonical: % x then % x", enc, enc2)
		}
	})
}

// TestDecodeRejectsOversized: a record longer than MaxRecordBytes is not
// something AppendEncode writes; accepting it would make a decoded record
// lose tails when written back.
func TestDecodeRejectsOversized(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	r := Record{Session: KeyOf(uuid), Created: now, Updated: now}
	for i := 0; i < MaxTails; i++ {
		r.Tails = append(r.Tails, tail(uint32(i), TransportSSE, randomID(rnd, 128), randomID(rnd, 128), KindResponse, false))
	}
	b := r.appendTails(nil, r.Tails) // the full record, no tail dropped
	if len(b) <= MaxRecordBytes {
		t.Fatalf("fixture is only %d bytes", len(b))
	}
	if got, ok, err := Decode(b); err == nil || ok {
		t.Fatalf("Decode accepted a %d-byte record with %d tails", len(b), len(got.Tails))
	}
}

// TestObserveLongIDs: every ID up to MaxEventIDBytes is recorded, even when
// it and its previous ID are too long to fit one record together (issue 15:
// IDs of 237–256 bytes used to leave the record empty); the previous ID is
// then dropped, and the last ID still decides.
func TestObserveLongIDPairs(t *testing.T) {
	for n := 200; n <= MaxEventIDBytes; n++ {
		last := strings.Repeat("a", n-1) + "1"
		prev := strings.Repeat("b", n)
		r := Record{Session: KeyOf("s"), Created: 1}
		if !r.Observe(3, TransportHTTP, last, prev, KindResponse, 2, Policy{}) {
			t.Fatalf("%d-byte ID: Observe reports no change", n)
		}
		b := r.AppendEncode(nil)
		got, ok, err := Decode(b)
		if !ok || err != nil || len(got.Tails) != 1 || got.Tails[0].LastID != last {
			t.Fatalf("%d-byte ID: decoded %+v, %v, %v; want its tail", n, got, ok, err)
		}
		if d := Decide(TransportHTTP, "http:"+last, &got, Policy{}); d.Reason != ReasonDrainRace {
			t.Fatalf("%d-byte ID: resume decided %v, want drain_race", n, d.Reason)
		}
	}
}
