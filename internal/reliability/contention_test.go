package reliability

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// record returns the live watermark record of session in h's shared data.
func record(h *wasmhost.Host, session string) (cursor.Record, bool) {
	for k, v := range h.SharedData() {
		if !strings.HasPrefix(k, cursor.KeyPrefix) {
			continue
		}
		if rec, ok, err := cursor.Decode(v); err == nil && ok && rec.Session == cursor.KeyOf(session) {
			return rec, true
		}
	}
	return cursor.Record{}, false
}

// responseEvent is one SSE event carrying a JSON-RPC result.
func responseEvent(id string, n int) string {
	return fmt.Sprintf("id: %s\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n\n", id, n)
}

// TestContention runs, round after round, one stream per VM on the same
// session at the same time (4 VMs). Every chunk of every stream ends with a
// JSON-RPC result, so every chunk rewrites the session's record through
// compare-and-swap; the streams are cut, so their tails stay. After each
// round the record must hold the last event of each of the round's four
// streams: a write that overwrote another VM's without noticing would lose
// one of them.
//
// The session's slot is created first by one stream alone: proxy-wasm 0.2.1
// ignores cas when a key does not exist yet, so a creation race between
// workers can lose a write whatever the plugin does (the store reads its
// creation back to narrow that window; cursor.TestCreateRaceMerges covers
// it). What compare-and-swap can guarantee, for a slot that exists, is tested
// here.
func TestContention(t *testing.T) {
	const (
		vms    = 4
		rounds = 40
		chunks = 8
	)
	h, _ := newHost(t, config+"}", wasmhost.Options{VMs: vms})
	session := "s-contended"
	created, err := h.Simulate(wasmhost.Exchange{
		Request:      get("/mcp", hdr("mcp-session-id", session), hdr("accept", "text/event-stream")),
		Response:     sseResponse(),
		ResponseBody: [][]byte{[]byte(responseEvent("e-create", 0))},
		End:          wasmhost.EndDownstreamDisconnect,
	})
	if err != nil {
		t.Fatal(err)
	}
	lost, seen := 0, 0
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, vms)
		usedVM := make([]int, vms)
		for g := range vms {
			var body [][]byte
			for c := range chunks {
				body = append(body, []byte(responseEvent(fmt.Sprintf("e-%d-%d-%d", r, g, c), c)))
			}
			x := wasmhost.Exchange{
				Request:      get("/mcp", hdr("mcp-session-id", session), hdr("accept", "text/event-stream")),
				Response:     sseResponse(),
				ResponseBody: body,
				End:          wasmhost.EndDownstreamDisconnect,
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := h.Simulate(x)
				errs[g], usedVM[g] = err, res.VM
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		rec, ok := record(h, session)
		if !ok {
			t.Fatalf("round %d: the session has no record", r)
		}
		have := map[string]bool{}
		for _, tl := range rec.Tails {
			have[tl.LastID] = true
		}
		for g := range vms {
			seen++
			if id := fmt.Sprintf("e-%d-%d-%d", r, g, chunks-1); !have[id] {
				lost++
				t.Errorf("round %d: the tail of the stream on VM %d (last event %s) is missing; record tails: %+v", r, usedVM[g], id, rec.Tails)
			}
		}
	}
	conflicts := metric(h, "cas_conflicts_total")
	t.Logf("%d stream tails checked, %d lost; %d record updates, cas_conflicts_total=%d, fail_open_total=%d",
		seen, lost, rounds*vms*chunks, conflicts, metric(h, "fail_open_total"))
	if n := metric(h, "fail_open_total"); n != 0 {
		t.Errorf("fail_open_total = %d: an update gave up (ErrContention) or shared data failed", n)
	}
	if st := h.Stats(); st.Traps != 0 {
		t.Errorf("%d traps", st.Traps)
	}
	for i, n := range h.Stats().VMRequests {
		want := rounds
		if i == created.VM {
			want++ // and the stream that created the record
		}
		if n != int64(want) {
			t.Errorf("VM %d ran %d streams, want %d (one per round)", i, n, want)
		}
	}
}
