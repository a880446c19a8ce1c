package sse

import (
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// benchStream is about 2 MB of typical MCP traffic in 16 KiB chunks.
var benchStream = chunked(mcpStream(5000), 16<<10)

func streamBytes(chunks [][]byte) int64 {
	var n int64
	for _, c := range chunks {
		n += int64(len(c))
	}
	return n
}

// BenchmarkRewrite measures the rewriter on the whole stream, events and
// classification included.
func BenchmarkRewrite(b *testing.B) {
	r := NewRewriter(cursor.TransportSSE, 0)
	dst := make([]byte, 0, 32<<10)
	pass := func() {
		r.Reset(cursor.TransportSSE, 0)
		for _, c := range benchStream {
			dst, _ = r.Rewrite(dst[:0], c, false)
		}
	}
	pass() // grow the event arena to its steady size
	b.SetBytes(streamBytes(benchStream))
	b.ReportAllocs()
	for b.Loop() {
		pass()
	}
}

// BenchmarkCopy is the floor: copying the same chunks into the same buffer.
func BenchmarkCopy(b *testing.B) {
	dst := make([]byte, 0, 32<<10)
	b.SetBytes(streamBytes(benchStream))
	for b.Loop() {
		for _, c := range benchStream {
			dst = append(dst[:0], c...)
		}
	}
}

// BenchmarkClassify measures one classification of each kind.
func BenchmarkClassify(b *testing.B) {
	resp, notif := []byte(respJSON), []byte(notifJSON)
	for b.Loop() {
		Classify(nil, resp, false)
		Classify(nil, notif, false)
	}
}

// BenchmarkRewriteMint is BenchmarkRewrite while minting, as the plugin runs
// it with mint_cursors: each event's id line is moved and its value minted.
// It reports the bytes added per event ID.
func BenchmarkRewriteMint(b *testing.B) {
	r := NewRewriter(cursor.TransportSSE, 0)
	r.SetMint(true)
	dst := make([]byte, 0, 32<<10)
	var added, ids int
	pass := func() {
		r.Reset(cursor.TransportSSE, 0)
		added, ids = 0, 0
		for _, c := range benchStream {
			dst, _ = r.Rewrite(dst[:0], c, false)
			added += len(dst) - len(c)
			ids += r.Tagged()
		}
	}
	pass()
	b.SetBytes(streamBytes(benchStream))
	b.ReportAllocs()
	for b.Loop() {
		pass()
	}
	b.ReportMetric(float64(added)/float64(ids), "B/id")
}

// BenchmarkRewriteFreshChunks is BenchmarkRewrite with every chunk in a
// newly allocated buffer, as the plugin gets them from the host:
// the garbage keeps GC cycles, and their write barriers, running. Compare it
// with BenchmarkCopyFreshChunks, most usefully compiled to Wasm.
func BenchmarkRewriteFreshChunks(b *testing.B) {
	r := NewRewriter(cursor.TransportSSE, 0)
	dst := make([]byte, 0, 32<<10)
	b.SetBytes(streamBytes(benchStream))
	for b.Loop() {
		r.Reset(cursor.TransportSSE, 0)
		for _, c := range benchStream {
			dst, _ = r.Rewrite(dst[:0], fresh(c), false)
		}
	}
}

// BenchmarkCopyFreshChunks is BenchmarkCopy with every chunk in a newly
// allocated buffer.
func BenchmarkCopyFreshChunks(b *testing.B) {
	dst := make([]byte, 0, 32<<10)
	b.SetBytes(streamBytes(benchStream))
	for b.Loop() {
		for _, c := range benchStream {
			dst = append(dst[:0], fresh(c)...)
		}
	}
}

// freshSink keeps fresh's copies from being stack-allocated.
var freshSink []byte

// fresh returns a copy of c in a new heap buffer.
func fresh(c []byte) []byte {
	freshSink = append([]byte(nil), c...)
	return freshSink
}
