package main

import (
	"errors"
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// hostSharedData is cursor.SharedData on proxy-wasm shared data.
type hostSharedData struct{}

// Get reads key (lookupSharedData: a missing key is cursor.ErrNotFound).
func (*hostSharedData) Get(key []byte) ([]byte, uint32, error) {
	v, cas, found, err := lookupSharedData(keyString(key))
	if err == nil && !found {
		return nil, 0, cursor.ErrNotFound
	}
	return v, cas, err
}

// Set writes key (cursor.ErrCASMismatch when cas is no longer current).
func (*hostSharedData) Set(key, value []byte, cas uint32) error {
	err := proxywasm.SetSharedData(keyString(key), value, cas)
	if errors.Is(err, types.ErrorStatusCasMismatch) {
		return cursor.ErrCASMismatch
	}
	return err
}

// keyString views key as a string without copying it: the SDK only hands the
// bytes to the host for the duration of the call, and nothing keeps the
// string afterwards.
func keyString(key []byte) string {
	return unsafe.String(unsafe.SliceData(key), len(key))
}
