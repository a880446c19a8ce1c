// Command passthrough is the benchmark baseline for the per-request cost: a
// proxy-wasm HTTP filter that creates a stream context and does nothing else.
// It is built exactly like the plugin (internal/tools/wasmbuild: the same
// toolchain, SDK, ABI glue and runtime patch), so the difference between the
// two is the plugin's own work.
package main

import (
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

func init() { proxywasm.SetVMContext(&vmContext{}) }

func main() {}

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(uint32) types.PluginContext { return &pluginContext{} }

type pluginContext struct{ types.DefaultPluginContext }

func (*pluginContext) NewHttpContext(uint32) types.HttpContext { return &httpContext{} }

// httpContext continues every callback (types.DefaultHttpContext).
type httpContext struct{ types.DefaultHttpContext }
