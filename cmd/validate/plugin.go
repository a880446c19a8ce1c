package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/yamlpos"
)

// problem is one error of the plugin's parser, with the member it concerns:
// path is empty (the object as a whole), a top-level key, or "routes" and
// the index of an entry. offset is where a JSON syntax error is, -1 when
// there is none.
type problem struct {
	path   []string
	err    error
	offset int
}

// Check returns every error the plugin's parser finds in a configuration:
// config.Parse stops at the first, so each top-level key, and each entry of
// routes, is parsed on its own as well.
func Check(js []byte) []problem {
	_, err := config.Parse(js)
	if err == nil {
		return nil
	}
	fields, ferr := objectFields(js)
	if ferr != nil || fields == nil {
		// Not a JSON object: the parser says so, encoding/json says where.
		p := problem{err: err, offset: -1}
		var syn *json.SyntaxError
		if errors.As(json.Unmarshal(js, new(any)), &syn) {
			p.err, p.offset = errors.New(err.Error()+" ("+syn.Error()+")"), int(syn.Offset)-1
		}
		return []problem{p}
	}
	var out []problem
	seen := map[string]bool{}
	for _, f := range fields {
		if f.key == "routes" {
			out = append(out, checkRoutes(f.value)...)
			continue
		}
		if seen[f.key] {
			continue
		}
		seen[f.key] = true
		if _, e := config.Parse(object(f.key, f.value)); e != nil {
			out = append(out, problem{path: []string{f.key}, err: e, offset: -1})
		}
	}
	// What only the whole object shows: a key that appears twice.
	for _, p := range out {
		if p.err.Error() == err.Error() {
			return out
		}
	}
	return append(out, problem{err: err, offset: -1})
}

func checkRoutes(raw json.RawMessage) []problem {
	_, err := config.Parse(object("routes", raw))
	if err == nil {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return []problem{{path: []string{"routes"}, err: err, offset: -1}}
	}
	var out []problem
	for i, item := range items {
		one := append(append([]byte("["), item...), ']')
		if _, e := config.Parse(object("routes", one)); e != nil {
			n := strconv.Itoa(i)
			out = append(out, problem{path: []string{"routes", n}, err: errors.New(strings.Replace(e.Error(), "routes[0]", "routes["+n+"]", 1)), offset: -1})
		}
	}
	if len(out) == 0 {
		// About the list as a whole (its length).
		return []problem{{path: []string{"routes"}, err: err, offset: -1}}
	}
	return out
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

// plugin is one plugin configuration found in a file, and where it is.
type plugin struct {
	js []byte      // the configuration as the plugin receives it
	at yamlpos.Pos // where it starts in the file
	// root is the configuration as nodes; text, when set, is the JSON
	// text in the file that root was read from (root's positions are
	// within it), else root's positions are the file's.
	root *yaml.Node
	text *yamlpos.Text
}

// jsonPlugin is a plugin configuration written as JSON text in a file.
func jsonPlugin(text yamlpos.Text) *plugin {
	return &plugin{js: text.Bytes, at: text.Map(yamlpos.Pos{}), root: text.Nodes(), text: &text}
}

// pos maps a position of root to the file's.
func (p *plugin) pos(n *yaml.Node) yamlpos.Pos {
	if n == nil {
		return p.at
	}
	if p.text != nil {
		return p.text.Map(yamlpos.At(n))
	}
	return yamlpos.At(n)
}

// locate returns where the member at path is: a top-level key's key, an
// entry of routes (or the key of that entry msg names), or, for the object
// as a whole, the last occurrence of a key msg names (a key that appears
// twice); the configuration's start when unknown.
func (p *plugin) locate(path []string, msg string) yamlpos.Pos {
	n := p.root
	if n == nil {
		return p.at
	}
	if len(path) == 0 {
		if k := quotedKey(msg); k != "" && n.Kind == yaml.MappingNode {
			for i := len(n.Content) - 2; i >= 0; i -= 2 {
				if n.Content[i].Value == k {
					return p.pos(n.Content[i])
				}
			}
		}
		return p.pos(n)
	}
	key, v := yamlpos.Get(n, path[0])
	if key == nil {
		return p.pos(n)
	}
	if len(path) == 1 {
		return p.pos(key)
	}
	i, err := strconv.Atoi(path[1])
	if err != nil || v.Kind != yaml.SequenceNode || i >= len(v.Content) {
		return p.pos(key)
	}
	item := v.Content[i]
	if len(path) > 2 {
		if k, _ := yamlpos.Get(item, path[2]); k != nil {
			return p.pos(k)
		}
	}
	if item.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(item.Content); j += 2 {
			k := item.Content[j].Value
			if strings.Contains(msg, "]."+k) || strings.Contains(msg, strconv.Quote(k)) {
				return p.pos(item.Content[j])
			}
		}
	}
	return p.pos(item)
}

// quotedKey returns the key a message names as `key "x"`, or "".
func quotedKey(msg string) string {
	_, rest, ok := strings.Cut(msg, `key "`)
	if !ok {
		return ""
	}
	k, _, _ := strings.Cut(rest, `"`)
	return k
}

// check runs the plugin's parser on the configuration and returns its
// errors, each at its member, and the configuration when it parses. A
// configuration without routes parses but guards nothing: an error too.
func (p *plugin) check() ([]finding, *config.Config) {
	var out []finding
	for _, pr := range Check(p.js) {
		at := p.locate(pr.path, pr.err.Error())
		if pr.offset >= 0 && p.text != nil {
			at = p.text.Offset(pr.offset)
		}
		out = append(out, finding{at: at, msg: pr.err.Error()})
	}
	if len(out) > 0 {
		return out, nil
	}
	cfg, _ := config.Parse(p.js)
	if len(cfg.Routes) == 0 {
		out = append(out, finding{at: p.locate([]string{"routes"}, ""),
			msg: `key "routes" lists no route: the plugin guards no request (docs/configuration.md#routes)`})
	}
	return out, &cfg
}
