package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

func TestRunWritesLayout(t *testing.T) {
	dir := t.TempDir()
	wasmPath := filepath.Join(dir, "plugin.wasm")
	if err := os.WriteFile(wasmPath, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sub", "image.tar")
	var stdout bytes.Buffer
	if err := run([]string{"-wasm", wasmPath, "-o", out}, &stdout); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(stdout.String(), "manifest sha256:") {
		t.Errorf("output %q does not name the manifest digest", stdout.String())
	}
	names := readTar(t, out)
	for _, want := range []string{"oci-layout", "index.json", "blobs/sha256/"} {
		if _, ok := names[want]; !ok {
			t.Errorf("%s missing from %v", want, names)
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "x.wasm")
	if err := os.WriteFile(notWasm, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"missing input": {"-wasm", filepath.Join(dir, "absent.wasm"), "-o", filepath.Join(dir, "o.tar")},
		"not wasm":      {"-wasm", notWasm, "-o", filepath.Join(dir, "o.tar")},
		"stray arg":     {"-wasm", notWasm, "extra"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("%s: run succeeded; want an error", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o.tar")); err == nil {
		t.Error("a failed run left an output file")
	}
}

// readTar returns the entries of the tar archive at path by name.
func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if files[hdr.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

// manifestAnnotations reads the image layout tarball at path and returns
// the annotations of the manifest its index.json names.
func manifestAnnotations(t *testing.T, path string) map[string]string {
	t.Helper()
	files := readTar(t, path)
	var index struct{ Manifests []struct{ Digest string } }
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d manifests; want 1", err, len(index.Manifests))
	}
	var manifest struct{ Annotations map[string]string }
	blob := "blobs/sha256/" + strings.TrimPrefix(index.Manifests[0].Digest, "sha256:")
	if err := json.Unmarshal(files[blob], &manifest); err != nil {
		t.Fatalf("%s: %v", blob, err)
	}
	return manifest.Annotations
}

func TestRunAnnotatesTheBuild(t *testing.T) {
	dir := t.TempDir()
	wasmPath := filepath.Join(dir, "plugin.wasm")
	if err := os.WriteFile(wasmPath, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		oci.VersionAnnotation:  "v1.2.0-4-g0123456",
		oci.RevisionAnnotation: "0123456789abcdef0123456789abcdef01234567",
		oci.SourceAnnotation:   "https://github.com/mcp-resume-guard/mcp-resume-guard",
	}
	out := filepath.Join(dir, "annotated.tar")
	args := []string{"-wasm", wasmPath, "-o", out,
		"-version", want[oci.VersionAnnotation], "-revision", want[oci.RevisionAnnotation], "-source", want[oci.SourceAnnotation]}
	if err := run(args, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := manifestAnnotations(t, out); !maps.Equal(got, want) {
		t.Errorf("manifest annotations %v; want %v", got, want)
	}

	plain := filepath.Join(dir, "plain.tar")
	if err := run([]string{"-wasm", wasmPath, "-o", plain}, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := manifestAnnotations(t, plain); len(got) != 0 {
		t.Errorf("manifest annotations %v without -version, -revision, -source; want none", got)
	}
}
