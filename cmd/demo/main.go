// Command demo plays the seed incident twice and tells what happened to the
// tool-call result: once straight against a reference MCP server that has
// the seed's bug, once through the embedded proxy running the built
// mcp-resume-guard plugin. It starts everything on 127.0.0.1 and stops it
// before it exits.
//
//	make demo
//	go run ./cmd/demo -wasm build/mcp-resume-guard.wasm [-config envoy/plugin-config/envoy.json] [-v]
//
// A third act plays the same-transport drain race (a Streamable HTTP call
// cut after its result was read, before it was processed, then resumed with
// the result's ID) through the proxy under the plugin's default
// unacked_cursor policy: the result is replayed and the tool runs once.
//
// The exit code is 0 when the demo showed the silent loss without the filter,
// no silent loss with it, and the drain race's result replayed with one tool
// run; 1 when it did not, 2 when it could not run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/e2e"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// resumeWait is how long the demo's client waits for the result on the
// resumed stream: its request timeout.
const resumeWait = 2 * time.Second

// defaultConfig is used when -config is empty: the routes of envoy.yaml,
// every other key at its default.
const defaultConfig = `{"routes": [
  {"route_name": "mcp-streamable", "transport": "http"},
  {"route_name": "mcp-legacy-stream", "transport": "sse"},
  {"route_name": "mcp-legacy-messages", "transport": "sse"}
]}`

func main() {
	ok, err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) (bool, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var (
		wasmPath   = fs.String("wasm", "build/mcp-resume-guard.wasm", "the built plugin (`file`); make build writes it")
		configPath = fs.String("config", "envoy/plugin-config/envoy.json", "plugin configuration `file` (JSON); empty: the routes of envoy.yaml, defaults otherwise")
		vms        = fs.Int("vms", 2, "plugin VMs in the proxy, like Envoy worker threads")
		verbose    = fs.Bool("v", false, "log every proxied request and the plugin's log lines to stderr")
	)
	if err := fs.Parse(args); err != nil {
		return false, err
	}

	wasm, err := os.ReadFile(*wasmPath)
	if err != nil {
		return false, fmt.Errorf("%w (run make build first)", err)
	}
	config := []byte(defaultConfig)
	if *configPath != "" {
		if config, err = os.ReadFile(*configPath); err != nil {
			return false, err
		}
	}
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	p := &printer{w: out}
	p.title("mcp-resume-guard demo: the seed incident, without and with the filter")
	p.para(`A client calls the tool search_index over the legacy HTTP+SSE transport. The
connection is cut right after the server sent the result, before the client
read it (a proxy idle timeout). The client reconnects on the newer Streamable
HTTP endpoint of the same server and asks to resume after the last event it
saw. The server shares one event-ID counter between both transports and
replays only events strictly after the cursor.`)

	// Without the filter: a server of its own, so IDs start at e-100.
	bare, err := startUpstream(dualstack.Options{FirstEventID: 100})
	if err != nil {
		return false, err
	}
	p.section("1. Without the filter: client → MCP server (" + bare.url + ")")
	before, err := seedclient.RunSeed(ctx, seedclient.Config{BaseURL: bare.url, ResumeWait: resumeWait, Retry: true})
	bare.close()
	if err != nil {
		return false, fmt.Errorf("seed without the filter: %w", err)
	}
	p.para(before.Describe())
	lost := before.SilentLoss()
	if lost {
		p.verdict(fmt.Sprintf("The tool result was LOST without any error: the client hung for %s, then ran the tool again (search_index ran %d times).",
			resumeWait, before.Runs()))
	} else {
		p.verdict("Unexpected: the loss did not happen against the bare server.")
	}

	// With the filter.
	st, err := e2e.Start(ctx, e2e.Options{
		Wasm: wasm, PluginConfig: config, VMs: *vms,
		Upstream: dualstack.Options{FirstEventID: 100}, Logger: logger,
	})
	if err != nil {
		return false, err
	}
	defer st.Close()
	p.section(fmt.Sprintf("2. With the filter: client → proxy (%s, %s in %d VMs) → MCP server", st.ProxyURL, *wasmPath, *vms))
	after, err := seedclient.RunSeed(ctx, seedclient.Config{
		BaseURL: st.ProxyURL, ControlURL: st.UpstreamURL, ResumeWait: resumeWait, Retry: true,
		HTTPClient: &http.Client{Transport: settle{st}},
	})
	if err != nil {
		return false, fmt.Errorf("seed with the filter: %w", err)
	}
	if m := explainMinted(after.StreamEventIDs); m != "" {
		p.para(m)
	}
	p.para(after.Describe())
	guarded := !after.SilentLoss() && after.ForcedReinit() && after.RetryResultArrived
	if guarded {
		p.verdict(fmt.Sprintf("Nothing was lost silently: the resume was refused in %s instead of a %s hang, so the client knew at once to start a new session and got its result there.",
			after.ResumeDuration.Round(10*time.Microsecond), resumeWait))
		p.para(`   search_index ran twice here too, and that is still the win: its first
   result was cut off in transit, which no proxy can undo, so the client must
   ask again. Without the filter it learns that only from its own timeout,
   after a hang and with no error; with it, an immediate, explicit
   re-initialization (HTTP 404, reason cross_transport) makes it retry at
   once on a new session. No resume is accepted from a cursor that skips a
   result.`)
	} else {
		p.verdict("Unexpected: the filter did not turn the resume into a forced re-initialization.")
	}
	p.line("What the filter logged:")
	for _, l := range st.GuardLog() {
		p.line("  " + l)
	}
	p.line("Its counters (Envoy shows these names in /stats/prometheus, and in /stats after a wasmcustom. prefix):")
	cs := st.Counters()
	names := make([]string, 0, len(cs))
	for n := range cs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if cs[n] != 0 {
			p.line(fmt.Sprintf("  %s %d", n, cs[n]))
		}
	}

	race, replayed, err := actDrainRace(ctx, p, wasm, config, *vms, logger)
	if err != nil {
		return false, err
	}

	p.section("Summary")
	p.line(fmt.Sprintf("  without the filter: result %s, silent losses %d, search_index ran %d times", outcome(before), b2i(before.SilentLoss()), before.Runs()))
	p.line(fmt.Sprintf("  with the filter:    result %s, silent losses %d, search_index ran %d times (retried at once after a 404, not after a %s hang)", outcome(after), b2i(after.SilentLoss()), after.Runs(), resumeWait))
	p.line(fmt.Sprintf("  drain race, filter: result %s, silent losses %d, search_index ran %d time(s)", outcome(race), b2i(race.SilentLoss()), race.Runs()))
	if lost && guarded && replayed {
		p.line("The demo showed the loss without the filter, its absence with it, and the drain race's result replayed.")
		return true, p.err
	}
	p.line("The demo did NOT show what it should; see above.")
	return false, p.err
}

// actDrainRace is the third act: the same-transport drain race through a
// proxy of its own, configured as config without unacked_cursor (the
// plugin's default). It reports whether the result was replayed on the
// resume with a single tool run.
func actDrainRace(ctx context.Context, p *printer, wasm, config []byte, vms int, logger *slog.Logger) (*seedclient.Report, bool, error) {
	var cfg map[string]any
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, false, fmt.Errorf("plugin configuration: %w", err)
	}
	delete(cfg, "unacked_cursor")
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, false, err
	}
	st, err := e2e.Start(ctx, e2e.Options{
		Wasm: wasm, PluginConfig: config, VMs: vms,
		Upstream: dualstack.Options{FirstEventID: 200}, Logger: logger,
	})
	if err != nil {
		return nil, false, err
	}
	defer st.Close()
	p.section("3. The same-transport drain race, default unacked_cursor policy: client → proxy → MCP server")
	p.para(`The client calls search_index on Streamable HTTP; the connection is cut after
the result arrived, before the client processed it; it resumes on the same
endpoint with the result's ID, which the server would replay strictly after.`)
	rep, err := seedclient.RunDrainRace(ctx, seedclient.Config{
		BaseURL: st.ProxyURL, ControlURL: st.UpstreamURL, ResumeWait: resumeWait, Retry: true,
		HTTPClient: &http.Client{Transport: settle{st}},
	})
	if err != nil {
		return nil, false, fmt.Errorf("drain race with the filter: %w", err)
	}
	p.para(rep.Describe())
	replayed := rep.ResumeStatus == http.StatusOK && rep.ResultArrived && !rep.Retried && rep.Runs() == 1
	if replayed {
		p.verdict("The filter rewound the cursor to the event before the result, so the server replayed the result: the client got it on the resume, and the tool ran once.")
	} else {
		p.verdict("Unexpected: the drain race's result was not replayed on the resume.")
	}
	for _, l := range st.GuardLog() {
		p.line("  " + l)
	}
	return rep, replayed, nil
}

// explainMinted explains the first minted event ID of ids that names a
// previous event, for a reader who sees one for the first time; "" when
// ids hold none.
func explainMinted(ids []string) string {
	for _, id := range ids {
		c, ok := cursor.ParseCursor(id)
		if !ok || !c.Minted || !c.HasPrev() {
			continue
		}
		kind := id[len(c.Transport.String()+":~1")] // the letter after the format version
		return fmt.Sprintf(`Through the filter every event ID carries the transport that served it (%s:).
A response's ID is minted to say more: %s says kind %c (%s),
upstream ID %s and the stream's previous event %s, so any replica can tell
a drain race from a clean resume.`, c.Transport, id, kind, c.Kind, c.ID, c.Prev())
	}
	return ""
}

// outcome names what happened to the result in plain words.
func outcome(r *seedclient.Report) string {
	switch {
	case r.ResultArrived && r.ResultEventID != "" && r.Scenario == "drain_race":
		return "replayed on the resume"
	case r.SilentLoss():
		return "silently lost (client waited for nothing, then retried)"
	case r.ForcedReinit():
		return "refused at once, retried on a new session"
	case r.ResultArrived:
		return "delivered"
	}
	return "not delivered (HTTP " + fmt.Sprint(r.ResumeStatus) + ")"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// settle lets the proxy finish the cut stream (the plugin records how it
// ended) before the client resumes, as a real client's reconnect delay does.
type settle struct{ st *e2e.Stack }

func (s settle) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Last-Event-ID") != "" {
		s.st.Settle(5 * time.Second)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// upstream is a reference server on a loopback port.
type upstream struct {
	url   string
	srv   *dualstack.Server
	httpd *http.Server
}

func startUpstream(opts dualstack.Options) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{url: "http://" + ln.Addr().String(), srv: dualstack.New(opts)}
	u.httpd = &http.Server{Handler: u.srv, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := u.httpd.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "demo: upstream: %v\n", err)
		}
	}()
	return u, nil
}

func (u *upstream) close() {
	u.srv.Close()
	_ = u.httpd.Close()
}

// printer writes the demo's text and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(s string) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, s)
	}
}

func (p *printer) title(s string) {
	p.line(s)
	p.line(strings.Repeat("=", len([]rune(s))))
	p.line("")
}

func (p *printer) section(s string) {
	p.line("")
	p.line(s)
	p.line(strings.Repeat("-", len([]rune(s))))
}

func (p *printer) para(s string) { p.line(s) }

func (p *printer) verdict(s string) { p.line("=> " + s) }
