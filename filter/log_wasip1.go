//go:build wasip1

package main

import (
	"unsafe"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
)

// logInfoBytes logs b at info level without copying it: proxy_log copies the
// message during the call (Envoy's context.cc log: it builds its own
// absl::string_view copy into the log sink), so a view of the caller's
// reused buffer is enough.
func logInfoBytes(b []byte) { proxywasm.LogInfo(unsafe.String(unsafe.SliceData(b), len(b))) }

// logDebugBytes logs b at debug level without copying it (see logInfoBytes).
func logDebugBytes(b []byte) { proxywasm.LogDebug(unsafe.String(unsafe.SliceData(b), len(b))) }
