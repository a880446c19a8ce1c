//go:build !wasm

package sse

// nextEOL returns the index of the first '\n' or '\r' in b at or after p, or
// -1, using the vectorized bytes.IndexByte (see indexEOL for crAt).
func nextEOL(b []byte, p int, crAt *int) int { return indexEOL(b, p, crAt) }
