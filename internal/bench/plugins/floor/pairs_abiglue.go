//go:build wasip1 && abiglue

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// requestHeaderPairs reads the request header map in one host call, through
// the ABI glue the guard reads it by (proxywasm.GetHttpRequestHeaderPairs,
// internal/abiglue/sdkglue/proxywasm).
func requestHeaderPairs() ([]byte, bool) {
	b, err := proxywasm.GetHttpRequestHeaderPairs()
	return b, err == nil
}
