package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDemo runs the demo against the built plugin and checks what it tells:
// the loss without the filter, the refusal with it, and the third act's
// drain race answered by replaying the result under the default policy,
// the tool run once.
func TestDemo(t *testing.T) {
	var out strings.Builder
	ok, err := run([]string{
		"-wasm", filepath.Join("..", "..", "build", "mcp-resume-guard.wasm"),
		"-config", filepath.Join("..", "..", "envoy", "plugin-config", "envoy.json"),
	}, &out)
	text := out.String()
	t.Log("\n" + text)
	if err != nil {
		t.Fatalf("the demo could not run (run make build first): %v", err)
	}
	if !ok {
		t.Error("the demo reports it did not show what it should")
	}
	for _, want := range []string{
		"without the filter: result silently lost",
		"with the filter:    result refused at once",
		"3. The same-transport drain race, default unacked_cursor policy",
		"drain race, filter: result replayed on the resume, silent losses 0, search_index ran 1 time(s)",
		"mcp-resume-guard: drain race:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
}
