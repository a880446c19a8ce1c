package main

import (
	"strconv"
	"testing"
)

// TestUnguardedMapNeverCopied makes docs/security.md's sentence true (issue
// 31): the request header map, authorization and cookie with it, is copied
// into the plugin only on a guarded route. Even after a run of guarded
// requests (the earlier build then read the map first, for every request),
// an unguarded request is judged by :path alone.
func TestUnguardedMapNeverCopied(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		host := h.d.(*wasmDriver).host
		for i := range 512 {
			h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-" + strconv.Itoa(i)})
		}
		maps := host.HostCalls()["proxy_get_header_map_pairs"]
		for range 8 {
			h.request("GET", "/api/orders", [2]string{"authorization", "Bearer secret"}, [2]string{"cookie", "sid=1"})
		}
		if n := host.HostCalls()["proxy_get_header_map_pairs"] - maps; n != 0 {
			t.Fatalf("8 unguarded requests copied the header map %d times, want 0", n)
		}
	})
}
