package sse

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the hot path free of fmt, reflection and encoding/json,
// and the package free of the proxy-wasm SDK.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"bytes":           true,
		"encoding/binary": true, // LittleEndian.Uint64 only (eol.go)
		"math/bits":       true,
		"unsafe":          true,
		"github.com/mcp-resume-guard/mcp-resume-guard/cursor": true,
		"github.com/tidwall/gjson":                            true,
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %q; the rewriter may only use %v", name, path, allowed)
			}
		}
	}
}
