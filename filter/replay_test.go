package main

import (
	"strings"
	"testing"
)

// The tests of issue 31: the replica that holds a session's watermark is
// never less safe than one that holds nothing. The official Python SDK
// answers a resume by replaying the missed events and then writing a fresh
// priming event (streamable_http.py, _replay_events), and closes polling
// streams after their priming event (SEP-1699): a result is then not the
// last event of its stream.

// A Python SDK server's events: CRLF, id before event and data, event IDs
// are UUIDs; a priming event is an id, empty data and a retry.
const (
	pySession  = "8b7e2f0c-3d1a-4c55-9e61-0f4b2a7d9c13"
	pyNotifyID = "3f2c9a4e-8d71-4b0e-a6c5-1e9d7f204b88"
	pyResultID = "c41d8e27-5a6f-4f93-b0d2-7e38a9c1f456"
	pyPrimeID  = "9e0b3c58-27d4-4a1f-8c6e-5b71d2e4a093"
	pyPrime2ID = "1a6f4d92-c3e8-47b5-9d20-8f5e3b7c1a64"
)

func pyEvent(id, data string) string {
	return "id: " + id + "\r\nevent: message\r\ndata: " + data + "\r\n\r\n"
}

func pyPriming(id string) string {
	return "id: " + id + "\r\ndata: \r\nretry: 1000\r\n\r\n"
}

var (
	pyNotification = pyEvent(pyNotifyID, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50}}`)
	pyResult       = pyEvent(pyResultID, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}],"isError":false}}`)
)

// pollingGET runs a GET /mcp of the Python session resuming from cursor ("":
// none) whose response carries chunks, cuts it (the client went away), and
// returns what went downstream.
func (h *harness) pollingGET(cursor string, chunks ...string) string {
	h.t.Helper()
	hdr := [][2]string{{"mcp-session-id", pySession}}
	if cursor != "" {
		hdr = append(hdr, [2]string{"last-event-id", cursor})
	}
	s, _ := h.request("GET", "/mcp", hdr...)
	if r := h.reinitReason(s); r != "" {
		h.t.Fatalf("GET with cursor %q re-initialized (%s)", cursor, r)
	}
	out := h.sseResponse(s, chunks...)
	s.end(true)
	return out
}

// resumeFrom sends the resume a client of the Python session holding cursor
// makes (resumeIn).
func (h *harness) resumeFrom(cursor string) string {
	h.t.Helper()
	return h.resumeIn(pySession, cursor)
}

// idOf returns the id the stream out gave the event whose data holds marker.
func idOf(t *testing.T, out, marker string) string {
	t.Helper()
	for _, ev := range strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n\n") {
		if !strings.Contains(ev, marker) {
			continue
		}
		for _, line := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				return v
			}
		}
	}
	t.Fatalf("no event with %q and an id in %q", marker, out)
	return ""
}

// TestPythonReplayOnTheWatermarkReplica: a polling GET carries a
// notification, the result and a priming event, and is cut; the client
// resumes from the result's cursor on the replica that saw the stream. The
// upstream replays strictly after the cursor it gets, so the guard must
// rewind to the notification, as a replica without the record does. The
// replay (the result again, then a fresh priming event) is cut as well, and
// the client resumes from the replayed result: rewound again.
func TestPythonReplayOnTheWatermarkReplica(t *testing.T) {
	layouts := map[string]func(evs ...string) []string{
		"separate chunks": func(evs ...string) []string { return evs },
		"one chunk":       func(evs ...string) []string { return []string{strings.Join(evs, "")} },
	}
	for name, chunks := range layouts {
		t.Run(name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.start(mintConfig)
				out := h.pollingGET("", chunks(pyNotification, pyResult, pyPriming(pyPrimeID))...)
				result := idOf(t, out, `"result"`)
				if !strings.HasPrefix(result, "http:~1r") {
					t.Fatalf("result's ID %q is not minted", result)
				}
				if got := h.resumeFrom(result); got != pyNotifyID {
					t.Fatalf("resume from the result forwarded %q, want the rewind to the notification %s", got, pyNotifyID)
				}
				// The upstream replays the result, then primes again; cut.
				out = h.pollingGET("http:"+pyNotifyID, chunks(pyResult, pyPriming(pyPrime2ID))...)
				replayed := idOf(t, out, `"result"`)
				if got := h.resumeFrom(replayed); got != pyNotifyID {
					t.Fatalf("resume from the replayed result forwarded %q, want %s", got, pyNotifyID)
				}
				// A client that got the priming event after the result lost
				// nothing: an ordinary resume.
				if got := h.resumeFrom("http:" + pyPrime2ID); got != pyPrime2ID {
					t.Fatalf("resume from the priming event forwarded %q", got)
				}
				if n := h.counter("drain_race_detected_total"); n != 2 {
					t.Fatalf("drain races counted: %d, want 2", n)
				}
			})
		})
	}
}

// TestPythonReplayWithoutMinting: without minted cursors only the record
// knows the cursor named a result; the replica holding it refuses the
// resume (no earlier ID is known to rewind to) instead of forwarding it and
// losing the result.
func TestPythonReplayWithoutMinting(t *testing.T) {
	for name, chunks := range map[string][]string{
		"separate chunks": {pyNotification, pyResult, pyPriming(pyPrimeID)},
		"one chunk":       {pyNotification + pyResult + pyPriming(pyPrimeID)},
	} {
		t.Run(name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"mint_cursors":false}`)
				out := h.pollingGET("", chunks...)
				result := idOf(t, out, `"result"`)
				if result != "http:"+pyResultID {
					t.Fatalf("result's ID %q, want the plain tag", result)
				}
				if got := h.resumeFrom(result); got != "reinit:drain_race" {
					t.Fatalf("resume from the result: %q, want reinit:drain_race", got)
				}
			})
		})
	}
}

// TestPassthroughResumeSeedsItsPrevious: under untagged_cursor: passthrough
// a resume with a pre-guard cursor goes upstream as it came; the resumed
// stream's first event, a result, is cut; resuming from it rewinds to that
// pre-guard cursor, as it does after a tagged one.
func TestPassthroughResumeSeedsItsPrevious(t *testing.T) {
	const cfg = `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"untagged_cursor":"passthrough"}`
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(cfg)
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", pySession}, [2]string{"last-event-id", "e-5"})
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-5" {
			t.Fatalf("untagged cursor forwarded as %q", v)
		}
		out := h.sseResponse(s, "id: e-6\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n\n")
		s.end(true)
		result := idOf(t, out, `"result"`)
		if got := h.resumeFrom(result); got != "e-5" {
			t.Fatalf("resume from the result forwarded %q, want the rewind to e-5", got)
		}
	})
	// On a replica that never saw the stream, the minted cursor names e-5.
	onlyDriver(t, wasm, func(t *testing.T, a *harness) {
		a.start(cfg)
		s, _ := a.request("GET", "/mcp", [2]string{"mcp-session-id", pySession}, [2]string{"last-event-id", "e-5"})
		out := a.sseResponse(s, "id: e-6\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n\n")
		s.end(true)
		b := &harness{t: t, kind: wasm, vms: 1}
		b.start(cfg)
		if got := b.resumeFrom(idOf(t, out, `"result"`)); got != "e-5" {
			t.Fatalf("replica without the record forwarded %q, want e-5", got)
		}
	})
}
