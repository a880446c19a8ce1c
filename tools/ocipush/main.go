// Command ocipush pushes the OCI image layout tarball of make oci or make
// release to a registry, and prints the pushed manifest digest (what an
// Istio WasmPlugin's sha256 or a url pinned @sha256: names):
//
//	go -C tools run ./ocipush -layout "$PWD/build/release/mcp-resume-guard-v0.2.0-oci.tar" \
//		-ref ghcr.io/OWNER/mcp-resume-guard:v0.2.0
//
// (go -C tools runs it in tools/, its module: hence the absolute path.)
//
// Credentials come from REGISTRY_USERNAME and REGISTRY_PASSWORD (the
// release workflow passes github.actor and GITHUB_TOKEN); without them it
// pushes anonymously. It is go-containerregistry's remote.Write, as crane
// push uses it, without crane's dependencies.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mcp-resume-guard/mcp-resume-guard/tools/internal/oci"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "ocipush:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string, opts ...remote.Option) error {
	fs := flag.NewFlagSet("ocipush", flag.ContinueOnError)
	layoutPath := fs.String("layout", "", "the OCI image layout tarball (make oci, make release)")
	ref := fs.String("ref", "", "where to push: registry/repository:tag")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *layoutPath == "" || *ref == "" || fs.NArg() > 0 {
		return errors.New("want -layout FILE -ref registry/repository:tag")
	}
	b, err := os.ReadFile(*layoutPath)
	if err != nil {
		return err
	}
	auth := authn.Anonymous
	if u := getenv("REGISTRY_USERNAME"); u != "" {
		auth = &authn.Basic{Username: u, Password: getenv("REGISTRY_PASSWORD")}
	}
	digest, err := oci.Push(ctx, b, *ref, append(opts, remote.WithAuth(auth))...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s: manifest digest %s\n", *ref, digest)
	return nil
}
