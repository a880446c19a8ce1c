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
		"search_index ran 2 times (retried at once after a 404, not after a 2s hang)",
		"search_index ran twice here too, and that is still the win",
		// the first minted ID shown is explained where it is shown
		"sse:~1r5.4.e-1010 says kind r (response),\nupstream ID e-101 and the stream's previous event e-100",
		"3. The same-transport drain race, default unacked_cursor policy",
		"drain race, filter: result replayed on the resume, silent losses 0, search_index ran 1 time(s)",
		"mcp-resume-guard: drain race:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
}

func TestExplainMinted(t *testing.T) {
	got := explainMinted([]string{"sse:~1r5.0.e-100", "sse:e-102", "http:~1e5.4.e-1043"})
	for _, want := range []string{"(http:)", "http:~1e5.4.e-1043 says kind e (error)", "upstream ID e-104", "previous event e-103"} {
		if !strings.Contains(got, want) {
			t.Errorf("explainMinted = %q; lacks %q", got, want)
		}
	}
	if got := explainMinted([]string{"sse:e-1", "sse:~1r3.0.e-1"}); got != "" {
		t.Errorf("explainMinted without a previous ID = %q; want \"\"", got)
	}
}
