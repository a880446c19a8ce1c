package cursor

import (
	"bytes"
	"testing"
)

// tagIDs are upstream event IDs that must survive tagging byte for byte,
// including ones that look tagged already.
var tagIDs = []string{
	"",
	"e-104",
	"1_7",
	"sse:",
	"sse:e-104",
	"http:",
	"http:e-104",
	"http:sse:x",
	"sse:http:sse:",
	"ss",
	"htt",
	"\x00",
	"a\x00b",
	"\xff\xfe\xfd",
	"\xc3\x28",     // invalid UTF-8 sequence
	"\xef\xbb\xbf", // a BOM
	"line\nbreak\r",
	" e-104 ",
	"日本語",
	string(bytes.Repeat([]byte{'x'}, 4096)),
}

func TestTaggedRoundTrip(t *testing.T) {
	for _, tr := range []Transport{TransportSSE, TransportHTTP} {
		for _, id := range tagIDs {
			checkTagRoundTrip(t, tr, []byte(id))
		}
	}
}

func checkTagRoundTrip(t *testing.T, tr Transport, id []byte) {
	t.Helper()
	tagged := AppendTagged(nil, tr, id)
	if want := tr.Prefix() + string(id); string(tagged) != want {
		t.Fatalf("AppendTagged(%v, %q) = %q, want %q", tr, id, tagged, want)
	}
	if s := Tagged(tr, string(id)); s != string(tagged) {
		t.Fatalf("Tagged(%v, %q) = %q, AppendTagged gave %q", tr, id, s, tagged)
	}
	gotT, gotID := SplitTagged(string(tagged))
	if gotT != tr || gotID != string(id) {
		t.Fatalf("SplitTagged(%q) = %v, %q; want %v, %q", tagged, gotT, gotID, tr, id)
	}
	// AppendTagged appends: an existing prefix of dst is kept.
	dst := AppendTagged([]byte("keep|"), tr, id)
	if string(dst) != "keep|"+string(tagged) {
		t.Fatalf("AppendTagged onto %q = %q", "keep|", dst)
	}
}

// TestTaggedInjective: two different (transport, ID) pairs never tag to the
// same bytes, so a tagged cursor names exactly one upstream event.
func TestTaggedInjective(t *testing.T) {
	seen := map[string][2]string{}
	for _, tr := range []Transport{TransportSSE, TransportHTTP} {
		for _, id := range tagIDs {
			s := Tagged(tr, id)
			if prev, dup := seen[s]; dup {
				t.Fatalf("Tagged(%v, %q) = Tagged(%s, %q) = %q", tr, id, prev[0], prev[1], s)
			}
			seen[s] = [2]string{tr.String(), id}
		}
	}
}

func TestSplitTagged(t *testing.T) {
	cases := []struct {
		in   string
		tr   Transport
		rest string
	}{
		{"sse:e-104", TransportSSE, "e-104"},
		{"http:e-104", TransportHTTP, "e-104"},
		{"http:sse:x", TransportHTTP, "sse:x"},
		{"sse:http:x", TransportSSE, "http:x"},
		{"sse:", TransportSSE, ""},
		{"http:", TransportHTTP, ""},
		{"e-104", TransportNone, "e-104"},
		{"", TransportNone, ""},
		{"sse", TransportNone, "sse"},
		{"http", TransportNone, "http"},
		{"SSE:e-1", TransportNone, "SSE:e-1"},
		{"Http:e-1", TransportNone, "Http:e-1"},
		{" sse:e-1", TransportNone, " sse:e-1"},
		{"https:e-1", TransportNone, "https:e-1"},
		{"ws:e-1", TransportNone, "ws:e-1"},
		{"none:e-1", TransportNone, "none:e-1"},
		{"sse:\x00\xff", TransportSSE, "\x00\xff"},
	}
	for _, c := range cases {
		tr, rest := SplitTagged(c.in)
		if tr != c.tr || rest != c.rest {
			t.Errorf("SplitTagged(%q) = %v, %q; want %v, %q", c.in, tr, rest, c.tr, c.rest)
		}
	}
}

func TestParseTransport(t *testing.T) {
	cases := []struct {
		in string
		tr Transport
		ok bool
	}{
		{"sse", TransportSSE, true},
		{"http", TransportHTTP, true},
		{"", TransportNone, false},
		{"none", TransportNone, false},
		{"SSE", TransportNone, false},
		{"HTTP", TransportNone, false},
		{"sse:", TransportNone, false},
		{" http", TransportNone, false},
		{"streamable-http", TransportNone, false},
	}
	for _, c := range cases {
		tr, ok := ParseTransport(c.in)
		if tr != c.tr || ok != c.ok {
			t.Errorf("ParseTransport(%q) = %v, %v; want %v, %v", c.in, tr, ok, c.tr, c.ok)
		}
	}
	// String and ParseTransport are inverses for the two transports.
	for _, tr := range []Transport{TransportSSE, TransportHTTP} {
		if got, ok := ParseTransport(tr.String()); !ok || got != tr {
			t.Errorf("ParseTransport(%q) = %v, %v; want %v", tr.String(), got, ok, tr)
		}
	}
}

func TestTransportStringAndPrefix(t *testing.T) {
	cases := []struct {
		tr     Transport
		str    string
		prefix string
	}{
		{TransportNone, "none", ""},
		{TransportSSE, "sse", PrefixSSE},
		{TransportHTTP, "http", PrefixHTTP},
		{Transport(9), "none", ""},
	}
	for _, c := range cases {
		if got := c.tr.String(); got != c.str {
			t.Errorf("Transport(%d).String() = %q, want %q", c.tr, got, c.str)
		}
		if got := c.tr.Prefix(); got != c.prefix {
			t.Errorf("Transport(%d).Prefix() = %q, want %q", c.tr, got, c.prefix)
		}
	}
	if PrefixSSE != "sse:" || PrefixHTTP != "http:" {
		t.Errorf("prefixes are %q and %q; the wire format is sse: and http:", PrefixSSE, PrefixHTTP)
	}
	// Neither prefix may be a prefix of the other, or splitting is ambiguous.
	if bytes.HasPrefix([]byte(PrefixSSE), []byte(PrefixHTTP)) || bytes.HasPrefix([]byte(PrefixHTTP), []byte(PrefixSSE)) {
		t.Error("one tag prefix is a prefix of the other")
	}
}

// TestAppendTaggedNoAllocWithCapacity: tagging on the response path reuses
// the caller's buffer.
func TestAppendTaggedNoAllocWithCapacity(t *testing.T) {
	buf := make([]byte, 0, 128)
	id := []byte("e-104")
	if n := testing.AllocsPerRun(100, func() { buf = AppendTagged(buf[:0], TransportHTTP, id) }); n != 0 {
		t.Errorf("AppendTagged into a buffer with room allocates %v times", n)
	}
}

// FuzzTaggedRoundTrip: for every transport and every byte string, tagging
// then splitting returns exactly the transport and the bytes; and an
// arbitrary cursor split then re-tagged gives back the cursor.
func FuzzTaggedRoundTrip(f *testing.F) {
	for _, id := range tagIDs {
		f.Add([]byte(id), true)
		f.Add([]byte(id), false)
	}
	f.Fuzz(func(t *testing.T, id []byte, http bool) {
		tr := TransportSSE
		if http {
			tr = TransportHTTP
		}
		checkTagRoundTrip(t, tr, id)

		// The other direction, on id taken as a client's cursor.
		ct, rest := SplitTagged(string(id))
		if ct == TransportNone {
			if rest != string(id) {
				t.Fatalf("SplitTagged(%q) untagged but changed it to %q", id, rest)
			}
			if bytes.HasPrefix(id, []byte(PrefixSSE)) || bytes.HasPrefix(id, []byte(PrefixHTTP)) {
				t.Fatalf("SplitTagged(%q) missed a tag", id)
			}
			return
		}
		if back := Tagged(ct, rest); back != string(id) {
			t.Fatalf("Tagged(SplitTagged(%q)) = %q", id, back)
		}
	})
}
