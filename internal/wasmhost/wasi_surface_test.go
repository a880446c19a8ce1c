package wasmhost

import (
	"slices"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/wasmcheck"
)

// TestWASISurfaceMatchesBuildCheck keeps the host's default WASI (what it
// answers like Envoy 1.33–1.38) and the build's module check on one list.
func TestWASISurfaceMatchesBuildCheck(t *testing.T) {
	var host []string
	for _, f := range wasiFuncs {
		host = append(host, f.name)
	}
	slices.Sort(host)
	want := slices.Clone(wasmcheck.EnvoyWASI)
	slices.Sort(want)
	if !slices.Equal(host, want) {
		t.Fatalf("host WASI %v\nbuild check %v", host, want)
	}
}
