package sse

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// TestCommonEventShapes: which events commonEvent takes in one step (the
// SDKs' usual layouts) and which it leaves, untouched, to the line-by-line
// step.
func TestCommonEventShapes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"id, event, data", "id: e-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", true},
		{"TypeScript: event, id, data", "event: message\nid: s_1\ndata: {}\n\n", true},
		{"C#: data, then id", "data: {}\nid: 7\n\n", true},
		{"a priming event", "id: 0\ndata:\n\n", true},
		{"an id alone, no space", "id:x\n\n", true},
		{"Python: CRLF", "event: message\r\ndata: {}\r\nid: 1\r\n\r\n", true},
		{"CRLF and LF", "id: 1\r\ndata: {}\n\r\n", true},
		{"a lone CR", "id: 1\rdata: {}\n\n", false},
		{"a CR the chunk's end cuts from its LF", "id: 1\r", false},
		{"no id", "event: message\ndata: {}\n\n", false},
		{"two data lines", "id: 1\ndata: a\ndata: b\n\n", false},
		{"two ids", "id: 1\nid: 2\n\n", false},
		{"an empty id", "id:\ndata: x\n\n", false},
		{"an id with NUL", "id: a\x00b\ndata: x\n\n", false},
		{"an endpoint event", "id: 1\nevent: endpoint\ndata: /m?sessionId=1\n\n", false},
		{"retry", "id: 1\nretry: 10\ndata: x\n\n", false},
		{"a comment", "id: 1\n: ping\ndata: x\n\n", false},
		{"cut before its empty line", "id: 1\ndata: x\n", false},
		{"an id longer than max", "id: " + string(bytes.Repeat([]byte("x"), DefaultMaxLineBytes+1)) + "\n\n", false},
	} {
		r := NewRewriter(cursor.TransportHTTP, 0)
		r.SetMint(true)
		r.bom, r.chunk = -1, []byte(tc.in)
		q, ok := r.commonEvent(0)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok && (len(r.out) > 0 || len(r.events) > 0 || q != 0) {
			t.Errorf("%s: left to the line-by-line step after writing %q, %d events, at %d", tc.name, r.out, len(r.events), q)
		}
		// The empty line starts after the '\n' that ends the line before it.
		if empty := strings.LastIndexByte(tc.in[:len(tc.in)-1], '\n') + 1; ok && (q != empty || len(r.events) != 1) {
			t.Errorf("%s: stopped at %d with %d events; want the empty line at %d, 1 event", tc.name, q, len(r.events), empty)
		}
	}
}

// FuzzCommonEvent: a Rewriter that takes the common events in one step gives,
// call by call, the bytes, events and held state of one that takes every
// line by itself.
func FuzzCommonEvent(f *testing.F) {
	for _, tc := range streamCases {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	for _, tc := range sdkStreams {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	common := "id: e-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\nid: e-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"
	odd := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}\nid: ~7\n\nevent:\nid: 8\n\nid: 9\ndata:\n\n\r\n"
	python := "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r\nid: r3\r\n\r\nid: p4\r\ndata: \r\n\r\nid: x\rdata: y\r\n\r\n"
	for _, seed := range []uint64{1, 2, 1 | 8, 2 | 16} { // tagging transports (seed%3), a previous ID, a small max
		f.Add([]byte(common), seed)
		f.Add([]byte(odd), seed)
		f.Add([]byte(python), seed)
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		tr := cursor.Transport(seed % 3)
		max := len(in) + 1
		if seed&16 != 0 {
			max = 1 + int(seed>>5)%8
		}
		common, each := NewRewriter(tr, max), NewRewriter(tr, max)
		common.SetMint(true)
		each.SetMint(true)
		each.lineByLine = true
		if seed&8 != 0 {
			common.Resume([]byte("p_1"))
			each.Resume([]byte("p_1"))
		}
		chunks := coarseSplit(in, 1+int(seed>>6)%3, rng) // whole events, mostly
		if seed&32 != 0 {
			chunks = randomSplit(in, rng)
		}
		for i, c := range chunks {
			eos := i == len(chunks)-1
			a, aChanged := common.Rewrite(nil, c, eos)
			b, bChanged := each.Rewrite(nil, c, eos)
			if !bytes.Equal(a, b) || aChanged != bChanged {
				t.Fatalf("chunk %d of %q: wrote %q (changed %v), line by line %q (%v)", i, chunks, a, aChanged, b, bChanged)
			}
			if ae, be := common.Events(), each.Events(); !sameEvents(ae, be) {
				t.Fatalf("chunk %d of %q: events %+v, line by line %+v", i, chunks, ae, be)
			}
			if !bytes.Equal(common.Held(), each.Held()) || common.HeldPrependable() != each.HeldPrependable() ||
				common.Tagged() != each.Tagged() || common.Overflowed() != each.Overflowed() {
				t.Fatalf("chunk %d of %q: held %q (%v), tagged %d, overflowed %v; line by line %q (%v), %d, %v", i, chunks,
					common.Held(), common.HeldPrependable(), common.Tagged(), common.Overflowed(),
					each.Held(), each.HeldPrependable(), each.Tagged(), each.Overflowed())
			}
		}
	})
}

// coarseSplit cuts in into n chunks at random places.
func coarseSplit(in []byte, n int, rng *rand.Rand) [][]byte {
	var chunks [][]byte
	for ; n > 1 && len(in) > 0; n-- {
		i := rng.IntN(len(in) + 1)
		chunks, in = append(chunks, in[:i]), in[i:]
	}
	return append(chunks, in)
}

// sameEvents compares events field by field, a nil slice and an empty one
// apart.
func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	same := func(x, y []byte) bool { return (x == nil) == (y == nil) && bytes.Equal(x, y) }
	for i := range a {
		if !same(a[i].ID, b[i].ID) || a[i].HasID != b[i].HasID || !same(a[i].Type, b[i].Type) ||
			!same(a[i].Data, b[i].Data) || a[i].Truncated != b[i].Truncated {
			return false
		}
	}
	return true
}
