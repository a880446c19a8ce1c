// Command gcprobe measures the cost of one garbage collection cycle inside a
// plugin VM: it runs a full runtime.GC() in every request-headers callback.
// Its plugin configuration is the live heap to keep, in KiB (a decimal
// number; empty = 0), held as 1 KiB blocks reachable from a slice, so the
// cost can be read at more than one heap size. Compared with the passthrough
// plugin, the difference per request is the cost of a cycle, under the WASI
// answers of the host (poll_oneoff = ENOSYS in Envoy 1.33–1.38). It is built
// exactly like the plugin (internal/tools/wasmbuild).
package main

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

func init() { proxywasm.SetVMContext(&vmContext{}) }

func main() {}

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(uint32) types.PluginContext { return &pluginContext{} }

type pluginContext struct {
	types.DefaultPluginContext
	live [][]byte
}

// OnPluginStart allocates the configured live heap.
func (p *pluginContext) OnPluginStart(int) types.OnPluginStartStatus {
	data, err := proxywasm.GetPluginConfiguration()
	if err != nil && err != types.ErrorStatusNotFound {
		return types.OnPluginStartStatusFailed
	}
	kib := 0
	if s := strings.TrimSpace(string(data)); s != "" {
		if kib, err = strconv.Atoi(s); err != nil || kib < 0 {
			proxywasm.LogCritical("gcprobe: configuration must be a number of KiB, got " + strconv.Quote(s))
			return types.OnPluginStartStatusFailed
		}
	}
	for i := 0; i < kib; i++ {
		p.live = append(p.live, make([]byte, 1024))
	}
	return types.OnPluginStartStatusOK
}

func (*pluginContext) NewHttpContext(uint32) types.HttpContext { return &httpContext{} }

type httpContext struct{ types.DefaultHttpContext }

// OnHttpRequestHeaders runs one complete garbage collection cycle.
func (*httpContext) OnHttpRequestHeaders(int, bool) types.Action {
	runtime.GC()
	return types.ActionContinue
}
