package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// The tests of this file pin the rules that protect every session the guard
// sees (issue 12) and keep a terminated session terminated (issue 8). Each
// failed on the build before those rules.

// event returns one SSE event with the given ID carrying a JSON-RPC response
// (result) or a progress notification.
func event(id string, result bool) string {
	if result {
		return "id: " + id + "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n"
	}
	return "id: " + id + "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
}

// toolCall plays a POST /mcp answered by an SSE stream: a progress
// notification then the result, with the given event IDs, ended cut or clean.
func (h *harness) toolCall(session, progressID, resultID string, cut bool) {
	h.t.Helper()
	s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", session})
	out := h.sseResponse(s, event(progressID, false), event(resultID, true))
	if !strings.Contains(out, "id: http:"+resultID+"\n") {
		h.t.Fatalf("result ID not tagged: %q", out)
	}
	s.end(cut)
}

// resume sends a GET /mcp resume of session from cursor and returns the
// re-initialization reason ("" when forwarded) and the forwarded cursor.
func (h *harness) resume(session, cursor string) (reason, forwarded string) {
	h.t.Helper()
	s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", session}, [2]string{"last-event-id", cursor})
	forwarded, _ = header(s.requestHeaders(), "last-event-id")
	return h.reinitReason(s), forwarded
}

// jwtSession returns a session ID of n visible-ASCII bytes shaped like a
// JWT (three base64url parts), unique per seed.
func jwtSession(n, seed int) string {
	head := fmt.Sprintf("eyJhbGciOiJSUzI1NiJ9.%d.", seed)
	return head + strings.Repeat("x", n-len(head))
}

func TestLongSessionIDsProtected(t *testing.T) {
	for _, n := range []int{129, 202, 1024, 4096} {
		t.Run(fmt.Sprint(n, "_bytes"), func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.withVMs(2).start(testConfig)
				sid := jwtSession(n, 1)
				h.toolCall(sid, "e-1", "e-2", true)
				if r, _ := h.resume(sid, "http:e-2"); r != "drain_race" {
					t.Fatalf("%d-byte session: resume from the cut result: reason %q, want drain_race", n, r)
				}
				// Another long session sharing the first 128 bytes is apart.
				other := sid[:128] + strings.Repeat("y", n-128)
				if r, fwd := h.resume(other, "http:e-2"); r != "" || fwd != "e-2" {
					t.Fatalf("a session sharing 128 bytes of prefix saw the first's record: %q %q", r, fwd)
				}
			})
		})
	}
}

func TestCutResultOutlivesFourCleanCalls(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(testConfig)
		h.toolCall("s-1", "1_1", "1_2", true) // cut after the result
		for i := 2; i <= 5; i++ {
			h.toolCall("s-1", fmt.Sprint(i, "_1"), fmt.Sprint(i, "_2"), false)
		}
		if r, _ := h.resume("s-1", "http:1_2"); r != "drain_race" {
			t.Fatalf("resume from the cut result after four clean calls: reason %q, want drain_race", r)
		}
	})
}

func TestPrimingEventIsNotARace(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_scope":"all","mint_cursors":false,"unacked_cursor":"reinit"}`)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		// A long tool call: the priming event, then the idle timeout.
		out := h.sseResponse(s, "id: 0_0\ndata: \n\n")
		if out != "id: http:0_0\ndata: \n\n" {
			t.Fatalf("priming event out %q", out)
		}
		s.end(true)
		if r, fwd := h.resume("s-1", "http:0_0"); r != "" || fwd != "0_0" {
			t.Fatalf("resume from a priming event: reason %q, cursor %q; want forwarded 0_0", r, fwd)
		}
		if h.counter("drain_race_detected_total") != 0 {
			t.Fatal("a priming event was counted as a drain race")
		}
	})
}

func TestUnrecordableTailEvictsNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		// One slot: every session competes for it.
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"max_sessions":1,"mint_cursors":false,"unacked_cursor":"reinit"}`)
		h.toolCall("s-1", "e-1", "e-2", true)
		long := strings.Repeat("L", 1000)
		h.toolCall("s-2", "e-9", long, true) // nothing to record
		if r, _ := h.resume("s-1", "http:e-2"); r != "drain_race" {
			t.Fatalf("s-1 after a tail that records nothing: reason %q, want drain_race", r)
		}
	})
}

func TestSharedDataKeysCarryMaxSessions(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) { // reads the host's shared data
		h.withVMs(2).start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"max_sessions":7,"mint_cursors":false,"unacked_cursor":"reinit"}`)
		for i := 0; i < 40; i++ {
			h.toolCall(fmt.Sprint("s-", i), "e-1", "e-2", true)
		}
		h.resume("s-39", "sse:e-2") // a tombstone too
		keys := h.d.(*wasmDriver).host.SharedData()
		if len(keys) == 0 || len(keys) > 7+2 {
			t.Fatalf("%d keys for max_sessions 7 (7 record slots, 2 tombstone buckets)", len(keys))
		}
		for k := range keys {
			rest, ok := strings.CutPrefix(k, "mcp-resume-guard/v2/7/")
			var table byte
			var slot int
			if n, _ := fmt.Sscanf(rest, "%c/%d", &table, &slot); !ok || n != 2 || !(table == 's' && slot < 7 || table == 'b' && slot < 2) {
				t.Fatalf("key %q: want mcp-resume-guard/v2/7/s/<0..6> or b/<0..1>", k)
			}
		}
	})
}

func TestTombstonedSessionRefusesEveryRequest(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(testConfig)
		h.toolCall("s-1", "e-1", "e-2", false)
		// The seed: a legacy cursor on the Streamable HTTP endpoint.
		if r, _ := h.resume("s-1", "sse:e-2"); r != "cross_transport" {
			t.Fatalf("cross-transport resume: %q", r)
		}
		for _, rq := range []struct {
			method, path string
			hdr          [][2]string
		}{
			{"POST", "/mcp", [][2]string{{"mcp-session-id", "s-1"}}},
			{"GET", "/mcp", [][2]string{{"mcp-session-id", "s-1"}}},
			{"GET", "/mcp", [][2]string{{"mcp-session-id", "s-1"}, {"last-event-id", "http:e-2"}}},
			{"POST", "/messages?sessionId=s-1", nil},
		} {
			s, _ := h.request(rq.method, rq.path, rq.hdr...)
			if r := h.reinitReason(s); r != "tombstoned" {
				t.Fatalf("%s %s %v after the re-initialization: reason %q, want tombstoned", rq.method, rq.path, rq.hdr, r)
			}
		}
		if h.counter("reinit_tombstoned_total") != 4 {
			t.Fatalf("reinit_tombstoned_total = %d", h.counter("reinit_tombstoned_total"))
		}
		// Other sessions are untouched.
		if s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-2"}); s.localReply() != nil {
			t.Fatal("another session was refused")
		}
		// DELETE passes to the upstream and clears the tombstone.
		del, _ := h.request("DELETE", "/mcp", [2]string{"mcp-session-id", "s-1"})
		if del.localReply() != nil {
			t.Fatal("DELETE of a tombstoned session was answered locally")
		}
		del.onResponseHeaders([][2]string{{":status", "200"}}, true)
		del.end(false)
		if s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"}); s.localReply() != nil {
			t.Fatal("the session is still refused after DELETE")
		}
	})
}

func TestAckOnlyWithoutAnyFlag(t *testing.T) {
	flags := []struct {
		name string
		bit  uint64
	}{
		{"none", 0}, {"UT", 0x4}, {"LR", 0x8}, {"UR", 0x10}, {"UF", 0x20}, {"UC", 0x40},
		{"NR", 0x100}, {"DC", 0x4000}, {"SI", 0x10000}, {"DPE", 0x40000},
		{"DT", 0x400000}, {"UPE", 0x800000}, {"DR", 0x10000000}, {"unknown_high_bit", 1 << 40},
	}
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		for i, f := range flags {
			sid := fmt.Sprint("s-", i)
			s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", sid})
			h.sseResponse(s, event("e-1", false), event("e-2", true))
			s.endWithFlags(f.bit)
			r, _ := h.resume(sid, "http:e-2")
			if acked := r == ""; acked != (f.bit == 0) {
				t.Errorf("response.flags %s (%#x): acknowledged %v, want %v (reason %q)", f.name, f.bit, acked, f.bit == 0, r)
			}
		}
	})
}

func TestTrailersEndTheStream(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
		s.onResponseBody([]byte(event("e-1", false)+event("e-2", true)), false)
		s.onResponseTrailers([][2]string{{"grpc-status", "0"}})
		s.end(false)
		if r, fwd := h.resume("s-1", "http:e-2"); r != "" || fwd != "e-2" {
			t.Fatalf("a stream ended by trailers was not acknowledged: reason %q", r)
		}
	})
}

func TestRewindFirstEventOfResumedStream(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind","mint_cursors":false}`)
		// A resume the filter forwards (no watermark: unknown, stripped)...
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-1"})
		if fwd, _ := header(s.requestHeaders(), "last-event-id"); fwd != "e-1" || s.localReply() != nil {
			t.Fatalf("resume not forwarded: %q", fwd)
		}
		// ...whose stream replays the result first and is cut.
		h.sseResponse(s, event("e-2", true))
		s.end(true)
		if r, fwd := h.resume("s-1", "http:e-2"); r != "" || fwd != "e-1" {
			t.Fatalf("drain race on a resumed stream's first event: reason %q, cursor %q; want rewound to e-1", r, fwd)
		}
	})
}

func TestHeldBytesSurviveBodyFailures(t *testing.T) {
	// proxytest cannot fail a body call; the embedded host can.
	for _, op := range []wasmhost.BufferOp{wasmhost.BufferGet, wasmhost.BufferSet} {
		t.Run(string(op), func(t *testing.T) {
			onlyDriver(t, wasm, func(t *testing.T, h *harness) {
				h.start(testConfig)
				s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
				s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
				first := s.onResponseBody([]byte("data: x\n\nid: e-"), false)
				if string(first) != "data: x\n\n" {
					t.Fatalf("first chunk out %q: the id line should be held back", first)
				}
				failed := false
				h.d.(*wasmDriver).host.SetBufferFault(func(o wasmhost.BufferOp) bool {
					if o == op && !failed {
						failed = true
						return true
					}
					return false
				})
				second := s.onResponseBody([]byte("1\ndata: y\n\n"), false)
				if !failed {
					t.Fatal("the fault was never hit")
				}
				if got := string(first) + string(second); got != "data: x\n\nid: e-1\ndata: y\n\n" {
					t.Fatalf("downstream %q: bytes lost after a failed %s", got, op)
				}
				if h.counter("fail_open_total") != 1 {
					t.Fatalf("fail_open_total = %d", h.counter("fail_open_total"))
				}
			})
		})
	}
}

// TestReusedContextStartsClean: a stream context is reused once its stream
// ended; nothing of the previous stream may carry over to the next — not its
// session, its local reply, nor the cursor it forwarded.
func TestReusedContextStartsClean(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind","mint_cursors":false}`)
		// A forwarded resume (unknown cursor, stripped): its context keeps
		// the cursor for its response stream.
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-1"})
		h.sseResponse(s, event("e-5", false))
		s.end(false)
		// A forced re-initialization: its context answered locally.
		s, _ = h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-9"}, [2]string{"last-event-id", "sse:e-1"})
		if r := h.reinitReason(s); r != "cross_transport" {
			t.Fatalf("cross-transport: %q", r)
		}
		s.runLocalReply()
		s.end(false)
		// A new stream on the reused context, cut on its first event.
		s, _ = h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-2"})
		if out := h.sseResponse(s, event("e-2", true)); !strings.Contains(out, "id: http:e-2\n") {
			t.Fatalf("the stream after a local reply was not tagged: %q", out)
		}
		s.end(true)
		// Its drain race has no previous event to rewind to: re-initialized,
		// not rewound to another stream's cursor.
		if r, fwd := h.resume("s-2", "http:e-2"); r != "drain_race" {
			t.Fatalf("drain race on a first event: reason %q, cursor %q; want drain_race", r, fwd)
		}
	})
}

// TestChunkOutputsStayPut: what a driver returns for one chunk is the
// caller's, unchanged by later callbacks. proxytest keeps the slice the
// plugin passed to ReplaceHttpResponseBody, and the plugin reuses that
// scratch buffer for the next chunk: without a copy, the first chunk's
// output would read as the second's.
func TestChunkOutputsStayPut(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
		first := s.onResponseBody([]byte("id: e-1\ndata: a\n\n"), false)
		second := s.onResponseBody([]byte("id: e-2\ndata: b\n\n"), true)
		if string(first) != "id: http:e-1\ndata: a\n\n" || string(second) != "id: http:e-2\ndata: b\n\n" {
			t.Fatalf("outputs %q then %q", first, second)
		}
	})
}

// TestRewindToTheEventBeforeTheResult: the tail keeps the last two IDs of
// the stream, whatever the chunks: a result cut after three notifications
// in its own chunk, or behind them in the same one, rewinds to the
// notification just before it (never an earlier one, nor one the result's
// chunk did not follow).
func TestRewindToTheEventBeforeTheResult(t *testing.T) {
	const rewind = `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind","mint_cursors":false}`
	for name, chunks := range map[string][]string{
		"one chunk":        {event("e-1", false) + event("e-2", false) + event("e-3", false) + event("e-4", true)},
		"a chunk each":     {event("e-1", false), event("e-2", false), event("e-3", false), event("e-4", true)},
		"result alone":     {event("e-1", false) + event("e-2", false) + event("e-3", false), event("e-4", true)},
		"no id in between": {event("e-1", false) + event("e-2", false), event("e-3", false) + ": ping\n\n", event("e-4", true)},
	} {
		t.Run(name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.start(rewind)
				s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
				h.sseResponse(s, chunks...)
				s.end(true)
				if reason, fwd := h.resume("s-1", "http:e-4"); reason != "" || fwd != "e-3" {
					t.Fatalf("resume from the cut result: reason %q, forwarded %q; want e-3", reason, fwd)
				}
			})
		})
	}
}
