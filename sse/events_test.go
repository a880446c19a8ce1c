package sse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// TestEventsOutliveReusedChunk feeds a stream through one buffer that the
// caller overwrites after each call, as a reader loop does: the events must
// not refer to the chunk.
func TestEventsOutliveReusedChunk(t *testing.T) {
	in := "id: e-1\nevent: endpoint\ndata: /messages?sessionId=s-9\n\n" +
		"id: e-2\nevent: message\ndata: " + notifJSON + "\ndata: " + respJSON + "\n\n" +
		"id: e-3\ndata: " + strings.Repeat("y", DataPrefixBytes+10) + "\n\n"
	for _, mint := range []bool{false, true} {
		for size := 1; size <= 40; size++ {
			r := NewRewriter(cursor.TransportHTTP, 0)
			r.SetMint(mint)
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
			if want := strings.ReplaceAll(in, "id: e-", "id: http:e-"); !mint && string(out) != want {
				t.Fatalf("size %d: output %q, want %q", size, out, want)
			}
			want := []Event{
				{ID: []byte("e-1"), HasID: true, Type: []byte("endpoint"), Data: []byte("/messages?sessionId=s-9")},
				{ID: []byte("e-2"), HasID: true, Type: []byte("message"), Data: []byte(notifJSON + "\n" + respJSON)},
				{ID: []byte("e-3"), HasID: true, Data: []byte(strings.Repeat("y", DataPrefixBytes)), Truncated: true},
			}
			if !eventsEqual(got, want) {
				t.Fatalf("size %d, mint %v:\nevents %s\nwant   %s", size, mint, dumpEvents(got), dumpEvents(want))
			}
		}
	}
}

// TestEventSlicesCapped checks that appending to an event's slices never
// writes into the chunk or into another event.
func TestEventSlicesCapped(t *testing.T) {
	chunk := []byte("id: a\nevent: x\ndata: 1\n\nid: b\nevent: y\ndata: 2\n\n")
	orig := bytes.Clone(chunk)
	r := NewRewriter(cursor.TransportSSE, 0)
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

// TestTailEvents checks that TailEvents keeps the last two events with an
// ID and everything after the first of them.
func TestTailEvents(t *testing.T) {
	ev := func(id string) Event { return Event{ID: []byte(id), HasID: id != ""} }
	for _, tc := range []struct {
		ids  []string
		want int // events kept, from the end
	}{
		{nil, 0},
		{[]string{""}, 1},
		{[]string{"a"}, 1},
		{[]string{"a", "", "b", ""}, 4},
		{[]string{"a", "b", "c"}, 2},
		{[]string{"a", "b", "", "c", "", ""}, 5},
	} {
		var evs []Event
		for _, id := range tc.ids {
			evs = append(evs, ev(id))
		}
		if got := TailEvents(evs); len(got) != tc.want || tc.want > 0 && &got[0] != &evs[len(evs)-tc.want] {
			t.Errorf("TailEvents(%q) keeps %d events, want the last %d", tc.ids, len(got), tc.want)
		}
	}
}
