// Command initcall calls a proxy-wasm host function from a package
// initializer, which runs inside _initialize: Envoy 1.33–1.38 refuses every
// call but logging there (restricted_callback) and fails the VM.
package main

import (
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

func init() {
	proxywasm.LogInfo("initcall: logging is allowed during _initialize")
	_ = proxywasm.SetSharedData("initcall:key", []byte("too early"), 0)
	proxywasm.SetVMContext(&types.DefaultVMContext{})
}

func main() {}
