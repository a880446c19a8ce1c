// Command passthroughcopy is the benchmark baseline for response body
// throughput: a proxy-wasm HTTP filter that reads every response body chunk
// into the guest and writes it back unchanged, the least a body-rewriting
// filter must do. It is built exactly like the plugin
// (internal/tools/wasmbuild).
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

type httpContext struct{ types.DefaultHttpContext }

// OnHttpResponseBody copies the chunk out of the host and back in.
func (*httpContext) OnHttpResponseBody(size int, _ bool) types.Action {
	if size == 0 {
		return types.ActionContinue
	}
	chunk, err := proxywasm.GetHttpResponseBody(0, size)
	if err != nil {
		return types.ActionContinue
	}
	_ = proxywasm.ReplaceHttpResponseBody(chunk)
	return types.ActionContinue
}
