package main

import (
	"strings"
	"testing"
)

// TestSeedConditionsCountedInObserveMode (issue 33): in observe mode, the
// rollout configuration, the guard counts and logs what it sees of the
// seed's conditions in live traffic: a bridged session (the legacy stream's
// session used on Streamable HTTP) and, when the two transports' event IDs
// come from one sequence, a shared allocator. A bridged session whose
// transports mint IDs of their own shows only the first; a session on one
// transport shows neither.
func TestSeedConditionsCountedInObserveMode(t *testing.T) {
	const observe = `{"routes":[
 {"path_prefix":"/mcp","transport":"http"},
 {"path_prefix":"/sse","transport":"sse"},
 {"path_prefix":"/messages","transport":"sse"}],
 "untagged_cursor":"passthrough","unacked_cursor":"observe"}`
	cases := []struct {
		name           string
		legacy, stream string // the result IDs the legacy stream and the Streamable HTTP stream carry
		bridged        bool
		bridge, shared uint64
	}{
		{"bridged, one sequence", "e-104", "e-105", true, 1, 1},
		{"bridged, own IDs", "e-104", "k2x9q7w1m4n8b6v3c5z0a1s2d3_1", true, 1, 0},
		{"not bridged", "e-104", "e-105", false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.withVMs(2).start(observe)
				legacy := "s-77-" + strings.Repeat("a1b2", 8)
				h.legacyStreamAs("owner", "", legacy, false, event(c.legacy, true))
				session := legacy
				if !c.bridged {
					session = "s-78-" + strings.Repeat("c3d4", 8)
				}
				s, _ := h.request("POST", "/mcp", append(as("owner"), [2]string{"mcp-session-id", session})...)
				h.sseResponse(s, event(c.stream, true))
				s.end(false)
				if got := h.counter("bridged_sessions_total"); got != c.bridge {
					t.Errorf("bridged_sessions_total = %d, want %d", got, c.bridge)
				}
				if got := h.counter("shared_allocator_total"); got != c.shared {
					t.Errorf("shared_allocator_total = %d, want %d", got, c.shared)
				}
				info := strings.Join(h.d.logs(logInfo), "\n")
				if got := uint64(strings.Count(info, "bridged session: served on both transports")); got != c.bridge {
					t.Errorf("%d bridged-session lines, want %d:\n%s", got, c.bridge, info)
				}
				if got := uint64(strings.Count(info, "shared allocator:")); got != c.shared {
					t.Errorf("%d shared-allocator lines, want %d:\n%s", got, c.shared, info)
				}
			})
		})
	}
}
