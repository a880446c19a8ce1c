package main

import (
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
)

// version and commit identify the build. make build stamps them with
// -ldflags "-X main.version=... -X main.commit=..." (git describe, or dev
// without a tag; the commit hash); a build without the stamp says dev and
// unknown.
var (
	version = "dev"
	commit  = "unknown"
)

// startMessage is the line the plugin logs at info level once it started:
// which build runs, and the routes it guards.
func startMessage(routes []config.Route) string {
	var b strings.Builder
	b.WriteString("mcp-resume-guard " + version + " (" + commit + ") started, routes: ")
	if len(routes) == 0 {
		b.WriteString("none")
	}
	for i, r := range routes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(describeRoute(r))
	}
	return b.String()
}

// describeRoute renders a route as its log line shows it: the route name
// and/or the path prefix (followed by *), then the transport, as in
// "mcp-streamable (http)" or "/sse* (sse)".
func describeRoute(r config.Route) string {
	var match []string
	if r.RouteName != "" {
		match = append(match, r.RouteName)
	}
	if r.PathPrefix != "" {
		match = append(match, r.PathPrefix+"*")
	}
	if len(match) == 0 {
		match = append(match, "*")
	}
	return strings.Join(match, " ") + " (" + r.Transport.String() + ")"
}
