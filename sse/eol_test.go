package sse

import (
	"bytes"
	"testing"
)

// naiveEOL is indexEOL's oracle: the first '\n' or '\r', byte by byte.
func naiveEOL(b []byte) int {
	return bytes.IndexAny(b, "\r\n")
}

// TestIndexEOL puts a line end, and the bytes below 0x0E that the
// word-at-a-time test flags without being line ends, at every offset of
// buffers around the word size.
func TestIndexEOL(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for at := -1; at < n; at++ {
			for _, eol := range []byte{'\n', '\r'} {
				for _, decoy := range []byte{0x00, '\t', 0x0B, 0x0C, 0x0E, 0x8A, 0xFF} {
					b := bytes.Repeat([]byte{'x'}, n)
					for i := 0; i < at; i += 3 {
						b[i] = decoy // before the line end: never taken for it
					}
					if at >= 0 {
						b[at] = eol
					}
					if got, want := indexEOL(b), naiveEOL(b); got != want {
						t.Fatalf("indexEOL(%q) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

func FuzzIndexEOL(f *testing.F) {
	f.Add([]byte("data: x\r\n"))
	f.Add([]byte("\x0b\x0c\x00\x0d"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := indexEOL(b), naiveEOL(b); got != want {
			t.Fatalf("indexEOL(%q) = %d, want %d", b, got, want)
		}
	})
}
