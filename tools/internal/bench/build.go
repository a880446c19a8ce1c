package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
)

// Plugin packages, relative to the root of the product's module (the
// repository's root), which builds them all alike.
const (
	GuardPackage           = "./filter"
	PassthroughPackage     = "./internal/refplugins/passthrough"
	PassthroughCopyPackage = "./internal/refplugins/passthroughcopy"
	GCProbePackage         = "./internal/refplugins/gcprobe"
)

// Wasm holds the modules a run compares.
type Wasm struct {
	Guard           []byte // mcp-resume-guard
	Passthrough     []byte // does nothing
	PassthroughCopy []byte // copies each response body chunk out and back
	GCProbe         []byte // runs a full GC in every request
}

// BuildOptions say where BuildPlugins works.
type BuildOptions struct {
	// Root is the repository's root, the product's module, where the go
	// commands run ("" = the current directory).
	Root string
	// Dir receives mcp-resume-guard.wasm, passthrough.wasm,
	// passthroughcopy.wasm and gcprobe.wasm (relative to Root).
	Dir string
	// WorkDir is the builder's work directory (SDK copy, go.work, runtime
	// overlay); "" = build/ at the module root.
	WorkDir string
	// Log receives the builder's progress (nil: discarded).
	Log io.Writer
	// NoGuard leaves the guard unbuilt (the caller measures another
	// build of it).
	NoGuard bool
}

// BuildPlugins builds the guard and the do-nothing plugins with the
// project's builder (same toolchain, SDK, ABI glue and runtime patch) and
// reads them.
func BuildPlugins(ctx context.Context, opts BuildOptions) (*Wasm, error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	w := &Wasm{}
	for _, p := range []struct {
		pkg, file string
		dst       *[]byte
	}{
		{GuardPackage, "mcp-resume-guard.wasm", &w.Guard},
		{PassthroughPackage, "passthrough.wasm", &w.Passthrough},
		{PassthroughCopyPackage, "passthroughcopy.wasm", &w.PassthroughCopy},
		{GCProbePackage, "gcprobe.wasm", &w.GCProbe},
	} {
		if opts.NoGuard && p.pkg == GuardPackage {
			continue
		}
		res, err := builder.Build(ctx, builder.Options{
			Package: p.pkg, Output: filepath.Join(opts.Dir, p.file),
			Dir: opts.Root, WorkDir: opts.WorkDir, Log: log,
		})
		if err != nil {
			return nil, fmt.Errorf("bench: building %s: %w", p.pkg, err)
		}
		if *p.dst, err = os.ReadFile(res.Output); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	return w, nil
}

// DefaultBaseline is the build the budget compares with: the guard as it
// stood before issue 32 removed the tricks only a microbenchmark needed.
const DefaultBaseline = "1367a76"

// Baseline returns the guard the budget compares with, and its name. ref
// is a .wasm file, or a commit of the repository at root (anything git
// rev-parse resolves): then the commit is checked out in a git worktree of
// its own, built there with its own make build, and the .wasm kept in
// cacheDir as baseline-<commit>.wasm, which later runs read instead.
func Baseline(ctx context.Context, root, ref, cacheDir string, log io.Writer) ([]byte, string, error) {
	if log == nil {
		log = io.Discard
	}
	if strings.HasSuffix(ref, ".wasm") {
		b, err := os.ReadFile(ref)
		return b, ref, err
	}
	sha, err := git(ctx, root, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return nil, "", fmt.Errorf("bench: baseline %q is neither a .wasm file nor a commit: %w", ref, err)
	}
	name := sha[:12]
	cached := filepath.Join(cacheDir, "baseline-"+sha+".wasm")
	if b, err := os.ReadFile(cached); err == nil {
		return b, name, nil
	}
	tmp, err := os.MkdirTemp("", "bench-baseline-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	fmt.Fprintf(log, "bench: building the baseline %s in a git worktree (%s)\n", name, src)
	if _, err := git(ctx, root, "worktree", "add", "--detach", src, sha); err != nil {
		return nil, "", err
	}
	defer git(context.WithoutCancel(ctx), root, "worktree", "remove", "--force", src)
	cmd := exec.CommandContext(ctx, "make", "-C", src, "build")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("bench: make build of the baseline %s: %w", name, err)
	}
	b, err := os.ReadFile(filepath.Join(src, "build", "mcp-resume-guard.wasm"))
	if err != nil {
		return nil, "", fmt.Errorf("bench: the baseline's make build left no .wasm: %w", err)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, "", err
	}
	return b, name, os.WriteFile(cached, b, 0o644)
}

// git runs git in dir and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
