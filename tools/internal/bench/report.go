package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteText writes the run: the cost table (Markdown, the form of
// docs/performance.md), the heap allocations, and the budget, each with
// its method.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	o := r.Options
	p("machine: %s; guard: %s; %d interleaved rounds per comparison, ratios the median of the ABBA quads of blocks", r.Machine, r.GuardName, o.Rounds)
	if r.V8 != nil {
		p("V8: %s %s", r.V8.NodeVersion, strings.Join(V8Flags, " "))
	} else {
		p("V8: not measured (node not on PATH)")
	}
	if r.Cost {
		p("")
		r.writeCost(p)
	}
	p("")
	r.writeAllocs(p)
	p("")
	r.writeBudget(p)
	p("elapsed %s", r.Elapsed.Round(1e8))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCost writes the cost table: each figure in V8 and in wazero, per
// request against the do-nothing plugin, per MB of SSE against the plugin
// that copies each chunk out and back.
func (r *Report) writeCost(p func(string, ...any)) {
	p("| what it costs | V8 | embedded host (wazero) |")
	p("|---|---|---|")
	rows := []struct{ label, wl string }{
		{"guarded request (× do-nothing plugin)", WorkGuarded},
		{"tombstoned request: tombstone table full (×)", WorkTombstoned},
		{"unguarded request (×)", WorkUnguarded},
		{"resume (×)", WorkResume},
		{"SSE, CPU per MB (× copy plugin)", WorkSSE},
	}
	cell := func(res Results, wl string) string {
		pr, ok := res[costKey(wl)]
		if !ok || !pr.Measured() {
			return "not measured"
		}
		if wl == WorkSSE {
			return fmt.Sprintf("%.1f ms (%.0f MB/s; %.1f×)", pr.A(), 1e3/pr.A(), pr.Ratio())
		}
		return fmt.Sprintf("%.2f µs (%.1f×)", pr.A()/1e3, pr.Ratio())
	}
	for _, row := range rows {
		p("| %s | %s | %s |", row.label, cell(r.v8Results(), row.wl), cell(r.Wazero, row.wl))
	}
	gc := func(res Results) string {
		var s []string
		for _, m := range []struct{ mod, live string }{{modGC1024, "1 MiB live"}, {modGC0, "empty heap"}} {
			if pr, ok := res[key{gcWorkload, m.mod, modPassthrough}]; ok && pr.Measured() {
				s = append(s, fmt.Sprintf("%.2f ms %s", (pr.A()-pr.B())/1e6, m.live))
			}
		}
		if len(s) == 0 {
			return "not measured"
		}
		return strings.Join(s, ", ")
	}
	p("| a GC cycle inside the VM | %s | %s |", gc(r.v8Results()), gc(r.Wazero))
	v8mem := "not measured"
	if r.V8 != nil && r.V8.MemoryBytes[modGuard] > 0 {
		v8mem = fmt.Sprintf("%.1f MiB after its run", mib(r.V8.MemoryBytes[modGuard]))
	}
	p("| memory per VM (linear memory) | %s | %.1f MiB at request %s of the mix |", v8mem, mib(r.MemoryAtTo), thousands(r.GrowthTo))
	v8compile := "not measured"
	if r.V8Compile.Measured() {
		v8compile = fmt.Sprintf("%.2f s CPU, %.2f s wall (%.1f×)", r.V8CompileCPU.A()/1e9, r.V8Compile.A()/1e9, r.V8Compile.Ratio())
	}
	p("| compile, once per module and push (×) | %s | %.2f s (%.1f×) |", v8compile, r.WazeroCompile.A()/1e9, r.WazeroCompile.Ratio())
	v8start := "not measured"
	if r.V8 != nil && r.V8.VMStartNs[modGuard] > 0 {
		v8start = fmt.Sprintf("%.2f ms (%.2f ms)", r.V8.VMStartNs[modGuard]/1e6, r.V8.VMStartNs[modPassthrough]/1e6)
	}
	p("| VM start, per worker (do-nothing's) | %s | %.2f ms (%.2f ms) |", v8start, r.WazeroVMStart.A()/1e6, r.WazeroVMStart.B()/1e6)
	size := fmt.Sprintf("%s bytes (%.2f×)", thousands(r.WasmBytes), float64(r.WasmBytes)/float64(max(r.PassthroughWasmBytes, 1)))
	p("| .wasm (×) | %s | %s |", size, size)
	p("| shared data per live session | — | %.0f bytes |", float64(r.PerSession.Bytes)/float64(max(r.PerSession.Live, 1)))
}

// writeAllocs writes the guard's heap allocations per workload.
func (r *Report) writeAllocs(p func(string, ...any)) {
	o := r.Options
	p("guest heap, steady state (wazero, counted by a listener on the Go allocator; %s requests, or %d streams of %d KiB, after a warm-up pass), per %s:",
		thousands(o.AllocRequests), o.AllocStreams, o.StreamBytes>>10, thousands(AllocPer))
	for _, wl := range Workloads {
		a, ok := r.Allocs[wl]
		if !ok {
			continue
		}
		what := wl + " requests"
		if wl == WorkSSE {
			what = fmt.Sprintf("SSE streams of %d KiB", o.StreamBytes>>10)
		}
		p("  %-34s %14s bytes in %9.0f allocations, %7.1f GC cycles", what, thousands(int(a.Bytes)), a.Count, a.GCCycles)
	}
}

// writeBudget writes every check of the budget and the verdict.
func (r *Report) writeBudget(p func(string, ...any)) {
	base := r.BaselineName
	if base == "" {
		base = "none"
	}
	p("budget against the baseline %s (%d bytes):", base, r.BaselineWasmBytes)
	for _, c := range r.Budget() {
		verdict := "NOT MEASURED"
		switch {
		case c.Measured && c.Held:
			verdict = "held"
		case c.Measured:
			verdict = "BROKEN"
		}
		line := fmt.Sprintf("  %-46s %-12s %-22s %s", c.Name, c.Value, c.Limit, verdict)
		if c.Detail != "" {
			line += "  (" + c.Detail + ")"
		}
		p("%s", line)
	}
	if ok, bad := r.BudgetHolds(); ok {
		p("the budget holds")
	} else {
		p("THE BUDGET DOES NOT HOLD: %s", strings.Join(bad, "; "))
	}
}

// perUnit formats ns per unit of workload: µs per request, ms per MB.
func perUnit(workload string, ns float64) string {
	if workload == WorkSSE {
		return fmt.Sprintf("%.2f ms", ns) // ns per byte = ms per MB
	}
	return fmt.Sprintf("%.2f µs", ns/1e3)
}

func unitName(workload string) string {
	if workload == WorkSSE {
		return "MB"
	}
	return "request"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// thousands formats n with commas.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
