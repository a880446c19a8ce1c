package oci

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// RefNameAnnotation is the index annotation that names an image inside an
// OCI image layout (what skopeo's oci-archive:FILE:NAME selects).
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes img to w as a tar archive of an OCI image layout:
// oci-layout, index.json (one manifest, annotated with ref as its
// org.opencontainers.image.ref.name when ref is not empty) and
// blobs/sha256/<digest> for the manifest, the config and the layers.
// Entries are sorted and carry fixed timestamps and ownership, so the same
// image always yields the same bytes.
func WriteLayout(w io.Writer, img v1.Image, ref string) error {
	dir, err := os.MkdirTemp("", "mcp-resume-guard-oci-")
	if err != nil {
		return fmt.Errorf("oci: temporary layout directory: %w", err)
	}
	defer os.RemoveAll(dir)

	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("oci: write the image layout: %w", err)
	}
	var opts []layout.Option
	if ref != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{RefNameAnnotation: ref}))
	}
	if err := p.AppendImage(img, opts...); err != nil {
		return fmt.Errorf("oci: write the image into the layout: %w", err)
	}
	return tarDir(w, dir)
}

// tarDir archives the tree under dir with paths relative to it, in sorted
// order, with reproducible headers.
func tarDir(w io.Writer, dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("oci: walk the image layout: %w", err)
	}
	sort.Strings(paths)

	tw := tar.NewWriter(w)
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("oci: %w", err)
		}
		hdr := &tar.Header{
			Name:    filepath.ToSlash(rel),
			ModTime: epoch,
		}
		switch {
		case info.IsDir():
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
			hdr.Mode = 0o755
		case info.Mode().IsRegular():
			hdr.Typeflag = tar.TypeReg
			hdr.Mode = 0o644
			hdr.Size = info.Size()
		default:
			return fmt.Errorf("oci: unexpected file %s in the image layout", rel)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("oci: tar header for %s: %w", rel, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if err := copyFile(tw, p); err != nil {
				return fmt.Errorf("oci: archive %s: %w", rel, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("oci: finish the layout archive: %w", err)
	}
	return nil
}

func copyFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Pack is the whole packing sequence of make oci: the compat-variant image
// of wasm with annotations on its manifest (empty values left out), checked
// the way Istio reads it (its plugin.wasm must be wasm, byte for byte), and
// that image as an OCI image layout tarball naming it ref (none when ref is
// empty). It returns the image and the tarball's bytes.
func Pack(wasm []byte, annotations map[string]string, ref string) (v1.Image, []byte, error) {
	img, err := Image(wasm)
	if err != nil {
		return nil, nil, err
	}
	if img, err = Annotate(img, annotations); err != nil {
		return nil, nil, err
	}
	back, err := PluginWasm(img)
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(back, wasm) {
		return nil, nil, errors.New("oci: the image's plugin.wasm differs from the plugin packed into it")
	}
	var buf bytes.Buffer
	if err := WriteLayout(&buf, img, ref); err != nil {
		return nil, nil, err
	}
	return img, buf.Bytes(), nil
}
