//go:build wasip1

package main

import "unsafe"

// requestHeaderPairs calls proxy_get_header_map_pairs directly and returns
// the request header map in the ABI's serialized form (headermap.go): the
// SDK's GetHttpRequestHeaders would build a [][2]string of new strings from
// it on every guarded request.
//
//go:wasmimport env proxy_get_header_map_pairs
func hostGetHeaderMapPairs(mapType uint32, retData *uint32, retSize *uint32) uint32

// mapTypeRequestHeaders is the ABI's HTTP_REQUEST_HEADERS map type.
const mapTypeRequestHeaders = 0

// pairsData and pairsSize receive the out-parameters: package variables,
// never stack slots (see internal/abiglue: the stack may move while the host
// holds an address into it).
var pairsData, pairsSize uint32

// requestHeaderPairs returns the serialized request header map. The host
// wrote it into memory it got from the guest's proxy_on_memory_allocate
// during this call (the ABI glue's arena, which keeps the block reachable
// until the next callback rewinds it), so the bytes are valid until the
// callback returns, like every other value read from the host. An empty map
// comes back as (0, 0).
func requestHeaderPairs() ([]byte, bool) {
	pairsData, pairsSize = 0, 0
	if hostGetHeaderMapPairs(mapTypeRequestHeaders, &pairsData, &pairsSize) != 0 {
		return nil, false
	}
	if pairsSize == 0 {
		return nil, true
	}
	if pairsData == 0 {
		return nil, false
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), uintptr(pairsData))), pairsSize), true
}
