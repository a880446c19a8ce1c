package envoy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
)

// deployDocs returns the user documentation of the deployment: the README
// from its "Deploy to Envoy" section onwards.
func deployDocs(t *testing.T) (string, string) {
	t.Helper()
	readme := string(readFile(t, filepath.Join(repoRoot, "README.md")))
	i := strings.Index(readme, "## Deploy to Envoy")
	if i < 0 {
		t.Fatal(`README.md has no "## Deploy to Envoy" section`)
	}
	return "README.md", readme[i:]
}

// counterNames returns the full names of the counters the plugin defines,
// from their single source of truth (package counters).
func counterNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, n := range counters.Names() {
		names = append(names, counters.Prefix+n)
	}
	return names
}

// TestDeployDocsMatchFiles keeps the deployment documentation true to the
// artifacts it describes.
func TestDeployDocsMatchFiles(t *testing.T) {
	docName, docs := deployDocs(t)
	boot, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	project, err := loadCompose(readFile(t, filepath.Join(repoRoot, composeFile)))
	if err != nil {
		t.Fatal(err)
	}
	wp, _, err := checkWasmPlugin(readFile(t, wasmPluginFile))
	if err != nil {
		t.Fatal(err)
	}

	want := []string{
		"## Deploy to Envoy", "## Deploy to Istio", "## Try it with docker compose",
		"1.33",                          // the Envoy version floor
		project.Services["envoy"].Image, // the pinned image
		wasmInContainer,                 // where envoy.yaml loads the plugin
		boot.Plugin.GetFailurePolicy().String(),
		"/stats/prometheus",
		"build/mcp-resume-guard-oci.tar", // make oci's output
		"make build && docker compose up --build --exit-code-from e2e",
		"envoy/istio/wasmplugin.yaml",
		wp.GetFailStrategy().String(),
		wp.GetPhase().String(),
	}
	want = append(want, boot.EnabledRoutes...)
	want = append(want, counterNames(t)...)
	for k, v := range composeEnv {
		want = append(want, k+"="+v)
	}
	for _, s := range want {
		if !strings.Contains(docs, s) {
			t.Errorf("%s does not mention %q", docName, s)
		}
	}
}
