package trial

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/promtext"
)

const (
	wasmFile  = "../../build/mcp-resume-guard.wasm"
	envoyFile = "../../envoy/envoy.yaml"
	pathsFile = "../../envoy/plugin-config/paths.json"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		if name == wasmFile {
			t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
		}
		t.Fatal(err)
	}
	return b
}

// startEnvoyConfigured starts the trial proxy the way make run does, on
// free ports: envoy.yaml's configuration (or paths.json over it), the
// reference server unless upstream is given.
func startEnvoyConfigured(t *testing.T, pluginConfig, upstream string) (*Server, *logbuf.Buffer) {
	t.Helper()
	bs, err := envoyconf.Parse(readFile(t, envoyFile))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	opts := Options{
		Wasm: readFile(t, wasmFile), WasmPath: "build/mcp-resume-guard.wasm",
		Envoy: bs, EnvoyPath: "envoy/envoy.yaml", Upstream: upstream,
		Listen: "127.0.0.1:0", Admin: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}
	if pluginConfig != "" {
		// make run ROUTES=paths
		opts.PluginConfig, opts.PluginConfigPath = readFile(t, pluginConfig), "envoy/plugin-config/paths.json"
		opts.FilterAllRoutes = true
	}
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, logs
}

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// scrape reads /stats/prometheus as Prometheus text (promtext).
func scrape(t *testing.T, s *Server) map[string]promtext.Family {
	t.Helper()
	_, body := get(t, "http://"+s.AdminAddr+"/stats/prometheus")
	fams, err := promtext.Parse(body)
	if err != nil {
		t.Fatalf("/stats/prometheus is not Prometheus text: %v\n%s", err, body)
	}
	return fams
}

// TestTrialProxy runs the make run configuration in front of the reference
// server: the banner, a guarded resume refused as Envoy would refuse it
// (with the log lines), the passthrough route bypassing the plugin, every
// counter the plugin defines in /stats/prometheus, and a shutdown within a
// second despite an open SSE stream, with the counters that moved.
func TestTrialProxy(t *testing.T) {
	s, logs := startEnvoyConfigured(t, "", "")
	var banner bytes.Buffer
	s.WriteBanner(&banner)
	for _, want := range []string{
		s.UpstreamURL + ": the reference MCP server",
		"configuration from envoy/envoy.yaml",
		"/mcp        mcp-streamable             guarded as Streamable HTTP",
		"/sse        mcp-legacy-stream          guarded as legacy HTTP+SSE",
		"/messages   mcp-legacy-messages        guarded as legacy HTTP+SSE",
		"/message    mcp-legacy-message         guarded as legacy HTTP+SSE",
		"/messages/  mcp-legacy-messages-slash  guarded as legacy HTTP+SSE",
		"/*          passthrough                not filtered",
		"timeouts  stream idle 5m0s (cuts a silent stream, as Envoy does), upstream connect 5s",
		"Streamable HTTP: http://" + s.ProxyAddr + "/mcp\n",
		"legacy HTTP+SSE: http://" + s.ProxyAddr + "/sse\n",
		"curl -s http://" + s.AdminAddr + "/stats/prometheus | grep mcp_resume_guard_",
	} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, banner.String())
		}
	}
	if strings.Contains(banner.String(), "  warning  ") {
		t.Errorf("banner warns:\n%s", banner.String())
	}

	// Every counter the plugin defines, at 0, typed counter.
	fams := scrape(t, s)
	for _, name := range counters.Names() {
		f := fams[counters.Prefix+name]
		if v, one := f.Value(); f.Type != "counter" || !one || v != 0 {
			t.Errorf("/stats/prometheus: %s%s is %+v; want one counter at 0", counters.Prefix, name, f)
		}
	}

	// The incident's resume: a legacy cursor at the Streamable HTTP endpoint.
	resp, body := get(t, "http://"+s.ProxyAddr+"/mcp", "Accept", "text/event-stream", "Mcp-Session-Id", "s-77", "Last-Event-ID", "sse:e-104")
	if resp.StatusCode != 404 || !strings.Contains(body, `"reason":"cross_transport"`) {
		t.Errorf("cross-transport resume: %d %s", resp.StatusCode, body)
	}
	if v, _ := scrape(t, s)[counters.Prefix+counters.ReinitCrossTransport].Value(); v != 1 {
		t.Errorf("reinit_cross_transport_total = %v after one refused resume", v)
	}
	for _, want := range []string{
		`msg="mcp-resume-guard: cross-transport cursor`,
		`msg="forced re-initialization" reason=cross_transport method=GET path=/mcp session=`,
	} {
		if !logs.WaitFor(want, 2*time.Second) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	// The passthrough route reaches the upstream without the plugin.
	streams := s.Host.Stats().Streams
	if resp, body := get(t, "http://"+s.ProxyAddr+"/"); resp.StatusCode != 200 || !strings.Contains(body, "mcp-dualstack") {
		t.Errorf("GET / through the passthrough route: %d %q", resp.StatusCode, body)
	}
	if got := s.Host.Stats().Streams; got != streams {
		t.Errorf("the plugin ran on the passthrough route (%d streams)", got-streams)
	}

	// A legacy session: its stream's events come tagged sse:, and the
	// stream, left open, does not hold the shutdown.
	resp, err := http.Get("http://" + s.ProxyAddr + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	endpoint := ""
	for endpoint == "" {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatalf("legacy stream before its endpoint event: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = data
		}
	}
	post, err := http.Post("http://"+s.ProxyAddr+endpoint, "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	for {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatalf("legacy stream: no tagged event: %v", err)
		}
		if strings.HasPrefix(line, "id: ") {
			// The initialize result's ID is minted (cursor.ParseCursor).
			c, ok := cursor.ParseCursor(strings.TrimSpace(strings.TrimPrefix(line, "id: ")))
			if !ok || c.Transport != cursor.TransportSSE || !strings.HasPrefix(c.ID, "e-") {
				t.Errorf("legacy event ID %q is not tagged sse:", line)
			}
			break
		}
	}
	start := time.Now()
	moved := s.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v with an open stream; want under a second", took)
	}
	got := map[string]int64{}
	for _, m := range moved {
		got[m.Name] = m.Delta
	}
	if got[counters.Prefix+counters.ReinitCrossTransport] != 1 || got[counters.Prefix+counters.EventsTagged] < 1 {
		t.Errorf("moved = %v; want reinit_cross_transport_total 1 and events tagged", moved)
	}
	if _, ok := got[counters.Prefix+counters.FailOpen]; ok {
		t.Errorf("moved lists a counter that did not move: %v", moved)
	}
	var out bytes.Buffer
	WriteMoved(&out, moved)
	if !strings.Contains(out.String(), counters.Prefix+counters.ReinitCrossTransport+"  1\n") {
		t.Errorf("WriteMoved:\n%s", out.String())
	}
}

// TestTrialPaths: with ROUTES=paths the plugin runs on every request and
// matches paths.json's prefixes, so /mcp/x is guarded too; with envoy.yaml's
// configuration /mcp/x takes the passthrough route and the plugin never
// sees it.
func TestTrialPaths(t *testing.T) {
	s, _ := startEnvoyConfigured(t, pathsFile, "")
	var banner bytes.Buffer
	s.WriteBanner(&banner)
	for _, want := range []string{
		"configuration from envoy/plugin-config/paths.json",
		"/mcp*       (any route)  guarded as Streamable HTTP",
		"/sse*       (any route)  guarded as legacy HTTP+SSE",
		"/messages*  (any route)  guarded as legacy HTTP+SSE",
		"/message*   (any route)  guarded as legacy HTTP+SSE",
		"the plugin runs on every request",
		"Streamable HTTP: http://" + s.ProxyAddr + "/mcp\n",
		"legacy HTTP+SSE: http://" + s.ProxyAddr + "/sse\n",
	} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, banner.String())
		}
	}
	for _, path := range []string{"/mcp", "/mcp/x"} {
		resp, body := get(t, "http://"+s.ProxyAddr+path, "Accept", "text/event-stream", "Mcp-Session-Id", "s-1"+path, "Last-Event-ID", "e-104") // a session each: the first refusal tombstones it
		if resp.StatusCode != 404 || !strings.Contains(body, `"reason":"untagged_cursor"`) {
			t.Errorf("untagged resume at %s: %d %s", path, resp.StatusCode, body)
		}
	}

	names, _ := startEnvoyConfigured(t, "", "")
	streams := names.Host.Stats().Streams
	get(t, "http://"+names.ProxyAddr+"/mcp/x", "Accept", "text/event-stream", "Mcp-Session-Id", "s-1", "Last-Event-ID", "e-104")
	if got := names.Host.Stats().Streams; got != streams {
		t.Errorf("with envoy.yaml's configuration the plugin ran on /mcp/x (the passthrough route)")
	}
}

// TestTrialUnreachableUpstream: an upstream that is down is named at start,
// and every request gets Envoy's 503 at once, with a warning naming it.
func TestTrialUnreachableUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s, logs := startEnvoyConfigured(t, "", "http://"+addr)
	if !strings.Contains(logs.String(), `msg="upstream does not accept connections; requests get 503 until it does" upstream=`+addr) {
		t.Errorf("no start-up warning naming %s:\n%s", addr, logs)
	}
	for _, path := range []string{"/mcp", "/"} {
		start := time.Now()
		resp, body := get(t, "http://"+s.ProxyAddr+path)
		if time.Since(start) > 2*time.Second || resp.StatusCode != 503 ||
			!strings.HasPrefix(body, "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure") {
			t.Errorf("%s: %d %q after %v", path, resp.StatusCode, body, time.Since(start))
		}
	}
	if n := strings.Count(logs.String(), `msg="upstream unreachable" upstream=`+addr); n != 2 {
		t.Errorf("%d warnings naming %s, want 2:\n%s", n, addr, logs)
	}
}

// TestStartRefusesUpstream: an upstream that is not a base URL is refused
// before anything starts, saying what to give instead.
func TestStartRefusesUpstream(t *testing.T) {
	for upstream, want := range map[string]string{
		"localhost:3000":          "want the MCP server's base URL",
		"ftp://127.0.0.1:3000":    "want the MCP server's base URL",
		"http://127.0.0.1:3000/x": "without a path",
	} {
		_, err := Start(context.Background(), Options{Wasm: []byte{0}, Upstream: upstream})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Start(Upstream %q): %v; want %q", upstream, err, want)
		}
	}
	if _, err := Start(context.Background(), Options{}); err != ErrNoPlugin {
		t.Errorf("Start without a plugin: %v", err)
	}
}

// TestEnvoyRouter: requests get envoy.yaml's route name, filter and timeout
// by Envoy's first match; with all set, every request runs the filter.
func TestEnvoyRouter(t *testing.T) {
	bs, err := envoyconf.Parse(readFile(t, envoyFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, name string
		bypass     bool
		timeout    time.Duration
	}{
		{"/mcp", "mcp-streamable", false, 0},
		{"/messages?sessionId=x", "mcp-legacy-messages", false, 30 * time.Second},
		{"/message?sessionId=x", "mcp-legacy-message", false, 30 * time.Second},           // the TypeScript SDK's
		{"/messages/?session_id=x", "mcp-legacy-messages-slash", false, 30 * time.Second}, // the Python SDK's
		{"/mcp/", "passthrough", true, 15 * time.Second},
	} {
		req, _ := http.NewRequest("GET", "http://proxy"+tc.path, nil)
		got := envoyRouter(bs, false)(req)
		if got.RouteName != tc.name || got.Bypass != tc.bypass || got.Timeout != tc.timeout {
			t.Errorf("%s: %+v", tc.path, got)
		}
		if envoyRouter(bs, true)(req).Bypass {
			t.Errorf("%s: bypassed with every route filtered", tc.path)
		}
	}
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:3000": "127.0.0.1:3000",
		"http://mcp.example":    "mcp.example:80",
		"https://mcp.example":   "mcp.example:443",
		"http://[::1]":          "[::1]:80",
	} {
		u, _ := url.Parse(in)
		if got := hostPort(u); got != want {
			t.Errorf("hostPort(%s) = %s, want %s", in, got, want)
		}
	}
}
