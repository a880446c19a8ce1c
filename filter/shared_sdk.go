//go:build !(wasip1 && abiglue)

package main

import (
	"errors"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// lookupSharedData reads key through the SDK (native tests: proxytest): a
// missing key is found false with a nil error.
func lookupSharedData(key string) (value []byte, cas uint32, found bool, err error) {
	v, cas, err := proxywasm.GetSharedData(key)
	switch {
	case err == nil:
		return v, cas, true, nil
	case errors.Is(err, types.ErrorStatusNotFound):
		return nil, 0, false, nil
	default:
		return nil, 0, false, err
	}
}
