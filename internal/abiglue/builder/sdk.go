package builder

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue"
)

// SDKModule is the proxy-wasm SDK whose API the plugins are written against.
const SDKModule = "github.com/tetratelabs/proxy-wasm-go-sdk"

// SDKVersion is the SDK version the glue is written for: the glue calls the
// SDK's unexported callback functions and fills its currentHost interface, so
// another version needs the glue checked first.
const SDKVersion = "v0.24.0"

// sdkGluePackage is where, inside the SDK, the glue files go; those under
// sdkPublicPackage in the glue go to that package of the SDK.
const (
	sdkGluePackage   = "proxywasm/internal"
	sdkPublicPackage = "proxywasm"
)

// mockConstraint is the build constraint of the SDK's abi_hostcalls_mock.go,
// which routes every host call through an interface; the copy gets
// "&& !abiglue" added to it.
const mockConstraint = "//go:build !tinygo"

// sdkSkipDirs are top-level SDK directories the plugin build never needs.
var sdkSkipDirs = map[string]bool{
	"examples": true,
	"e2e":      true,
	"doc":      true,
	".github":  true,
}

// sdkFiles reads the SDK module at dir (minus examples, e2e and docs) and adds
// the glue files to its proxywasm/internal package. Keys are slash-separated
// paths relative to the module root.
func sdkFiles(dir string) (map[string][]byte, error) {
	files := make(map[string][]byte)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if sdkSkipDirs[rel] {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the SDK at %s: %w", dir, err)
	}
	mock := sdkGluePackage + "/abi_hostcalls_mock.go"
	src, ok := files[mock]
	if !ok {
		return nil, fmt.Errorf("the SDK at %s has no %s: not the layout the glue is written for", dir, mock)
	}
	// The glue defines the SDK's Proxy* host-call functions itself, without
	// the mock's interface dispatch (abiglue_host.go): the plugin build must
	// not compile the mock.
	if strings.Count(string(src), mockConstraint) != 1 {
		return nil, fmt.Errorf("%s in the SDK at %s does not carry the constraint %q exactly once: review the glue against this SDK", mock, dir, mockConstraint)
	}
	files[mock] = []byte(strings.Replace(string(src), mockConstraint, mockConstraint+" && !"+abiglue.BuildTag, 1))

	glue := abiglue.Sources()
	names, err := fs.Glob(glue, "*.go")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no glue sources embedded in package abiglue")
	}
	public, err := fs.Glob(glue, sdkPublicPackage+"/*.go")
	if err != nil {
		return nil, err
	}
	for _, name := range append(names, public...) {
		data, err := fs.ReadFile(glue, name)
		if err != nil {
			return nil, err
		}
		dst := path.Join(sdkGluePackage, name)
		if strings.HasPrefix(name, sdkPublicPackage+"/") {
			dst = name // the SDK's own proxywasm package
		}
		if _, clash := files[dst]; clash {
			return nil, fmt.Errorf("glue file %s would overwrite the SDK's own %s", name, dst)
		}
		if !strings.Contains(string(data), "//go:build wasip1 && "+abiglue.BuildTag) {
			return nil, fmt.Errorf("glue file %s lacks the constraint %q", name, "//go:build wasip1 && "+abiglue.BuildTag)
		}
		files[dst] = data
	}
	return files, nil
}
