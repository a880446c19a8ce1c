// Package soak drives tool calls under faults through replicas of the trial
// proxy (package trial: the built plugin in the embedded proxy-wasm host,
// configured by envoy/envoy.yaml) behind a round-robin front (package
// front), in front of the reference dual-transport upstream (package
// dualstack, with the seed's bug), everything on loopback, and says whether
// any tool result was lost, the plugin failed open, or guest memory keeps
// growing.
//
// The traffic, session by session, over a pool of workers:
//
//   - half the sessions are the official Go SDK client (mcp.ClientSession
//     over StreamableClientTransport), each making CallsPerSession calls of
//     search_index with a progress token; the replica cuts CutRate of these
//     streams (wasmhost.Fault.CutAfterBytes) before, inside or right after
//     the result's event, and the SDK resumes with Last-Event-ID as it does;
//   - a quarter of the sessions are the same SDK client against the
//     upstream's Python SDK layout (dualstack.HeaderLayout on initialize;
//     one flush per event and one chunk, alternately): each call's POST
//     stream is only a priming event and closes, the SDK polls with GET and
//     Last-Event-ID after the priming event's retry, and the poll replays
//     the call's progress and result and ends with a fresh priming event;
//     the replica cuts CutRate of these GET streams before, inside or right
//     after the result's event (CutsAt "python_before", …);
//   - the last quarter is the project's raw client (package seedclient):
//     four in five play the same-transport drain race (the stream cut after
//     the result was read, before it was processed, resumed with the
//     result's ID) followed by CallsPerSession-1 clean calls on the
//     session, one in five the seed's legacy-to-Streamable resume, which the
//     guard refuses (a forced re-initialization) and the client calls again
//     on a new session;
//   - every RestartEvery completed calls the last replica is restarted
//     (fresh VMs, empty shared data; new requests go to the new process at
//     once, the old one drains for up to 5 s, then what it still holds is
//     cut);
//   - once, half-way, a flood of made-up sessions (FloodSessions of them,
//     each a tools/call and a resume) goes through the front.
//
// A call is lost when the application never got its result although it
// followed the client's own recovery: the SDK's resume, its own call again
// after an explicit failure (at most callAttempts times, on a new session
// when the session is gone), or, for the raw client, the call again on a
// new session after a forced re-initialization. A call that waited out its
// timeout is lost even if a later call would work: that wait is the seed's
// silent loss. Duplicates to the application are results handed to it
// again for a call it already had (the raw client reads them; the SDK drops
// such responses itself); tool runs per call are the upstream's count of
// search_index and slow_op runs over the calls the application made.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
)

// Options configure [Run]. Zero values take the defaults in brackets.
type Options struct {
	// Wasm is the plugin module (build/mcp-resume-guard.wasm).
	Wasm []byte
	// Envoy configures every replica: the plugin configuration and the
	// route table (envoy/envoy.yaml).
	Envoy *envoyconf.Bootstrap
	// Replicas [3] and VMs per replica [2].
	Replicas, VMs int
	// Sessions [100] and CallsPerSession [10].
	Sessions, CallsPerSession int
	// CutRate is the share of the SDK's tools/call streams the replicas
	// cut [0.1]; negative: none.
	CutRate float64
	// RestartEvery is how many completed calls apart the last replica is
	// restarted [a quarter of the calls]; negative: never.
	RestartEvery int
	// FloodSessions is the size of the flood of made-up sessions [500];
	// negative: no flood.
	FloodSessions int
	// Workers is how many sessions run at once [32].
	Workers int
	// CallTimeout bounds one tool call of the SDK client [30s].
	CallTimeout time.Duration
	// SDKOnly plays every session with the official Go SDK client (for a
	// plugin that guards nothing, against which the raw client's drain
	// races would only wait out their silent losses).
	SDKOnly bool
	// Seed seeds the fault injection [1].
	Seed uint64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Wasm) == 0 || o.Envoy == nil {
		return o, errors.New("soak: Options.Wasm and Options.Envoy are required (make build; envoy/envoy.yaml)")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Replicas, 3)
	def(&o.VMs, 2)
	def(&o.Sessions, 100)
	def(&o.CallsPerSession, 10)
	def(&o.FloodSessions, 500)
	def(&o.Workers, 32)
	def(&o.RestartEvery, max(1, o.Sessions*o.CallsPerSession/4))
	if o.CutRate == 0 {
		o.CutRate = 0.1
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CallsPerSession < 2 {
		return o, fmt.Errorf("soak: CallsPerSession %d: want at least 2 (a drain race and a clean call)", o.CallsPerSession)
	}
	return o, nil
}

// Report is what a run observed.
type Report struct {
	Calls, Lost, DuplicatedToApp int64
	// Cuts counts the streams cut on purpose: by a replica's fault (the
	// SDK's calls; CutsAt by point) and by the raw client (its drain races
	// and legacy streams).
	Cuts   int64
	CutsAt map[string]int64
	// ToolRuns is the upstream's count of search_index and slow_op runs.
	ToolRuns int64
	// Reinits counts the sessions the guard force-re-initialized (a 404
	// with a reason), ReinitsBy by reason.
	Reinits   int
	ReinitsBy map[string]int
	// FailOpen is the plugin's fail_open_total over every life of every
	// replica, plus the VMs' traps (a trap fails open in Envoy too).
	FailOpen, Traps int64
	// Counters are the plugin's counters summed over every life of every
	// replica, by name without counters.Prefix.
	Counters map[string]int64
	Memory   MemoryVerdict
	// SessionsBy counts the sessions played by kind ("sdk", "sdk_python",
	// "raw_drain_race", "raw_seed").
	SessionsBy map[string]int
	// AppRetries counts calls the SDK application made again after an
	// explicit failure; Restarts the replica restarts; Flood the made-up
	// sessions' requests and FloodOdd those answered neither 400 nor 404.
	AppRetries, Restarts, Flood, FloodOdd int64
	// Errors are scenarios that could not be played, by example.
	Errors     []string
	ErrorCount int64
	// LostExamples says what happened to some lost calls.
	LostExamples []string
	Wall         time.Duration
}

// ToolRunsPerCall is the upstream's tool runs per call the application made.
func (r *Report) ToolRunsPerCall() float64 {
	if r.Calls == 0 {
		return 0
	}
	return float64(r.ToolRuns) / float64(r.Calls)
}

// Line is the report's one line.
func (r *Report) Line() string {
	return fmt.Sprintf("SOAK calls=%d cuts=%d lost=%d duplicated_to_app=%d tool_runs_per_call=%.3f reinits=%d fail_open=%d vm_memory_mib_max=%.1f vm_memory_mib_end=%.1f",
		r.Calls, r.Cuts, r.Lost, r.DuplicatedToApp, r.ToolRunsPerCall(), r.Reinits, r.FailOpen, r.Memory.MaxMiB, r.Memory.EndMiB)
}

// Details is the rest of what the run saw, in a few lines.
func (r *Report) Details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: wall %s; sessions by kind %v; cuts by point %v; reinits by reason %v; app retries %d; replica restarts %d; flood %d requests (%d answered neither 400 nor 404)\n",
		r.Wall.Round(time.Second), r.SessionsBy, r.CutsAt, r.ReinitsBy, r.AppRetries, r.Restarts, r.Flood, r.FloodOdd)
	fmt.Fprintf(&b, "soak: guard counters over every replica life: %s; VM traps %d\n", formatCounters(r.Counters), r.Traps)
	m := r.Memory
	fmt.Fprintf(&b, "soak: guest memory: %d samples; largest growth of one VM life: %.2f MiB in the third quarter of the calls, %.2f MiB in the fourth (%d VM lives over both)\n",
		m.Samples, m.ThirdMiB, m.FourthMiB, m.VMs)
	for _, e := range r.LostExamples {
		fmt.Fprintf(&b, "soak: lost: %s\n", e)
	}
	if r.ErrorCount > 0 {
		fmt.Fprintf(&b, "soak: %d scenario(s) failed, e.g.:\n", r.ErrorCount)
		for _, e := range r.Errors {
			fmt.Fprintf(&b, "soak:   %s\n", e)
		}
	}
	return b.String()
}

// formatCounters lists the counters that moved, in counters.Names order.
func formatCounters(c map[string]int64) string {
	var parts []string
	for _, name := range counters.Names() {
		if c[name] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", name, c[name]))
		}
	}
	return strings.Join(parts, " ")
}

// Failures returns why the run failed; none when it passed.
func (r *Report) Failures() []string {
	var out []string
	if r.Lost > 0 {
		out = append(out, fmt.Sprintf("%d tool result(s) lost", r.Lost))
	}
	if r.FailOpen > 0 {
		out = append(out, fmt.Sprintf("the plugin failed open %d time(s)", r.FailOpen))
	}
	if r.Memory.Growing != "" {
		out = append(out, "guest memory: "+r.Memory.Growing)
	}
	if r.ErrorCount > 0 {
		out = append(out, fmt.Sprintf("%d scenario(s) could not be played", r.ErrorCount))
	}
	if r.FloodOdd > 0 {
		out = append(out, fmt.Sprintf("%d flood request(s) answered neither 400 nor 404", r.FloodOdd))
	}
	return out
}

// maxExamples bounds the examples a report keeps.
const maxExamples = 5

// run is one soak in progress.
type run struct {
	o      Options
	top    *topology
	stats  *stats
	faults *faults
	sdk    *http.Client // with faults
	raw    *http.Client // without
	// pyFaults cut the Python-layout sessions' GET streams; python holds
	// their clients, one per layout.
	pyFaults *faults
	python   []*http.Client
	mem      memory

	calls, done atomic.Int64 // calls made, calls finished
	dups, cuts  atomic.Int64
	appRetries  atomic.Int64
	lost, errs  tally
	restarts    atomic.Int64
	mu          sync.Mutex
	flood       floodResult
}

// Run plays the soak and returns its report; the error says why it could not
// run at all.
func Run(ctx context.Context, o Options) (*Report, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	top, err := startTopology(ctx, o.Wasm, o.Envoy, o.Replicas, o.VMs)
	if err != nil {
		return nil, err
	}
	defer top.close()
	r := &run{o: o, top: top, stats: &stats{reinits: map[string]string{}}}
	if o.CutRate > 0 {
		r.faults = &faults{rate: o.CutRate, rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))}
		r.pyFaults = &faults{rate: o.CutRate, rng: rand.New(rand.NewPCG(o.Seed^0x5bd1e995, o.Seed))}
	}
	r.sdk = r.client(r.faults, "")
	r.raw = r.client(nil, "")
	for _, l := range pythonLayouts {
		r.python = append(r.python, r.client(r.pyFaults, l.String()))
	}

	total := plannedCalls(o)
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { r.monitor(ctx, total, stop) })

	jobs := make(chan int)
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for i := range jobs {
				r.session(ctx, i)
			}
		})
	}
	for i := range o.Sessions {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(stop)
	bg.Wait()
	r.mem.sample(top, r.done.Load())
	return r.report(start), nil
}

// client returns an HTTP client of the soak's transport; layout, when set,
// makes its sessions the upstream's in that layout.
func (r *run) client(f *faults, layout string) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 2 * r.o.Workers
	return &http.Client{Transport: &transport{base: base, stats: r.stats, faults: f, layout: layout}}
}

// pythonLayouts are the layouts of the Python-layout sessions, in turn.
var pythonLayouts = []dualstack.Layout{dualstack.LayoutPython, dualstack.LayoutPythonOneChunk}

// plannedCalls is how many calls the sessions make.
func plannedCalls(o Options) int64 {
	var n int64
	for i := range o.Sessions {
		if kindOf(o, i) == seedSession {
			n++
		} else {
			n += int64(o.CallsPerSession)
		}
	}
	return n
}

// Kinds of sessions.
const (
	sdkSession       = iota // the official Go SDK client
	drainRaceSession        // the raw client's drain race and clean calls
	seedSession             // the raw client's seed scenario
	pythonSession           // the SDK client against the Python layout
)

// kindNames name the kinds of sessions in Report.SessionsBy.
var kindNames = [...]string{sdkSession: "sdk", drainRaceSession: "raw_drain_race", seedSession: "raw_seed", pythonSession: "sdk_python"}

// kindOf says what session i plays: even ones are the SDK's, i%4 == 3 the
// SDK's against the Python layout, i%4 == 1 the raw client's, one in five
// of those the seed's (all the SDK's in the default layout with SDKOnly).
func kindOf(o Options, i int) int {
	switch {
	case i%2 == 0 || o.SDKOnly:
		return sdkSession
	case i%4 == 3:
		return pythonSession
	case (i/4)%5 == 0:
		return seedSession
	}
	return drainRaceSession
}

// session plays session i.
func (r *run) session(ctx context.Context, i int) {
	switch kindOf(r.o, i) {
	case sdkSession:
		r.sdkSession(ctx, i, r.sdk, "sdk")
	case pythonSession:
		l := (i / 4) % len(pythonLayouts)
		r.sdkSession(ctx, i, r.python[l], "sdk "+pythonLayouts[l].String())
	case seedSession:
		r.rawSession(ctx, i, true)
	default:
		r.rawSession(ctx, i, false)
	}
}

// monitor samples guest memory, restarts the last replica and starts the
// flood as the calls complete, until stop.
func (r *run) monitor(ctx context.Context, total int64, stop <-chan struct{}) {
	sampleEvery := max(total/40, 1)
	nextSample, nextRestart := int64(0), int64(r.o.RestartEvery)
	flooded := r.o.FloodSessions < 0
	var flooding sync.WaitGroup
	defer flooding.Wait()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		done := r.done.Load()
		if done >= nextSample {
			r.mem.sample(r.top, done)
			nextSample = done + sampleEvery
		}
		if !flooded && done >= total/2 {
			flooded = true
			flooding.Go(func() {
				res := flood(ctx, r.top.frontURL, r.o.FloodSessions)
				r.mu.Lock()
				r.flood = res
				r.mu.Unlock()
			})
		}
		if r.o.RestartEvery > 0 && len(r.top.replicas) > 1 && done >= nextRestart && done < total {
			nextRestart = done + int64(r.o.RestartEvery)
			if err := r.top.replicas[len(r.top.replicas)-1].restart(ctx, r.top); err != nil {
				r.fail(err.Error())
			} else {
				r.restarts.Add(1)
			}
			fmt.Fprintf(r.o.Log, "soak: %d of %d calls done: replica %d restarted\n", done, total, len(r.top.replicas)-1)
		}
	}
}

// tally counts events and keeps the first few as examples.
type tally struct {
	mu       sync.Mutex
	n        int64
	examples []string
}

func (t *tally) add(example string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	if len(t.examples) < maxExamples {
		t.examples = append(t.examples, example)
	}
}

func (t *tally) get() (int64, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, slices.Clone(t.examples)
}

// fail records a scenario that could not be played.
func (r *run) fail(msg string) { r.errs.add(msg) }

// loseCall records a lost call and why.
func (r *run) loseCall(why string) { r.lost.add(why) }

func (r *run) report(start time.Time) *Report {
	rep := &Report{
		Calls: r.calls.Load(), DuplicatedToApp: r.dups.Load(), Restarts: r.restarts.Load(),
		ToolRuns:   int64(r.top.upstream.ToolRuns(dualstack.ToolSearchIndex) + r.top.upstream.ToolRuns(dualstack.ToolSlowOp)),
		AppRetries: r.appRetries.Load(),
		Memory:     r.mem.verdict(), CutsAt: map[string]int64{}, SessionsBy: map[string]int{},
	}
	for i := range r.o.Sessions {
		rep.SessionsBy[kindNames[kindOf(r.o, i)]]++
	}
	rep.Cuts = r.cuts.Load()
	if r.faults != nil {
		for p := range cutPoints {
			n := r.faults.fired[p].Load()
			rep.CutsAt[cutPointNames[p]] = n
			rep.Cuts += n
			n = r.pyFaults.fired[p].Load()
			rep.CutsAt["python_"+cutPointNames[p]] = n
			rep.Cuts += n
		}
	}
	rep.Reinits, rep.ReinitsBy = r.stats.reinitCount()
	var all ended
	for _, rp := range r.top.replicas {
		all = all.plus(rp.totals())
	}
	rep.Counters, rep.Traps = all.counters, all.traps
	rep.FailOpen = all.counters[counters.FailOpen] + all.traps
	rep.Lost, rep.LostExamples = r.lost.get()
	rep.ErrorCount, rep.Errors = r.errs.get()
	r.mu.Lock()
	rep.Flood, rep.FloodOdd = r.flood.requests, r.flood.odd
	r.mu.Unlock()
	if rep.FloodOdd > 0 {
		rep.Errors = append(rep.Errors, r.flood.example)
	}
	sort.Strings(rep.Errors)
	rep.Wall = time.Since(start)
	return rep
}
