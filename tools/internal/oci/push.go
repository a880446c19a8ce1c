package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push uploads the one image of an OCI image layout tarball (as make oci and
// make release write it) to ref ("ghcr.io/OWNER/mcp-resume-guard:v0.2.0")
// and returns its manifest digest: the digest an Istio WasmPlugin's sha256
// (or a url pinned @sha256:...) names. The registry receives the layout's
// manifest and blobs byte for byte.
func Push(ctx context.Context, layoutTar []byte, ref string, opts ...remote.Option) (v1.Hash, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("oci: image reference %q: %w", ref, err)
	}
	dir, err := os.MkdirTemp("", "mcp-resume-guard-push-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	img, err := ReadLayout(layoutTar, dir)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(r, img, append(opts, remote.WithContext(ctx))...); err != nil {
		return v1.Hash{}, fmt.Errorf("oci: push %s: %w", ref, err)
	}
	return digest, nil
}

// ReadLayout unpacks an OCI image layout tarball into dir (which must
// outlive the image: its blobs are read from there) and returns the
// layout's only image.
func ReadLayout(layoutTar []byte, dir string) (v1.Image, error) {
	tr := tar.NewReader(bytes.NewReader(layoutTar))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("oci: read the layout tarball: %w", err)
		}
		clean := path.Clean(h.Name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("oci: layout tarball entry %q leaves the layout", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(clean))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, err
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(target, b, 0o644); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("oci: layout tarball entry %q is neither a file nor a directory", h.Name)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("oci: not an OCI image layout: %w", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("oci: the layout holds %d manifests; want the plugin's one image", len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}
