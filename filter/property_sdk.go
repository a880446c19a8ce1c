//go:build !wasip1

package main

import (
	"strings"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
)

// propertySize returns the size of the property at path (segments joined by
// NUL) through the SDK (native tests: proxytest).
func propertySize(path string) (int, bool) {
	b, err := proxywasm.GetProperty(strings.Split(path, "\x00"))
	if err != nil {
		return 0, false
	}
	return len(b), true
}
