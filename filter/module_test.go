package main

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// productRequires is what the root module (the plugin, its ABI glue, the
// embedded host and the end-to-end tests) requires directly: the SDK and
// gjson the plugin is built on, wazero for the embedded host, the MCP Go SDK
// the e2e clients and the reference upstream use, and the YAML parser
// internal/envoyconf reads envoy.yaml with.
var productRequires = []string{
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/tetratelabs/proxy-wasm-go-sdk",
	"github.com/tetratelabs/wazero",
	"github.com/tidwall/gjson",
	"go.yaml.in/yaml/v4",
}

// toolOnly are modules that only tools need (OCI images, releases,
// deployment checks, monitoring): they belong in tools/, tools/release/,
// envoy/ or deploy/monitoring/, never in the product's go.mod, not even
// as indirect requirements.
var toolOnly = []string{
	"github.com/google/go-containerregistry", "github.com/compose-spec/", "github.com/envoyproxy/",
	"istio.io/", "github.com/prometheus/", "github.com/sigstore/", "github.com/CycloneDX/",
}

// TestRootModuleRequiresNoToolOnlyDependency keeps what the plugin depends on
// visible from its module (issue 32): the root go.mod's direct requirements
// are exactly productRequires, and no tool-only module is required at all.
// A new direct requirement needs a line in productRequires saying why the
// product needs it; a tool's goes into that tool's module.
func TestRootModuleRequiresNoToolOnlyDependency(t *testing.T) {
	f, err := os.Open("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var direct []string
	inRequire := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			inRequire = true
			continue
		case inRequire && line == ")":
			inRequire = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inRequire:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		for _, p := range toolOnly {
			if strings.HasPrefix(fields[0], p) {
				t.Errorf("go.mod requires %s, which only tools need: move it to the tool's own module", fields[0])
			}
		}
		if !strings.Contains(line, "// indirect") {
			direct = append(direct, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(direct)
	if !slices.Equal(direct, productRequires) {
		t.Errorf("go.mod's direct requirements are %q, want %q: the product's module requires what the plugin, its host and its tests need, nothing a tool alone needs", direct, productRequires)
	}
}
