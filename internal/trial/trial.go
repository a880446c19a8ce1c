// Package trial runs the trial proxy behind `make run` and cmd/guardproxy:
// the built plugin in the embedded proxy-wasm host (internal/wasmhost) in
// front of an MCP server, configured from an Envoy bootstrap
// (envoy/envoy.yaml: the plugin configuration, the route names the plugin
// reads as xds.route_name, the routes that run the filter, the upstream's
// connect timeout), with an admin listener that answers Envoy's /stats,
// /stats/prometheus and /ready. Without an upstream it starts the reference
// dual-transport server (internal/dualstack) in process.
//
// It is for trying the guard on real traffic, not for production: that is
// Envoy or Istio.
package trial

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Options configure [Start].
type Options struct {
	// Wasm is the plugin module; WasmPath names it in the banner.
	Wasm     []byte
	WasmPath string
	// Envoy, when set, supplies the plugin configuration, the route table
	// and the connect timeout; EnvoyPath names it in the banner.
	Envoy     *envoyconf.Bootstrap
	EnvoyPath string
	// PluginConfig, when set, replaces the plugin configuration (e.g.
	// envoy/plugin-config/paths.json); PluginConfigPath names it.
	PluginConfig     []byte
	PluginConfigPath string
	// Routes map path prefixes to route names when Envoy is nil.
	Routes []wasmhost.Route
	// FilterAllRoutes runs the plugin on every request, whatever the route
	// table says, as an Istio WasmPlugin runs on all traffic of its port:
	// the mode for a plugin configuration that matches by path
	// (envoy/plugin-config/paths.json).
	FilterAllRoutes bool
	// Upstream is the MCP server's base URL ("http://127.0.0.1:3000"); empty
	// starts the reference server on a free loopback port.
	Upstream string
	// Listen and Admin are the proxy's and the admin interface's listen
	// addresses; an empty Listen is a free loopback port, an empty Admin
	// turns the admin interface off.
	Listen, Admin string
	// VMs is the number of plugin VMs, like Envoy worker threads (default 2).
	VMs int
	// FullWASI offers the complete wasip1 of Envoy ≥ 1.39.
	FullWASI bool
	// LogLevel is the plugin's log level (default info).
	LogLevel string
	// RootID, when set, replaces the Envoy bootstrap's root_id
	// (the plugin_root_id property).
	RootID string
	// StreamIdleTimeout cuts streams idle this long, like Envoy's
	// stream_idle_timeout (0: Envoy's, or never without Envoy).
	StreamIdleTimeout time.Duration
	// Cuts reset response streams after a number of SSE events, to provoke
	// resumes; the banner lists them.
	Cuts []Cut
	// Fault, when set, picks each request's fault instead of Cuts
	// (tools/internal/soak cuts each stream where its client asks).
	Fault func(*http.Request) wasmhost.Fault
	// Logger receives the proxy's request lines, the plugin's log lines and
	// one warning per forced re-initialization. Nil discards.
	Logger *slog.Logger
}

// Server is a running trial proxy.
type Server struct {
	// ProxyAddr and AdminAddr are the bound addresses (AdminAddr is empty
	// without an admin interface).
	ProxyAddr, AdminAddr string
	// UpstreamURL is the MCP server the proxy forwards to.
	UpstreamURL string
	// Reference is the in-process reference server, nil with Options.Upstream.
	Reference *dualstack.Server
	// Host runs the plugin.
	Host *wasmhost.Host

	opts     Options
	proxy    wasmhost.ProxyOptions
	plugin   config.Config
	log      *slog.Logger
	servers  []*http.Server
	refSrv   *http.Server
	inflight sync.WaitGroup
	start    map[string]int64
	once     sync.Once

	notes           notes    // what the upstream saw of each request in flight
	warnedEndpoints sync.Map // legacy endpoint paths warned about
}

// Start loads the plugin, starts the reference server if no upstream is
// given, and serves the proxy and the admin interface. Stop it with
// [Server.Close].
func Start(ctx context.Context, opts Options) (*Server, error) {
	if len(opts.Wasm) == 0 {
		return nil, ErrNoPlugin
	}
	if opts.VMs <= 0 {
		opts.VMs = 2
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.WasmPath == "" {
		opts.WasmPath = "the plugin"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pluginJSON := opts.PluginConfig
	if pluginJSON == nil && opts.Envoy != nil {
		pluginJSON = opts.Envoy.PluginConfig
	}
	s := &Server{opts: opts, log: log}
	if pluginJSON != nil {
		// The plugin parses it again and refuses to start on an error;
		// parsing here too gives the banner the guarded routes.
		cfg, err := config.Parse(pluginJSON)
		if err != nil {
			return nil, fmt.Errorf("plugin configuration %s: %w", s.pluginSource(), err)
		}
		s.plugin = cfg
	}

	popts := wasmhost.ProxyOptions{Routes: opts.Routes, StreamIdleTimeout: opts.StreamIdleTimeout,
		Logger: slog.New(dropRequestLines{log.Handler()}),
		OnDone: func(rec wasmhost.StreamRecord) { s.logRequest(rec); s.logReinit(rec) }}
	switch {
	case opts.Fault != nil:
		popts.Fault = opts.Fault
	case len(opts.Cuts) > 0:
		popts.Fault = func(r *http.Request) wasmhost.Fault { return cutFault(opts.Cuts, r) }
	}
	rootID := opts.RootID
	if e := opts.Envoy; e != nil {
		popts.Router = envoyRouter(e, opts.FilterAllRoutes)
		popts.ConnectTimeout = e.ConnectTimeout
		if popts.StreamIdleTimeout == 0 {
			popts.StreamIdleTimeout = e.StreamIdleTimeout
		}
		if rootID == "" {
			rootID = e.RootID
		}
	}

	if opts.Upstream == "" {
		if err := s.startReference(); err != nil {
			return nil, err
		}
	} else {
		s.UpstreamURL = strings.TrimRight(opts.Upstream, "/")
	}
	up, err := url.Parse(s.UpstreamURL)
	switch {
	case err != nil || up.Host == "" || (up.Scheme != "http" && up.Scheme != "https"):
		s.stopReference()
		return nil, fmt.Errorf("upstream %q: want the MCP server's base URL, http://host:port", opts.Upstream)
	case up.Path != "" || up.RawQuery != "":
		return nil, fmt.Errorf("upstream %q: give the server's base URL without a path; requests keep their own path (/mcp, /sse, ...), as behind Envoy", opts.Upstream)
	}

	s.Host, err = wasmhost.New(ctx, wasmhost.Options{
		Wasm: opts.Wasm, PluginConfig: pluginJSON, VMs: opts.VMs, FullWASI: opts.FullWASI,
		Logger: log, LogLevel: opts.LogLevel, RootID: rootID,
	})
	if err != nil {
		s.stopReference()
		return nil, fmt.Errorf("loading the plugin: %w", err)
	}
	s.start = counterValues(s.Host)

	popts.Transport = newUpstreamTransport(s, popts.ConnectTimeout)
	s.proxy = popts
	proxy := wasmhost.NewProxy(s.Host, up, popts)
	handlers := []http.Handler{s.track(proxy)}
	addrs := []string{opts.Listen}
	if opts.Admin != "" {
		handlers = append(handlers, wasmhost.AdminHandler(s.Host))
		addrs = append(addrs, opts.Admin)
	}
	for i, h := range handlers {
		ln, err := net.Listen("tcp", addrs[i])
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("listening on %s: %w (another trial proxy? make run takes LISTEN= and ADMIN=)", addrs[i], err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
		s.servers = append(s.servers, srv)
		if i == 0 {
			s.ProxyAddr = ln.Addr().String()
		} else {
			s.AdminAddr = ln.Addr().String()
		}
		go func() { _ = srv.Serve(ln) }()
	}
	s.checkUpstream(hostPort(up), popts.ConnectTimeout)
	return s, nil
}

// hostPort returns the address to dial for u, with the scheme's default
// port when u names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func (s *Server) startReference() error {
	s.Reference = dualstack.New(dualstack.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("reference server: %w", err)
	}
	s.UpstreamURL = "http://" + ln.Addr().String()
	s.refSrv = &http.Server{Handler: s.Reference, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = s.refSrv.Serve(ln) }()
	return nil
}

func (s *Server) stopReference() {
	if s.Reference != nil {
		s.Reference.Close() // ends its open streams
		_ = s.refSrv.Close()
	}
}

// checkUpstream warns at once when the upstream does not accept
// connections, so the first 503 is no surprise.
func (s *Server) checkUpstream(addr string, timeout time.Duration) {
	if timeout <= 0 || timeout > time.Second {
		timeout = time.Second
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		s.log.Warn("upstream does not accept connections; requests get 503 until it does", "upstream", addr, "err", err)
		return
	}
	_ = c.Close()
}

// envoyRouter picks routes the way Envoy does: the first route of the table
// whose matcher accepts the path. A path no route matches is forwarded
// without the filter (Envoy would answer 404 itself); so is a route that
// does not run the filter, unless all is set.
func envoyRouter(b *envoyconf.Bootstrap, all bool) func(*http.Request) wasmhost.Route {
	return func(r *http.Request) wasmhost.Route {
		rt, ok := b.Match(r.URL.Path)
		return wasmhost.Route{RouteName: rt.Name, Bypass: !all && !(ok && rt.Filter), Timeout: rt.Timeout}
	}
}

// track counts the proxy's requests in flight, so Close can let them end
// in the plugin before the VMs go.
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		r, _ = s.notes.begin(r)
		defer s.notes.end(r)
		next.ServeHTTP(w, r)
	})
}

// logReinit writes one warning per forced re-initialization (the plugin's
// 404 with a JSON-RPC error), beside the plugin's own warnings for drain
// races and cross-transport cursors.
func (s *Server) logReinit(rec wasmhost.StreamRecord) {
	reason := reinitReason(rec)
	if reason == "" {
		return
	}
	s.log.Warn("forced re-initialization", "reason", reason, "method", rec.Method, "path", rec.Path,
		"session", sessionTag(requestSession(rec.Header, rec.Path)), "last_event_id", rec.Header.Get("Last-Event-ID"))
}

// Close stops serving, ends the requests in flight (their streams end in
// the plugin as client disconnects), stops the reference server and the
// plugin's VMs, and returns the counters that moved since Start. It returns
// within about a second, however many streams are open.
func (s *Server) Close() []Moved {
	var moved []Moved
	s.once.Do(func() {
		for _, srv := range s.servers {
			_ = srv.Close() // listeners and connections: handlers see their contexts end
		}
		s.stopReference()
		done := make(chan struct{})
		go func() { s.inflight.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
			s.log.Warn("requests still in flight at shutdown; their streams are not finished in the plugin")
		}
		if s.Host != nil {
			now := counterValues(s.Host)
			for name, v := range now {
				if d := v - s.start[name]; d != 0 {
					moved = append(moved, Moved{Name: name, Delta: d})
				}
			}
			sort.Slice(moved, func(i, j int) bool { return moved[i].Name < moved[j].Name })
			_ = s.Host.Close(context.Background())
		}
	})
	return moved
}

// Moved is a counter that changed while the proxy ran.
type Moved struct {
	Name  string // as /stats/prometheus shows it
	Delta int64
}

// counterValues returns the plugin's counters by their /stats/prometheus
// names.
func counterValues(h *wasmhost.Host) map[string]int64 {
	out := map[string]int64{}
	for _, st := range h.AdminStats() {
		if st.Custom && st.Kind == "counter" {
			if name, ok := wasmhost.PrometheusName(st.Name, true); ok {
				out[name] = st.Value
			}
		}
	}
	return out
}

func (s *Server) pluginSource() string {
	switch {
	case s.opts.PluginConfigPath != "":
		return s.opts.PluginConfigPath
	case s.opts.PluginConfig != nil:
		return "(given)"
	case s.opts.EnvoyPath != "":
		return s.opts.EnvoyPath + " (the Wasm filter's configuration)"
	case s.opts.Envoy != nil:
		return "the Envoy bootstrap's Wasm filter"
	}
	return "none"
}

// ErrNoPlugin is returned by Start when Options.Wasm is empty.
var ErrNoPlugin = errors.New("trial: no plugin (Options.Wasm is empty): run make build")
