package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/oci"
)

// image is the built plugin image that -image names: the digests a
// manifest may pin.
type image struct {
	path     string
	manifest string // the OCI manifest's digest, hex (what Istio's sha256 and a url's @sha256: name)
	wasm     string // plugin.wasm's SHA-256, hex (what an http(s) url's sha256 names)
}

// loadImage reads an OCI image layout tarball (make oci's
// build/mcp-resume-guard-oci.tar).
func loadImage(path string) (*image, error) {
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
		return nil, fmt.Errorf("%s: %w (make oci writes build/mcp-resume-guard-oci.tar)", path, err)
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
	return &image{path: path, manifest: d.Hex, wasm: hex.EncodeToString(sum[:])}, nil
}

// sha256Hex is the form of a sha256 field and of a digest after @sha256:.
var sha256Hex = regexp.MustCompile(`^[a-f0-9]{64}$`)

// digestKind says which digest to pin: an OCI image's manifest, or the
// .wasm file a URL serves.
type digestKind int

const (
	manifestDigest digestKind = iota
	wasmDigest
)

// compare checks a pinned digest against the built image; "" when it
// matches (or there is no image to compare with).
func (im *image) compare(digest string, want digestKind) string {
	if im == nil {
		return ""
	}
	good, other := im.manifest, im.wasm
	goodName, otherName := "the OCI manifest's digest", "the .wasm file's SHA-256"
	if want == wasmDigest {
		good, other, goodName, otherName = other, good, otherName, goodName
	}
	switch digest {
	case good:
		return ""
	case other:
		return fmt.Sprintf("is %s in %s; it must be %s, %s", otherName, im.path, goodName, good)
	}
	return fmt.Sprintf("matches neither digest of %s: it must be %s, %s (the .wasm file's SHA-256 is %s, the manifest's %s)", im.path, goodName, good, im.wasm, im.manifest)
}
