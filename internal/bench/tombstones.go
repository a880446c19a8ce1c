package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// tombstoneOverhead measures the request overhead on a tombstone table that
// has seen TombstoneFactor × max_sessions tombstones (issue 16): proxy-wasm
// 0.2.1 cannot delete a key, so a table that ever held many tombstones keeps
// every key, and the lookup every request with a session makes is then never
// a miss. The guard gets its tombstones the way production does — each of
// 3 × max_sessions sessions is served an event stream (its record names the
// owner) and then resumed by its owner with a cross-transport cursor —
// before the same request workload as request_overhead_ratio runs against
// the passthrough plugin, for sessions never tombstoned. The job's floor is
// the floor plugin whose tombstone lookup of each session finds a value of
// a full bucket's size (cursor.MaxBucketBytes), on a store holding the
// guard's table too (copyStore): a found value costs the host's call into
// the guest's allocator (proxy_on_memory_allocate), a miss does not.
func tombstoneOverhead(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	maxSessions := o.TombstoneMaxSessions
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessions
	}
	// The guard that gets the tombstones, the passthrough plugin, and a
	// second guard whose tombstone table stays empty.
	var hosts [3]*wasmhost.Host
	for i, m := range [3]struct {
		wasm []byte
		cfg  string
	}{{w.Guard, GuardConfigWith(maxSessions)}, {w.Passthrough, ""}, {w.Guard, GuardConfigWith(maxSessions)}} {
		h, err := newHost(ctx, m.wasm, m.cfg, 1)
		if err != nil {
			return err
		}
		defer h.Close(ctx)
		hosts[i] = h
	}
	guard := hosts[0]
	g, ps, ge := &runner{h: guard}, &runner{h: hosts[1]}, &runner{h: hosts[2]}
	pop := newPopulation(o.Sessions)
	for _, r := range []*runner{g, ps, ge} {
		if err := pop.seed(r); err != nil {
			return err
		}
	}
	var err error
	// The same measure on this guard while its tombstone table is empty, for
	// comparison in the same conditions (bench -tombstones; a full run has
	// measured it as request_overhead_ratio already).
	if len(rep.Request.Rounds) == 0 {
		o.progress("request overhead on an empty tombstone table: %d rounds of %d requests per side", o.Rounds, o.Requests)
		if rep.RequestNoTombstones, err = interleave(requestWorkload(g, pop), requestWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
			return err
		}
	}

	n := TombstoneFactor * maxSessions
	o.progress("tombstone table: %d sessions served and terminated by their owners (max_sessions %d)", n, maxSessions)
	if err := fillTombstones(g, n); err != nil {
		return err
	}
	if got, _ := guard.Metric("mcp_resume_guard_reinit_cross_transport_total"); got != int64(n) {
		return fmt.Errorf("bench: %d of %d cross-transport resumes were re-initialized", got, n)
	}
	buckets := 0
	for _, k := range guard.SharedDataKeys() {
		if strings.Contains(k, "/b/") {
			buckets++
		}
	}
	if want := (maxSessions + 3) / 4; buckets != want {
		return fmt.Errorf("bench: %d tombstone buckets written, want every one of %d", buckets, want)
	}
	rep.TombstonesWritten, rep.TombstoneBuckets, rep.TombstoneMaxSessions, rep.Sessions = n, buckets, maxSessions, o.Sessions

	// The last sessions terminated are still refused (the table works).
	if res, err := guard.Simulate(Request("dead-" + strconv.Itoa(n-1))); err != nil || res.Local == nil {
		return fmt.Errorf("bench: the last terminated session was not refused (%v)", err)
	}
	o.progress("request overhead on the tombstone table: %d rounds of %d requests per side", o.Rounds, o.Requests)
	if rep.RequestTombstones, err = interleave(requestWorkload(g, pop), requestWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	// What the tombstones alone cost: the guard on the full table against
	// the guard on an empty one (A/B in the same conditions).
	o.progress("full against empty tombstone table: %d rounds of %d requests per side", o.Rounds, o.Requests)
	if rep.TombstonesVsEmpty, err = interleave(requestWorkload(g, pop), requestWorkload(ge, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	// The floor of that job: the floor plugin, whose tombstone lookup of
	// each session now finds a value of a full bucket's size.
	fl, err := newHost(ctx, w.Floor, "", 1)
	if err != nil {
		return err
	}
	defer fl.Close(ctx)
	f := &runner{h: fl}
	if err := pop.seed(f); err != nil {
		return err
	}
	if err := copyStore(fl, guard); err != nil {
		return err
	}
	if err := fillFloorTombstones(fl, pop); err != nil {
		return err
	}
	o.progress("guard against the floor on full buckets: %d rounds of %d requests per side", o.Rounds, o.Requests)
	if rep.TombstonesFloor, err = interleave(requestWorkload(g, pop), requestWorkload(f, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	o.progress("the floor on full buckets against passthrough: %d rounds of %d requests per side", o.Rounds, o.Requests)
	rep.TombstonesFloorOverhead, err = interleave(requestWorkload(f, pop), requestWorkload(ps, pop), o.Requests, o.Rounds)
	return err
}

// fillTombstones has n sessions served an event stream through r and then
// resumed by their owner with a cross-transport cursor: each is
// tombstoned, as production tombstones them.
func fillTombstones(r *runner, n int) error {
	body := [][]byte{appendResponse(appendNotification(nil, 1), 2)}
	for i := range n {
		s := "dead-" + strconv.Itoa(i)
		x := Stream(s, body)
		if err := r.run(&x); err != nil {
			return err
		}
		res := Resume(s, "sse:e-2")
		if err := r.run(&res); err != nil {
			return err
		}
	}
	return nil
}

// copyStore writes every shared-data key of from into to: the floor then
// runs on a store as large as the one the guard's job left behind (the
// guard's 2,500 buckets and 10,000 record slots beside the floor's own
// keys). A host's lookup costs more time in a large table than in a small
// one (cache misses: +4 % for the guard on an empty table among 12,500
// unrelated keys, bench -tombstones, 2026-12-02), and the floor would
// otherwise measure the job without it.
func copyStore(to, from *wasmhost.Host) error {
	for k, v := range from.SharedData() {
		if st := to.SharedDataSet(k, v, 0); st != wasmhost.StatusOK {
			return fmt.Errorf("bench: cannot copy shared-data key %s into the floor's host: status %d", k, st)
		}
	}
	return nil
}

// fillFloorTombstones gives the floor plugin's tombstone key of every
// session of pop a value of a full bucket's size, and checks that the
// floor's lookup of one of them reads that key: the floor writes its key
// itself (plugins/floor), and keys that parted would measure misses.
func fillFloorTombstones(h *wasmhost.Host, pop *population) error {
	full := make([]byte, cursor.MaxBucketBytes)
	key := func(s string) string { k := cursor.KeyOf(s); return "floor:tombstone:" + string(k[:]) }
	for _, s := range pop.sessions {
		if st := h.SharedDataSet(key(s), full, 0); st != wasmhost.StatusOK {
			return fmt.Errorf("bench: cannot fill the floor's tombstone of %s: status %d", s, st)
		}
	}
	var read []string
	h.SetSharedDataFault(func(op wasmhost.SharedDataOp, k string) bool {
		if op == wasmhost.SharedGet {
			read = append(read, k)
		}
		return false
	})
	_, err := h.Simulate(Request(pop.sessions[0]))
	h.SetSharedDataFault(nil)
	if err != nil {
		return err
	}
	if !slices.Contains(read, key(pop.sessions[0])) {
		return fmt.Errorf("bench: the floor's tombstone lookup read %q, not the key filled for it: the floor plugin and fillFloorTombstones name it differently", read)
	}
	return nil
}

// TombstoneFactor is how many times max_sessions tombstones the table of
// request_overhead_ratio_tombstones has seen.
const TombstoneFactor = 3

// RunTombstones measures request_overhead_ratio_tombstones and the figures
// beside it (the same guard on an empty table, the job's floor) alone.
func RunTombstones(ctx context.Context, w *Wasm, o Options) (*Report, error) {
	rep := &Report{}
	err := tombstoneOverhead(ctx, w, o, rep)
	return rep, err
}

// WriteTombstones writes what RunTombstones measured: the method, the
// per-round figures, and the BENCH lines of request_overhead_ratio_tombstones,
// tombstones_floor_ratio and tombstones_floor_overhead_ratio.
func (r *Report) WriteTombstones(w io.Writer) error {
	p := r.RequestTombstones
	e := r.RequestNoTombstones
	if _, err := fmt.Fprintf(w, "request overhead on the same guard before any tombstone: guard %.0f ns, passthrough %.0f ns per request, ratio %s (rounds %s)\n",
		e.A(), e.B(), format(e.Ratio()), rounds(e.Rounds)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "guard on the full table against the guard on an empty one: %.0f vs %.0f ns per request, ratio %s (rounds %s)\n",
		r.TombstonesVsEmpty.A(), r.TombstonesVsEmpty.B(), format(r.TombstonesVsEmpty.Ratio()), rounds(r.TombstonesVsEmpty.Rounds)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "guard on the full table against the floor whose tombstone lookups find a full bucket's value: %.0f vs %.0f ns per request, ratio %s (rounds %s); that floor against passthrough %s (rounds %s)\n",
		r.TombstonesFloor.A(), r.TombstonesFloor.B(), format(r.TombstonesFloor.Ratio()), rounds(r.TombstonesFloor.Rounds),
		format(r.TombstonesFloorOverhead.Ratio()), rounds(r.TombstonesFloorOverhead.Rounds)); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "request overhead on a tombstone table that has seen %d tombstones (max_sessions %d, %d buckets all written), %d sessions never tombstoned, against the passthrough plugin: guard %.0f ns, passthrough %.0f ns per request, ratio %s (rounds %s)\nBENCH request_overhead_ratio_tombstones=%s\n",
		r.TombstonesWritten, r.TombstoneMaxSessions, r.TombstoneBuckets, r.Sessions, p.A(), p.B(), format(p.Ratio()), rounds(p.Rounds), format(p.Ratio()))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "BENCH tombstones_floor_ratio=%s\nBENCH tombstones_floor_overhead_ratio=%s\n",
		format(r.TombstonesFloor.Ratio()), format(r.TombstonesFloorOverhead.Ratio()))
	return err
}
