package sse

import (
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// Tests of the rewriter's stages (scan, id line, end of stream); the
// semantic tests, the reference parser and the fuzz targets drive them
// together through Rewrite.

func TestFieldOf(t *testing.T) {
	for _, tc := range []struct {
		head  string
		ended bool
		f     lineState
		value int
		known bool
	}{
		{"data: x", true, inData, 5, true}, {"data:", false, inData, 5, true}, {"data", true, inData, 4, true},
		{"data", false, 0, 0, false}, {"dat", false, 0, 0, false}, {"d", false, 0, 0, false}, {"dat", true, inOther, 0, true},
		{"dato: x", true, inOther, 0, true}, {"event:message", true, inEvent, 6, true}, {"event", false, 0, 0, false},
		{"events", false, inOther, 0, true}, {"id: 1", true, inID, 3, true}, {"id:", false, inID, 3, true},
		{"id", true, inID, 2, true}, {"id", false, 0, 0, false}, {"i", false, 0, 0, false}, {"idx", false, inOther, 0, true},
		{"", true, inEmpty, 0, true}, {": comment", false, inOther, 0, true}, {"retry: 10", true, inOther, 0, true},
		{"Data: x", true, inOther, 0, true}, {" id: 1", true, inOther, 0, true}, {"\xef\xbb\xbf", false, inOther, 0, true},
	} {
		f, value, known := fieldOf([]byte(tc.head), tc.ended)
		if known != tc.known || known && (f != tc.f || value != tc.value) {
			t.Errorf("fieldOf(%q, %v) = %d, %d, %v; want %d, %d, %v", tc.head, tc.ended, f, value, known, tc.f, tc.value, tc.known)
		}
	}
}

// TestScanState checks what the scanner carries from one chunk to the next:
// where it stands in a line, the cut name, a '\r' at the chunk's end, a part
// of a BOM.
func TestScanState(t *testing.T) {
	for _, tc := range []struct {
		name, chunk string
		in          lineState
		head        string
		afterCR     bool
		bom         int
	}{
		{"whole lines", ": a\nretry: 1\r\n: b\n", atLineStart, "", false, -1},
		{"cr at the chunk's end", ": a\r", atLineStart, "", true, -1},
		{"cut comment", ": a\n: b", inOther, "", false, -1},
		{"cut data line", "data: x", inData, "", false, -1},
		{"cut event line", ": a\nevent: m", inEvent, "", false, -1},
		{"cut id line", "id: 1", inID, "", false, -1},
		{"cut name", "ev", inName, "ev", false, -1},
		{"name cut twice", "ev|en", inName, "even", false, -1},
		{"part of a bom", "\xef\xbb", atLineStart, "", false, 2},
		{"bom", "\xef\xbb\xbf", atLineStart, "", false, -1},
		{"part of a bom, then a line", "\xef\xbbid", inOther, "", false, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRewriter(cursor.TransportSSE, 0)
			for _, c := range strings.Split(tc.chunk, "|") {
				r.Rewrite(nil, []byte(c), false)
			}
			if r.in != tc.in || string(r.head[:r.headN]) != tc.head || r.afterCR != tc.afterCR || r.bom != tc.bom {
				t.Fatalf("in %d head %q afterCR %v bom %d; want %d %q %v %d", r.in, r.head[:r.headN], r.afterCR, r.bom, tc.in, tc.head, tc.afterCR, tc.bom)
			}
		})
	}
	// A '\n' that starts the next chunk completes the "\r\n": no empty
	// line, no dispatch.
	r := NewRewriter(cursor.TransportSSE, 0)
	r.Rewrite(nil, []byte("data: x\r"), false)
	r.Rewrite(nil, []byte("\ndata: y\n\n"), false)
	if evs := r.Events(); len(evs) != 1 || string(evs[0].Data) != "x\ny" {
		t.Fatalf("a \\r\\n cut by a chunk boundary: events %s", dumpEvents(evs))
	}
}

// TestNameStage checks the byte-wise field stage: a line that may be an id
// field is held from its first byte and released as soon as it is not one.
func TestNameStage(t *testing.T) {
	for _, tc := range []struct {
		bytes, held, out string
	}{
		{"i", "i", ""}, {"id", "id", ""}, {"id:", "id:", ""}, {"id: x", "id: x", ""},
		{"ix", "", "ix"}, {"idx", "", "idx"}, {"d", "", "d"}, {"dat", "", "dat"}, {"datx", "", "datx"},
		{"id: x\n", "", "id: sse:x\n"}, {"id\n", "", "id\n"}, {"id: \n", "", "id: \n"}, {"id: \x00\n", "", "id: \x00\n"},
	} {
		r := NewRewriter(cursor.TransportSSE, 0)
		var out []byte
		for i := range len(tc.bytes) {
			out, _ = r.Rewrite(out, []byte(tc.bytes[i:i+1]), false)
		}
		if string(r.Held()) != tc.held || string(out) != tc.out {
			t.Errorf("%q byte by byte: held %q, out %q; want %q, %q", tc.bytes, r.Held(), out, tc.held, tc.out)
		}
	}
}

// TestIDLineStage checks the id-line stage: tagging in place, escaping,
// holding, and writing the held line at dispatch with its value minted and
// its own line ending.
func TestIDLineStage(t *testing.T) {
	for _, tc := range []struct {
		line    string
		mint    bool
		out     string
		held    string
		hasPrev bool
	}{
		{"id: a\n", false, "id: sse:a\n", "", false},
		{"id: ~x\n", false, "id: sse:~1o2.0.~x\n", "", false},
		{"id: a\n", true, "", "id: a\n", true},
		{"id: a\r", true, "", "id: a\r", true},
		{"id:\n", true, "id:\n", "", false},
		{"id: a\x00\n", true, "id: a\x00\n", "", false},
	} {
		r := NewRewriter(cursor.TransportSSE, 0)
		r.SetMint(tc.mint)
		if out, _ := r.Rewrite(nil, []byte(tc.line), false); string(out) != tc.out || string(r.Held()) != tc.held {
			t.Errorf("%q, mint %v: out %q, held %q", tc.line, tc.mint, out, r.Held())
		}
	}
	for _, eol := range []string{"\n", "\r\n"} {
		r := NewRewriter(cursor.TransportHTTP, 0)
		r.SetMint(true)
		r.Resume([]byte("p"))
		in := "id: a" + eol + "data: " + respJSON + eol + eol
		if out, _ := r.Rewrite(nil, []byte(in), false); string(out) != "data: "+respJSON+eol+"id: http:~1r1.0.ap"+eol+eol {
			t.Fatalf("held line ended %q: %q", eol, out)
		}
	}
}

// TestEndStage checks what the end of the stream writes before a held id
// line: a line ending after a cut line, a '\n' after a lone '\r', nothing at
// a line start.
func TestEndStage(t *testing.T) {
	for _, tc := range []struct {
		in, out string
	}{
		{"id: a\r\ndata: 1", "data: 1\r\nid: sse:a\r\n"},
		{"id: a\ndata: 1\r", "data: 1\r\nid: sse:a\n"},
		{"id: a\ndata: 1\n", "data: 1\nid: sse:a\n"},
		{"id: a\r", "id: sse:a\r"},
	} {
		r := NewRewriter(cursor.TransportSSE, 0)
		r.SetMint(true)
		if out, _ := r.Rewrite(nil, []byte(tc.in), true); string(out) != tc.out || len(r.Held()) != 0 {
			t.Errorf("%q at the end: %q (held %q), want %q", tc.in, out, r.Held(), tc.out)
		}
	}
}
