package main

import (
	"testing"
)

// TestPathPrefixWholeSegments: path_prefix matches whole path segments
// (Envoy's path_separated_prefix), in the plugin as built: "/mcp" guards
// /mcp, /mcp/, /mcp/x, /mcp?x and /mcp#f, never /mcp-anything or /mcpfoo,
// which pass untouched (their untagged cursor forwarded, their event IDs
// not tagged).
func TestPathPrefixWholeSegments(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}]}`)
		for _, tc := range []struct {
			path    string
			guarded bool
		}{
			{"/mcp", true},
			{"/mcp/", true},
			{"/mcp/sub", true},
			{"/mcp?x=1", true},
			{"/mcp#frag", true},
			{"/mcp-anything", false},
			{"/mcpfoo", false},
			{"/mcpfoo?x=1", false},
		} {
			// An untagged cursor: the guard refuses it where it guards.
			s, _ := h.request("GET", tc.path, [2]string{"mcp-session-id", "s-path-" + tc.path}, [2]string{"last-event-id", "e-1"})
			reason := h.reinitReason(s)
			switch {
			case tc.guarded && reason != "untagged_cursor":
				t.Errorf("%s: re-initialization reason %q; want untagged_cursor (guarded)", tc.path, reason)
			case !tc.guarded && reason != "":
				t.Errorf("%s: re-initialized (%s); want it untouched (not under /mcp by whole segments)", tc.path, reason)
			case !tc.guarded:
				if v, _ := header(s.requestHeaders(), "last-event-id"); v != "e-1" {
					t.Errorf("%s: cursor changed to %q on an unguarded path", tc.path, v)
				}
				if out := h.sseResponse(s, "id: e-2\ndata: {}\n\n"); out != "id: e-2\ndata: {}\n\n" {
					t.Errorf("%s: unguarded SSE changed: %q", tc.path, out)
				}
			}
			s.end(false)
		}
	})
}

// TestBrokenHeaderMapFailsOpenOnlyWhenGuarded: a header map the host hands
// over broken counts as a fail-open only for a guarded request (an
// unguarded one is judged by :path alone, and its map never read), and is
// read once.
func TestBrokenHeaderMapFailsOpenOnlyWhenGuarded(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		host := h.d.(*wasmDriver).host
		host.SetHeaderMapPairsFault(func(ptr, size, memSize uint32) (uint32, uint32) { return memSize - 8, size })
		defer host.SetHeaderMapPairsFault(nil)
		before := h.counter("fail_open_total")
		h.request("GET", "/api/orders")
		if got := h.counter("fail_open_total"); got != before {
			t.Fatalf("an unguarded request with a broken map counted %d fail-opens, want 0", got-before)
		}
		maps := host.HostCalls()["proxy_get_header_map_pairs"]
		h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		if got := h.counter("fail_open_total"); got != before+1 {
			t.Fatalf("a guarded request with a broken map counted %d fail-opens, want 1", got-before)
		}
		if n := host.HostCalls()["proxy_get_header_map_pairs"] - maps; n != 1 {
			t.Errorf("the guarded request read the broken map %d times, want 1", n)
		}
	})
}
