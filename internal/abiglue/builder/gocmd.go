package builder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goTool runs the go command in dir with extra environment entries.
type goTool struct {
	path string // the go command
	dir  string
}

// output runs `go args...` and returns its standard output; the error carries
// the command line and its standard error.
func (g goTool) output(ctx context.Context, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.path, args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", g.path, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// goEnv is the part of `go env` the build needs.
type goEnv struct {
	GOROOT    string
	GOVERSION string
	GOMOD     string
}

// mainModuleOnly makes go commands look at the main module's go.mod alone,
// whatever GOWORK the caller has set.
var mainModuleOnly = []string{"GOWORK=off"}

func (g goTool) env(ctx context.Context) (goEnv, error) {
	out, err := g.output(ctx, mainModuleOnly, "env", "-json", "GOROOT", "GOVERSION", "GOMOD")
	if err != nil {
		return goEnv{}, err
	}
	var e goEnv
	if err := json.Unmarshal(out, &e); err != nil {
		return goEnv{}, fmt.Errorf("decoding go env output: %w", err)
	}
	if e.GOROOT == "" || e.GOVERSION == "" {
		return goEnv{}, fmt.Errorf("go env reported GOROOT %q and GOVERSION %q", e.GOROOT, e.GOVERSION)
	}
	if e.GOMOD == "" || e.GOMOD == os.DevNull {
		return goEnv{}, fmt.Errorf("%s is not inside a Go module: run the build from the module that requires %s", g.dir, SDKModule)
	}
	return e, nil
}

// moduleInfo is the part of `go list -m -json` the build needs.
type moduleInfo struct {
	Path    string
	Version string
	Dir     string
	Replace *moduleInfo
}

// locateModule returns the directory and version of module path as the main
// module's go.mod requires it, downloading it into the module cache if needed.
func (g goTool) locateModule(ctx context.Context, path string) (moduleInfo, error) {
	list := func() (moduleInfo, error) {
		out, err := g.output(ctx, mainModuleOnly, "list", "-m", "-json", path)
		if err != nil {
			return moduleInfo{}, err
		}
		var m moduleInfo
		if err := json.Unmarshal(out, &m); err != nil {
			return moduleInfo{}, fmt.Errorf("decoding go list -m output: %w", err)
		}
		if m.Replace != nil {
			r := *m.Replace
			if r.Version == "" {
				r.Version = m.Version
			}
			return r, nil
		}
		return m, nil
	}
	m, err := list()
	if err != nil {
		return moduleInfo{}, err
	}
	if m.Dir == "" {
		// Not in the module cache yet (a fresh machine): fetch exactly the
		// required version, then ask again.
		if _, err := g.output(ctx, mainModuleOnly, "mod", "download", m.Path+"@"+m.Version); err != nil {
			return moduleInfo{}, err
		}
		if m, err = list(); err != nil {
			return moduleInfo{}, err
		}
		if m.Dir == "" {
			return moduleInfo{}, fmt.Errorf("go list -m reports no directory for %s@%s even after go mod download", path, m.Version)
		}
	}
	return m, nil
}

// goDirective returns the go version line of the main module's go.mod.
func (g goTool) goDirective(ctx context.Context) (string, error) {
	out, err := g.output(ctx, mainModuleOnly, "mod", "edit", "-json")
	if err != nil {
		return "", err
	}
	var mod struct{ Go string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("decoding go mod edit -json output: %w", err)
	}
	if mod.Go == "" {
		return "", fmt.Errorf("the main module's go.mod has no go directive")
	}
	return mod.Go, nil
}

// absPath resolves p against dir unless it is already absolute.
func absPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
