package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
)

// serverSuites are the suites of server scenarios run (--suite): every
// scenario the suite has for servers, pending ones included.
var serverSuites = []string{"active", "pending"}

// clientScenarios are the client scenarios run through the guard: the
// Streamable HTTP ones of the Go SDK's everything-client (its others are
// authorization flows and header checks that do not touch the guard's
// work), sse-retry among them: a stream closed after its priming event,
// resumed by GET with Last-Event-ID (SEP-1699).
var clientScenarios = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// resumeScenario is the client scenario whose resume must reach the
// upstream with the cursor the guard tagged, stripped.
const resumeScenario = "sse-retry"

// TestConformanceSuite runs the official MCP conformance suite against the
// Go SDK's conformance peers, directly and through the trial proxy, and
// prints one CONFORMANCE line per scenario: each server check must have
// the same status through the guard as without it, and each client
// scenario must pass through the guard. make conformance runs it (make
// test does); it needs the built plugin and the suite that npm ci installs.
func TestConformanceSuite(t *testing.T) {
	s := findSuite(t)
	wasm, err := os.ReadFile(wasmFile)
	if err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make conformance does)", err)
	}
	bs, err := readBootstrap(envoyFile)
	if err != nil {
		t.Fatal(err)
	}
	p := buildPeers(t)
	fmt.Printf("CONFORMANCE suite @modelcontextprotocol/conformance %s, node %s, Go SDK %s everything-server (stateful) and everything-client\n",
		s.version, s.nodeVer, p.version)

	t.Run("server", func(t *testing.T) { testServer(t, s, p, wasm, bs) })
	route, _ := bs.Match(streamablePath)
	t.Run("client", func(t *testing.T) { testClient(t, s, p, route.Name) })
}

// testServer runs every server suite against the everything-server, then
// against another through the trial proxy, and compares them check by
// check.
func testServer(t *testing.T, s suite, p peers, wasm []byte, bs *envoyconf.Bootstrap) {
	base, _ := startServer(t, p.server)
	direct := runServerSuites(t, s, base+streamablePath)

	upstream, upstreamLogs := startServer(t, p.server)
	proxyLogs := &logbuf.Buffer{}
	tally := newTally(slog.NewTextHandler(proxyLogs, nil))
	proxy, err := trial.Start(context.Background(), trial.Options{
		Wasm: wasm, WasmPath: wasmFile, Envoy: bs, EnvoyPath: envoyFile, Upstream: upstream, Logger: slog.New(tally),
	})
	if err != nil {
		t.Fatalf("starting the trial proxy: %v", err)
	}
	t.Cleanup(func() { proxy.Close() })
	guarded := runServerSuites(t, s, "http://"+proxy.ProxyAddr+streamablePath)
	tally.moved = proxy.Close()

	failed := false
	for _, suiteName := range serverSuites {
		d, g := direct[suiteName], guarded[suiteName]
		names := slices.Sorted(maps.Keys(d))
		for name := range g {
			if _, ok := d[name]; !ok {
				names = append(names, name)
			}
		}
		for _, name := range names {
			dr, dok := d[name]
			gr, gok := g[name]
			fmt.Printf("CONFORMANCE server %s %s direct=%s guarded=%s checks=%s%s\n",
				suiteName, name, verdictOf(dr, dok), verdictOf(gr, gok), gr.counted(), warnings(gr))
			if !dok || !gok {
				t.Errorf("server scenario %s (%s suite) has results directly: %v, through the guard: %v", name, suiteName, dok, gok)
				failed = true
				continue
			}
			if diff := diffChecks(dr, gr); diff != nil {
				t.Errorf("server scenario %s (%s suite) differs through the guard:\n  %s", name, suiteName, strings.Join(diff, "\n  "))
				failed = true
			}
		}
	}
	fmt.Printf("CONFORMANCE server guard %s\n", tally)
	route, _ := bs.Match(streamablePath)
	if routes := tally.routeList(); !onlyRoute(routes, route.Name) {
		t.Errorf("not every request of the guarded run took the guarded route %s (%s): the comparison would not be the guard's", route.Name, routes)
		failed = true
	}
	if failed {
		t.Logf("the trial proxy's log:\n%s\nthe guarded everything-server's log:\n%s", proxyLogs, upstreamLogs)
	}
}

// runServerSuites runs every server suite against url, by suite and
// scenario.
func runServerSuites(t *testing.T, s suite, url string) map[string]map[string]result {
	t.Helper()
	out := map[string]map[string]result{}
	for _, suiteName := range serverSuites {
		dir := t.TempDir()
		res, err := s.run(nil, "server", "--url", url, "--suite", suiteName, "-o", dir)
		if err != nil {
			// The scenarios that ended have results; the others show as missing.
			t.Errorf("%v\n%s", err, res.output)
		}
		results, err := readResults(dir)
		if err == nil && len(results) == 0 {
			err = fmt.Errorf("the suite wrote no scenario's results")
		}
		if err != nil {
			t.Fatalf("conformance server --suite %s against %s: %v\n%s", suiteName, url, err, res.output)
		}
		out[suiteName] = results
	}
	return out
}

// testClient runs each client scenario with the everything-client,
// directly and through the trial proxy (the test binary as the guarded
// client, see TestMain), where every request must take the guarded route.
func testClient(t *testing.T, s suite, p peers, guardedRoute string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary, to run as the guarded client: %v", err)
	}
	wasmPath, err := filepath.Abs(wasmFile)
	if err != nil {
		t.Fatal(err)
	}
	envoyPath, err := filepath.Abs(envoyFile)
	if err != nil {
		t.Fatal(err)
	}
	guardEnv := []string{envGuardClient + "=" + p.client, envGuardWasm + "=" + wasmPath, envGuardEnvoy + "=" + envoyPath,
		envGuardCache + "=" + t.TempDir()}
	for _, sc := range clientScenarios {
		direct, dout := runClient(t, s, sc, shellWord(p.client), nil)
		guarded, gout := runClient(t, s, sc, shellWord(self), guardEnv)
		tallyLine, ok := parseGuardLine(guarded.Stdout)
		if !ok {
			tallyLine = "none (the guarded client printed no GUARD line)"
		}
		fmt.Printf("CONFORMANCE client %s direct=%s guarded=%s checks=%s guard: %s\n",
			sc, direct.verdict(), guarded.verdict(), guarded.counted(), tallyLine)
		switch {
		case !ok:
			t.Errorf("client scenario %s: the guarded client did not run to its end:\n%s", sc, gout)
		case guarded.verdict() != verdictPass:
			t.Errorf("client scenario %s fails through the guard (directly: %s):\n%s", sc, direct.verdict(), gout)
		case !onlyRoute(guardField(tallyLine, "routes"), guardedRoute):
			t.Errorf("client scenario %s: not every request took the guarded route %s (%s)", sc, guardedRoute, tallyLine)
		case sc == resumeScenario && !strings.Contains(guardField(tallyLine, "decisions"), trial.DecisionStripped+":"):
			t.Errorf("client scenario %s passes, but no resume reached the scenario server with the guard's cursor stripped (%s):\n%s", sc, tallyLine, gout)
		case direct.verdict() != verdictPass:
			t.Logf("client scenario %s passes through the guard but not directly:\n%s", sc, dout)
		case diffChecks(direct.graded(), guarded.graded()) != nil:
			t.Errorf("client scenario %s passes both ways, but its checks differ through the guard:\n  %s\n%s",
				sc, strings.Join(diffChecks(direct.graded(), guarded.graded()), "\n  "), gout)
		}
	}
}

// runClient runs one client scenario with command as the client, and
// returns its result (the suite's exit code folded into the verdict: a
// client that exits non-zero fails) and the suite's output.
func runClient(t *testing.T, s suite, scenario, command string, env []string) (result, string) {
	t.Helper()
	dir := t.TempDir()
	res, err := s.run(env, "client", "--command", command, "--scenario", scenario, "-o", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.output)
	}
	results, err := readResults(dir)
	r, ok := results[scenario]
	if err == nil && !ok {
		err = fmt.Errorf("the suite wrote no results for it")
	}
	if err != nil {
		t.Fatalf("conformance client --scenario %s: %v\n%s", scenario, err, res.output)
	}
	if res.exit != 0 && r.verdict() != verdictFail {
		r.Checks = append(r.Checks, check{ID: "conformance-exit-code", Status: statusFailure,
			ErrorMessage: fmt.Sprintf("the suite exited %d (the client failed or timed out)", res.exit)})
	}
	return r, res.output
}

// verdictOf is the verdict of a result that may be missing.
func verdictOf(r result, ok bool) string {
	if !ok {
		return "missing"
	}
	return r.verdict()
}

// warnings names a result's warning checks for its CONFORMANCE line.
func warnings(r result) string {
	ids := r.withStatus(statusWarning)
	if len(ids) == 0 {
		return ""
	}
	return " warnings=" + strings.Join(ids, ",")
}
