// Command guardproxy runs a proxy-wasm plugin (by default the built
// mcp-resume-guard filter) in front of an MCP server, in the embedded wazero
// host of internal/wasmhost: an HTTP/1.1 reverse proxy that streams
// responses chunk by chunk through the plugin, for trying the filter on real
// traffic and for end-to-end tests without Envoy (package internal/trial).
// Production runs in Envoy ≥ 1.33 or Istio.
//
// `make run` starts it the way Envoy would run the plugin with
// envoy/envoy.yaml:
//
//	guardproxy -wasm build/mcp-resume-guard.wasm -envoy envoy/envoy.yaml \
//	    -listen 127.0.0.1:10000 -admin 127.0.0.1:9901 [-upstream http://127.0.0.1:3000] \
//	    [-config envoy/plugin-config/paths.json]
//
// -envoy reads the plugin configuration, the route table (the names the
// plugin reads as xds.route_name, and the routes that run the filter) and
// the upstream's connect timeout from an Envoy bootstrap; -config replaces
// its plugin configuration, and -filter-all-routes runs the plugin on every
// request (make run ROUTES=paths passes both, as Istio would run
// envoy/plugin-config/paths.json). Without -upstream it starts the reference MCP
// server in process. Without -envoy, -config and -routes
// (/prefix=route_name,...) configure it by hand.
//
// It prints what it guards on stdout, logs one line per request and a
// warning per forced re-initialization on stderr, serves Envoy's GET /stats,
// GET /stats/prometheus and GET /ready on -admin, and on SIGINT or SIGTERM
// stops within a second and prints the counters that moved.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errUsage) {
		fmt.Fprintf(os.Stderr, "guardproxy: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// errUsage is a command line that does not parse (the flag package has
// printed why, and the usage).
var errUsage = errors.New("usage")

// exitCode is the command's exit status for run's error: 0 for success and
// for -h (the help was asked for), 2 for a bad command line, 1 otherwise.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	return 1
}

// run serves until ctx is done. ready, if set, is called with the running
// server once it accepts connections.
func run(ctx context.Context, args []string, out, logOut io.Writer, ready func(*trial.Server)) error {
	fs := flag.NewFlagSet("guardproxy", flag.ContinueOnError)
	fs.SetOutput(logOut)
	var (
		wasmPath   = fs.String("wasm", "build/mcp-resume-guard.wasm", "plugin `file` (.wasm)")
		envoyPath  = fs.String("envoy", "", "Envoy bootstrap `file` (envoy/envoy.yaml) to take the plugin configuration, route table and connect timeout from")
		configPath = fs.String("config", "", "plugin configuration `file` (JSON); replaces the one of -envoy")
		listen     = fs.String("listen", "127.0.0.1:10000", "listen `address`")
		upstream   = fs.String("upstream", "", "the MCP server's `URL`; empty: start the reference server in process")
		vms        = fs.Int("vms", 2, "number of VMs (like Envoy worker threads); requests go round-robin")
		admin      = fs.String("admin", "", "admin listen `address` (GET /stats, /stats/prometheus, /ready); empty: off")
		filterAll  = fs.Bool("filter-all-routes", false, "run the plugin on every request, whatever -envoy's routes say (as an Istio WasmPlugin on its port; for a configuration that matches by path)")
		routes     = fs.String("routes", "", "without -envoy: path prefixes to route names read as xds.route_name: `/p=name,...`")
		idle       = fs.Duration("stream-idle-timeout", 0, "cut streams idle for this long (Envoy stream_idle_timeout); 0: -envoy's, or off")
		fullWASI   = fs.Bool("full-wasi", false, "offer wazero's complete WASI (Envoy ≥ 1.39) instead of Envoy 1.33–1.38's 18 functions")
		logLevel   = fs.String("log-level", "info", "plugin log level: trace, debug, info, warn, error, critical")
		rootID     = fs.String("root-id", "", "plugin root id (plugin_root_id property); default: the -envoy filter's root_id")
		cut        = fs.String("cut", "", "fault injection: reset every response stream under a path prefix after N SSE events (/p=N) or right after its first JSON-RPC result event (/p=result), like an idle timeout: `/p=N|result,...`")
	)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: guardproxy [flags]\n\n"+
			"Runs the plugin in an embedded proxy-wasm host in front of an MCP server (make run).\n"+
			"To provoke a resume yourself: -cut /mcp=4 resets every /mcp response stream after 4 SSE events,\n"+
			"as an idle timeout would (the request line says end=cut); the client resumes with Last-Event-ID.\n"+
			"-cut /mcp=result resets each /mcp response stream right after its first result event: a drain race\n"+
			"for a client that kept that event's ID (try-it.md). -log-level debug also shows the plugin's debug lines.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *envoyPath != "" && *routes != "" {
		return errors.New("-routes and -envoy exclude each other: -envoy's route table names the routes")
	}

	level := slog.LevelInfo
	switch strings.ToLower(*logLevel) {
	case "trace", "debug":
		level = slog.LevelDebug - 4
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))

	opts := trial.Options{
		WasmPath: *wasmPath, Upstream: *upstream, Listen: *listen, Admin: *admin, VMs: *vms,
		FilterAllRoutes: *filterAll, FullWASI: *fullWASI, LogLevel: *logLevel, RootID: *rootID, StreamIdleTimeout: *idle, Logger: logger,
	}
	var err error
	if opts.Wasm, err = os.ReadFile(*wasmPath); err != nil {
		return fmt.Errorf("%w (make build writes it)", err)
	}
	if *envoyPath != "" {
		b, err := os.ReadFile(*envoyPath)
		if err != nil {
			return err
		}
		if opts.Envoy, err = envoyconf.Parse(b); err != nil {
			return fmt.Errorf("%s: %w", *envoyPath, err)
		}
		opts.EnvoyPath = *envoyPath
	}
	if *configPath != "" {
		if opts.PluginConfig, err = os.ReadFile(*configPath); err != nil {
			return err
		}
		opts.PluginConfigPath = *configPath
	}
	if opts.Routes, err = wasmhost.ParseRoutes(*routes); err != nil {
		return fmt.Errorf("-routes: %w", err)
	}
	if *cut != "" {
		if opts.Cuts, err = trial.ParseCuts(*cut); err != nil {
			return fmt.Errorf("-cut: %w", err)
		}
	}

	start := time.Now()
	srv, err := trial.Start(ctx, opts)
	if err != nil {
		return err
	}
	logger.Info("plugin loaded", "wasm", *wasmPath, "vms", *vms, "full_wasi", *fullWASI,
		"wasi_imports", strings.Join(srv.Host.WASIImports(), ","), "took", time.Since(start).Round(time.Millisecond))
	logger.Info("listening", "proxy", srv.ProxyAddr, "admin", srv.AdminAddr, "upstream", srv.UpstreamURL)
	srv.WriteBanner(out)
	if ready != nil {
		ready(srv)
	}
	<-ctx.Done()
	trial.WriteMoved(out, srv.Close())
	return nil
}
