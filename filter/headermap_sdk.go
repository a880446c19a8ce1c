//go:build !(wasip1 && abiglue)

package main

import (
	"encoding/binary"

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
	return serializePairs(hs), true
}

// serializePairs is the proxy-wasm serialization of a header map, as
// Envoy's exportPairs writes it (an empty map is no bytes at all).
func serializePairs(hs [][2]string) []byte {
	if len(hs) == 0 {
		return nil
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(hs)))
	for _, h := range hs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h[0])))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h[1])))
	}
	for _, h := range hs {
		b = append(append(append(append(b, h[0]...), 0), h[1]...), 0)
	}
	return b
}
