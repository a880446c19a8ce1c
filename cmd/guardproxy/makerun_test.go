package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/promtext"
)

// makeRunCommand returns the shell command `make run` executes, as
// `make -n run` prints it, with the given variables.
func makeRunCommand(t *testing.T, vars ...string) string {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command(mk, append([]string{"-n", "-s", "--no-print-directory", "run"}, vars...)...)
	cmd.Dir = "../.."
	// Under make test, the outer make's flags must not leak in.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	return string(out)
}

// TestMakeRunRoutes: ROUTES selects the plugin configuration; anything but
// names or paths is refused.
func TestMakeRunRoutes(t *testing.T) {
	names := makeRunCommand(t, "UPSTREAM=http://127.0.0.1:3000")
	paths := makeRunCommand(t, "ROUTES=paths")
	if !strings.Contains(names, "-envoy envoy/envoy.yaml -listen 127.0.0.1:10000 -admin 127.0.0.1:9901 -upstream 'http://127.0.0.1:3000'") {
		t.Errorf("make run:\n%s", names)
	}
	if !strings.Contains(paths, "-envoy envoy/envoy.yaml -config envoy/plugin-config/paths.json ") {
		t.Errorf("make run ROUTES=paths:\n%s", paths)
	}
	mk, _ := exec.LookPath("make")
	cmd := exec.Command(mk, "-n", "--no-print-directory", "run", "ROUTES=bogus")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ROUTES=bogus: want names") {
		t.Errorf("make run ROUTES=bogus: %v\n%s", err, out)
	}
}

// TestMakeRun starts the command `make run` runs (its line from `make -n
// run`, on free ports, with a freshly built binary) in front of the
// reference server, proxies a resume, scrapes /stats/prometheus with the
// Prometheus text parser, opens a legacy SSE stream, sends SIGINT, and
// expects the process to exit cleanly within a second, printing the
// counters that moved.
func TestMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	wasm, err := filepath.Abs("../../build/mcp-resume-guard.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wasm); err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
	}
	bin := filepath.Join(t.TempDir(), "guardproxy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(makeRunCommand(t, "GUARDPROXY="+bin, "WASM="+wasm, "LISTEN=127.0.0.1:0", "ADMIN=127.0.0.1:0"), "\n") {
		if strings.HasPrefix(l, bin+" ") {
			line = l
		}
	}
	if line == "" {
		t.Fatal("make -n run prints no guardproxy command")
	}

	cmd := exec.Command("sh", "-c", "exec "+line)
	cmd.Dir = "../.."
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr logbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var out logbuf.Buffer
	go func() {
		_, _ = io.Copy(&out, stdout)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// The banner's last line says how to stop it.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(out.String(), "  stop ") {
		if time.Now().After(deadline) {
			t.Fatalf("no banner after 90s\nstdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
		}
		select {
		case err := <-exited:
			t.Fatalf("exited before serving: %v\n%s\n%s", err, out.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	banner := out.String()
	proxy := regexp.MustCompile(`Streamable HTTP: (http://\S+)/mcp`).FindStringSubmatch(banner)
	admin := regexp.MustCompile(`curl -s (http://\S+)/stats/prometheus`).FindStringSubmatch(banner)
	if proxy == nil || admin == nil {
		t.Fatalf("the banner names no proxy or admin address:\n%s", banner)
	}

	req, _ := http.NewRequest("GET", proxy[1]+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s-1")
	req.Header.Set("Last-Event-ID", "e-104")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("an untagged resume through the proxy: %s, want 404", resp.Status)
	}

	resp, err = http.Get(admin[1] + "/stats/prometheus")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fams, err := promtext.Parse(string(body))
	if err != nil {
		t.Fatalf("/stats/prometheus: %v\n%s", err, body)
	}
	for _, name := range counters.Names() {
		if _, ok := fams[counters.Prefix+name]; !ok {
			t.Errorf("/stats/prometheus lacks %s%s", counters.Prefix, name)
		}
	}
	if v, _ := fams[counters.Prefix+counters.ReinitUntagged].Value(); v != 1 {
		t.Errorf("reinit_untagged_total = %v, want 1", v)
	}

	// A legacy stream stays open across the signal.
	stream, err := http.Get(proxy[1] + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if line, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil || line == "" {
		t.Fatalf("legacy stream: %q %v", line, err)
	}

	// Ctrl-C.
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if took := time.Since(sent); took > time.Second {
			t.Errorf("exited %v after SIGINT; want under a second", took)
		}
		if err != nil {
			t.Errorf("exit after SIGINT: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10s after SIGINT\n%s", stderr.String())
	}
	rest := strings.TrimPrefix(out.String(), banner)
	sc := bufio.NewScanner(strings.NewReader(rest))
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.Join(strings.Fields(sc.Text()), " "))
	}
	want := []string{"mcp-resume-guard: counters that moved", counters.Prefix + counters.ReinitUntagged + " 1"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("after SIGINT it printed:\n%s\nwant:\n%s", rest, strings.Join(want, "\n"))
	}
	if !strings.Contains(stderr.String(), `msg="forced re-initialization" reason=untagged_cursor`) {
		t.Errorf("no re-initialization log line:\n%s", stderr.String())
	}
}

// TestMakeRunArgs: ARGS reaches guardproxy's command line as flags.
func TestMakeRunArgs(t *testing.T) {
	line := makeRunCommand(t, "ARGS=-cut /mcp=4 -log-level debug")
	if !strings.Contains(line, "-upstream '' -cut /mcp=4 -log-level debug\n") {
		t.Errorf("make run ARGS='-cut /mcp=4 -log-level debug':\n%s", line)
	}
	if line := makeRunCommand(t); !strings.Contains(line, "-upstream ''\n") {
		t.Errorf("make run without ARGS:\n%s", line)
	}
}

// TestMakeHelp: make help lists every phony target of the Makefile with the
// one-line doc of its "## target:" comment.
func TestMakeHelp(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command(mk, "--no-print-directory", "help")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindSubmatch(makefile)
	if phony == nil {
		t.Fatal("the Makefile declares no .PHONY targets")
	}
	for _, target := range strings.Fields(string(phony[1])) {
		if target == "all" {
			continue // the default goal, an alias of build
		}
		doc := regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(target) + `: (.+)$`).FindSubmatch(makefile)
		if doc == nil {
			t.Errorf("target %s has no \"## %s: ...\" line", target, target)
			continue
		}
		want := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(target) + ` +` + regexp.QuoteMeta(string(doc[1])) + `$`)
		if !want.Match(out) {
			t.Errorf("make help does not list %s with its doc %q:\n%s", target, doc[1], out)
		}
	}
}
