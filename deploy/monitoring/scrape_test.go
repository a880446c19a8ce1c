package monitoring_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/promtext"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/trial"
)

// TestAdminScrapeParses scrapes the trial proxy's admin (make run, the
// built plugin behind envoy/envoy.yaml) after one refused resume, as
// Prometheus scrapes Envoy's: Prometheus's own text parser accepts
// /stats/prometheus; every counter the alerts and the dashboard name is
// there under its own name, typed counter, without labels; and promtext,
// which the product module's tests read the same output with, reads the
// same families, types and values.
func TestAdminScrapeParses(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "..", "build", "mcp-resume-guard.wasm"))
	if err != nil {
		t.Fatalf("the plugin is not built (%v): run make build first (make test does)", err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := envoyconf.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trial.Start(context.Background(), trial.Options{
		Wasm: wasm, Envoy: bs, Listen: "127.0.0.1:0", Admin: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// An untagged cursor at a guarded route: refused, counted.
	req, _ := http.NewRequest("GET", "http://"+s.ProxyAddr+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s-1")
	req.Header.Set("Last-Event-ID", "e-104")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("an untagged resume: %s, want 404", resp.Status)
	}

	resp, err = http.Get("http://" + s.AdminAddr + "/stats/prometheus")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("Prometheus's text parser rejects /stats/prometheus: %v\n%s", err, body)
	}
	for _, name := range counters.Names() {
		f := fams[counters.Prefix+name]
		if f == nil || f.GetType() != dto.MetricType_COUNTER || len(f.GetMetric()) != 1 || len(f.GetMetric()[0].GetLabel()) != 0 {
			t.Errorf("%s%s: %v; want one counter without labels", counters.Prefix, name, f)
		}
	}
	if v := fams[counters.Prefix+counters.ReinitUntagged].GetMetric()[0].GetCounter().GetValue(); v != 1 {
		t.Errorf("%s%s = %v after one untagged resume, want 1", counters.Prefix, counters.ReinitUntagged, v)
	}
	for name := range fams {
		if strings.Contains(name, "wasmcustom") {
			t.Errorf("%s keeps Envoy's internal namespace", name)
		}
	}

	ours, err := promtext.Parse(string(body))
	if err != nil {
		t.Fatalf("promtext rejects what Prometheus reads: %v\n%s", err, body)
	}
	if len(ours) != len(fams) {
		t.Errorf("promtext reads %d families, Prometheus %d", len(ours), len(fams))
	}
	for name, f := range fams {
		o, ok := ours[name]
		if !ok || !strings.EqualFold(o.Type, f.GetType().String()) || len(o.Samples) != len(f.GetMetric()) {
			t.Errorf("%s: promtext %+v, Prometheus %v", name, o, f)
			continue
		}
		if f.GetType() != dto.MetricType_COUNTER && f.GetType() != dto.MetricType_GAUGE {
			continue
		}
		m := f.GetMetric()[0]
		if v, _ := o.Value(); v != m.GetCounter().GetValue()+m.GetGauge().GetValue() {
			t.Errorf("%s: promtext reads %v, Prometheus %v", name, v, m)
		}
	}
}
