package cursor

import "testing"

// TestOneSequence: the shared-allocator rule of Record.sight on the ID shapes
// the SDKs and the seed use.
func TestOneSequence(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"e-104", "e-105", true},   // the seed: one allocator for both transports
		{"104", "231", true},       // mcp-go: one decimal sequence
		{"e-104", "e-104", false},  // the same event, not a sequence
		{"e-104", "e-0104", false}, // the same number
		{"s1_4", "s2_5", false},    // the Go SDK: IDs per stream
		{"abc", "abd", false},      // no digits
		{"_GET_stream_1764600000001_9f3a", "_GET_stream_1764600000002_9f3b", false},             // TypeScript: a random tail
		{"c41d8e27-5a6f-4f93-b0d2-7e38a9c1f456", "3f2c9a4e-8d71-4b0e-a6c5-1e9d7f204b88", false}, // Python: UUIDs
	} {
		if got := oneSequence(c.a, c.b); got != c.want {
			t.Errorf("oneSequence(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestSighting: writing a tail reports a session that already has a tail of
// the other transport here, and whether their IDs share one sequence — each
// once per stream.
func TestSighting(t *testing.T) {
	s := &Store{Data: newFakeShared(), Slots: 16, TTL: 3600}
	k := KeyOf("s-77")
	write := func(stream uint32, tr Transport, id string) Sighting {
		t.Helper()
		var tl StreamTail
		tl.Reset(stream, tr)
		tl.Add([]byte(id), KindResponse)
		if err := s.RecordTail(k, &tl, Policy{}, 10); err != nil {
			t.Fatal(err)
		}
		return tl.Sighted()
	}
	if got := write(1, TransportSSE, "e-104"); got != (Sighting{}) {
		t.Fatalf("first transport: %+v", got)
	}
	if got := write(2, TransportSSE, "e-106"); got != (Sighting{}) {
		t.Fatalf("same transport again: %+v", got)
	}
	if got := write(3, TransportHTTP, "e-105"); got != (Sighting{Bridged: true, SharedAllocator: true}) {
		t.Fatalf("other transport, one sequence: %+v", got)
	}
	other := KeyOf("s-78")
	var tl StreamTail
	tl.Reset(4, TransportSSE)
	tl.Add([]byte("e-1"), KindResponse)
	if err := s.RecordTail(other, &tl, Policy{}, 10); err != nil {
		t.Fatal(err)
	}
	tl.Reset(5, TransportHTTP)
	tl.Add([]byte("9x2k_1"), KindResponse)
	if err := s.RecordTail(other, &tl, Policy{}, 10); err != nil {
		t.Fatal(err)
	}
	if got := tl.Sighted(); got != (Sighting{Bridged: true}) {
		t.Fatalf("other transport, own IDs: %+v", got)
	}
	tl.Add([]byte("9x2k_2"), KindResponse)
	if err := s.RecordTail(other, &tl, Policy{}, 10); err != nil {
		t.Fatal(err)
	}
	if got := tl.Sighted(); got != (Sighting{}) {
		t.Fatalf("reported twice in one stream: %+v", got)
	}
}
