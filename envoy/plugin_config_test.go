package envoy_test

import (
	"path/filepath"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
)

// TestPluginConfigExamples: every published example is accepted by the
// plugin's own parser and guards at least one route; unwind.json unwinds
// (and only it).
func TestPluginConfigExamples(t *testing.T) {
	files, err := filepath.Glob("plugin-config/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("found %d examples under plugin-config/; want envoy, paths, rollout, rewind, reinit, unwind", len(files))
	}
	for _, f := range files {
		cfg, err := config.Parse(readFile(t, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(cfg.Routes) == 0 {
			t.Errorf("%s lists no routes; the filter would guard nothing", f)
		}
		if want := filepath.Base(f) == "unwind.json"; cfg.Unwind != want {
			t.Errorf("%s: unwind %v, want %v", f, cfg.Unwind, want)
		}
	}
}
