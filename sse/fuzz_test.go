package sse

import (
	"math/rand/v2"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// FuzzRewrite feeds random input under a random chunking (drawn from seed)
// and checks the output and events against the reference parser, once with
// a line limit the input cannot reach and once with a small one.
func FuzzRewrite(f *testing.F) {
	for _, tc := range streamCases {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	f.Add([]byte("id:\r\r\nid: a\x00\n\n\xef\xbb\xbfid: b\r\n\r\n"), uint64(3))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		tr := cursor.Transport(seed % 3)
		checkStream(t, tr, len(in)+1, randomSplit(in, rng))
		checkStream(t, tr, 1+int(seed%5), randomSplit(in, rng))
	})
}
