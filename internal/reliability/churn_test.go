package reliability

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/sharedusage"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// churnStream is session i's only stream: a notification, then a JSON-RPC
// result, cut by a client disconnect, so its tail stays unacknowledged.
func churnStream(i int) wasmhost.Exchange {
	body := responseEvent(fmt.Sprintf("e-%d-1", i), 1)
	x := eventStream(sessionID(i), [][]byte{
		[]byte("id: e-" + fmt.Sprint(i) + "-0\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"),
		[]byte(body),
	})
	x.End = wasmhost.EndDownstreamDisconnect
	return x
}

// runSessions runs sessions [from, to) through h, one goroutine per VM.
func runSessions(t *testing.T, h *wasmhost.Host, from, to int) {
	t.Helper()
	vms := h.VMs()
	var wg sync.WaitGroup
	errs := make([]error, vms)
	for v := range vms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + v; i < to; i += vms {
				if _, err := h.Simulate(churnStream(i)); err != nil {
					errs[v] = fmt.Errorf("session %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestChurn runs 30,000 sessions through a guard with max_sessions=1000 (the
// full 1,000,000 runs in make bench): shared data stays within 1000 slots and
// does not grow with the churn, an evicted session's cursor is judged
// "unknown" (forwarded, untagged) while a live session's unacknowledged
// cursor is still caught as a drain race.
func TestChurn(t *testing.T) {
	const (
		maxSessions = 1000
		sessions    = 30_000
	)
	h, _ := newHost(t, configWith(`,"max_sessions":1000,"unacked_cursor":"reinit"`), wasmhost.Options{VMs: 2})
	runSessions(t, h, 0, sessions/5)
	early := sharedusage.Measure(h)
	runSessions(t, h, sessions/5, sessions)
	late := sharedusage.Measure(h)
	t.Logf("after %d sessions: %d keys, %d bytes, %d live; after %d: %d keys, %d bytes, %d live",
		sessions/5, early.Keys, early.Bytes, early.Live, sessions, late.Keys, late.Bytes, late.Live)

	if late.Keys > maxSessions {
		t.Errorf("%d shared-data keys after %d sessions, want at most max_sessions=%d", late.Keys, sessions, maxSessions)
	}
	if bound := int64(maxSessions) * (cursor.MaxRecordBytes + int64(len(cursor.KeyPrefix)) + 8); late.Bytes > bound {
		t.Errorf("%d bytes of shared data, want at most %d", late.Bytes, bound)
	}
	if late.Bytes > early.Bytes*11/10 {
		t.Errorf("shared data grew with churn: %d bytes after %d sessions, %d after %d", early.Bytes, sessions/5, late.Bytes, sessions)
	}
	if late.Live < maxSessions/2 {
		t.Errorf("only %d live records in %d slots", late.Live, maxSessions)
	}

	// The first session was evicted long ago: its cursor is unknown, so it
	// is forwarded without its tag.
	resume := func(i int) wasmhost.Result {
		t.Helper()
		res, err := h.Simulate(resumeAt(sessionID(i), fmt.Sprintf("http:e-%d-1", i)))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if _, ok := record(h, sessionID(0)); ok {
		t.Fatal("session 0 still has a record after 30,000 sessions in 1000 slots")
	}
	if res := resume(0); res.Local != nil || res.Request.Value("last-event-id") != "e-0-1" {
		t.Errorf("evicted session: local reply %v, forwarded cursor %q; want forwarded \"e-0-1\"", res.Local, res.Request.Value("last-event-id"))
	}
	// A session that arrives after the churn is live: resuming at its
	// unacknowledged result is a drain race. (It runs alone: within one
	// second, eviction among sessions of the same age picks either.)
	last := sessions
	runSessions(t, h, last, last+1)
	if _, ok := record(h, sessionID(last)); !ok {
		t.Fatal("the last session has no record")
	}
	if res := resume(last); res.Local == nil || res.Local.Status != 404 {
		t.Errorf("live session resumed at its unacknowledged result: got %+v, want a 404 re-initialization", res.Local)
	}
	if n := metric(h, "fail_open_total"); n != 0 {
		t.Errorf("fail_open_total = %d", n)
	}
	if st := h.Stats(); st.Traps != 0 {
		t.Errorf("%d traps", st.Traps)
	}
}
