//go:build !(wasip1 && abiglue)

package main

// requestHeaderPairs has no map to read outside the builder's build (the
// floor only runs as built by internal/abiglue/builder): none.
func requestHeaderPairs() ([]byte, bool) { return nil, false }
