package sse

import (
	"math/rand/v2"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// FuzzRewrite feeds random input under a random chunking (drawn from seed)
// and checks the output and events against the reference parser, once with
// a line limit the input cannot reach and once with a small one, tagging in
// place and minting (checkMint: the output read by a reference client gives
// the same events with minted IDs, and no byte is lost).
func FuzzRewrite(f *testing.F) {
	for _, tc := range streamCases {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	for _, tc := range sdkStreams {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	f.Add([]byte("id:\r\r\nid: a\x00\n\n\xef\xbb\xbfid: b\r\n\r\n"), uint64(3))
	f.Add([]byte("id:  \n\nid: \t\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\nid:  "), uint64(5)) // IDs of white space: as good as none on the wire
	f.Add([]byte("id: a\rdata: x\n\nid: b\nid:\nevent: endpoint\ndata: /m?sessionId=1\n\n"), uint64(4))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		tr := cursor.Transport(seed % 3)
		checkStream(t, tr, len(in)+1, randomSplit(in, rng))
		checkStream(t, tr, 1+int(seed%5), randomSplit(in, rng))
		prev := ""
		if seed&8 != 0 {
			prev = "p_1"
		}
		checkMint(t, tr, len(in)+1, prev, randomSplit(in, rng))
		checkMint(t, tr, 1+int(seed%5), prev, randomSplit(in, rng))
	})
}
