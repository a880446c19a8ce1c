//go:build !wasip1

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// logInfoBytes logs b at info level. proxytest keeps the strings it is given,
// so natively the line is copied.
func logInfoBytes(b []byte) { proxywasm.LogInfo(string(b)) }

// logDebugBytes logs b at debug level (copied, as logInfoBytes).
func logDebugBytes(b []byte) { proxywasm.LogDebug(string(b)) }
