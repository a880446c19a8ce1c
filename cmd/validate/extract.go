package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
)

// Found is one plugin configuration in a file.
type Found struct {
	Where string // what holds it: "plugin configuration", "WasmPlugin mcp/mcp-resume-guard spec.pluginConfig", ...
	JSON  []byte // the configuration as the plugin receives it
}

const (
	wasmFilterType  = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"
	stringValueType = "type.googleapis.com/google.protobuf.StringValue"
	pluginName      = "mcp-resume-guard"
)

// Extract finds the plugin configurations in a file.
func Extract(b []byte) ([]Found, error) {
	// A JSON object is taken as it is, byte for byte, as the plugin would
	// receive it — unless it is a bootstrap or a manifest written as JSON.
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var doc map[string]any
		if err := json.Unmarshal(t, &doc); err != nil || !isContainer(doc) {
			// Broken JSON too: the plugin's parser says what is wrong.
			return []Found{{Where: "plugin configuration", JSON: t}}, nil
		}
	}
	var out []Found
	docs := splitDocuments(b)
	for i, text := range docs {
		at := func(err error) error {
			if len(docs) == 1 {
				return err
			}
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		var doc any
		if err := yaml.Unmarshal(text, &doc); err != nil {
			return nil, at(fmt.Errorf("not YAML or JSON: %w", err))
		}
		m, ok := doc.(map[string]any)
		if !ok {
			continue // an empty document
		}
		found, err := fromDocument(m)
		if err != nil {
			return nil, at(err)
		}
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, errNoConfig
	}
	return out, nil
}

// isContainer reports whether a JSON object is a file that holds the plugin
// configuration rather than the configuration itself.
func isContainer(doc map[string]any) bool {
	_, kind := doc["kind"]
	_, boot := doc["static_resources"]
	return kind || boot
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(b []byte) [][]byte {
	var docs [][]byte
	var cur []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.TrimLeft(line, "-")) == "" {
			docs = append(docs, []byte(strings.Join(cur, "\n")))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(docs, []byte(strings.Join(cur, "\n")))
}

func fromDocument(m map[string]any) ([]Found, error) {
	kind, _ := m["kind"].(string)
	name := objectName(m)
	spec, _ := m["spec"].(map[string]any)
	switch {
	case kind == "WasmPlugin":
		pc, ok := spec["pluginConfig"]
		if !ok {
			// Istio hands the plugin no configuration: the plugin's
			// defaults guard no route.
			pc = map[string]any{}
		}
		js, err := json.Marshal(pc)
		if err != nil {
			return nil, err
		}
		return []Found{{Where: "WasmPlugin " + name + " spec.pluginConfig", JSON: js}}, nil
	case kind == "EnvoyExtensionPolicy":
		entries, _ := spec["wasm"].([]any)
		var out []Found
		for i, e := range entries {
			w, _ := e.(map[string]any)
			js, err := json.Marshal(orEmpty(w["config"]))
			if err != nil {
				return nil, err
			}
			out = append(out, Found{Where: fmt.Sprintf("EnvoyExtensionPolicy %s spec.wasm[%d] (%v).config", name, i, w["name"]), JSON: js})
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("EnvoyExtensionPolicy %s has no spec.wasm entry", name)
		}
		return out, nil
	case kind != "":
		return nil, nil // another manifest of the same file (an HTTPRoute, ...)
	case m["static_resources"] != nil:
		return fromBootstrap(m)
	}
	return nil, errNoConfig
}

func orEmpty(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return v
}

func objectName(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		return ns + "/" + name
	}
	return name
}

// wasmFilter is one Wasm HTTP filter of a bootstrap.
type wasmFilter struct {
	path   string
	config map[string]any
}

// fromBootstrap finds the Wasm filters of an Envoy bootstrap wherever they
// are (listeners, filter chains), and takes the configuration of the one
// that runs this plugin: its name, root_id or vm_id is mcp-resume-guard, or
// its code file is named after it; a bootstrap with a single Wasm filter
// needs no such mark.
func fromBootstrap(m map[string]any) ([]Found, error) {
	var filters []wasmFilter
	walk(m, "", func(path string, obj map[string]any) {
		if obj["@type"] == wasmFilterType {
			c, _ := obj["config"].(map[string]any)
			filters = append(filters, wasmFilter{path: path, config: c})
		}
	})
	if len(filters) == 0 {
		return nil, errors.New("an Envoy bootstrap without a Wasm HTTP filter (" + wasmFilterType + ")")
	}
	var ours []wasmFilter
	for _, f := range filters {
		if len(filters) == 1 || runsPlugin(f.config) {
			ours = append(ours, f)
		}
	}
	if len(ours) == 0 {
		return nil, fmt.Errorf("an Envoy bootstrap with %d Wasm filters, none named %s (config.name, root_id, vm_config.vm_id or the code's file name)", len(filters), pluginName)
	}
	var out []Found
	for _, f := range ours {
		where := "Envoy bootstrap " + f.path + ".config.configuration"
		conf, ok := f.config["configuration"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: missing: the plugin needs its routes", where)
		}
		if t := conf["@type"]; t != stringValueType {
			return nil, fmt.Errorf("%s: @type %v; want %s (the plugin configuration is a JSON string)", where, t, stringValueType)
		}
		value, _ := conf["value"].(string)
		out = append(out, Found{Where: where, JSON: []byte(value)})
	}
	return out, nil
}

func runsPlugin(c map[string]any) bool {
	vm, _ := c["vm_config"].(map[string]any)
	for _, v := range []any{c["name"], c["root_id"], vm["vm_id"]} {
		if v == pluginName {
			return true
		}
	}
	code, _ := vm["code"].(map[string]any)
	local, _ := code["local"].(map[string]any)
	file, _ := local["filename"].(string)
	return strings.Contains(file, pluginName)
}

// walk calls fn for every object in v, with its path.
func walk(v any, path string, fn func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(path, v)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walk(v[k], p, fn)
		}
	case []any:
		for i, e := range v {
			walk(e, path+"["+strconv.Itoa(i)+"]", fn)
		}
	}
}

// Check returns every error the plugin's parser finds in a configuration:
// config.Parse stops at the first, so each top-level key, and each entry of
// routes, is parsed on its own as well.
func Check(js []byte) []error {
	_, err := config.Parse(js)
	if err == nil {
		return nil
	}
	fields, ferr := objectFields(js)
	if ferr != nil || fields == nil {
		return []error{err} // not a JSON object: the parser says so
	}
	var errs []error
	seen := map[string]bool{}
	for _, f := range fields {
		if f.key == "routes" {
			errs = append(errs, checkRoutes(f.value)...)
			continue
		}
		if seen[f.key] {
			continue
		}
		seen[f.key] = true
		if _, e := config.Parse(object(f.key, f.value)); e != nil {
			errs = append(errs, e)
		}
	}
	// What only the whole object shows: a key that appears twice.
	if !containsMessage(errs, err) {
		errs = append(errs, err)
	}
	return errs
}

func checkRoutes(raw json.RawMessage) []error {
	_, err := config.Parse(object("routes", raw))
	if err == nil {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return []error{err}
	}
	var errs []error
	for i, item := range items {
		one := append(append([]byte("["), item...), ']')
		if _, e := config.Parse(object("routes", one)); e != nil {
			errs = append(errs, errors.New(strings.Replace(e.Error(), "routes[0]", "routes["+strconv.Itoa(i)+"]", 1)))
		}
	}
	if len(errs) == 0 {
		return []error{err} // about the list as a whole (its length)
	}
	return errs
}

func containsMessage(errs []error, err error) bool {
	for _, e := range errs {
		if e.Error() == err.Error() {
			return true
		}
	}
	return false
}

func object(key string, value []byte) []byte {
	k, _ := json.Marshal(key)
	return append(append(append(append([]byte("{"), k...), ':'), value...), '}')
}

type field struct {
	key   string
	value json.RawMessage
}

// objectFields returns the members of a JSON object in order, duplicates
// included; nil when js is not an object.
func objectFields(js []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, err
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{key: t.(string), value: v})
	}
	return out, nil
}
