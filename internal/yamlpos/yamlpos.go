// Package yamlpos reads YAML (and JSON, which YAML reads too) into nodes that
// know their line and column, so that a check can point at the user's own
// line: where a key is in a manifest, and where a JSON text embedded in a
// YAML string (an Envoy bootstrap's plugin configuration) puts a member.
package yamlpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Pos is a place in a file: 1-based line and column; the zero Pos is
// unknown.
type Pos struct{ Line, Column int }

// String returns "LINE:COLUMN", or "" when p is unknown.
func (p Pos) String() string {
	if p.Line == 0 {
		return ""
	}
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// At returns where n starts; the zero Pos for nil.
func At(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{n.Line, n.Column}
}

// Documents parses every document of a YAML stream and returns the root
// node of each (a mapping, a list or a scalar), nil for an empty document.
// A syntax error names its line.
func Documents(b []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var root *yaml.Node
		if len(doc.Content) > 0 && !isNull(doc.Content[0]) {
			root = doc.Content[0]
		}
		out = append(out, root)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Get follows keys through nested mappings and returns the key node and
// the value node of the last one; nils when a key is absent or a value on
// the way is not a mapping.
func Get(n *yaml.Node, keys ...string) (key, value *yaml.Node) {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil, nil
		}
		key, value = nil, nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				key, value = n.Content[i], n.Content[i+1]
				break
			}
		}
		n = value
	}
	return key, value
}

// Value returns the value node of a key path, nil when absent.
func Value(n *yaml.Node, keys ...string) *yaml.Node {
	_, v := Get(n, keys...)
	return v
}

// IsString reports whether n is a scalar YAML reads as a string (a plain
// 000… or 1e3 is a number, true a boolean, and a manifest's string field
// refuses them).
func IsString(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// Describe says what a node is, for messages: "a number (0000…)", "a list".
func Describe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "missing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 12 {
		v = v[:12] + "…"
	}
	switch n.ShortTag() {
	case "!!str":
		return "the string " + strconv.Quote(v)
	case "!!int", "!!float":
		return "a number (" + v + ")"
	case "!!bool":
		return "a boolean (" + v + ")"
	case "!!null":
		return "null"
	}
	return n.ShortTag() + " " + v
}

// ToJSON renders a YAML subtree as the JSON a Kubernetes API server (and
// Istio's Struct) hands on: mappings as objects, numbers as numbers.
func ToJSON(n *yaml.Node) ([]byte, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(jsonable(v))
}

// jsonable turns the map[string]any/[]any tree Decode returns into one
// encoding/json can marshal (YAML keys may be non-strings).
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonable(e)
		}
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonable(e)
		}
	}
	return v
}

// Text is a text that lies in a file: the file itself, or the value of a
// YAML scalar (a literal block keeps lines and columns; another scalar
// puts every place at the scalar's own start).
type Text struct {
	Bytes []byte
	// where the text starts in the file, and how its lines are indented
	// there (a literal block); exact reports whether offsets map exactly.
	start  Pos
	indent int
	block  bool
}

// Whole is a file's own text.
func Whole(b []byte) Text { return Text{Bytes: b, start: Pos{1, 1}} }

// Embedded is the value of the scalar n of the file src.
func Embedded(n *yaml.Node, src []byte) Text {
	t := Text{Bytes: []byte(n.Value), start: At(n)}
	if n.Style&(yaml.LiteralStyle) == 0 {
		return t
	}
	// A literal block: its content starts on the line after the
	// indicator, indented by the first non-blank line's indentation.
	lines := strings.Split(string(src), "\n")
	for i := n.Line; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		t.indent = len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		t.block = true
		break
	}
	return t
}

// Map returns where a place of the text (1-based line and column within
// it) is in the file.
func (t Text) Map(p Pos) Pos {
	switch {
	case p.Line == 0:
		return t.start
	case t.block:
		return Pos{t.start.Line + p.Line, t.indent + p.Column}
	case t.start == Pos{1, 1}:
		return p
	}
	return t.start
}

// Offset returns where byte offset off of the text is in the file.
func (t Text) Offset(off int) Pos {
	off = min(max(off, 0), len(t.Bytes))
	line := 1 + bytes.Count(t.Bytes[:off], []byte("\n"))
	col := off - (bytes.LastIndexByte(t.Bytes[:off], '\n') + 1) + 1
	return t.Map(Pos{line, col})
}

// Nodes parses the text as YAML (a JSON text is YAML) and returns its root
// node, whose positions are within the text (Map turns them into the
// file's); nil when it does not parse.
func (t Text) Nodes() *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal(t.Bytes, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}
