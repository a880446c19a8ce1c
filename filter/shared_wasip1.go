//go:build wasip1 && abiglue

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// lookupSharedData reads key through the ABI glue's
// proxywasm.LookupSharedData (internal/abiglue/sdkglue/proxywasm): a
// missing key, the common answer, is found false with a nil error.
func lookupSharedData(key string) (value []byte, cas uint32, found bool, err error) {
	return proxywasm.LookupSharedData(key)
}
