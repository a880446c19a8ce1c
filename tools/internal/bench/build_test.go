package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBaselineWasmFile: a .wasm baseline is read as it is, named by its
// path.
func TestBaselineWasmFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.wasm")
	if err := os.WriteFile(path, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, name, err := Baseline(context.Background(), "../../..", path, t.TempDir(), nil)
	if err != nil || string(b) != "\x00asm" || name != path {
		t.Errorf("got %q, %q, %v", b, name, err)
	}
	if _, _, err := Baseline(context.Background(), "../../..", "no-such-ref-or-file", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "neither a .wasm file nor a commit") {
		t.Errorf("an unknown ref: %v", err)
	}
}

// TestBaselineCommit builds HEAD as a baseline, in a git worktree with its
// own make build: a .wasm comes out, is kept in the cache directory and read
// from there the second time, and no worktree is left behind.
func TestBaselineCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a commit in a git worktree")
	}
	ctx := context.Background()
	cache := t.TempDir()
	b, name, err := Baseline(ctx, "../../..", "HEAD", cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1<<20 || string(b[:4]) != "\x00asm" || len(name) != 12 {
		t.Fatalf("baseline of %d bytes named %q", len(b), name)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "baseline-*.wasm"))
	if len(files) != 1 {
		t.Fatalf("cache holds %q, want one baseline", files)
	}
	if err := os.WriteFile(files[0], []byte("cached"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _, err := Baseline(ctx, "../../..", "HEAD", cache, nil); err != nil || string(b) != "cached" {
		t.Errorf("second call: %q, %v; want the cached file", b, err)
	}
	list, err := git(ctx, "../../..", "worktree", "list")
	if err != nil || strings.Contains(list, "bench-baseline-") {
		t.Errorf("worktrees left: %v\n%s", err, list)
	}
}
