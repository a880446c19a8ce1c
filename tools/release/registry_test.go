package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sirupsen/logrus"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

// distributionRegistry starts the CNCF distribution registry server (what
// the registry:3 image runs), in memory, on loopback, and returns its
// host:port.
func distributionRegistry(t *testing.T) string {
	t.Helper()
	logrus.SetOutput(io.Discard) // the registry logs every request through logrus
	config := &configuration.Configuration{Storage: configuration.Storage{
		"inmemory":    configuration.Parameters{},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}}
	srv := httptest.NewServer(handlers.NewApp(context.Background(), config))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestPushPullDistribution pushes the built plugin's image, packed as make
// oci packs it, by tag with the release workflow's own command (go -C
// tools run ./ocipush) to the distribution registry, and pulls it
// back by digest as Istio's and Envoy Gateway's image fetchers do
// (go-containerregistry's remote.Get, then the compat variant: an OCI
// manifest whose single, last layer is tar+gzip holding plugin.wasm) and
// as raw registry API calls: manifest, config and layer byte for byte, the
// digest the WasmPlugin's sha256 names, the annotations kept.
func TestPushPullDistribution(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join(repoRoot, "build", "mcp-resume-guard.wasm"))
	if err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
	}
	annotations := map[string]string{
		oci.VersionAnnotation: "v0.1.0", oci.RevisionAnnotation: strings.Repeat("ab", 20), oci.SourceAnnotation: "https://github.com/mcp-resume-guard/mcp-resume-guard",
	}
	local, layoutTar, err := oci.Pack(wasm, annotations, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	layoutFile := filepath.Join(t.TempDir(), "mcp-resume-guard-v0.1.0-oci.tar")
	if err := os.WriteFile(layoutFile, layoutTar, 0o644); err != nil {
		t.Fatal(err)
	}
	digest, err := local.Digest()
	if err != nil {
		t.Fatal(err)
	}

	host := distributionRegistry(t)
	repo := host + "/mcp-resume-guard/mcp-resume-guard"
	push := exec.Command("go", "-C", "tools", "run", "./ocipush", "-layout", layoutFile, "-ref", repo+":v0.1.0")
	push.Dir = repoRoot
	push.Env = append(os.Environ(), "REGISTRY_USERNAME=", "REGISTRY_PASSWORD=")
	out, err := push.CombinedOutput()
	if err != nil {
		t.Fatalf("ocipush: %v\n%s", err, out)
	}
	if want := "manifest digest " + digest.String(); !strings.Contains(string(out), want) {
		t.Errorf("ocipush printed %q; want %q", out, want)
	}

	// The tag resolves to the digest a WasmPlugin pins.
	byTag, err := remote.Head(mustRef(t, repo+":v0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if byTag.Digest != digest {
		t.Errorf("tag v0.1.0 is %s; pushed %s", byTag.Digest, digest)
	}

	// Pulled by digest, as the image fetchers read it.
	desc, err := remote.Get(mustRef(t, repo+"@"+digest.String()))
	if err != nil {
		t.Fatalf("pull by digest: %v", err)
	}
	pulled, err := desc.Image()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := pulled.Digest(); d != digest {
		t.Errorf("pulled digest %s; pushed %s (the fetchers compare it with the WasmPlugin's sha256)", d, digest)
	}
	m, err := pulled.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("manifest %s, config %s; want %s and %s (a Docker manifest takes the fetchers' Docker path)",
			m.MediaType, m.Config.MediaType, types.OCIManifestSchema1, types.OCIConfigJSON)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("layers %+v; want exactly one, %s (the compat variant)", m.Layers, types.OCILayer)
	}
	for k, v := range annotations {
		if m.Annotations[k] != v {
			t.Errorf("annotation %s = %q after the round trip; want %q", k, m.Annotations[k], v)
		}
	}
	if back, err := oci.PluginWasm(pulled); err != nil || !bytes.Equal(back, wasm) {
		t.Errorf("plugin.wasm pulled by digest differs from the built plugin (%v)", err)
	}

	// The registry API returns the layout's bytes, byte for byte.
	files := map[string][]byte{}
	localManifest, _ := local.RawManifest()
	files["manifests/"+digest.String()] = localManifest
	localConfig, _ := local.RawConfigFile()
	files["blobs/"+m.Config.Digest.String()] = localConfig
	layers, _ := local.Layers()
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	layer, _ := io.ReadAll(rc)
	rc.Close()
	files["blobs/"+m.Layers[0].Digest.String()] = layer
	for path, want := range files {
		req, _ := http.NewRequest(http.MethodGet, "http://"+repo2path(repo)+path, nil)
		req.Header.Set("Accept", string(types.OCIManifestSchema1))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("GET %s: %s, %d bytes; want 200 and the layout's %d bytes", path, resp.Status, len(got), len(want))
		}
		if strings.HasPrefix(path, "manifests/") {
			if ct := resp.Header.Get("Content-Type"); ct != string(types.OCIManifestSchema1) {
				t.Errorf("GET %s: Content-Type %q; want %s", path, ct, types.OCIManifestSchema1)
			}
			var raw struct {
				SchemaVersion int    `json:"schemaVersion"`
				MediaType     string `json:"mediaType"`
			}
			if err := json.Unmarshal(got, &raw); err != nil || raw.SchemaVersion != 2 || raw.MediaType != string(types.OCIManifestSchema1) {
				t.Errorf("the manifest says schemaVersion %d, mediaType %q (%v)", raw.SchemaVersion, raw.MediaType, err)
			}
		}
	}
}

// repo2path is the /v2/ API path of a repository host/name.
func repo2path(repo string) string {
	host, name, _ := strings.Cut(repo, "/")
	return host + "/v2/" + name + "/"
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
