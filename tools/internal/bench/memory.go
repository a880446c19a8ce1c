package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/sharedusage"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// growth runs mixed traffic through one guard VM and records its linear
// memory at requests o.GrowthFrom and o.GrowthTo: requests (70%),
// resumes with known cursors (20%), untagged cursors that force a
// re-initialization (4%), short event streams (5%) and DELETEs (1%), over a
// rolling set of sessions so that records are created and evicted all along.
func growth(ctx context.Context, guard []byte, o Options, rep *Report) error {
	h, err := newHost(ctx, guard, GuardConfigWith(1000), 1)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	r := &runner{h: h}
	body := slices.Collect(slices.Chunk(SSEStream(2*ChunkBytes, 1, 2), ChunkBytes))
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
		case o.GrowthFrom:
			rep.MemoryAtFrom = int64(h.Stats().VMMemoryBytes[0])
		case o.GrowthTo:
			rep.MemoryAtTo = int64(h.Stats().VMMemoryBytes[0])
		}
	}
	rep.GrowthFrom, rep.GrowthTo = o.GrowthFrom, o.GrowthTo
	if st := h.Stats(); st.Traps > 0 {
		return fmt.Errorf("bench: growth: %d traps", st.Traps)
	}
	return nil
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
func perSession(ctx context.Context, guard []byte, o Options, rep *Report) error {
	h, err := newHost(ctx, guard, GuardConfigWith(o.SharedSessions), 1)
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
	u := sharedusage.Measure(h)
	if u.Live == 0 {
		return fmt.Errorf("bench: no live session record in shared data")
	}
	rep.PerSession = u
	return nil
}
