// Command leak is a proxy-wasm HTTP filter that passes every request
// unchanged and keeps leakBytes of guest heap for each one: what a GC that
// never catches up looks like from the host. TestSoakSeesGrowingMemory
// (tools/internal/soak) builds it as the plugin is built and checks that
// the soak's memory verdict fails on it.
package main

import (
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// leakBytes is kept per request.
const leakBytes = 256 << 10

// leaked holds every request's allocation for the VM's life.
var leaked [][]byte

func init() { proxywasm.SetVMContext(&plugin{}) }

func main() {}

// plugin is the VM, plugin and HTTP context at once: it keeps no state of
// its own.
type plugin struct {
	types.DefaultVMContext
	types.DefaultPluginContext
	types.DefaultHttpContext
}

func (p *plugin) NewPluginContext(uint32) types.PluginContext { return p }

func (p *plugin) NewHttpContext(uint32) types.HttpContext { return p }

func (*plugin) OnHttpRequestHeaders(int, bool) types.Action {
	b := make([]byte, leakBytes)
	b[0], b[len(b)-1] = 1, 1
	leaked = append(leaked, b)
	return types.ActionContinue
}
