// Command filter is the mcp-resume-guard proxy-wasm plugin. Build it with
// `make build` (standard Go, GOOS=wasip1, -buildmode=c-shared) into
// build/mcp-resume-guard.wasm.
//
// The plugin is a WASI reactor: the host calls _initialize, which runs init;
// main never runs.
package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

func init() {
	proxywasm.SetVMContext(&vmContext{})
}

func main() {}
