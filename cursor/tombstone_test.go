package cursor

import (
	"fmt"
	"testing"
)

func TestTombstoneRoundTrip(t *testing.T) {
	k := KeyOf("s-77")
	for _, until := range []uint32{0, 1, 3600, 1 << 31, 1<<32 - 1} {
		b := appendTombstone(nil, k, until)
		gk, gu, ok := decodeTombstone(b)
		if !ok || gk != k || gu != until {
			t.Fatalf("round trip of until=%d: %x %d %v", until, gk, gu, ok)
		}
	}
	for _, b := range [][]byte{nil, EmptySlot, {'T'}, append([]byte{'X'}, appendTombstone(nil, k, 5)[1:]...),
		appendTombstone(nil, k, 5)[:17], append(appendTombstone(nil, k, 5), 0)} {
		if _, _, ok := decodeTombstone(b); ok {
			t.Errorf("decodeTombstone(%x) accepted", b)
		}
	}
}

// FuzzDecodeTombstone: arbitrary slot bytes never panic, and what is
// accepted re-encodes, no longer (a non-minimal uvarint shrinks), to bytes
// that decode the same.
func FuzzDecodeTombstone(f *testing.F) {
	f.Add(appendTombstone(nil, KeyOf("s"), 3600))
	f.Add([]byte{'T'})
	f.Add(EmptySlot)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, until, ok := decodeTombstone(b)
		if !ok {
			return
		}
		again := appendTombstone(nil, k, until)
		k2, until2, ok := decodeTombstone(again)
		if !ok || k2 != k || until2 != until || len(again) > len(b) {
			t.Fatalf("accepted %x, re-encodes to %x (%v)", b, again, ok)
		}
	})
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
			precious := func(tl Tail) bool { return !tl.Acked && p.InScope(tl.LastKind) }
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
