package main

import (
	"strings"
	"testing"
)

// TestUnwind is the way back out (issue 33): under "unwind": true the guard
// tags no new event ID — the upstream's stream passes byte for byte, its
// content-length kept — but still reads the cursors it issued before: a
// tagged cursor goes upstream stripped, a minted result's cursor of a cut
// stream is still rewound, and the untagged cursors of the unwind-era
// streams pass as they came. After one session_ttl_seconds no client holds a
// cursor the upstream cannot read, and the filter can go.
func TestUnwind(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		// A client kept the cursors the guard issued before the unwind: a
		// plain tagged one and a cut result's minted one.
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unwind":true}`)
		tagged := "http:e-1"
		minted := "http:~1r3.2.e-21" // the result e-2 after e-1, as TestMintedResponseID mints it
		if got := h.resumeIn("s-1", tagged); got != "e-1" {
			t.Fatalf("tagged cursor during the unwind went upstream as %q, want e-1", got)
		}
		if got := h.resumeIn("s-1", minted); got != "e-1" {
			t.Fatalf("minted result cursor during the unwind went upstream as %q, want the rewind to e-1", got)
		}
		// New streams pass untouched: no tag, no moved id line, the
		// upstream's content-length kept.
		s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "e-1"})
		if r := h.reinitReason(s); r != "" {
			t.Fatalf("untagged cursor during the unwind refused (%s)", r)
		}
		if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" {
			t.Fatalf("untagged cursor went upstream as %q", v)
		}
		body := evNotification + evResponse
		if out := h.sseResponse(s, body); out != body {
			t.Fatalf("the upstream's stream changed during the unwind:\n%q\nwant\n%q", out, body)
		}
		if cl, ok := header(s.responseHeaders(), "content-length"); !ok || cl != "999" {
			t.Fatalf("content-length %q (present %v), want the upstream's", cl, ok)
		}
		s.end(true)
		// The client's cursor is now the upstream's own: it passes, as it
		// will once the guard is removed.
		if got := h.resumeIn("s-1", "e-2"); got != "e-2" {
			t.Fatalf("unwind-era cursor went upstream as %q, want e-2", got)
		}
		if n := h.counter("events_tagged_total"); n != 0 {
			t.Fatalf("%d events tagged during the unwind", n)
		}
	})
}

// resumeIn sends a GET /mcp of session with cursor and returns the
// Last-Event-ID the upstream gets, or "reinit:<reason>".
func (h *harness) resumeIn(session, cur string) string {
	h.t.Helper()
	s, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", session}, [2]string{"last-event-id", cur})
	if r := h.reinitReason(s); r != "" {
		return "reinit:" + r
	}
	v, _ := header(s.requestHeaders(), "last-event-id")
	s.end(true)
	if strings.HasPrefix(v, "http:") {
		h.t.Fatalf("cursor %q went upstream still tagged", v)
	}
	return v
}
