// Command oci packages the built plugin as an OCI image layout tarball that
// Istio's WasmPlugin (and Envoy Gateway) can pull once pushed to a registry:
//
//	build/bin/oci -wasm build/mcp-resume-guard.wasm -o build/mcp-resume-guard-oci.tar [-ref latest] \
//		[-version v0.1.0 -revision COMMIT -source https://REPOSITORY]
//
// as make oci runs it from the repository's root, after building it from
// the tools module into build/bin/. The version, revision and source become
// the manifest's org.opencontainers.image.* annotations (make oci passes
// them). It prints the image's manifest digest, to pin the WasmPlugin url by
// digest. No Docker needed; push with skopeo, crane or oras (docs/deploy-istio.md).
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oci:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("oci", flag.ContinueOnError)
	wasmPath := fs.String("wasm", "build/mcp-resume-guard.wasm", "the built plugin")
	out := fs.String("o", "build/mcp-resume-guard-oci.tar", "the OCI image layout tarball to write")
	ref := fs.String("ref", "latest", "the image's name inside the layout (org.opencontainers.image.ref.name); empty for none")
	version := fs.String("version", "", "the plugin's version (annotation "+oci.VersionAnnotation+")")
	revision := fs.String("revision", "", "the commit it was built from (annotation "+oci.RevisionAnnotation+")")
	source := fs.String("source", "", "the source repository's URL (annotation "+oci.SourceAnnotation+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	wasm, err := os.ReadFile(*wasmPath)
	if err != nil {
		return fmt.Errorf("%w (run make build first)", err)
	}
	img, layoutTar, err := oci.Pack(wasm, map[string]string{
		oci.VersionAnnotation: *version, oci.RevisionAnnotation: *revision, oci.SourceAnnotation: *source,
	}, *ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*out, layoutTar, 0o644); err != nil {
		return err
	}

	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes): OCI image layout, manifest %s, plugin.wasm %d bytes sha256:%x\n",
		*out, len(layoutTar), digest, len(wasm), sha256.Sum256(wasm))
	return nil
}
