//go:build wasm

package sse

// nextEOL returns the index of the first '\n' or '\r' in b at or after p, or
// -1. In Wasm, bytes.IndexByte is a scalar loop: one word-at-a-time pass for
// both bytes is faster. crAt is unused.
func nextEOL(b []byte, p int, _ *int) int { return swarEOL(b, p) }
