package headermap

import (
	"slices"
	"testing"
)

// TestScanRoundTrip walks what Serialize wrote back to the same entries,
// repeated and empty ones too.
func TestScanRoundTrip(t *testing.T) {
	for _, hs := range [][][2]string{
		nil,
		{{":path", "/mcp"}},
		{{":path", "/mcp"}, {":method", "GET"}, {"last-event-id", "a"}, {"last-event-id", ""}, {"", "x"}},
	} {
		w, ok := Start(Serialize(hs))
		if !ok {
			t.Fatalf("%q: Start failed", hs)
		}
		var got [][2]string
		for k, v, ok := w.Next(); ok; k, v, ok = w.Next() {
			got = append(got, [2]string{string(k), string(v)})
		}
		if !slices.Equal(got, hs) || !w.End() {
			t.Errorf("walked %q (end %v), want %q", got, w.End(), hs)
		}
	}
}

// TestScanMalformed: counts and sizes that run past the bytes stop the walk
// and say so, whatever the sizes claim; nothing panics.
func TestScanMalformed(t *testing.T) {
	good := Serialize([][2]string{{":path", "/mcp"}, {"mcp-session-id", "s-1"}})
	if _, ok := Start(good[:3]); ok {
		t.Error("a 3-byte map started")
	}
	if _, ok := Start([]byte{9, 0, 0, 0, 1, 0, 0, 0}); ok {
		t.Error("a count of 9 with room for none started")
	}
	for cut := 4 + 16; cut < len(good); cut++ {
		w, ok := Start(good[:cut])
		if !ok {
			t.Fatalf("cut at %d: the size table is whole, Start must start", cut)
		}
		n := 0
		for _, _, ok := w.Next(); ok; _, _, ok = w.Next() {
			n++
		}
		if n == 2 || w.End() {
			t.Errorf("cut at %d: %d entries, end %v", cut, n, w.End())
		}
	}
	for _, c := range []struct {
		name string
		at   int
		b    byte
	}{{"a key size near 2^32", 4, 0xff}, {"a missing NUL after the key", 4 + 16 + len(":path"), 'x'}} {
		bad := slices.Clone(good)
		if c.at == 4 {
			bad[4], bad[5], bad[6], bad[7] = 0xff, 0xff, 0xff, 0xff
		} else {
			bad[c.at] = c.b
		}
		w, _ := Start(bad)
		if _, _, ok := w.Next(); ok || w.End() {
			t.Errorf("%s was walked", c.name)
		}
	}
}
