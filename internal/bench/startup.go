package bench

import (
	"context"
	"time"
)

// startup measures wasmhost.New for one guard VM: the first call compiles
// the module (wazero's compiler; the compilation is cached for the process),
// the following ones instantiate it, run _initialize, create the root
// context, and run proxy_on_vm_start and proxy_on_configure.
func startup(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	rep.WasmBytes = len(w.Guard)
	rep.PassthroughWasmBytes = len(w.Passthrough)
	o.progress("start-up: compile and %d VM starts", o.Rounds)
	var starts []float64
	for i := -1; i < o.Rounds; i++ {
		t := time.Now()
		h, err := newHost(ctx, w.Guard, GuardConfig, 1)
		d := time.Since(t)
		if err != nil {
			return err
		}
		h.Close(ctx)
		if i < 0 {
			rep.FirstStart = d
			continue
		}
		starts = append(starts, float64(d.Nanoseconds()))
	}
	rep.VMStart = time.Duration(median(starts))
	return nil
}

// gcCost compares the GC probe (one runtime.GC per request) with the
// passthrough plugin, at two live heap sizes.
func gcCost(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	pass, err := newHost(ctx, w.Passthrough, "", 1)
	if err != nil {
		return err
	}
	defer pass.Close(ctx)
	x := Request(Session(1))
	for _, kib := range []int{0, 1024} {
		probe, err := newHost(ctx, w.GCProbe, itoa(kib), 1)
		if err != nil {
			return err
		}
		o.progress("GC cycle cost with %d KiB live", kib)
		p, err := interleave(repeat(&runner{h: probe}, x), repeat(&runner{h: pass}, x), o.GCRequests, o.Rounds)
		probe.Close(ctx)
		if err != nil {
			return err
		}
		rep.GC = append(rep.GC, GCCost{LiveKiB: kib, NsPerCycle: p.A() - p.B(), Pair: p})
	}
	return nil
}

// GCCost is the cost of one forced GC cycle inside a VM.
type GCCost struct {
	LiveKiB    int
	NsPerCycle float64
	Pair       Pair
}
