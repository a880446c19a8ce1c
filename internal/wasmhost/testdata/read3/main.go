// Command read3 reads three request headers per request and does nothing
// else: the benchmark probe that measures the cost of host calls.
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

func (*httpContext) OnHttpRequestHeaders(int, bool) types.Action {
	_, _ = proxywasm.GetHttpRequestHeader(":path")
	_, _ = proxywasm.GetHttpRequestHeader("mcp-session-id")
	_, _ = proxywasm.GetHttpRequestHeader("last-event-id")
	return types.ActionContinue
}
