package main

import (
	"slices"
	"strconv"
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

// TestReadOrderDecidesAlike: whichever order a path-matched request's
// headers are read in (readOrder: :path first after mostly unguarded
// traffic, the map first after mostly guarded traffic), every decision is
// the same; through the built .wasm the order is seen to change (a guarded
// request reads :path as a value only when :path comes first).
func TestReadOrderDecidesAlike(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		outcomes := map[string][]string{}
		kind := h.kind
		for _, prime := range []string{"unguarded", "guarded"} {
			// A harness per subtest: the native host is one per process.
			t.Run(prime, func(t *testing.T) { outcomes[prime] = readOrderScenario(t, kind, prime) })
		}
		if !slices.Equal(outcomes["unguarded"], outcomes["guarded"]) {
			t.Fatalf("decisions differ by read order:\n :path first %q\n map first   %q", outcomes["unguarded"], outcomes["guarded"])
		}
		if o := outcomes["guarded"]; len(o) < 4 || o[0] == "resume:  " || o[2] != "repeated session: 400" || o[3] != "ambiguous query: 400" {
			t.Fatalf("the scenario did not exercise the decisions: %q", o)
		}
	})
}

// readOrderScenario primes a fresh plugin with 2×readOrderSpan requests of
// prime ("unguarded" or "guarded") and returns what a set of decisions
// came out as.
func readOrderScenario(t *testing.T, kind driverKind, prime string) []string {
	h := &harness{t: t, kind: kind, vms: 1}
	h.start(testConfig)
	for i := range 2 * readOrderSpan {
		if prime == "unguarded" {
			h.request("GET", "/api/orders")
		} else {
			h.request("POST", "/mcp", [2]string{"mcp-session-id", "prime-" + strconv.Itoa(i)})
		}
	}
	if h.kind == wasm {
		host := h.d.(*wasmDriver).host
		before := host.HostCalls()["proxy_get_header_map_value"]
		h.request("POST", "/mcp", [2]string{"mcp-session-id", "probe"})
		values := host.HostCalls()["proxy_get_header_map_value"] - before
		if want := map[string]int64{"unguarded": 1, "guarded": 0}[prime]; values != want {
			t.Fatalf("after %s traffic a guarded request made %d value reads, want %d", prime, values, want)
		}
	}
	var got []string
	note := func(what string, s stream) {
		status := 0
		if lr := s.localReply(); lr != nil {
			status = lr.status
		}
		got = append(got, what+": "+strconv.Itoa(status))
	}
	h.toolCall("s-1", "e-1", "e-2", true)
	reason, fwd := h.resume("s-1", "http:e-1")
	got = append(got, "resume: "+reason+" "+fwd)
	reason, _ = h.resume("s-1", "sse:e-2")
	got = append(got, "cross-transport: "+reason)
	s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "a"}, [2]string{"mcp-session-id", "b"})
	note("repeated session", s)
	s, _ = h.request("POST", "/messages?sessionId=a&sessionId=b")
	note("ambiguous query", s)
	s, _ = h.request("POST", "/messages?sessionId=s-2")
	note("legacy message", s)
	s, _ = h.request("GET", "/mcp-other", [2]string{"last-event-id", "sse:e-2"})
	note("unguarded resume", s)
	return got
}

// TestReadOrderTurnsWithTheTraffic: the order starts :path first, turns
// to the map first after a run of guarded requests and back after a run of
// unguarded ones, within readOrderSpan requests each way.
func TestReadOrderTurnsWithTheTraffic(t *testing.T) {
	var o readOrder
	if o.mapFirst() {
		t.Fatal("a fresh VM reads the map first")
	}
	for range 3 * readOrderSpan {
		o.saw(false)
	}
	for i := range readOrderSpan + 1 {
		if o.mapFirst() {
			t.Fatalf("map first after %d guarded requests following unguarded traffic", i)
		}
		o.saw(true)
	}
	if !o.mapFirst() {
		t.Fatal("not map first after a run of guarded requests")
	}
	for range 10 * readOrderSpan {
		o.saw(true)
	}
	for range readOrderSpan {
		o.saw(false)
	}
	if o.mapFirst() {
		t.Fatal("still map first after a run of unguarded requests")
	}
}

// TestReadOrderCountsFailOpenAlike: a header map the host hands over
// broken counts as a fail-open only for a guarded request, whichever order
// the reads are in: with the map read first (after guarded traffic), an
// unguarded request whose map is broken passes quietly, as it does when
// :path comes first and the map is never read for it.
func TestReadOrderCountsFailOpenAlike(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		host := h.d.(*wasmDriver).host
		for i := range 2 * readOrderSpan {
			h.request("POST", "/mcp", [2]string{"mcp-session-id", "prime-" + strconv.Itoa(i)})
		}
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
		// The broken map is not asked for a second time once :path said
		// the request is guarded.
		if n := host.HostCalls()["proxy_get_header_map_pairs"] - maps; n != 1 {
			t.Errorf("the guarded request read the broken map %d times, want 1", n)
		}
	})
}
