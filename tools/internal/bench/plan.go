package bench

import (
	"context"
	"fmt"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// A plan is what one host (V8 or wazero) runs: the modules, each in its own
// VM with its own shared data, and the A/B comparisons between them. Both
// hosts run the same plan, with the same exchanges.
type plan struct {
	modules     []module
	comparisons []comparison
	pop         *population
	stream      [][]byte // the SSE workload's body
}

// module is one VM of a plan.
type module struct {
	name   string
	wasm   []byte
	config string
	// seed: the population's streams run through it first (every module
	// that serves the workloads; not the GC probes).
	seed bool
	// tombstones: sessions tombstoned after the seed (TombstoneFactor x
	// the max_sessions of its config).
	tombstones int
}

// key names an A/B comparison: a workload (a name of Workloads, or
// gcWorkload) and the two modules, A and B.
type key struct{ workload, a, b string }

// comparison is one interleaved A/B of a workload between two modules.
type comparison struct {
	key
	n int // operations per side and round
}

// Module names of a plan.
const (
	modGuard       = "guard"       // the guard measured (A of the cost; of the budget in a budget-only run)
	modPassthrough = "passthrough" // does nothing
	modCopy        = "copy"        // copies each response body chunk out and back
	modBaseline    = "baseline"    // the baseline build of the guard (B of the budget)
	modGuardT      = "guard+t"     // the guard, tombstone table full
	modBaselineT   = "baseline+t"  // the baseline, tombstone table full
	// The guard's own VMs for the budget, so that each side of a budget
	// comparison has served the same traffic (a VM that also served the
	// cost comparisons holds more stream tails per session, and a resume
	// reads them all).
	modBudget  = "guard/budget"
	modBudgetT = "guard+t/budget"
	modGC0     = "gcprobe-0"    // a full GC per request, empty heap
	modGC1024  = "gcprobe-1024" // a full GC per request, 1 MiB live
)

// gcWorkload is one request at a time through the GC probes (a GC cycle
// each) and the passthrough plugin.
const gcWorkload = "gc"

// newPlan builds the plan of a run: the cost comparisons (the guard against
// a do-nothing plugin; for SSE against the copy plugin) when cost is set,
// and the budget's (the guard against baseline) when baseline is not nil.
// The two sides of a budget comparison serve the same exchanges from the
// same seed: the budget runs the guard in VMs of its own when the cost
// comparisons run too (the reference plugins keep no state).
func newPlan(w *Wasm, baseline []byte, o Options, cost bool) *plan {
	maxT := o.TombstoneMaxSessions
	p := &plan{pop: newPopulation(o.Sessions), stream: benchStream(o.StreamBytes)}
	add := func(m module) { p.modules = append(p.modules, m) }
	tombstoned := func(name string, wasm []byte) {
		add(module{name: name, wasm: wasm, config: GuardConfigWith(maxT), seed: true, tombstones: TombstoneFactor * maxT})
	}
	n := func(workload string) int {
		if workload == WorkSSE {
			return o.Streams
		}
		return o.Requests
	}
	add(module{name: modGuard, wasm: w.Guard, config: GuardConfig, seed: true})
	tombstoned(modGuardT, w.Guard)
	if cost {
		add(module{name: modPassthrough, wasm: w.Passthrough, seed: true})
		add(module{name: modCopy, wasm: w.PassthroughCopy, seed: true})
		add(module{name: modGC0, wasm: w.GCProbe, config: "0"})
		add(module{name: modGC1024, wasm: w.GCProbe, config: "1024"})
		for _, wl := range Workloads {
			c := comparison{key{wl, modGuard, modPassthrough}, n(wl)}
			switch wl {
			case WorkTombstoned:
				c.a = modGuardT
			case WorkSSE:
				c.b = modCopy
			}
			p.comparisons = append(p.comparisons, c)
		}
		p.comparisons = append(p.comparisons,
			comparison{key{gcWorkload, modGC0, modPassthrough}, o.GCRequests},
			comparison{key{gcWorkload, modGC1024, modPassthrough}, o.GCRequests})
	}
	if baseline != nil {
		if cost {
			add(module{name: modBudget, wasm: w.Guard, config: GuardConfig, seed: true})
			tombstoned(modBudgetT, w.Guard)
		}
		add(module{name: modBaseline, wasm: baseline, config: GuardConfig, seed: true})
		tombstoned(modBaselineT, baseline)
		for _, wl := range Workloads {
			p.comparisons = append(p.comparisons, comparison{budgetKey(wl, cost), n(wl)})
		}
	}
	return p
}

// exchanges returns a workload's exchanges and the units each counts.
func (p *plan) exchanges(workload string) ([]wasmhost.Exchange, int64) {
	if workload == gcWorkload {
		return []wasmhost.Exchange{Request(Session(1))}, 1
	}
	return p.pop.exchanges(workload, p.stream)
}

// Results are a plan's outcome in one host.
type Results map[key]Pair

// runWazero runs the plan in the embedded host, one VM per module.
func (p *plan) runWazero(ctx context.Context, o Options) (Results, error) {
	runners := map[string]*runner{}
	for _, m := range p.modules {
		h, err := newHost(ctx, m.wasm, m.config, 1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		defer h.Close(ctx)
		r := &runner{h: h}
		runners[m.name] = r
		if !m.seed {
			continue
		}
		o.progress("wazero: %s: seeding %d sessions, %d tombstones", m.name, len(p.pop.sessions), m.tombstones)
		if err := p.pop.seed(r); err != nil {
			return nil, err
		}
		if err := fillTombstones(r, m.tombstones); err != nil {
			return nil, err
		}
		if m.config != "" {
			if err := checkGuard(m.name, h, p.pop, m.tombstones); err != nil {
				return nil, err
			}
		}
	}
	res := Results{}
	for _, c := range p.comparisons {
		xs, unit := p.exchanges(c.workload)
		o.progress("wazero: %s, %s against %s: %d rounds of %d", c.workload, c.a, c.b, o.Rounds, c.n)
		pair, err := interleave(cycle(runners[c.a], xs, unit), cycle(runners[c.b], xs, unit), c.n, o.Rounds)
		if err != nil {
			return nil, fmt.Errorf("bench: wazero: %s: %w", c.workload, err)
		}
		res[c.key] = pair
	}
	return res, nil
}
