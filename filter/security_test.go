package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
	"github.com/tidwall/gjson"
)

// The tests of this file pin what a client can and cannot do to other
// sessions through the guard (issue 16). Each failed on the build before.

// as returns the credential header of principal p ("" for none).
func as(p string) [][2]string {
	if p == "" {
		return nil
	}
	return [][2]string{{"authorization", "Bearer " + p}}
}

// toolCallAs is toolCall with the given principal.
func (h *harness) toolCallAs(principal, session, progressID, resultID string, cut bool) {
	h.t.Helper()
	s, _ := h.request("POST", "/mcp", append(as(principal), [2]string{"mcp-session-id", session})...)
	out := h.sseResponse(s, event(progressID, false), event(resultID, true))
	if !strings.Contains(out, "id: http:"+resultID+"\n") {
		h.t.Fatalf("result ID not tagged: %q", out)
	}
	s.end(cut)
}

// resumeAs is resume with the given principal.
func (h *harness) resumeAs(principal, session, cursor string) string {
	h.t.Helper()
	s, _ := h.request("GET", "/mcp", append(as(principal), [2]string{"mcp-session-id", session}, [2]string{"last-event-id", cursor})...)
	return h.reinitReason(s)
}

// postAs sends an ordinary POST of session and returns the
// re-initialization reason ("" when it passed).
func (h *harness) postAs(principal, session string) string {
	h.t.Helper()
	s, _ := h.request("POST", "/mcp", append(as(principal), [2]string{"mcp-session-id", session})...)
	return h.reinitReason(s)
}

func TestThirdPartyCannotTerminateOwnersSession(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(testConfig)
		h.toolCallAs("owner", "s-77", "e-1", "e-2", false)
		// Cross-transport, by someone with other credentials and by someone
		// with none: each gets its own request refused...
		for _, p := range []string{"mallory", ""} {
			if r := h.resumeAs(p, "s-77", "sse:e-2"); r != "cross_transport" {
				t.Fatalf("cross-transport by %q: %q", p, r)
			}
		}
		// ...and writes nothing: neither its next request nor the owner's
		// is refused (the upstream judges the third party's credentials).
		if r := h.postAs("mallory", "s-77"); r != "" {
			t.Fatalf("mallory after its own refusal: %q, want forwarded", r)
		}
		if r := h.postAs("owner", "s-77"); r != "" {
			t.Fatalf("the owner's request after a third party's cross-transport cursor: %q", r)
		}
		// Drain race by a third party on the owner's cut stream.
		h.toolCallAs("owner", "s-77", "e-3", "e-4", true)
		if r := h.resumeAs("eve", "s-77", "http:e-4"); r != "drain_race" {
			t.Fatalf("drain race by a third party: %q", r)
		}
		if r := h.postAs("owner", "s-77"); r != "" {
			t.Fatalf("the owner's request after a third party's drain race: %q", r)
		}
		// The owner's own re-initialization still terminates the session
		// for the owner, on every later request.
		if r := h.resumeAs("owner", "s-77", "http:e-4"); r != "drain_race" {
			t.Fatalf("the owner's drain race: %q", r)
		}
		for i := 0; i < 3; i++ {
			if r := h.postAs("owner", "s-77"); r != "tombstoned" {
				t.Fatalf("the owner after its own re-initialization: %q, want tombstoned", r)
			}
		}
	})
}

func TestOwnersCrossTransportTerminatesForOwner(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.withVMs(2).start(testConfig)
		h.toolCallAs("owner", "s-1", "e-1", "e-2", false)
		if r := h.resumeAs("owner", "s-1", "sse:e-2"); r != "cross_transport" {
			t.Fatalf("cross-transport: %q", r)
		}
		if r := h.postAs("owner", "s-1"); r != "tombstoned" {
			t.Fatalf("owner after its own cross-transport cursor: %q", r)
		}
		if r := h.postAs("someone-else", "s-1"); r != "" {
			t.Fatalf("another principal is refused by the owner's tombstone: %q", r)
		}
	})
}

// TestPrincipalHeaderOff: with principal_header "" everyone is the owner,
// as before (the tombstone binds the session alone).
func TestPrincipalHeaderOff(t *testing.T) {
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"principal_header":"","mint_cursors":false,"unacked_cursor":"reinit"}`)
		h.toolCallAs("owner", "s-1", "e-1", "e-2", false)
		if r := h.resumeAs("mallory", "s-1", "sse:e-2"); r != "cross_transport" {
			t.Fatalf("cross-transport: %q", r)
		}
		if r := h.postAs("owner", "s-1"); r != "tombstoned" {
			t.Fatalf("without a principal header anyone is the owner: %q, want tombstoned", r)
		}
	})
}

// sharedData returns a copy of the host's shared data.
func (h *harness) sharedData() map[string][]byte {
	return h.d.(*wasmDriver).host.SharedData()
}

func TestMadeUpSessionsCreateAndEvictNothing(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) { // reads the host's shared data
		const maxSessions = 20
		h.withVMs(2).start(fmt.Sprintf(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"max_sessions":%d,"mint_cursors":false,"unacked_cursor":"reinit"}`, maxSessions))
		for i := 0; i < 6; i++ {
			h.toolCallAs("owner", fmt.Sprint("real-", i), "e-1", "e-2", true)
		}
		for i := 0; i < 3; i++ { // terminated by their owners
			if r := h.resumeAs("owner", fmt.Sprint("real-", i), "sse:e-2"); r != "cross_transport" {
				t.Fatalf("real-%d: %q", i, r)
			}
		}
		before := h.sharedData()
		for i := 0; i < 10*maxSessions; i++ {
			sid := fmt.Sprint("made-up-", i)
			var r, want string
			switch i % 4 {
			case 0:
				r, want = h.resumeAs("", sid, "sse:e-2"), "cross_transport"
			case 1:
				r, want = h.resumeAs("mallory", sid, "e-2"), "untagged_cursor"
			case 2:
				r = h.resumeAs("mallory", sid, "http:e-2") // unknown: forwarded
			case 3:
				r = h.postAs("", sid) // ordinary: forwarded
			}
			if r != want {
				t.Fatalf("made-up request %d (%s): %q, want %q", i, sid, r, want)
			}
		}
		after := h.sharedData()
		if len(after) != len(before) {
			t.Fatalf("shared data had %d keys, has %d after the flood", len(before), len(after))
		}
		for k, v := range before {
			if !bytes.Equal(after[k], v) {
				t.Fatalf("key %s changed under a flood of made-up sessions", k)
			}
		}
		for i := 0; i < 3; i++ {
			if r := h.postAs("owner", fmt.Sprint("real-", i)); r != "tombstoned" {
				t.Fatalf("real-%d after the flood: %q, want tombstoned", i, r)
			}
		}
		for i := 3; i < 6; i++ {
			if r := h.resumeAs("owner", fmt.Sprint("real-", i), "http:e-2"); r != "drain_race" {
				t.Fatalf("real-%d's watermark after the flood: %q, want drain_race", i, r)
			}
		}
	})
}

// TestDuplicateHeadersRefused: a single-value read sees the first value of
// a header, Envoy forwards every value; a request that repeats a judged
// header is refused, nothing is tombstoned. The plugin reads the whole map,
// which holds every entry (Envoy's headerMapToPairs; the embedded host does
// the same). Through the built .wasm only: the test compares shared data.
func TestDuplicateHeadersRefused(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		h.toolCallAs("owner", "s-1", "e-1", "e-2", false)
		before := h.sharedData()
		for _, c := range []struct {
			header string
			hdr    [][2]string
		}{
			{"last-event-id", [][2]string{{"mcp-session-id", "s-1"}, {"last-event-id", "http:e-2"}, {"last-event-id", "sse:e-2"}}},
			{"last-event-id", [][2]string{{"mcp-session-id", "s-1"}, {"last-event-id", ""}, {"last-event-id", "e-2"}}},
			{"mcp-session-id", [][2]string{{"mcp-session-id", "s-1"}, {"mcp-session-id", "s-2"}}},
			{"mcp-session-id", [][2]string{{"mcp-session-id", "s-1"}, {"mcp-session-id", "s-1"}, {"last-event-id", "sse:e-2"}}},
		} {
			s, _ := h.request("GET", "/mcp", append(as("owner"), c.hdr...)...)
			lr := s.localReply()
			if lr == nil || lr.status != 400 {
				t.Fatalf("%v: reply %+v, want 400", c.hdr, lr)
			}
			body := string(lr.body)
			if !gjson.Valid(body) || gjson.Get(body, "id").Type != gjson.Null || gjson.Get(body, "error.code").Int() != -32600 ||
				gjson.Get(body, "error.data.header").String() != c.header {
				t.Fatalf("%v: body %s, want a JSON-RPC error naming %s", c.hdr, body, c.header)
			}
			s.runLocalReply()
			s.end(false)
		}
		after := h.sharedData()
		for k, v := range before {
			if !bytes.Equal(after[k], v) || len(after) != len(before) {
				t.Fatalf("an ambiguous request changed shared data (%s)", k)
			}
		}
		if r := h.postAs("owner", "s-1"); r != "" {
			t.Fatalf("the session after refused ambiguous requests: %q", r)
		}
		// One value each passes as before.
		if r := h.resumeAs("owner", "s-1", "http:e-2"); r != "" {
			t.Fatalf("a single cursor: %q", r)
		}
	})
}

// TestDuplicateHeadersNeverReachUpstream: the same through the embedded
// host's HTTP proxy, with the repeated headers on the wire.
func TestDuplicateHeadersNeverReachUpstream(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		var hits atomic.Int32
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(202)
		}))
		defer up.Close()
		u, _ := url.Parse(up.URL)
		front := httptest.NewServer(wasmhost.NewProxy(h.d.(*wasmDriver).host, u, wasmhost.ProxyOptions{}))
		defer front.Close()
		send := func(hdr map[string][]string) (int, string) {
			req, _ := http.NewRequest("POST", front.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			for k, vs := range hdr {
				req.Header[k] = vs
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		for _, hdr := range []map[string][]string{
			{"Mcp-Session-Id": {"s-1", "s-2"}},
			{"Mcp-Session-Id": {"s-1"}, "Last-Event-Id": {"http:e-1", "sse:e-1"}},
		} {
			if code, body := send(hdr); code != 400 || !strings.Contains(body, "duplicate_header") {
				t.Fatalf("%v: %d %s", hdr, code, body)
			}
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("the upstream received %d ambiguous requests", n)
		}
		if code, _ := send(map[string][]string{"Mcp-Session-Id": {"s-1"}}); code != 202 || hits.Load() != 1 {
			t.Fatalf("a single session header: %d, upstream hits %d", code, hits.Load())
		}
	})
}

// TestPanicAfterSplitIDLineLosesNoByte: a panic inside a body callback right
// after an id line was cut by the previous chunk boundary forwards the bytes
// held back, in front of the chunk as it came.
func TestPanicAfterSplitIDLineLosesNoByte(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) { // the fault-point build
		h.withPanicAt(faultBodyWithHeldName).start(testConfig)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
		first := s.onResponseBody([]byte("data: x\n\nid: e-"), false)
		if string(first) != "data: x\n\n" {
			t.Fatalf("first chunk out %q: the id line should be held back", first)
		}
		second := s.onResponseBody([]byte("1\ndata: y\n\n"), false)
		third := s.onResponseBody([]byte("id: e-2\ndata: z\n\n"), true)
		if got := string(first) + string(second) + string(third); got != "data: x\n\nid: e-1\ndata: y\n\nid: e-2\ndata: z\n\n" {
			t.Fatalf("downstream %q: bytes lost after a panic", got)
		}
		if h.counter("fail_open_total") != 1 {
			t.Fatalf("fail_open_total = %d", h.counter("fail_open_total"))
		}
		s.end(false)
	})
}

// faultBodyWithHeldName is faults_on.go's faultBodyWithHeld (the product
// build the native tests compile has no fault points).
const faultBodyWithHeldName = "response_body_with_held"

// TestNoMemoryGrowthInsideAllocate: linear memory never grows inside
// proxy_on_memory_allocate, whichever host call asked for the memory (WAMR
// up to 2.2 traps the plugin afterwards: Envoy's host library grew it for
// request header maps of ≥ ~47 KiB and for body chunks). Body chunks of 1 B
// to 1 MiB, and request and response header maps of 1 KiB to 1 MiB (a long
// credential, cookie or session), on a fresh VM for each size and on one
// warm VM through every size up and down, through the ordinary request, a
// resume, a refusal, a tombstone and the log phase.
func TestNoMemoryGrowthInsideAllocate(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		host := h.d.(*wasmDriver).host
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
		id := 0
		for size := 1; size <= 1<<20; size *= 2 {
			for range 2 {
				chunk := make([]byte, 0, size)
				for len(chunk) < size {
					id++
					chunk = append(chunk, "id: e-"+fmt.Sprint(id)+"\ndata: "+strings.Repeat("x", min(size, 200))+"\n\n"...)
				}
				s.onResponseBody(chunk[:size], false)
			}
		}
		s.onResponseBody(nil, true)
		s.end(false)
		noGrowth(t, host, "body chunks")
	})
	sizes := []int{1 << 10, 16 << 10, 47 << 10, 60 << 10, 100 << 10, 256 << 10, 512 << 10, 1 << 20}
	for _, size := range sizes {
		onlyDriver(t, wasm, func(t *testing.T, h *harness) {
			h.start(testConfig)
			largeHeaderExchanges(h, size, fmt.Sprintf("fresh-%d", size))
			noGrowth(t, h.d.(*wasmDriver).host, fmt.Sprintf("header maps of %d bytes on a fresh VM", size))
		})
	}
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		for i, size := range append(append([]int(nil), sizes...), sizes[0], sizes[len(sizes)-1], sizes[2]) {
			largeHeaderExchanges(h, size, fmt.Sprintf("warm-%d-%d", i, size))
		}
		noGrowth(t, h.d.(*wasmDriver).host, "header maps of 1 KiB to 1 MiB on a warm VM")
	})
}

// TestHeaderMapSizeAskedOnlyWhenTheArenaIsTooSmall: the glue reads a header
// map unreserved first and asks the host for the map's size only when the
// allocator had to refuse the read (it would have grown memory): ordinary
// requests, resumes included, make no proxy_get_header_map_size call; the
// first 100 KiB map does, and is read without growth; the next one fits
// the block the arena grew to and asks nothing again.
func TestHeaderMapSizeAskedOnlyWhenTheArenaIsTooSmall(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		host := h.d.(*wasmDriver).host
		calls := func(name string) int64 { return host.HostCalls()[name] }
		h.toolCall("s-1", "e-1", "e-2", true)
		if reason, fwd := h.resume("s-1", "http:e-1"); reason != "" || fwd != "e-1" {
			t.Fatalf("resume: reason %q, forwarded %q", reason, fwd)
		}
		if calls("proxy_get_header_map_pairs") == 0 {
			t.Fatal("the guarded requests read no header map: nothing measured")
		}
		if n := calls("proxy_get_header_map_size"); n != 0 {
			t.Fatalf("ordinary requests asked the header map's size %d times, want 0", n)
		}
		large := func() {
			s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"cookie", strings.Repeat("c", 100<<10)})
			h.sseResponse(s, event("e-9", true))
			s.end(false)
		}
		large()
		first := calls("proxy_get_header_map_size")
		if first == 0 {
			t.Fatal("a 100 KiB request header map was read without asking its size")
		}
		large()
		if n := calls("proxy_get_header_map_size"); n != first {
			t.Fatalf("the second 100 KiB map asked the size %d more times, want 0 (the arena kept the grown block)", n-first)
		}
		noGrowth(t, host, "100 KiB request header maps")
	})
}

// largeHeaderExchanges plays, with request and response header maps of
// about size bytes (one large header), the calls of a session: an initialize
// answered as a stream, a tool call cut after its result, a resume rewound
// from it, a cross-transport refusal that tombstones the session, a refused
// POST, and an ordinary request on the legacy message endpoint.
func largeHeaderExchanges(h *harness, size int, session string) {
	h.t.Helper()
	big := func(name string) [2]string { return [2]string{name, strings.Repeat("b", size)} }
	owner := [2]string{"authorization", "Bearer " + strings.Repeat("o", size)} // a large credential
	sse := func(s stream, sid string, events ...string) {
		hs := [][2]string{{":status", "200"}, {"content-type", "text/event-stream"}, big("x-upstream-trace")}
		if sid != "" {
			hs = append(hs, [2]string{"mcp-session-id", sid})
		}
		s.onResponseHeaders(hs, false)
		for i, ev := range events {
			s.onResponseBody([]byte(ev), i == len(events)-1)
		}
	}
	s, _ := h.request("POST", "/mcp", owner)
	sse(s, session, event("e-0", true))
	s.end(false)
	s, _ = h.request("POST", "/mcp", owner, [2]string{"mcp-session-id", session})
	sse(s, "", event("e-1", false), event("e-2", true))
	s.end(true)
	s, _ = h.request("GET", "/mcp", owner, [2]string{"mcp-session-id", session}, [2]string{"last-event-id", "http:e-2"})
	if lr := s.localReply(); lr == nil {
		sse(s, "", event("e-3", true))
	} else {
		s.runLocalReply()
	}
	s.end(false)
	s, _ = h.request("GET", "/mcp", owner, [2]string{"mcp-session-id", session}, [2]string{"last-event-id", "sse:e-3"})
	s.runLocalReply()
	s.end(false)
	s, _ = h.request("POST", "/mcp", owner, [2]string{"mcp-session-id", session})
	if h.reinitReason(s) != "tombstoned" {
		h.t.Fatalf("%s: the session was not tombstoned", session)
	}
	s.runLocalReply()
	s.end(false)
	s, _ = h.request("POST", "/messages?sessionId="+session, big("cookie"))
	s.onResponseHeaders([][2]string{{":status", "202"}, big("x-upstream-trace")}, true)
	s.end(false)
}

// noGrowth fails the test for every growth of linear memory the host saw
// inside proxy_on_memory_allocate.
func noGrowth(t *testing.T, host *wasmhost.Host, what string) {
	t.Helper()
	for _, g := range host.AllocGrowths() {
		t.Errorf("%s: linear memory grew by %d bytes inside proxy_on_memory_allocate(%d) for %s (body callback: %v)", what, g.Bytes, g.Size, g.Call, g.Body)
	}
}

// TestHostThatLiesAboutTheHeaderMap: a host that violates the ABI in
// proxy_get_header_map_pairs — an address and size outside memory, or a
// size that does not match the serialized content — makes the request pass
// unguarded and counted (fail_open_total), never traps the VM; the next
// request of an honest host is guarded again.
func TestHostThatLiesAboutTheHeaderMap(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(testConfig)
		host := h.d.(*wasmDriver).host
		h.toolCall("s-1", "e-1", "e-2", false)
		for _, c := range []struct {
			name string
			lie  func(ptr, size, memSize uint32) (uint32, uint32)
		}{
			{"past the end of memory", func(_, size, memSize uint32) (uint32, uint32) { return memSize - 8, size }},
			{"at the top of the address space", func(_, size, _ uint32) (uint32, uint32) { return 0xffffff00, size }},
			{"size overflowing the address", func(ptr, _, _ uint32) (uint32, uint32) { return ptr, 0xfffffff0 }},
			{"memory it was not given", func(_, size, _ uint32) (uint32, uint32) { return 1024, size }},
			{"16 bytes more than the map", func(ptr, size, _ uint32) (uint32, uint32) { return ptr, size + 16 }},
			{"3 bytes less than the map", func(ptr, size, _ uint32) (uint32, uint32) { return ptr, size - 3 }},
			{"the map shifted by 8", func(ptr, size, _ uint32) (uint32, uint32) { return ptr + 8, size - 8 }},
		} {
			before := h.counter("fail_open_total")
			host.SetHeaderMapPairsFault(c.lie)
			s, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "sse:e-2"})
			host.SetHeaderMapPairsFault(nil)
			if s.localReply() != nil || act != 0 {
				t.Fatalf("%s: the request was judged (reply %+v, action %d), want passed unguarded", c.name, s.localReply(), act)
			}
			if got := h.counter("fail_open_total"); got != before+1 {
				t.Fatalf("%s: fail_open_total %d → %d, want one more", c.name, before, got)
			}
			s.end(false)
			// The VM lives on and guards again.
			if r, _ := h.resume("s-1", "sse:e-2"); r != "cross_transport" {
				t.Fatalf("%s: the next request of an honest host: %q, want cross_transport", c.name, r)
			}
		}
	})
}

// TestDeferredLogAfterDelete: with HTTP/3 deferred logging Envoy runs
// proxy_on_log after proxy_on_done and proxy_on_delete. The plugin must
// survive it; its stream is then never acknowledged (the SDK dropped the
// context at proxy_on_delete), so a resume from its last result is judged a
// drain race — the safe side — and the VM goes on serving.
func TestDeferredLogAfterDelete(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind"}`)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		h.sseResponse(s, event("e-1", false), event("e-2", true))
		s.(*wasmStream).endDeferredLog()
		if r, fwd := h.resume("s-1", "http:e-2"); r != "" || fwd != "e-1" {
			t.Fatalf("resume after a clean HTTP/3 stream logged late: reason %q, cursor %q; want rewound to e-1 (unacknowledged)", r, fwd)
		}
		// The same exchange ended in Envoy's usual order is acknowledged.
		s, _ = h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-2"})
		h.sseResponse(s, event("e-1", false), event("e-2", true))
		s.end(false)
		if r, fwd := h.resume("s-2", "http:e-2"); r != "" || fwd != "e-2" {
			t.Fatalf("resume after a clean stream: reason %q, cursor %q", r, fwd)
		}
	})
}

// TestPanicWhileMintingHoldsAnIDLine: a minting rewriter holds an event's id
// line until the event ends. After a panic the held line goes in front of
// the chunk when that lands between lines (the client sees the same event),
// and is dropped, and logged, when it would cut a data line the rewriter
// had partly forwarded: the event then arrives without its ID, whole.
func TestPanicWhileMintingHoldsAnIDLine(t *testing.T) {
	onlyDriver(t, wasm, func(t *testing.T, h *harness) { // the fault-point build
		h.withPanicAt(faultBodyWithHeldName).start(mintConfig)
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
		first := s.onResponseBody([]byte("id: e-1\ndata: y\n"), false)
		if string(first) != "data: y\n" {
			t.Fatalf("first chunk out %q: the id line should be held to the end of its event", first)
		}
		second := s.onResponseBody([]byte("\ndata: z\n\n"), true)
		if got := string(first) + string(second); got != "data: y\nid: e-1\n\ndata: z\n\n" {
			t.Fatalf("downstream %q: the held id line did not go in front of the chunk", got)
		}
		s.end(false)

		s, _ = h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-2"})
		s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}}, false)
		first = s.onResponseBody([]byte("id: e-1\ndata: {\"jsonrpc\":\"2.0\",\"me"), false)
		second = s.onResponseBody([]byte("thod\":\"x\"}\n\n"), true)
		if got := string(first) + string(second); got != "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n" {
			t.Fatalf("downstream %q: the data line was cut, or bytes lost", got)
		}
		if !strings.Contains(strings.Join(h.d.logs(logError), "\n"), "cannot be put back without cutting the line") {
			t.Fatal("the dropped id line was not logged")
		}
		s.end(false)
	})
}
