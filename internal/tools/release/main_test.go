package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/oci"
)

// TestChangelog: the repository's CHANGELOG.md has the section the lead
// fills and the first release's, which make release can cut.
func TestChangelog(t *testing.T) {
	b, err := os.ReadFile("../../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n## [Unreleased]\n") {
		t.Error("CHANGELOG.md has no ## [Unreleased] section")
	}
	notes, err := Section(string(b), "0.1.0")
	if err != nil || !strings.Contains(notes, "### Added") {
		t.Errorf("the 0.1.0 section: %q, %v", notes, err)
	}
}

func TestSection(t *testing.T) {
	cl := "# Changelog\n\n## [Unreleased]\n\n- next\n\n## [1.1.0] - 2027-01-02\n\n### Fixed\n\n- a\n\n## [1.0.0]\n\n- b\n\n## [0.9.0]\n\n[1.1.0]: https://example.com/1.1.0\n"
	for version, want := range map[string]string{"1.1.0": "### Fixed\n\n- a", "1.0.0": "- b", "Unreleased": "- next"} {
		if got, err := Section(cl, version); err != nil || got != want {
			t.Errorf("Section(%s) = %q, %v; want %q", version, got, err, want)
		}
	}
	for _, version := range []string{"0.9.0", "2.0.0", "1.1"} {
		if _, err := Section(cl, version); err == nil {
			t.Errorf("Section(%s): no error for a missing or empty section", version)
		}
	}
}

// layoutFor writes what make build and make oci would for version.
func layoutFor(t *testing.T, dir, version, annotated string) (wasmPath, ociPath string, wasm []byte) {
	t.Helper()
	wasm = append([]byte("\x00asm\x01\x00\x00\x00 plugin "), version...)
	img, err := oci.Image(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = oci.Annotate(img, map[string]string{oci.VersionAnnotation: annotated}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := oci.WriteLayout(&buf, img, "latest"); err != nil {
		t.Fatal(err)
	}
	wasmPath, ociPath = filepath.Join(dir, "p.wasm"), filepath.Join(dir, "p-oci.tar")
	if err := os.WriteFile(wasmPath, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ociPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return wasmPath, ociPath, wasm
}

// TestRelease: the four files, the checksum sha256sum -c reads, the notes
// cut from the changelog with the image's manifest digest.
func TestRelease(t *testing.T) {
	dir := t.TempDir()
	wasmPath, ociPath, wasm := layoutFor(t, dir, "v1.2.3", "v1.2.3")
	cl := filepath.Join(dir, "CHANGELOG.md")
	os.WriteFile(cl, []byte("## [1.2.3] - 2027-01-01\n\n### Added\n\n- the thing\n"), 0o644)
	out := filepath.Join(dir, "release")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "stale.txt"), nil, 0o644)
	args := []string{"-version", "v1.2.3", "-wasm", wasmPath, "-oci", ociPath, "-changelog", cl, "-o", out, "-image", "ghcr.io/o/mcp-resume-guard"}
	if err := run(args, io.Discard); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := "mcp-resume-guard-v1.2.3-oci.tar mcp-resume-guard-v1.2.3.wasm mcp-resume-guard-v1.2.3.wasm.sha256 release-notes.md"; strings.Join(names, " ") != want {
		t.Errorf("build/release holds %v; want %s", names, want)
	}
	sum := sha256.Sum256(wasm)
	if b, _ := os.ReadFile(filepath.Join(out, "mcp-resume-guard-v1.2.3.wasm.sha256")); string(b) != hex.EncodeToString(sum[:])+"  mcp-resume-guard-v1.2.3.wasm\n" {
		t.Errorf("sha256 file: %q", b)
	}
	img, err := oci.ReadLayout(mustRead(t, ociPath), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	notes := string(mustRead(t, filepath.Join(out, "release-notes.md")))
	for _, want := range []string{"# mcp-resume-guard v1.2.3\n\n### Added\n\n- the thing\n", "`ghcr.io/o/mcp-resume-guard:v1.2.3`, manifest digest `" + digest.String() + "`", "sha256: " + digest.Hex} {
		if !strings.Contains(notes, want) {
			t.Errorf("release notes lack %q:\n%s", want, notes)
		}
	}
	if !bytes.Equal(mustRead(t, filepath.Join(out, "mcp-resume-guard-v1.2.3.wasm")), wasm) || !bytes.Equal(mustRead(t, filepath.Join(out, "mcp-resume-guard-v1.2.3-oci.tar")), mustRead(t, ociPath)) {
		t.Error("the released .wasm or image differs from the build")
	}
}

func TestReleaseRefuses(t *testing.T) {
	dir := t.TempDir()
	cl := filepath.Join(dir, "CHANGELOG.md")
	os.WriteFile(cl, []byte("## [1.2.3]\n\n- x\n"), 0o644)
	run1 := func(version, stamped, annotated string) error {
		d := t.TempDir()
		w, o, _ := layoutFor(t, d, stamped, annotated)
		return run([]string{"-version", version, "-wasm", w, "-oci", o, "-changelog", cl, "-o", filepath.Join(d, "r")}, io.Discard)
	}
	for _, tc := range []struct{ version, stamped, annotated, want string }{
		{"1.2.3", "1.2.3", "1.2.3", "want vX.Y.Z"},
		{"v1.2.4", "v1.2.4", "v1.2.4", `no section "## [1.2.4]"`},
		{"v1.2.3", "dev", "v1.2.3", "not stamped with v1.2.3"},
		{"v1.2.3", "v1.2.3", "dev", `annotation org.opencontainers.image.version is "dev"`},
	} {
		if err := run1(tc.version, tc.stamped, tc.annotated); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
