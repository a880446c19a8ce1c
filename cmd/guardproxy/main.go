// Command guardproxy runs a proxy-wasm plugin (by default the built
// mcp-resume-guard filter) in front of an upstream, in the embedded
// wazero host of internal/wasmhost: an HTTP/1.1 reverse proxy that streams
// responses chunk by chunk through the plugin, for trying the filter and for
// end-to-end tests without Envoy. Production runs in Envoy ≥ 1.33.
//
//	go run ./cmd/guardproxy -wasm build/mcp-resume-guard.wasm -config envoy/plugin-config.json \
//	    -listen 127.0.0.1:10000 -upstream http://127.0.0.1:8080 -vms 2 \
//	    -admin 127.0.0.1:9901 -routes /mcp=mcp-streamable,/sse=mcp-legacy,/messages=mcp-legacy \
//	    -stream-idle-timeout 5s [-cut /sse=5] [-full-wasi]
//
// With -admin it serves GET /stats (every metric as "name value" lines,
// sorted) and GET /ready. It logs one line per request.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stderr, nil)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "guardproxy: %v\n", err)
		os.Exit(1)
	}
}

// run serves until ctx is done. ready, if set, is called with the proxy's
// and the admin's listen addresses once both accept connections.
func run(ctx context.Context, args []string, logOut io.Writer, ready func(proxy, admin string)) error {
	fs := flag.NewFlagSet("guardproxy", flag.ContinueOnError)
	fs.SetOutput(logOut)
	var (
		wasmPath   = fs.String("wasm", "build/mcp-resume-guard.wasm", "plugin `file` (.wasm)")
		configPath = fs.String("config", "", "plugin configuration `file` (JSON), handed to proxy_on_configure")
		listen     = fs.String("listen", "127.0.0.1:10000", "listen `address`")
		upstream   = fs.String("upstream", "http://127.0.0.1:8080", "upstream `URL`")
		vms        = fs.Int("vms", 2, "number of VMs (like Envoy worker threads); requests go round-robin")
		admin      = fs.String("admin", "", "admin listen `address` (GET /stats, GET /ready); empty: off")
		routes     = fs.String("routes", "", "path prefixes to route names read as xds.route_name: `/p=name,...`")
		idle       = fs.Duration("stream-idle-timeout", 0, "cut streams idle for this long (Envoy stream_idle_timeout); 0: off")
		fullWASI   = fs.Bool("full-wasi", false, "offer wazero's complete WASI (Envoy ≥ 1.39) instead of Envoy 1.33–1.38's 18 functions")
		logLevel   = fs.String("log-level", "info", "plugin log level: trace, debug, info, warn, error, critical")
		rootID     = fs.String("root-id", "", "plugin root id (plugin_root_id property)")
		cut        = fs.String("cut", "", "fault injection: reset every response stream under a path prefix after N SSE events, like an idle timeout: `/p=N,...`")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}

	level := slog.LevelInfo
	switch strings.ToLower(*logLevel) {
	case "trace", "debug":
		level = slog.LevelDebug - 4
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))

	wasm, err := os.ReadFile(*wasmPath)
	if err != nil {
		return err
	}
	var config []byte
	if *configPath != "" {
		if config, err = os.ReadFile(*configPath); err != nil {
			return err
		}
	}
	up, err := url.Parse(*upstream)
	if err != nil || up.Host == "" || (up.Scheme != "http" && up.Scheme != "https") {
		return fmt.Errorf("-upstream %q: want http://host:port", *upstream)
	}
	rts, err := wasmhost.ParseRoutes(*routes)
	if err != nil {
		return fmt.Errorf("-routes: %w", err)
	}

	start := time.Now()
	host, err := wasmhost.New(ctx, wasmhost.Options{
		Wasm: wasm, PluginConfig: config, VMs: *vms, FullWASI: *fullWASI,
		Logger: logger, LogLevel: *logLevel, RootID: *rootID,
	})
	if err != nil {
		return err
	}
	defer host.Close(context.Background())
	logger.Info("plugin loaded", "wasm", *wasmPath, "vms", *vms, "full_wasi", *fullWASI,
		"wasi_imports", strings.Join(host.WASIImports(), ","), "took", time.Since(start).Round(time.Millisecond))

	popts := wasmhost.ProxyOptions{Routes: rts, StreamIdleTimeout: *idle, Logger: logger}
	if *cut != "" {
		cuts, err := parseCuts(*cut)
		if err != nil {
			return fmt.Errorf("-cut: %w", err)
		}
		popts.Fault = func(r *http.Request) wasmhost.Fault {
			best := -1
			var f wasmhost.Fault
			for prefix, n := range cuts {
				if strings.HasPrefix(r.URL.Path, prefix) && len(prefix) > best {
					best, f = len(prefix), wasmhost.Fault{CutAfterEvents: n}
				}
			}
			return f
		}
	}
	proxy := wasmhost.NewProxy(host, up, popts)
	servers := []*http.Server{{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}}
	addrs := []string{*listen}
	if *admin != "" {
		servers = append(servers, &http.Server{Handler: wasmhost.AdminHandler(host), ReadHeaderTimeout: 30 * time.Second})
		addrs = append(addrs, *admin)
	}
	errc := make(chan error, len(servers))
	bound := make([]string, 2)
	for i, srv := range servers {
		ln, err := net.Listen("tcp", addrs[i])
		if err != nil {
			for _, started := range servers[:i] {
				_ = started.Close()
			}
			return err
		}
		bound[i] = ln.Addr().String()
		logger.Info("listening", "addr", bound[i], "role", []string{"proxy", "admin"}[i], "upstream", up.String())
		go func() { errc <- srv.Serve(ln) }()
	}
	if ready != nil {
		ready(bound[0], bound[1])
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdown)
	}
	return nil
}

// parseCuts parses "/prefix=N,/prefix=N".
func parseCuts(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		prefix, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		v, err := strconv.Atoi(n)
		if !ok || !strings.HasPrefix(prefix, "/") || err != nil || v <= 0 {
			return nil, fmt.Errorf("%q: want /prefix=N with N > 0", part)
		}
		out[prefix] = v
	}
	return out, nil
}
