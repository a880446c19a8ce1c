package envoyconf

import (
	"fmt"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// Finding is a disagreement between the plugin's routes and the route
// table the proxy picks from: an entry that never matches (an error: the
// guard is off where the configuration means it on), or a route the
// filter runs on that the plugin leaves unguarded (a warning).
type Finding struct {
	// Entry is the index of the plugin's routes entry concerned, -1 when
	// the finding is about a route of the table; Key is the entry's key
	// at fault ("route_name" or "path_prefix").
	Entry int
	Key   string
	// Route is the route of the table concerned, when there is one.
	Route *Route
	// Warning reports whether the guard still guards what the entry
	// means to guard.
	Warning bool
	Msg     string
}

// CrossCheck holds the plugin configuration's routes against a route table
// (routes in Envoy's match order; filterAll: the plugin runs on every route,
// as an Istio WasmPlugin does) and returns every entry that can never match
// and every filtered route the plugin leaves alone:
//
//   - a route_name no route of the table carries, or whose route does not
//     run the filter;
//   - a path_prefix whose requests (the prefix itself, or below it) Envoy
//     sends to no route, to a route that does not run the filter, or to a
//     route of another name than the entry's route_name;
//   - (warnings) a route that runs the filter and that no entry matches,
//     and a route matching a byte prefix ("prefix: /mcp") where the
//     entry's path_prefix matches whole segments, so "/mcp-anything" runs
//     the filter unguarded: path_separated_prefix says what the entry
//     means.
func CrossCheck(cfg *config.Config, routes []Route, filterAll bool) []Finding {
	var out []Finding
	byName := map[string]*Route{}
	for i := range routes {
		if _, dup := byName[routes[i].Name]; !dup {
			byName[routes[i].Name] = &routes[i]
		}
	}
	runs := func(r *Route) bool { return filterAll || r.Filter }
	for i, e := range cfg.Routes {
		if e.RouteName != "" {
			r := byName[e.RouteName]
			switch {
			case r == nil:
				out = append(out, Finding{Entry: i, Key: "route_name",
					Msg: fmt.Sprintf("the plugin guards route %q, which no route of the table is named: it never matches", e.RouteName)})
				continue
			case !runs(r):
				out = append(out, Finding{Entry: i, Key: "route_name", Route: r,
					Msg: fmt.Sprintf("the plugin guards route %q%s, which does not run the filter: it never sees its requests", e.RouteName, r.line())})
				continue
			}
		}
		if e.PathPrefix != "" {
			if f, ok := prefixFinding(i, e, routes, runs); !ok {
				out = append(out, f)
			}
		}
	}
	for i := range routes {
		r := &routes[i]
		if !runs(r) {
			continue
		}
		probe := r.Path + r.SeparatedPrefix + r.Prefix
		if !filterAll && cfg.Match(r.Name, probe) == cursor.TransportNone && cfg.Match(r.Name, strings.TrimSuffix(probe, "/")+"/") == cursor.TransportNone {
			out = append(out, Finding{Entry: -1, Route: r, Warning: true,
				Msg: fmt.Sprintf("route %q (%s) runs the filter, but no plugin route matches it: its requests pass unguarded", r.Name, r.Pattern())})
			continue
		}
		if p := r.Prefix; p != "" && !strings.HasSuffix(p, "/") &&
			cfg.Match(r.Name, p) != cursor.TransportNone && cfg.Match(r.Name, p+"-anything") == cursor.TransportNone {
			out = append(out, Finding{Entry: -1, Route: r, Warning: true,
				Msg: fmt.Sprintf("route %q matches prefix %q, so %s-anything runs the filter too, where the plugin's path_prefix (whole path segments) leaves it unguarded: match the route with path_separated_prefix: %s", r.Name, p, p, p)})
		}
	}
	return out
}

// prefixFinding checks that requests to an entry's path_prefix (the prefix
// itself, or a path below it) reach a route that runs the filter and
// carries the entry's route_name; ok when one does.
func prefixFinding(i int, e config.Route, routes []Route, runs func(*Route) bool) (Finding, bool) {
	probes := []string{e.PathPrefix}
	if !strings.HasSuffix(e.PathPrefix, "/") {
		probes = append(probes, e.PathPrefix+"/")
	}
	for _, p := range probes {
		if r, ok := match(routes, p); ok && runs(&r) && (e.RouteName == "" || r.Name == e.RouteName) {
			return Finding{}, true
		}
	}
	f := Finding{Entry: i, Key: "path_prefix"}
	r, ok := match(routes, e.PathPrefix)
	switch {
	case !ok:
		f.Msg = fmt.Sprintf("path_prefix %q: no route of the table matches %s: it never matches", e.PathPrefix, e.PathPrefix)
	case !runs(&r):
		f.Route = &r
		f.Msg = fmt.Sprintf("path_prefix %q: Envoy sends %s to route %q%s, which does not run the filter: it never matches", e.PathPrefix, e.PathPrefix, r.Name, r.line())
	default:
		f.Route = &r
		f.Msg = fmt.Sprintf("path_prefix %q with route_name %q: Envoy sends %s to route %q%s: it never matches", e.PathPrefix, e.RouteName, e.PathPrefix, r.Name, r.line())
	}
	return f, false
}

// line says where the route is, for messages: " (line 12)", or "".
func (r *Route) line() string {
	if r.At.Line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", r.At.Line)
}
