package bench

import (
	"math/rand/v2"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
)

// TestClassifyLastIDOnly checks the rewriter mode the plugin runs in: under
// random chunkings of benchmark traffic (and of priming, batch and
// non-JSON events), every call reports the same events, bytes and tags as
// the fully classifying rewriter, and the same kind for its last event with
// an ID.
func TestClassifyLastIDOnly(t *testing.T) {
	stream := SSEStream(256<<10, 1, 7)
	stream = append(stream, "id: p-1\ndata:\n\nid: b-1\ndata: [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\n\nid: x-1\nevent: endpoint\ndata: /messages?sessionId=abc\n\n"...)
	r := rand.New(rand.NewPCG(1, 2))
	full, lazy := sse.NewRewriter(cursor.TransportHTTP, 0), sse.NewRewriter(cursor.TransportHTTP, 0)
	lazy.ClassifyLastIDOnly(true)
	for round := range 20 {
		full.Reset(cursor.TransportHTTP, 0)
		lazy.Reset(cursor.TransportHTTP, 0)
		for rest := stream; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(3000))
			chunk := rest[:n]
			rest = rest[n:]
			a, ca := full.Rewrite(nil, chunk, len(rest) == 0)
			b, cb := lazy.Rewrite(nil, chunk, len(rest) == 0)
			if string(a) != string(b) || ca != cb || full.Tagged() != lazy.Tagged() {
				t.Fatalf("round %d: the two modes rewrote a chunk differently", round)
			}
			ea, eb := full.Events(), lazy.Events()
			if len(ea) != len(eb) {
				t.Fatalf("round %d: %d events vs %d", round, len(ea), len(eb))
			}
			last := -1
			for i := range ea {
				if string(ea[i].ID) != string(eb[i].ID) || ea[i].HasID != eb[i].HasID ||
					string(ea[i].Type) != string(eb[i].Type) || string(ea[i].Data) != string(eb[i].Data) {
					t.Fatalf("round %d: event %d differs", round, i)
				}
				if ea[i].HasID {
					last = i
				}
			}
			if last >= 0 && ea[last].Kind != eb[last].Kind {
				t.Fatalf("round %d: last event with an ID is %v, classified lazily as %v", round, ea[last].Kind, eb[last].Kind)
			}
		}
	}
}
