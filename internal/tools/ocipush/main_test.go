package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/oci"
)

// TestPushPull pushes the built plugin's image, packed as make oci and make
// release pack it, to a registry on loopback, and pulls it back by tag and
// by digest: the manifest, the config and the layer arrive byte for byte,
// and so does plugin.wasm.
func TestPushPull(t *testing.T) {
	wasm, err := os.ReadFile("../../../build/mcp-resume-guard.wasm")
	if err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
	}
	img, err := oci.Image(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = oci.Annotate(img, map[string]string{oci.VersionAnnotation: "v0.1.0", oci.RevisionAnnotation: "abc"}); err != nil {
		t.Fatal(err)
	}
	var layoutTar bytes.Buffer
	if err := oci.WriteLayout(&layoutTar, img, "v0.1.0"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mcp-resume-guard-v0.1.0-oci.tar")
	if err := os.WriteFile(file, layoutTar.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the tarball holds, read back the way Push reads it.
	local, err := oci.ReadLayout(layoutTar.Bytes(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	repo := strings.TrimPrefix(reg.URL, "http://") + "/mcp-resume-guard/mcp-resume-guard"
	var out bytes.Buffer
	env := map[string]string{"REGISTRY_USERNAME": "u", "REGISTRY_PASSWORD": "p"}
	if err := run(context.Background(), []string{"-layout", file, "-ref", repo + ":v0.1.0"}, &out, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	digest, err := local.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := "manifest digest " + digest.String(); !strings.Contains(out.String(), want) {
		t.Errorf("ocipush printed %q; want %q", out.String(), want)
	}

	for _, ref := range []string{repo + ":v0.1.0", repo + "@" + digest.String()} {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Get(r)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if desc.Digest != digest {
			t.Errorf("%s: digest %s, pushed %s", ref, desc.Digest, digest)
		}
		pulled, err := desc.Image()
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, ref+" manifest", pulled.RawManifest, local.RawManifest)
		sameBytes(t, ref+" config", pulled.RawConfigFile, local.RawConfigFile)
		pl, _ := pulled.Layers()
		ll, _ := local.Layers()
		if len(pl) != 1 || len(ll) != 1 {
			t.Fatalf("%s: %d layers, the layout %d; want 1", ref, len(pl), len(ll))
		}
		sameBytes(t, ref+" layer", compressed(pl[0]), compressed(ll[0]))
		back, err := oci.PluginWasm(pulled)
		if err != nil || !bytes.Equal(back, wasm) {
			t.Errorf("%s: plugin.wasm differs from the built plugin (%v)", ref, err)
		}
	}
}

func compressed(l v1.Layer) func() ([]byte, error) {
	return func() ([]byte, error) {
		rc, err := l.Compressed()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
}

func sameBytes(t *testing.T, what string, got, want func() ([]byte, error)) {
	t.Helper()
	g, err := got()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	w, err := want()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s: %d bytes pulled differ from the %d bytes of the layout", what, len(g), len(w))
	}
}

func TestUsage(t *testing.T) {
	if err := run(context.Background(), nil, io.Discard, os.Getenv); err == nil || !strings.Contains(err.Error(), "want -layout FILE -ref") {
		t.Errorf("no flags: %v", err)
	}
}
