package wasmhost

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/promtext"
)

// adminFixture is the probe plugin with one request counted and the admin
// handler in front of its host.
func adminFixture(t *testing.T) (*Host, *httptest.Server) {
	t.Helper()
	h, _ := newHost(t, "probe", Options{VMs: 2})
	if _, err := h.Simulate(Exchange{Request: get("/x"), Response: ok200()}); err != nil {
		t.Fatal(err)
	}
	admin := httptest.NewServer(AdminHandler(h))
	t.Cleanup(admin.Close)
	return h, admin
}

func adminGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStatsPrometheusParses: /stats/prometheus is Prometheus text
// exposition (read by promtext here; deploy/monitoring's
// TestAdminScrapeParses reads the trial proxy's with Prometheus's own
// parser); the plugin's metrics appear under their own names (no
// wasmcustom., no envoy_) with their types and values, the host's under
// envoy_ as Envoy names its own stats.
func TestStatsPrometheusParses(t *testing.T) {
	h, admin := adminFixture(t)
	status, body := adminGet(t, admin.URL+"/stats/prometheus")
	if status != 200 {
		t.Fatalf("GET /stats/prometheus: %d %s", status, body)
	}
	fams, err := promtext.Parse(body)
	if err != nil {
		t.Fatalf("the output is not Prometheus text: %v\n%s", err, body)
	}
	for name, want := range map[string]struct {
		typ   string
		value float64
	}{
		"probe_requests":               {"counter", 1},
		"probe_ticks":                  {"counter", 0},
		"probe_active":                 {"gauge", 0},
		"envoy_wasmhost_streams":       {"counter", 1},
		"envoy_wasmhost_vm_0_requests": {"counter", 1},
	} {
		f, ok := fams[name]
		got, one := f.Value()
		if !ok || f.Type != want.typ || !one || got != want.value {
			t.Errorf("%s: %+v; want one %s sample without labels at %v", name, f, want.typ, want.value)
		}
	}
	for name := range fams {
		if strings.Contains(name, "wasmcustom") {
			t.Errorf("metric %s keeps Envoy's internal namespace", name)
		}
	}
	// Envoy's spelling, byte for byte: TYPE line, empty label set, blank line.
	if !strings.Contains(body, "# TYPE probe_requests counter\nprobe_requests{} 1\n\n") {
		t.Errorf("probe_requests is not rendered as Envoy renders it:\n%s", body)
	}
	// Counters come before gauges.
	if strings.Index(body, "counter\n") > strings.Index(body, "gauge\n") {
		t.Errorf("gauges before counters:\n%s", body)
	}
	if v, _ := h.Metric("probe_requests"); v != 1 {
		t.Errorf("probe_requests = %d", v)
	}
}

// TestStatsText: /stats is Envoy's "name: value" text with the plugin's
// metrics under wasmcustom., sorted; filter= is an unanchored RE2 match on
// that full name; usedonly drops what never moved; a bad regex is 400.
func TestStatsText(t *testing.T) {
	_, admin := adminFixture(t)
	_, all := adminGet(t, admin.URL+"/stats")
	for _, want := range []string{"wasmcustom.probe_requests: 1\n", "wasmcustom.probe_ticks: 0\n", "wasmhost.vm.0.requests: 1\n"} {
		if !strings.Contains(all, want) {
			t.Errorf("/stats lacks %q:\n%s", want, all)
		}
	}
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i-1] >= lines[i] {
			t.Errorf("/stats not sorted at %q, %q", lines[i-1], lines[i])
		}
	}
	for query, want := range map[string]string{
		"?filter=probe_":                    "wasmcustom.probe_active: 0\nwasmcustom.probe_cas_mismatch: 0\nwasmcustom.probe_requests: 1\nwasmcustom.probe_ticks: 0\n",
		"?filter=^wasmcustom%5C.probe_r":    "wasmcustom.probe_requests: 1\n",
		"?filter=probe_&usedonly":           "wasmcustom.probe_requests: 1\n",
		"?filter=probe_t&format=prometheus": "# TYPE probe_ticks counter\nprobe_ticks{} 0\n\n",
		"?filter=^probe":                    "",
	} {
		if status, got := adminGet(t, admin.URL+"/stats"+query); status != 200 || got != want {
			t.Errorf("/stats%s = %d %q; want %q", query, status, got, want)
		}
	}
	if status, _ := adminGet(t, admin.URL+"/stats/prometheus?filter=probe_r"); status != 200 {
		t.Errorf("/stats/prometheus?filter: %d", status)
	}
	for _, bad := range []string{"/stats?filter=(", "/stats/prometheus?filter=(", "/stats?format=xml"} {
		if status, body := adminGet(t, admin.URL+bad); status != http.StatusBadRequest {
			t.Errorf("%s = %d %q; want 400", bad, status, body)
		}
	}
	if status, body := adminGet(t, admin.URL+"/ready"); status != 200 || body != "LIVE\n" {
		t.Errorf("/ready = %d %q", status, body)
	}
}

func TestPrometheusName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		custom bool
		want   string
		ok     bool
	}{
		{"wasmcustom.mcp_resume_guard_events_tagged_total", true, "mcp_resume_guard_events_tagged_total", true},
		{"wasmcustom.a.b-c", true, "a_b_c", true},
		{"wasmcustom.1abc", true, "", false},
		{"wasmcustom.", true, "", false},
		{"wasmhost.vm.0.requests", false, "envoy_wasmhost_vm_0_requests", true},
	} {
		got, ok := PrometheusName(tc.name, tc.custom)
		if got != tc.want || ok != tc.ok {
			t.Errorf("PrometheusName(%q, %v) = %q, %v; want %q, %v", tc.name, tc.custom, got, ok, tc.want, tc.ok)
		}
	}
}

// TestStatsQueryFilter: filter= matches anywhere in the name unless
// anchored, as Envoy's RE2 PartialMatch.
func TestStatsQueryFilter(t *testing.T) {
	q := StatsQuery{Filter: regexp.MustCompile("guard_re")}
	if !q.keep(AdminStat{Name: "wasmcustom.mcp_resume_guard_reinit_untagged_total", Kind: "counter"}) {
		t.Error("unanchored filter did not match inside the name")
	}
	q.UsedOnly = true
	if q.keep(AdminStat{Name: "wasmcustom.mcp_resume_guard_reinit_untagged_total", Kind: "counter"}) {
		t.Error("usedonly kept a counter at 0")
	}
}

// TestPluginCountersKeepTheirNames: Envoy's default tag extractors would
// cut a part out of a name ending in _rq_<code> or _rq_<digit>xx
// (source/common/config/well_known_names.cc; the others match only names
// starting with an Envoy scope such as cluster. or http., never
// wasmcustom.). No counter the plugin defines may end so, or
// /stats/prometheus would show it under another name with a label.
func TestPluginCountersKeepTheirNames(t *testing.T) {
	suffix := regexp.MustCompile(`_rq(_(\d{3}))$|_rq_(\d)xx$`)
	for _, name := range counters.Names() {
		full := CustomStatNamespace + counters.Prefix + name
		if suffix.MatchString(full) {
			t.Errorf("%s would lose a tag-extracted suffix in /stats/prometheus", full)
		}
		if got, ok := PrometheusName(full, true); !ok || got != counters.Prefix+name {
			t.Errorf("PrometheusName(%s) = %q, %v", full, got, ok)
		}
	}
}
