package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/package-url/packageurl-go"
)

// The sentinels the Go linker wraps runtime.modinfo in (cmd/go's
// modload.infoStart and infoEnd). debug/buildinfo and go version -m find
// the build information through a header that the wasm linker does not
// write ("unrecognized file format" on a .wasm with Go 1.26), but the
// modinfo string itself is in the module's data, between these.
var (
	modinfoStart = []byte("0w\xaf\x0c\x92t\b\x02A\xe1\xc1\a\xe6\xd6\x18\xe6")
	modinfoEnd   = []byte("\xf92C1\x86\x18 r\x00\x82B\x10A\x16\xd8\xf2")
	goVersionRe  = regexp.MustCompile(`go1\.[0-9]+(\.[0-9]+)?((rc|beta)[0-9]+)?`)
)

// ReadBuildInfo returns the Go build information embedded in a Go binary
// of any format, a wasip1 .wasm included: the main module, every module
// linked in (with replacements) and the build settings, parsed by
// runtime/debug.ParseBuildInfo, with GoVersion the runtime.buildVersion the
// binary carries.
func ReadBuildInfo(bin []byte) (*debug.BuildInfo, error) {
	i := bytes.Index(bin, modinfoStart)
	if i < 0 {
		return nil, errors.New("no Go module information in the binary (built with GOFLAGS=-buildvcs=false -trimpath it is still there; was it built by go build?)")
	}
	j := bytes.Index(bin[i+len(modinfoStart):], modinfoEnd)
	if j < 0 {
		return nil, errors.New("the Go module information in the binary is not terminated")
	}
	info, err := debug.ParseBuildInfo(string(bin[i+len(modinfoStart) : i+len(modinfoStart)+j]))
	if err != nil {
		return nil, fmt.Errorf("the Go module information in the binary: %w", err)
	}
	versions := map[string]bool{}
	for _, v := range goVersionRe.FindAll(bin, -1) {
		versions[string(v)] = true
	}
	if len(versions) != 1 {
		return nil, fmt.Errorf("the binary names %d Go versions (%v); want the one it was built with", len(versions), versions)
	}
	for v := range versions {
		info.GoVersion = v
	}
	return info, nil
}

// SBOM returns a CycloneDX 1.6 JSON bill of materials of the Go modules
// linked into bin, a build of the plugin at version: the plugin (with the
// SHA-256 of bin, and the build settings as properties) depends on every
// module the Go build information lists, and on the Go standard library of
// the toolchain. A replaced module keeps the version it replaces and says
// by what in its pedigree. No timestamp or serial number: the same binary
// always yields the same bytes.
func SBOM(bin []byte, version string) ([]byte, error) {
	info, err := ReadBuildInfo(bin)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(bin)
	main := cdx.Component{
		Type:       cdx.ComponentTypeApplication,
		Name:       "mcp-resume-guard",
		Version:    version,
		PackageURL: goPURL(info.Main.Path, version),
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(sum[:])}},
		Properties: &[]cdx.Property{{Name: "golang:package", Value: info.Path}},
	}
	main.BOMRef = main.PackageURL
	for _, s := range info.Settings {
		*main.Properties = append(*main.Properties, cdx.Property{Name: "golang:build:" + s.Key, Value: s.Value})
	}
	std := cdx.Component{Type: cdx.ComponentTypeLibrary, Name: "std", Version: info.GoVersion, PackageURL: goPURL("std", info.GoVersion)}
	std.BOMRef = std.PackageURL
	components := []cdx.Component{std}
	for _, d := range info.Deps {
		c := cdx.Component{Type: cdx.ComponentTypeLibrary, Name: d.Path, Version: d.Version, PackageURL: goPURL(d.Path, d.Version)}
		c.BOMRef = c.PackageURL
		if d.Sum != "" {
			c.Properties = &[]cdx.Property{{Name: "golang:go.sum", Value: d.Sum}}
		}
		if r := d.Replace; r != nil {
			modified := true
			c.Modified = &modified
			c.Pedigree = &cdx.Pedigree{Notes: "replaced in the build by " + r.Path + " " + r.Version +
				" (for the plugin: the SDK with the project's standard-Go ABI glue, internal/abiglue)"}
		}
		components = append(components, c)
	}
	refs := make([]string, len(components))
	for i, c := range components {
		refs[i] = c.BOMRef
	}
	slices.Sort(refs)

	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Component: &main,
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeLibrary, Name: "cyclonedx-go", Group: "github.com/CycloneDX",
			PackageURL: goPURL("github.com/CycloneDX/cyclonedx-go", cyclonedxVersion()),
		}}},
	}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{{Ref: main.BOMRef, Dependencies: &refs}}
	var buf bytes.Buffer
	if err := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return nil, fmt.Errorf("encode the SBOM: %w", err)
	}
	return buf.Bytes(), nil
}

// goPURL is the package URL of a Go module version (pkg:golang/PATH@VERSION).
func goPURL(path, version string) string {
	namespace, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		namespace, name = path[:i], path[i+1:]
	}
	return packageurl.NewPackageURL(packageurl.TypeGolang, namespace, name, version, nil, "").ToString()
}

// cyclonedxVersion is the version of cyclonedx-go this tool is built with.
func cyclonedxVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/CycloneDX/cyclonedx-go" {
				return d.Version
			}
		}
	}
	return ""
}
