package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
)

func TestStartupLifecycleOrder(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	trace := func(vm int, id uint32, cb string) {
		mu.Lock()
		calls = append(calls, fmt.Sprintf("%d:%d:%s", vm, id, cb))
		mu.Unlock()
	}
	h, _ := newHost(t, "probe", Options{VMs: 2, Trace: trace})
	want := []string{
		"0:0:_initialize", "0:1:proxy_on_context_create", "0:1:proxy_on_vm_start", "0:1:proxy_on_configure",
		"1:0:_initialize", "1:1:proxy_on_context_create", "1:1:proxy_on_vm_start", "1:1:proxy_on_configure",
	}
	mu.Lock()
	got := append([]string(nil), calls...)
	calls = nil
	mu.Unlock()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("start-up calls:\n got %v\nwant %v", got, want)
	}

	// Two requests per VM: ids increase per VM from 2 and are never reused;
	// every stream ends with log, done, delete in that order (Envoy's).
	for i := 0; i < 4; i++ {
		if _, err := h.Simulate(Exchange{Request: get("/x"), Response: ok200(), ResponseBody: [][]byte{[]byte("hi")}}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	got = calls
	mu.Unlock()
	perStream := func(vm, id int) []string {
		var out []string
		for _, cb := range []string{"proxy_on_context_create", "proxy_on_request_headers", "proxy_on_response_headers",
			"proxy_on_response_body", "proxy_on_log", "proxy_on_done", "proxy_on_delete"} {
			out = append(out, fmt.Sprintf("%d:%d:%s", vm, id, cb))
		}
		return out
	}
	var wantStreams []string
	for _, s := range [][2]int{{0, 2}, {1, 2}, {0, 3}, {1, 3}} {
		wantStreams = append(wantStreams, perStream(s[0], s[1])...)
	}
	if strings.Join(got, " ") != strings.Join(wantStreams, " ") {
		t.Fatalf("stream calls:\n got %v\nwant %v", got, wantStreams)
	}
	if st := h.Stats(); st.VMRequests[0] != 2 || st.VMRequests[1] != 2 {
		t.Fatalf("requests per VM = %v, want [2 2]", st.VMRequests)
	}
}

// callTrace records the callbacks a host makes (Options.Trace).
type callTrace struct {
	mu    sync.Mutex
	calls []string
}

func (c *callTrace) trace(_ int, _ uint32, cb string) {
	c.mu.Lock()
	c.calls = append(c.calls, cb)
	c.mu.Unlock()
}

// last returns the last n callbacks, space-separated.
func (c *callTrace) last(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.calls[len(c.calls)-n:], " ")
}

func TestLifecycleOnDownstreamDisconnect(t *testing.T) {
	var ct callTrace
	h, logs := newHost(t, "probe", Options{Trace: ct.trace})
	_, err := h.Simulate(Exchange{
		Request: get("/sse"), Response: ok200(), ResponseBody: [][]byte{[]byte("data: 1\n\n")},
		End: EndDownstreamDisconnect,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tail := ct.last(3); tail != "proxy_on_log proxy_on_done proxy_on_delete" {
		t.Fatalf("end of a reset stream: %s", tail)
	}
	lines := logs.Lines("probe-log")
	if len(lines) != 1 {
		t.Fatalf("probe-log lines: %q", logs.String())
	}
	for _, want := range []string{"code=200", "details=downstream_remote_disconnect", fmt.Sprintf("flags=%d", FlagDownstreamConnTerminated), "path=/sse"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %q lacks %q", lines[0], want)
		}
	}
}

func TestIdleTimeoutFlags(t *testing.T) {
	h, logs := newHost(t, "probe", Options{})
	if _, err := h.Simulate(Exchange{Request: get("/sse"), Response: ok200(), ResponseBody: [][]byte{[]byte("x")}, End: EndStreamIdleTimeout}); err != nil {
		t.Fatal(err)
	}
	line := strings.Join(logs.Lines("probe-log"), "\n")
	if !strings.Contains(line, "details=stream_idle_timeout") || !strings.Contains(line, fmt.Sprintf("flags=%d", FlagStreamIdleTimeout)) {
		t.Fatalf("idle timeout not reported: %q", line)
	}
}

func TestHeadersSeenByPlugin(t *testing.T) {
	h, _ := newHost(t, "probe", Options{RootID: "guard"})
	res, err := h.Simulate(Exchange{
		Info:     StreamInfo{RouteName: "mcp-legacy"},
		Request:  get("/messages?sessionId=s-1", Header{"x-test", "hdr"}, Header{"x-remove", "1"}, Header{"x-replace", "a"}, Header{"last-event-id", "sse:e-1"}),
		Response: ok200(Header{"content-length", "2"}), ResponseBody: [][]byte{[]byte("ok")},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Response
	checks := map[string]string{
		"x-probe-method": "GET", "x-probe-path": "/messages?sessionId=s-1", "x-probe-authority": "example.test",
		"x-probe-scheme": "http", "x-probe-route": "mcp-legacy", "x-probe-old-route": "<error status returned by host: not found>",
		"x-probe-prop-path": "/messages?sessionId=s-1", "x-probe-prop-url-path": "/messages", "x-probe-prop-method": "GET",
		"x-probe-root-id": "guard", "x-probe-num-headers": "8/8", "x-probe-eos": "true", "x-probe-status": "200",
		"x-probe-code": "200", "x-resp-added": "yes", "x-probe-ctx": "2",
		"x-reqhdr-after": "error status returned by host: bad argument",
	}
	for k, want := range checks {
		if got := r.Value(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := r.Get("content-length"); ok {
		t.Error("content-length not removed from the response")
	}
	q := res.Request
	if q.Value("x-added") != "yes" || q.Value("x-replace") != "replaced" || q.Value("last-event-id") != "rewritten" {
		t.Errorf("request modifications missing: %v", q)
	}
	if _, ok := q.Get("x-remove"); ok {
		t.Errorf("x-remove still present: %v", q)
	}
}

func TestSetHeaderPairsLowercases(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "setpairs"}), Response: ok200()})
	if err != nil {
		t.Fatal(err)
	}
	want := Headers{{":method", "GET"}, {":path", "/set"}, {":authority", "example"}, {":scheme", "http"}, {"x-mixed", "v"}}
	if fmt.Sprint(res.Request) != fmt.Sprint(want) {
		t.Fatalf("request = %v, want %v", res.Request, want)
	}
}

func TestLocalReplyRunsResponseCallbacks(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	res, err := h.Simulate(Exchange{Request: get("/mcp", Header{"x-test", "local"}), Response: ok200()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Upstream {
		t.Fatal("the upstream was contacted despite a local reply")
	}
	r := res.Response
	for k, want := range map[string]string{
		":status": "403", "x-local": "1", "content-type": "text/plain", "content-length": "15",
		"x-probe-status": "403", "x-probe-code": "403", "x-probe-resp-eos": "false",
	} {
		if got := r.Value(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if len(res.ResponseBody) != 1 || string(res.ResponseBody[0]) != "denied by probe" {
		t.Errorf("body = %q", res.ResponseBody)
	}
	if st := h.Stats(); st.LocalReplies != 1 || st.RefusedReplies != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestSecondLocalReplyIsRefused(t *testing.T) {
	h, logs := newHost(t, "probe", Options{})
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = h.Simulate(Exchange{Request: get("/mcp", Header{"x-test", "local-twice"})})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a second local reply hung the host")
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Response.Value("x-second-local"); got != "error status returned by host: internal failure" {
		t.Errorf("second local reply answered %q", got)
	}
	if res.Response.Value(":status") != "403" {
		t.Errorf("status = %q, want the first reply's 403", res.Response.Value(":status"))
	}
	if st := h.Stats(); st.RefusedReplies != 1 {
		t.Errorf("refused replies = %d", st.RefusedReplies)
	}
	if len(logs.Lines("second local reply refused")) != 1 {
		t.Errorf("no warn line: %s", logs.String())
	}
}

func TestTrapFailsRequestAndHostKeepsServing(t *testing.T) {
	h, logs := newHost(t, "probe", Options{})
	_, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "trap"}), Response: ok200()})
	var te *TrapError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a TrapError", err)
	}
	if te.Callback != "proxy_on_request_headers" {
		t.Errorf("trap in %s", te.Callback)
	}
	if !strings.Contains(logs.String(), "probe: trap requested") {
		t.Errorf("the guest's panic message is not in the log:\n%s", logs.String())
	}
	for i := 0; i < 3; i++ {
		res, err := h.Simulate(Exchange{Request: get("/after"), Response: ok200()})
		if err != nil {
			t.Fatalf("request %d after the trap: %v", i, err)
		}
		if res.Response.Value("x-probe-ctx") != fmt.Sprint(2+i) {
			t.Errorf("context id after restart = %s", res.Response.Value("x-probe-ctx"))
		}
	}
	if st := h.Stats(); st.Traps != 1 || st.Restarts != 1 || st.VMTraps[0] != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestRestrictedCallDuringInitializeTraps(t *testing.T) {
	logs := &logbuf.Buffer{}
	_, err := New(context.Background(), Options{Wasm: pluginWasm(t, "initcall"), Logger: newTestLogger(logs)})
	var rc *RestrictedCallError
	if !errors.As(err, &rc) {
		t.Fatalf("New = %v, want a restricted_callback trap", err)
	}
	if rc.Func != "env.proxy_set_shared_data" || rc.Phase != "_initialize" {
		t.Errorf("restricted call = %+v", rc)
	}
	if !strings.Contains(logs.String(), "logging is allowed during _initialize") {
		t.Errorf("proxy_log during _initialize was not logged:\n%s", logs.String())
	}
	// Envoy ≥ 1.39 with full WASI keeps the proxy_* restriction.
	if _, err := New(context.Background(), Options{Wasm: pluginWasm(t, "initcall"), FullWASI: true}); !errors.As(err, &rc) {
		t.Errorf("FullWASI: New = %v, want a restricted_callback trap", err)
	}
}

func TestWASISurfaceIsEnvoys(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	for _, name := range h.WASIImports() {
		if _, ok := envoyWASI[name]; !ok {
			t.Errorf("probe imports %s, outside Envoy 1.33–1.38's WASI", name)
		}
	}
	if len(envoyWASI) != 18 {
		t.Errorf("the Envoy WASI surface has %d functions, want 18", len(envoyWASI))
	}
}

func TestFullWASI(t *testing.T) {
	h, _ := newHost(t, "probe", Options{FullWASI: true})
	if _, err := h.Simulate(Exchange{Request: get("/"), Response: ok200()}); err != nil {
		t.Fatal(err)
	}
}

func TestConfigureFailureFailsNew(t *testing.T) {
	_, err := New(context.Background(), Options{Wasm: pluginWasm(t, "probe"), PluginConfig: []byte("fail=1")})
	if err == nil || !strings.Contains(err.Error(), "proxy_on_configure returned false") {
		t.Fatalf("New = %v", err)
	}
}

func TestMetricsAndTicks(t *testing.T) {
	h, _ := newHost(t, "probe", Options{VMs: 2, PluginConfig: []byte("tick=10")})
	for i := 0; i < 5; i++ {
		if _, err := h.Simulate(Exchange{Request: get("/"), Response: ok200()}); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := h.Metric("probe_requests"); v != 5 {
		t.Errorf("probe_requests = %d, want 5 (shared by both VMs)", v)
	}
	if v, ok := h.Metric("probe_active"); !ok || v != 0 {
		t.Errorf("probe_active = %d, %v", v, ok)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if v, _ := h.Metric("probe_ticks"); v >= 4 {
			break
		}
		if time.Now().After(deadline) {
			v, _ := h.Metric("probe_ticks")
			t.Fatalf("probe_ticks = %d after 5s with a 10ms tick", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSharedDataCASAcrossVMs(t *testing.T) {
	h, _ := newHost(t, "probe", Options{VMs: 2})
	const n = 200
	// Create the key first: proxy-wasm ignores cas when a key does not exist
	// yet, so two VMs that both find it missing would both "create" it and
	// one increment would be lost — the ABI's rule, not the host's fault.
	if st := h.SharedDataSet("probe:cas", []byte("0"), 0); st != StatusOK {
		t.Fatalf("creating probe:cas: %v", st)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "cas"}), Response: ok200()})
			if err != nil {
				errs <- err
				return
			}
			if v := res.Response.Value("x-cas"); strings.Contains(v, ":") || v == "" {
				errs <- fmt.Errorf("x-cas = %q", v)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, _, ok := h.SharedDataGet("probe:cas")
	if !ok || string(v) != fmt.Sprint(n) {
		t.Fatalf("probe:cas = %q, want %d (every increment applied exactly once)", v, n)
	}
	if st := h.Stats(); st.VMRequests[0] != n/2 || st.VMRequests[1] != n/2 {
		t.Errorf("round-robin: %v", st.VMRequests)
	}
	mismatches, _ := h.Metric("probe_cas_mismatch")
	t.Logf("CAS mismatches retried: %d", mismatches)
}

func TestSharedDataCASSemantics(t *testing.T) {
	h, _ := newHost(t, "noop", Options{})
	if st := h.SharedDataSet("k", []byte("a"), 12345); st != StatusOK {
		t.Fatalf("a new key ignores cas: %v", st)
	}
	_, cas1, _ := h.SharedDataGet("k")
	if cas1 == 0 {
		t.Fatal("cas is 0")
	}
	if st := h.SharedDataSet("k", []byte("b"), cas1+1); st != StatusCASMismatch {
		t.Fatalf("stale cas: %v, want CAS_MISMATCH", st)
	}
	if st := h.SharedDataSet("k", []byte("b"), cas1); st != StatusOK {
		t.Fatalf("matching cas: %v", st)
	}
	_, cas2, _ := h.SharedDataGet("k")
	if cas2 == cas1 || cas2 == 0 {
		t.Fatalf("cas after a write = %d (before %d)", cas2, cas1)
	}
	if st := h.SharedDataSet("k", []byte("c"), 0); st != StatusOK {
		t.Fatalf("cas 0 writes unconditionally: %v", st)
	}
	v, cas3, _ := h.SharedDataGet("k")
	if string(v) != "c" || cas3 == cas2 {
		t.Fatalf("after cas-0 write: %q %d", v, cas3)
	}
}

func TestSharedDataFaultInjection(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	h.SetSharedDataFault(func(op SharedDataOp, key string) bool { return key == "probe:x" })
	res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "shared-fail"}), Response: ok200()})
	if err != nil {
		t.Fatal(err)
	}
	want := "error status returned by host: internal failure/error status returned by host: internal failure"
	if got := res.Response.Value("x-shared-err"); got != want {
		t.Errorf("x-shared-err = %q", got)
	}
	h.SetSharedDataFault(nil)
	res, _ = h.Simulate(Exchange{Request: get("/", Header{"x-test", "shared-fail"}), Response: ok200()})
	if got := res.Response.Value("x-shared-err"); got != "ok/ok" {
		t.Errorf("without the fault: %q", got)
	}
}

func TestResponseBodyChunks(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	chunks := [][]byte{[]byte("id: e-1\n"), []byte("data: a\n\n"), []byte("")}
	res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "upper"}), Response: ok200(), ResponseBody: chunks})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", res.ResponseBody); got != `["ID: E-1\n" "DATA: A\n\n"]` {
		t.Errorf("chunks = %s", got)
	}
	res, err = h.Simulate(Exchange{Request: get("/", Header{"x-test", "buffer"}), Response: ok200(), ResponseBody: [][]byte{[]byte("ab"), []byte("cd"), []byte("e")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", res.ResponseBody); got != `["len=5 body=abcde"]` {
		t.Errorf("paused body = %s", got)
	}
}

func TestRequestBodyChunks(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "reqbody"}), RequestBody: [][]byte{[]byte("ab"), []byte("cd")}, Response: ok200()})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.RequestBody) != "<ab><cd>" {
		t.Errorf("request body = %q", res.RequestBody)
	}
	res, err = h.Simulate(Exchange{Request: get("/", Header{"x-test", "reqbuffer"}), RequestBody: [][]byte{[]byte("ab"), []byte("cde")}, Response: ok200()})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.RequestBody) != "total=5" {
		t.Errorf("paused request body = %q", res.RequestBody)
	}
}

func TestLogPhaseMaps(t *testing.T) {
	h, logs := newHost(t, "probe", Options{})
	if _, err := h.Simulate(Exchange{Request: get("/a"), Response: ok200()}); err != nil {
		t.Fatal(err)
	}
	// The client left before any response existed.
	if _, err := h.Simulate(Exchange{Request: get("/b"), End: EndDownstreamDisconnect}); err != nil {
		t.Fatal(err)
	}
	lines := logs.Lines("probe-log")
	if len(lines) != 2 {
		t.Fatalf("probe-log lines: %q", lines)
	}
	for i, want := range []string{
		"path=/a resp_status=200 log_write=error status returned by host: bad argument",
		"code=<error status returned by host: not found> details=downstream_remote_disconnect flags=16384 path=/b resp_status=<error status returned by host: not found>",
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want %q in it", i, lines[i], want)
		}
	}
}

// A write from VM 1 between VM 0's read and write makes VM 0's write fail
// with CAS_MISMATCH; VM 0 retries and both increments land.
func TestSharedDataCASMismatchBetweenVMs(t *testing.T) {
	h, _ := newHost(t, "probe", Options{VMs: 2})
	// The key must exist: a read of a missing key yields cas 0, and a write
	// with cas 0 is unconditional (Envoy's semantics).
	h.SharedDataSet("probe:cas", []byte("0"), 0)
	done := make(chan Result, 1)
	go func() {
		res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "cas-race"}), Response: ok200()})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, ok := h.SharedDataGet("probe:waiting"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("VM 0 never reached its CAS write")
		}
		time.Sleep(time.Millisecond)
	}
	res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "cas"}), Response: ok200()})
	if err != nil {
		t.Fatal(err)
	}
	if res.VM != 1 || res.Response.Value("x-cas") != "1" {
		t.Fatalf("second writer: VM %d, x-cas %q", res.VM, res.Response.Value("x-cas"))
	}
	h.SharedDataSet("probe:go", []byte("1"), 0)
	first := <-done
	if first.VM != 0 || first.Response.Value("x-cas") != "2" {
		t.Errorf("first writer: VM %d, x-cas %q", first.VM, first.Response.Value("x-cas"))
	}
	if n, _ := h.Metric("probe_cas_mismatch"); n != 1 {
		t.Errorf("CAS mismatches = %d, want 1", n)
	}
}

func TestStreamsAfterCloseFail(t *testing.T) {
	h, err := New(context.Background(), Options{Wasm: emptyPlugin()})
	if err != nil {
		t.Fatal(err)
	}
	h.Close(context.Background())
	if _, err := h.Simulate(Exchange{Request: get("/")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestLifecycleDeferredLog: HTTP/3 with deferred logging destroys the
// filter chain first (proxy_on_done, proxy_on_delete) and runs the access
// loggers, proxy_on_log among them, afterwards (Stream.FinishDeferredLog).
func TestLifecycleDeferredLog(t *testing.T) {
	var ct callTrace
	h, logs := newHost(t, "probe", Options{Trace: ct.trace})
	s, err := h.NewStream(StreamInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.OnRequestHeaders(get("/sse"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OnResponseHeaders(ok200(), false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.OnResponseBody([]byte("data: 1\n\n"), true); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishDeferredLog(EndComplete); err != nil {
		t.Fatal(err)
	}
	if tail := ct.last(3); tail != "proxy_on_done proxy_on_delete proxy_on_log" {
		t.Fatalf("end of an HTTP/3 stream with deferred logging: %s", tail)
	}
	// The probe, like every SDK-based plugin, forgot the context at
	// proxy_on_delete: its late proxy_on_log finds nothing to log.
	if lines := logs.Lines("probe-log"); len(lines) != 0 {
		t.Fatalf("probe-log after delete: %q", lines)
	}
}

// TestSetClockSetsBothWallClocks: SetClock moves the wall clock a guest
// reads through WASI and through proxy_get_current_time_nanoseconds alike,
// and nil restores the real one.
func TestSetClockSetsBothWallClocks(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	clocks := func() (wasi, proxy string) {
		res, err := h.Simulate(Exchange{Request: get("/", Header{"x-test", "clock"}), Response: ok200()})
		if err != nil {
			t.Fatal(err)
		}
		return res.Response.Value("x-clock-wasi"), res.Response.Value("x-clock-proxy")
	}
	h.SetClock(func() time.Time { return time.Unix(1234567890, 0) })
	if wasi, proxy := clocks(); wasi != "1234567890" || proxy != "1234567890/0" {
		t.Fatalf("with the clock set: WASI %q, proxy-wasm %q; want 1234567890 and 1234567890/0 (status OK)", wasi, proxy)
	}
	h.SetClock(nil)
	wasi, proxy := clocks()
	proxySec, _, _ := strings.Cut(proxy, "/")
	now := time.Now().Unix()
	for _, v := range []string{wasi, proxySec} {
		if sec, err := strconv.ParseInt(v, 10, 64); err != nil || sec < now-60 || sec > now {
			t.Fatalf("with the clock restored: WASI %q, proxy-wasm %q; want about %d", wasi, proxy, now)
		}
	}
}
