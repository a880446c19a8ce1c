// Command wasmbuild builds a proxy-wasm plugin package written against
// github.com/tetratelabs/proxy-wasm-go-sdk v0.24.0 with the standard Go
// toolchain, as a WASI reactor module that Envoy 1.33 and later load:
//
//	go run ./internal/tools/wasmbuild -o build/mcp-resume-guard.wasm ./filter
//
// It copies the SDK to build/sdk with this project's ABI glue, writes
// build/go.work and a verified runtime overlay (build/overlay), runs
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, and fails unless the
// module has the exports and imports a proxy-wasm host needs. See package
// internal/abiglue/builder.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
)

func main() {
	var opts builder.Options
	flag.StringVar(&opts.Output, "o", "", "output `file` (.wasm), required")
	flag.StringVar(&opts.WorkDir, "work", "", "`dir` for the generated SDK copy, go.work and runtime overlay (default: build/ in the main module)")
	flag.StringVar(&opts.LDFlags, "ldflags", "", "`flags` for go build -ldflags, e.g. -X main.version=v1.2.0 (make build stamps the version and commit)")
	flag.BoolVar(&opts.NoRuntimePatch, "no-runtime-patch", false, "build without the Go runtime overlay (the module then aborts at GC on Envoy < 1.39; for demonstrations only)")
	verbose := flag.Bool("v", false, "print the module's imports and exports")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: wasmbuild -o OUT.wasm [flags] PACKAGE\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if opts.Output == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	opts.Package = flag.Arg(0)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := builder.Build(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wasmbuild: %v\n", err)
		os.Exit(1)
	}
	patch := "runtime patched for poll_oneoff=ENOSYS hosts"
	if opts.NoRuntimePatch {
		patch = "UNPATCHED runtime: aborts at GC on Envoy < 1.39"
	}
	fmt.Fprintf(os.Stderr, "wasmbuild: %s: %d bytes, %s, %s, %.1fs\n",
		res.Output, res.Size, res.GoVersion, patch, res.Elapsed.Seconds())
	if *verbose {
		imports, exports := res.Module.Names()
		fmt.Fprintf(os.Stderr, "imports (%d): %s\nexports (%d): %s\n",
			len(imports), strings.Join(imports, " "), len(exports), strings.Join(exports, " "))
	}
}
