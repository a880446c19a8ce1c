package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const repo = "../.."

// validate runs the command on a file and returns its exit code and
// output.
func validate(t *testing.T, file string) (int, string) {
	t.Helper()
	var out, errs strings.Builder
	code := run([]string{file}, &out, &errs)
	return code, out.String() + errs.String()
}

// TestAcceptsShipped: every shipped configuration passes, wherever it sits.
func TestAcceptsShipped(t *testing.T) {
	shipped := map[string]string{
		"envoy/envoy.yaml":                   "Envoy bootstrap static_resources.listeners[0]",
		"envoy/istio/wasmplugin.yaml":        "WasmPlugin mcp/mcp-resume-guard spec.pluginConfig: ok",
		"envoy/gateway/extensionpolicy.yaml": "EnvoyExtensionPolicy mcp/mcp-resume-guard spec.wasm[0] (mcp-resume-guard).config: ok",
	}
	configs, err := filepath.Glob(filepath.Join(repo, "envoy/plugin-config/*.json"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no shipped plugin configurations found (%v)", err)
	}
	for _, c := range configs {
		rel, _ := filepath.Rel(repo, c)
		shipped[rel] = "plugin configuration: ok"
	}
	for file, where := range shipped {
		code, out := validate(t, filepath.Join(repo, file))
		if code != 0 || !strings.Contains(out, where) || !strings.HasSuffix(strings.TrimSpace(out), ": ok") {
			t.Errorf("%s: exit %d, want 0 and %q:\n%s", file, code, where, out)
		}
	}
}

// TestRejectsBroken: a broken variant of each shipped file fails, with
// the key named and its allowed values.
func TestRejectsBroken(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, old, new string
		want           []string
	}{
		{"envoy/envoy.yaml", `"unacked_cursor": "rewind"`, `"unacked_cursor": "sometimes"`,
			[]string{`key "unacked_cursor": "sometimes" is not one of reinit, rewind, observe`}},
		{"envoy/envoy.yaml", `"max_line_bytes": 8192`, `"max_line_bytes": 8192, "max_line": 1`,
			[]string{`unknown key "max_line"; allowed keys: routes, `}},
		{"envoy/istio/wasmplugin.yaml", "    - path_prefix: /sse\n      transport: sse", "    - path_prefix: /sse\n      transport: grpc",
			[]string{`routes[1].transport must be "sse" or "http", got "grpc"`}},
		{"envoy/gateway/extensionpolicy.yaml", "      routes:\n", "      unknown_cursor: sometimes\n      routes:\n",
			[]string{`key "unknown_cursor": "sometimes" is not one of forward, reinit`}},
		// Every error, not only the first.
		{"envoy/plugin-config/paths.json", `{"path_prefix": "/mcp", "transport": "http"}`, `{"path_prefix": "mcp", "transport": "http"}], "max_sessions": 0, "routes2": [{}`,
			[]string{`routes[0].path_prefix must start with "/"`, `key "max_sessions": 0 is not an integer from 1 to 1000000`, `unknown key "routes2"`, "3 error(s)"}},
	} {
		b, err := os.ReadFile(filepath.Join(repo, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.old) {
			t.Fatalf("%s does not contain %q", tc.file, tc.old)
		}
		name := filepath.Join(dir, filepath.Base(tc.file))
		if err := os.WriteFile(name, []byte(strings.Replace(string(b), tc.old, tc.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := validate(t, name)
		if code != 1 {
			t.Errorf("%s with %q: exit %d, want 1:\n%s", tc.file, tc.new, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s with %q: output lacks %q:\n%s", tc.file, tc.new, w, out)
			}
		}
	}
}

func TestExtract(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no Wasm filter", "static_resources: {listeners: []}", "without a Wasm HTTP filter"},
		{"another plugin only", `static_resources:
  a: {"@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm, config: {name: other}}
  b: {"@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm, config: {name: other2}}`, "none named mcp-resume-guard"},
		{"configuration as bytes", `static_resources:
  a: {"@type": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm, config: {configuration: {"@type": type.googleapis.com/google.protobuf.BytesValue}}}`, "want type.googleapis.com/google.protobuf.StringValue"},
		{"a list", "- 1\n- 2", "no mcp-resume-guard plugin configuration found"},
		{"a manifest of another kind", "kind: HTTPRoute\nspec: {}", "no mcp-resume-guard plugin configuration found"},
	} {
		if _, err := Extract([]byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if found, err := Extract([]byte(`{"routes": [`)); err != nil || len(Check(found[0].JSON)) != 1 || !strings.Contains(Check(found[0].JSON)[0].Error(), "not valid JSON") {
		t.Errorf("broken JSON: %+v, %v", found, err)
	}
	// Two documents: the WasmPlugin is found after another manifest.
	found, err := Extract([]byte("kind: Service\nmetadata: {name: s}\n---\nkind: WasmPlugin\nmetadata: {name: w}\nspec: {pluginConfig: {max_sessions: 5}}\n"))
	if err != nil || len(found) != 1 || string(found[0].JSON) != `{"max_sessions":5}` {
		t.Errorf("multi-document: %+v, %v", found, err)
	}
	// A JSON plugin configuration is checked as written: a duplicate key
	// is the plugin's error too.
	if errs := Check([]byte(`{"max_sessions": 5, "max_sessions": 6}`)); len(errs) != 1 || !strings.Contains(errs[0].Error(), "appears twice") {
		t.Errorf("duplicate key: %v", errs)
	}
}

func TestUsage(t *testing.T) {
	var out, errs strings.Builder
	if code := run(nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), "usage: validate FILE") {
		t.Errorf("no arguments: exit %d\n%s", code, errs.String())
	}
	if code := run([]string{"-h"}, &out, &errs); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	if code := run([]string{filepath.Join(t.TempDir(), "missing.json")}, &out, &errs); code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
}
