package headermap

import (
	"slices"
	"testing"
)

// scan is ScanRequest with a fresh Request.
func scan(pairs []byte, principalHeader string) (Request, bool) {
	var r Request
	ok := ScanRequest(pairs, principalHeader, &r)
	return r, ok
}

// TestScanRequestFirstValueAndCount: each header gets the value of its
// first entry, repeated and empty values too, and the headers that must not
// repeat are counted; keys are compared exactly.
func TestScanRequestFirstValueAndCount(t *testing.T) {
	hs := [][2]string{
		{":path", "/mcp"}, {":method", "GET"}, {":scheme", "https"}, {"last-event-id", ""}, {"last-event-id", "b"},
		{"", "x"}, {"mcp-session-id", "s-1"}, {"Mcp-Session-Id", "upper"}, {":path", "/second"},
		{"authorization", "Bearer a"}, {"authorization", "Bearer b"},
	}
	r, ok := scan(Serialize(hs), "authorization")
	if !ok {
		t.Fatal("a well-formed map did not parse")
	}
	want := Request{
		Path: []byte("/mcp"), Method: []byte("GET"), LastEventID: []byte(""), Session: []byte("s-1"),
		Principal: []byte("Bearer a"), LastEventIDs: 2, Sessions: 1, HasPrincipal: true,
	}
	if !equal(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
	if r.LastEventID == nil {
		t.Error("an empty first value must be an empty view, not absent")
	}
	if r, _ := scan(Serialize(hs), ""); r.HasPrincipal || r.Principal != nil {
		t.Errorf("principal header \"\" found %q", r.Principal)
	}
	if r, _ := scan(Serialize([][2]string{{"authorization", ""}}), "authorization"); !r.HasPrincipal {
		t.Error("an empty principal header is present")
	}
}

// equal compares two Requests by value.
func equal(a, b Request) bool {
	return string(a.Path) == string(b.Path) && string(a.Method) == string(b.Method) &&
		string(a.LastEventID) == string(b.LastEventID) && string(a.Session) == string(b.Session) &&
		string(a.Principal) == string(b.Principal) && a.LastEventIDs == b.LastEventIDs &&
		a.Sessions == b.Sessions && a.HasPrincipal == b.HasPrincipal
}

// TestScanRequestEmptyMap: no bytes are an empty map, which parses and
// holds nothing.
func TestScanRequestEmptyMap(t *testing.T) {
	for _, pairs := range [][]byte{nil, Serialize(nil), {}} {
		if r, ok := scan(pairs, "authorization"); !ok || !equal(r, Request{}) {
			t.Errorf("%q: ok %v, got %+v", pairs, ok, r)
		}
	}
}

// TestScanRequestMalformed: a map cut anywhere, a count or size that runs
// past the bytes, a missing NUL and bytes after the last entry do not
// parse; nothing panics.
func TestScanRequestMalformed(t *testing.T) {
	good := Serialize([][2]string{{":path", "/mcp"}, {"mcp-session-id", "s-1"}})
	if _, ok := scan(good, ""); !ok {
		t.Fatal("the good map did not parse")
	}
	for cut := 1; cut < len(good); cut++ {
		if _, ok := scan(good[:cut], ""); ok {
			t.Errorf("cut at %d parsed", cut)
		}
	}
	if _, ok := scan([]byte{9, 0, 0, 0, 1, 0, 0, 0}, ""); ok {
		t.Error("a count of 9 with room for none parsed")
	}
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"a key size near 2^32", func(b []byte) []byte { b[4], b[5], b[6], b[7] = 0xff, 0xff, 0xff, 0xff; return b }},
		{"a missing NUL after the key", func(b []byte) []byte { b[4+16+len(":path")] = 'x'; return b }},
		{"a missing NUL after the value", func(b []byte) []byte { b[len(b)-1] = 'x'; return b }},
		{"a byte after the last entry", func(b []byte) []byte { return append(b, 0) }},
	} {
		if _, ok := scan(c.edit(slices.Clone(good)), ""); ok {
			t.Errorf("%s parsed", c.name)
		}
	}
}

// FuzzScanRequest: whatever the bytes, ScanRequest never panics; a map
// Serialize wrote parses, to what a plain search of its entries finds.
func FuzzScanRequest(f *testing.F) {
	f.Add([]byte(nil), "authorization")
	f.Add(Serialize([][2]string{{":path", "/mcp"}, {":path", "/x"}, {"last-event-id", "a"}}), "x-user")
	keys := []string{":path", ":method", "last-event-id", "mcp-session-id", "authorization", "x-user", "", ":scheme"}
	f.Fuzz(func(t *testing.T, pairs []byte, principal string) {
		scan(pairs, principal)
		var hs [][2]string
		for i := 0; i+1 < len(pairs) && len(hs) < 16; i += 2 {
			hs = append(hs, [2]string{keys[int(pairs[i])%len(keys)], string(pairs[i+1 : i+2])})
		}
		r, ok := scan(Serialize(hs), principal)
		if !ok {
			t.Fatalf("Serialize(%q) did not parse", hs)
		}
		var want Request
		first := func(key string, v *[]byte, n *int) {
			for _, h := range hs {
				if h[0] == key {
					if *n == 0 {
						*v = []byte(h[1])
					}
					*n++
				}
			}
		}
		var paths, methods, principals int
		first(":path", &want.Path, &paths)
		first(":method", &want.Method, &methods)
		first("last-event-id", &want.LastEventID, &want.LastEventIDs)
		first("mcp-session-id", &want.Session, &want.Sessions)
		if principal != "" {
			first(principal, &want.Principal, &principals)
		}
		want.HasPrincipal = principals > 0
		if !equal(r, want) {
			t.Fatalf("%q with principal %q: got %+v, want %+v", hs, principal, r, want)
		}
	})
}
