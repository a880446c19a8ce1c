package envoyconf

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

const shipped = "../../envoy/envoy.yaml"

func readShipped(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestShippedBootstrap reads envoy/envoy.yaml: the route table in Envoy's
// order with the filter on the MCP routes only, and a plugin configuration
// whose every route name is a route of that table, so that supplying the
// table's names as xds.route_name guards each MCP endpoint with its
// transport.
func TestShippedBootstrap(t *testing.T) {
	b, err := Parse([]byte(readShipped(t)))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(b.PluginConfig)
	if err != nil {
		t.Fatalf("the plugin refuses envoy.yaml's configuration: %v", err)
	}
	if b.RootID != "mcp-resume-guard" || b.ConnectTimeout != 5*time.Second || b.StreamIdleTimeout != 300*time.Second {
		t.Errorf("root_id %q, connect_timeout %v, stream_idle_timeout %v", b.RootID, b.ConnectTimeout, b.StreamIdleTimeout)
	}
	names := map[string]bool{}
	for _, r := range b.Routes {
		names[r.Name] = true
	}
	for _, r := range cfg.Routes {
		if r.RouteName != "" && !names[r.RouteName] {
			t.Errorf("the plugin configuration guards route %q, which envoy.yaml's route table does not name", r.RouteName)
		}
	}
	for _, tc := range []struct {
		path, route string
		filter      bool
		transport   cursor.Transport
		timeout     time.Duration
	}{
		{"/mcp", "mcp-streamable", true, cursor.TransportHTTP, 0},
		{"/sse", "mcp-legacy-stream", true, cursor.TransportSSE, 0},
		{"/messages", "mcp-legacy-messages", true, cursor.TransportSSE, 30 * time.Second},
		{"/mcp/x", "passthrough", false, cursor.TransportNone, DefaultRouteTimeout}, // "path" is exact
		{"/mcpx", "passthrough", false, cursor.TransportNone, DefaultRouteTimeout},
		{"/", "passthrough", false, cursor.TransportNone, DefaultRouteTimeout},
		{"/.well-known/oauth-authorization-server", "passthrough", false, cursor.TransportNone, DefaultRouteTimeout},
	} {
		r, ok := b.Match(tc.path)
		if !ok || r.Name != tc.route || r.Filter != tc.filter || r.Cluster != "mcp_upstream" || r.Timeout != tc.timeout {
			t.Errorf("Match(%q) = %+v, %v; want route %s, filter %v", tc.path, r, ok, tc.route, tc.filter)
			continue
		}
		if got := cfg.Match(r.Name, tc.path); r.Filter && got != tc.transport {
			t.Errorf("%s: the plugin guards route %s as %v, want %v", tc.path, r.Name, got, tc.transport)
		}
	}
}

// TestParseRefuses: each variant of envoy.yaml the reader cannot reproduce
// faithfully fails, naming what is wrong.
func TestParseRefuses(t *testing.T) {
	base := readShipped(t)
	edit := func(old, new string) string {
		if !strings.Contains(base, old) {
			t.Fatalf("envoy.yaml no longer contains %q; update the test", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	// at is how an error names a route of base: its name and line.
	at := func(name string) string {
		i := strings.Index(base, "- name: "+name+"\n")
		if i < 0 {
			t.Fatalf("envoy.yaml has no route %s", name)
		}
		return fmt.Sprintf("route %s (line %d)", name, strings.Count(base[:i], "\n")+1)
	}
	for name, tc := range map[string]struct{ yaml, want string }{
		"not yaml":                {"{", "not YAML"},
		"no listener":             {"static_resources: {}", "found 0 HTTP connection managers"},
		"no wasm filter":          {edit("envoy.extensions.filters.http.wasm.v3.Wasm", "envoy.extensions.filters.http.wasm.v3.Other"), "found 0 Wasm filters"},
		"bytes configuration":     {edit("google.protobuf.StringValue", "google.protobuf.BytesValue"), "want type.googleapis.com/google.protobuf.StringValue"},
		"regex match":             {edit("match: { path: /mcp }", "match: { safe_regex: { regex: /mcp } }"), at("mcp-streamable") + ": matches by regex"},
		"header match":            {edit("match: { path: /sse }", "match: { path: /sse, headers: [{name: x}] }"), at("mcp-legacy-stream") + ": matches on headers"},
		"two matchers":            {edit("match: { path: /sse }", "match: { path: /sse, prefix: /s }"), "want exactly one of match.path, match.prefix and match.path_separated_prefix"},
		"case insensitive":        {edit("match: { path: /sse }", "match: { path: /sse, case_sensitive: false }"), "case_sensitive"},
		"config missing":          {edit("config: {}", "disabled: false"), at("mcp-streamable") + ": typed_per_filter_config envoy.filters.http.wasm: a FilterConfig that enables the filter needs config"},
		"wrong per-route type":    {edit("envoy.config.route.v3.FilterConfig", "envoy.extensions.filters.http.wasm.v3.Wasm"), "the Wasm filter has no per-route configuration"},
		"bad connect_timeout":     {edit("connect_timeout: 5s", "connect_timeout: 5m"), "cluster mcp_upstream: connect_timeout"},
		"bad stream_idle_timeout": {edit("stream_idle_timeout: 300s", "stream_idle_timeout: 5m"), "stream_idle_timeout"},
		"bad route timeout":       {edit("timeout: 30s", "timeout: 30m"), at("mcp-legacy-messages") + ": route.timeout"},
		"two virtual hosts":       {edit("            - name: mcp\n", "            - name: other\n              domains: [x]\n              routes: []\n            - name: mcp\n"), "2 virtual hosts"},
		"rds":                     {edit("route_config:\n            name: mcp_routes", "rds: {route_config_name: x}\n          route_config_unused:\n            name: mcp_routes"), "no inline route_config"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestFilterEnablement: the per-route FilterConfig overrides the virtual
// host's, which overrides the HTTP filter's disabled flag.
func TestFilterEnablement(t *testing.T) {
	base := readShipped(t)
	// The filter on by default, one route turning it off.
	on := strings.Replace(base, "          - name: envoy.filters.http.wasm\n            disabled: true\n", "          - name: envoy.filters.http.wasm\n", 1)
	on = strings.Replace(on, "              - name: mcp-legacy-messages\n", "              - name: mcp-legacy-messages\n                typed_per_filter_config:\n                  envoy.filters.http.wasm:\n                    \"@type\": type.googleapis.com/envoy.config.route.v3.FilterConfig\n                    disabled: true\n", 1)
	on = strings.Replace(on, "                typed_per_filter_config:\n                  envoy.filters.http.wasm:\n                    \"@type\": type.googleapis.com/envoy.config.route.v3.FilterConfig\n                    config: {}\n              # The official SDKs' own message endpoints", "              # The official SDKs' own message endpoints", 1)
	b, err := Parse([]byte(on))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"/mcp": true, "/messages": false, "/other": true} {
		if r, _ := b.Match(path); r.Filter != want {
			t.Errorf("%s: filter %v, want %v (%+v)", path, r.Filter, want, b.Routes)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"5s": 5 * time.Second, "0.25s": 250 * time.Millisecond, "0s": 0} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"5", "5m", "-1s", "xs"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) accepted", bad)
		}
	}
}
