//go:build wasip1 && abiglue

// This file is compiled only inside the build's copy of the SDK
// (build/sdk/proxywasm), never in this repository's own packages.

package proxywasm

import (
	"unsafe"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/internal"
)

// GetHttpRequestHeaderPairs returns the request header map in the ABI's
// serialized form, as the host wrote it, without building a [][2]string of
// new strings from it as GetHttpRequestHeaders does. It goes through the ABI
// glue (internal.ProxyGetHeaderMapPairs): the map is reserved for before the
// host copies it, and an address and size the host returns that do not lie
// inside memory the glue handed out during the call are an error, never a
// slice of arbitrary memory. The bytes are valid until the current callback
// returns; an empty map is (nil, nil).
func GetHttpRequestHeaderPairs() ([]byte, error) {
	var raw *byte
	var size int
	if st := internal.ProxyGetHeaderMapPairs(internal.MapTypeHttpRequestHeaders, &raw, &size); st != internal.StatusOK {
		return nil, internal.StatusToError(st)
	}
	if size == 0 {
		return nil, nil
	}
	return unsafe.Slice(raw, size), nil
}
