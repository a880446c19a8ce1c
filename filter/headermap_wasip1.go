//go:build wasip1 && abiglue

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// requestHeaderPairs returns the request header map in the ABI's serialized
// form (walked by internal/headermap), read through the ABI glue's
// proxywasm.GetHttpRequestHeaderPairs (internal/abiglue/sdkglue/proxywasm):
// the SDK's GetHttpRequestHeaders would build a [][2]string of new strings
// from it on every guarded request. The glue reserves room for the map
// before the host copies it and checks the address and size the host
// returns against the memory it handed out: a host that violates the ABI
// makes ok false (the request passes unguarded and fail_open_total counts
// it), never a read outside the map. The bytes are valid until the callback
// returns, like every other value read from the host.
func requestHeaderPairs() ([]byte, bool) {
	b, err := proxywasm.GetHttpRequestHeaderPairs()
	return b, err == nil
}
