package reliability

import (
	"bytes"
	"encoding/json"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// outcome is what the guard must make of a hostile or broken input.
type outcome int

const (
	// untouched: the request reaches the upstream exactly as sent and the
	// response reaches the client byte for byte.
	untouched outcome = iota
	// forwarded: the request reaches the upstream with Last-Event-ID set to
	// the row's cursor (its transport tag removed), nothing else changed.
	forwarded
	// reinit: the guard answers 404 with a JSON-RPC error (a forced
	// re-initialization); the upstream is never contacted.
	reinit
	// tagged: the response body differs from the upstream's only in its
	// complete id lines, which carry the route's tag.
	tagged
)

func (o outcome) String() string {
	return [...]string{"untouched", "forwarded", "reinit", "tagged"}[o]
}

// badInput is one row of the catalogue.
type badInput struct {
	name   string
	x      wasmhost.Exchange
	want   outcome
	cursor string // forwarded: the Last-Event-ID the upstream must see
	// counter, when set, must grow by one.
	counter string
	// steps replaces Simulate for rows the one-shot exchange cannot express
	// (an upstream reset mid-body, a reply that skipped the request path).
	steps func(t *testing.T, h *wasmhost.Host) wasmhost.Result
}

const sseBody = "id: e-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"

func chunked(s string, n int) [][]byte { return slices.Collect(slices.Chunk([]byte(s), n)) }

func resumeReq(session, cursor string) wasmhost.Headers {
	return get("/mcp", hdr("mcp-session-id", session), hdr("last-event-id", cursor), hdr("accept", "text/event-stream"))
}

func sseX(req wasmhost.Headers, resp wasmhost.Headers, body string, chunk int) wasmhost.Exchange {
	return wasmhost.Exchange{Request: req, Response: resp, ResponseBody: chunked(body, chunk)}
}

func okJSON() wasmhost.Headers {
	return wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "application/json"}}
}

func catalogue() []badInput {
	big := strings.Repeat("a", 64<<10)
	plain := get("/mcp", hdr("mcp-session-id", "s-1"), hdr("accept", "text/event-stream"))
	tenMiB := "id: e-1\ndata: \"" + strings.Repeat("x", 10<<20) + "\"\n\n" + sseBody
	return []badInput{
		// Cursors and session IDs.
		{name: "oversized tagged cursor (64 KiB)", x: wasmhost.Exchange{Request: resumeReq("s-1", "http:"+big), Response: okJSON()},
			want: forwarded, cursor: big},
		{name: "oversized untagged cursor (64 KiB)", x: wasmhost.Exchange{Request: resumeReq("s-2", big), Response: okJSON()},
			want: reinit, counter: "reinit_untagged_total"},
		// No CR, LF or NUL ever reaches the forwarded Last-Event-ID: the
		// guard never mints such a cursor, so it is refused as untagged.
		{name: "control characters in the cursor", x: wasmhost.Exchange{Request: resumeReq("s-3", "http:e-1\x01\x7f"), Response: okJSON()},
			want: forwarded, cursor: "e-1\x01\x7f"},
		{name: "NUL in the cursor", x: wasmhost.Exchange{Request: resumeReq("s-3b", "http:e-1\x01\x7f\x00"), Response: okJSON()},
			want: reinit, counter: "reinit_untagged_total"},
		{name: "CR/LF inside the cursor", x: wasmhost.Exchange{Request: resumeReq("s-4", "http:e-1\r\nx-injected: 1"), Response: okJSON()},
			want: reinit, counter: "reinit_untagged_total"},
		{name: "CR/LF inside a minted cursor's previous ID", x: wasmhost.Exchange{Request: resumeReq("s-4b", "http:~1r3.0.e-1\r\nx-injected: 1"), Response: okJSON()},
			want: reinit, counter: "reinit_untagged_total"},
		{name: "oversized session ID (64 KiB) with a cursor", x: wasmhost.Exchange{Request: resumeReq(big, "http:e-1"), Response: okJSON()},
			want: forwarded, cursor: "e-1"},
		{name: "oversized session ID (64 KiB) without a cursor", x: wasmhost.Exchange{Request: get("/mcp", hdr("mcp-session-id", big)), Response: okJSON()},
			want: untouched},
		{name: "control characters and CR/LF in the session ID", x: wasmhost.Exchange{Request: resumeReq("s-\x00\x01\r\nx: y", "http:e-1"), Response: okJSON()},
			want: forwarded, cursor: "e-1"},
		{name: "double prefix, same transport", x: wasmhost.Exchange{Request: resumeReq("s-5", "http:http:e-1"), Response: okJSON()},
			want: forwarded, cursor: "http:e-1"},
		{name: "double prefix, other transport first", x: wasmhost.Exchange{Request: resumeReq("s-6", "sse:http:e-1"), Response: okJSON()},
			want: reinit, counter: "reinit_cross_transport_total"},
		// The guard never tags an empty ID, so a tag alone is untagged.
		{name: "empty value after the prefix", x: wasmhost.Exchange{Request: resumeReq("s-7", "http:"), Response: okJSON()},
			want: reinit, counter: "reinit_untagged_total"},
		{name: "empty value after the other transport's prefix", x: wasmhost.Exchange{Request: resumeReq("s-8", "sse:"), Response: okJSON()},
			want: reinit, counter: "reinit_untagged_total"},

		// Upstream event streams.
		{name: "SSE without a final newline", x: sseX(plain, sseResponse(), sseBody+"id: e-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\nid: e-3", 7),
			want: tagged},
		{name: "SSE with CRLF and CR line ends", x: sseX(plain, sseResponse(), "id: e-1\r\ndata: {}\r\n\r\nid:e-2\rdata: x\r\r", 3),
			want: tagged},
		{name: "a 10 MiB single event", x: sseX(plain, sseResponse(), tenMiB, 16<<10), want: tagged},
		{name: "an id line longer than max_line_bytes", x: sseX(plain, sseResponse(), "id: "+big+"\ndata: {}\n\n"+sseBody, 16<<10),
			want: untouched, counter: "sse_overflow_total"},
		{name: "invalid UTF-8 and non-JSON data", x: sseX(plain, sseResponse(), "id: e-\xff\xfe\ndata: \xc3\x28 not json {\n\nid: e-2\ndata: [1,\n\n", 5),
			want: tagged},
		{name: "gzip-encoded SSE", x: sseX(plain, sseResponse(hdr("content-encoding", "gzip")), "\x1f\x8b\x08\x00id: e-1\n\n\xff", 4),
			want: untouched, counter: "sse_encoded_passthrough_total"},
		{name: "content type with charset", x: sseX(plain, wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream; charset=utf-8"}}, sseBody, 16),
			want: tagged},
		{name: "upper-case content type", x: sseX(plain, wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "TEXT/EVENT-STREAM"}}, sseBody, 16),
			want: tagged},
		{name: "HEAD request", x: wasmhost.Exchange{Request: withMethod(get("/mcp", hdr("mcp-session-id", "s-1")), "HEAD"), Response: sseResponse()},
			want: untouched},
		{name: "204 response", x: wasmhost.Exchange{Request: plain, Response: wasmhost.Headers{{Key: ":status", Value: "204"}}},
			want: untouched},
		{name: "304 response with an event-stream type", x: sseX(plain, wasmhost.Headers{{Key: ":status", Value: "304"}, {Key: "content-type", Value: "text/event-stream"}}, sseBody, 16),
			want: untouched},
		{name: "upstream reset mid-line", want: tagged, steps: resetMidLine},
		{name: "local reply from another filter", want: untouched, steps: foreignLocalReply},
		{name: "client disconnects during the request body", want: untouched, x: wasmhost.Exchange{
			Request:     withMethod(get("/mcp", hdr("mcp-session-id", "s-1"), hdr("content-type", "application/json")), "POST"),
			RequestBody: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","par`)},
			End:         wasmhost.EndDownstreamDisconnect,
		}},
	}
}

// TestBadInput runs the catalogue through the guard: every row gets its
// outcome, and none gets a 5xx from the guard, a trap, or a changed byte
// outside an id field.
func TestBadInput(t *testing.T) {
	h, _ := newHost(t, configWith(`,"max_line_bytes":8192`), wasmhost.Options{})
	for _, row := range catalogue() {
		t.Run(row.name, func(t *testing.T) {
			before := int64(0)
			if row.counter != "" {
				before = metric(h, row.counter)
			}
			traps := h.Stats().Traps
			var res wasmhost.Result
			if row.steps != nil {
				res = row.steps(t, h)
			} else {
				var err error
				if res, err = h.Simulate(cloneExchange(row.x)); err != nil {
					t.Fatalf("the guard failed the stream: %v", err)
				}
			}
			if n := h.Stats().Traps; n != traps {
				t.Fatalf("%d traps", n-traps)
			}
			if res.Local != nil && res.Local.Status >= 500 {
				t.Fatalf("the guard answered %d", res.Local.Status)
			}
			if row.counter != "" {
				if n := metric(h, row.counter); n != before+1 {
					t.Errorf("%s moved from %d to %d, want +1", row.counter, before, n)
				}
			}
			checkOutcome(t, row, res)
		})
	}
}

func checkOutcome(t *testing.T, row badInput, res wasmhost.Result) {
	t.Helper()
	if row.want == reinit {
		if res.Local == nil || res.Local.Status != 404 || res.Upstream {
			t.Fatalf("got local reply %+v (upstream contacted: %v), want a 404 re-initialization", res.Local, res.Upstream)
		}
		var body struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(res.Local.Body, &body); err != nil || body.ID != nil || body.Error.Code == 0 {
			t.Errorf("re-initialization body %q is not a JSON-RPC error with a null id (%v)", res.Local.Body, err)
		}
		return
	}
	if res.Local != nil {
		t.Fatalf("the guard answered locally (%d %q), want %v", res.Local.Status, res.Local.Body, row.want)
	}
	if row.steps != nil {
		return // the step function checked the bytes
	}
	x := row.x
	if !res.Upstream && x.End != wasmhost.EndDownstreamDisconnect {
		t.Fatal("the request never reached the upstream")
	}
	if res.Upstream {
		want := x.Request
		if row.want == forwarded {
			want = want.Clone()
			want.Set("last-event-id", row.cursor)
		}
		if !sameHeaders(res.Request, want) {
			t.Errorf("upstream got %q,\nwant %q", res.Request, want)
		}
	}
	got, sent := joined(res.ResponseBody), joined(x.ResponseBody)
	want := sent
	if row.want == tagged {
		want = mintIDs(sent, true)
		if want == sent {
			t.Fatal("bad row: the body has no id line to tag")
		}
	}
	if got != want {
		t.Errorf("client got %s,\nwant %s", clip(got), clip(want))
	}
	// Independently of the rewriter: outside id lines, not a byte changed.
	if a, b := withoutIDLines(got), withoutIDLines(sent); a != b {
		t.Errorf("outside id lines the client got %s,\nthe upstream sent %s", clip(a), clip(b))
	}
}

// withoutIDLines drops every line of an event stream whose field is "id"
// (the rewriter tags those and, while minting, moves them within their
// event), keeping every other byte and line ending as it is.
func withoutIDLines(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		end := strings.IndexAny(s, "\r\n")
		if end < 0 {
			end = len(s)
		} else if s[end] == '\r' && end+1 < len(s) && s[end+1] == '\n' {
			end += 2
		} else {
			end++
		}
		line := s[:end]
		s = s[end:]
		if name, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ":"); name == "id" {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// resetMidLine delivers an event and half an id line, then the upstream
// resets: the complete event arrives tagged, the half line never does (the
// client's stream is reset anyway), and nothing traps.
func resetMidLine(t *testing.T, h *wasmhost.Host) wasmhost.Result {
	s, err := h.NewStream(wasmhost.StreamInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.OnRequestHeaders(get("/mcp", hdr("mcp-session-id", "s-reset")), true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OnResponseHeaders(sseResponse(), false); err != nil {
		t.Fatal(err)
	}
	out, _, err := s.OnResponseBody([]byte(sseBody+"id: e-"), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := mintIDs(sseBody+"id: e-", false); string(out) != want {
		t.Errorf("before the reset the client got %q, want %q", out, want)
	}
	s.AddFlags(wasmhost.FlagUpstreamRemoteReset)
	if err := s.Finish(wasmhost.EndUpstreamFailure); err != nil {
		t.Fatal(err)
	}
	return wasmhost.Result{Upstream: true}
}

// foreignLocalReply is a reply another filter sent before this one saw the
// request (so only the response callbacks run), then one sent after it
// passed the request on: both reach the client untouched.
func foreignLocalReply(t *testing.T, h *wasmhost.Host) wasmhost.Result {
	reply := wasmhost.Headers{{Key: ":status", Value: "429"}, {Key: "content-type", Value: "text/event-stream"}}
	body := []byte("id: e-1\ndata: rate limited\n\n")
	for _, withRequest := range []bool{false, true} {
		s, err := h.NewStream(wasmhost.StreamInfo{})
		if err != nil {
			t.Fatal(err)
		}
		if withRequest {
			if _, err := s.OnRequestHeaders(resumeReq("s-local", "http:e-0"), true); err != nil {
				t.Fatal(err)
			}
		}
		s.SetResponse(429, "local_rate_limited")
		if _, err := s.OnResponseHeaders(reply.Clone(), false); err != nil {
			t.Fatal(err)
		}
		if got := s.ResponseHeaders(); !sameHeaders(got, reply) {
			t.Errorf("reply headers became %q", got)
		}
		out, _, err := s.OnResponseBody(body, true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, body) {
			t.Errorf("reply body became %q", out)
		}
		if err := s.Finish(wasmhost.EndComplete); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	return wasmhost.Result{Upstream: true}
}

// mintIDs is the reference for what a client receives: the body through the
// pure-Go rewriter as the plugin runs it (Streamable HTTP, minting), in one
// chunk; eos marks the end of the stream. The sse package proves that
// rewriter's output does not depend on the chunking and what it means to an
// SSE client; here the built .wasm must match it byte for byte.
func mintIDs(body string, eos bool) string {
	rw := sse.NewRewriter(cursor.TransportHTTP, 8192)
	rw.SetMint(true)
	out, _ := rw.Rewrite(nil, []byte(body), eos)
	return string(out)
}

func sameHeaders(a, b wasmhost.Headers) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// cloneExchange copies the header maps, which the guard may edit in place.
func cloneExchange(x wasmhost.Exchange) wasmhost.Exchange {
	x.Request = x.Request.Clone()
	x.Response = x.Response.Clone()
	return x
}

func clip(s string) string {
	if len(s) > 300 {
		return strconv.Quote(s[:150]) + "..." + strconv.Quote(s[len(s)-150:])
	}
	return strconv.Quote(s)
}

// withMethod returns h with its :method replaced.
func withMethod(h wasmhost.Headers, method string) wasmhost.Headers {
	h.Set(":method", method)
	return h
}
