package main

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/headermap"
)

// referencePairs decodes a serialized map the slow, obvious way: ok is false
// for anything that does not describe exactly its entries' bytes, NUL
// terminators included, and nothing more (a size that does not match the
// content is a host violating the ABI).
func referencePairs(b []byte) (hs [][2]string, ok bool) {
	if len(b) == 0 {
		return nil, true
	}
	if len(b) < 4 {
		return nil, false
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	if 4+8*n > uint64(len(b)) {
		return nil, false
	}
	data := uint64(4 + 8*n)
	for i := uint64(0); i < n; i++ {
		kn := uint64(binary.LittleEndian.Uint32(b[4+8*i:]))
		vn := uint64(binary.LittleEndian.Uint32(b[8+8*i:]))
		if data+kn+vn+2 > uint64(len(b)) || b[data+kn] != 0 || b[data+kn+1+vn] != 0 {
			return nil, false
		}
		hs = append(hs, [2]string{string(b[data : data+kn]), string(b[data+kn+1 : data+kn+1+vn])})
		data += kn + vn + 2
	}
	return hs, data == uint64(len(b))
}

// referenceHeaders is what scanRequestHeaders must find in hs.
func referenceHeaders(hs [][2]string, principal string) (h requestHeaders, path string) {
	pathSeen, methodSeen := false, false
	for _, e := range hs {
		switch e[0] {
		case ":path":
			if !pathSeen {
				path, pathSeen = e[1], true
			}
		case ":method":
			if !methodSeen {
				h.method, methodSeen = e[1], true
			}
		case "last-event-id":
			if h.lastEventIDs == 0 {
				h.lastEventID = e[1]
			}
			h.lastEventIDs++
		case "mcp-session-id":
			if h.sessionHeaders == 0 {
				h.session = e[1]
			}
			h.sessionHeaders++
		}
		if principal != "" && e[0] == principal && !h.hasPrincipal {
			h.principal, h.hasPrincipal = e[1], true
		}
	}
	return h, path
}

func TestScanRequestHeaders(t *testing.T) {
	for _, c := range []struct {
		name      string
		hs        [][2]string
		principal string
	}{
		{"empty", nil, "authorization"},
		{"ordinary", [][2]string{{":authority", "mcp.example.test"}, {":path", "/mcp"}, {":method", "POST"}, {":scheme", "https"},
			{"content-type", "application/json"}, {"mcp-session-id", "s-1"}, {"authorization", "Bearer a"}}, "authorization"},
		{"resume", [][2]string{{":path", "/mcp"}, {":method", "GET"}, {"mcp-session-id", "s-1"}, {"last-event-id", "http:~1r3.2.e-21"}}, "authorization"},
		{"repeated cursor", [][2]string{{":method", "GET"}, {"last-event-id", "http:e-1"}, {"last-event-id", "sse:e-1"}}, "authorization"},
		{"repeated empty cursor", [][2]string{{"last-event-id", ""}, {"last-event-id", "e-1"}}, ""},
		{"repeated session", [][2]string{{"mcp-session-id", "s-1"}, {"mcp-session-id", "s-2"}, {"authorization", "a"}, {"authorization", "b"}}, "authorization"},
		{"principal off", [][2]string{{"authorization", "a"}, {"x-jwt-sub", "u"}}, ""},
		{"principal the length of a judged header", [][2]string{{"x-session-ids", "a"}, {"last-event-id", "e"}}, "x-session-ids"},
		{"empty key and value", [][2]string{{"", ""}, {"mcp-session-id", ""}}, "authorization"},
		{"empty first method", [][2]string{{":method", ""}, {":method", "POST"}}, ""},
		{"long values", [][2]string{{"mcp-session-id", strings.Repeat("s", 4096)}, {"authorization", strings.Repeat("j", 8192)}}, "authorization"},
	} {
		want, wantPath := referenceHeaders(c.hs, c.principal)
		var got requestHeaders
		path, ok := scanRequestHeaders(headermap.Serialize(c.hs), c.principal, &got)
		if !ok || got != want || path != wantPath {
			t.Errorf("%s: got %+v path %q ok %v, want %+v path %q", c.name, got, path, ok, want, wantPath)
		}
	}
	ok := headermap.Serialize([][2]string{{":path", "/mcp"}, {"mcp-session-id", "s-1"}})
	trailing := append(append([]byte(nil), ok...), 0, 0)
	noNUL := append([]byte(nil), ok...)
	noNUL[len(noNUL)-1] = 'x'
	for _, bad := range [][]byte{trailing, noNUL, ok[:len(ok)-1], {1}, {1, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, {1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 'a', 0},
		{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0}, {0xff, 0xff, 0xff, 0xff}} {
		var h requestHeaders
		if _, ok := scanRequestHeaders(bad, "authorization", &h); ok {
			t.Errorf("malformed map %v accepted", bad)
		}
	}
}

// FuzzScanRequestHeaders: on any bytes the scan never panics, accepts
// exactly what the reference decoder accepts, and then finds what the
// reference finds.
func FuzzScanRequestHeaders(f *testing.F) {
	f.Add(headermap.Serialize([][2]string{{":path", "/mcp"}, {":method", "POST"}, {"mcp-session-id", "s-1"}, {"authorization", "a"}}), "authorization")
	f.Add(headermap.Serialize([][2]string{{"last-event-id", "a"}, {"last-event-id", "b"}}), "")
	f.Add([]byte{1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 'a', 0}, "x")
	f.Fuzz(func(t *testing.T, b []byte, principal string) {
		var got requestHeaders
		path, ok := scanRequestHeaders(b, principal, &got)
		hs, refOK := referencePairs(b)
		if ok != refOK {
			t.Fatalf("scan ok %v, reference ok %v", ok, refOK)
		}
		if !ok {
			return
		}
		if want, wantPath := referenceHeaders(hs, principal); got != want || path != wantPath {
			t.Fatalf("got %+v path %q, want %+v path %q", got, path, want, wantPath)
		}
	})
}
