// Package builder builds proxy-wasm plugins written against
// github.com/tetratelabs/proxy-wasm-go-sdk v0.24.0 with the standard Go
// toolchain, as WASI reactors that Envoy 1.33 and later load.
//
// Build generates, under a work directory (the main module's build/ by
// default, never committed):
//
//   - sdk/: a writable copy of the SDK module with this project's ABI glue
//     (package internal/abiglue) added to its proxywasm/internal package;
//   - go.work: a workspace of the main module that replaces the SDK with
//     sdk/, so the plugin compiles against the patched copy;
//   - overlay/: edited copies of the Go runtime's netpoll_wasip1.go and
//     os_wasip1.go plus overlay.json for go build -overlay, so the plugin
//     survives hosts whose poll_oneoff is missing (ENOSYS) or forbidden.
//
// It then runs GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared and checks
// the module's imports and exports (package wasmcheck). Every step rewrites
// only what changed, so a repeated build is quick and any state of the work
// directory is repaired.
package builder

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/wasmcheck"
)

// Options says what to build.
type Options struct {
	// Package is the plugin's main package, as go build takes it (an import
	// path, or a relative path resolved against Dir).
	Package string
	// Output is the .wasm file to write (relative paths against Dir).
	Output string
	// Dir is the directory go commands run in; it must lie inside the main
	// module. Default: the current directory.
	Dir string
	// WorkDir receives the generated SDK copy, go.work and overlay.
	// Default: build/ at the root of the main module.
	WorkDir string
	// Go is the go command. Default: "go" from PATH.
	Go string
	// NoRuntimePatch builds without the runtime overlay: the plugin then
	// aborts at its first GC on hosts answering poll_oneoff with ENOSYS.
	// Only for demonstrating that failure.
	NoRuntimePatch bool
	// LDFlags is passed to go build -ldflags, e.g. "-X main.version=v1.2.0"
	// to stamp the build into the plugin. Default: none.
	LDFlags string
	// Tags are further build tags (the filter's tests build a variant with
	// "faults", its fault points compiled in). Default: none.
	Tags []string
	// Log receives progress lines and go build's own output. Default: os.Stderr.
	Log io.Writer
}

// Result describes a successful build.
type Result struct {
	Output    string            // absolute path of the .wasm written
	Size      int64             // its size in bytes
	GoVersion string            // toolchain that built it, e.g. "go1.26.8"
	Module    *wasmcheck.Module // its imports and exports
	Elapsed   time.Duration     // wall time of the whole build
}

// Build builds opts.Package into opts.Output (see the package comment).
func Build(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Package == "" || opts.Output == "" {
		return nil, fmt.Errorf("builder: Package and Output are required")
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.Go == "" {
		opts.Go = "go"
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir

	g := goTool{path: opts.Go, dir: opts.Dir}
	env, err := g.env(ctx)
	if err != nil {
		return nil, err
	}
	gen, err := generate(ctx, g, env, opts)
	if err != nil {
		return nil, err
	}
	out := absPath(opts.Dir, opts.Output)
	mod, err := compile(ctx, opts, gen, out)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	return &Result{
		Output:    out,
		Size:      info.Size(),
		GoVersion: env.GOVERSION,
		Module:    mod,
		Elapsed:   time.Since(start),
	}, nil
}

// generated names what generate wrote.
type generated struct {
	workFile string // go.work to build with
	overlay  string // overlay.json, "" without the runtime patch
}

// generate brings the work directory up to date: the SDK copy with the glue,
// go.work and, unless disabled, the runtime overlay.
func generate(ctx context.Context, g goTool, env goEnv, opts Options) (generated, error) {
	modRoot := filepath.Dir(env.GOMOD)
	workDir := opts.WorkDir
	if workDir == "" {
		workDir = filepath.Join(modRoot, "build")
	}
	workDir = absPath(opts.Dir, workDir)
	goLine, err := g.goDirective(ctx)
	if err != nil {
		return generated{}, err
	}
	sdk, err := g.locateModule(ctx, SDKModule)
	if err != nil {
		return generated{}, fmt.Errorf("locating %s: %w", SDKModule, err)
	}
	if sdk.Version != SDKVersion {
		return generated{}, fmt.Errorf("go.mod requires %s %s, but the ABI glue in internal/abiglue is written for %s: review the glue against that version first",
			SDKModule, sdk.Version, SDKVersion)
	}
	files, err := sdkFiles(sdk.Dir)
	if err != nil {
		return generated{}, err
	}
	sdkDir := filepath.Join(workDir, "sdk")
	if _, err := syncTree(sdkDir, files); err != nil {
		return generated{}, fmt.Errorf("writing the SDK copy to %s: %w", sdkDir, err)
	}
	gen := generated{workFile: filepath.Join(workDir, "go.work")}
	if _, err := writeFileIfChanged(gen.workFile, workspace(goLine, workDir, modRoot, sdkDir, sdk.Version)); err != nil {
		return generated{}, fmt.Errorf("writing %s: %w", gen.workFile, err)
	}
	if !opts.NoRuntimePatch {
		if gen.overlay, err = writeRuntimeOverlay(filepath.Join(workDir, "overlay"), env.GOROOT, env.GOVERSION); err != nil {
			return generated{}, err
		}
	}
	return gen, nil
}

// compile runs go build for wasip1 into a temporary file next to out, checks
// the module and only then renames it to out: a reader of out never sees a
// partial or unchecked module, and concurrent builds of the same output do
// not write the same file.
func compile(ctx context.Context, opts Options, gen generated, out string) (*wasmcheck.Module, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(filepath.Dir(out), fmt.Sprintf(".%s.%d.building", filepath.Base(out), os.Getpid()))
	defer os.Remove(tmp)

	tags := strings.Join(append([]string{abiglue.BuildTag}, opts.Tags...), ",")
	args := []string{"build", "-tags", tags, "-buildmode=c-shared", "-trimpath"}
	if gen.overlay != "" {
		args = append(args, "-overlay", gen.overlay)
	}
	if opts.LDFlags != "" {
		args = append(args, "-ldflags", opts.LDFlags)
	}
	args = append(args, "-o", tmp, opts.Package)
	cmd := exec.CommandContext(ctx, opts.Go, args...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK="+gen.workFile)
	cmd.Stdout = opts.Log
	cmd.Stderr = opts.Log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("GOOS=wasip1 GOARCH=wasm GOWORK=%s %s %s: %w", gen.workFile, opts.Go, strings.Join(args, " "), err)
	}
	mod, err := wasmcheck.CheckFile(tmp)
	if err != nil {
		return nil, fmt.Errorf("the built module is not a loadable proxy-wasm plugin: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return nil, err
	}
	return mod, nil
}

// workspace renders the go.work that builds the main module against the SDK
// copy. Paths are relative to the work directory when it sits in the module
// (build/), so the file stays valid if the checkout moves.
func workspace(goLine, workDir, modRoot, sdkDir, sdkVersion string) []byte {
	rel := func(p string) string {
		r, err := filepath.Rel(workDir, p)
		if err != nil || strings.HasPrefix(r, ".."+string(filepath.Separator)+"..") {
			return filepath.ToSlash(p) // far apart: absolute is clearer
		}
		r = filepath.ToSlash(r)
		if !strings.HasPrefix(r, ".") {
			r = "./" + r
		}
		return r
	}
	return []byte(fmt.Sprintf(`// Code generated by internal/tools/wasmbuild. DO NOT EDIT.
// The main module, built against the copy of %[1]s
// that carries the standard-Go ABI glue (internal/abiglue).

go %[2]s

use %[3]s

replace %[1]s %[4]s => %[5]s
`, SDKModule, goLine, rel(modRoot), sdkVersion, rel(sdkDir)))
}
