// Command release assembles a release in one directory (make release
// VERSION=vX.Y.Z runs it after make build and make oci with that VERSION):
//
//	mcp-resume-guard-vX.Y.Z.wasm         the plugin, stamped with the version
//	mcp-resume-guard-vX.Y.Z.wasm.sha256  its SHA-256, as sha256sum -c reads it
//	mcp-resume-guard-vX.Y.Z-oci.tar      the OCI image layout (make oci), annotated with the version
//	release-notes.md                     CHANGELOG.md's section of the version, with the image and its digests
//
// It refuses a version CHANGELOG.md has no section for, a .wasm or an image
// not stamped with the version, and an image layout that is not the
// plugin's.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/oci"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	version := fs.String("version", "", "the release's version, vX.Y.Z")
	wasmPath := fs.String("wasm", "build/mcp-resume-guard.wasm", "the plugin, built with this version")
	ociPath := fs.String("oci", "build/mcp-resume-guard-oci.tar", "its OCI image layout (make oci)")
	changelog := fs.String("changelog", "CHANGELOG.md", "the changelog (Keep a Changelog)")
	image := fs.String("image", "ghcr.io/mcp-resume-guard/mcp-resume-guard", "where the release workflow pushes the image (named in the notes)")
	dir := fs.String("o", "build/release", "the directory to write (emptied first)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !semver.MatchString(*version) {
		return fmt.Errorf("-version %q: want vX.Y.Z", *version)
	}
	cl, err := os.ReadFile(*changelog)
	if err != nil {
		return err
	}
	notes, err := Section(string(cl), strings.TrimPrefix(*version, "v"))
	if err != nil {
		return fmt.Errorf("%s: %w", *changelog, err)
	}
	wasm, err := os.ReadFile(*wasmPath)
	if err != nil {
		return err
	}
	if !bytes.Contains(wasm, []byte(*version)) {
		return fmt.Errorf("%s is not stamped with %s: build it with make build VERSION=%s", *wasmPath, *version, *version)
	}
	layoutTar, err := os.ReadFile(*ociPath)
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
		return fmt.Errorf("%s: %w", *ociPath, err)
	}
	inImage, err := oci.PluginWasm(img)
	if err != nil {
		return fmt.Errorf("%s: %w", *ociPath, err)
	}
	if !bytes.Equal(inImage, wasm) {
		return fmt.Errorf("%s holds another plugin.wasm than %s: run make oci after make build", *ociPath, *wasmPath)
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	if got := m.Annotations[oci.VersionAnnotation]; got != *version {
		return fmt.Errorf("%s: annotation %s is %q, want %s", *ociPath, oci.VersionAnnotation, got, *version)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}

	if err := os.RemoveAll(*dir); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	base := "mcp-resume-guard-" + *version
	sum := sha256.Sum256(wasm)
	wasmSum := hex.EncodeToString(sum[:])
	body := "# mcp-resume-guard " + *version + "\n\n" + notes + "\n\n## Artifacts\n\n" +
		"- OCI image `" + *image + ":" + *version + "`, manifest digest `" + digest.String() + "`: " +
		"pin it as `oci://" + *image + "@" + digest.String() + "`, or as the WasmPlugin's `sha256: " + digest.Hex + "`.\n" +
		"- `" + base + ".wasm` (" + fmt.Sprint(len(wasm)) + " bytes), SHA-256 `" + wasmSum + "`: what Envoy loads from a file or an HTTP URL (`vm_config.code.remote.sha256`).\n" +
		"- `" + base + "-oci.tar`: the same image as an OCI image layout, for your own registry (`skopeo copy oci-archive:…`).\n"
	files := []struct {
		name string
		data []byte
	}{
		{base + ".wasm", wasm},
		{base + ".wasm.sha256", []byte(wasmSum + "  " + base + ".wasm\n")},
		{base + "-oci.tar", layoutTar},
		{"release-notes.md", []byte(body)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(*dir, f.name), f.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(*dir, f.name))
	}
	fmt.Fprintf(stdout, "image %s:%s: manifest digest %s\n", *image, *version, digest)
	return nil
}

// Section returns the body of a Keep a Changelog section "## [version]"
// (with or without a date after it), up to the next "## " heading or the
// link definitions at the end, trimmed. An empty section is an error: a
// release says what it holds.
func Section(changelog, version string) (string, error) {
	lines := strings.Split(changelog, "\n")
	start := -1
	for i, l := range lines {
		if l == "## ["+version+"]" || strings.HasPrefix(l, "## ["+version+"] ") {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no section \"## [%s]\"", version)
	}
	end := len(lines)
	for i := start; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") || strings.HasPrefix(lines[i], "[") && strings.Contains(lines[i], "]: ") {
			end = i
			break
		}
	}
	body := strings.TrimSpace(strings.Join(lines[start:end], "\n"))
	if body == "" {
		return "", errors.New("section \"## [" + version + "]\" is empty")
	}
	return body, nil
}
