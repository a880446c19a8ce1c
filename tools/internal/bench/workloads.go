package bench

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// The workloads of the cost table and of the budget, in their order.
const (
	WorkGuarded    = "guarded"    // POST /mcp with a session and no cursor, answered 202
	WorkTombstoned = "tombstoned" // the same on a guard whose tombstone table is full
	WorkUnguarded  = "unguarded"  // the same request on a path no route matches
	WorkResume     = "resume"     // GET /mcp with a tagged cursor of a known session
	WorkSSE        = "sse"        // 1 MiB event streams in 16 KiB chunks (units: bytes)
)

// Workloads lists them in the order of the table.
var Workloads = []string{WorkGuarded, WorkTombstoned, WorkUnguarded, WorkResume, WorkSSE}

// population is the set of sessions every workload rotates over: each one
// had a short stream whose last event, a tools/call result, was delivered,
// so the guard holds a watermark record for it.
type population struct {
	sessions []string
	cursors  []string // tagged cursor of each session's last event
	streams  []wasmhost.Exchange
}

func newPopulation(n int) *population {
	p := &population{}
	for i := range n {
		s := Session(i)
		first := 100 + 10*i
		body := appendNotification(nil, first)
		body = appendResponse(body, first+1)
		p.sessions = append(p.sessions, s)
		p.cursors = append(p.cursors, "http:e-"+strconv.Itoa(first+1))
		p.streams = append(p.streams, Stream(s, [][]byte{body}))
	}
	return p
}

// exchanges returns the exchanges of a workload over the population, and
// the units each one counts (1, or the stream's bytes for SSE).
func (p *population) exchanges(name string, stream [][]byte) ([]wasmhost.Exchange, int64) {
	xs := make([]wasmhost.Exchange, len(p.sessions))
	unit := int64(1)
	for i, s := range p.sessions {
		switch name {
		case WorkGuarded, WorkTombstoned:
			xs[i] = Request(s)
		case WorkUnguarded:
			xs[i] = Unguarded(s)
		case WorkResume:
			xs[i] = Resume(s, p.cursors[i])
		case WorkSSE:
			xs[i] = Stream(s, stream)
		default:
			panic("bench: no workload " + name)
		}
	}
	if name == WorkSSE {
		unit = 0
		for _, c := range stream {
			unit += int64(len(c))
		}
	}
	return xs, unit
}

// seed runs every session's stream through r.
func (p *population) seed(r *runner) error {
	for i := range p.streams {
		if err := r.run(&p.streams[i]); err != nil {
			return err
		}
	}
	return nil
}

// cycle returns a workload that runs the exchanges xs round-robin, each
// counting unit units.
func cycle(r *runner, xs []wasmhost.Exchange, unit int64) workload {
	next := 0
	return func(n int) (int64, error) {
		for range n {
			if err := r.run(&xs[next]); err != nil {
				return 0, err
			}
			next = (next + 1) % len(xs)
		}
		return int64(n) * unit, nil
	}
}

// benchStream is the SSE workload's body: about bytes of traffic (90 %
// ~200 B notifications, 10 % ~2 KB results) in 16 KiB chunks.
func benchStream(bytes int) [][]byte {
	return slices.Collect(slices.Chunk(SSEStream(bytes, 1000, 1), ChunkBytes))
}

// TombstoneFactor is how many times max_sessions sessions are tombstoned
// before the tombstoned workload: every bucket of the table is then full,
// and the lookup each guarded request makes finds a bucket (a hit) instead
// of a missing key. proxy-wasm cannot delete a key, so a table that has
// seen many tombstones stays that way.
const TombstoneFactor = 3

// tombstoneExchanges are the two exchanges that tombstone session s, as
// production does: a stream whose record names its owner, then the owner's
// resume with a cross-transport cursor.
func tombstoneExchanges(s string) [2]wasmhost.Exchange {
	body := [][]byte{appendResponse(appendNotification(nil, 1), 2)}
	return [2]wasmhost.Exchange{Stream(s, body), Resume(s, "sse:e-2")}
}

// tombstoneSession is the session of the i-th tombstone.
func tombstoneSession(i int) string { return tombstonePrefix + strconv.Itoa(i) }

const tombstonePrefix = "dead-"

// fillTombstones tombstones n sessions through r.
func fillTombstones(r *runner, n int) error {
	for i := range n {
		for _, x := range tombstoneExchanges(tombstoneSession(i)) {
			if err := r.run(&x); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkGuard verifies that a guard really does its work in the benchmark
// (a benchmark of a misconfigured guard measures nothing): it forwards a
// resume's cursor untagged, and, once tombstones were written, refuses the
// last tombstoned session.
func checkGuard(name string, h *wasmhost.Host, p *population, tombstones int) error {
	res, err := h.Simulate(Resume(p.sessions[0], p.cursors[0]))
	if err != nil {
		return err
	}
	if got, want := res.Request.Value("last-event-id"), p.cursors[0][len("http:"):]; got != want {
		return fmt.Errorf("bench: the %s forwarded last-event-id %q, want %q (is it configured?)", name, got, want)
	}
	if tombstones > 0 {
		res, err := h.Simulate(Request(tombstoneSession(tombstones - 1)))
		if err != nil {
			return err
		}
		if res.Local == nil {
			return fmt.Errorf("bench: the %s did not refuse the last tombstoned session", name)
		}
	}
	return nil
}
