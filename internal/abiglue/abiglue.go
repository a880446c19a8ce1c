// Package abiglue holds this project's proxy-wasm ABI 0.2.1 glue for the
// standard Go toolchain and hands its sources to the build.
//
// The tetratelabs proxy-wasm-go-sdk v0.24.0 targets TinyGo: its host-call
// declarations sit behind //go:build tinygo and its callbacks are marked with
// TinyGo's //export. In a standard-Go build the SDK instead routes every host
// call through the interface value currentHost in proxywasm/internal. The
// files in sdkglue/ are compiled into a copy of that package (see
// internal/abiglue/builder): they set currentHost to an implementation backed
// by //go:wasmimport env proxy_* functions, export the SDK's callbacks with
// //go:wasmexport, and pin the buffers handed out by proxy_on_memory_allocate.
//
// The sdkglue files carry the build constraint "wasip1 && abiglue", which only
// the plugin build sets, so host builds, go vet and go test of this repository
// never compile them (gofmt still checks them).
package abiglue

import (
	"embed"
	"io/fs"
)

// BuildTag is the build tag that enables the glue files inside the SDK copy.
const BuildTag = "abiglue"

//go:embed sdkglue/*.go sdkglue/proxywasm/*.go
var sources embed.FS

// Sources returns the glue files: those at the top ("abiglue_host.go", ...)
// go as-is into the SDK's proxywasm/internal package, those under
// "proxywasm/" into the SDK's proxywasm package (functions the plugin calls
// that the SDK's API lacks).
func Sources() fs.FS {
	sub, err := fs.Sub(sources, "sdkglue")
	if err != nil {
		// fs.Sub only fails on an invalid path; "sdkglue" is valid.
		panic(err)
	}
	return sub
}
