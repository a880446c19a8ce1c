package envoyconf

import (
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
)

// TestSeparatedPrefix: a path_separated_prefix route matches the prefix and
// what lies below it by whole segments, as the plugin's path_prefix does; a
// prefix route matches bytes, as Envoy's prefix does.
func TestSeparatedPrefix(t *testing.T) {
	base := readShipped(t)
	b, err := Parse([]byte(strings.Replace(base, "match: { path: /mcp }", "match: { path_separated_prefix: /mcp }", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/mcp": "mcp-streamable", "/mcp/x": "mcp-streamable", "/mcp-anything": "passthrough", "/mcpfoo": "passthrough"} {
		if r, _ := b.Match(path); r.Name != want {
			t.Errorf("path_separated_prefix /mcp: %s goes to %s, want %s", path, r.Name, want)
		}
	}
	b, err = Parse([]byte(strings.Replace(base, "match: { path: /mcp }", "match: { prefix: /mcp }", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := b.Match("/mcp-anything"); r.Name != "mcp-streamable" {
		t.Errorf("prefix /mcp: /mcp-anything goes to %s, want mcp-streamable (Envoy's prefix is a byte prefix)", r.Name)
	}
}

// TestCrossCheck: every way a plugin route can never match the table, and
// the filtered routes the plugin leaves alone.
func TestCrossCheck(t *testing.T) {
	base := readShipped(t)
	cases := []struct {
		name, old, new string
		plugin         string // replaces the plugin configuration when set
		filterAll      bool
		want           []string // substrings of the findings, in order; "warning: " marks a warning
	}{
		{name: "shipped"},
		{name: "route name typo", old: `{"route_name": "mcp-streamable", "transport": "http"}`, new: `{"route_name": "mcp-streamabel", "transport": "http"}`,
			want: []string{`the plugin guards route "mcp-streamabel", which no route of the table is named: it never matches`,
				`warning: route "mcp-streamable" (/mcp) runs the filter, but no plugin route matches it`}},
		{name: "route without the filter", old: "              - name: mcp-legacy-stream\n                match: { path: /sse }\n                route:\n                  cluster: mcp_upstream\n                  timeout: 0s\n                  idle_timeout: 300s\n                typed_per_filter_config:\n                  envoy.filters.http.wasm:\n                    \"@type\": type.googleapis.com/envoy.config.route.v3.FilterConfig\n                    config: {}\n",
			new:  "              - name: mcp-legacy-stream\n                match: { path: /sse }\n                route:\n                  cluster: mcp_upstream\n",
			want: []string{`the plugin guards route "mcp-legacy-stream" (line `, `which does not run the filter`}},
		{name: "paths, exact routes", plugin: `{"routes":[{"path_prefix":"/mcp","transport":"http"},{"path_prefix":"/sse","transport":"sse"},{"path_prefix":"/messages","transport":"sse"},{"path_prefix":"/message","transport":"sse"}]}`},
		{name: "path no route runs", plugin: `{"routes":[{"path_prefix":"/health","transport":"http"}]}`,
			want: []string{`path_prefix "/health": Envoy sends /health to route "passthrough" (line `, "which does not run the filter: it never matches",
				`warning: route "mcp-streamable"`}},
		{name: "path under another name", plugin: `{"routes":[{"route_name":"mcp-legacy-stream","path_prefix":"/mcp","transport":"http"}]}`,
			want: []string{`path_prefix "/mcp" with route_name "mcp-legacy-stream": Envoy sends /mcp to route "mcp-streamable"`}},
		{name: "every route runs the plugin", plugin: `{"routes":[{"path_prefix":"/health","transport":"http"}]}`, filterAll: true},
		{name: "byte prefix route", old: "match: { path: /mcp }", new: "match: { prefix: /mcp }", plugin: `{"routes":[{"path_prefix":"/mcp","transport":"http"}]}`,
			want: []string{`warning: route "mcp-streamable" matches prefix "/mcp", so /mcp-anything runs the filter too`, "path_separated_prefix: /mcp",
				"warning: route \"mcp-legacy-stream\""}},
		{name: "separated prefix route", old: "match: { path: /mcp }", new: "match: { path_separated_prefix: /mcp }", plugin: `{"routes":[{"route_name":"mcp-streamable","path_prefix":"/mcp","transport":"http"},{"route_name":"mcp-legacy-stream","transport":"sse"},{"route_name":"mcp-legacy-messages","transport":"sse"},{"route_name":"mcp-legacy-message","transport":"sse"},{"route_name":"mcp-legacy-messages-slash","transport":"sse"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := base
			if tc.old != "" {
				if !strings.Contains(text, tc.old) {
					t.Fatalf("envoy.yaml no longer contains %q", tc.old)
				}
				text = strings.Replace(text, tc.old, tc.new, 1)
			}
			b, err := Parse([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			js := b.PluginConfig
			if tc.plugin != "" {
				js = []byte(tc.plugin)
			}
			cfg, err := config.Parse(js)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range CrossCheck(&cfg, b.Routes, tc.filterAll) {
				if f.Warning {
					got = append(got, "warning: "+f.Msg)
				} else {
					got = append(got, f.Msg)
				}
			}
			all := strings.Join(got, "\n")
			at := 0
			for _, w := range tc.want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("findings lack %q (in order):\n%s", w, all)
				}
				at += i
			}
			if len(tc.want) == 0 && len(got) != 0 {
				t.Errorf("findings, want none:\n%s", all)
			}
		})
	}
}
