package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/sharedusage"
)

// TestMedian covers odd and even counts.
func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestInterleaveIgnoresPreemptedBlocks runs interleave on a fake clock: A
// costs 3 ns a unit and B 2, and one block in thirteen, on either side,
// loses 5 µs (a preemption). The ratio, a median over quads of blocks, is
// the true 1.5; whole rounds, which sum the slowed blocks, are not.
func TestInterleaveIgnoresPreemptedBlocks(t *testing.T) {
	now := time.Unix(0, 0)
	defer func(c func() time.Time) { clock = c }(clock)
	clock = func() time.Time { return now }
	calls := 0
	side := func(nsPerUnit int) workload {
		return func(n int) (int64, error) {
			calls++
			d := time.Duration(n * nsPerUnit)
			if calls%13 == 0 {
				d += 5 * time.Microsecond
			}
			now = now.Add(d)
			return int64(n), nil
		}
	}
	p, err := interleave(side(3), side(2), 4000, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rounds) != 5 || len(p.AQuads) != 5*blocksPerRound/2 {
		t.Fatalf("%d rounds, %d quads; want 5 and %d", len(p.Rounds), len(p.AQuads), 5*blocksPerRound/2)
	}
	if p.Ratio() != 1.5 || p.A() != 3 || p.B() != 2 {
		t.Errorf("ratio %v, A %v ns, B %v ns; want 1.5, 3 and 2", p.Ratio(), p.A(), p.B())
	}
	if lo, hi := p.RoundRange(); lo == 1.5 && hi == 1.5 {
		t.Errorf("whole rounds all at 1.5: no block was slowed, the test tests nothing")
	}
}

// TestSSEStreamShape checks the generated traffic: about the asked size,
// about one response in ten, events of the stated sizes, ids in sequence.
func TestSSEStreamShape(t *testing.T) {
	s := string(SSEStream(1<<20, 1, 1))
	if len(s) < 1<<20 || len(s) > 1<<20+ResponseBytes {
		t.Fatalf("stream of %d bytes", len(s))
	}
	events := strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n")
	responses := 0
	for i, ev := range events {
		if !strings.HasPrefix(ev, "id: e-") {
			t.Fatalf("event %d: %.40q", i, ev)
		}
		size := len(ev) + 2
		switch {
		case strings.Contains(ev, `"result"`):
			responses++
			if size != ResponseBytes {
				t.Errorf("response event of %d bytes", size)
			}
		case size != NotificationBytes:
			t.Errorf("notification event of %d bytes", size)
		}
	}
	if share := float64(responses) / float64(len(events)); share < 0.07 || share > 0.13 {
		t.Errorf("response share %.3f, want about %.2f", share, ResponseShare)
	}
}

// pair returns a measured Pair of ratio r (A = r × B ns per unit).
func pair(r, bNs float64) Pair {
	return Pair{AQuads: []float64{r * bNs}, BQuads: []float64{bNs}, Rounds: []float64{r}}
}

// budgetReport is a report every check of whose budget holds, of a run that
// measured the cost figures too (cost) or only the budget.
func budgetReport(cost bool) *Report {
	r := &Report{
		GuardName: "now", BaselineName: "1367a76", Wazero: Results{}, V8: &V8Run{Results: Results{}},
		GrowthFrom: 200_000, GrowthTo: 400_000, MemoryAtFrom: 8 << 20, MemoryAtTo: 8 << 20,
		WasmBytes: 4_146_551, Allocs: map[string]Allocs{}, Cost: cost,
	}
	for _, wl := range Workloads {
		r.Wazero[budgetKey(wl, cost)] = pair(1.0, 8000)
		r.V8.Results[budgetKey(wl, cost)] = pair(1.0, 2000)
		r.Allocs[wl] = Allocs{}
	}
	return r
}

// TestBudget: each check holds at its limit and breaks just beyond it, and
// a check that was not measured keeps the budget from holding.
func TestBudget(t *testing.T) {
	if ok, bad := budgetReport(false).BudgetHolds(); !ok {
		t.Fatalf("the budget of a report within it does not hold: %q", bad)
	}
	for _, c := range []struct {
		name   string
		change func(*Report)
		want   string // the start of the one failure, "" for none
	}{
		{"V8 resume at the limit", func(r *Report) { r.V8.Results[budgetKey(WorkResume, false)] = pair(1.10, 2000) }, ""},
		{"V8 resume beyond it", func(r *Report) { r.V8.Results[budgetKey(WorkResume, false)] = pair(1.11, 2000) }, "V8 resume ÷ baseline = 1.110"},
		{"wazero SSE beyond it", func(r *Report) { r.Wazero[budgetKey(WorkSSE, false)] = pair(1.9, 10) }, "wazero sse ÷ baseline = 1.900"},
		{"tombstoned compares the full tables", func(r *Report) {
			r.Wazero[key{WorkTombstoned, modGuard, modBaseline}] = pair(2, 1)
			r.Wazero[budgetKey(WorkTombstoned, false)] = pair(1.2, 9000)
		}, "wazero tombstoned ÷ baseline = 1.200"},
		{"memory grew 1 MiB", func(r *Report) { r.MemoryAtTo += 1 << 20 }, ""},
		{"memory grew more", func(r *Report) { r.MemoryAtTo += 1<<20 + 1<<16 }, "guest memory growth, request 200000 → 400000 = 1.06 MiB"},
		{".wasm at 4.5 MB", func(r *Report) { r.WasmBytes = 4_500_000 }, ""},
		{".wasm beyond", func(r *Report) { r.WasmBytes = 4_500_001 }, ".wasm size = 4,500,001 bytes"},
		{"resume allocates", func(r *Report) { r.Allocs[WorkResume] = Allocs{Bytes: 4e6} }, ""},
		{"unguarded allocates", func(r *Report) { r.Allocs[WorkUnguarded] = Allocs{Bytes: 16} }, "heap allocated per 100,000 unguarded requests = 16 bytes"},
		{"no node", func(r *Report) { r.V8 = nil }, "V8 guarded ÷ baseline not measured"},
		{"no baseline", func(r *Report) { delete(r.Wazero, budgetKey(WorkGuarded, false)) }, "wazero guarded ÷ baseline not measured"},
	} {
		r := budgetReport(false)
		c.change(r)
		ok, bad := r.BudgetHolds()
		switch {
		case c.want == "" && !ok:
			t.Errorf("%s: the budget does not hold: %q", c.name, bad)
		case c.want != "" && (ok || !strings.HasPrefix(bad[0], c.want)):
			t.Errorf("%s: failures %q, want the first to start %q", c.name, bad, c.want)
		}
		var text strings.Builder
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if verdict := "the budget holds\n"; (c.want == "") != strings.Contains(text.String(), verdict) {
			t.Errorf("%s: the text's verdict is wrong:\n%s", c.name, text.String())
		}
	}
}

// TestWriteTextCostTable: a run with the cost figures writes the table of
// docs/performance.md, one row per figure, each cell measured.
func TestWriteTextCostTable(t *testing.T) {
	r := budgetReport(true)
	for _, wl := range Workloads {
		r.Wazero[costKey(wl)] = pair(2, 4000)
		r.V8.Results[costKey(wl)] = pair(4.5, 500)
	}
	r.Wazero[costKey(WorkSSE)] = pair(6, 3)
	r.V8.Results[costKey(WorkSSE)] = pair(4.5, 0.5)
	r.V8.Results[key{gcWorkload, modGC1024, modPassthrough}] = pair(801, 500)
	r.V8.MemoryBytes = map[string]int64{modGuard: 6 << 20}
	r.V8.VMStartNs = map[string]float64{modGuard: 2e6, modPassthrough: 1e6}
	r.V8Compile, r.V8CompileCPU = pair(2, 1e9), pair(2, 1.5e9)
	r.PerSession = sharedusage.Usage{Bytes: 13200, Live: 100}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| guarded request (× do-nothing plugin) | 2.25 µs (4.5×) | 8.00 µs (2.0×) |",
		"| SSE, CPU per MB (× copy plugin) | 2.2 ms (444 MB/s; 4.5×) | 18.0 ms (56 MB/s; 6.0×) |",
		"| a GC cycle inside the VM | 0.40 ms 1 MiB live | not measured |",
		"| memory per VM (linear memory) | 6.0 MiB after its run | 8.0 MiB at request 400,000 of the mix |",
		"| compile, once per module and push (×) | 3.00 s CPU, 2.00 s wall (2.0×) |",
		"| .wasm (×) | 4,146,551 bytes (",
		"| shared data per live session | — | 132 bytes |",
		"the budget holds",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 4146551: "4,146,551", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestPlanBudgetServesLikeTraffic: no VM of a budget comparison serves
// another comparison, so that the guard and the baseline have served the
// same exchanges when each budget workload is measured (a guard VM that
// also ran the cost comparisons' SSE streams holds more tails per session,
// and measured resumes 1.10-1.14 of the baseline where a like VM read
// 1.01-1.03). A budget-only run has no other comparison.
func TestPlanBudgetServesLikeTraffic(t *testing.T) {
	w := &Wasm{Guard: []byte("guard"), Passthrough: []byte("p"), PassthroughCopy: []byte("c"), GCProbe: []byte("g")}
	for _, cost := range []bool{true, false} {
		p := newPlan(w, []byte("baseline"), QuickOptions(), cost)
		users := map[string]int{} // comparisons each module serves
		for _, c := range p.comparisons {
			users[c.a]++
			users[c.b]++
		}
		for _, wl := range Workloads {
			k := budgetKey(wl, cost)
			found := false
			for _, c := range p.comparisons {
				found = found || c.key == k
			}
			if !found {
				t.Errorf("cost %v: no comparison %v", cost, k)
			}
			var sides []module
			for _, m := range p.modules {
				if m.name == k.a || m.name == k.b {
					sides = append(sides, m)
				}
			}
			if len(sides) != 2 || !sides[0].seed || sides[0].seed != sides[1].seed ||
				sides[0].config != sides[1].config || sides[0].tombstones != sides[1].tombstones {
				t.Errorf("cost %v: the sides of %v are not set up alike: %+v", cost, k, sides)
			}
			for _, m := range []string{k.a, k.b} {
				if n := users[m]; wl != WorkTombstoned && n != len(Workloads)-1 || wl == WorkTombstoned && n != 1 {
					t.Errorf("cost %v: module %s of the budget serves %d comparisons, want only the budget's", cost, m, n)
				}
			}
		}
	}
}
