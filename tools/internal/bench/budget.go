package bench

import (
	"fmt"
	"strings"
)

// The performance budget (issue 32): what every change to the guard must
// keep, measured against a baseline build in the same run.
const (
	// MaxSlowdown bounds each workload's time over the baseline's, in V8
	// and in the embedded host.
	MaxSlowdown = 1.10
	// MaxGrowthMiB bounds the guest memory's growth from request
	// GrowthFrom to GrowthTo of the mix.
	MaxGrowthMiB = 1.0
	// MaxWasmBytes bounds the .wasm (4.5 MB).
	MaxWasmBytes = 4_500_000
)

// AllocationFree are the workloads that must allocate nothing on the guest's
// heap in steady state: a GC cycle inside the VM stops the Envoy worker.
var AllocationFree = []string{WorkGuarded, WorkUnguarded}

// Check is one line of the budget.
type Check struct {
	Name     string
	Value    string // as measured; "" when not measured
	Limit    string
	Held     bool
	Measured bool
	Detail   string // how the figure was taken
}

// Budget returns the budget's checks for the report: every workload against
// the baseline in each host, the memory growth, the .wasm size, and the
// allocation-free workloads.
func (r *Report) Budget() []Check {
	var out []Check
	for _, host := range []struct {
		name string
		res  Results
	}{{"V8", r.v8Results()}, {"wazero", r.Wazero}} {
		for _, wl := range Workloads {
			c := Check{Name: fmt.Sprintf("%-6s %-10s ÷ baseline", host.name, wl), Limit: fmt.Sprintf("≤ %.2f", MaxSlowdown)}
			if p, ok := host.res[budgetKey(wl, r.Cost)]; ok && p.Measured() {
				lo, hi := p.RoundRange()
				c.Value, c.Measured, c.Held = fmt.Sprintf("%.3f", p.Ratio()), true, p.Ratio() <= MaxSlowdown
				c.Detail = fmt.Sprintf("%s against %s %s; whole rounds %.2f–%.2f", perUnit(wl, p.A()), perUnit(wl, p.B()), "per "+unitName(wl), lo, hi)
			}
			out = append(out, c)
		}
	}
	growth := Check{Name: fmt.Sprintf("guest memory growth, request %d → %d", r.GrowthFrom, r.GrowthTo), Limit: fmt.Sprintf("≤ %.0f MiB", MaxGrowthMiB)}
	if r.MemoryAtTo > 0 {
		g := mib(r.MemoryAtTo - r.MemoryAtFrom)
		growth.Value, growth.Measured, growth.Held = fmt.Sprintf("%.2f MiB", g), true, g <= MaxGrowthMiB
		growth.Detail = fmt.Sprintf("%.2f → %.2f MiB", mib(r.MemoryAtFrom), mib(r.MemoryAtTo))
	}
	size := Check{Name: ".wasm size", Limit: fmt.Sprintf("≤ %s bytes", thousands(MaxWasmBytes)),
		Value: thousands(r.WasmBytes) + " bytes", Measured: r.WasmBytes > 0, Held: r.WasmBytes <= MaxWasmBytes}
	out = append(out, growth, size)
	for _, wl := range AllocationFree {
		c := Check{Name: fmt.Sprintf("heap allocated per %s %s requests", thousands(AllocPer), wl), Limit: "0 bytes"}
		if a, ok := r.Allocs[wl]; ok {
			c.Value, c.Measured, c.Held = fmt.Sprintf("%.0f bytes", a.Bytes), true, a.Bytes == 0
			c.Detail = fmt.Sprintf("%.0f allocations, %.1f GC cycles", a.Count, a.GCCycles)
		}
		out = append(out, c)
	}
	return out
}

// BudgetHolds reports whether every check was measured and held, and
// lists those that were not.
func (r *Report) BudgetHolds() (bool, []string) {
	var bad []string
	for _, c := range r.Budget() {
		switch {
		case !c.Measured:
			bad = append(bad, strings.Join(strings.Fields(c.Name), " ")+" not measured")
		case !c.Held:
			bad = append(bad, fmt.Sprintf("%s = %s (%s)", strings.Join(strings.Fields(c.Name), " "), c.Value, c.Limit))
		}
	}
	return len(bad) == 0, bad
}

func (r *Report) v8Results() Results {
	if r.V8 == nil {
		return nil
	}
	return r.V8.Results
}
