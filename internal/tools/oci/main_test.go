package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[hdr.Name] = true
	}
	for _, want := range []string{"oci-layout", "index.json", "blobs/sha256/"} {
		if !names[want] {
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
