package conformance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// The files the guard is made of, from this package's folder.
const (
	wasmFile  = "../../build/mcp-resume-guard.wasm"
	envoyFile = "../../envoy/envoy.yaml"
)

// streamablePath is the path envoy.yaml sends to its guarded Streamable
// HTTP route.
const streamablePath = "/mcp"

// The environment of the guarded client (TestMain): the suite's CLI starts
// the test binary with these set, and the scenario server's URL last.
const (
	envGuardClient = "CONFORMANCE_GUARD_CLIENT" // the everything-client to run behind the guard
	envGuardWasm   = "CONFORMANCE_GUARD_WASM"   // the built plugin
	envGuardEnvoy  = "CONFORMANCE_GUARD_ENVOY"  // the Envoy bootstrap that configures it
	envGuardCache  = "CONFORMANCE_GUARD_CACHE"  // a folder the guarded clients share compiled plugin code in
)

// guardLine starts the line the guarded client prints after its run: what
// the guard saw (tally.String).
const guardLine = "GUARD "

// clientDeadline bounds one guarded client run; the suite's own timeout
// (30 s) kills the shell it started, not always the client.
const clientDeadline = 60 * time.Second

// TestMain makes the test binary the guarded client when the suite's CLI
// starts it (envGuardClient set): the trial proxy in front of the scenario
// server, the Go SDK's everything-client talking to the proxy.
func TestMain(m *testing.M) {
	if client := os.Getenv(envGuardClient); client != "" {
		os.Exit(guardedClient(client, os.Getenv(envGuardWasm), os.Getenv(envGuardEnvoy), os.Getenv(envGuardCache), os.Args[1:]))
	}
	os.Exit(m.Run())
}

// guardedClient runs client against the scenario server whose URL is the
// last of args, through the trial proxy, and returns the exit code: the
// client's, or 2 when the proxy could not start. It prints the guard's
// tally (guardLine) on stdout at the end. A cacheDir keeps the plugin's
// compiled code for the next guarded client.
func guardedClient(client, wasmPath, envoyPath, cacheDir string, args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "guarded client: %v\n", err)
		return 2
	}
	if len(args) == 0 {
		return fail(errors.New("no scenario server URL: the suite passes it as the last argument"))
	}
	target, err := url.Parse(args[len(args)-1])
	if err != nil || target.Host == "" {
		return fail(fmt.Errorf("scenario server URL %q: want http://host:port[/path]", args[len(args)-1]))
	}
	path := target.Path
	if path == "" {
		path = "/"
	}
	bs, err := readBootstrap(envoyPath)
	if err != nil {
		return fail(err)
	}
	if bs, err = guardedAt(bs, path); err != nil {
		return fail(err)
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return fail(fmt.Errorf("the plugin: %w", err))
	}
	if cacheDir != "" {
		if err := wasmhost.UseCompilationCacheDir(cacheDir); err != nil {
			return fail(err)
		}
	}
	tally := newTally(slog.NewTextHandler(os.Stderr, nil))
	proxy, err := trial.Start(context.Background(), trial.Options{
		Wasm: wasm, Envoy: bs, Upstream: target.Scheme + "://" + target.Host, Logger: slog.New(tally),
	})
	if err != nil {
		return fail(fmt.Errorf("starting the trial proxy: %w", err))
	}
	proxied := *target
	proxied.Scheme, proxied.Host = "http", proxy.ProxyAddr

	ctx, cancel := context.WithTimeout(context.Background(), clientDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, client, proxied.String())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = withoutGuardEnv(os.Environ())
	runErr := cmd.Run()
	tally.moved = proxy.Close()
	fmt.Println(guardLine + tally.String())

	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "guarded client: %s did not end within %v\n", client, clientDeadline)
		return 1
	case errors.As(runErr, &exit):
		return exit.ExitCode()
	case runErr != nil:
		return fail(fmt.Errorf("running %s: %w", client, runErr))
	}
	return 0
}

func withoutGuardEnv(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		for _, k := range []string{envGuardClient, envGuardWasm, envGuardEnvoy, envGuardCache} {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
}

// readBootstrap parses the Envoy bootstrap at path.
func readBootstrap(path string) (*envoyconf.Bootstrap, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the Envoy bootstrap: %w", err)
	}
	bs, err := envoyconf.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return bs, nil
}

// guardedAt returns bs with path sent to its guarded Streamable HTTP route
// (the route of streamablePath): the suite's scenario servers serve MCP at
// "/", which envoy.yaml leaves to its unfiltered passthrough route. The
// route keeps its name, so the plugin configuration is envoy.yaml's.
func guardedAt(bs *envoyconf.Bootstrap, path string) (*envoyconf.Bootstrap, error) {
	rt, ok := bs.Match(streamablePath)
	if !ok || !rt.Filter {
		return nil, fmt.Errorf("the Envoy bootstrap sends %s to no route that runs the plugin", streamablePath)
	}
	if rt.Matches(path) {
		return bs, nil
	}
	c := *bs
	rt.Path, rt.Prefix, rt.SeparatedPrefix = path, "", ""
	c.Routes = append([]envoyconf.Route{rt}, bs.Routes...)
	return &c, nil
}

// tally counts the trial proxy's request lines by route and by the
// plugin's decision, and hands every record on to next.
type tally struct {
	next slog.Handler

	mu        *sync.Mutex
	routes    map[string]int
	decisions map[string]int
	moved     []trial.Moved // the counters that moved, once the proxy closed
}

func newTally(next slog.Handler) *tally {
	return &tally{next: next, mu: &sync.Mutex{}, routes: map[string]int{}, decisions: map[string]int{}}
}

// Enabled implements slog.Handler.
func (t *tally) Enabled(ctx context.Context, l slog.Level) bool { return t.next.Enabled(ctx, l) }

// Handle implements slog.Handler: it counts request lines.
func (t *tally) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "request" {
		var route, decision string
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "route":
				route = a.Value.String()
			case "decision":
				decision = a.Value.String()
			}
			return true
		})
		t.mu.Lock()
		t.routes[route]++
		t.decisions[decision]++
		t.mu.Unlock()
	}
	return t.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; the copy counts into the same maps.
func (t *tally) WithAttrs(as []slog.Attr) slog.Handler {
	c := *t
	c.next = t.next.WithAttrs(as)
	return &c
}

// WithGroup implements slog.Handler; the copy counts into the same maps.
func (t *tally) WithGroup(name string) slog.Handler {
	c := *t
	c.next = t.next.WithGroup(name)
	return &c
}

// routeList returns the request lines by route, as "a:3,b:1".
func (t *tally) routeList() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return countList(t.routes)
}

// String sums the tally up in one line:
//
//	routes=mcp-streamable:7 decisions=forward:6,stripped:1 counters=events_tagged_total+4,cursors_stripped_total+1
func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var moved []string
	for _, m := range t.moved {
		moved = append(moved, fmt.Sprintf("%s%+d", strings.TrimPrefix(m.Name, counters.Prefix), m.Delta))
	}
	if len(moved) == 0 {
		moved = []string{"none"}
	}
	return fmt.Sprintf("routes=%s decisions=%s counters=%s", countList(t.routes), countList(t.decisions), strings.Join(moved, ","))
}

// countList writes counts as "a:1,b:2", sorted by key.
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return strings.Join(out, ",")
}

// parseGuardLine finds the guarded client's tally in its stdout.
func parseGuardLine(stdout string) (string, bool) {
	for line := range strings.Lines(stdout) {
		if s, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), guardLine); ok {
			return s, true
		}
	}
	return "", false
}

// guardField returns the value of key in the guarded client's tally line
// ("routes=mcp-streamable:5 decisions=forward:5 ..."), or "".
func guardField(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// onlyRoute reports whether a tally's routes ("a:3,b:1") name route alone.
func onlyRoute(routes, route string) bool {
	name, _, ok := strings.Cut(routes, ":")
	return ok && name == route && !strings.Contains(routes, ",")
}

func TestGuardLine(t *testing.T) {
	line := "routes=mcp-streamable:8 decisions=forward:7,stripped:1 counters=cursors_stripped_total+1"
	if got := guardField(line, "decisions"); got != "forward:7,stripped:1" {
		t.Errorf("decisions = %q", got)
	}
	if !onlyRoute(guardField(line, "routes"), "mcp-streamable") {
		t.Error("routes=mcp-streamable:8 does not read as the guarded route alone")
	}
	for _, routes := range []string{"mcp-streamable:3,passthrough:2", "passthrough:5", "none", ""} {
		if onlyRoute(routes, "mcp-streamable") {
			t.Errorf("routes=%s reads as the guarded route alone", routes)
		}
	}
	if s, ok := parseGuardLine("client log\nGUARD " + line + "\n"); !ok || s != line {
		t.Errorf("parseGuardLine = %q, %v", s, ok)
	}
}

func TestGuardedAt(t *testing.T) {
	bs, err := readBootstrap(envoyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := guardedAt(bs, streamablePath); err != nil || got != bs {
		t.Errorf("guardedAt(%s) = %p, %v: want the bootstrap as it is", streamablePath, got, err)
	}
	guarded, _ := bs.Match(streamablePath)
	got, err := guardedAt(bs, "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", streamablePath} {
		if rt, ok := got.Match(path); !ok || rt.Name != guarded.Name || !rt.Filter {
			t.Errorf("after guardedAt(/), %s takes route %q (filter %v), want %s", path, rt.Name, rt.Filter, guarded.Name)
		}
	}
	if rt, _ := bs.Match("/"); rt.Name == guarded.Name {
		t.Errorf("guardedAt changed the bootstrap it was given: / takes %s", rt.Name)
	}
	passthrough := &envoyconf.Bootstrap{Routes: []envoyconf.Route{{Name: "all", Prefix: "/"}}}
	if _, err := guardedAt(passthrough, "/"); err == nil {
		t.Error("guardedAt accepts a bootstrap whose /mcp route does not run the plugin")
	}
}
