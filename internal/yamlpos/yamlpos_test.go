package yamlpos

import (
	"go.yaml.in/yaml/v4"
	"strings"
	"testing"
)

// TestEmbeddedLiteralBlock: a place in JSON written in a literal block
// (an Envoy bootstrap's configuration value) maps to the file's line and
// column; in a quoted scalar, to the scalar's start.
func TestEmbeddedLiteralBlock(t *testing.T) {
	src := "a:\n  value: |\n\n    {\n      \"routes\": [1]\n    }\n  quoted: \"{\\\"x\\\": 1}\"\n"
	docs, err := Documents([]byte(src))
	if err != nil || len(docs) != 1 {
		t.Fatalf("%v, %d documents", err, len(docs))
	}
	text := Embedded(Value(docs[0], "a", "value"), []byte(src))
	root := text.Nodes()
	k, _ := Get(root, "routes")
	if got := text.Map(At(k)); got != (Pos{5, 7}) {
		t.Errorf("routes key at %v, want 5:7", got)
	}
	off := strings.Index(string(text.Bytes), "[1]")
	if got := text.Offset(off); got != (Pos{5, 17}) {
		t.Errorf("offset of [1] at %v, want 5:17", got)
	}
	q := Embedded(Value(docs[0], "a", "quoted"), []byte(src))
	if got := q.Offset(3); got != (Pos{7, 11}) {
		t.Errorf("quoted scalar place at %v, want its start 7:11", got)
	}
	if got := Whole([]byte("{\n  \"a\": 1}")).Offset(4); got != (Pos{2, 3}) {
		t.Errorf("whole file offset at %v, want 2:3", got)
	}
}

// TestScalars: what YAML makes of a digest, and how it is described.
func TestScalars(t *testing.T) {
	docs, err := Documents([]byte("a: " + strings.Repeat("0", 64) + "\nb: \"" + strings.Repeat("0", 64) + "\"\nc: true\n---\n---\n- 1\n"))
	if err != nil || len(docs) != 3 {
		t.Fatalf("%v, %d documents", err, len(docs))
	}
	if a := Value(docs[0], "a"); IsString(a) || !strings.HasPrefix(Describe(a), "a number (000000000000…)") {
		t.Errorf("unquoted zeros: string %v, %s", IsString(a), Describe(a))
	}
	if !IsString(Value(docs[0], "b")) || IsString(Value(docs[0], "c")) || Describe(Value(docs[0], "c")) != "a boolean (true)" {
		t.Error("quoted zeros must be a string, true a boolean")
	}
	if docs[1] != nil || Describe(docs[2]) != "a list" || Value(docs[0], "a", "x") != nil {
		t.Errorf("empty document %v, list %s", docs[1], Describe(docs[2]))
	}
	if _, err := Documents([]byte("a: [\n")); err == nil {
		t.Error("broken YAML accepted")
	}
}

func TestToJSON(t *testing.T) {
	docs, err := Documents([]byte("routes:\n- path_prefix: /mcp\n  transport: http\nmax_sessions: 5\n1: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := ToJSON(docs[0])
	if err != nil || string(js) != `{"1":"x","max_sessions":5,"routes":[{"path_prefix":"/mcp","transport":"http"}]}` {
		t.Errorf("%s, %v", js, err)
	}
	if _, err := ToJSON(mustRoot(t, "a: 1\na: 2\n")); err == nil {
		t.Error("a duplicate key accepted")
	}
}

func mustRoot(t *testing.T, s string) *yaml.Node {
	t.Helper()
	docs, err := Documents([]byte(s))
	if err != nil || len(docs) == 0 {
		t.Fatal(err)
	}
	return docs[0]
}
