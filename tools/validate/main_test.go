package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

const repo = "../.."

// validate runs the command and returns its exit code and output.
func validate(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errs strings.Builder
	code := run(args, &out, &errs)
	return code, out.String() + errs.String()
}

func readRepo(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// posOf returns "LINE:COLUMN" of the first occurrence of s in text.
func posOf(t *testing.T, text, s string) string {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q is not in the text", s)
	}
	line := strings.Count(text[:i], "\n") + 1
	return fmt.Sprintf("%d:%d", line, i-strings.LastIndex(text[:i], "\n"))
}

// TestAcceptsShipped: every shipped manifest passes, and the walk over
// the repository's manifest folders finds each deployment and notes the
// documents without the plugin.
func TestAcceptsShipped(t *testing.T) {
	code, out := validate(t, filepath.Join(repo, "envoy"), filepath.Join(repo, "deploy"))
	if code != 0 {
		t.Fatalf("validate envoy/ deploy/: exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"envoy/envoy.yaml: Envoy bootstrap listener mcp_ingress http filter envoy.filters.http.wasm: ok",
		"envoy/istio/wasmplugin.yaml: WasmPlugin mcp/mcp-resume-guard: ok",
		"envoy/gateway/extensionpolicy.yaml: EnvoyExtensionPolicy mcp/mcp-resume-guard spec.wasm[0]: ok",
		"envoy/plugin-config/paths.json: plugin configuration: ok",
		"envoy/gateway/httproute.yaml: note: the file (HTTPRoute mcp/mcp) carries no mcp-resume-guard plugin: skipped",
		"envoy/gateway/backendtrafficpolicy.yaml: note: the file (BackendTrafficPolicy mcp/mcp-session-affinity) carries no mcp-resume-guard plugin: skipped",
		"envoy/ha/front.yaml: note: the file (an Envoy bootstrap) has no Wasm filter of mcp-resume-guard: skipped",
		"deploy/monitoring/dashboard.json: note: a JSON object with none of the plugin configuration's keys: skipped",
	} {
		wantAll(t, out, want)
	}
	configs, err := filepath.Glob(filepath.Join(repo, "envoy/plugin-config/*.json"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no shipped plugin configurations found (%v)", err)
	}
	for _, c := range configs {
		if rel, _ := filepath.Rel(repo, c); !strings.Contains(out, rel+": plugin configuration: ok") {
			t.Errorf("%s not checked:\n%s", rel, out)
		}
	}
}

// urlLine returns the "url: ..." line that follows prefix in text.
func urlLine(t *testing.T, text, prefix string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, prefix)
	if !ok {
		t.Fatalf("no %q line", strings.TrimSpace(prefix))
	}
	line, _, _ := strings.Cut(rest, "\n")
	return "url: " + line
}

// wantAll fails the test for each of want that out lacks.
func wantAll(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// fakeWasm is bytes that start like a Wasm module.
func fakeWasm() []byte {
	b := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	for i := range 4000 {
		b = append(b, byte(i*13))
	}
	return b
}

// packImage writes an OCI image layout as make oci does and returns its
// path, its manifest digest and its .wasm's SHA-256.
func packImage(t *testing.T) (path, manifest, wasm string) {
	t.Helper()
	w := fakeWasm()
	img, tarball, err := oci.Pack(w, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "mcp-resume-guard-oci.tar")
	if err := os.WriteFile(path, tarball, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(w)
	return path, d.Hex, hex.EncodeToString(sum[:])
}

// TestRejectsBroken: each broken variant of a shipped file exits 1 with a
// message that names the key at its line and column in the user's file.
func TestRejectsBroken(t *testing.T) {
	imagePath, manifest, wasm := packImage(t)
	// The shipped image references, whatever version they pin.
	istioURL := urlLine(t, readRepo(t, "envoy/istio/wasmplugin.yaml"), "\n  url: ")
	gwURL := urlLine(t, readRepo(t, "envoy/gateway/extensionpolicy.yaml"), "\n        url: ")
	cases := []struct {
		name, file, old, new string
		image                bool
		at                   string // the text whose position the message must give
		want                 []string
	}{
		{name: "route name typo", file: "envoy/envoy.yaml",
			old: `{"route_name": "mcp-streamable", "transport": "http"}`, new: `{"route_name": "mcp-streamabel", "transport": "http"}`,
			at:   `"route_name": "mcp-streamabel"`,
			want: []string{`routes[0].route_name: the plugin guards route "mcp-streamabel", which no route of the table is named: it never matches`, `warning: route "mcp-streamable" (/mcp) runs the filter, but no plugin route matches it`}},
		{name: "path prefix Envoy sends elsewhere", file: "envoy/envoy.yaml",
			old: `{"route_name": "mcp-streamable", "transport": "http"}`, new: `{"route_name": "mcp-streamable", "path_prefix": "/mcp/v2", "transport": "http"}`,
			at:   `"path_prefix": "/mcp/v2"`,
			want: []string{`routes[0].path_prefix: path_prefix "/mcp/v2": Envoy sends /mcp/v2 to route "passthrough" (line `, "which does not run the filter: it never matches"}},
		{name: "bootstrap fails closed", file: "envoy/envoy.yaml", old: "failure_policy: FAIL_OPEN", new: "failure_policy: FAIL_CLOSED",
			at: "failure_policy: FAIL_CLOSED", want: []string{"failure_policy FAIL_CLOSED answers 503 to every guarded request", "set failure_policy: FAIL_OPEN"}},
		{name: "bad value in a bootstrap", file: "envoy/envoy.yaml", old: `"unacked_cursor": "rewind"`, new: `"unacked_cursor": "sometimes"`,
			at: `"unacked_cursor": "sometimes"`, want: []string{`key "unacked_cursor": "sometimes" is not one of reinit, rewind, observe`}},
		{name: "unknown key in a bootstrap", file: "envoy/envoy.yaml", old: `"max_line_bytes": 8192`, new: `"max_line_bytes": 8192, "max_line": 1`,
			at: `"max_line": 1`, want: []string{`unknown key "max_line"; allowed keys: routes, `}},
		{name: "sha256 of the .wasm", file: "envoy/istio/wasmplugin.yaml", old: "  imagePullPolicy:", new: "  sha256: " + wasm + "\n  imagePullPolicy:", image: true,
			at: "sha256: " + wasm, want: []string{"sha256's digest " + wasm + " is the .wasm file's SHA-256 (plugin.wasm in " + imagePath + "), not an image's", "it must be the OCI manifest's digest, " + manifest}},
		{name: "url pinned to the .wasm", file: "envoy/istio/wasmplugin.yaml", old: istioURL, new: "url: oci://ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:" + wasm, image: true,
			at: "url: oci://ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:" + wasm, want: []string{"is the .wasm file's SHA-256", manifest}},
		{name: "sha256 of another image", file: "envoy/istio/wasmplugin.yaml", old: "  imagePullPolicy:", new: "  sha256: " + strings.Repeat("ab", 32) + "\n  imagePullPolicy:", image: true,
			at: "sha256: abab", want: []string{"matches neither digest of", manifest}},
		{name: "Envoy's spelling of fail closed", file: "envoy/istio/wasmplugin.yaml", old: "failStrategy: FAIL_OPEN", new: "failStrategy: FAIL_CLOSED",
			at: "failStrategy: FAIL_CLOSED", want: []string{"failStrategy FAIL_CLOSED is Envoy's spelling, not one of Istio's"}},
		{name: "fail closed", file: "envoy/istio/wasmplugin.yaml", old: "failStrategy: FAIL_OPEN", new: "failStrategy: FAIL_CLOSE",
			at: "failStrategy: FAIL_CLOSE", want: []string{"failStrategy FAIL_CLOSE answers 5xx to every MCP request", "set failStrategy: FAIL_OPEN"}},
		{name: "no failStrategy", file: "envoy/istio/wasmplugin.yaml", old: "  failStrategy: FAIL_OPEN\n", new: "",
			at: "spec:", want: []string{"failStrategy is not set, and Istio's default FAIL_CLOSE"}},
		{name: "short digest in the url", file: "envoy/istio/wasmplugin.yaml", old: istioURL, new: "url: oci://ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:1234",
			at: "url: oci://ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:1234", want: []string{`url "oci://ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:1234": the digest after @ must be sha256: and 64 lowercase hex digits, got "sha256:1234" (4 digits)`}},
		{name: "digest YAML reads as a number", file: "envoy/istio/wasmplugin.yaml", old: "  imagePullPolicy:", new: "  sha256: " + strings.Repeat("0", 64) + "\n  imagePullPolicy:",
			at: "sha256: 0000", want: []string{"sha256 is a number (000000000000…) in YAML, not a string: quote it"}},
		{name: "digest with its prefix", file: "envoy/istio/wasmplugin.yaml", old: "  imagePullPolicy:", new: "  sha256: sha256:" + strings.Repeat("a", 64) + "\n  imagePullPolicy:",
			at: "sha256: sha256:", want: []string{"without the sha256: prefix"}},
		{name: "unknown phase", file: "envoy/istio/wasmplugin.yaml", old: "phase: UNSPECIFIED_PHASE", new: "phase: ROUTER",
			at: "phase: ROUTER", want: []string{`phase the string "ROUTER" is not one of UNSPECIFIED_PHASE, AUTHN, AUTHZ, STATS`}},
		{name: "no selector", file: "envoy/istio/wasmplugin.yaml", old: "  selector:\n    matchLabels:\n      app: mcp-server\n", new: "",
			at: "spec:", want: []string{"spec has neither selector nor targetRefs"}},
		{name: "selector and targetRefs", file: "envoy/istio/wasmplugin.yaml", old: "  selector:\n", new: "  targetRefs:\n  - kind: Service\n    name: mcp\n  selector:\n",
			at: "selector:\n", want: []string{"selector and targetRefs exclude each other"}},
		{name: "route names in Istio", file: "envoy/istio/wasmplugin.yaml", old: "    - path_prefix: /mcp\n      transport: http", new: "    - route_name: mcp-streamable\n      transport: http",
			at: "route_name: mcp-streamable", want: []string{`routes[0].route_name "mcp-streamable": on the inbound side Istio names routes itself`}},
		{name: "plugin value in a WasmPlugin", file: "envoy/istio/wasmplugin.yaml", old: "    - path_prefix: /sse\n      transport: sse", new: "    - path_prefix: /sse\n      transport: grpc",
			at: "transport: grpc", want: []string{`routes[1].transport must be "sse" or "http", got "grpc"`}},
		{name: "no pluginConfig", file: "envoy/istio/wasmplugin.yaml", old: "  pluginConfig:\n    routes:\n", new: "  pluginConfig:\n    max_sessions: 5\n    routs:\n",
			at: "routs:", want: []string{`unknown key "routs"`}},
		{name: "gateway fails closed", file: "envoy/gateway/extensionpolicy.yaml", old: "failOpen: true", new: "failOpen: false",
			at: "failOpen: false", want: []string{"failOpen a boolean (false) fails every request of the route", "set failOpen: true"}},
		{name: "gateway image pinned to the .wasm", file: "envoy/gateway/extensionpolicy.yaml", old: gwURL, new: gwURL + "\n        sha256: " + wasm, image: true,
			at: "sha256: " + wasm, want: []string{"is the .wasm file's SHA-256", "it must be the OCI manifest's digest, " + manifest}},
		{name: "gateway without targets", file: "envoy/gateway/extensionpolicy.yaml", old: "  targetRefs:\n  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    name: mcp\n", new: "",
			at: "spec:", want: []string{"spec has no targetRefs"}},
		{name: "gateway plugin key", file: "envoy/gateway/extensionpolicy.yaml", old: "      routes:\n", new: "      unknown_cursor: sometimes\n      routes:\n",
			at: "unknown_cursor: sometimes", want: []string{`key "unknown_cursor": "sometimes" is not one of forward, reinit`}},
		{name: "malformed plugin JSON", file: "envoy/plugin-config/paths.json", old: `{"path_prefix": "/sse", "transport": "sse"}`, new: `{"path_prefix": "/sse", "transport": "sse",}`,
			at: `}`, want: []string{"not valid JSON", "invalid character '}' looking for beginning of object key string"}},
		{name: "unwind with what it contradicts", file: "envoy/plugin-config/envoy.json", old: `"principal_header": "authorization"`, new: `"principal_header": "authorization", "unwind": true`,
			at: `"untagged_cursor": "reinit"`, want: []string{`config: key "untagged_cursor": "reinit" refuses exactly the cursors the upstream mints while "unwind" is true`,
				posOf(t, readRepo(t, "envoy/plugin-config/envoy.json"), `"mint_cursors": true`) + `: plugin configuration: config: key "mint_cursors": true mints cursors`, "2 error(s)"}},
		// Every error, not only the first.
		{name: "every error", file: "envoy/plugin-config/paths.json", old: `{"path_prefix": "/mcp", "transport": "http"}`, new: `{"path_prefix": "mcp", "transport": "http"}], "max_sessions": 0, "routes2": [{}`,
			at: `"path_prefix": "mcp"`, want: []string{`routes[0].path_prefix must start with "/"`, `key "max_sessions": 0 is not an integer from 1 to 1000000`, `unknown key "routes2"`, "3 error(s)"}},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			good := readRepo(t, tc.file)
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", tc.file, tc.old)
			}
			bad := strings.Replace(good, tc.old, tc.new, 1)
			name := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+filepath.Ext(tc.file))
			if err := os.WriteFile(name, []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{name}
			if tc.image {
				args = []string{"-image", imagePath, name}
			}
			code, out := validate(t, args...)
			if code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, out)
			}
			at := posOf(t, bad, tc.at)
			if tc.name == "malformed plugin JSON" {
				at = posOf(t, bad, `"sse",}`)
				at = at[:strings.Index(at, ":")+1] // the line; the column is checked below
			}
			wantAll(t, out, append(tc.want, name+":"+at)...)
		})
	}
}

// TestMalformedJSONColumn: a syntax error in a plugin configuration, alone
// or inside a bootstrap's YAML string, points at its line and column.
func TestMalformedJSONColumn(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.json")
	if err := os.WriteFile(plain, []byte("{\n  \"routes\": [\n    {\"path_prefix\": \"/mcp\" \"transport\": \"http\"}\n  ]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := validate(t, plain); code != 1 || !strings.Contains(out, plain+":3:28: ") || !strings.Contains(out, "after object key:value pair") {
		t.Errorf("exit %d, want 1 and %s:3:28:\n%s", code, plain, out)
	}
	boot := readRepo(t, "envoy/envoy.yaml")
	bad := strings.Replace(boot, `"max_line_bytes": 8192,`, `"max_line_bytes": 8192`, 1)
	name := filepath.Join(dir, "envoy.yaml")
	if err := os.WriteFile(name, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	// The error is found at the next key, where a comma was expected.
	want := posOf(t, bad, `"mint_cursors"`)
	if code, out := validate(t, name); code != 1 || !strings.Contains(out, name+":"+want+": ") {
		t.Errorf("exit %d, want 1 and %s:%s:\n%s", code, name, want, out)
	}
}

// TestDigestsAgainstBuild: without -image, pinned digests are compared with
// what make build and make oci left in build/ (the working directory's, as
// under make validate): a .wasm file's SHA-256 pinned as an image's digest
// fails with a message that says so, whether build/ holds the image layout
// or only the .wasm; a digest that is neither is a warning (a published
// release's); with no build/ files, one warning line says the digests were
// checked for their form only and which command makes the check possible.
func TestDigestsAgainstBuild(t *testing.T) {
	abs, err := filepath.Abs(repo)
	if err != nil {
		t.Fatal(err)
	}
	wasmPlugin := readRepo(t, "envoy/istio/wasmplugin.yaml")
	istioURL := urlLine(t, wasmPlugin, "\n  url: ")
	layout, manifest, wasm := packImage(t)
	other := strings.Repeat("ab", 32)
	dir := t.TempDir()
	// pinned writes the shipped WasmPlugin pinned by sha256 (or, with
	// http, the .wasm served over https) and returns its path.
	pinned := func(name, digest string, http bool) string {
		text := strings.Replace(wasmPlugin, "  imagePullPolicy:", "  sha256: "+digest+"\n  imagePullPolicy:", 1)
		if http {
			text = strings.Replace(text, istioURL, "url: https://example.com/mcp-resume-guard.wasm", 1)
		}
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// inBuild makes a working directory whose build/ holds files, and
	// moves the test there.
	inBuild := func(files map[string]string) {
		wd := t.TempDir()
		if err := os.MkdirAll(filepath.Join(wd, "build"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, from := range files {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(wd, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Chdir(wd)
	}
	wasmFile := filepath.Join(dir, "plugin.wasm")
	if err := os.WriteFile(wasmFile, fakeWasm(), 0o644); err != nil {
		t.Fatal(err)
	}
	byWasm, byManifest, byOther := pinned("by-wasm", wasm, false), pinned("by-manifest", manifest, false), pinned("by-other", other, false)
	httpByManifest, httpByWasm := pinned("http-by-manifest", manifest, true), pinned("http-by-wasm", wasm, true)
	noBuild := "pinned digest(s) checked for their form only: there is no build/mcp-resume-guard-oci.tar or build/mcp-resume-guard.wasm here"

	t.Run("only the .wasm", func(t *testing.T) {
		inBuild(map[string]string{"build/mcp-resume-guard.wasm": wasmFile})
		code, out := validate(t, byWasm)
		if code != 1 {
			t.Errorf("exit %d, want 1:\n%s", code, out)
		}
		wantAll(t, out, byWasm+":"+posOf(t, readFile(t, byWasm), "sha256: "+wasm)+": WasmPlugin mcp/mcp-resume-guard: sha256's digest "+wasm+
			" is the .wasm file's SHA-256 (build/mcp-resume-guard.wasm), not an image's: it must be the OCI manifest's digest (make oci prints the built image's; for a release, its notes or crane digest)")
		if code, out := validate(t, byOther, httpByWasm); code != 0 || strings.Contains(out, "warning") {
			t.Errorf("a digest that is not the .wasm's, and the .wasm's over https: exit %d, want 0 without a warning:\n%s", code, out)
		}
	})
	t.Run("the image and the .wasm", func(t *testing.T) {
		inBuild(map[string]string{"build/mcp-resume-guard-oci.tar": layout, "build/mcp-resume-guard.wasm": wasmFile})
		code, out := validate(t, byWasm, httpByManifest)
		if code != 1 {
			t.Errorf("exit %d, want 1:\n%s", code, out)
		}
		wantAll(t, out,
			"sha256's digest "+wasm+" is the .wasm file's SHA-256 (plugin.wasm in build/mcp-resume-guard-oci.tar), not an image's: it must be the OCI manifest's digest, "+manifest,
			"sha256 "+manifest+" is the OCI manifest's digest of build/mcp-resume-guard-oci.tar, but an http(s) url serves the .wasm file: it must be the file's SHA-256, "+wasm)
		if code, out := validate(t, byManifest, httpByWasm); code != 0 || strings.Contains(out, "warning") {
			t.Errorf("the image's own digests: exit %d, want 0 without a warning:\n%s", code, out)
		}
		code, out = validate(t, byOther)
		if code != 0 {
			t.Errorf("another image's digest: exit %d, want 0 (a warning):\n%s", code, out)
		}
		wantAll(t, out, "warning: sha256's digest "+other+" is not the image in build/mcp-resume-guard-oci.tar (its manifest's digest is "+manifest+
			"): right if you pin a published release; -image build/mcp-resume-guard-oci.tar (make validate OCI_TAR=build/mcp-resume-guard-oci.tar) requires the built one")
		// -image makes the same digest an error.
		if code, out := validate(t, "-image", "build/mcp-resume-guard-oci.tar", byOther); code != 1 || !strings.Contains(out, "matches neither digest of build/mcp-resume-guard-oci.tar") {
			t.Errorf("-image and another image's digest: exit %d, want 1:\n%s", code, out)
		}
	})
	t.Run("an image older than the .wasm", func(t *testing.T) {
		newer := filepath.Join(dir, "newer.wasm")
		if err := os.WriteFile(newer, append(fakeWasm(), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		inBuild(map[string]string{"build/mcp-resume-guard-oci.tar": layout, "build/mcp-resume-guard.wasm": newer})
		code, out := validate(t, byManifest)
		if code != 0 {
			t.Errorf("exit %d, want 0:\n%s", code, out)
		}
		wantAll(t, out, "validate: warning: build/mcp-resume-guard-oci.tar holds another .wasm than build/mcp-resume-guard.wasm (make build ran after make oci)")
	})
	t.Run("no build files", func(t *testing.T) {
		t.Chdir(t.TempDir())
		code, out := validate(t, byWasm, byOther)
		if code != 0 {
			t.Errorf("exit %d, want 0 (digests of the right form):\n%s", code, out)
		}
		wantAll(t, out, "validate: warning: 2 "+noBuild, "run make build oci, then make validate from the repository's root (or -image LAYOUT.tar)")
		// Nothing pinned by digest: nothing to say.
		if _, out := validate(t, filepath.Join(abs, "envoy/istio/wasmplugin.yaml")); strings.Contains(out, noBuild) {
			t.Errorf("a manifest pinned by tag only: the no-build warning:\n%s", out)
		}
	})
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestErrorsAtTheirPath: each error of the plugin's parser is printed with
// its text unchanged, at the member its Path names: a key that appears
// twice at its second occurrence, a key of any spelling (dots, brackets)
// at itself, an entry of routes at its key.
func TestErrorsAtTheirPath(t *testing.T) {
	text := `{
  "routes": [
    {"path_prefix": "/mcp", "transport": "http"},
    {"path_prefix": "/sse", "transport": "sse", "transport": "http"},
    {"path_prefix": "/messages"}
  ],
  "routes[0].transport": 1,
  "max_sessions": 1,
  "max_sessions": 2
}
`
	name := filepath.Join(t.TempDir(), "paths.json")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := config.Parse([]byte(text))
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("config.Parse: %v, want config.Errors", err)
	}
	// Where each error must be printed, in the order config.Parse gives
	// them, by its Path.
	want := map[string]string{
		"routes/1/transport":  posOf(t, text, "\"transport\": \"http\"},\n    {\"path_prefix\": \"/messages\"}"),
		"routes/2":            posOf(t, text, `{"path_prefix": "/messages"}`),
		"routes[0].transport": posOf(t, text, `"routes[0].transport"`),
		"max_sessions":        posOf(t, text, `"max_sessions": 2`),
	}
	if len(errs) != len(want) {
		t.Fatalf("config.Parse found %d errors, want %d: %v", len(errs), len(want), err)
	}
	code, out := validate(t, name)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, e := range errs {
		at, ok := want[strings.Join(e.Path, "/")]
		if !ok {
			t.Errorf("unexpected error at %q: %v", e.Path, e)
			continue
		}
		wantAll(t, out, name+":"+at+": plugin configuration: "+e.Error()+"\n")
	}
	wantAll(t, out, "4 error(s)")
}

// TestDocumentsAndFolders: documents without the plugin are skipped with a
// note, several files and folders are read in one run, any error fails it,
// and a run that finds no plugin at all fails.
func TestDocumentsAndFolders(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("routes/httproute.yaml", readRepo(t, "envoy/gateway/httproute.yaml"))
	if code, out := validate(t, filepath.Join(dir, "routes")); code != 1 || !strings.Contains(out, "carries no mcp-resume-guard plugin: skipped") || !strings.Contains(out, "no mcp-resume-guard plugin configuration in") {
		t.Errorf("a folder without the plugin: exit %d, want 1 with a note:\n%s", code, out)
	}
	multi := write("all/mcp.yaml", readRepo(t, "envoy/gateway/httproute.yaml")+"---\n"+readRepo(t, "envoy/gateway/extensionpolicy.yaml")+"---\n"+readRepo(t, "envoy/gateway/backendtrafficpolicy.yaml"))
	code, out := validate(t, filepath.Join(dir, "all"), filepath.Join(repo, "envoy/plugin-config/paths.json"))
	for _, want := range []string{
		multi + ": note: document 1 (HTTPRoute mcp/mcp) carries no mcp-resume-guard plugin: skipped",
		multi + ": note: document 3 (BackendTrafficPolicy mcp/mcp-session-affinity) carries no mcp-resume-guard plugin: skipped",
		multi + ": EnvoyExtensionPolicy mcp/mcp-resume-guard spec.wasm[0]: ok",
		"paths.json: plugin configuration: ok",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, want 0 and %q:\n%s", code, want, out)
		}
	}
	write("none/empty.json", `{"max_sessions": 5}`)
	if code, out := validate(t, filepath.Join(dir, "none")); code != 1 || !strings.Contains(out, `empty.json:1:1: plugin configuration: key "routes" lists no route: the plugin guards no request`) {
		t.Errorf("a configuration without routes: exit %d, want 1:\n%s", code, out)
	}
	write("all/broken.json", `{"routes": [{"path_prefix": "/mcp", "transport": "grpc"}]}`)
	if code, out := validate(t, filepath.Join(dir, "all")); code != 1 || !strings.Contains(out, "broken.json:1:37: plugin configuration: config: routes[0].transport") {
		t.Errorf("one broken file among good ones: exit %d, want 1:\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	if code, out := validate(t); code != 2 || !strings.Contains(out, "usage: validate [-image OCI_LAYOUT.tar] PATH...") {
		t.Errorf("no arguments: exit %d\n%s", code, out)
	}
	if code, _ := validate(t, "-h"); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	if code, _ := validate(t, filepath.Join(t.TempDir(), "missing.json")); code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
	if code, out := validate(t, "-image", filepath.Join(t.TempDir(), "missing.tar"), filepath.Join(repo, "envoy/envoy.yaml")); code != 2 || !strings.Contains(out, "-image") {
		t.Errorf("missing image: exit %d\n%s", code, out)
	}
}
