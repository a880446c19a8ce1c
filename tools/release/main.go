// Command release assembles a release in one directory. make release
// VERSION=vX.Y.Z[-rc.N] runs it twice: first with -check, which refuses
// before anything is built (no section of its own in CHANGELOG.md for the
// version, entries left under [Unreleased], a dirty tree, a tag on another
// commit, manifests or docs pinning another version; DRY_RUN=1 adds
// -dry-run, which also prints what would be built, written and pushed),
// then, after make build and make oci with that VERSION, to write the
// files below. -move-pins rewrites the repository's pins to a version, for
// the release commit (go run . -move-pins -version vX.Y.Z -repo ../..).
//
//	mcp-resume-guard-vX.Y.Z.wasm          the plugin, stamped with the version
//	mcp-resume-guard-vX.Y.Z.wasm.sha256   its SHA-256, as sha256sum -c reads it
//	mcp-resume-guard-vX.Y.Z-oci.tar       the OCI image layout (make oci), annotated with the version
//	mcp-resume-guard-vX.Y.Z.cdx.json      the SBOM: CycloneDX 1.6, the Go modules linked into the .wasm
//	release-notes.md                      CHANGELOG.md's section of the version, with the image and its digests
//
// and, with -sign-key (make release SIGN_KEY=cosign.key), a cosign
// signature FILE.sig of the .wasm, the image layout and the SBOM and the
// public key release.pub that verifies them (cosign verify-blob --key).
// The release workflow signs keyless with cosign instead.
//
// It refuses a .wasm or an image not stamped with the version, and an image
// layout that is not the plugin's. It is a module of its own
// (tools/release/go.mod) so that its SBOM, signing and registry
// dependencies stay out of the plugin's go.mod and the tools'.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	version, repo, changelog, wasm, oci, image, dir, signKey string
	check, dryRun                                            bool
}

func run(args []string, stdout io.Writer, getenv func(string) string) error {
	var o options
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.StringVar(&o.version, "version", "", "the release's version, vX.Y.Z or vX.Y.Z-rc.N")
	fs.StringVar(&o.repo, "repo", ".", "the repository (git status, the pins)")
	fs.StringVar(&o.changelog, "changelog", "", "the changelog (Keep a Changelog); default: CHANGELOG.md in -repo")
	fs.StringVar(&o.wasm, "wasm", "build/mcp-resume-guard.wasm", "the plugin, built with this version")
	fs.StringVar(&o.oci, "oci", "build/mcp-resume-guard-oci.tar", "its OCI image layout (make oci)")
	fs.StringVar(&o.image, "image", "ghcr.io/mcp-resume-guard/mcp-resume-guard", "where the release workflow pushes the image (named in the notes)")
	fs.StringVar(&o.dir, "o", "build/release", "the directory to write (emptied first)")
	fs.StringVar(&o.signKey, "sign-key", "", "a cosign.key (password in COSIGN_PASSWORD) or PEM private key to sign the files with; none: unsigned")
	fs.BoolVar(&o.check, "check", false, "only check that the version can be released (make release runs this before it builds)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "with -check: also print what make release would build, write and push")
	movePins := fs.Bool("move-pins", false, "only rewrite every pin of the repository to -version (the release commit's other half, with CHANGELOG.md's heading)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.changelog == "" {
		o.changelog = filepath.Join(o.repo, "CHANGELOG.md")
	}
	if *movePins {
		if err := checkVersion(o.version); err != nil {
			return err
		}
		moved, err := MovePins(o.repo, o.version)
		for _, p := range moved {
			fmt.Fprintf(stdout, "moved %s to %s\n", p, o.version)
		}
		return err
	}
	pre, err := preflight(o.repo, o.changelog, o.version)
	if err != nil {
		return err
	}
	if o.check {
		fmt.Fprintf(stdout, "release %s: CHANGELOG.md's section (%d lines), a clean tree at %s, %s\n",
			o.version, strings.Count(pre.Notes, "\n")+1, pre.Commit, pinSummary(pre))
		if o.dryRun {
			printPlan(stdout, o, pre)
		}
		return nil
	}
	return assemble(stdout, o, pre, getenv)
}

func pinSummary(pre *Preflight) string {
	if isPrerelease(pre.Version) {
		return fmt.Sprintf("a pre-release: the %d pins stay on the latest release", len(pre.Pins))
	}
	return fmt.Sprintf("%d pins name %s", len(pre.Pins), pre.Version)
}

// releaseFile names the files of a release.
func releaseFile(version, suffix string) string { return "mcp-resume-guard-" + version + suffix }

// printPlan says what make release would do after the check, changing nothing.
func printPlan(w io.Writer, o options, pre *Preflight) {
	v := o.version
	fmt.Fprintf(w, "dry run: nothing is built, written or pushed. make release VERSION=%s would:\n", v)
	fmt.Fprintf(w, "  build %s (make build VERSION=%s COMMIT=%s)\n", o.wasm, v, pre.Commit)
	fmt.Fprintf(w, "  pack %s (make oci), annotated %s=%s, %s=%s\n", o.oci, oci.VersionAnnotation, v, oci.RevisionAnnotation, pre.Commit)
	fmt.Fprintf(w, "  write %s/: %s, %s, %s, %s, release-notes.md",
		o.dir, releaseFile(v, ".wasm"), releaseFile(v, ".wasm.sha256"), releaseFile(v, "-oci.tar"), releaseFile(v, ".cdx.json"))
	if o.signKey != "" {
		fmt.Fprintf(w, ", their .sig signed with %s and release.pub", o.signKey)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "the release workflow would then push %s:%s and sign it, the files and their provenance keyless\n", o.image, v)
	fmt.Fprintf(w, "release notes:\n%s\n", pre.Notes)
}

// assemble checks the build against the version and writes the release.
func assemble(stdout io.Writer, o options, pre *Preflight, getenv func(string) string) error {
	wasm, err := os.ReadFile(o.wasm)
	if err != nil {
		return err
	}
	if !bytes.Contains(wasm, []byte(o.version)) {
		return fmt.Errorf("%s is not stamped with %s: build it with make build VERSION=%s", o.wasm, o.version, o.version)
	}
	layoutTar, err := os.ReadFile(o.oci)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mcp-resume-guard-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	img, err := oci.ReadLayout(layoutTar, tmp)
	if err != nil {
		return fmt.Errorf("%s: %w", o.oci, err)
	}
	inImage, err := oci.PluginWasm(img)
	if err != nil {
		return fmt.Errorf("%s: %w", o.oci, err)
	}
	if !bytes.Equal(inImage, wasm) {
		return fmt.Errorf("%s holds another plugin.wasm than %s: run make oci after make build", o.oci, o.wasm)
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	if got := m.Annotations[oci.VersionAnnotation]; got != o.version {
		return fmt.Errorf("%s: annotation %s is %q, want %s", o.oci, oci.VersionAnnotation, got, o.version)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	sbom, err := SBOM(wasm, o.version)
	if err != nil {
		return fmt.Errorf("%s: SBOM: %w", o.wasm, err)
	}
	var signer *Signer
	if o.signKey != "" {
		if signer, err = LoadSigner(o.signKey, []byte(getenv("COSIGN_PASSWORD"))); err != nil {
			return err
		}
	}

	v := o.version
	sum := sha256.Sum256(wasm)
	wasmSum := hex.EncodeToString(sum[:])
	body := "# mcp-resume-guard " + v + "\n\n" + pre.Notes + "\n\n## Artifacts\n\n" +
		"- OCI image `" + o.image + ":" + v + "`, manifest digest `" + digest.String() + "`: " +
		"pin it as `oci://" + o.image + "@" + digest.String() + "`, or as the WasmPlugin's `sha256: " + digest.Hex + "`.\n" +
		"- `" + releaseFile(v, ".wasm") + "` (" + fmt.Sprint(len(wasm)) + " bytes), SHA-256 `" + wasmSum + "`: what Envoy loads from a file or an HTTP URL (`vm_config.code.remote.sha256`).\n" +
		"- `" + releaseFile(v, "-oci.tar") + "`: the same image as an OCI image layout, for your own registry (`skopeo copy oci-archive:…`).\n" +
		"- `" + releaseFile(v, ".cdx.json") + "`: the SBOM, CycloneDX 1.6, of the Go modules linked into the `.wasm`.\n" +
		"\nVerify them as docs/operations.md (\"Verify a release\") shows: `cosign verify-blob`, `cosign verify`, `gh attestation verify`.\n"
	files := []relFile{
		{releaseFile(v, ".wasm"), wasm, true},
		{releaseFile(v, ".wasm.sha256"), []byte(wasmSum + "  " + releaseFile(v, ".wasm") + "\n"), false},
		{releaseFile(v, "-oci.tar"), layoutTar, true},
		{releaseFile(v, ".cdx.json"), sbom, true},
		{"release-notes.md", []byte(body), false},
	}
	if signer != nil {
		for _, f := range files {
			if !f.signed {
				continue
			}
			sig, err := signer.Sign(f.data)
			if err != nil {
				return err
			}
			files = append(files, relFile{f.name + ".sig", sig, false})
		}
		files = append(files, relFile{"release.pub", signer.PublicKeyPEM(), false})
	}

	if err := os.RemoveAll(o.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(o.dir, f.name), f.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(o.dir, f.name))
	}
	if signer == nil {
		fmt.Fprintln(stdout, "unsigned: make release SIGN_KEY=cosign.key signs with your key; the release workflow signs keyless")
	}
	fmt.Fprintf(stdout, "image %s:%s: manifest digest %s\n", o.image, v, digest)
	return nil
}

// relFile is a file of the release; signed ones get a .sig with -sign-key.
type relFile struct {
	name   string
	data   []byte
	signed bool
}
