package trial

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
)

// guardedRoute is one row of the banner's route table.
type guardedRoute struct {
	pattern, name string
	filter        bool
	transport     cursor.Transport
}

// routes lists the route table with what the plugin does on each route;
// with FilterAllRoutes, the plugin's own routes.
func (s *Server) routes() []guardedRoute {
	var out []guardedRoute
	if s.opts.FilterAllRoutes {
		for _, r := range s.plugin.Routes {
			name := r.RouteName
			if name == "" {
				name = "(any route)"
			}
			out = append(out, guardedRoute{r.PathPrefix + "*", name, true, r.Transport})
		}
		return out
	}
	if e := s.opts.Envoy; e != nil {
		for _, r := range e.Routes {
			path := r.Path
			if path == "" {
				path = r.Prefix
			}
			out = append(out, guardedRoute{r.Pattern(), r.Name, r.Filter, s.plugin.Match(r.Name, path)})
		}
		return out
	}
	for _, r := range s.opts.Routes {
		out = append(out, guardedRoute{r.PathPrefix + "*", r.RouteName, !r.Bypass, s.plugin.Match(r.RouteName, r.PathPrefix)})
	}
	return out
}

// endpoint returns the URL of the first guarded route of transport t.
func (s *Server) endpoint(t cursor.Transport) string {
	for _, r := range s.routes() {
		if r.filter && r.transport == t {
			return "http://" + s.ProxyAddr + strings.TrimSuffix(r.pattern, "*")
		}
	}
	return ""
}

// routeFindings returns what envoyconf.CrossCheck finds between the
// plugin's routes and the proxy's route table (Envoy's, or the -routes
// prefixes, longest first as the proxy picks them): the entries that never
// match, the filtered routes the plugin leaves alone.
func (s *Server) routeFindings() []envoyconf.Finding {
	if e := s.opts.Envoy; e != nil {
		return envoyconf.CrossCheck(&s.plugin, e.Routes, s.opts.FilterAllRoutes)
	}
	table := make([]envoyconf.Route, 0, len(s.opts.Routes))
	for _, r := range s.opts.Routes {
		table = append(table, envoyconf.Route{Name: r.RouteName, Prefix: r.PathPrefix, Filter: !r.Bypass})
	}
	sort.SliceStable(table, func(i, j int) bool { return len(table[i].Prefix) > len(table[j].Prefix) })
	return envoyconf.CrossCheck(&s.plugin, table, s.opts.FilterAllRoutes)
}

// WriteBanner prints what the proxy guards, where to point clients, how to
// read the counters and how to stop it.
func (s *Server) WriteBanner(w io.Writer) {
	fmt.Fprintln(w, "mcp-resume-guard trial proxy: the plugin in an embedded proxy-wasm host (production runs it in Envoy ≥ 1.33 or Istio)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cols ...string) { fmt.Fprintln(tw, "  "+strings.Join(cols, "\t")) }
	if s.Reference != nil {
		row("upstream", s.UpstreamURL+": the reference MCP server, started for you (no UPSTREAM given)")
	} else {
		row("upstream", s.UpstreamURL)
	}
	row("plugin", fmt.Sprintf("%s in %d VMs, configuration from %s", s.opts.WasmPath, s.opts.VMs, s.pluginSource()))
	for i, r := range s.routes() {
		what := "not filtered"
		switch {
		case r.filter && r.transport == cursor.TransportHTTP:
			what = "guarded as Streamable HTTP (event IDs tagged http:)"
		case r.filter && r.transport == cursor.TransportSSE:
			what = "guarded as legacy HTTP+SSE (event IDs tagged sse:)"
		case r.filter:
			what = "filtered, but no plugin route matches: passes untouched"
		}
		label := ""
		if i == 0 {
			label = "routes"
		}
		row(label, r.pattern, r.name, what)
	}
	if s.opts.FilterAllRoutes {
		row("", "the plugin runs on every request, as an Istio WasmPlugin does; other paths pass untouched")
	}
	for _, f := range s.routeFindings() {
		row("warning", f.Msg)
	}
	idle := "never"
	if d := s.proxy.StreamIdleTimeout; d > 0 {
		idle = d.String()
	}
	connect := s.proxy.ConnectTimeout
	if connect <= 0 {
		connect = 5 * time.Second // wasmhost's default, Envoy's
	}
	row("timeouts", fmt.Sprintf("stream idle %s (cuts a silent stream, as Envoy does), upstream connect %s", idle, connect))
	for i, c := range s.opts.Cuts {
		label := ""
		if i == 0 {
			label = "cuts"
		}
		what := fmt.Sprintf("after %d SSE events", c.Events)
		if c.AfterResult {
			what = "right after its first JSON-RPC result event"
		}
		row(label, fmt.Sprintf("-cut %s: every response stream under %s is reset %s, as an idle timeout would (request line end=cut)", c, c.Prefix, what))
	}
	if u := s.endpoint(cursor.TransportHTTP); u != "" {
		row("clients", "Streamable HTTP: "+u)
	}
	if u := s.endpoint(cursor.TransportSSE); u != "" {
		row("", "legacy HTTP+SSE: "+u)
	}
	if s.AdminAddr != "" {
		row("counters", "curl -s http://"+s.AdminAddr+"/stats/prometheus | grep mcp_resume_guard_")
		row("", "curl -s 'http://"+s.AdminAddr+"/stats?filter=mcp_resume_guard'")
	}
	row("logs", "one line per request; a warning per forced re-initialization, drain race and cross-transport cursor")
	row("stop", "Ctrl-C (prints the counters that moved)")
	_ = tw.Flush()
}

// WriteMoved prints the counters that moved, as Close returned them.
func WriteMoved(w io.Writer, moved []Moved) {
	if len(moved) == 0 {
		fmt.Fprintln(w, "mcp-resume-guard: no counter moved")
		return
	}
	fmt.Fprintln(w, "mcp-resume-guard: counters that moved")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range moved {
		fmt.Fprintf(tw, "  %s\t%d\n", m.Name, m.Delta)
	}
	_ = tw.Flush()
}
