package cursor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
)

func TestTombstoneBucketRoundTrip(t *testing.T) {
	var b bucket
	for i := 0; i <= bucketEntries; i++ {
		b.n = i
		for j := 0; j < i; j++ {
			b.e[j] = tombEntry{session: KeyOf(fmt.Sprint("s-", j)).hi(), principal: PrincipalOf(fmt.Sprint("p-", j)), until: []uint32{0, 1, 3600, 1 << 31, 1<<32 - 1}[j%5]}
		}
		enc := appendBucket(nil, &b)
		if len(enc) != 1+i*tombEntryBytes || len(enc) > MaxBucketBytes {
			t.Fatalf("%d entries encode to %d bytes", i, len(enc))
		}
		var got bucket
		if !decodeBucket(enc, &got) || got != b {
			t.Fatalf("round trip of %d entries: %+v, want %+v", i, got, b)
		}
	}
	one := appendBucket(nil, &bucket{n: 1, e: [bucketEntries]tombEntry{{session: 1, principal: 2, until: 3}}})
	full := appendBucket(nil, &bucket{n: bucketEntries})
	for _, v := range [][]byte{nil, EmptySlot, {'T'}, one[:len(one)-1], append(one, 0), append(full, one[1:]...),
		append([]byte{'X'}, one[1:]...)} {
		var got bucket
		if decodeBucket(v, &got) {
			t.Errorf("decodeBucket(%x) accepted", v)
		}
	}
}

// FuzzDecodeTombstone: arbitrary bucket bytes never panic; what decodeBucket
// accepts re-encodes to exactly the same bytes (the format has one encoding
// per bucket), and TombstonesOf finds, for a session, exactly the entries of
// the decoded bucket that are its.
func FuzzDecodeTombstone(f *testing.F) {
	f.Add(appendBucket(nil, &bucket{n: 2, e: [bucketEntries]tombEntry{{session: KeyOf("s").hi(), principal: NoPrincipal, until: 3600}, {session: 7, principal: 8, until: 9}}}))
	f.Add([]byte{'B'})
	f.Add(EmptySlot)
	full := bucket{n: bucketEntries}
	for i := range full.e {
		full.e[i] = tombEntry{session: KeyOf(fmt.Sprint("s-", i)).hi(), principal: Principal(i), until: uint32(i)}
	}
	f.Add(appendBucket(nil, &full)) // a full bucket
	f.Fuzz(func(t *testing.T, v []byte) {
		var b bucket
		if !decodeBucket(v, &b) {
			return
		}
		if again := appendBucket(nil, &b); !bytes.Equal(again, v) {
			t.Fatalf("accepted %x, re-encodes to %x", v, again)
		}
		if b.n == 0 {
			return
		}
		// TombstonesOf finds exactly the decoded entries of the first
		// entry's session, and of a session whose fingerprint differs from
		// it in the first byte only (by the value's last byte, at least 1).
		f := newFakeShared()
		s := newStore(f, 4, 3600)
		f.m[string(s.slotKey(nil, tableTombstones, 0))] = fakeEntry{value: v, cas: 1}
		for _, fp := range []uint64{b.e[0].session, b.e[0].session ^ uint64(v[len(v)-1]|1)} {
			var k SessionKey
			binary.LittleEndian.PutUint64(k[8:], fp) // bucketOf(k) = 0 with one bucket
			ts, err := s.TombstonesOf(k)
			if err != nil {
				t.Fatal(err)
			}
			var want Tombstones
			for i := 0; i < b.n; i++ {
				if b.e[i].session == fp {
					want.principal[want.n], want.until[want.n] = b.e[i].principal, b.e[i].until
					want.n++
				}
			}
			if ts == nil {
				ts = &Tombstones{}
			}
			// (The store's scratch keeps stale entries past n.)
			if ts.n != want.n || !slices.Equal(ts.principal[:ts.n], want.principal[:want.n]) || !slices.Equal(ts.until[:ts.n], want.until[:want.n]) {
				t.Fatalf("scan of %x found %+v, decode %+v", fp, *ts, want)
			}
		}
	})
}

// TestTombstonesOfFullBucket: on a full bucket, a session none of whose
// entries' fingerprints starts with its first byte has no tombstone, nor
// does one whose fingerprint shares an entry's first byte only; a session
// with entries finds each of them.
func TestTombstonesOfFullBucket(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 4, 3600) // one bucket: every session's
	mine := KeyOf("mine")
	var full bucket
	for i := range full.e {
		// Entries 0 and 1 start with mine's first byte (0 is mine's own
		// fingerprint, 1 differs in its second byte); the others start
		// with another byte.
		fp := mine.hi() ^ uint64(i)<<8
		if i >= 2 {
			fp = mine.hi() ^ uint64(i)<<56 ^ 0x55 // another first byte
		}
		full.e[i] = tombEntry{session: fp, principal: Principal(100 + i), until: uint32(1000 + i)}
	}
	full.n = bucketEntries
	v := appendBucket(nil, &full)
	if len(v) != MaxBucketBytes {
		t.Fatalf("a full bucket encodes to %d bytes, want MaxBucketBytes %d", len(v), MaxBucketBytes)
	}
	f.m[string(s.slotKey(nil, tableTombstones, 0))] = fakeEntry{value: v, cas: 1}

	var none SessionKey // a fingerprint whose first byte no entry has
	binary.LittleEndian.PutUint64(none[8:], mine.hi()^0xAA)
	var sameFirst SessionKey // entry 1's first byte, another fingerprint
	binary.LittleEndian.PutUint64(sameFirst[8:], mine.hi()^1<<16)
	for name, k := range map[string]SessionKey{"no first byte in common": none, "first byte in common": sameFirst} {
		if ts, err := s.TombstonesOf(k); err != nil || ts != nil {
			t.Errorf("%s: TombstonesOf = %+v, %v; want none", name, ts, err)
		}
	}
	ts, err := s.TombstonesOf(mine)
	if err != nil || ts == nil || ts.n != 1 || ts.principal[0] != 100 || ts.until[0] != 1000 {
		t.Fatalf("mine: TombstonesOf = %+v, %v; want its one entry (principal 100, until 1000)", ts, err)
	}
}

// FuzzObserveEviction drives a record with arbitrary streams, kinds and
// acknowledgements, and checks the eviction rule of Record.Observe: the
// record stays within its bounds, the newest tail is the one just observed,
// and under unknown_cursor: forward an unacknowledged in-scope tail is
// evicted only when every other candidate is one too.
func FuzzObserveEviction(f *testing.F) {
	f.Add([]byte{0x01, 0x82, 0x03, 0x84, 0x05, 0x06}, false, false)
	f.Add([]byte{0x09, 0x11, 0x19, 0x21, 0x29, 0x31, 0x39}, true, true)
	f.Fuzz(func(t *testing.T, ops []byte, reinit, all bool) {
		p := Policy{}
		if reinit {
			p.Unknown = UnknownReinit
		}
		if all {
			p.Scope = ScopeAll
		}
		r := Record{Session: KeyOf("s")}
		for i, op := range ops {
			stream := uint32(op&7) + 1
			if op&0x80 != 0 {
				r.Ack(stream, uint32(i))
				continue
			}
			kind := EventKind(op >> 3 & 7 % 5)
			before := append([]Tail(nil), r.Tails...)
			id := fmt.Sprint("e-", i)
			if !r.Observe(stream, TransportHTTP, id, "", kind, uint32(i), p) {
				t.Fatal("a short ID was not recorded")
			}
			if len(r.Tails) > MaxTails || len(r.Tails) == 0 || r.Tails[0].Stream != stream || r.Tails[0].LastID != id {
				t.Fatalf("after observing stream %d: tails %+v", stream, r.Tails)
			}
			if n := r.encodedLen(); n > MaxRecordBytes && len(r.Tails) > 1 {
				t.Fatalf("record of %d bytes kept %d tails", n, len(r.Tails))
			}
			if p.Unknown == UnknownReinit {
				continue
			}
			precious := func(tl Tail) bool { return !tl.Acked && (tl.inScope(true, p) || tl.inScope(false, p)) }
			for _, old := range before {
				if old.Stream == stream || r.tailIndex(old.Stream) >= 0 || !precious(old) {
					continue
				}
				// A precious tail went: nothing cheaper may remain.
				for _, kept := range r.Tails[1:] {
					if !precious(kept) {
						t.Fatalf("evicted unacked in-scope stream %d while keeping %+v", old.Stream, kept)
					}
				}
			}
		}
	})
}
