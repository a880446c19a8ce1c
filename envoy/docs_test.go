package envoy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
)

// deployDocFiles are the user documentation of the deployment.
var deployDocFiles = []string{
	"README.md", "docs/deploy-envoy.md", "docs/deploy-istio.md", "docs/deploy-envoy-gateway.md", "docs/operations.md",
}

// deployDocs returns the user documentation of the deployment, as one text.
func deployDocs(t *testing.T) (string, string) {
	t.Helper()
	var b strings.Builder
	for _, name := range deployDocFiles {
		b.Write(readFile(t, filepath.Join(repoRoot, filepath.FromSlash(name))))
		b.WriteByte('\n')
	}
	return strings.Join(deployDocFiles, ", "), b.String()
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
		"# Deploy to Envoy\n", "# Deploy to Istio\n", "# Deploy to Envoy Gateway\n", "## Try it with docker compose",
		"envoy/istio/proxy-stats.yaml", "make validate CONFIG=",
		"ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.2.0", // the published image the manifests name
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
