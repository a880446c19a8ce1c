package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
)

// Plugin packages, relative to the main module's root.
const (
	GuardPackage           = "./filter"
	PassthroughPackage     = "./internal/bench/plugins/passthrough"
	PassthroughCopyPackage = "./internal/bench/plugins/passthroughcopy"
	GCProbePackage         = "./internal/bench/plugins/gcprobe"
	FloorPackage           = "./internal/bench/plugins/floor"
	PathFloorPackage       = "./internal/bench/plugins/pathfloor"
)

// Wasm holds the modules a benchmark compares.
type Wasm struct {
	Guard           []byte // mcp-resume-guard
	Passthrough     []byte // does nothing
	PassthroughCopy []byte // copies each response body chunk out and back
	GCProbe         []byte // runs a full GC in every request
	Floor           []byte // makes only the host calls the guard cannot do without
	PathFloor       []byte // reads :path alone: the floor of an unguarded request
	// BuildTime is the wall time of each build, by package.
	BuildTime map[string]time.Duration
}

// BuildOptions say where BuildPlugins works.
type BuildOptions struct {
	// Root is a directory inside the main module, where the go commands
	// run ("" = the current directory).
	Root string
	// Dir receives mcp-resume-guard.wasm, passthrough.wasm,
	// passthroughcopy.wasm, gcprobe.wasm, floor.wasm and pathfloor.wasm
	// (relative to Root).
	Dir string
	// WorkDir is the builder's work directory (SDK copy, go.work, runtime
	// overlay); "" = build/ at the module root.
	WorkDir string
	// Log receives the builder's progress (nil: discarded).
	Log io.Writer
}

// BuildPlugins builds the guard, its baselines and the floor with the project's
// builder (same toolchain, SDK, ABI glue and runtime patch) and reads them.
func BuildPlugins(ctx context.Context, opts BuildOptions) (*Wasm, error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	w := &Wasm{BuildTime: map[string]time.Duration{}}
	for _, p := range w.files() {
		res, err := builder.Build(ctx, builder.Options{
			Package: p.pkg, Output: filepath.Join(opts.Dir, p.file),
			Dir: opts.Root, WorkDir: opts.WorkDir, Log: log,
		})
		if err != nil {
			return nil, fmt.Errorf("bench: building %s: %w", p.pkg, err)
		}
		b, err := os.ReadFile(res.Output)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		*p.dst = b
		w.BuildTime[p.pkg] = res.Elapsed
	}
	return w, nil
}

// ReadPlugins reads the modules an earlier BuildPlugins wrote to dir,
// without building (a process that must not start children: under
// valgrind, their signals stop callgrind).
func ReadPlugins(dir string) (*Wasm, error) {
	w := &Wasm{}
	for _, p := range w.files() {
		b, err := os.ReadFile(filepath.Join(dir, p.file))
		if err != nil {
			return nil, fmt.Errorf("bench: %w (make bench or go run ./internal/tools/bench -v8 builds it)", err)
		}
		*p.dst = b
	}
	return w, nil
}

// plugin is one module of a Wasm: its package, file and field.
type plugin struct {
	pkg, file string
	dst       *[]byte
}

func (w *Wasm) files() []plugin {
	return []plugin{
		{GuardPackage, "mcp-resume-guard.wasm", &w.Guard},
		{PassthroughPackage, "passthrough.wasm", &w.Passthrough},
		{PassthroughCopyPackage, "passthroughcopy.wasm", &w.PassthroughCopy},
		{GCProbePackage, "gcprobe.wasm", &w.GCProbe},
		{FloorPackage, "floor.wasm", &w.Floor},
		{PathFloorPackage, "pathfloor.wasm", &w.PathFloor},
	}
}
