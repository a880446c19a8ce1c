package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
)

// WriteText writes every figure with its method, for humans and for the
// figures of docs/performance.md.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	f := r.Figures()
	p("machine: %s/%s, %d CPUs, %s; ratios are medians of %d A/B-interleaved rounds",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), len(r.Request.Rounds))
	p("request (POST, session, no cursor; %d sessions, max_sessions %d): guard %.0f ns, passthrough %.0f ns -> ratio %.3f (rounds %s)",
		r.Sessions, DefaultMaxSessions, r.Request.A(), r.Request.B(), f.RequestOverheadRatio, rounds(r.Request.Rounds))
	p("request on a tombstone table that has seen %d tombstones (max_sessions %d, every one of %d buckets written): guard %.0f ns, passthrough %.0f ns -> ratio %.3f (rounds %s)",
		r.TombstonesWritten, r.TombstoneMaxSessions, r.TombstoneBuckets, r.RequestTombstones.A(), r.RequestTombstones.B(), f.RequestTombstonesRatio, rounds(r.RequestTombstones.Rounds))
	p("the same guard on that table against one whose table is empty: %.0f vs %.0f ns -> ratio %.3f (rounds %s)",
		r.TombstonesVsEmpty.A(), r.TombstonesVsEmpty.B(), r.TombstonesVsEmpty.Ratio(), rounds(r.TombstonesVsEmpty.Rounds))
	p("the guard on that table against that job's floor (the floor plugin's tombstone lookups find a full bucket's value): %.0f vs %.0f ns -> ratio %.3f (rounds %s); that floor against passthrough %.3f (rounds %s)",
		r.TombstonesFloor.A(), r.TombstonesFloor.B(), f.TombstonesFloorRatio, rounds(r.TombstonesFloor.Rounds),
		f.TombstonesFloorOverheadRatio, rounds(r.TombstonesFloorOverhead.Rounds))
	p("resume (GET, session, tagged cursor of its last event): guard %.0f ns, passthrough %.0f ns -> ratio %.3f (rounds %s)",
		r.Resume.A(), r.Resume.B(), f.ResumeOverheadRatio, rounds(r.Resume.Rounds))
	p("guard against the floor (only the host calls the guard cannot do without): request %.0f vs %.0f ns -> %.3f (rounds %s); resume %.0f vs %.0f ns -> %.3f (rounds %s); SSE %.0f vs %.0f MB/s -> %.3f",
		r.RequestFloor.A(), r.RequestFloor.B(), f.RequestFloorRatio, rounds(r.RequestFloor.Rounds),
		r.ResumeFloor.A(), r.ResumeFloor.B(), f.ResumeFloorRatio, rounds(r.ResumeFloor.Rounds),
		mbps(r.SSEFloor.A()), mbps(r.SSEFloor.B()), inverse(r.SSEFloor.Ratio()))
	p("floor against passthrough (what the ABI glue, the Go runtime and the host cost for those calls): request %.0f vs %.0f ns -> %.3f (rounds %s); resume %.0f vs %.0f ns -> %.3f (rounds %s); SSE against passthrough-copy %.0f vs %.0f MB/s -> %.3f",
		r.RequestFloorOverhead.A(), r.RequestFloorOverhead.B(), f.RequestFloorOverheadRatio, rounds(r.RequestFloorOverhead.Rounds),
		r.ResumeFloorOverhead.A(), r.ResumeFloorOverhead.B(), f.ResumeFloorOverheadRatio, rounds(r.ResumeFloorOverhead.Rounds),
		mbps(r.SSEFloorOverhead.A()), mbps(r.SSEFloorOverhead.B()), f.SSEFloorThroughputRatio)
	p("unguarded (a path no route matches): guard %.0f ns, passthrough %.0f ns -> ratio %.3f (rounds %s)",
		r.Unguarded.A(), r.Unguarded.B(), f.UnguardedOverheadRatio, rounds(r.Unguarded.Rounds))
	p("unguarded against its floor (pathfloor: one :path read): guard %.0f ns, pathfloor %.0f ns -> ratio %.3f (rounds %s); pathfloor against passthrough %.0f vs %.0f ns -> %.3f (rounds %s)",
		r.UnguardedFloor.A(), r.UnguardedFloor.B(), f.UnguardedFloorRatio, rounds(r.UnguardedFloor.Rounds),
		r.UnguardedFloorOverhead.A(), r.UnguardedFloorOverhead.B(), f.UnguardedFloorOverheadRatio, rounds(r.UnguardedFloorOverhead.Rounds))
	if r.FullSessions > 0 {
		p("with %d sessions for max_sessions %d (more lookups read both candidate slots; evicted sessions have no record): request ratio %.3f (%.0f ns), resume ratio %.3f (%.0f ns)",
			r.FullSessions, DefaultMaxSessions, r.RequestFull.Ratio(), r.RequestFull.A(), r.ResumeFull.Ratio(), r.ResumeFull.A())
	}
	p("SSE (%d KiB streams, %d chunks of 16 KiB, 90%% ~200 B notifications / 10%% ~2 KB results): guard %.0f MB/s, passthrough-copy %.0f MB/s -> ratio %.3f",
		r.StreamBytes>>10, r.StreamChunks, mbps(r.SSE.A()), mbps(r.SSE.B()), f.SSEThroughputRatio)
	p("native rewriter as the plugin runs it (last event with an ID classified per chunk) %.0f MB/s, copy() %.0f MB/s -> ratio %.3f; classifying every event %.0f MB/s (ratio %.3f)",
		mbps(r.Rewriter.A()), mbps(r.Rewriter.B()), f.RewriterMemcpyRatio, mbps(r.RewriterFull.A()), inverse(r.RewriterFull.Ratio()))
	p("guest memory: %.2f MiB at request %d, %.2f MiB at request %d, %.2f MiB at request %d -> growth %.3f MiB over the last window",
		mib(r.MemoryAtEarly), r.GrowthEarly, mib(r.MemoryAtFrom), r.GrowthFrom, mib(r.MemoryAtTo), r.GrowthTo, f.VMMemoryGrowthMiB)
	p("shared data: %d live sessions (4 streams each) in %d keys, %d bytes -> %.1f B/session",
		r.PerSession.Live, r.PerSession.Keys, r.PerSession.Bytes, f.SharedBytesPerSession)
	evicted := "not checked"
	if r.ChurnEvictedUnknown {
		evicted = "forwarded untagged as unknown"
	}
	p("churn: %d sessions with max_sessions=%d -> %d keys, %d live, %.2f MiB (%d CAS conflicts); the evicted first session's cursor: %s",
		r.ChurnSessions, r.ChurnMaxSessions, r.Churn.Keys, r.Churn.Live, f.SharedMiBAfterChurn, r.ChurnConflicts, evicted)
	p("wasm: guard %d bytes (%.2f MiB), passthrough %d bytes -> ratio %.3f", r.WasmBytes, mib(int64(r.WasmBytes)), r.PassthroughWasmBytes, f.WasmSizeRatio)
	if len(r.V8Compile.Rounds) > 0 {
		p("V8 compile (%s, %s): guard %.0f ms, passthrough %.0f ms -> ratio %.3f (rounds %s)",
			r.NodeVersion, strings.Join(V8Flags, " "), r.V8Compile.A()/1e6, r.V8Compile.B()/1e6, f.V8CompileRatio, rounds(r.V8Compile.Rounds))
	} else {
		p("V8 compile: not measured (node not on PATH)")
	}
	writeV8(p, r)
	p("start-up: first host (compile + VM) %s; VM start (_initialize, root context, vm_start, configure) %s",
		r.FirstStart.Round(1e5), r.VMStart.Round(1e4))
	for _, g := range r.GC {
		p("GC cycle inside the VM with %d KiB live: %.1f µs (probe %.0f ns/request, passthrough %.0f)",
			g.LiveKiB, g.NsPerCycle/1e3, g.Pair.A(), g.Pair.B())
	}
	if r.SurvivalRequests > 0 {
		p("GC survival under Envoy 1.33–1.38 WASI (poll_oneoff = ENOSYS): %d requests made the guard allocate %d MiB in a %.1f MiB linear memory -> at least %d GC cycles, no trap",
			r.SurvivalRequests, r.SurvivalAllocated>>20, mib(r.SurvivalMemory), r.SurvivalAllocated/max(r.SurvivalMemory, 1))
	}
	for _, ps := range r.Profiles {
		WriteProfiles(&b, "time per guest callback, "+ps.Name, ps.Guard, ps.Base)
	}
	out := f.OutOfReach()
	if len(out) > 0 {
		p("OUT OF REACH ON THIS MACHINE (the job's floor misses the target too): %s", strings.Join(out, "; "))
	}
	switch m := f.Missed(); {
	case len(m) > 0:
		p("MISSED: %s", strings.Join(m, "; "))
	case len(out) > 0:
		p("every other target holds")
	default:
		p("all targets hold")
	}
	p("elapsed %s", r.Elapsed.Round(1e8))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeV8 writes the V8 figures beside the wazero ones.
func writeV8(p func(string, ...any), r *Report) {
	v := r.V8
	if v == nil {
		p("V8 overheads: not measured (node not on PATH)")
		return
	}
	p("V8 (%s, %s; own proxy-wasm host in JS, header maps serialized byte-wise into guest memory): guard against passthrough, A/B interleaved in ABBA blocks:", v.NodeVersion, strings.Join(V8Flags, " "))
	for _, w := range []struct {
		name   string
		p      Pair
		wazero Pair
	}{{"request", v.Request, r.Request}, {"unguarded", v.Unguarded, r.Unguarded}, {"resume", v.Resume, r.Resume}} {
		p("  %s: guard %.0f ns, passthrough %.0f ns -> ratio %.3f (rounds %s); wazero ratio %.3f; host's share of the guard's time ~%.0f%%",
			w.name, w.p.A(), w.p.B(), w.p.Ratio(), rounds(w.p.Rounds), w.wazero.Ratio(), 100*v.HostShare(w.name, w.p))
	}
	p("  host's own cost: exchange loop around no-op callbacks %.0f ns; 9-header map pairs %.0f ns; shared-data miss %.0f ns, hit %.0f ns (each without the guest's allocator)",
		v.HostNs["exchange_empty"], v.HostNs["header_map_pairs"], v.HostNs["shared_data_miss"], v.HostNs["shared_data_hit"])
	for _, w := range []string{"request", "unguarded", "resume"} {
		var calls []string
		for k, n := range v.Calls[w] {
			calls = append(calls, fmt.Sprintf("%s %.2f", strings.TrimPrefix(k, "proxy_"), n))
		}
		slices.Sort(calls)
		p("  guard's host calls per %s: %s", w, strings.Join(calls, ", "))
	}
}

func rounds(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, " ")
}

// mbps turns ns per byte into MB/s (10^6 bytes).
func mbps(nsPerByte float64) float64 {
	if nsPerByte == 0 {
		return 0
	}
	return 1e3 / nsPerByte
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
