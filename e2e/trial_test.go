package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	guardcounters "github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/promtext"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
)

// TestTrialProxySDKClients starts what `make run` starts (internal/trial
// configured by envoy/envoy.yaml, in front of the reference server it starts
// itself) and drives it with the official MCP Go SDK client over both
// transports, reading the counters from its admin /stats as from Envoy's;
// its /stats/prometheus then carries every counter the plugin defines.
func TestTrialProxySDKClients(t *testing.T) {
	skipExternal(t, "it starts its own trial proxy")
	envoyYAML, err := os.ReadFile(filepath.Join("..", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := envoyconf.Parse(envoyYAML)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trial.Start(context.Background(), trial.Options{
		Wasm: pluginWasm(t), Envoy: bs, Listen: "127.0.0.1:0", Admin: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	tg := &target{proxyURL: "http://" + s.ProxyAddr, upstreamURL: s.UpstreamURL, adminURL: "http://" + s.AdminAddr, http: client}

	for _, tc := range sdkTransports {
		t.Run(tc.name, func(t *testing.T) { sdkSession(t, tg, "trial_"+tc.name, tc.transport) })
	}

	resp, err := client.Get(tg.adminURL + "/stats/prometheus")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := promtext.Parse(string(body))
	if err != nil {
		t.Fatalf("/stats/prometheus: %v", err)
	}
	var tagged float64
	for _, name := range guardcounters.Names() {
		v, one := fams[guardcounters.Prefix+name].Value()
		if !one {
			t.Errorf("/stats/prometheus lacks %s%s", guardcounters.Prefix, name)
			continue
		}
		if name == guardcounters.EventsTagged {
			tagged = v
		}
	}
	if tagged < 2 {
		t.Errorf("events_tagged_total = %v after two SDK sessions", tagged)
	}
	for name := range fams {
		if strings.HasPrefix(name, "wasmcustom") {
			t.Errorf("%s keeps Envoy's internal namespace", name)
		}
	}
}
