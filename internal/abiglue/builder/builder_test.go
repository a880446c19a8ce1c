package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func goTestTool(t *testing.T) goTool {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return goTool{path: "go", dir: wd}
}

// TestRuntimeEditsApplyToLocalGo applies the runtime patch to this
// toolchain's sources: it must find every expected piece exactly once.
func TestRuntimeEditsApplyToLocalGo(t *testing.T) {
	env, err := goTestTool(t).env(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, edits := range runtimeEdits {
		src, err := os.ReadFile(filepath.Join(env.GOROOT, "src", "runtime", name))
		if err != nil {
			t.Fatal(err)
		}
		out, err := patchRuntimeFile(name, string(src), env.GOVERSION, edits)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(out, "[wasmbuild patch]"); got < len(edits) {
			t.Errorf("%s: %d patch markers, want at least %d", name, got, len(edits))
		}
		if !strings.Contains(out, "//go:build wasip1") && name == "netpoll_wasip1.go" {
			t.Errorf("%s: build constraint lost", name)
		}
	}
}

// TestRuntimePatchFailsLoudly checks the error for a runtime source that
// changed: it names the file and the Go version.
func TestRuntimePatchFailsLoudly(t *testing.T) {
	edits := runtimeEdits["netpoll_wasip1.go"]
	for name, src := range map[string]string{
		"missing":   "package runtime\n\nfunc netpoll(delay int64) (gList, int32) { return gList{}, 0 }\n",
		"ambiguous": strings.Repeat(edits[0].old, 2),
	} {
		_, err := patchRuntimeFile("netpoll_wasip1.go", src, "go9.99.1", edits)
		if err == nil {
			t.Fatalf("%s: patch applied to a source it was not written for", name)
		}
		for _, want := range []string{"runtime/netpoll_wasip1.go", "go9.99.1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not name %q", name, err, want)
			}
		}
	}
}

// TestWriteRuntimeOverlayIsIdempotent writes the overlay twice: the second
// run changes nothing, and a damaged file is repaired.
func TestWriteRuntimeOverlayIsIdempotent(t *testing.T) {
	env, err := goTestTool(t).env(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	overlay, err := writeRuntimeOverlay(dir, env.GOROOT, env.GOVERSION)
	if err != nil {
		t.Fatal(err)
	}
	patched := filepath.Join(dir, "runtime", "netpoll_wasip1.go")
	want, err := os.ReadFile(patched)
	if err != nil {
		t.Fatal(err)
	}
	json, _ := os.ReadFile(overlay)
	if !strings.Contains(string(json), patched) {
		t.Errorf("overlay.json does not map to %s:\n%s", patched, json)
	}
	if err := os.WriteFile(patched, []byte("broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := writeRuntimeOverlay(dir, env.GOROOT, env.GOVERSION); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(patched); string(got) != string(want) {
		t.Error("a damaged overlay file was not regenerated")
	}
}

func TestSyncTree(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"a.go": []byte("a"), "sub/b.go": []byte("b")}
	if n, err := syncTree(dir, files); err != nil || n != 2 {
		t.Fatalf("first sync: %d changes, %v", n, err)
	}
	if n, err := syncTree(dir, files); err != nil || n != 0 {
		t.Fatalf("unchanged sync: %d changes, %v", n, err)
	}
	os.MkdirAll(filepath.Join(dir, "stale"), 0o755)
	os.WriteFile(filepath.Join(dir, "stale", "x.go"), []byte("x"), 0o644)
	files["a.go"] = []byte("a2")
	if n, err := syncTree(dir, files); err != nil || n != 2 {
		t.Fatalf("sync after edits: %d changes, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale")); !os.IsNotExist(err) {
		t.Errorf("stale directory survived: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(got) != "a2" {
		t.Errorf("a.go = %q", got)
	}
}

// TestSyncTreeRepairsReadOnlyCopy syncs over a tree whose directories are
// read-only, as a hand-made copy of the module cache would be.
func TestSyncTreeRepairsReadOnlyCopy(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "old.go"), []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	os.Chmod(sub, 0o555)
	t.Cleanup(func() { os.Chmod(sub, 0o755) })
	if _, err := syncTree(dir, map[string][]byte{"sub/new.go": []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sub, "old.go")); !os.IsNotExist(err) {
		t.Errorf("old.go survived: %v", err)
	}
}

func TestWorkspace(t *testing.T) {
	got := string(workspace("1.26.8", "/src/repo/build", "/src/repo", "/src/repo/build/sdk", "v0.24.0"))
	for _, want := range []string{"go 1.26.8\n", "use ..\n", "replace " + SDKModule + " v0.24.0 => ./sdk\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("go.work lacks %q:\n%s", want, got)
		}
	}
	far := string(workspace("1.26.8", "/tmp/x/work", "/src/repo", "/tmp/x/work/sdk", "v0.24.0"))
	if !strings.Contains(far, "use /src/repo\n") {
		t.Errorf("a work dir outside the module should use an absolute path:\n%s", far)
	}
}

// TestSDKFiles reads the SDK from the module cache and adds the glue.
func TestSDKFiles(t *testing.T) {
	m, err := goTestTool(t).locateModule(context.Background(), SDKModule)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != SDKVersion {
		t.Fatalf("go.mod requires %s %s; the glue is written for %s", SDKModule, m.Version, SDKVersion)
	}
	files, err := sdkFiles(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go.mod", "proxywasm/hostcall.go", "proxywasm/internal/abiglue_host.go", "proxywasm/internal/abiglue_memory.go"} {
		if _, ok := files[want]; !ok {
			t.Errorf("SDK copy lacks %s", want)
		}
	}
	for name := range files {
		if strings.HasPrefix(name, "examples/") || strings.HasPrefix(name, "e2e/") {
			t.Errorf("SDK copy carries %s", name)
		}
	}
}

// TestBuildRejectsNonPlugin builds a WASI program without the SDK: the build
// must fail on the module check and leave no output behind.
func TestBuildRejectsNonPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "x.wasm")
	_, err := Build(context.Background(), Options{
		Package: "./testdata/notaplugin",
		Output:  out,
		WorkDir: filepath.Join(dir, "work"),
		Log:     &strings.Builder{},
	})
	if err == nil || !strings.Contains(err.Error(), `missing export "proxy_on_memory_allocate"`) {
		t.Fatalf("Build error = %v, want a missing-export failure", err)
	}
	if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
		t.Errorf("a rejected module was written to %s", out)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".building") {
			t.Errorf("temporary %s left behind", e.Name())
		}
	}
}
