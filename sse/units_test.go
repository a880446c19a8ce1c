package sse

import (
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// Tests of the rewriter's stages on their own (lines, field, event, id
// line, end); the semantic tests, the reference parser and the fuzz targets
// drive them together through Rewrite.

// stageRewriter returns a Rewriter standing at the start of a line of a
// stream already under way, inside a call on chunk.
func stageRewriter(tr cursor.Transport, mint bool, chunk []byte) *Rewriter {
	r := NewRewriter(tr, 0)
	r.SetMint(mint)
	r.ph = phLineStart
	r.pass = pass{chunk: chunk, crAt: -1}
	return r
}

func TestFieldOf(t *testing.T) {
	for _, tc := range []struct {
		line string
		want lineKind
	}{
		{"data: x", lineData}, {"data:", lineData}, {"data", lineMaybe}, {"dat", lineMaybe}, {"d", lineMaybe},
		{"dato: x", lineMaybe}, {"event:message", lineEvent}, {"event", lineMaybe}, {"events: x", lineMaybe},
		{"id: 1", lineID}, {"id:", lineID}, {"id", lineMaybe}, {"i", lineMaybe}, {"idx: 1", lineMaybe},
		{"\n", lineEmpty}, {"\r\n", lineEmpty}, {"\r", lineEmpty},
		{": comment", lineOther}, {"retry: 10", lineOther}, {"Data: x", lineOther}, {" id: 1", lineOther}, {"\xef\xbb\xbf", lineOther},
	} {
		if got := fieldOf([]byte(tc.line)); got != tc.want {
			t.Errorf("fieldOf(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// TestLinesStage checks the line-end stage: where lines stops and what it
// carries to the next chunk (a '\r' at the chunk's end, a cut line).
func TestLinesStage(t *testing.T) {
	for _, tc := range []struct {
		name, chunk string
		stop        int
		ph          phase
		afterCR     bool
	}{
		{"whole lines", ": a\nretry: 1\r\n: b\r", 18, phLineStart, true},
		{"cr at the chunk's end", ": a\r", 4, phLineStart, true},
		{"cut comment", ": a\n: b", 7, phSkip, false},
		{"cut data line", "data: x", 5, phValueStart, false},
		{"cut event line", ": a\nevent: m", 10, phValueStart, false},
		{"cut id line", "id: 1", 3, phValueStart, false},
		{"maybe a field", "da", 1, phName, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stageRewriter(cursor.TransportSSE, false, []byte(tc.chunk))
			if p := r.lines(0); p != tc.stop || r.ph != tc.ph || r.afterCR != tc.afterCR {
				t.Fatalf("lines(%q) stops at %d in phase %d afterCR %v, want %d, %d, %v", tc.chunk, p, r.ph, r.afterCR, tc.stop, tc.ph, tc.afterCR)
			}
		})
	}
	// A '\n' that starts the next chunk completes the "\r\n": no empty
	// line, no dispatch.
	r := stageRewriter(cursor.TransportSSE, false, []byte("data: x\r"))
	r.lines(0)
	r.detachData()
	r.chunk, r.crAt = []byte("\ndata: y\n\n"), -1
	r.lines(0)
	if len(r.events) != 1 || string(r.events[0].Data) != "x\ny" {
		t.Fatalf("a \\r\\n cut by a chunk boundary: events %s", dumpEvents(r.events))
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

// TestIDLineStage checks the id-line stage on its own: tagging in place,
// escaping, holding and writing the held line.
func TestIDLineStage(t *testing.T) {
	for _, tc := range []struct {
		line string
		mint bool
		out  string
		held bool
	}{
		{"id: a\n", false, "id: sse:a\n", false},
		{"id: ~x\n", false, "id: sse:~1o2.0.~x\n", false},
		{"id: a\n", true, "", true},
		{"id:\n", true, "id:\n", false},
	} {
		r := stageRewriter(cursor.TransportSSE, tc.mint, []byte(tc.line))
		r.idField(0)
		r.flushTo(len(tc.line))
		if string(r.out) != tc.out || r.pend.on != tc.held || r.hasID != (len(tc.line) > 4) {
			t.Errorf("idField(%q, mint %v): out %q, held %v, hasID %v", tc.line, tc.mint, r.out, r.pend.on, r.hasID)
		}
	}
	// A held line goes out at dispatch with its value minted and its own
	// line ending.
	for _, eol := range []string{"\n", "\r\n"} {
		r := stageRewriter(cursor.TransportHTTP, true, []byte("id: a"+eol))
		r.lines(0) // the id line, then a '\n' completing its "\r\n"
		r.appendPend(cursor.KindResponse, []byte("p"))
		if string(r.out) != "id: http:~1r1.0.ap"+eol {
			t.Fatalf("appendPend of a line ended %q: %q", eol, r.out)
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
