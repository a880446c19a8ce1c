package wasmhost

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
)

// proxyFixture is a probe host behind a Proxy in front of upstream.
type proxyFixture struct {
	host    *Host
	logs    *logbuf.Buffer
	front   *httptest.Server
	records chan StreamRecord
	mu      sync.Mutex
	calls   map[uint32][]string // callbacks by context id (one VM)
}

func newProxyFixture(t *testing.T, upstream http.Handler, popts ProxyOptions, hopts Options) *proxyFixture {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	f := &proxyFixture{records: make(chan StreamRecord, 100), calls: map[uint32][]string{}}
	if hopts.Trace == nil {
		hopts.Trace = func(_ int, id uint32, cb string) {
			f.mu.Lock()
			f.calls[id] = append(f.calls[id], cb)
			f.mu.Unlock()
		}
	}
	f.host, f.logs = newHost(t, "probe", hopts)
	u, _ := url.Parse(up.URL)
	popts.OnDone = func(r StreamRecord) { f.records <- r }
	f.front = httptest.NewServer(NewProxy(f.host, u, popts))
	t.Cleanup(f.front.Close)
	return f
}

func (f *proxyFixture) record(t *testing.T) StreamRecord {
	t.Helper()
	select {
	case r := <-f.records:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no stream record")
	}
	return StreamRecord{}
}

func (f *proxyFixture) request(t *testing.T, method, path, test string, body io.Reader) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, f.front.URL+path, body)
	if test != "" {
		req.Header.Set("X-Test", test)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestProxyStreamsSSEChunkByChunk(t *testing.T) {
	release := make(chan struct{})
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: e-1\ndata: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "id: e-2\ndata: two\n\n")
	})
	f := newProxyFixture(t, upstream, ProxyOptions{Routes: []Route{{PathPrefix: "/sse", RouteName: "mcp-legacy"}, {PathPrefix: "/s", RouteName: "other"}}}, Options{})
	resp := f.request(t, "GET", "/sse", "upper", nil)
	defer resp.Body.Close()
	if resp.Header.Get("X-Probe-Route") != "mcp-legacy" || resp.Header.Get("X-Guard-Vm") != "0" {
		t.Errorf("headers: %v", resp.Header)
	}
	if resp.ContentLength != -1 {
		t.Errorf("content-length %d on a rewritten stream", resp.ContentLength)
	}
	br := bufio.NewReader(resp.Body)
	got := make(chan string, 1)
	go func() {
		var sb strings.Builder
		for i := 0; i < 3; i++ {
			line, _ := br.ReadString('\n')
			sb.WriteString(line)
		}
		got <- sb.String()
	}()
	select {
	case s := <-got:
		if s != "ID: E-1\nDATA: ONE\n\n" {
			t.Fatalf("first event = %q", s)
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("the first event did not reach the client before the upstream finished")
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if string(rest) != "ID: E-2\nDATA: TWO\n\n" {
		t.Fatalf("rest = %q", rest)
	}
	rec := f.record(t)
	if rec.End != EndComplete || rec.Status != 200 || rec.Bytes != 38 {
		t.Errorf("record = %+v", rec)
	}
}

func TestProxyClientDisconnect(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: e-1\ndata: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	f := newProxyFixture(t, upstream, ProxyOptions{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.front.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "id: e-1\n" {
		t.Fatalf("first line %q", line)
	}
	cancel()
	resp.Body.Close()
	rec := f.record(t)
	if rec.End != EndDownstreamDisconnect || rec.Flags&FlagDownstreamConnTerminated == 0 {
		t.Fatalf("record = %+v", rec)
	}
	f.mu.Lock()
	calls := strings.Join(f.calls[rec.StreamID], " ")
	f.mu.Unlock()
	if !strings.HasSuffix(calls, "proxy_on_log proxy_on_done proxy_on_delete") {
		t.Errorf("callbacks: %s", calls)
	}
	line = strings.Join(f.logs.Lines("probe-log"), "\n")
	if !strings.Contains(line, "details=downstream_remote_disconnect") || !strings.Contains(line, fmt.Sprintf("flags=%d", FlagDownstreamConnTerminated)) {
		t.Errorf("probe-log: %s", line)
	}
}

func TestProxyStreamIdleTimeout(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.Path == "/slow-headers" {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "id: e-1\ndata: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	f := newProxyFixture(t, upstream, ProxyOptions{StreamIdleTimeout: 200 * time.Millisecond}, Options{})
	resp := f.request(t, "GET", "/sse", "", nil)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Errorf("the cut stream ended cleanly: %q", body)
	}
	if string(body) != "id: e-1\ndata: one\n\n" {
		t.Errorf("body before the cut = %q", body)
	}
	rec := f.record(t)
	if rec.End != EndStreamIdleTimeout || rec.Flags&FlagStreamIdleTimeout == 0 || rec.Cut || rec.EndName() != "stream_idle_timeout" {
		t.Fatalf("record = %+v", rec)
	}
	if line := strings.Join(f.logs.Lines("probe-log"), "\n"); !strings.Contains(line, "details=stream_idle_timeout") {
		t.Errorf("probe-log: %s", line)
	}

	// Before the response started: Envoy's 408, through the plugin.
	resp = f.request(t, "GET", "/slow-headers", "", nil)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 408 || string(body) != "stream timeout" || resp.Header.Get("X-Probe-Status") != "408" {
		t.Errorf("idle before headers: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if rec := f.record(t); rec.End != EndStreamIdleTimeout {
		t.Errorf("record = %+v", rec)
	}
}

func TestProxyLocalReplyNeverContactsUpstream(t *testing.T) {
	var hits atomic.Int32
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	f := newProxyFixture(t, upstream, ProxyOptions{}, Options{})
	resp := f.request(t, "POST", "/mcp", "local", strings.NewReader(`{"jsonrpc":"2.0"}`))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || string(body) != "denied by probe" || resp.Header.Get("X-Probe-Status") != "403" {
		t.Errorf("local reply: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if hits.Load() != 0 {
		t.Errorf("upstream contacted %d times", hits.Load())
	}
	if rec := f.record(t); !rec.Local || rec.Status != 403 {
		t.Errorf("record = %+v", rec)
	}
}

func TestProxyAppliesHeaderAndBodyChanges(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Length", "2")
		w.Header().Set("X-Up-Added", r.Header.Get("X-Added"))
		w.Header().Set("X-Up-Last-Event-Id", r.Header.Get("Last-Event-Id"))
		w.Header().Set("X-Up-Remove", r.Header.Get("X-Remove"))
		w.Header().Set("X-Up-Body", string(b))
		io.WriteString(w, "ok")
	})
	f := newProxyFixture(t, upstream, ProxyOptions{}, Options{})
	req, _ := http.NewRequest("POST", f.front.URL+"/mcp", strings.NewReader("abc"))
	req.Header.Set("X-Test", "hdr,reqbody")
	req.Header.Set("Last-Event-ID", "http:e-5")
	req.Header.Set("X-Remove", "gone")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for k, want := range map[string]string{"X-Up-Added": "yes", "X-Up-Last-Event-Id": "rewritten", "X-Up-Remove": "", "X-Up-Body": "<abc>", "X-Resp-Added": "yes"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if resp.ContentLength != -1 || string(body) != "ok" {
		t.Errorf("content-length %d, body %q", resp.ContentLength, body)
	}
}

func TestProxyTrapAnswers500AndKeepsServing(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fine") })
	f := newProxyFixture(t, upstream, ProxyOptions{}, Options{VMs: 2})
	resp := f.request(t, "GET", "/", "trap", nil)
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("trap answered %d", resp.StatusCode)
	}
	if rec := f.record(t); rec.End != EndHostFailure || rec.Err == nil {
		t.Errorf("record = %+v", rec)
	}
	vms := map[string]bool{}
	for i := 0; i < 4; i++ {
		resp := f.request(t, "GET", "/", "", nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "fine" {
			t.Fatalf("after the trap: %d %q", resp.StatusCode, body)
		}
		vms[resp.Header.Get("X-Guard-Vm")] = true
		f.record(t)
	}
	if !vms["0"] || !vms["1"] {
		t.Errorf("requests did not alternate between VMs: %v", vms)
	}
	if st := f.host.Stats(); st.Traps != 1 {
		t.Errorf("traps = %d", st.Traps)
	}
}

func TestProxyUpstreamDown(t *testing.T) {
	h, _ := newHost(t, "probe", Options{})
	u, _ := url.Parse("http://127.0.0.1:1")
	front := httptest.NewServer(NewProxy(h, u, ProxyOptions{}))
	defer front.Close()
	resp, err := http.Get(front.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("X-Probe-Status") != "503" {
		t.Errorf("upstream down: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestProxyFaultCutsAfterEvents(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: e-1\ndata: a\n\nid: e-2\r\ndata: b\r\n\r\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "id: e-3\ndata: c\n\n")
	})
	f := newProxyFixture(t, upstream, ProxyOptions{Fault: func(r *http.Request) Fault {
		if r.URL.Path == "/cut" {
			return Fault{CutAfterEvents: 2}
		}
		return Fault{}
	}}, Options{})
	resp := f.request(t, "GET", "/cut", "", nil)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(body) != "id: e-1\ndata: a\n\nid: e-2\r\ndata: b\r\n\r\n" {
		t.Fatalf("cut stream: %q, err %v", body, err)
	}
	rec := f.record(t)
	// The plugin sees an idle timeout; the request line names the cut.
	if rec.End != EndStreamIdleTimeout || rec.Flags&FlagStreamIdleTimeout == 0 || !rec.Cut || rec.EndName() != "cut" {
		t.Errorf("record = %+v", rec)
	}
	if line := strings.Join(f.logs.Lines("probe-log"), "\n"); !strings.Contains(line, "details=stream_idle_timeout") {
		t.Errorf("probe-log: %s", line)
	}
	resp = f.request(t, "GET", "/whole", "", nil)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(body), "id: ") != 3 {
		t.Errorf("uncut stream: %q, %v", body, err)
	}
}

func TestProxyTrapMidStreamResets(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: e-1\ndata: a\n\n")
	})
	f := newProxyFixture(t, upstream, ProxyOptions{}, Options{})
	resp := f.request(t, "GET", "/sse", "trap-body", nil)
	_, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err == nil {
		t.Errorf("trap after the headers: status %d, read error %v (want a reset)", resp.StatusCode, err)
	}
	if rec := f.record(t); rec.End != EndHostFailure {
		t.Errorf("record = %+v", rec)
	}
	resp = f.request(t, "GET", "/sse", "", nil)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "id: e-1\ndata: a\n\n" {
		t.Errorf("after the trap: %q %v", body, err)
	}
}
