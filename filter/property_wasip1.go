//go:build wasip1

package main

import "unsafe"

// propertySize calls proxy_get_property directly with an already serialized
// path (segments joined by NUL) and returns only the size of the value: the
// SDK's GetProperty serializes the path into a new slice on every call, a
// heap allocation on the path of every guarded request, and the duplicate
// check (ambiguous.go) needs the size alone. The host still places the value
// in the arena of the ABI glue, which the next callback rewinds.
//
//go:wasmimport env proxy_get_property
func hostGetProperty(path *byte, pathSize uint32, retData *uint32, retSize *uint32) uint32

// propData and propSize receive the out-parameters: package variables, never
// stack slots (see internal/abiglue: the stack may move while the host holds
// an address into it).
var propData, propSize uint32

func propertySize(path string) (int, bool) {
	propData, propSize = 0, 0
	if hostGetProperty(unsafe.StringData(path), uint32(len(path)), &propData, &propSize) != 0 {
		return 0, false
	}
	return int(propSize), true
}
