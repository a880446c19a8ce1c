package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

// fakeWasm returns bytes that start like a Wasm module and are otherwise
// distinct per seed and large enough to span several tar blocks.
func fakeWasm(seed byte) []byte {
	b := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	for i := 0; i < 5000; i++ {
		b = append(b, byte(i*7)^seed)
	}
	return b
}

func buildLayout(t *testing.T, wasm []byte, ref string) []byte {
	t.Helper()
	_, layoutTar, err := oci.Pack(wasm, nil, ref)
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	return layoutTar
}

// readTar returns every entry of an archive by name; directories map to nil.
func readTar(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		if _, dup := files[hdr.Name]; dup {
			t.Fatalf("tar entry %s appears twice", hdr.Name)
		}
		if hdr.ModTime.Unix() != 0 {
			t.Errorf("tar entry %s has modification time %v; want the fixed epoch", hdr.Name, hdr.ModTime)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			files[hdr.Name] = nil
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("reading %s: %v", hdr.Name, err)
			}
			files[hdr.Name] = b
		default:
			t.Fatalf("tar entry %s has type %c; want only files and directories", hdr.Name, hdr.Typeflag)
		}
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

// blob returns the blob a descriptor names, after checking that the blob's
// file name, its sha256 and the descriptor's size agree.
func blob(t *testing.T, files map[string][]byte, d descriptor) []byte {
	t.Helper()
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok {
		t.Fatalf("digest %q is not sha256", d.Digest)
	}
	b, ok := files["blobs/sha256/"+hexDigest]
	if !ok {
		t.Fatalf("blob %s (%s) missing from the layout", d.Digest, d.MediaType)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != hexDigest {
		t.Fatalf("blob %s has sha256 %s", d.Digest, got)
	}
	if int64(len(b)) != d.Size {
		t.Fatalf("blob %s is %d bytes; its descriptor says %d", d.Digest, len(b), d.Size)
	}
	return b
}

// TestLayoutCompatVariant reads the archive with nothing but the standard
// library and checks every rule of an OCI image layout holding a
// compat-variant Wasm image.
func TestLayoutCompatVariant(t *testing.T) {
	wasm := fakeWasm(1)
	files := readTar(t, buildLayout(t, wasm, "v1.2.3"))

	var ociLayout struct {
		ImageLayoutVersion string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(files["oci-layout"], &ociLayout); err != nil || ociLayout.ImageLayoutVersion != "1.0.0" {
		t.Fatalf("oci-layout = %q (%v); want imageLayoutVersion 1.0.0", files["oci-layout"], err)
	}

	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if index.SchemaVersion != 2 || index.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Errorf("index.json: schemaVersion %d, mediaType %q; want 2, the OCI index type", index.SchemaVersion, index.MediaType)
	}
	if len(index.Manifests) != 1 {
		t.Fatalf("index.json lists %d manifests; want 1", len(index.Manifests))
	}
	md := index.Manifests[0]
	if md.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("manifest media type %q; want the OCI image manifest type", md.MediaType)
	}
	if got := md.Annotations[oci.RefNameAnnotation]; got != "v1.2.3" {
		t.Errorf("manifest %s annotation = %q; want v1.2.3", oci.RefNameAnnotation, got)
	}

	var manifest struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Config        descriptor   `json:"config"`
		Layers        []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(t, files, md), &manifest); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if manifest.SchemaVersion != 2 || manifest.MediaType != md.MediaType {
		t.Errorf("manifest: schemaVersion %d, mediaType %q", manifest.SchemaVersion, manifest.MediaType)
	}
	if manifest.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Errorf("config media type %q; want the OCI config type", manifest.Config.MediaType)
	}
	var config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		RootFS       struct {
			Type    string   `json:"type"`
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blob(t, files, manifest.Config), &config); err != nil {
		t.Fatalf("config: %v", err)
	}
	if len(manifest.Layers) != 1 {
		t.Fatalf("manifest has %d layers; want exactly 1", len(manifest.Layers))
	}
	ld := manifest.Layers[0]
	if ld.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
		t.Fatalf("layer media type %q; Istio's compat variant needs application/vnd.oci.image.layer.v1.tar+gzip", ld.MediaType)
	}

	zr, err := gzip.NewReader(bytes.NewReader(blob(t, files, ld)))
	if err != nil {
		t.Fatalf("layer is not gzip: %v", err)
	}
	layerTar, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip layer: %v", err)
	}
	diffID := sha256.Sum256(layerTar)
	if len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(diffID[:]) {
		t.Errorf("config rootfs.diff_ids = %v; want the sha256 of the uncompressed layer", config.RootFS.DiffIDs)
	}
	layerFiles := readTar(t, layerTar)
	if len(layerFiles) != 1 {
		t.Errorf("layer holds %d entries; want only %s", len(layerFiles), oci.PluginFileName)
	}
	if got, ok := layerFiles[oci.PluginFileName]; !ok || !bytes.Equal(got, wasm) {
		t.Fatalf("layer's %s differs from the input (%d bytes, want %d)", oci.PluginFileName, len(got), len(wasm))
	}

	// Nothing but the layout's own files.
	for name := range files {
		if name != "oci-layout" && name != "index.json" && !strings.HasPrefix(name, "blobs/") {
			t.Errorf("unexpected entry %s in the layout", name)
		}
	}
	if n := len(files) - 4; n != 3 { // oci-layout, index.json, blobs/, blobs/sha256/
		t.Errorf("layout holds %d blobs; want 3 (manifest, config, layer)", n)
	}
}

// TestLayoutReadsBack extracts the archive and opens it with
// go-containerregistry's layout reader, then extracts plugin.wasm the way
// Istio does.
func TestLayoutReadsBack(t *testing.T) {
	wasm := fakeWasm(2)
	dir := t.TempDir()
	for name, b := range readTar(t, buildLayout(t, wasm, "")) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if b == nil {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("layout.ImageIndexFromPath: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("%d manifests; want 1", len(im.Manifests))
	}
	if _, ok := im.Manifests[0].Annotations[oci.RefNameAnnotation]; ok {
		t.Errorf("an empty ref must not add the %s annotation", oci.RefNameAnnotation)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatalf("idx.Image: %v", err)
	}
	got, err := oci.PluginWasm(img)
	if err != nil {
		t.Fatalf("PluginWasm: %v", err)
	}
	if !bytes.Equal(got, wasm) {
		t.Fatal("plugin.wasm read back differs from the input")
	}
}

func TestLayoutReproducible(t *testing.T) {
	a := buildLayout(t, fakeWasm(3), "latest")
	b := buildLayout(t, fakeWasm(3), "latest")
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same .wasm differ; the image digest would not be reproducible")
	}
	img1, _ := oci.Image(fakeWasm(3))
	img2, _ := oci.Image(fakeWasm(4))
	d1, err1 := img1.Digest()
	d2, err2 := img2.Digest()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if d1 == d2 {
		t.Fatal("different modules gave the same image digest")
	}
}

func TestPluginWasmRejectsOtherImages(t *testing.T) {
	layerWith := func(name string, mt types.MediaType) v1.Layer {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: 4}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte("\x00asm"))
		tw.Close()
		zw.Close()
		l, err := tarball.LayerFromReader(bytes.NewReader(buf.Bytes()), tarball.WithMediaType(mt))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	cases := map[string]v1.Image{
		"no layers":       empty.Image,
		"no plugin.wasm":  appendLayer(t, layerWith("filter.wasm", types.OCILayer)),
		"wrong mediatype": appendLayer(t, layerWith(oci.PluginFileName, types.OCIUncompressedLayer)),
	}
	for name, img := range cases {
		if _, err := oci.PluginWasm(img); err == nil {
			t.Errorf("%s: PluginWasm succeeded; want an error", name)
		}
	}
	if got, err := oci.PluginWasm(appendLayer(t, layerWith("./"+oci.PluginFileName, types.OCILayer))); err != nil || string(got) != "\x00asm" {
		t.Errorf("./plugin.wasm: got %q, %v; want the file (Istio matches the base name)", got, err)
	}
}

func appendLayer(t *testing.T, l v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: l})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestImageRejectsNonWasm(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("not wasm"), []byte("\x00as")} {
		if _, err := oci.Image(b); err == nil {
			t.Errorf("Image(%q) succeeded; want an error", b)
		}
	}
}

// TestBuiltPlugin packages the real build output when make build has run.
func TestBuiltPlugin(t *testing.T) {
	wasm, err := os.ReadFile("../../../build/mcp-resume-guard.wasm")
	if err != nil {
		t.Skip("build/mcp-resume-guard.wasm not built (make build):", err)
	}
	img, err := oci.Image(wasm)
	if err != nil {
		t.Fatal(err)
	}
	got, err := oci.PluginWasm(img)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wasm) {
		t.Fatal("plugin.wasm differs from build/mcp-resume-guard.wasm")
	}
}

func TestAnnotate(t *testing.T) {
	img, err := oci.Image(fakeWasm(5))
	if err != nil {
		t.Fatal(err)
	}
	annotated, err := oci.Annotate(img, map[string]string{
		oci.VersionAnnotation:  "v1.2.0",
		oci.RevisionAnnotation: "0123456789abcdef0123456789abcdef01234567",
		oci.SourceAnnotation:   "",
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := annotated.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{oci.VersionAnnotation: "v1.2.0", oci.RevisionAnnotation: "0123456789abcdef0123456789abcdef01234567"}
	if len(m.Annotations) != len(want) {
		t.Errorf("annotations %v; want %v (empty values left out)", m.Annotations, want)
	}
	for k, v := range want {
		if m.Annotations[k] != v {
			t.Errorf("annotation %s = %q; want %q", k, m.Annotations[k], v)
		}
	}
	if back, err := oci.PluginWasm(annotated); err != nil || !bytes.Equal(back, fakeWasm(5)) {
		t.Errorf("the annotated image's plugin.wasm: %v", err)
	}
	d0, _ := img.Digest()
	d1, _ := annotated.Digest()
	if d0 == d1 {
		t.Error("annotating did not change the manifest digest")
	}
	same, err := oci.Annotate(img, map[string]string{oci.SourceAnnotation: ""})
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := same.Digest(); d2 != d0 {
		t.Error("no annotation to add changed the image")
	}
}
