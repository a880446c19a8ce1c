package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// growth runs mixed traffic through one guard VM and records its linear
// memory at requests o.GrowthEarly, o.GrowthFrom and o.GrowthTo: requests (70%),
// resumes with known cursors (20%), untagged cursors that force a
// re-initialization (4%), short event streams (5%) and DELETEs (1%), over a
// rolling set of sessions so that records are created and evicted all along.
func growth(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	h, err := newHost(ctx, w.Guard, GuardConfigWith(1000), 1)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	r := &runner{h: h}
	body := Chunks(SSEStream(2*ChunkBytes, 1, 2), ChunkBytes)
	o.progress("memory growth: %d mixed requests", o.GrowthTo)
	for i := 1; i <= o.GrowthTo; i++ {
		s := Session(i / 8) // eight requests per session, then the next one
		var x wasmhost.Exchange
		switch k := i % 100; {
		case k < 70:
			x = Request(s)
		case k < 90:
			x = Resume(s, "http:e-"+strconv.Itoa(i))
		case k < 94:
			x = Resume(Session(i), "e-"+strconv.Itoa(i)) // untagged: re-init
		case k < 99:
			x = Stream(s, body)
		default:
			x = Request(s)
			x.Request.Set(":method", "DELETE")
		}
		if err := r.run(&x); err != nil {
			return fmt.Errorf("bench: growth, request %d: %w", i, err)
		}
		switch i {
		case o.GrowthEarly:
			rep.MemoryAtEarly = int64(h.Stats().VMMemoryBytes[0])
		case o.GrowthFrom:
			rep.MemoryAtFrom = int64(h.Stats().VMMemoryBytes[0])
		case o.GrowthTo:
			rep.MemoryAtTo = int64(h.Stats().VMMemoryBytes[0])
		}
	}
	rep.GrowthEarly, rep.GrowthFrom, rep.GrowthTo = o.GrowthEarly, o.GrowthFrom, o.GrowthTo
	if st := h.Stats(); st.Traps > 0 {
		return fmt.Errorf("bench: growth: %d traps", st.Traps)
	}
	return nil
}

// SharedUsage summarizes the guard's shared data.
type SharedUsage struct {
	Keys  int   // keys with the guard's prefix
	Bytes int64 // their keys' and values' bytes
	Live  int   // slots holding a live (decodable, named) session record
}

// MeasureShared reads the guard's part of h's shared data.
func MeasureShared(h *wasmhost.Host) SharedUsage {
	var u SharedUsage
	for k, v := range h.SharedData() {
		if !strings.HasPrefix(k, cursor.KeyPrefix) {
			continue
		}
		u.Keys++
		u.Bytes += int64(len(k) + len(v))
		if rec, ok, err := cursor.Decode(v); err == nil && ok && rec.Session != (cursor.SessionKey{}) {
			u.Live++
		}
	}
	return u
}

// sessionStreams is the traffic of one session in the shared-data
// measures: k event streams, each ending with a tools/call result; every
// other one is cut by a client disconnect, so its tail stays unacknowledged.
func sessionStreams(session string, k, first int) []wasmhost.Exchange {
	xs := make([]wasmhost.Exchange, 0, k)
	for j := range k {
		id := first + 3*j
		body := appendNotification(nil, id)
		body = appendNotification(body, id+1)
		body = appendResponse(body, id+2)
		x := Stream(session, [][]byte{body})
		if j%2 == 1 {
			x.End = wasmhost.EndDownstreamDisconnect
		}
		xs = append(xs, x)
	}
	return xs
}

// perSession fills a guard with o.SharedSessions sessions of cursor.MaxTails
// streams each (the largest records) and divides the shared data by the live
// sessions.
func perSession(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	h, err := newHost(ctx, w.Guard, GuardConfigWith(o.SharedSessions), 1)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	r := &runner{h: h}
	o.progress("shared data per session: %d sessions of %d streams", o.SharedSessions, cursor.MaxTails)
	for i := range o.SharedSessions {
		for _, x := range sessionStreams(Session(i), cursor.MaxTails, 1000+100*i) {
			if err := r.run(&x); err != nil {
				return err
			}
		}
	}
	u := MeasureShared(h)
	if u.Live == 0 {
		return fmt.Errorf("bench: no live session record in shared data")
	}
	rep.PerSession = u
	return nil
}

// Churn runs sessions sessions, one event stream each, through a guard with
// max_sessions and vms VMs (one goroutine per VM), and returns the shared
// data it holds afterwards.
func Churn(ctx context.Context, guard []byte, sessions, maxSessions, vms int) (SharedUsage, *wasmhost.Host, error) {
	h, err := newHost(ctx, guard, GuardConfigWith(maxSessions), vms)
	if err != nil {
		return SharedUsage{}, nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, vms)
	for v := range vms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &runner{h: h}
			for i := v; i < sessions; i += vms {
				x := sessionStreams(Session(i), 1, 10)[0]
				if err := r.run(&x); err != nil {
					errs[v] = fmt.Errorf("bench: churn, session %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			h.Close(ctx)
			return SharedUsage{}, nil, err
		}
	}
	return MeasureShared(h), h, nil
}

func churn(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	o.progress("churn: %d sessions, max_sessions=%d", o.ChurnSessions, o.ChurnMaxSessions)
	u, h, err := Churn(ctx, w.Guard, o.ChurnSessions, o.ChurnMaxSessions, 2)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	rep.Churn = u
	rep.ChurnSessions, rep.ChurnMaxSessions = o.ChurnSessions, o.ChurnMaxSessions
	rep.ChurnConflicts, _ = h.Metric("mcp_resume_guard_cas_conflicts_total")

	// The first session was evicted long ago: no slot holds it, and its
	// cursor must be judged "unknown" and forwarded without its tag, like one
	// the guard never saw.
	for k, v := range h.SharedData() {
		if rec, ok, err := cursor.Decode(v); err == nil && ok && rec.Session == cursor.KeyOf(Session(0)) {
			return fmt.Errorf("bench: churn: slot %s still holds the first session", k)
		}
	}
	res, err := h.Simulate(Resume(Session(0), "http:e-12"))
	if err != nil {
		return err
	}
	if res.Local != nil || res.Request.Value("last-event-id") != "e-12" {
		return fmt.Errorf("bench: churn: the evicted first session's cursor got local reply %v, forwarded %q; want forwarded e-12",
			res.Local, res.Request.Value("last-event-id"))
	}
	rep.ChurnEvictedUnknown = true
	return nil
}

// gcSurvival proves garbage collection cycles in the guard itself, under
// the WASI of Envoy 1.33–1.38 (the host's default: poll_oneoff answers
// ENOSYS): requests that each make the guest keep a copy of a session of
// o.SurvivalPadBytes, until the bytes allocated exceed the VM's linear memory
// o.SurvivalCycles times. Memory never holds more than its size, so at least
// that many cycles completed; none may trap.
func gcSurvival(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	if o.SurvivalCycles == 0 {
		return nil
	}
	h, err := newHost(ctx, w.Guard, GuardConfig, 1)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	r := &runner{h: h}
	// The guard keeps a copy of the request's session on the heap: a
	// session header of SurvivalPadBytes makes it allocate at least that
	// much per request.
	x := Request(strings.Repeat("x", o.SurvivalPadBytes))
	o.progress("GC survival: %d KiB sessions until %d cycles are proven", o.SurvivalPadBytes>>10, o.SurvivalCycles)
	var allocated, mem int64
	for n := 1; ; n++ {
		if err := r.run(&x); err != nil {
			return fmt.Errorf("bench: GC survival, request %d: %w", n, err)
		}
		allocated += int64(o.SurvivalPadBytes)
		if n%256 == 0 {
			mem = int64(h.Stats().VMMemoryBytes[0])
			if allocated/mem >= int64(o.SurvivalCycles) {
				rep.SurvivalRequests = n
				break
			}
		}
	}
	st := h.Stats()
	if st.Traps != 0 {
		return fmt.Errorf("bench: GC survival: %d traps", st.Traps)
	}
	rep.SurvivalAllocated, rep.SurvivalMemory = allocated, mem
	return nil
}
