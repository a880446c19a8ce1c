package sse

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// lastIDInputs are the streamCases plus events the plugin reads Type and
// Data of (legacy endpoint events) and a stretch of typical traffic.
func lastIDInputs() [][]byte {
	var ins [][]byte
	for _, tc := range streamCases {
		ins = append(ins, []byte(tc.in))
	}
	ins = append(ins,
		[]byte("event: endpoint\ndata: /messages?sessionId=s-1\n\nid: e-1\nevent: message\ndata: "+respJSON+"\n\n"),
		[]byte("id: e-1\nevent: endpoint\r\ndata: /messages?\ndata: sessionId=s-2\r\n\r\n: ping\n\nid: e-2\ndata: "+notifJSON+"\n\n"),
		mcpStream(20),
	)
	return ins
}

// TestClassifyLastIDOnlyEveryChunking checks the mode the plugin runs the
// rewriter in against full classification, under every two-chunk split and
// random splits: the same bytes, tags and events (ID, Type, Data,
// Truncated), the same kind for each call's last event with an ID, and
// KindOther for every other event.
func TestClassifyLastIDOnlyEveryChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, in := range lastIDInputs() {
		var splits [][][]byte
		for i := 0; i <= len(in) && i <= 600; i++ {
			splits = append(splits, splitAt(in, i))
		}
		for range 20 {
			splits = append(splits, randomSplit(in, rng))
		}
		for _, chunks := range splits {
			compareLastIDOnly(t, chunks, false)
			compareLastIDOnly(t, chunks, true)
		}
	}
}

// compareLastIDOnly runs chunks through two Rewriters, one classifying
// every event and one only the last with an ID of each call (minting or
// not: a minted cursor's kind comes from ResponseKind either way), and
// compares them.
func compareLastIDOnly(t *testing.T, chunks [][]byte, mint bool) {
	t.Helper()
	full, lazy := NewRewriter(cursor.TransportSSE, 0), NewRewriter(cursor.TransportSSE, 0)
	full.SetMint(mint)
	lazy.SetMint(mint)
	lazy.ClassifyLastIDOnly(true)
	for i, c := range chunks {
		eos := i == len(chunks)-1
		a, ca := full.Rewrite(nil, c, eos)
		b, cb := lazy.Rewrite(nil, c, eos)
		if !bytes.Equal(a, b) || ca != cb || full.Tagged() != lazy.Tagged() || full.Overflowed() != lazy.Overflowed() {
			t.Fatalf("chunks %q, call %d: output %q changed=%v tagged=%d, lastIDOnly %q changed=%v tagged=%d",
				chunks, i, a, ca, full.Tagged(), b, cb, lazy.Tagged())
		}
		ea, eb := full.Events(), lazy.Events()
		last := -1
		for j := range eb {
			if eb[j].HasID {
				last = j
			}
		}
		want := make([]Event, len(ea))
		copy(want, ea)
		for j := range want {
			if j != last {
				want[j].Kind = cursor.KindOther
			}
		}
		if !eventsEqual(eb, want) {
			t.Fatalf("chunks %q, call %d:\nevents %s\nwant   %s", chunks, i, dumpEvents(eb), dumpEvents(want))
		}
	}
}

// TestEventsOutliveReusedChunk feeds a stream through one buffer that the
// caller overwrites after each call, as a reader loop does: the values of
// an event still being built when a call returns must have been copied.
func TestEventsOutliveReusedChunk(t *testing.T) {
	in := "id: e-1\nevent: endpoint\ndata: /messages?sessionId=s-9\n\n" +
		"id: e-2\nevent: message\ndata: " + notifJSON + "\ndata: " + respJSON + "\n\n" +
		"id: e-3\ndata: " + strings.Repeat("y", DataPrefixBytes+10) + "\n\n"
	for _, lastIDOnly := range []bool{false, true} {
		for size := 1; size <= 40; size++ {
			r := NewRewriter(cursor.TransportHTTP, 0)
			r.ClassifyLastIDOnly(lastIDOnly)
			buf := make([]byte, size)
			var out []byte
			var got []Event
			for rest := in; len(rest) > 0; {
				n := copy(buf, rest)
				rest = rest[n:]
				out, _ = r.Rewrite(out, buf[:n], len(rest) == 0)
				for _, e := range r.Events() {
					e.ID, e.Type, e.Data = bytes.Clone(e.ID), bytes.Clone(e.Type), bytes.Clone(e.Data)
					got = append(got, e)
				}
				for i := range buf {
					buf[i] = '#'
				}
			}
			if want := strings.ReplaceAll(in, "id: e-", "id: http:e-"); string(out) != want {
				t.Fatalf("size %d: output %q, want %q", size, out, want)
			}
			want := []Event{
				{ID: []byte("e-1"), HasID: true, Type: []byte("endpoint"), Data: []byte("/messages?sessionId=s-9")},
				{ID: []byte("e-2"), HasID: true, Type: []byte("message"), Data: []byte(notifJSON + "\n" + respJSON)},
				{ID: []byte("e-3"), HasID: true, Data: []byte(strings.Repeat("y", DataPrefixBytes)), Truncated: true},
			}
			for i := range got {
				want[i].Kind = got[i].Kind // kinds are checked elsewhere
			}
			if !eventsEqual(got, want) {
				t.Fatalf("size %d, lastIDOnly %v:\nevents %s\nwant   %s", size, lastIDOnly, dumpEvents(got), dumpEvents(want))
			}
		}
	}
}

// TestEventSlicesCapped checks that appending to an event's slices, which
// may be spans of the chunk, never writes into the chunk.
func TestEventSlicesCapped(t *testing.T) {
	chunk := []byte("id: a\nevent: x\ndata: 1\n\nid: b\nevent: y\ndata: 2\n\n")
	orig := bytes.Clone(chunk)
	r := NewRewriter(cursor.TransportSSE, 0)
	r.ClassifyLastIDOnly(true)
	r.Rewrite(nil, chunk, false)
	evs := r.Events()
	if len(evs) != 2 {
		t.Fatalf("events %s", dumpEvents(evs))
	}
	for _, e := range evs {
		_ = append(e.ID, "XX"...)
		_ = append(e.Type, "XX"...)
		_ = append(e.Data, "XX"...)
	}
	if !bytes.Equal(chunk, orig) {
		t.Fatalf("appending to events changed the chunk: %q", chunk)
	}
	if string(evs[0].Type) != "x" || string(evs[1].ID) != "b" || string(evs[1].Data) != "2" {
		t.Fatalf("events %s", dumpEvents(evs))
	}
}

// TestNoStaleEvents checks that event slots a call leaves over, and all of
// them after Reset, no longer refer to an earlier chunk, which the
// Rewriter must not keep alive.
func TestNoStaleEvents(t *testing.T) {
	r := NewRewriter(cursor.TransportSSE, 0)
	r.ClassifyLastIDOnly(true)
	r.Rewrite(nil, []byte("id: a\ndata: 1\n\nid: b\ndata: 2\n\nid: c\ndata: 3\n\n"), false)
	if len(r.Events()) != 3 {
		t.Fatalf("events %s", dumpEvents(r.Events()))
	}
	checkZero := func(when string, evs []Event) {
		t.Helper()
		for i, e := range evs {
			if e.ID != nil || e.Type != nil || e.Data != nil {
				t.Fatalf("%s: slot %d still holds %s", when, i, dumpEvents([]Event{e}))
			}
		}
	}
	r.Rewrite(nil, []byte("id: d\ndata: 4\n\n"), false)
	evs := r.Events()
	if len(evs) != 1 || string(evs[0].ID) != "d" || string(evs[0].Data) != "4" {
		t.Fatalf("events %s", dumpEvents(evs))
	}
	checkZero("after a call with fewer events", evs[1:cap(evs)])
	r.Rewrite(nil, []byte("id: e\ndata: 5\n\n"), false)
	r.Reset(cursor.TransportSSE, 0)
	checkZero("after Reset", r.events[:cap(r.events)])
}

// FuzzClassifyLastIDOnly compares the two classification modes on random
// input under random chunkings (drawn from seed), tagging in place and
// minting.
func FuzzClassifyLastIDOnly(f *testing.F) {
	for _, in := range lastIDInputs() {
		f.Add(in, uint64(len(in)))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		compareLastIDOnly(t, randomSplit(in, rng), false)
		compareLastIDOnly(t, randomSplit(in, rng), true)
	})
}
