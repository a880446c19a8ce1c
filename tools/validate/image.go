package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

// What make build and make oci write, relative to the repository's root
// (make validate's working directory): the image a pinned digest is
// compared with when -image names none.
const (
	builtImage = "build/mcp-resume-guard-oci.tar"
	builtWasm  = "build/mcp-resume-guard.wasm"
)

// image is the built plugin that pinned digests are compared with: the OCI
// image's manifest digest, and the SHA-256 of every .wasm file known to be
// the plugin (a manifest that pins one of those pins the file, not an
// image).
type image struct {
	path     string   // the image layout read ("" when none)
	manifest string   // its manifest's digest, hex (what Istio's sha256 and a url's @sha256: name); "" when no image was read
	wasms    []wasmAt // the .wasm files' SHA-256 (what an http(s) url's sha256 names)
	// strict: -image named the image, so every pinned digest must be its.
	// Otherwise (the build/ files, found by themselves) a digest that is
	// neither the image's nor a .wasm's may be a published release's: a
	// warning, not an error.
	strict bool
	// stale says that the image holds another .wasm than builtWasm: make
	// build ran after make oci.
	stale bool
	// compared and unchecked count the digests compared with the image,
	// and those that could not be (no image, no .wasm).
	compared, unchecked int
}

// wasmAt is the SHA-256 of a .wasm file and where it is.
type wasmAt struct {
	hex   string
	where string // "build/mcp-resume-guard.wasm", "plugin.wasm in build/mcp-resume-guard-oci.tar"
}

// loadImage reads an OCI image layout tarball (make oci's
// build/mcp-resume-guard-oci.tar) that -image names: every pinned digest
// must be its.
func loadImage(path string) (*image, error) {
	im, err := readLayout(path)
	if err != nil {
		return nil, err
	}
	im.strict = true
	return im, nil
}

// findBuilt returns what make build and make oci left in the working
// directory's build/ (builtImage, builtWasm), so that pinned digests are
// compared with it without -image; an image that holds no digest when
// there is none. warn says what could not be read.
func findBuilt() (im *image, warn string) {
	im = &image{}
	if _, err := os.Stat(builtImage); err == nil {
		read, err := readLayout(builtImage)
		if err != nil {
			warn = fmt.Sprintf("%v; pinned digests are compared with %s only", err, builtWasm)
		} else {
			im = read
		}
	}
	b, err := os.ReadFile(builtWasm)
	switch {
	case err == nil:
		sum := sha256.Sum256(b)
		w := hex.EncodeToString(sum[:])
		if len(im.wasms) > 0 && im.wasms[0].hex != w {
			im.stale = true
		}
		im.wasms = append(im.wasms, wasmAt{hex: w, where: builtWasm})
	case !errors.Is(err, fs.ErrNotExist):
		warn = err.Error()
	}
	return im, warn
}

// readLayout reads an image layout tarball's manifest digest and its
// plugin.wasm's SHA-256.
func readLayout(path string) (*image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "validate-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	img, err := oci.ReadLayout(b, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (make oci writes %s)", path, err, builtImage)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	wasm, err := oci.PluginWasm(img)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(wasm)
	return &image{path: path, manifest: d.Hex, wasms: []wasmAt{{hex: hex.EncodeToString(sum[:]), where: oci.PluginFileName + " in " + path}}}, nil
}

// known reports whether the image holds any digest to compare with.
func (im *image) known() bool { return im.manifest != "" || len(im.wasms) > 0 }

// sha256Hex is the form of a sha256 field and of a digest after @sha256:.
var sha256Hex = regexp.MustCompile(`^[a-f0-9]{64}$`)

// digestKind says which digest to pin: an OCI image's manifest, or the
// .wasm file a URL serves.
type digestKind int

const (
	manifestDigest digestKind = iota
	wasmDigest
)

// howToGetManifest says where a manifest digest comes from.
const howToGetManifest = "make oci prints the built image's; for a release, its notes or crane digest"

// compare checks a pinned digest against the built image and returns what
// is wrong, "" when nothing is (or nothing could be compared); warning:
// the digest is neither of the image's, which only -image makes an error.
func (im *image) compare(digest string, want digestKind) (msg string, warning bool) {
	if !im.known() {
		im.unchecked++
		return "", false
	}
	im.compared++
	var wasm *wasmAt
	for i := range im.wasms {
		if im.wasms[i].hex == digest {
			wasm = &im.wasms[i]
			break
		}
	}
	if want == manifestDigest {
		switch {
		case im.manifest != "" && digest == im.manifest:
			return "", false
		case wasm != nil && im.manifest != "":
			return fmt.Sprintf("is the .wasm file's SHA-256 (%s), not an image's: it must be the OCI manifest's digest, %s", wasm.where, im.manifest), false
		case wasm != nil:
			return fmt.Sprintf("is the .wasm file's SHA-256 (%s), not an image's: it must be the OCI manifest's digest (%s)", wasm.where, howToGetManifest), false
		case im.strict:
			return fmt.Sprintf("matches neither digest of %s: it must be the OCI manifest's digest, %s (the .wasm file's SHA-256 is %s, the manifest's %s)", im.path, im.manifest, im.wasms[0].hex, im.manifest), false
		case im.manifest != "":
			return fmt.Sprintf("is not the image in %s (its manifest's digest is %s): right if you pin a published release; -image %s (make validate OCI_TAR=%s) requires the built one", im.path, im.manifest, im.path, im.path), true
		}
		return "", false // only a .wasm to compare with, and the digest is not its
	}
	switch {
	case wasm != nil:
		return "", false
	case im.manifest != "" && digest == im.manifest:
		return fmt.Sprintf("is the OCI manifest's digest of %s, but an http(s) url serves the .wasm file: it must be the file's SHA-256, %s", im.path, im.wasms[len(im.wasms)-1].hex), false
	case im.strict:
		return fmt.Sprintf("matches neither digest of %s: it must be the .wasm file's SHA-256, %s (the .wasm file's SHA-256 is %s, the manifest's %s)", im.path, im.wasms[0].hex, im.wasms[0].hex, im.manifest), false
	}
	return fmt.Sprintf("is not the SHA-256 of %s (%s): right if you serve a published release's .wasm", im.wasms[len(im.wasms)-1].where, im.wasms[len(im.wasms)-1].hex), true
}
