package abiglue_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/wasmcheck"
)

// pluginArtifact is where `make build` puts the product plugin, relative to
// this package's directory.
var pluginArtifact = filepath.Join("..", "..", "build", "mcp-resume-guard.wasm")

// TestPluginArtifact checks the product plugin `make build` produced (make
// test builds it first) with the same rules the build applies. Without an
// artifact there is nothing to check and the test is skipped.
func TestPluginArtifact(t *testing.T) {
	if _, err := os.Stat(pluginArtifact); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not built (run make build)", pluginArtifact)
	}
	m, err := wasmcheck.CheckFile(pluginArtifact)
	if err != nil {
		t.Fatal(err)
	}
	imports, exports := m.Names()
	t.Logf("imports: %s\nexports: %s", strings.Join(imports, " "), strings.Join(exports, " "))
}
