//go:build wasip1 && abiglue

// This file is compiled only inside the build's copy of the SDK
// (build/sdk/proxywasm), never in this repository's own packages.

package proxywasm

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/internal"

// LookupSharedData reads key from shared data as GetSharedData does, and
// reports a missing key as found false with a nil error instead of
// ErrorStatusNotFound: a miss is the answer for every request whose session
// was never tombstoned, and needs no comparison of error values. The value
// is valid until the current callback returns.
func LookupSharedData(key string) (value []byte, cas uint32, found bool, err error) {
	var raw *byte
	var size int
	switch st := internal.ProxyGetSharedData(internal.StringBytePtr(key), len(key), &raw, &size, &cas); st {
	case internal.StatusOK:
		return internal.RawBytePtrToByteSlice(raw, size), cas, true, nil
	case internal.StatusNotFound:
		return nil, 0, false, nil
	default:
		return nil, 0, false, internal.StatusToError(st)
	}
}
