package main

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/proxytest"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
	"github.com/tidwall/gjson"
)

const testConfig = `{"routes":[
 {"path_prefix":"/mcp","transport":"http"},
 {"path_prefix":"/sse","transport":"sse"},
 {"path_prefix":"/messages","transport":"sse"}]}`

// harness drives the plugin in the SDK's emulator.
type harness struct {
	t      *testing.T
	host   proxytest.HostEmulator
	plugin *pluginContext
}

// capturingVM is the plugin's VM context that remembers its plugin context,
// so tests can reach into it.
type capturingVM struct {
	vmContext
	plugin *pluginContext
}

func (v *capturingVM) NewPluginContext(id uint32) types.PluginContext {
	v.plugin = v.vmContext.NewPluginContext(id).(*pluginContext)
	return v.plugin
}

func newHarness(t *testing.T, cfg string) *harness {
	t.Helper()
	vm := &capturingVM{}
	opt := proxytest.NewEmulatorOption().WithVMContext(vm).WithPluginConfiguration([]byte(cfg))
	host, reset := proxytest.NewHostEmulator(opt)
	t.Cleanup(reset)
	if st := host.StartPlugin(); st != types.OnPluginStartStatusOK {
		t.Fatalf("plugin start: %v; critical logs: %v", st, host.GetCriticalLogs())
	}
	return &harness{t: t, host: host, plugin: vm.plugin}
}

func (h *harness) counter(name string) uint64 {
	h.t.Helper()
	v, err := h.host.GetCounterMetric(MetricPrefix + name)
	if err != nil {
		h.t.Fatalf("counter %s: %v", name, err)
	}
	return v
}

// request starts a stream with the given request headers.
func (h *harness) request(method, path string, hdr ...[2]string) (uint32, types.Action) {
	id := h.host.InitializeHttpContext()
	headers := append([][2]string{{":method", method}, {":path", path}, {":authority", "mcp.example"}}, hdr...)
	return id, h.host.CallOnRequestHeaders(id, headers, method == "GET")
}

func header(hs [][2]string, key string) (string, bool) {
	for _, kv := range hs {
		if strings.EqualFold(kv[0], key) {
			return kv[1], true
		}
	}
	return "", false
}

// sseResponse sends an SSE response through the stream in the given chunks.
func (h *harness) sseResponse(id uint32, chunks ...string) string {
	h.host.CallOnResponseHeaders(id, [][2]string{{":status", "200"}, {"content-type", "text/event-stream"}, {"content-length", "999"}}, false)
	var out strings.Builder
	for i, c := range chunks {
		h.host.CallOnResponseBody(id, []byte(c), i == len(chunks)-1)
		out.Write(h.host.GetCurrentResponseBody(id))
	}
	return out.String()
}

// end finishes a stream: cut sets Envoy's DC flag first, as a client that
// went away would.
func (h *harness) end(id uint32, cut bool) {
	var flags [8]byte
	if cut {
		binary.LittleEndian.PutUint64(flags[:], flagDownstreamConnectionTermination)
	} else {
		flags[0] = 0 // proxytest refuses empty property values
	}
	if err := h.host.SetProperty(propFlags, flags[:]); err != nil {
		h.t.Fatal(err)
	}
	h.host.CompleteHttpContext(id)
}

func (h *harness) reinitReason(id uint32) string {
	h.t.Helper()
	lr := h.host.GetSentLocalResponse(id)
	if lr == nil {
		return ""
	}
	if lr.StatusCode != 404 {
		h.t.Fatalf("re-initialization status %d, want 404", lr.StatusCode)
	}
	if ct, _ := header(lr.Headers, "content-type"); ct != "application/json" {
		h.t.Fatalf("re-initialization content-type %q", ct)
	}
	body := string(lr.Data)
	if !gjson.Valid(body) || gjson.Get(body, "id").Type != gjson.Null || gjson.Get(body, "error.code").Int() != -32001 {
		h.t.Fatalf("re-initialization body %s", body)
	}
	return gjson.Get(body, "error.data.reason").String()
}

const (
	evNotification = "id: e-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	evResponse     = "id: e-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n"
)

// streamTail runs a POST /mcp whose SSE response carries a notification and
// then a response, and ends it (cut or clean).
func (h *harness) streamTail(session string, cut bool) {
	id, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", session})
	out := h.sseResponse(id, evNotification, evResponse)
	if !strings.Contains(out, "id: http:e-1\n") || !strings.Contains(out, "id: http:e-2\n") {
		h.t.Fatalf("IDs not tagged: %q", out)
	}
	h.end(id, cut)
}

func TestConfigErrorRefusesStart(t *testing.T) {
	opt := proxytest.NewEmulatorOption().WithVMContext(&vmContext{}).
		WithPluginConfiguration([]byte(`{"unacked_cursor":"sometimes"}`))
	host, reset := proxytest.NewHostEmulator(opt)
	defer reset()
	if st := host.StartPlugin(); st != types.OnPluginStartStatusFailed {
		t.Fatalf("start status %v, want failed", st)
	}
	logs := strings.Join(host.GetCriticalLogs(), "\n")
	if !strings.Contains(logs, "unacked_cursor") || !strings.Contains(logs, "reinit, rewind, observe") {
		t.Fatalf("log does not name the key and allowed values: %q", logs)
	}
}

func TestEveryMetricDefined(t *testing.T) {
	h := newHarness(t, testConfig)
	for _, n := range []string{"events_tagged_total", "cursors_stripped_total", "reinit_cross_transport_total",
		"reinit_untagged_total", "reinit_drain_race_total", "reinit_tombstoned_total", "drain_race_detected_total",
		"rewinds_total", "fail_open_total", "sse_overflow_total", "cas_conflicts_total"} {
		if v := h.counter(n); v != 0 {
			t.Errorf("%s = %d at start", n, v)
		}
	}
}

func TestUnguardedRouteUntouched(t *testing.T) {
	h := newHarness(t, testConfig)
	id, act := h.request("GET", "/other", [2]string{"last-event-id", "sse:e-1"})
	if act != types.ActionContinue || h.host.GetSentLocalResponse(id) != nil {
		t.Fatal("unguarded route was judged")
	}
	if v, _ := header(h.host.GetCurrentRequestHeaders(id), "last-event-id"); v != "sse:e-1" {
		t.Fatalf("cursor changed on an unguarded route: %q", v)
	}
	out := h.sseResponse(id, evResponse)
	if _, ok := header(h.host.GetCurrentResponseHeaders(id), "content-length"); !ok {
		t.Fatal("content-length dropped on an unguarded route")
	}
	if out != evResponse {
		t.Fatalf("unguarded SSE changed: %q", out)
	}
}

func TestTagsEventIDs(t *testing.T) {
	h := newHarness(t, testConfig)
	id, _ := h.request("GET", "/sse")
	out := h.sseResponse(id, "event: endpoint\ndata: /messages?sessionId=s-77\n\n", "id: e-104\ndata: {}\n\n")
	if _, ok := header(h.host.GetCurrentResponseHeaders(id), "content-length"); ok {
		t.Fatal("content-length kept on a rewritten SSE response")
	}
	want := "event: endpoint\ndata: /messages?sessionId=s-77\n\nid: sse:e-104\ndata: {}\n\n"
	if out != want {
		t.Fatalf("got %q want %q", out, want)
	}
	if n := h.counter("events_tagged_total"); n != 1 {
		t.Fatalf("events_tagged_total = %d, want 1", n)
	}
}

func TestNormalCursorStripped(t *testing.T) {
	h := newHarness(t, testConfig)
	id, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-9"})
	if act != types.ActionContinue || h.host.GetSentLocalResponse(id) != nil {
		t.Fatal("normal resume was refused")
	}
	if v, _ := header(h.host.GetCurrentRequestHeaders(id), "last-event-id"); v != "e-9" {
		t.Fatalf("forwarded cursor %q, want e-9", v)
	}
	if h.counter("cursors_stripped_total") != 1 {
		t.Fatal("cursors_stripped_total not counted")
	}
}

func TestCrossTransportReinit(t *testing.T) {
	h := newHarness(t, testConfig)
	// The seed: a legacy stream learns session s-77 from its endpoint event,
	// sends the tool result e-104, and is cut before the client drains it.
	sid, _ := h.request("GET", "/sse")
	h.sseResponse(sid, "event: endpoint\ndata: /messages?sessionId=s-77\n\n",
		"id: e-104\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n")
	h.end(sid, true)

	id, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-77"}, [2]string{"last-event-id", "sse:e-104"})
	if act != types.ActionPause {
		t.Fatalf("action %v, want pause after a local reply", act)
	}
	if r := h.reinitReason(id); r != "cross_transport" {
		t.Fatalf("reason %q", r)
	}
	if h.counter("reinit_cross_transport_total") != 1 {
		t.Fatal("reinit_cross_transport_total not counted")
	}
	warn := strings.Join(h.host.GetWarnLogs(), "\n")
	if !strings.Contains(warn, "cross-transport") || strings.Contains(warn, "s-77") {
		t.Fatalf("warn log missing or leaks the session ID: %q", warn)
	}
	// Our own reply comes back through the response callbacks: untouched.
	h.host.CallOnResponseHeaders(id, [][2]string{{":status", "404"}, {"content-type", "text/event-stream"}}, false)
	h.host.CallOnResponseBody(id, []byte("id: x\n\n"), true)
	if b := string(h.host.GetCurrentResponseBody(id)); b != "id: x\n\n" {
		t.Fatalf("local reply rewritten: %q", b)
	}
	// The session is tombstoned: every later request with it is refused.
	id2, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-77"})
	if r := h.reinitReason(id2); r != "tombstoned" {
		t.Fatalf("later request reason %q, want tombstoned", r)
	}
	if h.counter("reinit_tombstoned_total") != 1 {
		t.Fatal("reinit_tombstoned_total not counted")
	}
}

func TestUntaggedCursor(t *testing.T) {
	t.Run("reinit", func(t *testing.T) {
		h := newHarness(t, testConfig)
		id, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "e-9"})
		if r := h.reinitReason(id); r != "untagged_cursor" {
			t.Fatalf("reason %q", r)
		}
		if h.counter("reinit_untagged_total") != 1 {
			t.Fatal("reinit_untagged_total not counted")
		}
	})
	t.Run("passthrough", func(t *testing.T) {
		h := newHarness(t, `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"untagged_cursor":"passthrough"}`)
		id, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "e-9"})
		if h.host.GetSentLocalResponse(id) != nil {
			t.Fatal("passthrough refused an untagged cursor")
		}
		if v, _ := header(h.host.GetCurrentRequestHeaders(id), "last-event-id"); v != "e-9" {
			t.Fatalf("passthrough changed the cursor: %q", v)
		}
	})
}

func TestDrainRace(t *testing.T) {
	resume := func(h *harness) uint32 {
		id, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
		return id
	}
	t.Run("reinit", func(t *testing.T) {
		h := newHarness(t, testConfig)
		h.streamTail("s-1", true)
		if r := h.reinitReason(resume(h)); r != "drain_race" {
			t.Fatalf("reason %q", r)
		}
		if h.counter("drain_race_detected_total") != 1 || h.counter("reinit_drain_race_total") != 1 {
			t.Fatal("drain race not counted")
		}
		if !strings.Contains(strings.Join(h.host.GetWarnLogs(), "\n"), "drain race") {
			t.Fatal("no warn log for the drain race")
		}
	})
	t.Run("rewind", func(t *testing.T) {
		h := newHarness(t, `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"rewind"}`)
		h.streamTail("s-1", true)
		id := resume(h)
		if h.host.GetSentLocalResponse(id) != nil {
			t.Fatal("rewind answered locally")
		}
		if v, _ := header(h.host.GetCurrentRequestHeaders(id), "last-event-id"); v != "e-1" {
			t.Fatalf("rewound cursor %q, want e-1", v)
		}
		if h.counter("rewinds_total") != 1 || h.counter("drain_race_detected_total") != 1 {
			t.Fatal("rewind not counted")
		}
	})
	t.Run("observe", func(t *testing.T) {
		h := newHarness(t, `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"unacked_cursor":"observe"}`)
		h.streamTail("s-1", true)
		id := resume(h)
		if v, _ := header(h.host.GetCurrentRequestHeaders(id), "last-event-id"); v != "e-2" || h.host.GetSentLocalResponse(id) != nil {
			t.Fatalf("observe changed the outcome: cursor %q", v)
		}
		if h.counter("drain_race_detected_total") != 1 || !strings.Contains(strings.Join(h.host.GetWarnLogs(), "\n"), "drain race") {
			t.Fatal("observe did not log and count")
		}
	})
	t.Run("clean end is acknowledged", func(t *testing.T) {
		h := newHarness(t, testConfig)
		h.streamTail("s-1", false)
		id := resume(h)
		if h.host.GetSentLocalResponse(id) != nil {
			t.Fatal("a resume after a clean end was refused")
		}
		if v, _ := header(h.host.GetCurrentRequestHeaders(id), "last-event-id"); v != "e-2" {
			t.Fatalf("cursor %q, want e-2", v)
		}
		if h.counter("drain_race_detected_total") != 0 {
			t.Fatal("false alarm")
		}
	})
	t.Run("last event a notification", func(t *testing.T) {
		h := newHarness(t, testConfig)
		id, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		h.sseResponse(id, evResponse, strings.Replace(evNotification, "e-1", "e-3", 1))
		h.end(id, true)
		id, _ = h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-3"})
		if h.host.GetSentLocalResponse(id) != nil || h.counter("drain_race_detected_total") != 0 {
			t.Fatal("a cursor after a trailing notification was treated as a drain race")
		}
	})
}

func TestDeleteClearsRecord(t *testing.T) {
	h := newHarness(t, testConfig)
	h.streamTail("s-1", true)
	id, _ := h.request("DELETE", "/mcp", [2]string{"mcp-session-id", "s-1"})
	h.host.CallOnResponseHeaders(id, [][2]string{{":status", "204"}}, true)
	h.end(id, false)
	id, _ = h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
	if h.host.GetSentLocalResponse(id) != nil {
		t.Fatal("deleted session still has a watermark")
	}
}

func TestCompressedSSEPassesUntouched(t *testing.T) {
	h := newHarness(t, testConfig)
	id, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
	h.host.CallOnResponseHeaders(id, [][2]string{{":status", "200"}, {"content-type", "Text/Event-Stream; charset=utf-8"}, {"content-encoding", "gzip"}}, false)
	h.host.CallOnResponseBody(id, []byte("\x1f\x8bid: e-1\n\n"), true)
	if b := string(h.host.GetCurrentResponseBody(id)); b != "\x1f\x8bid: e-1\n\n" {
		t.Fatalf("compressed body changed: %q", b)
	}
	if h.counter("sse_encoded_passthrough_total") != 1 {
		t.Fatal("compressed SSE not counted")
	}
}

func TestPanicFailsOpen(t *testing.T) {
	h := newHarness(t, testConfig)
	h.plugin.now = func() uint32 { panic("clock broke") }
	id2, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"}, [2]string{"last-event-id", "http:e-2"})
	if act != types.ActionContinue || h.host.GetSentLocalResponse(id2) != nil {
		t.Fatal("a panic did not fail open")
	}
	if h.counter("fail_open_total") != 1 {
		t.Fatal("fail_open_total not counted")
	}
}

func TestSSEOverflowPassesUntouched(t *testing.T) {
	h := newHarness(t, `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"max_line_bytes":64}`)
	id, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
	long := "id: " + strings.Repeat("x", 100) + "\ndata: {}\n\n"
	out := h.sseResponse(id, "id: e-1\ndata: {}\n\n", long, "id: e-2\ndata: {}\n\n")
	want := "id: http:e-1\ndata: {}\n\n" + long + "id: e-2\ndata: {}\n\n"
	if out != want {
		t.Fatalf("got %q\nwant %q", out, want)
	}
	if h.counter("sse_overflow_total") != 1 {
		t.Fatal("sse_overflow_total not counted")
	}
	if !strings.Contains(strings.Join(h.host.GetWarnLogs(), "\n"), "max_line_bytes") {
		t.Fatal("overflow not logged")
	}
}

func TestSplitChunksTagged(t *testing.T) {
	h := newHarness(t, testConfig)
	id, _ := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
	in := "id: e-41\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n"
	var chunks []string
	for i := 0; i < len(in); i += 3 {
		chunks = append(chunks, in[i:min(i+3, len(in))])
	}
	out := h.sseResponse(id, chunks...)
	if want := strings.Replace(in, "id: e-41", "id: http:e-41", 1); out != want {
		t.Fatalf("got %q want %q", out, want)
	}
}
