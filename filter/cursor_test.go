package main

import (
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// The tests of self-describing cursors (issue 15), through both drivers.
// Replicas are separate harnesses: two plugins that share nothing, as two
// Envoy processes behind a round-robin front. Those run in the wasm driver
// only: proxytest's host is process-wide, so two native plugins cannot run
// side by side.

// mintConfig is the shipped default: minting on, unacked_cursor rewind.
const mintConfig = `{"routes":[
 {"path_prefix":"/mcp","transport":"http"},
 {"path_prefix":"/sse","transport":"sse"},
 {"path_prefix":"/messages","transport":"sse"}]}`

const (
	evNilResult = "id: e-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7}\n\n"
	evError     = "id: e-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n"
)

// cutStream runs a POST /mcp of session whose SSE response carries the
// given events, cuts it, and returns what went downstream.
func (h *harness) cutStream(session string, events ...string) string {
	h.t.Helper()
	s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", session})
	out := h.sseResponse(s, events...)
	s.end(true)
	return out
}

// mintedID returns the value of the last id field of the event stream out.
func mintedID(t *testing.T, out string) string {
	t.Helper()
	i := strings.LastIndex(out, "\nid: ")
	if i < 0 {
		t.Fatalf("no id field in %q", out)
	}
	v, _, _ := strings.Cut(out[i+len("\nid: "):], "\n")
	return v
}

func TestMintedResponseID(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(mintConfig)
		out := h.cutStream("s-1", evNotification, evResponse)
		// Each event's id line moves to the end of its event (its kind is
		// known from its data); the notification keeps its plain tag, the
		// response's says what it is.
		want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\nid: http:e-1\n\n" +
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\nid: http:~1r3.2.e-21\n\n"
		if out != want {
			t.Fatalf("downstream:\n%q\nwant\n%q", out, want)
		}
	})
}

func TestMintOffKeepsPlainIDs(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"mint_cursors":false}`)
		if out := h.cutStream("s-1", evNotification, evResponse); out != strings.ReplaceAll(evNotification+evResponse, "id: e-", "id: http:e-") {
			t.Fatalf("downstream with mint_cursors off: %q", out)
		}
	})
}

// TestDrainRaceOnAnotherReplica: the stream is cut on replica A, the client
// resumes on replica B, which never saw it. B rewinds from the cursor.
func TestDrainRaceOnAnotherReplica(t *testing.T) {
	cases := []struct {
		name, cfg string
		reinit    bool
	}{
		{"rewind (default)", mintConfig, false},
		{"reinit", `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"reinit"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			onlyDriver(t, wasm, func(t *testing.T, a *harness) {
				a.start(tc.cfg)
				cursor := mintedID(t, a.cutStream("s-1", evNotification, evResponse))
				b := &harness{t: t, kind: a.kind, vms: 1}
				b.start(tc.cfg)
				s, _ := b.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", cursor})
				if tc.reinit {
					if r := b.reinitReason(s); r != "drain_race" {
						t.Fatalf("replica B under reinit: reason %q, want drain_race", r)
					}
				} else {
					if r := b.reinitReason(s); r != "" {
						t.Fatalf("replica B re-initialized (%s)", r)
					}
					if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" {
						t.Fatalf("replica B forwarded %q, want the previous ID e-1 from the cursor", v)
					}
					if b.counter("rewinds_total") != 1 {
						t.Fatal("rewind not counted")
					}
				}
				if b.counter("drain_race_from_cursor_total") != 1 || b.counter("drain_race_detected_total") != 1 {
					t.Fatal("drain race from the cursor not counted")
				}
				if w := b.warnLogs(); !strings.Contains(w, "drain race (from the cursor)") || !strings.Contains(w, "from=cursor") {
					t.Fatalf("warn log does not say the race was decided from the cursor:\n%s", w)
				}
				// Replica A, which holds the watermark, decides from it.
				s, _ = a.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", cursor})
				if a.counter("drain_race_from_cursor_total") != 0 || a.counter("drain_race_detected_total") != 1 {
					t.Fatal("replica A did not decide from its watermark")
				}
				if !tc.reinit {
					if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" {
						t.Fatalf("replica A forwarded %q, want e-1", v)
					}
				}
			})
		})
	}
}

// TestResumedStreamCarriesItsCursor: a stream resumed after cursor e-1
// whose first event is the response mints e-1 as its previous ID, so a
// second cut there is rewound on yet another replica.
func TestResumedStreamCarriesItsCursor(t *testing.T) {
	forEachDriver(t, func(t *testing.T, a *harness) {
		a.start(mintConfig)
		s, _ := a.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-1"})
		out := a.sseResponse(s, evResponse)
		s.end(true)
		if got := mintedID(t, out); got != "http:~1r3.2.e-21" {
			t.Fatalf("resumed stream minted %q, want http:~1r3.2.e-21 (previous ID: the cursor)", got)
		}
	})
}

// TestErrorCursorIsNoRaceAlone: the TypeScript client resumes a POST stream
// after a JSON-RPC error, so an error cursor on a replica without the
// watermark is an ordinary resume; the replica with it still catches it.
func TestErrorCursorIsNoRaceAlone(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, a *harness) {
		a.start(mintConfig)
		cursor := mintedID(t, a.cutStream("s-1", evNotification, evError))
		if !strings.HasPrefix(cursor, "http:~1e") {
			t.Fatalf("error event minted %q, want the error kind", cursor)
		}
		b := &harness{t: t, kind: a.kind, vms: 1}
		b.start(mintConfig)
		s, _ := b.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", cursor})
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-2" || b.counter("drain_race_detected_total") != 0 {
			t.Fatalf("replica B forwarded %q (races %d), want e-2 stripped and no race", v, b.counter("drain_race_detected_total"))
		}
		s, _ = a.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", cursor})
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" || a.counter("drain_race_detected_total") != 1 {
			t.Fatalf("replica A forwarded %q, want the rewind to e-1", v)
		}
	})
}

// TestNilResultIsAResponse: the Go SDK encodes a nil result as
// {"jsonrpc":"2.0","id":7}; it is the response the client waits for.
func TestNilResultIsAResponse(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(mintConfig)
		if got := mintedID(t, h.cutStream("s-1", evNotification, evNilResult)); got != "http:~1r3.2.e-21" {
			t.Fatalf("nil-result response minted %q, want a result cursor", got)
		}
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" || h.counter("drain_race_detected_total") != 1 {
			t.Fatalf("resume at a cut nil result forwarded %q, want the rewind to e-1", v)
		}
	})
}

// TestLegacyDrainRaceRewound: on the legacy transport a reconnect carries
// no session; the cursor alone rewinds it, never re-initializes it.
func TestLegacyDrainRaceRewound(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/sse","transport":"sse"}],"unacked_cursor":"reinit"}`)
		s, _ := h.request("GET", "/sse", [2]string{"last-event-id", "sse:~1r5.4.e-1044"})
		if r := h.reinitReason(s); r != "" {
			t.Fatalf("legacy reconnect re-initialized (%s)", r)
		}
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-104" {
			t.Fatalf("legacy reconnect forwarded %q, want the previous ID e-104", v)
		}
	})
}

// TestLongIDsRecorded: event IDs of 237–256 bytes are recorded (issue 15:
// they used to leave the record empty, yet evict another session's).
func TestLongIDsRecorded(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig) // stateful rules only
		prev, last := strings.Repeat("p", 250), strings.Repeat("q", 250)
		h.cutStream("s-1",
			"id: "+prev+"\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
			"id: "+last+"\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:" + last})
		if r := h.reinitReason(s); r != "drain_race" {
			t.Fatalf("resume at a cut 250-byte result: reason %q, want drain_race", r)
		}
	})
}

// TestLegacySessionFromEndpointWhole: a 600-byte legacy sessionId learnt
// from the endpoint event is tracked whole, not cut to the data prefix.
func TestLegacySessionFromEndpointWhole(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(testConfig)
		sid := strings.Repeat("S", 600)
		s, _ := h.request("GET", "/sse")
		h.sseResponse(s, "event: endpoint\ndata: /messages?sessionId="+sid+"\n\n",
			"id: e-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
			"id: e-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		s.end(true)
		// The message endpoint names the session in its query (a legacy
		// GET's query names none: its stream's session is its endpoint's).
		s, _ = h.request("POST", "/messages?sessionId="+sid, [2]string{"last-event-id", "sse:e-2"})
		if r := h.reinitReason(s); r != "drain_race" {
			t.Fatalf("legacy resume at the cut result of a 600-byte session: reason %q, want drain_race", r)
		}
	})
}

// TestDebugDecisionLinesFollowTheHostLevel: through the .wasm, a resume that
// passes with something to say (here an unknown cursor, stripped) logs its
// decision at debug, which the host writes only at its debug level (Envoy's
// default info level drops it); refusals log at info either way. A level
// raised while the VM runs (Envoy's POST /logging?wasm=debug) shows the
// lines from the next resume on. An ordinary resume (its cursor placed by
// the watermark, only stripped) is counted and writes no line at any level.
func TestDebugDecisionLinesFollowTheHostLevel(t *testing.T) {
	h := (&harness{t: t, kind: wasm, vms: 1}).withHostLogLevel("info")
	h.start(testConfig)
	host := h.d.(*wasmDriver).host
	h.toolCall("s-1", "e-1", "e-2", false)
	lines := func(reason string) int {
		return strings.Count(strings.Join(h.d.logs(logDebug), "\n"), "decision=stripped resume=true reason="+reason)
	}
	resume := func(cursor string) {
		t.Helper()
		if reason, _ := h.resume("s-1", cursor); reason != "" {
			t.Fatalf("resume from %s refused: %s", cursor, reason)
		}
	}
	for range 3 {
		resume("http:e-9")
		resume("http:e-2")
	}
	if n := lines("unknown_cursor"); n != 0 {
		t.Errorf("%d debug decision lines written at host level info, want 0", n)
	}
	h.request("GET", "/mcp", [2]string{"last-event-id", "sse:e-9"})
	if !strings.Contains(strings.Join(h.d.logs(logInfo), "\n"), "decision=reinit:cross_transport") {
		t.Error("a refusal was not logged at info")
	}
	if err := host.SetLogLevel("debug"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resume("http:e-9")
		resume("http:e-2")
	}
	if n := lines("unknown_cursor"); n != 3 {
		t.Errorf("%d debug decision lines of unknown cursors once the level was debug, want 3", n)
	}
	if n := lines("normal"); n != 0 {
		t.Errorf("%d decision lines of ordinary resumes at level debug, want 0", n)
	}
	if got := h.counter("cursors_stripped_total"); got != 12 {
		t.Errorf("cursors_stripped_total = %d, want 12 (every resume counted, ordinary ones too)", got)
	}
}

// TestDecisionLogLine: a judged request logs one decision line with the
// session tag, the decision and whether it was a resume: refusals at info,
// resumes that pass (but ordinary ones) at debug (Envoy's default info level
// shows none of those).
func TestDecisionLogLine(t *testing.T) {
	onlyDriver(t, native, func(t *testing.T, h *harness) {
		h.start(mintConfig)
		h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-9"})
		h.request("GET", "/mcp", [2]string{"last-event-id", "sse:e-9"})
		for _, c := range []struct {
			level logLevel
			want  string
		}{
			{logDebug, "decision session=" + cursor.SessionTag("s-1") + " decision=stripped resume=true reason=unknown_cursor"},
			{logInfo, "decision session=none decision=reinit:cross_transport resume=true reason=cross_transport"},
		} {
			if logs := strings.Join(h.d.logs(c.level), "\n"); !strings.Contains(logs, c.want) {
				t.Errorf("level %d log lacks %q:\n%s", c.level, c.want, logs)
			}
		}
		if strings.Contains(strings.Join(h.d.logs(logInfo), "\n"), "decision=stripped") {
			t.Error("a resume that passed was logged at info")
		}
	})
}
