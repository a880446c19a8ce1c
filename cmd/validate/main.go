// Command validate checks a plugin configuration with the plugin's own
// parser (package config) before it is pushed to a proxy:
//
//	go run ./cmd/validate FILE...
//	make validate CONFIG=FILE
//
// FILE is a plugin configuration (JSON), or a file that embeds one: an
// Envoy bootstrap (the Wasm filter's config.configuration), an Istio
// WasmPlugin (spec.pluginConfig) or an Envoy Gateway EnvoyExtensionPolicy
// (spec.wasm[].config), in YAML or JSON, one or several documents. It
// prints every error with the key it concerns and the allowed values, and
// exits 1 when there is one (2 when a file cannot be read at all).
//
// Why before the push: a configuration the plugin refuses fails
// proxy_on_configure, and Envoy then keeps the failed VM as the plugin's
// cached base VM, so later pushes of the plugin are rejected too until the
// proxy restarts (envoyproxy/envoy#43751).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: validate FILE...\n\n"+
			"Checks the mcp-resume-guard plugin configuration in each FILE with the plugin's own parser:\n"+
			"a plugin configuration (JSON), an Envoy bootstrap, an Istio WasmPlugin or an Envoy Gateway\n"+
			"EnvoyExtensionPolicy. Exits 1 when a configuration has an error.")
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	code := 0
	for _, name := range args {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "validate: %v\n", err)
			code = max(code, 2)
			continue
		}
		found, err := Extract(b)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			code = max(code, 1)
			continue
		}
		for _, f := range found {
			errs := Check(f.JSON)
			if len(errs) == 0 {
				fmt.Fprintf(stdout, "%s: %s: ok\n", name, f.Where)
				continue
			}
			code = max(code, 1)
			for _, e := range errs {
				fmt.Fprintf(stderr, "%s: %s: %v\n", name, f.Where, e)
			}
			fmt.Fprintf(stderr, "%s: %s: %d error(s); the plugin would refuse to start with this configuration\n", name, f.Where, len(errs))
		}
	}
	return code
}

// errNoConfig is returned by Extract for a file that holds no plugin
// configuration it knows how to find.
var errNoConfig = errors.New("no mcp-resume-guard plugin configuration found: want a plugin configuration (a JSON object), " +
	"an Envoy bootstrap with the Wasm filter, an Istio WasmPlugin or an Envoy Gateway EnvoyExtensionPolicy")
