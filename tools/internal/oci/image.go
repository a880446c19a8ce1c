// Package oci packages the built plugin as an OCI image that Istio and Envoy
// Gateway can pull as a Wasm plugin, without Docker.
//
// The image is the "compat" variant of the Wasm image specification
// (solo-io/wasm spec-compat.md, as Istio's pkg/wasm/imagefetcher.go reads
// it): an OCI image manifest whose last layer is a gzip-compressed tar
// (application/vnd.oci.image.layer.v1.tar+gzip) holding one file,
// plugin.wasm. Everything is built with fixed timestamps and ownership, so
// the same .wasm always yields the same image digest.
package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// PluginFileName is the name the compat variant gives the Wasm module inside
// its layer.
const PluginFileName = "plugin.wasm"

// Annotation keys of the OCI image specification (annotations.md) that say
// which build an image holds.
const (
	VersionAnnotation  = "org.opencontainers.image.version"  // the plugin's version
	RevisionAnnotation = "org.opencontainers.image.revision" // the source commit
	SourceAnnotation   = "org.opencontainers.image.source"   // the source repository URL
)

// Annotate returns img with annotations added to its manifest; entries with
// an empty value are left out. The digest changes with them.
func Annotate(img v1.Image, annotations map[string]string) (v1.Image, error) {
	set := map[string]string{}
	for k, v := range annotations {
		if v != "" {
			set[k] = v
		}
	}
	if len(set) == 0 {
		return img, nil
	}
	annotated, ok := mutate.Annotations(img, set).(v1.Image)
	if !ok {
		return nil, errors.New("oci: annotating the image did not yield an image")
	}
	return annotated, nil
}

// epoch is the timestamp of every file and of the image itself: a constant,
// so that builds are reproducible.
var epoch = time.Unix(0, 0).UTC()

// wasmMagic is the first four bytes of every WebAssembly binary module.
var wasmMagic = []byte{0x00, 'a', 's', 'm'}

// Image returns the compat-variant OCI image holding wasm as plugin.wasm.
// It refuses bytes that are not a WebAssembly binary module.
func Image(wasm []byte) (v1.Image, error) {
	if !bytes.HasPrefix(wasm, wasmMagic) {
		return nil, errors.New("oci: the plugin is not a WebAssembly binary module (missing the \\0asm magic)")
	}
	layerBytes, err := layerTarGz(wasm)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("oci: plugin layer: %w", err)
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: "wasm",
		OS:           "wasip1",
		Created:      v1.Time{Time: epoch},
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("oci: image config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "mcp-resume-guard internal/tools/oci", Comment: PluginFileName},
	})
	if err != nil {
		return nil, fmt.Errorf("oci: append the plugin layer: %w", err)
	}
	return img, nil
}

// layerTarGz returns a gzip-compressed tar holding wasm as plugin.wasm, with
// fixed metadata (no modification time in the gzip header either).
func layerTarGz(wasm []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     PluginFileName,
		Mode:     0o644,
		Size:     int64(len(wasm)),
		ModTime:  epoch,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("oci: plugin layer tar header: %w", err)
	}
	if _, err := tw.Write(wasm); err != nil {
		return nil, fmt.Errorf("oci: plugin layer tar: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("oci: plugin layer tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("oci: plugin layer gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// PluginWasm returns the plugin.wasm that img carries, read the way Istio
// reads a compat-variant image: the last layer must be
// application/vnd.oci.image.layer.v1.tar+gzip and hold a file whose base name
// is plugin.wasm. It is meant for checking an image before pushing it.
func PluginWasm(img v1.Image) ([]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("oci: read layers: %w", err)
	}
	if len(layers) == 0 {
		return nil, errors.New("oci: the image has no layers; the compat variant needs one holding plugin.wasm")
	}
	last := layers[len(layers)-1]
	mt, err := last.MediaType()
	if err != nil {
		return nil, fmt.Errorf("oci: layer media type: %w", err)
	}
	if mt != types.OCILayer {
		return nil, fmt.Errorf("oci: the last layer is %s; the compat variant needs %s", mt, types.OCILayer)
	}
	rc, err := last.Compressed()
	if err != nil {
		return nil, fmt.Errorf("oci: open the plugin layer: %w", err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		return nil, fmt.Errorf("oci: the plugin layer is not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("oci: the plugin layer holds no %s", PluginFileName)
		}
		if err != nil {
			return nil, fmt.Errorf("oci: read the plugin layer: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg && path.Base(hdr.Name) == PluginFileName {
			wasm, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("oci: read %s: %w", PluginFileName, err)
			}
			return wasm, nil
		}
	}
}
