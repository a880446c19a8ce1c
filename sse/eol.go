package sse

import (
	"bytes"
	"math/bits"
	"unsafe"
)

// indexEOL returns the index of the first '\n' or '\r' in b at or after p, or
// -1, with bytes.IndexByte. *crAt caches the position of the next '\r'
// (len(b) when there is none) so that a stream without '\r' is searched for
// it once per chunk; it starts below 0 for each chunk.
func indexEOL(b []byte, p int, crAt *int) int {
	if *crAt < p {
		if i := bytes.IndexByte(b[p:], '\r'); i >= 0 {
			*crAt = p + i
		} else {
			*crAt = len(b)
		}
	}
	if i := bytes.IndexByte(b[p:*crAt], '\n'); i >= 0 {
		return p + i
	}
	if *crAt < len(b) {
		return *crAt
	}
	return -1
}

// swarEOL returns the index of the first '\n' or '\r' in b at or after p
// (0 <= p), or -1, testing eight bytes at a time in a single pass. Where
// bytes.IndexByte is a plain loop (Wasm), this is faster than its two
// searches; where it is vectorized, it is slower. It assumes a
// little-endian machine, as Wasm is.
func swarEOL(b []byte, p int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if p < 0 {
		panic("sse: negative search offset")
	}
	base := unsafe.Pointer(unsafe.SliceData(b))
	for p+8 <= len(b) {
		// An unaligned 8-byte load, in bounds since p+8 <= len(b); the
		// byte at p is its least significant.
		x := *(*uint64)(unsafe.Add(base, p))
		// The lowest flagged byte is the first one below 0x0E ('\r' is
		// 0x0D, '\n' 0x0A); flags above it may be spurious.
		m := (x - 0x0E*ones) &^ x & highs
		if m == 0 {
			p += 8
			continue
		}
		i := p + bits.TrailingZeros64(m)>>3
		if c := b[i]; c == '\n' || c == '\r' {
			return i
		}
		p = i + 1
	}
	for ; p < len(b); p++ {
		if c := b[p]; c == '\n' || c == '\r' {
			return p
		}
	}
	return -1
}
