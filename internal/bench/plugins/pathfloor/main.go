// Command pathfloor is the benchmark floor of an unguarded request: a
// proxy-wasm HTTP filter that reads the request's :path, one header value,
// and does nothing else, built exactly like the guard
// (internal/tools/wasmbuild). Where routes are matched by path prefix (an
// Istio sidecar, where a WasmPlugin cannot be scoped to routes), that read
// is the one host call every request needs before the guard can tell it is
// not MCP; the guard's unguarded time over this one is what it adds beyond
// that (unguarded_floor_ratio), this one's over the do-nothing plugin what
// the read costs.
package main

import (
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

func init() { proxywasm.SetVMContext(&vmContext{}) }

func main() {}

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(uint32) types.PluginContext { return &pluginContext{} }

type pluginContext struct {
	types.DefaultPluginContext
	paths int // bytes of :path seen, so the read is not optimized away
}

func (p *pluginContext) NewHttpContext(uint32) types.HttpContext { return &httpContext{plugin: p} }

type httpContext struct {
	types.DefaultHttpContext
	plugin *pluginContext
}

func (h *httpContext) OnHttpRequestHeaders(int, bool) types.Action {
	path, _ := proxywasm.GetHttpRequestHeader(":path")
	h.plugin.paths += len(path)
	return types.ActionContinue
}
