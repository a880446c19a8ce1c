package sse

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestSwarEOL checks the word-at-a-time search used in Wasm against the
// bytes.IndexByte one, from every offset of random inputs dense in line
// ends, in other bytes below 0x0E, and in neither.
func TestSwarEOL(t *testing.T) {
	if one := uint16(1); *(*byte)(unsafe.Pointer(&one)) != 1 {
		t.Skip("swarEOL assumes a little-endian machine (it runs in Wasm)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabets := []string{"\n\r\t\x00\x0d\x0e\x8a\x8dab", "ab\x0b\x0c\x01\xff", "a\n", "a\r", "\xfe\x0e\x0f"}
	for round := range 2000 {
		alpha := alphabets[round%len(alphabets)]
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		crAt := -1
		for p := 0; p <= len(b); p++ {
			if got, want := swarEOL(b, p), indexEOL(b, p, &crAt); got != want {
				t.Fatalf("%q from %d: swarEOL = %d, indexEOL = %d", b, p, got, want)
			}
		}
	}
}
