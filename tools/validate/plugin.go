package main

import (
	"encoding/json"
	"errors"
	"strconv"

	"go.yaml.in/yaml/v4"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/yamlpos"
)

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

// locate returns where the member at path (a config.Error's Path) is: a
// top-level key's key, an entry of routes, a key of that entry; second:
// the second occurrence of the last key (a key that appears twice). Where
// path leads nowhere in the file, the nearest member on the way; the
// configuration's start when there is none.
func (p *plugin) locate(path []string, second bool) yamlpos.Pos {
	n := p.root
	if n == nil {
		return p.at
	}
	if len(path) == 0 {
		return p.pos(n)
	}
	key, v := member(n, path[0], second && len(path) == 1)
	if key == nil {
		return p.pos(n)
	}
	if len(path) == 1 {
		return p.pos(key)
	}
	i, err := strconv.Atoi(path[1])
	if err != nil || v.Kind != yaml.SequenceNode || i < 0 || i >= len(v.Content) {
		return p.pos(key)
	}
	item := v.Content[i]
	if len(path) > 2 {
		if k, _ := member(item, path[2], second); k != nil {
			return p.pos(k)
		}
	}
	return p.pos(item)
}

// member returns the key and value nodes of key in the mapping n (its
// second occurrence with second, else its first); nils when absent.
func member(n *yaml.Node, key string, second bool) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != key {
			continue
		}
		if second {
			second = false
			continue
		}
		return n.Content[i], n.Content[i+1]
	}
	return nil, nil
}

// check runs the plugin's parser on the configuration and returns its
// errors, each at the member its Path names, and the configuration when it
// parses. A JSON syntax error is placed, and described, by encoding/json
// (the plugin's parser says only that the text is not JSON). A
// configuration without routes parses but guards nothing: an error too.
func (p *plugin) check() ([]finding, *config.Config) {
	cfg, err := config.Parse(p.js)
	if err != nil {
		var errs config.Errors
		if !errors.As(err, &errs) {
			return []finding{{at: p.at, msg: err.Error()}}, nil
		}
		out := make([]finding, 0, len(errs))
		for _, e := range errs {
			f := finding{at: p.locate(e.Path, e.Duplicate), msg: e.Error()}
			var syn *json.SyntaxError
			if len(e.Path) == 0 && errors.As(json.Unmarshal(p.js, new(any)), &syn) {
				f.msg += " (" + syn.Error() + ")"
				if p.text != nil {
					f.at = p.text.Offset(int(syn.Offset) - 1)
				}
			}
			out = append(out, f)
		}
		return out, nil
	}
	if len(cfg.Routes) == 0 {
		return []finding{{at: p.locate([]string{"routes"}, false),
			msg: `key "routes" lists no route: the plugin guards no request (docs/configuration.md#routes)`}}, nil
	}
	return nil, &cfg
}
