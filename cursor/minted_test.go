package cursor

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestMintedWorkedExample(t *testing.T) {
	got := string(AppendMinted(nil, TransportHTTP, []byte("abc_7"), []byte("abc_6"), KindResponse))
	if got != "http:~1r5.4.abc_76" {
		t.Fatalf("AppendMinted = %q, want the doc comment's http:~1r5.4.abc_76", got)
	}
	c, ok := ParseCursor(got)
	if !ok || c.Transport != TransportHTTP || c.ID != "abc_7" || !c.Minted || c.Kind != KindResponse || c.Prev() != "abc_6" {
		t.Fatalf("ParseCursor(%q) = %+v (prev %q), %v", got, c, c.Prev(), ok)
	}
}

func TestMintedPlainForOtherKinds(t *testing.T) {
	for _, k := range []EventKind{KindOther, KindRequest, KindNotification, KindPriming} {
		if got := string(AppendMinted(nil, TransportSSE, []byte("e-104"), []byte("e-103"), k)); got != "sse:e-104" {
			t.Fatalf("kind %v: AppendMinted = %q, want the plain sse:e-104", k, got)
		}
	}
}

// mintIDs hold the marker characters, digits, colons and prefixes that a
// careless format would mistake for its own fields.
var mintIDs = []string{
	"1", "e-104", "~", "~1", "~1r5.4.abc_76", "~2x", "http:~1r1.0.x", "sse:",
	"1.2.", "0.0.", ".", "::", "9999999", "a~1r", "日本", strings.Repeat("z", 5000),
}

func TestMintedRoundTrip(t *testing.T) {
	for _, tr := range []Transport{TransportSSE, TransportHTTP} {
		for _, id := range mintIDs {
			for _, prev := range append([]string{""}, mintIDs...) {
				for _, k := range []EventKind{KindResponse, KindError, KindNotification, KindPriming} {
					b := AppendMinted(nil, tr, []byte(id), []byte(prev), k)
					c, ok := ParseCursor(string(b))
					if !ok || c.Transport != tr || c.ID != id {
						t.Fatalf("ParseCursor(%q) = %+v, %v; want %v, %q", b, c, ok, tr, id)
					}
					if k.IsResponse() {
						if !c.Minted || c.Kind != k || c.Prev() != prev || c.HasPrev() != (prev != "") {
							t.Fatalf("ParseCursor(%q) = %+v prev %q; want kind %v prev %q", b, c, c.Prev(), k, prev)
						}
					} else if c.Kind.IsResponse() || c.HasPrev() {
						t.Fatalf("ParseCursor(%q) of a %v event says %+v", b, k, c)
					}
				}
			}
		}
	}
}

func TestParseCursorDamaged(t *testing.T) {
	for _, in := range []string{
		"http:~1", "http:~1r", "http:~1r5", "http:~1r5.", "http:~1r5.4", "http:~1r5.4.", "http:~1o3.1.~x",
		"http:~1r05.4.abc_7", "http:~1r5.6.abc_7", "http:~1x5.4.abc_7", "http:~2r5.4.abc_7",
		"http:~1r0.0.", "http:~1o1.0.~x", "http:~1r99999999.0.x", "http:~1r-1.0.x",
	} {
		c, ok := ParseCursor(in)
		if !ok || c.Minted || c.Kind != KindOther || c.HasPrev() {
			t.Fatalf("ParseCursor(%q) = %+v, %v; want a plain cursor", in, c, ok)
		}
		if _, rest := SplitTagged(in); c.ID != rest {
			t.Fatalf("ParseCursor(%q).ID = %q, want the whole rest %q", in, c.ID, rest)
		}
	}
	for _, in := range []string{"http:a\rb", "http:~1r1.0.\n", "sse:\x00", "x\r"} {
		if _, ok := ParseCursor(in); ok {
			t.Fatalf("ParseCursor(%q) accepted a control byte", in)
		}
	}
}

// TestParseCursorTrimmed: a minted cursor that ends in whitespace comes
// back without it (HTTP trims header values, the Go SDK's reader field
// values); it still reads as minted, and the IDs it names are the upstream's
// trimmed as the client would have sent them without the guard.
func TestParseCursorTrimmed(t *testing.T) {
	for _, tc := range []struct{ id, prev, sent, wantID, wantPrev string }{
		{"7 ", "", "http:~1r2.0.7", "7", ""},
		{"7\t \t", "", "http:~1r4.0.7", "7", ""},
		{"abc_7 ", "abc_", "http:~1r6.4.abc_7", "abc_7", "abc_"},
		{"7 ", "7  ", "http:~1r2.2.7", "7", "7"},
		{"8", "7 ", "http:~1r1.0.87", "8", "7"},
		{"~x ", "", "http:~1o3.0.~x", "~x", ""},
	} {
		k := KindResponse
		if tc.id[0] == '~' {
			k = KindOther
		}
		b := string(AppendMinted(nil, TransportHTTP, []byte(tc.id), []byte(tc.prev), k))
		if got := strings.TrimRight(b, " \t"); got != tc.sent {
			t.Fatalf("AppendMinted(%q, %q) = %q, trimmed %q; want %q", tc.id, tc.prev, b, got, tc.sent)
		}
		c, ok := ParseCursor(tc.sent)
		if !ok || !c.Minted || c.Kind != k || c.ID != tc.wantID || c.Prev() != tc.wantPrev {
			t.Fatalf("ParseCursor(%q) = %+v (prev %q), %v; want minted %v %q prev %q", tc.sent, c, c.Prev(), ok, k, tc.wantID, tc.wantPrev)
		}
	}
}

func TestParseCursorAllocs(t *testing.T) {
	in := "http:~1r5.4.abc_76"
	if n := testing.AllocsPerRun(100, func() { ParseCursor(in) }); n != 0 {
		t.Fatalf("ParseCursor allocates %v times", n)
	}
}

func FuzzParseCursor(f *testing.F) {
	f.Add("http:~1r5.4.abc_76", "abc_7", "abc_6")
	f.Add("sse:e-104", "~1", "")
	f.Fuzz(func(t *testing.T, in, id, prev string) {
		// Any input: no panic, and the ID is a substring of the input.
		if c, ok := ParseCursor(in); ok && !strings.Contains(in, c.ID) {
			t.Fatalf("ParseCursor(%q).ID = %q is not part of the cursor", in, c.ID)
		}
		// Any IDs: minting round-trips.
		for _, k := range []EventKind{KindResponse, KindError, KindOther} {
			b := AppendMinted(nil, TransportHTTP, []byte(id), []byte(prev), k)
			c, ok := ParseCursor(string(b))
			if id == "" || strings.ContainsAny(id+prev, "\r\n\x00") {
				continue
			}
			if !ok || c.ID != id || k.IsResponse() && (c.Kind != k || c.Prev() != prev) {
				t.Fatalf("round trip of %q/%q/%v: %q -> %+v, %v", id, prev, k, b, c, ok)
			}
			// Trimmed on the way back (HTTP's spaces and tabs, the Go
			// SDK's TrimSpace): the IDs it names are the same, trimmed.
			for _, trim := range []func(string) string{trimOWS, trimSpace} {
				if !NeedsMint([]byte(id), k) || trim(id) == "" || !utf8.ValidString(id) || !utf8.ValidString(prev) {
					continue // (a rune cut between id and prev may trim as space)
				}
				c, ok := ParseCursor(trim(string(b)))
				if !ok || !c.Minted || trim(c.ID) != trim(id) || k.IsResponse() && (c.Kind != k || trim(c.Prev()) != trim(prev)) {
					t.Fatalf("trimmed round trip of %q/%q/%v: %q -> %+v (prev %q), %v", id, prev, k, trim(string(b)), c, c.Prev(), ok)
				}
			}
		}
	})
}

func trimOWS(s string) string   { return strings.TrimRight(s, " \t") }
func trimSpace(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// TestParseCursorRefusesOnlyNULLFCR: of all 256 byte values, anywhere in a
// cursor, exactly NUL, LF and CR make it invalid (tab, VT, FF and the other
// controls are the upstream's to judge).
func TestParseCursorRefusesOnlyNULLFCR(t *testing.T) {
	for b := range 256 {
		one := string([]byte{byte(b)})
		for _, c := range []string{one, "http:e-" + one, one + "sse:x"} {
			_, ok := ParseCursor(c)
			if want := b != 0 && b != '\n' && b != '\r'; ok != want {
				t.Errorf("ParseCursor(%q) ok = %v, want %v", c, ok, want)
			}
		}
	}
}
