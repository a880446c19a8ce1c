package main

import (
	"bytes"
	"crypto"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

// repoRoot is the main module's directory.
const repoRoot = "../.."

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v0.1.0", "v0.2.0-rc.1", "v1.0.0-alpha", "v1.0.0-beta.2", "v10.20.30", "v1.0.0-0.3.7", "v1.0.0-x-y.7"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"", "0.1.0", "v0.1", "v1.2.3.4", "v01.2.3", "v1.2.3-", "v1.2.3-rc.01", "v1.2.3+build.1", "v1.2.3-rc..1", "V1.2.3", "dev", "v0.1.0-5-gabc1234-dirty x"} {
		if err := checkVersion(v); err == nil {
			t.Errorf("%s: accepted", v)
		}
	}
}

const sampleChangelog = "# Changelog\n\n## [Unreleased]\n\n- next\n\n## [1.2.0-rc.1] - 2027-02-01\n\n- rc\n\n## [1.1.0] - 2027-01-02\n\n### Fixed\n\n- a\n\n## [1.0.0]\n\n- b\n\n## [0.9.0]\n\n[1.1.0]: https://example.com/1.1.0\n"

func TestSection(t *testing.T) {
	for version, want := range map[string]string{"1.1.0": "### Fixed\n\n- a", "1.0.0": "- b", "Unreleased": "- next", "1.2.0-rc.1": "- rc"} {
		if got, err := Section(sampleChangelog, version); err != nil || got != want {
			t.Errorf("Section(%s) = %q, %v; want %q", version, got, err, want)
		}
	}
	for _, version := range []string{"0.9.0", "2.0.0", "1.1", "1.2.0"} {
		if _, err := Section(sampleChangelog, version); err == nil {
			t.Errorf("Section(%s): no error for a missing or empty section", version)
		}
	}
}

func TestLatestRelease(t *testing.T) {
	if got := Released(sampleChangelog); !slices.Equal(got, []string{"1.2.0-rc.1", "1.1.0", "1.0.0", "0.9.0"}) {
		t.Errorf("Released: %v", got)
	}
	if v, err := LatestRelease(sampleChangelog); err != nil || v != "v1.1.0" {
		t.Errorf("LatestRelease = %s, %v; want v1.1.0 (a pre-release is not pinned)", v, err)
	}
	if _, err := LatestRelease("# Changelog\n\n## [Unreleased]\n\n- x\n"); err == nil {
		t.Error("a changelog without a release has a latest release")
	}
	if got := unreleasedEntries(sampleChangelog); !slices.Equal(got, []string{"- next"}) {
		t.Errorf("unreleasedEntries: %q", got)
	}
	if got := unreleasedEntries("## [Unreleased]\n\n### Added\n\n## [1.0.0] - 2027-01-01\n\n- b\n"); len(got) != 0 {
		t.Errorf("group headings alone are entries: %q", got)
	}
}

// TestPinsNameTheLatestRelease: every manifest, doc and example in the
// repository that names a version of the plugin names the latest release
// of CHANGELOG.md, so that a release commit moves them with the section
// heading (make release refuses otherwise). The Istio WasmPlugin and the
// Envoy Gateway policy are among them.
func TestPinsNameTheLatestRelease(t *testing.T) {
	cl, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	latest, err := LatestRelease(string(cl))
	if err != nil {
		t.Fatal(err)
	}
	pins, err := Pins(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPins(pins, latest, "the latest release in CHANGELOG.md"); err != nil {
		t.Error(err)
	}
	files := map[string]bool{}
	for _, p := range pins {
		files[p.File] = true
	}
	for _, f := range []string{"envoy/istio/wasmplugin.yaml", "envoy/gateway/extensionpolicy.yaml", "README.md", "docs/deploy-istio.md"} {
		if !files[f] {
			t.Errorf("%s pins no version (pins found: %v)", f, pins)
		}
	}
}

func TestPinPattern(t *testing.T) {
	for line, want := range map[string]string{
		"  url: oci://ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.1.0":             "v0.1.0",
		"download `mcp-resume-guard-v0.2.0-rc.1.wasm`":                              "v0.2.0-rc.1",
		"`mcp-resume-guard-v0.1.0-oci.tar`":                                         "v0.1.0",
		"[release](https://github.com/o/r/releases/tag/v1.2.3)":                     "v1.2.3",
		"go run github.com/mcp-resume-guard/mcp-resume-guard/cmd/validate@v3.0.0 x": "v3.0.0",
		"`mcp-resume-guard v0.1.0 (<commit>) started`":                              "",
		"make release VERSION=v0.1.0":                                               "v0.1.0",
		"make release VERSION=vX.Y.Z":                                               "",
		"github.com/tetratelabs/proxy-wasm-go-sdk v0.24.0":                          "",
	} {
		got := ""
		if m := pinPattern.FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: pin %q; want %q", line, got, want)
		}
	}
}

// TestMovePins: -move-pins moves every pin, two on a line included, and
// nothing else; afterwards the pins check passes.
func TestMovePins(t *testing.T) {
	dir := gitRepo(t, map[string]string{
		"CHANGELOG.md": "## [1.0.0] - 2027-01-01\n\n- mcp-resume-guard:v0.9.0 stays\n",
		"docs/a.md":    "pull `mcp-resume-guard:v0.9.0`, or mcp-resume-guard-v0.9.0.wasm\nsdk v0.9.0 stays\n",
		"m.yaml":       "url: oci://x/mcp-resume-guard:v1.0.0\n",
	})
	var out strings.Builder
	if err := run([]string{"-move-pins", "-version", "v1.0.0", "-repo", dir}, &out, os.Getenv); err != nil {
		t.Fatal(err)
	}
	if got := string(mustRead(t, filepath.Join(dir, "docs/a.md"))); got != "pull `mcp-resume-guard:v1.0.0`, or mcp-resume-guard-v1.0.0.wasm\nsdk v0.9.0 stays\n" {
		t.Errorf("docs/a.md: %q", got)
	}
	if got := string(mustRead(t, filepath.Join(dir, "CHANGELOG.md"))); !strings.Contains(got, "v0.9.0 stays") {
		t.Errorf("the changelog's history moved: %q", got)
	}
	if strings.Count(out.String(), "moved ") != 2 {
		t.Errorf("output: %s", out.String())
	}
	pins, _ := Pins(dir)
	if err := checkPins(pins, "v1.0.0", ""); err != nil || len(pins) != 3 {
		t.Errorf("after -move-pins: %d pins, %v", len(pins), err)
	}
}

// gitRepo makes a repository in a temporary directory with files committed.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	mustGit(t, dir, "init", "-q", "-b", "main")
	commitAll(t, dir, "initial")
	return dir
}

func commitAll(t *testing.T, dir, msg string) {
	t.Helper()
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", msg)
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPreflightRefuses: each reason to refuse, alone and all at once.
func TestPreflightRefuses(t *testing.T) {
	released := "## [Unreleased]\n\n## [1.2.3] - 2027-01-01\n\n### Added\n\n- x\n"
	manifest := "url: oci://ghcr.io/o/mcp-resume-guard:v1.2.3\n"
	ok := gitRepo(t, map[string]string{"CHANGELOG.md": released, "m.yaml": manifest})
	for _, v := range []string{"v1.2.3"} {
		if _, err := preflight(ok, filepath.Join(ok, "CHANGELOG.md"), v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, tc := range []struct {
		name, changelog, manifest, version, dirty, tagOther string
		want                                                []string
	}{
		{name: "not semver", changelog: released, manifest: manifest, version: "1.2.3", want: []string{"want vX.Y.Z"}},
		{name: "no section", changelog: released, manifest: manifest, version: "v1.2.4", want: []string{`no section "## [1.2.4]"`}},
		{name: "unreleased entries", changelog: "## [Unreleased]\n\n### Fixed\n\n- y\n\n## [1.2.3] - 2027-01-01\n\n- x\n", manifest: manifest, version: "v1.2.3",
			want: []string{`[Unreleased] still has 1 entries (the first: "- y")`}},
		{name: "dirty", changelog: released, manifest: manifest, version: "v1.2.3", dirty: "m.yaml", want: []string{"the tree is dirty", "m.yaml"}},
		{name: "tag elsewhere", changelog: released, manifest: manifest, version: "v1.2.3", tagOther: "v1.2.3", want: []string{"tag v1.2.3 is commit"}},
		{name: "old pin", changelog: released, manifest: "url: oci://ghcr.io/o/mcp-resume-guard:v1.2.2\n", version: "v1.2.3",
			want: []string{"1 of 1 places pin another version than v1.2.3", "m.yaml:1: mcp-resume-guard:v1.2.2"}},
		{name: "everything", changelog: "## [Unreleased]\n\n- y\n", manifest: "url: oci://ghcr.io/o/mcp-resume-guard:v1.2.2\n", version: "v1.2.3", dirty: "untracked.txt",
			want: []string{`no section "## [1.2.3]"`, "[Unreleased] still has", "the tree is dirty", "?? untracked.txt", "pin another version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitRepo(t, map[string]string{"CHANGELOG.md": tc.changelog, "m.yaml": tc.manifest})
			if tc.tagOther != "" {
				mustGit(t, dir, "tag", tc.tagOther)
				commitAll(t, dir, "after the tag")
			}
			if tc.dirty != "" {
				writeFile(t, filepath.Join(dir, tc.dirty), "changed\n")
			}
			_, err := preflight(dir, filepath.Join(dir, "CHANGELOG.md"), tc.version)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v; want an error containing %q", err, w)
				}
			}
		})
	}
	// A pre-release leaves the pins on the latest release.
	rc := gitRepo(t, map[string]string{"CHANGELOG.md": "## [Unreleased]\n\n## [1.3.0-rc.1] - 2027-02-01\n\n- z\n\n" + released[len("## [Unreleased]\n\n"):], "m.yaml": manifest})
	if _, err := preflight(rc, filepath.Join(rc, "CHANGELOG.md"), "v1.3.0-rc.1"); err != nil {
		t.Errorf("pre-release: %v", err)
	}
}

// fakeBuild writes what make build and make oci would for version: a
// "plugin" that carries Go module information in the linker's format and
// the version, and its image layout annotated with annotated.
func fakeBuild(t *testing.T, dir, version, annotated string) (wasmPath, ociPath string, wasm []byte) {
	t.Helper()
	modinfo := "path\tgithub.com/mcp-resume-guard/mcp-resume-guard/filter\nmod\tgithub.com/mcp-resume-guard/mcp-resume-guard\t(devel)\t\n" +
		"dep\tgithub.com/tidwall/gjson\tv1.20.4\th1:3A/Gmx6kyM902v2nepualaq7aYIGhF0eykJBTiIxryw=\nbuild\tGOOS=wasip1\n"
	wasm = []byte("\x00asm\x01\x00\x00\x00 go1.26.8 " + string(modinfoStart) + modinfo + string(modinfoEnd) + " plugin " + version)
	_, layoutTar, err := oci.Pack(wasm, map[string]string{oci.VersionAnnotation: annotated}, "latest")
	if err != nil {
		t.Fatal(err)
	}
	wasmPath, ociPath = filepath.Join(dir, "p.wasm"), filepath.Join(dir, "p-oci.tar")
	writeFile(t, wasmPath, string(wasm))
	writeFile(t, ociPath, string(layoutTar))
	return wasmPath, ociPath, wasm
}

// TestRelease: the files, the checksum sha256sum -c reads, the notes cut
// from the changelog with the image's manifest digest, the SBOM, and with
// a cosign key pair the signatures cosign verify-blob --key checks.
func TestRelease(t *testing.T) {
	repo := gitRepo(t, map[string]string{"CHANGELOG.md": "## [1.2.3] - 2027-01-01\n\n### Added\n\n- the thing\n"})
	dir := t.TempDir()
	wasmPath, ociPath, wasm := fakeBuild(t, dir, "v1.2.3", "v1.2.3")
	password := "correct horse"
	privPEM, pubPEM, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "cosign.key")
	writeFile(t, key, string(privPEM))
	out := filepath.Join(dir, "release")
	writeFile(t, filepath.Join(out, "stale.txt"), "")
	args := []string{"-version", "v1.2.3", "-repo", repo, "-wasm", wasmPath, "-oci", ociPath, "-o", out, "-image", "ghcr.io/o/mcp-resume-guard", "-sign-key", key}
	env := map[string]string{"COSIGN_PASSWORD": password}
	if err := run(args, io.Discard, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := "mcp-resume-guard-v1.2.3-oci.tar mcp-resume-guard-v1.2.3-oci.tar.sig mcp-resume-guard-v1.2.3.cdx.json mcp-resume-guard-v1.2.3.cdx.json.sig " +
		"mcp-resume-guard-v1.2.3.wasm mcp-resume-guard-v1.2.3.wasm.sha256 mcp-resume-guard-v1.2.3.wasm.sig release-notes.md release.pub"
	if strings.Join(names, " ") != want {
		t.Errorf("build/release holds %v; want %s", names, want)
	}
	sum := sha256.Sum256(wasm)
	if b := mustRead(t, filepath.Join(out, "mcp-resume-guard-v1.2.3.wasm.sha256")); string(b) != hex.EncodeToString(sum[:])+"  mcp-resume-guard-v1.2.3.wasm\n" {
		t.Errorf("sha256 file: %q", b)
	}
	img, err := oci.ReadLayout(mustRead(t, ociPath), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	notes := string(mustRead(t, filepath.Join(out, "release-notes.md")))
	for _, want := range []string{"# mcp-resume-guard v1.2.3\n\n### Added\n\n- the thing\n", "`ghcr.io/o/mcp-resume-guard:v1.2.3`, manifest digest `" + digest.String() + "`", "sha256: " + digest.Hex, "mcp-resume-guard-v1.2.3.cdx.json"} {
		if !strings.Contains(notes, want) {
			t.Errorf("release notes lack %q:\n%s", want, notes)
		}
	}
	if !bytes.Equal(mustRead(t, filepath.Join(out, "mcp-resume-guard-v1.2.3.wasm")), wasm) || !bytes.Equal(mustRead(t, filepath.Join(out, "mcp-resume-guard-v1.2.3-oci.tar")), mustRead(t, ociPath)) {
		t.Error("the released .wasm or image differs from the build")
	}
	if !bytes.Equal(mustRead(t, filepath.Join(out, "release.pub")), pubPEM) {
		t.Error("release.pub is not the key pair's cosign.pub")
	}
	verifySignatures(t, out, "release.pub", "mcp-resume-guard-v1.2.3.wasm", "mcp-resume-guard-v1.2.3-oci.tar", "mcp-resume-guard-v1.2.3.cdx.json")

	// The wrong password, and no key: no release, or an unsigned one.
	env["COSIGN_PASSWORD"] = "wrong"
	if err := run(args, io.Discard, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "COSIGN_PASSWORD") {
		t.Errorf("wrong password: %v", err)
	}
	var stdout strings.Builder
	if err := run(args[:len(args)-2], &stdout, func(string) string { return "" }); err != nil || !strings.Contains(stdout.String(), "unsigned") {
		t.Errorf("without -sign-key: %v, %s", err, stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, "release.pub")); !os.IsNotExist(err) {
		t.Error("an unsigned release kept the last one's release.pub")
	}
}

// verifySignatures checks each file's .sig against the public key as
// cosign verify-blob --key PUB --signature FILE.sig FILE does (sigstore's
// signature.Verifier over the file's SHA-256), and that a changed file
// fails.
func verifySignatures(t *testing.T, dir, pub string, files ...string) {
	t.Helper()
	key, err := cryptoutils.UnmarshalPEMToPublicKey(mustRead(t, filepath.Join(dir, pub)))
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := signature.LoadVerifier(key, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		sig, err := base64.StdEncoding.DecodeString(string(mustRead(t, filepath.Join(dir, f+".sig"))))
		if err != nil {
			t.Fatalf("%s.sig is not base64: %v", f, err)
		}
		data := mustRead(t, filepath.Join(dir, f))
		if err := verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(data)); err != nil {
			t.Errorf("%s.sig does not verify: %v", f, err)
		}
		if err := verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(append(data, 0))); err == nil {
			t.Errorf("%s.sig verifies a changed %s", f, f)
		}
	}
}

func TestReleaseRefuses(t *testing.T) {
	repo := gitRepo(t, map[string]string{"CHANGELOG.md": "## [1.2.3]\n\n- x\n"})
	run1 := func(version, stamped, annotated string) error {
		d := t.TempDir()
		w, o, _ := fakeBuild(t, d, stamped, annotated)
		return run([]string{"-version", version, "-repo", repo, "-wasm", w, "-oci", o, "-o", filepath.Join(d, "r")}, io.Discard, os.Getenv)
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

// TestMakeReleaseRefusesOnMain: make release VERSION=v9.9.9 DRY_RUN=1 in
// this repository refuses before it builds anything: there is no section
// [9.9.9], and while [Unreleased] has entries it says so too.
func TestMakeReleaseRefusesOnMain(t *testing.T) {
	wasm := filepath.Join(repoRoot, "build", "mcp-resume-guard.wasm")
	before, _ := os.Stat(wasm)
	out, err := makeRelease(t, repoRoot, "VERSION=v9.9.9", "DRY_RUN=1")
	if err == nil {
		t.Fatalf("make release VERSION=v9.9.9 DRY_RUN=1 succeeded:\n%s", out)
	}
	want := []string{`no section "## [9.9.9]"`}
	if unreleasedEntries(string(mustRead(t, filepath.Join(repoRoot, "CHANGELOG.md")))) != nil {
		want = append(want, "[Unreleased] still has")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("make release does not say %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "wasmbuild") {
		t.Errorf("make release built before it refused:\n%s", out)
	}
	if after, _ := os.Stat(wasm); before != nil && (after == nil || !after.ModTime().Equal(before.ModTime())) {
		t.Error("make release changed build/mcp-resume-guard.wasm before it refused")
	}
}

// makeRelease runs make release with args in dir and returns its output.
func makeRelease(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "release"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
