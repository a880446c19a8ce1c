package wasmhost

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refusedAddr returns a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestProxyUpstreamRefused: an upstream that refuses connections gets
// Envoy's 503 at once, through the plugin (which sees the reply and its
// UF flag), and a warning naming the upstream's address; so does a request
// on a route that bypasses the plugin.
func TestProxyUpstreamRefused(t *testing.T) {
	addr := refusedAddr(t)
	h, logs := newHost(t, "probe", Options{})
	u, _ := url.Parse("http://" + addr)
	records := make(chan StreamRecord, 4)
	front := httptest.NewServer(NewProxy(h, u, ProxyOptions{
		Router: func(r *http.Request) Route { return Route{RouteName: "r", Bypass: r.URL.Path == "/open"} },
		OnDone: func(rec StreamRecord) { records <- rec },
	}))
	defer front.Close()
	const want = "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused"
	for _, path := range []string{"/mcp", "/open"} {
		start := time.Now()
		resp, err := http.Get(front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: the 503 took %v", path, took)
		}
		if resp.StatusCode != 503 || string(body) != want || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("%s: %d %q %v; want 503 %q", path, resp.StatusCode, body, resp.Header, want)
		}
		rec := <-records
		if rec.End != EndUpstreamFailure || rec.Flags&FlagUpstreamConnFailure == 0 || rec.UpstreamErr == nil {
			t.Errorf("%s: record %+v", path, rec)
		}
		if sawPlugin := resp.Header.Get("X-Probe-Status") == "503"; sawPlugin != (path == "/mcp") {
			t.Errorf("%s: the plugin saw the reply: %v", path, sawPlugin)
		}
	}
	if lines := logs.Lines(`msg="upstream unreachable" upstream=` + addr); len(lines) != 2 {
		t.Errorf("want 2 warnings naming %s, got:\n%s", addr, logs)
	}
}

// TestUpstreamFailure: how each kind of round-trip error is answered.
func TestUpstreamFailure(t *testing.T) {
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want UpstreamFailure
	}{
		{"refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), UpstreamFailure{503,
			"upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused",
			"upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}", FlagUpstreamConnFailure}},
		{"unreachable", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), UpstreamFailure{503,
			"upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: No route to host",
			"upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_No_route_to_host}", FlagUpstreamConnFailure}},
		{"connect timeout", dial(context.DeadlineExceeded), UpstreamFailure{503,
			"upstream connect error or disconnect/reset before headers. reset reason: connection timeout",
			"upstream_reset_before_response_started{connection_timeout}", FlagUpstreamConnFailure}},
		{"closed before headers", io.ErrUnexpectedEOF, UpstreamFailure{503,
			"upstream connect error or disconnect/reset before headers. reset reason: connection termination",
			"upstream_reset_before_response_started{connection_termination}", FlagUpstreamConnTermination}},
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "mcp.invalid", IsNotFound: true}), UpstreamFailure{503,
			"no healthy upstream", "no_healthy_upstream", FlagNoHealthyUpstream}},
	} {
		got := upstreamFailure(tc.err)
		if got != tc.want {
			t.Errorf("%s: %+v\nwant %+v", tc.name, got, tc.want)
		}
		if unreachable := got.LogMessage() == "upstream unreachable"; unreachable != (tc.name != "closed before headers") {
			t.Errorf("%s: logged as %q", tc.name, got.LogMessage())
		}
	}
	if !errors.Is(dial(context.DeadlineExceeded), context.DeadlineExceeded) {
		t.Fatal("test bug: the wrapped deadline is not found")
	}
}

// TestProxyBypass: a route with Bypass set reaches the upstream without
// any plugin callback, its response streamed through unchanged.
func TestProxyBypass(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: e-1\ndata: "+r.URL.RawQuery+"\n\n")
	})
	f := newProxyFixture(t, upstream, ProxyOptions{Router: func(r *http.Request) Route {
		return Route{RouteName: "passthrough", Bypass: !strings.HasPrefix(r.URL.Path, "/mcp")}
	}}, Options{})
	before := f.host.Stats().Streams
	resp, err := http.Get(f.front.URL + "/health?q=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	rec := f.record(t)
	if string(body) != "id: e-1\ndata: q=1\n\n" || resp.Header.Get("X-Probe-Status") != "" || resp.Header.Get("X-Guard-Vm") != "" {
		t.Errorf("bypass: %q %v", body, resp.Header)
	}
	if rec.VM != -1 || rec.Route != "passthrough" || rec.Status != 200 || rec.End != EndComplete {
		t.Errorf("record %+v", rec)
	}
	if st := f.host.Stats(); st.Streams != before {
		t.Errorf("the plugin saw %d streams for a bypassed route", st.Streams-before)
	}
	resp, err = http.Get(f.front.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if f.record(t); resp.Header.Get("X-Probe-Route") != "passthrough" {
		t.Errorf("/mcp did not run the plugin with the router's route name: %v", resp.Header)
	}
}

// TestProxyRouteTimeout: a route's timeout answers an upstream that sends
// nothing with Envoy's 504 (through the plugin, flag UT), and resets one
// that stalls after its headers; on a bypassed route too.
func TestProxyRouteTimeout(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("headers") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: e-1\ndata: x\n\n")
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	})
	f := newProxyFixture(t, upstream, ProxyOptions{Router: func(r *http.Request) Route {
		return Route{RouteName: "r", Timeout: 200 * time.Millisecond, Bypass: strings.HasPrefix(r.URL.Path, "/open")}
	}}, Options{})
	for _, path := range []string{"/mcp", "/open"} {
		start := time.Now()
		resp, err := http.Get(f.front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rec := f.record(t)
		if took := time.Since(start); resp.StatusCode != 504 || string(body) != "upstream request timeout" || took > 5*time.Second {
			t.Errorf("%s: %d %q after %v; want 504 upstream request timeout after 200ms", path, resp.StatusCode, body, took)
		}
		if rec.Flags&FlagUpstreamRequestTimeout == 0 || rec.End != EndUpstreamFailure {
			t.Errorf("%s: record %+v", path, rec)
		}
		if sawPlugin := resp.Header.Get("X-Probe-Status") == "504"; sawPlugin != (path == "/mcp") {
			t.Errorf("%s: the plugin saw the reply: %v", path, sawPlugin)
		}

		resp, err = http.Get(f.front.URL + path + "?headers=1")
		if err != nil {
			t.Fatal(err)
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		rec = f.record(t)
		if resp.StatusCode != 200 || err == nil || !strings.HasPrefix(string(body), "id: ") {
			t.Errorf("%s stalled after headers: %d %q, read error %v; want the first event, then a reset", path, resp.StatusCode, body, err)
		}
		if rec.Flags&FlagUpstreamRequestTimeout == 0 {
			t.Errorf("%s stalled after headers: record %+v", path, rec)
		}
	}
	if n := len(f.logs.Lines(`msg="upstream request timeout"`)); n != 4 {
		t.Errorf("%d timeout warnings, want 4:\n%s", n, f.logs)
	}
}
