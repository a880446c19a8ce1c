package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// CallbackProfile is the wall time spent per guest callback, averaged over
// the exchanges of a workload: the time from the host's entering one
// callback to its entering the next (or the exchange's end), so it includes
// the host functions the guest called and a little of the host's own work.
type CallbackProfile struct {
	Exchanges int
	NsPerCall map[string]float64 // callback → mean ns per exchange
}

// ProfileCallbacks runs xs (seeded first with seed) through a fresh host of
// wasm and times every callback through wasmhost.Options.Trace.
func ProfileCallbacks(ctx context.Context, wasm []byte, config string, seed, xs []wasmhost.Exchange, repeat int) (CallbackProfile, error) {
	var (
		last     string
		lastTime time.Time
		total    = map[string]time.Duration{}
		on       bool
	)
	mark := func(name string) {
		now := time.Now()
		if on && last != "" {
			total[last] += now.Sub(lastTime)
		}
		last, lastTime = name, time.Now()
	}
	h, err := wasmhost.New(ctx, wasmhost.Options{
		Wasm: wasm, PluginConfig: []byte(config), VMs: 1,
		Trace: func(_ int, _ uint32, callback string) { mark(callback) },
	})
	if err != nil {
		return CallbackProfile{}, fmt.Errorf("bench: starting a host: %w", err)
	}
	defer h.Close(ctx)
	r := &runner{h: h}
	for i := range seed {
		if err := r.run(&seed[i]); err != nil {
			return CallbackProfile{}, err
		}
	}
	on = true
	for range repeat {
		for i := range xs {
			last = ""
			if err := r.run(&xs[i]); err != nil {
				return CallbackProfile{}, err
			}
			mark("")
		}
	}
	p := CallbackProfile{Exchanges: repeat * len(xs), NsPerCall: map[string]float64{}}
	for k, d := range total {
		p.NsPerCall[k] = float64(d.Nanoseconds()) / float64(p.Exchanges)
	}
	return p, nil
}

// WriteProfiles prints guard and baseline profiles side by side.
func WriteProfiles(w io.Writer, title string, guard, base CallbackProfile) {
	names := map[string]bool{}
	for k := range guard.NsPerCall {
		names[k] = true
	}
	for k := range base.NsPerCall {
		names[k] = true
	}
	var sorted []string
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	fmt.Fprintf(w, "%s: ns per exchange (guard / baseline)\n", title)
	var tg, tb float64
	for _, k := range sorted {
		fmt.Fprintf(w, "  %-28s %8.0f %8.0f\n", k, guard.NsPerCall[k], base.NsPerCall[k])
		tg += guard.NsPerCall[k]
		tb += base.NsPerCall[k]
	}
	fmt.Fprintf(w, "  %-28s %8.0f %8.0f\n", "total", tg, tb)
}

// ProfileSet is the per-callback profile of one workload for the guard and
// its baseline.
type ProfileSet struct {
	Name        string
	Guard, Base CallbackProfile
}

// profiles times every callback of the request, resume and SSE workloads
// (o.Sessions/10 sessions, a few passes) for the guard and its baseline.
func profiles(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	pop := newPopulation(max(o.Sessions/10, 10))
	var req, res, str []wasmhost.Exchange
	for i, s := range pop.sessions {
		req = append(req, Request(s))
		res = append(res, Resume(s, pop.cursors[i]))
	}
	stream := Chunks(SSEStream(256<<10, 1000, 1), ChunkBytes)
	for _, s := range pop.sessions[:min(len(pop.sessions), 20)] {
		str = append(str, Stream(s, stream))
	}
	o.progress("per-callback profiles")
	for _, c := range []struct {
		name string
		xs   []wasmhost.Exchange
		base []byte
		n    int
	}{
		{"request", req, w.Passthrough, 5},
		{"resume", res, w.Passthrough, 5},
		{"SSE stream of 256 KiB (baseline: passthrough-copy)", str, w.PassthroughCopy, 2},
	} {
		g, err := ProfileCallbacks(ctx, w.Guard, GuardConfig, pop.streams, c.xs, c.n)
		if err != nil {
			return err
		}
		b, err := ProfileCallbacks(ctx, c.base, "", pop.streams, c.xs, c.n)
		if err != nil {
			return err
		}
		rep.Profiles = append(rep.Profiles, ProfileSet{Name: c.name, Guard: g, Base: b})
	}
	return nil
}
