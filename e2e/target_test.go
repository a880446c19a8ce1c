package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// Environment variables that point the suite at an external deployment
// (docker-compose.yaml) instead of the in-process stack. Values are URLs
// ("http://envoy:10000") or host:port.
const (
	envProxy    = "GUARD_PROXY_ADDR"
	envUpstream = "GUARD_UPSTREAM_ADDR"
	envAdmin    = "GUARD_ADMIN_ADDR"
	envWasm     = "GUARD_WASM" // the plugin, default ../build/mcp-resume-guard.wasm
)

// seedFirstEventID is where the in-process upstream's allocator starts, so
// the seed's IDs are exactly e-100 … e-105.
const seedFirstEventID = 100

// target is where one test runs: the in-process stack, or an external proxy
// and upstream.
type target struct {
	proxyURL    string
	upstreamURL string
	adminURL    string // external only
	stack       *Stack // nil when external
	http        *http.Client
}

// targetOptions are the in-process knobs of a test.
type targetOptions struct {
	// config is the plugin configuration file under envoy/plugin-config/
	// (default envoy.json, which is what envoy/envoy.yaml embeds).
	config string
	// streamIdleTimeout is the proxy's stream idle timeout (0: none).
	streamIdleTimeout time.Duration
	// sessionIDBytes is the length of the session IDs the upstream mints
	// (dualstack.Options.SessionIDBytes; 0: its default).
	sessionIDBytes int
}

// external reports whether the suite runs against an external proxy.
func external() bool { return os.Getenv(envProxy) != "" }

// skipExternal skips the test under an external proxy, saying why.
func skipExternal(t *testing.T, why string) {
	t.Helper()
	if external() {
		t.Skipf("needs the embedded host under %s: %s", envProxy, why)
	}
}

// newTarget returns the environment of one test: the external deployment
// when GUARD_PROXY_ADDR is set, else a fresh upstream (event IDs from e-100)
// and embedded proxy with 2 VMs, stopped when the test ends.
func newTarget(t *testing.T, opts targetOptions) *target {
	t.Helper()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(client.CloseIdleConnections)
	if external() {
		tg := &target{
			proxyURL:    baseURL(os.Getenv(envProxy)),
			upstreamURL: baseURL(os.Getenv(envUpstream)),
			adminURL:    baseURL(os.Getenv(envAdmin)),
			http:        client,
		}
		if tg.upstreamURL == "" || tg.adminURL == "" {
			t.Fatalf("%s is set: %s and %s must be set too", envProxy, envUpstream, envAdmin)
		}
		if opts.config != "" && opts.config != "envoy.json" {
			t.Fatalf("test bug: plugin configuration %s asked for under %s", opts.config, envProxy)
		}
		return tg
	}
	if opts.config == "" {
		opts.config = "envoy.json"
	}
	config, err := os.ReadFile(filepath.Join("..", "envoy", "plugin-config", opts.config))
	if err != nil {
		t.Fatalf("plugin configuration: %v", err)
	}
	s, err := Start(context.Background(), Options{
		Wasm:              pluginWasm(t),
		PluginConfig:      config,
		VMs:               2,
		StreamIdleTimeout: opts.streamIdleTimeout,
		Upstream:          dualstack.Options{FirstEventID: seedFirstEventID, SessionIDBytes: opts.sessionIDBytes},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &target{proxyURL: s.ProxyURL, upstreamURL: s.UpstreamURL, stack: s, http: client}
}

// baseURL turns "host:port" or a URL into a URL without trailing slash.
func baseURL(v string) string {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v != "" && !strings.Contains(v, "://") {
		v = "http://" + v
	}
	return v
}

var wasmOnce struct {
	sync.Once
	bytes []byte
	err   error
}

// pluginWasm returns the plugin built by `make build`.
func pluginWasm(t *testing.T) []byte {
	t.Helper()
	wasmOnce.Do(func() {
		path := os.Getenv(envWasm)
		if path == "" {
			path = filepath.Join("..", "build", "mcp-resume-guard.wasm")
		}
		wasmOnce.bytes, wasmOnce.err = os.ReadFile(path)
		if wasmOnce.err != nil {
			wasmOnce.err = fmt.Errorf("the plugin is not built (%w): run make build first (make test and make e2e do)", wasmOnce.err)
		}
	})
	if wasmOnce.err != nil {
		t.Fatal(wasmOnce.err)
	}
	return wasmOnce.bytes
}

// settle waits until the proxy recorded how every cut stream ended before a
// client resumes. In process: until the proxy has no request in flight.
// External: a pause, since Envoy gives no such signal to a client.
func (tg *target) settle(t *testing.T) {
	t.Helper()
	if tg.stack == nil {
		time.Sleep(300 * time.Millisecond)
		return
	}
	if !tg.stack.Settle(10 * time.Second) {
		t.Logf("the proxy still has %d request(s) in flight after 10s", tg.stack.InFlight())
	}
}

// settleTransport calls settle before every request that carries a
// Last-Event-ID, i.e. before every resume. A real client reconnects after a
// delay too; this makes that delay long enough on a loaded machine.
type settleTransport struct {
	t  *testing.T
	tg *target
}

func (st settleTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Last-Event-ID") != "" {
		st.tg.settle(st.t)
	}
	return st.tg.http.Transport.RoundTrip(r)
}

// resumingClient is an HTTP client that settles before resumes.
func (tg *target) resumingClient(t *testing.T) *http.Client {
	return &http.Client{Transport: settleTransport{t: t, tg: tg}}
}

// counters returns every mcp_resume_guard_* counter: the embedded host's
// metrics, or Envoy's admin /stats?filter=mcp_resume_guard.
func (tg *target) counters(t *testing.T) counters {
	t.Helper()
	if tg.stack != nil {
		return tg.stack.Counters()
	}
	resp, err := tg.http.Get(tg.adminURL + "/stats?filter=" + strings.TrimSuffix(MetricPrefix, "_"))
	if err != nil {
		t.Fatalf("reading the proxy's counters: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reading the proxy's counters: GET /stats: %s", resp.Status)
	}
	out := counters{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		// Envoy: "name: value"; the embedded admin: "name value".
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			name, value, ok = strings.Cut(sc.Text(), " ")
		}
		name = strings.TrimPrefix(strings.TrimSpace(name), "wasmcustom.")
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if ok && err == nil && strings.HasPrefix(name, MetricPrefix) {
			out[name] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the proxy's counters: %v", err)
	}
	return out
}

// counters maps full counter names to values.
type counters map[string]int64

// get returns the counter by short or full name.
func (c counters) get(name string) int64 { return c[fullMetricName(name)] }

// since returns c minus before, counter by counter.
func (c counters) since(before counters) counters {
	out := counters{}
	for k, v := range c {
		out[k] = v - before[k]
	}
	return out
}

// String lists the non-zero counters without the common prefix.
func (c counters) String() string {
	var parts []string
	for k, v := range c {
		if v != 0 {
			parts = append(parts, strings.TrimPrefix(k, MetricPrefix)+"="+strconv.FormatInt(v, 10))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// reinits is the sum of the reinit_*_total counters.
func (c counters) reinits() int64 {
	var n int64
	for k, v := range c {
		if strings.HasPrefix(k, MetricPrefix+"reinit_") {
			n += v
		}
	}
	return n
}

// guardLog returns the plugin's warnings (in process only).
func (tg *target) guardLog() []string {
	if tg.stack == nil {
		return nil
	}
	return tg.stack.GuardLog()
}

// hasLogLine reports whether a plugin warning starts with prefix.
func (tg *target) hasLogLine(prefix string) bool {
	for _, l := range tg.guardLog() {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// upstreamStats reads the upstream's GET /debug/stats.
func (tg *target) upstreamStats(t *testing.T) dualstack.Stats {
	t.Helper()
	var st dualstack.Stats
	tg.getJSON(t, "/debug/stats", &st)
	return st
}

func (tg *target) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := tg.http.Get(tg.upstreamURL + path)
	if err != nil {
		t.Fatalf("upstream %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upstream %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("upstream %s: %v", path, err)
	}
}

// summary prints the scenario's one summary line.
func summary(name string, silentLosses, toolRuns, reinit int) {
	fmt.Printf("scenario=%s silent_losses=%d tool_runs=%d reinit=%d\n", name, silentLosses, toolRuns, reinit)
}

// testContext returns a context bounded well above any scenario's length.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
