package main

import (
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// Every test here runs natively and against the built .wasm (harness_test.go).

// testConfig is the stateful guard of the builds before self-describing
// cursors (mint_cursors off, unacked_cursor reinit): cursors minted by such a
// build keep its rules. The tests of minted cursors and of the defaults use
// their own configurations (cursor_test.go).
const testConfig = `{"routes":[
 {"path_prefix":"/mcp","transport":"http"},
 {"path_prefix":"/sse","transport":"sse"},
 {"path_prefix":"/messages","transport":"sse"}],"mint_cursors":false,"unacked_cursor":"reinit"}`

const (
	evNotification = "id: e-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	evResponse     = "id: e-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n"
)

// streamTail runs a POST /mcp whose SSE response carries a notification and
// then a response, ends it (cut or clean) and returns the stream.
func (h *harness) streamTail(session string, cut bool) stream {
	h.t.Helper()
	s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", session})
	out := h.sseResponse(s, evNotification, evResponse)
	if !strings.Contains(out, "id: http:e-1\n") || !strings.Contains(out, "id: http:e-2\n") {
		h.t.Fatalf("IDs not tagged: %q", out)
	}
	s.end(cut)
	return s
}

func TestConfigErrorRefusesStart(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		err := h.tryStart(`{"unacked_cursor":"sometimes"}`)
		if err == nil {
			t.Fatal("plugin started with an invalid configuration")
		}
		logs := strings.Join(h.d.logs(logCritical), "\n")
		if !strings.Contains(logs, "unacked_cursor") || !strings.Contains(logs, "reinit, rewind, observe") {
			t.Fatalf("critical log does not name the key and allowed values: %q (start error: %v)", logs, err)
		}
	})
}

func TestEveryMetricDefined(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		for _, n := range []string{"events_tagged_total", "cursors_stripped_total", "reinit_cross_transport_total",
			"reinit_untagged_total", "reinit_drain_race_total", "reinit_tombstoned_total", "reinit_unknown_total", "untagged_passthrough_total",
			"drain_race_detected_total", "rewinds_total", "fail_open_total", "sse_overflow_total",
			"cas_conflicts_total", "sse_encoded_passthrough_total"} {
			if v := h.counter(n); v != 0 {
				t.Errorf("%s = %d at start", n, v)
			}
		}
	})
}

func TestUnguardedRouteUntouched(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, act := h.request("GET", "/other", [2]string{"last-event-id", "sse:e-1"})
		if act != types.ActionContinue || s.localReply() != nil {
			t.Fatal("unguarded route was judged")
		}
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "sse:e-1" {
			t.Fatalf("cursor changed on an unguarded route: %q", v)
		}
		out := h.sseResponse(s, evResponse)
		if _, ok := header(s.responseHeaders(), "content-length"); !ok {
			t.Fatal("content-length dropped on an unguarded route")
		}
		if out != evResponse {
			t.Fatalf("unguarded SSE changed: %q", out)
		}
	})
}

func TestTagsEventIDs(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("GET", "/sse")
		out := h.sseResponse(s, "event: endpoint\ndata: /messages?sessionId=s-77\n\n", "id: e-104\ndata: {}\n\n")
		if _, ok := header(s.responseHeaders(), "content-length"); ok {
			t.Fatal("content-length kept on a rewritten SSE response")
		}
		want := "event: endpoint\ndata: /messages?sessionId=s-77\n\nid: sse:e-104\ndata: {}\n\n"
		if out != want {
			t.Fatalf("got %q want %q", out, want)
		}
		if n := h.counter("events_tagged_total"); n != 1 {
			t.Fatalf("events_tagged_total = %d, want 1", n)
		}
	})
}

func TestNormalCursorStripped(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-9"})
		if act != types.ActionContinue || s.localReply() != nil {
			t.Fatal("normal resume was refused")
		}
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-9" {
			t.Fatalf("forwarded cursor %q, want e-9", v)
		}
		if h.counter("cursors_stripped_total") != 1 {
			t.Fatal("cursors_stripped_total not counted")
		}
	})
}

func TestCrossTransportReinit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(testConfig)
		// The seed: a legacy stream learns session s-77 from its endpoint
		// event, sends the tool result e-104, and is cut before the client
		// drains it.
		legacy, _ := h.request("GET", "/sse")
		h.sseResponse(legacy, "event: endpoint\ndata: /messages?sessionId=s-77\n\n",
			"id: e-104\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n")
		legacy.end(true)

		s, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-77"}, [2]string{"last-event-id", "sse:e-104"})
		if act != types.ActionPause {
			t.Fatalf("action %v, want pause after a local reply", act)
		}
		if r := h.reinitReason(s); r != "cross_transport" {
			t.Fatalf("reason %q", r)
		}
		if h.counter("reinit_cross_transport_total") != 1 {
			t.Fatal("reinit_cross_transport_total not counted")
		}
		warn := h.warnLogs()
		if !strings.Contains(warn, "cross-transport") || strings.Contains(warn, "s-77") {
			t.Fatalf("warn log missing or leaks the session ID: %q", warn)
		}
		// Our own reply comes back through the response callbacks and
		// reaches the client as sent.
		hs, body := s.runLocalReply()
		if st, _ := header(hs, ":status"); st != "404" {
			t.Fatalf("local reply status %q after the response callbacks", st)
		}
		if ct, _ := header(hs, "content-type"); ct != "application/json" {
			t.Fatalf("local reply content-type %q after the response callbacks", ct)
		}
		if string(body) != string(s.localReply().body) {
			t.Fatalf("local reply body changed by the response callbacks: %q", body)
		}
		s.end(false)
		// The session is tombstoned: every later request with it is
		// refused, with a cursor that would be fine or with none (with two
		// VMs, on the other VM too).
		plain, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-77"})
		if r := h.reinitReason(plain); r != "tombstoned" {
			t.Fatalf("request without a cursor: reason %q, want tombstoned", r)
		}
		later, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-77"}, [2]string{"last-event-id", "http:e-1"})
		if r := h.reinitReason(later); r != "tombstoned" {
			t.Fatalf("later request reason %q, want tombstoned", r)
		}
		if h.counter("reinit_tombstoned_total") != 2 {
			t.Fatal("reinit_tombstoned_total not counted")
		}
	})
}

func TestUntaggedCursor(t *testing.T) {
	t.Run("reinit", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.start(testConfig)
			s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "e-9"})
			if r := h.reinitReason(s); r != "untagged_cursor" {
				t.Fatalf("reason %q", r)
			}
			if h.counter("reinit_untagged_total") != 1 {
				t.Fatal("reinit_untagged_total not counted")
			}
		})
	})
	t.Run("passthrough", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"untagged_cursor":"passthrough","mint_cursors":false,"unacked_cursor":"reinit"}`)
			s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "e-9"})
			if s.localReply() != nil {
				t.Fatal("passthrough refused an untagged cursor")
			}
			if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-9" {
				t.Fatalf("passthrough changed the cursor: %q", v)
			}
			if h.counter("untagged_passthrough_total") != 1 {
				t.Fatal("untagged_passthrough_total not counted")
			}
		})
	})
}

// TestDrainRace runs with two VMs in the wasm driver: the cut stream and the
// resume run on different VMs and meet only in shared data, as they do on
// two Envoy worker threads.
func TestDrainRace(t *testing.T) {
	resume := func(h *harness) stream {
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
		return s
	}
	// crossVM fails a wasm test whose two streams ran on one VM.
	crossVM := func(h *harness, cut, resumed stream) {
		h.t.Helper()
		if h.kind == wasm && cut.vm() == resumed.vm() {
			h.t.Fatalf("cut stream and resume both ran on VM %d; the test must cross VMs", cut.vm())
		}
	}
	t.Run("reinit", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.withVMs(2).start(testConfig)
			cut := h.streamTail("s-1", true)
			s := resume(h)
			crossVM(h, cut, s)
			if r := h.reinitReason(s); r != "drain_race" {
				t.Fatalf("reason %q", r)
			}
			if h.counter("drain_race_detected_total") != 1 || h.counter("reinit_drain_race_total") != 1 {
				t.Fatal("drain race not counted")
			}
			if !strings.Contains(h.warnLogs(), "drain race") {
				t.Fatal("no warn log for the drain race")
			}
		})
	})
	t.Run("rewind", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.withVMs(2).start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind","mint_cursors":false}`)
			cut := h.streamTail("s-1", true)
			s := resume(h)
			crossVM(h, cut, s)
			if s.localReply() != nil {
				t.Fatal("rewind answered locally")
			}
			if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" {
				t.Fatalf("rewound cursor %q, want e-1", v)
			}
			if h.counter("rewinds_total") != 1 || h.counter("drain_race_detected_total") != 1 {
				t.Fatal("rewind not counted")
			}
		})
	})
	t.Run("observe", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.withVMs(2).start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"observe","mint_cursors":false}`)
			cut := h.streamTail("s-1", true)
			s := resume(h)
			crossVM(h, cut, s)
			if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-2" || s.localReply() != nil {
				t.Fatalf("observe changed the outcome: cursor %q", v)
			}
			if h.counter("drain_race_detected_total") != 1 || !strings.Contains(h.warnLogs(), "drain race") {
				t.Fatal("observe did not log and count")
			}
		})
	})
	t.Run("clean end is acknowledged", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.withVMs(2).start(testConfig)
			done := h.streamTail("s-1", false)
			s := resume(h)
			crossVM(h, done, s)
			if s.localReply() != nil {
				t.Fatal("a resume after a clean end was refused")
			}
			if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-2" {
				t.Fatalf("cursor %q, want e-2", v)
			}
			if h.counter("drain_race_detected_total") != 0 {
				t.Fatal("false alarm")
			}
		})
	})
	t.Run("last event a notification", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.withVMs(2).start(testConfig)
			s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
			h.sseResponse(s, evResponse, strings.Replace(evNotification, "e-1", "e-3", 1))
			s.end(true)
			s, _ = h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-3"})
			if s.localReply() != nil || h.counter("drain_race_detected_total") != 0 {
				t.Fatal("a cursor after a trailing notification was treated as a drain race")
			}
		})
	})
}

func TestDeleteClearsRecord(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(testConfig)
		h.streamTail("s-1", true)
		del, _ := h.request("DELETE", "/mcp", [2]string{"mcp-session-id", "s-1"})
		del.onResponseHeaders([][2]string{{":status", "204"}}, true)
		del.end(false)
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
		if s.localReply() != nil {
			t.Fatal("deleted session still has a watermark")
		}
	})
}

func TestCompressedSSEPassesUntouched(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "Text/Event-Stream; charset=utf-8"}, {"content-encoding", "gzip"}}, false)
		if b := string(s.onResponseBody([]byte("\x1f\x8bid: e-1\n\n"), true)); b != "\x1f\x8bid: e-1\n\n" {
			t.Fatalf("compressed body changed: %q", b)
		}
		if h.counter("sse_encoded_passthrough_total") != 1 {
			t.Fatal("compressed SSE not counted")
		}
	})
}

// TestPanicFailsOpen is native only: it breaks the plugin's clock, a Go
// internal the .wasm does not expose. TestSharedDataFailureFailsOpen is the
// fault that runs against the .wasm too.
func TestPanicFailsOpen(t *testing.T) {
	onlyDriver(t, native, func(t *testing.T, h *harness) {
		h.start(testConfig)
		h.nativePlugin().now = func() uint32 { panic("clock broke") }
		s, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
		if act != types.ActionContinue || s.localReply() != nil {
			t.Fatal("a panic did not fail open")
		}
		if h.counter("fail_open_total") != 1 {
			t.Fatal("fail_open_total not counted")
		}
	})
}

// TestSharedDataFailureFailsOpen: when the host's shared data fails, a
// resume that would be refused as a drain race is decided without the
// watermark (forwarded), and the fault is counted and logged. The wasm
// driver fails the host calls (INTERNAL_FAILURE); the native driver, whose
// emulator cannot, swaps the plugin's shared-data binding.
func TestSharedDataFailureFailsOpen(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.start(testConfig)
			h.streamTail("s-1", true)
			h.d.failSharedData("get")
			s, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
			if act != types.ActionContinue || s.localReply() != nil {
				t.Fatal("a shared-data read failure did not fail open")
			}
			if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-2" {
				t.Fatalf("forwarded cursor %q, want e-2", v)
			}
			if h.counter("fail_open_total") != 1 || h.counter("drain_race_detected_total") != 0 {
				t.Fatal("fail_open_total not counted, or the race decided without its watermark")
			}
			if !strings.Contains(h.warnLogs(), "shared data read failed") {
				t.Fatalf("no warn log for the failed read: %q", h.warnLogs())
			}
		})
	})
	t.Run("write", func(t *testing.T) {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.start(testConfig)
			h.d.failSharedData("set")
			h.streamTail("s-1", true) // the tail cannot be recorded
			if h.counter("fail_open_total") == 0 || !strings.Contains(h.warnLogs(), "cannot record the stream tail") {
				t.Fatal("a failed tail write was not counted and logged")
			}
			s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
			if s.localReply() != nil {
				t.Fatal("a resume without a recorded tail was refused")
			}
		})
	})
}

func TestSSEOverflowPassesUntouched(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"max_line_bytes":64,"mint_cursors":false,"unacked_cursor":"reinit"}`)
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
		long := "id: " + strings.Repeat("x", 100) + "\ndata: {}\n\n"
		out := h.sseResponse(s, "id: e-1\ndata: {}\n\n", long, "id: e-2\ndata: {}\n\n")
		want := "id: http:e-1\ndata: {}\n\n" + long + "id: e-2\ndata: {}\n\n"
		if out != want {
			t.Fatalf("got %q\nwant %q", out, want)
		}
		if h.counter("sse_overflow_total") != 1 {
			t.Fatal("sse_overflow_total not counted")
		}
		if !strings.Contains(h.warnLogs(), "max_line_bytes") {
			t.Fatal("overflow not logged")
		}
	})
}

func TestSplitChunksTagged(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
		in := "id: e-41\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n"
		var chunks []string
		for i := 0; i < len(in); i += 3 {
			chunks = append(chunks, in[i:min(i+3, len(in))])
		}
		out := h.sseResponse(s, chunks...)
		if want := strings.Replace(in, "id: e-41", "id: http:e-41", 1); out != want {
			t.Fatalf("got %q want %q", out, want)
		}
	})
}

// TestUnreadableFlagsNotAcked is native only: Envoy and the embedded host
// always answer response.flags. A stream whose end cannot be told from a cut
// is not acknowledged.
func TestUnreadableFlagsNotAcked(t *testing.T) {
	onlyDriver(t, native, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		h.sseResponse(s, evNotification, evResponse)
		d := s.(*nativeStream).d
		d.host.CompleteHttpContext(s.(*nativeStream).id) // no response.flags set
		r, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
		if got := h.reinitReason(r); got != "drain_race" {
			t.Fatalf("reason %q, want drain_race", got)
		}
	})
}

func TestResponseSessionWinsOverStaleRequestSession(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "stale"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}, {"mcp-session-id", "fresh"}}, false)
		s.onResponseBody([]byte(evNotification+evResponse), true)
		s.end(true)
		r, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "fresh"}, [2]string{"last-event-id", "http:e-2"})
		if got := h.reinitReason(r); got != "drain_race" {
			t.Fatalf("fresh session: reason %q, want drain_race", got)
		}
		r, _ = h.request("GET", "/mcp", [2]string{"mcp-session-id", "stale"}, [2]string{"last-event-id", "http:e-2"})
		if r.localReply() != nil {
			t.Fatal("the tail was recorded under the stale request session")
		}
	})
}

// TestCountersMatchDefinitions keeps the plugin's counters and package
// counters, the list dashboards and alerts are checked against, one list.
func TestCountersMatchDefinitions(t *testing.T) {
	var m metrics
	var got []string
	for _, n := range m.named() {
		got = append(got, n.name)
	}
	want := counters.Names()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("plugin defines %v, package counters lists %v", got, want)
	}
}
