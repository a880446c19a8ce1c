package bench

import (
	"context"
	"fmt"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// newHost starts wasm in a host with vms VMs and the given plugin
// configuration.
func newHost(ctx context.Context, wasm []byte, config string, vms int) (*wasmhost.Host, error) {
	h, err := wasmhost.New(ctx, wasmhost.Options{Wasm: wasm, PluginConfig: []byte(config), VMs: vms})
	if err != nil {
		return nil, fmt.Errorf("bench: starting a host: %w", err)
	}
	return h, nil
}

// runner drives exchanges through one host without allocating per call: the
// plugin may modify header maps in place (replace, remove), so every call
// works on a fresh copy of the exchange's templates, kept in reused buffers.
type runner struct {
	h         *wasmhost.Host
	req, resp wasmhost.Headers
}

// run simulates x once.
func (r *runner) run(x *wasmhost.Exchange) error {
	r.req = append(r.req[:0], x.Request...)
	y := *x
	y.Request = r.req
	if x.Response != nil {
		r.resp = append(r.resp[:0], x.Response...)
		y.Response = r.resp
	}
	_, err := r.h.Simulate(y)
	return err
}
