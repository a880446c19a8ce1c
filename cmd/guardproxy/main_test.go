package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
)

// TestGuardproxyServes runs the command with the wasmhost probe plugin in
// front of a small SSE upstream: streaming, routes, the per-request log
// line, /stats, /ready and -cut.
func TestGuardproxyServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "probe.wasm")
	build := exec.Command("go", "run", "./internal/tools/wasmbuild", "-work", filepath.Join(dir, "work"), "-o", wasm, "./internal/wasmhost/testdata/probe")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the probe plugin: %v\n%s", err, out)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "id: e-%d\ndata: x\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()

	ctx, cancel := context.WithCancel(context.Background())
	logs := &logbuf.Buffer{}
	addrs := make(chan [2]string, 1)
	errc := make(chan error, 1)
	var banner logbuf.Buffer
	go func() {
		errc <- run(ctx, []string{"-wasm", wasm, "-listen", "127.0.0.1:0", "-admin", "127.0.0.1:0",
			"-upstream", up.URL, "-vms", "2", "-routes", "/mcp=mcp-streamable,/sse=mcp-legacy", "-cut", "/sse=2"},
			&banner, logs, func(s *trial.Server) { addrs <- [2]string{s.ProxyAddr, s.AdminAddr} })
	}()
	var proxy, admin string
	select {
	case a := <-addrs:
		proxy, admin = a[0], a[1]
	case err := <-errc:
		t.Fatalf("run: %v\n%s", err, logs)
	case <-time.After(60 * time.Second):
		t.Fatal("guardproxy did not start")
	}

	resp, err := http.Get("http://" + proxy + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Count(string(body), "id: e-") != 3 || resp.Header.Get("X-Probe-Route") != "mcp-streamable" || resp.Header.Get("X-Guard-Vm") != "0" {
		t.Errorf("/mcp: %q %v", body, resp.Header)
	}
	resp, err = http.Get("http://" + proxy + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || strings.Count(string(body), "id: e-") != 2 || resp.Header.Get("X-Guard-Vm") != "1" {
		t.Errorf("/sse with -cut /sse=2: %q, err %v, %v", body, err, resp.Header)
	}

	resp, err = http.Get("http://" + admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	stats, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"wasmcustom.probe_requests: 2\n", "wasmhost.vm.0.requests: 1\n", "wasmhost.vm.1.requests: 1\n"} {
		if !strings.Contains(string(stats), want) {
			t.Errorf("/stats lacks %q:\n%s", want, stats)
		}
	}
	lines := strings.Split(strings.TrimSpace(string(stats)), "\n")
	if !sort.StringsAreSorted(lines) {
		t.Errorf("/stats is not sorted:\n%s", stats)
	}
	resp, err = http.Get("http://" + admin + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	ready, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(ready) != "LIVE\n" {
		t.Errorf("/ready: %d %q", resp.StatusCode, ready)
	}

	cancel()
	if err := <-errc; err != nil {
		t.Errorf("run: %v", err)
	}
	out := logs.String()
	for _, want := range []string{
		`msg=request method=GET path=/mcp status=200 vm=0`,
		`msg=request method=GET path=/sse status=200 vm=1`,
		`route=mcp-legacy end=cut`, // the -cut fault, not a real idle timeout
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "end=stream_idle_timeout") {
		t.Errorf("a cut stream logged as an idle timeout:\n%s", out)
	}
	if want := "cuts      -cut /sse=2: every response stream under /sse is reset after 2 SSE events"; !strings.Contains(banner.String(), want) {
		t.Errorf("banner lacks %q:\n%s", want, banner.String())
	}
}

// TestHelp: -h prints the usage, with -cut explained, and exits 0; a bad
// flag exits 2.
func TestHelp(t *testing.T) {
	var out strings.Builder
	err := run(context.Background(), []string{"-h"}, io.Discard, &out, nil)
	if code := exitCode(err); code != 0 {
		t.Errorf("-h: exit %d (%v), want 0", code, err)
	}
	for _, want := range []string{"Usage: guardproxy", "-cut /mcp=4", "-log-level"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h output lacks %q:\n%s", want, out.String())
		}
	}
	err = run(context.Background(), []string{"-no-such-flag"}, io.Discard, io.Discard, nil)
	if code := exitCode(err); code != 2 {
		t.Errorf("-no-such-flag: exit %d (%v), want 2", code, err)
	}
	if code := exitCode(fmt.Errorf("x")); code != 1 {
		t.Errorf("a failure exits %d, want 1", code)
	}
}
