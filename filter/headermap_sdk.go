//go:build !(wasip1 && abiglue)

package main

import (
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/headermap"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
)

// requestHeaderPairs returns the request header map in the ABI's serialized
// form through the SDK (native tests: proxytest), every repeated header as
// its own pair, as Envoy's headerMapToPairs hands it over.
func requestHeaderPairs() ([]byte, bool) {
	hs, err := proxywasm.GetHttpRequestHeaders()
	if err != nil {
		return nil, false
	}
	return headermap.Serialize(hs), true
}
