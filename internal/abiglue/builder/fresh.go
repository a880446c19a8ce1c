package builder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ReadFresh reads a built plugin for a test: it fails, saying to run make
// build, when artifact is missing or older than a source of pkg (see
// CheckFresh).
func ReadFresh(artifact, pkg string) ([]byte, error) {
	b, err := os.ReadFile(artifact)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: run make build first", artifact)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckFresh(artifact, pkg); err != nil {
		return nil, err
	}
	return b, nil
}

// CheckFresh fails when a Go source file that the plugin package pkg (a
// path as go list takes it) is built from, in the main module, is newer
// than artifact: tests that load the artifact would prove an old build.
func CheckFresh(artifact, pkg string) error {
	fi, err := os.Stat(artifact)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing the plugin's packages: %w", err)
	}
	for _, dir := range strings.Fields(string(out)) {
		srcs, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, src := range srcs {
			if strings.HasSuffix(src, "_test.go") {
				continue
			}
			if si, err := os.Stat(src); err == nil && si.ModTime().After(fi.ModTime()) {
				return fmt.Errorf("%s is older than %s: run make build first", artifact, src)
			}
		}
	}
	return nil
}
