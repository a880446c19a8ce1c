package trial

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
)

// TestBannerWarnsUnmatchedRoutes: a plugin route name no route carries is
// a banner warning, found by the same envoyconf.CrossCheck make validate
// runs, and so is the filtered route it leaves unguarded.
func TestBannerWarnsUnmatchedRoutes(t *testing.T) {
	text := strings.Replace(string(readFile(t, envoyFile)), `{"route_name": "mcp-streamable", "transport": "http"}`, `{"route_name": "mcp-streamabel", "transport": "http"}`, 1)
	bs, err := envoyconf.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Options{
		Wasm: readFile(t, wasmFile), WasmPath: "build/mcp-resume-guard.wasm", Envoy: bs, EnvoyPath: "envoy.yaml",
		Upstream: "http://127.0.0.1:1", Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var banner bytes.Buffer
	s.WriteBanner(&banner)
	for _, want := range []string{
		`warning   the plugin guards route "mcp-streamabel", which no route of the table is named: it never matches`,
		`route "mcp-streamable" (/mcp) runs the filter, but no plugin route matches it: its requests pass unguarded`,
	} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, banner.String())
		}
	}
}
