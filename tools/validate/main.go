// Command validate checks what decides whether the guard runs, before it
// is pushed to a proxy: the plugin configuration with the plugin's own
// parser, and the manifest that deploys it.
//
//	make validate CONFIG='envoy/ deploy/' [OCI_TAR=build/mcp-resume-guard-oci.tar]
//	build/bin/validate [-image build/mcp-resume-guard-oci.tar] PATH...   # what make validate runs
//
// PATH is a file or a directory (its .yaml, .yml and .json files, walked).
// A file is a plugin configuration (JSON), or one or several YAML (or JSON)
// documents: an Envoy bootstrap (the Wasm filter's config.configuration,
// failure_policy, and the plugin's routes against the route table: a
// route_name no route carries, a path_prefix Envoy sends elsewhere, a route
// that does not run the filter), an Istio WasmPlugin (selector or
// targetRefs, url and sha256, failStrategy, phase, type, pluginConfig) or an
// Envoy Gateway EnvoyExtensionPolicy (targetRefs, code and its sha256,
// failOpen, config). Other documents (an HTTPRoute, a Service, a Prometheus
// rule file) are skipped with a note.
//
// A pinned digest is compared with the built image: the OCI manifest's
// digest for an image, the .wasm file's SHA-256 for an http(s) URL. With
// -image, it must be that image's. Without it, what make build and make oci
// left in build/ (build/mcp-resume-guard-oci.tar, build/mcp-resume-guard.wasm,
// read from the working directory: the repository's root under make
// validate) is read: a .wasm file's SHA-256 pinned as an image's digest, or
// the other way round, is an error; a digest that is neither is a warning
// (it may be a published release's). With no build/ files, a warning line
// says that digests were checked for their form only, and what makes the
// comparison possible.
//
// Every error names its key at FILE:LINE:COLUMN, the user's own line (in a
// bootstrap, the line of the plugin's JSON inside the YAML string). It exits
// 1 on any error, 2 when a path cannot be read; warnings (a byte-prefix
// route the plugin's segment rule cuts short, an image pinned by tag only)
// do not fail.
//
// Why before the push: with FAIL_OPEN every mistake is silent (the guard is
// simply not there), and a configuration the plugin refuses fails
// proxy_on_configure, after which Envoy keeps the failed VM as the plugin's
// cached base VM and rejects later pushes until the proxy restarts
// (envoyproxy/envoy#43751).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/yamlpos"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: validate [-image OCI_LAYOUT.tar] PATH...

Checks each PATH (a file, or a directory of .yaml, .yml and .json files) for
what decides whether mcp-resume-guard runs: the plugin configuration, with
the plugin's own parser, in a plugin configuration (JSON), an Envoy
bootstrap (with its routes against the route table), an Istio WasmPlugin or
an Envoy Gateway EnvoyExtensionPolicy (with their image, digest and failure
settings). Pinned digests are compared with the -image layout, else with
build/mcp-resume-guard-oci.tar and build/mcp-resume-guard.wasm when they
exist. Documents that carry no plugin are skipped with a note. Exits 1 on
any error, 2 when a path cannot be read.
`

func run(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("validate", flag.ContinueOnError)
	fset.SetOutput(stderr)
	imagePath := fset.String("image", "", "the built OCI image layout (make oci: build/mcp-resume-guard-oci.tar): pinned digests must be its; "+
		"without it they are compared with build/mcp-resume-guard-oci.tar and build/mcp-resume-guard.wasm when they exist")
	fset.Usage = func() { fmt.Fprint(stderr, usage+"\n"); fset.PrintDefaults() }
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fset.NArg() == 0 {
		fset.Usage()
		return 2
	}
	var img *image
	if *imagePath != "" {
		var err error
		if img, err = loadImage(*imagePath); err != nil {
			fmt.Fprintf(stderr, "validate: -image: %v\n", err)
			return 2
		}
	} else {
		var warn string
		if img, warn = findBuilt(); warn != "" {
			fmt.Fprintf(stderr, "validate: warning: %s\n", warn)
		}
	}
	code, found := 0, 0
	for _, in := range inputs(fset.Args(), stderr, &code) {
		b, err := os.ReadFile(in.path)
		if err != nil {
			fmt.Fprintf(stderr, "validate: %v\n", err)
			code = max(code, 2)
			continue
		}
		targets, notes := inspect(b, in.named, filepath.Ext(in.path) == ".json", img)
		for _, n := range notes {
			fmt.Fprintf(stdout, "%s: note: %s\n", in.path, n)
		}
		found += len(targets)
		for _, t := range targets {
			if report(stdout, stderr, in.path, t) {
				code = max(code, 1)
			}
		}
	}
	switch {
	case img.unchecked > 0:
		fmt.Fprintf(stderr, "validate: warning: %d pinned digest(s) checked for their form only: there is no %s or %s here to compare them with, "+
			"so a .wasm file's SHA-256 pinned as an image's manifest digest passes; run make build oci, then make validate from the repository's root (or -image LAYOUT.tar)\n",
			img.unchecked, builtImage, builtWasm)
	case img.stale && img.compared > 0:
		fmt.Fprintf(stderr, "validate: warning: %s holds another .wasm than %s (make build ran after make oci): pinned digests were compared with both; run make oci to compare with the current build\n",
			builtImage, builtWasm)
	}
	if found == 0 && code == 0 {
		fmt.Fprintf(stderr, "validate: no mcp-resume-guard plugin configuration in %s: want a plugin configuration (a JSON object), "+
			"an Envoy bootstrap with the Wasm filter, an Istio WasmPlugin or an Envoy Gateway EnvoyExtensionPolicy\n", strings.Join(fset.Args(), " "))
		code = 1
	}
	return code
}

// report prints a target's findings (errors and warnings to stderr, an ok
// to stdout) and reports whether it had an error.
func report(stdout, stderr io.Writer, file string, t target) bool {
	errs, warns := 0, 0
	for _, f := range t.findings {
		at := file
		if s := f.at.String(); s != "" {
			at += ":" + s
		}
		kind := ""
		if f.warning {
			kind = "warning: "
			warns++
		} else {
			errs++
		}
		fmt.Fprintf(stderr, "%s: %s: %s%s\n", at, t.where, kind, f.msg)
	}
	switch {
	case errs > 0:
		fmt.Fprintf(stderr, "%s: %s: %d error(s); the guard would not run as this file means it to\n", file, t.where, errs)
	case warns > 0:
		fmt.Fprintf(stdout, "%s: %s: ok, %d warning(s)\n", file, t.where, warns)
	default:
		fmt.Fprintf(stdout, "%s: %s: ok\n", file, t.where)
	}
	return errs > 0
}

// input is a file to check; named: given on the command line rather than
// found in a directory.
type input struct {
	path  string
	named bool
}

// inputs expands directories into their .yaml, .yml and .json files (in
// order; hidden directories, build/ and testdata/ left out).
func inputs(args []string, stderr io.Writer, code *int) []input {
	var out []input
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			fmt.Fprintf(stderr, "validate: %v\n", err)
			*code = max(*code, 2)
			continue
		}
		if !st.IsDir() {
			out = append(out, input{path: a, named: true})
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != a && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "build" || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			switch filepath.Ext(p) {
			case ".yaml", ".yml", ".json":
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "validate: %v\n", err)
			*code = max(*code, 2)
		}
		sort.Strings(found)
		for _, p := range found {
			out = append(out, input{path: p})
		}
	}
	return out
}

// inspect finds the deployments of the plugin in a file and checks them;
// notes say what was skipped. named: the file was named on the command
// line, so a JSON object is a plugin configuration whatever its keys;
// isJSON: the file is named *.json.
func inspect(b []byte, named, isJSON bool, img *image) ([]target, []string) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var doc map[string]any
		err := json.Unmarshal(t, &doc)
		_, kind := doc["kind"]
		_, boot := doc["static_resources"]
		switch {
		case err == nil && (kind || boot):
			// A bootstrap or a manifest written as JSON: read as YAML.
		case err == nil && !named && !hasPluginKey(doc):
			return nil, []string{"a JSON object with none of the plugin configuration's keys: skipped"}
		case err == nil || named || isJSON:
			// Broken JSON too: the plugin's parser says what is wrong,
			// encoding/json where.
			fs, _ := jsonPlugin(yamlpos.Whole(b)).check()
			return []target{{where: "plugin configuration", findings: fs}}, nil
		}
	}
	docs, err := yamlpos.Documents(b)
	if err != nil {
		return []target{{where: "YAML", findings: []finding{{at: yamlErrorPos(err), msg: "not YAML or JSON: " + err.Error()}}}}, nil
	}
	var targets []target
	var notes []string
	for i, doc := range docs {
		label := "the file"
		if len(docs) > 1 {
			label = "document " + strconv.Itoa(i+1)
		}
		if doc == nil {
			continue
		}
		if doc.Kind != yaml.MappingNode {
			notes = append(notes, label+" is "+yamlpos.Describe(doc)+", not a manifest: skipped")
			continue
		}
		kind := yamlpos.Value(doc, "kind")
		switch {
		case kind != nil && kind.Value == "WasmPlugin":
			targets = append(targets, checkWasmPlugin(doc, img))
		case kind != nil && kind.Value == "EnvoyExtensionPolicy":
			ts := checkExtensionPolicy(doc, img)
			if len(ts) == 0 {
				notes = append(notes, fmt.Sprintf("%s (EnvoyExtensionPolicy %s) has no Wasm entry of mcp-resume-guard: skipped", label, objectName(doc)))
			}
			targets = append(targets, ts...)
		case kind != nil:
			notes = append(notes, fmt.Sprintf("%s (%s %s) carries no mcp-resume-guard plugin: skipped", label, kind.Value, objectName(doc)))
		case yamlpos.Value(doc, "static_resources") != nil:
			ts, _ := checkBootstrap(doc, b)
			if len(ts) == 0 {
				notes = append(notes, label+" (an Envoy bootstrap) has no Wasm filter of mcp-resume-guard: skipped")
			}
			targets = append(targets, ts...)
		default:
			notes = append(notes, label+" is neither a Kubernetes manifest nor an Envoy bootstrap: skipped")
		}
	}
	return targets, notes
}

// hasPluginKey reports whether a JSON object has a key of the plugin
// configuration, or none at all ({} is the default configuration).
func hasPluginKey(doc map[string]any) bool {
	if len(doc) == 0 {
		return true
	}
	for _, k := range config.Keys {
		if _, ok := doc[k]; ok {
			return true
		}
	}
	return false
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrorPos returns the line a YAML error names.
func yamlErrorPos(err error) yamlpos.Pos {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return yamlpos.Pos{Line: n, Column: 1}
	}
	return yamlpos.Pos{}
}
