package main

import (
	"bytes"
	"crypto/elliptic"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

// scratchCopy copies the files git tracks in this repository (as they are
// in the working tree, with the untracked ones it does not ignore) into a
// new repository in a temporary directory, committed, and returns it.
func scratchCopy(t *testing.T) string {
	t.Helper()
	out, err := git(repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(repoRoot, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(filepath.Join(repoRoot, name))
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	mustGit(t, dir, "init", "-q", "-b", "main")
	commitAll(t, dir, "the repository as it is")
	return dir
}

// releaseCommit does what the lead's release commit does in dir: the
// [Unreleased] entries become the section of version, and every pin moves
// to it. With pins false it leaves the pins behind. It returns the first
// "### " heading of the released section, which the release notes carry.
func releaseCommit(t *testing.T, dir, version string, pins bool) (heading string) {
	t.Helper()
	cl := filepath.Join(dir, "CHANGELOG.md")
	b := string(mustRead(t, cl))
	if !strings.Contains(b, "\n## [Unreleased]\n") {
		t.Fatal("CHANGELOG.md has no ## [Unreleased] heading")
	}
	if len(unreleasedEntries(b)) == 0 {
		// Right after a release on main [Unreleased] is empty: give the
		// scratch release a change of its own to carry.
		b = strings.Replace(b, "\n## [Unreleased]\n", "\n## [Unreleased]\n\n### Added\n\n- A change made after the last release.\n", 1)
	}
	_, section, _ := strings.Cut(b, "\n## [Unreleased]\n")
	if i := strings.Index(section, "\n### "); i >= 0 {
		heading, _, _ = strings.Cut(section[i+1:], "\n")
	}
	writeFile(t, cl, strings.Replace(b, "\n## [Unreleased]\n", "\n## [Unreleased]\n\n## ["+strings.TrimPrefix(version, "v")+"] - 2026-12-01\n", 1))
	if pins {
		if moved, err := MovePins(dir, version); err != nil || len(moved) == 0 {
			t.Fatalf("MovePins: %v, %d moved", err, len(moved))
		}
	}
	commitAll(t, dir, "release "+version)
	return heading
}

// TestReleaseInScratchCopy: in a copy of this repository, make release
// VERSION=v9.9.9 DRY_RUN=1 refuses a release commit that leaves the pins
// behind, and accepts one that moves them, changing nothing; then make
// release builds the release for real, signed with a cosign key pair, and
// its SBOM lists the modules the Go command links into the .wasm.
func TestReleaseInScratchCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin in a copy of the repository")
	}
	start := time.Now()
	dir := scratchCopy(t)
	t.Logf("copied the repository in %v", time.Since(start).Round(time.Millisecond))
	releaseCommit(t, dir, "v9.9.9", false)
	out, err := makeRelease(t, dir, "VERSION=v9.9.9", "DRY_RUN=1")
	if err == nil || !strings.Contains(out, "pin another version than v9.9.9") || strings.Contains(out, "[Unreleased] still has") {
		t.Fatalf("a release commit that leaves the pins behind: %v\n%s", err, out)
	}
	mustGit(t, dir, "reset", "-q", "--hard", "HEAD~1")
	heading := releaseCommit(t, dir, "v9.9.9", true)
	if heading == "" {
		t.Fatal("the released section has no ### heading to look for in the notes")
	}
	out, err = makeRelease(t, dir, "VERSION=v9.9.9", "DRY_RUN=1")
	if err != nil {
		t.Fatalf("make release VERSION=v9.9.9 DRY_RUN=1 after the release commit: %v\n%s", err, out)
	}
	t.Logf("two dry runs after %v", time.Since(start).Round(time.Millisecond))
	for _, want := range []string{"dry run: nothing is built", "mcp-resume-guard-v9.9.9.cdx.json", "push ghcr.io/mcp-resume-guard/mcp-resume-guard:v9.9.9", "release notes:\n" + heading} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "build")); !os.IsNotExist(err) {
		t.Errorf("the dry run made build/ (%v)", err)
	}
	if s := mustGit(t, dir, "status", "--porcelain"); s != "" {
		t.Errorf("the dry run changed the tree: %s", s)
	}
	// The release commit is what TestPinsNameTheLatestRelease wants.
	pins, err := Pins(dir)
	if err != nil {
		t.Fatal(err)
	}
	if latest, _ := LatestRelease(string(mustRead(t, filepath.Join(dir, "CHANGELOG.md")))); latest != "v9.9.9" || checkPins(pins, latest, "") != nil {
		t.Errorf("after the release commit the latest release is %s and the pins: %v", latest, checkPins(pins, latest, ""))
	}

	// The real release, signed with a cosign key pair.
	privPEM, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("pw")))
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "cosign.key")
	writeFile(t, key, string(privPEM))
	cmd := exec.Command("make", "--no-print-directory", "release", "VERSION=v9.9.9", "SIGN_KEY="+key)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=pw")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release VERSION=v9.9.9: %v\n%s", err, b)
	}
	t.Logf("make release after %v", time.Since(start).Round(time.Millisecond))
	rel := filepath.Join(dir, "build", "release")
	wasm := mustRead(t, filepath.Join(rel, "mcp-resume-guard-v9.9.9.wasm"))
	if !bytes.Contains(wasm, []byte("v9.9.9")) {
		t.Error("the released .wasm is not stamped v9.9.9")
	}
	verifySignatures(t, rel, "release.pub", "mcp-resume-guard-v9.9.9.wasm", "mcp-resume-guard-v9.9.9-oci.tar", "mcp-resume-guard-v9.9.9.cdx.json")
	img, err := oci.ReadLayout(mustRead(t, filepath.Join(rel, "mcp-resume-guard-v9.9.9-oci.tar")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if m, err := img.Manifest(); err != nil || m.Annotations[oci.VersionAnnotation] != "v9.9.9" || m.Annotations[oci.RevisionAnnotation] != mustGit(t, dir, "rev-parse", "HEAD") {
		t.Errorf("the image's annotations: %v, %v", m.Annotations, err)
	}
	checkSBOM(t, dir, wasm, mustRead(t, filepath.Join(rel, "mcp-resume-guard-v9.9.9.cdx.json")))
}

// checkSBOM compares the SBOM's components with the modules that the Go
// command says the build links: go list -deps over the plugin package
// with the build's GOOS, GOARCH, tags and go.work (build/go.work, which
// replaces the SDK with the ABI-glue copy). go version -m would be the
// direct oracle, but on Go 1.26 it refuses a .wasm ("unrecognized file
// format"); when a Go release reads it, its module list is compared too.
func checkSBOM(t *testing.T, dir string, wasm, sbom []byte) {
	t.Helper()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(sbom), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("the SBOM does not decode as CycloneDX: %v", err)
	}
	if bom.SpecVersion != cdx.SpecVersion1_6 || bom.Metadata == nil || bom.Metadata.Component == nil || bom.Components == nil {
		t.Fatalf("the SBOM: spec %v, metadata %+v", bom.SpecVersion, bom.Metadata)
	}
	main := bom.Metadata.Component
	if main.Version != "v9.9.9" || main.PackageURL != "pkg:golang/github.com/mcp-resume-guard/mcp-resume-guard@v9.9.9" ||
		main.Hashes == nil || (*main.Hashes)[0].Value != sha256Hex(wasm) {
		t.Errorf("the SBOM's component: %+v", main)
	}
	var got []string
	replaced := map[string]bool{}
	for _, c := range *bom.Components {
		if c.Name == "std" {
			if !strings.HasPrefix(c.Version, "go1.") {
				t.Errorf("std %s", c.Version)
			}
			continue
		}
		got = append(got, c.Name+" "+c.Version)
		if c.PackageURL != goPURL(c.Name, c.Version) {
			t.Errorf("%s: purl %s", c.Name, c.PackageURL)
		}
		replaced[c.Name] = c.Modified != nil && *c.Modified
	}
	slices.Sort(got)

	list := exec.Command("go", "list", "-deps", "-tags", "abiglue",
		"-f", "{{with .Module}}{{if .Version}}{{.Path}} {{.Version}}{{with .Replace}} replaced{{end}}{{end}}{{end}}", "./filter")
	list.Dir = dir
	list.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK="+filepath.Join(dir, "build", "go.work"))
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps ./filter: %v", err)
	}
	var want []string
	wantReplaced := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, version, _ := strings.Cut(l, " ")
		version, rep := strings.CutSuffix(version, " replaced")
		if !slices.Contains(want, path+" "+version) {
			want = append(want, path+" "+version)
		}
		wantReplaced[path] = rep
	}
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) < 2 {
		t.Errorf("the SBOM lists\n  %s\nthe Go command links\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for path, rep := range wantReplaced {
		if replaced[path] != rep {
			t.Errorf("%s: replaced %v in the SBOM, %v in the build", path, replaced[path], rep)
		}
	}
	wasmFile := filepath.Join(dir, "build", "release", "mcp-resume-guard-v9.9.9.wasm")
	if b, err := exec.Command("go", "version", "-m", wasmFile).CombinedOutput(); err == nil {
		var deps []string
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "dep" {
				deps = append(deps, f[1]+" "+f[2])
			}
		}
		slices.Sort(deps)
		if !slices.Equal(got, deps) {
			t.Errorf("the SBOM lists %v; go version -m %v", got, deps)
		}
	} else if _, berr := buildinfo.ReadFile(wasmFile); berr == nil || !strings.Contains(berr.Error(), "unrecognized file format") {
		t.Errorf("go version -m fails on the .wasm (%v: %s), and debug/buildinfo says %v", err, b, berr)
	}
	var raw map[string]any
	if err := json.Unmarshal(sbom, &raw); err != nil || raw["bomFormat"] != "CycloneDX" || raw["specVersion"] != "1.6" {
		t.Errorf("the SBOM's JSON: bomFormat %v, specVersion %v (%v)", raw["bomFormat"], raw["specVersion"], err)
	}
}
