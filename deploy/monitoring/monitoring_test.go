package monitoring_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

const (
	rulesFile     = "alerts.yaml"
	dashboardFile = "dashboard.json"
)

// promql parses PromQL as Prometheus does, with its stable functions only.
var promqlParser = parser.NewParser(parser.Options{})

// definedMetrics returns the metric names the plugin defines, from package
// counters, their single source of truth.
func definedMetrics() []string {
	var names []string
	for _, n := range counters.Names() {
		names = append(names, counters.Prefix+n)
	}
	return names
}

// platformMetrics are the metrics of Envoy and Istio the rules may use
// besides the plugin's, each with where it is defined (alerts.yaml cites
// the same sources): the guard's absence and Wasm load failures show only
// there.
var platformMetrics = map[string]string{
	"envoy_wasm_remote_load_fetch_failures":    "envoyproxy/envoy source/extensions/common/wasm/stats_handler.h CREATE_WASM_STATS, prefix wasm.",
	"istio_agent_wasm_remote_fetch_count":      "istio/istio pkg/wasm/monitoring.go wasm_remote_fetch_count, prefix istio_agent_",
	"istio_agent_wasm_config_conversion_count": "istio/istio pkg/wasm/monitoring.go wasm_config_conversion_count, prefix istio_agent_",
}

// metricNames parses a PromQL expression and returns the metric names it
// selects. Every selector must name its metric exactly, and every name must
// be one the plugin defines or one of platformMetrics.
func metricNames(expr string) ([]string, error) {
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("PromQL %q: %w", expr, err)
	}
	defined := definedMetrics()
	var names []string
	var errs []error
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && (m.Type != labels.MatchEqual || name == "") {
				name = m.Value
				if m.Type != labels.MatchEqual {
					errs = append(errs, fmt.Errorf("%s: select metrics by exact name, not %s", vs, m))
				}
			}
		}
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("%s: selects no metric by name", vs))
		case !slices.Contains(defined, name) && platformMetrics[name] == "":
			errs = append(errs, fmt.Errorf("%s: the plugin defines no metric %s (package counters), nor is it one of Envoy's or Istio's the rules know", vs, name))
		default:
			names = append(names, name)
		}
		return nil
	})
	return names, errors.Join(errs...)
}

// severities are the severity labels the rules use, from most to least
// urgent; docs/operations.md's Monitoring section explains each.
var severities = []string{"critical", "warning", "info"}

// checkRules validates a Prometheus rule file: the format and every
// expression and template (rulefmt, strict), the metric names (package
// counters), and what an operator needs from each alert. It returns the
// metric names the rules use and the alert names.
func checkRules(content []byte) (metrics, alerts []string, err error) {
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, promqlParser, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("rulefmt: %w", errors.Join(errs...))
	}
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				fail("group %s: recording rule %s: this file holds alerts only", g.Name, r.Record)
				continue
			}
			alerts = append(alerts, r.Alert)
			names, err := metricNames(r.Expr)
			if err != nil {
				fail("alert %s: %w", r.Alert, err)
			}
			metrics = append(metrics, names...)
			if !slices.Contains(severities, r.Labels["severity"]) {
				fail("alert %s: severity %q; want one of %v", r.Alert, r.Labels["severity"], severities)
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					fail("alert %s: no %s annotation (the summary says what to do)", r.Alert, a)
				}
			}
		}
	}
	return metrics, alerts, errors.Join(errs...)
}

// requiredAlerts names, for each condition the operator must hear about, the
// metric its alert watches: an alert on that condition must exist and its
// expression must use that metric.
var requiredAlerts = map[string][]string{
	"McpResumeGuardFailOpen":          {counters.FailOpen},
	"McpResumeGuardSSEOverflow":       {counters.SSEOverflow},
	"McpResumeGuardCASConflictsHigh":  {counters.CASConflicts},
	"McpResumeGuardDrainRaceBurst":    {counters.DrainRaceDetected, counters.UntaggedPassthrough},
	"McpResumeGuardReinitBurst":       {counters.ReinitCrossTransport, counters.ReinitUntagged, counters.ReinitDrainRace, counters.ReinitTombstoned, counters.ReinitUnknown, counters.UntaggedPassthrough},
	"McpResumeGuardRolloutWindowOver": {counters.UntaggedPassthrough},
	"McpResumeGuardAbsent":            {counters.FailOpen},
}

// requiredPlatformAlerts names, for each condition only Envoy's or Istio's
// metrics show, the metrics (full names) its alert must watch.
var requiredPlatformAlerts = map[string][]string{
	"McpResumeGuardWasmLoadFailed": {"istio_agent_wasm_remote_fetch_count", "istio_agent_wasm_config_conversion_count", "envoy_wasm_remote_load_fetch_failures"},
}

// absentAlerts must call absent(): they fire when the guard's series are
// missing altogether, which no comparison of values can see.
var absentAlerts = []string{"McpResumeGuardAbsent"}

// callsAbsent reports whether expr calls PromQL's absent().
func callsAbsent(expr string) bool {
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return false
	}
	found := false
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if c, ok := node.(*parser.Call); ok && c.Func.Name == "absent" {
			found = true
		}
		return nil
	})
	return found
}

// checkRequiredAlerts checks that every alert of requiredAlerts exists and
// watches its metrics.
func checkRequiredAlerts(content []byte) error {
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, promqlParser, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	found := map[string][]string{}
	exprs := map[string]string{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			found[r.Alert], _ = metricNames(r.Expr)
			exprs[r.Alert] = r.Expr
		}
	}
	want := map[string][]string{}
	for alert, ms := range requiredAlerts {
		for _, m := range ms {
			want[alert] = append(want[alert], counters.Prefix+m)
		}
	}
	for alert, ms := range requiredPlatformAlerts {
		want[alert] = append(want[alert], ms...)
	}
	for alert, ms := range want {
		got, ok := found[alert]
		if !ok {
			errs = append(errs, fmt.Errorf("no alert %s", alert))
			continue
		}
		for _, m := range ms {
			if !slices.Contains(got, m) {
				errs = append(errs, fmt.Errorf("alert %s does not watch %s", alert, m))
			}
		}
	}
	for _, alert := range absentAlerts {
		if e, ok := exprs[alert]; ok && !callsAbsent(e) {
			errs = append(errs, fmt.Errorf("alert %s does not call absent(): a missing series compares to nothing", alert))
		}
	}
	return errors.Join(errs...)
}

// grafanaVariables are the Grafana built-in variables a panel query may use,
// with a value that stands for them when the query is parsed as PromQL.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// checkDashboard decodes a Grafana dashboard strictly with Grafana's schema
// types (timeseries panels, Prometheus queries), parses every query, and
// checks that each counter the plugin defines appears in exactly one panel
// (one panel per counter family), and each Envoy or Istio metric an alert
// watches in one too. It returns the metric names the panels use.
func checkDashboard(content []byte) ([]string, error) {
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(content); !noBuildErrors(err) {
		return nil, fmt.Errorf("grafana schema: %w", err)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("grafana schema: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if d.Uid == nil || *d.Uid == "" {
		fail("the dashboard has no uid: links to it would break on every import")
	}
	if d.Templating.List == nil || !slices.ContainsFunc(d.Templating.List, func(v dashboard.VariableModel) bool {
		return v.Type == "datasource" && v.Name == "datasource" && v.Query != nil && v.Query.String != nil && *v.Query.String == "prometheus"
	}) {
		fail("no datasource variable named datasource for Prometheus data sources")
	}

	// Panels, their options and queries one by one: v0.0.22's strict
	// decoders return an empty cog.BuildErrors for success, which the
	// enclosing decoders take for a failure and silently drop the part.
	var raw struct {
		Panels []struct {
			Options     json.RawMessage
			FieldConfig struct {
				Defaults struct{ Custom json.RawMessage }
			}
			Targets []json.RawMessage
		}
	}
	if err := json.Unmarshal(content, &raw); err != nil {
		return nil, err
	}
	var all []string
	panelOf := map[string]string{} // metric → the panel that shows it
	ids := map[uint32]bool{}
	var panels []json.RawMessage
	if err := json.Unmarshal(content, &struct{ Panels *[]json.RawMessage }{&panels}); err != nil {
		return nil, err
	}
	for i, rp := range panels {
		var p dashboard.Panel
		if err := p.UnmarshalJSONStrict(rp); !noBuildErrors(err) {
			fail("panels[%d]: grafana schema: %w", i, err)
			continue
		}
		var opts timeseries.Options
		if err := opts.UnmarshalJSONStrict(raw.Panels[i].Options); !noBuildErrors(err) {
			fail("panels[%d].options: grafana schema: %w", i, err)
		}
		if custom := raw.Panels[i].FieldConfig.Defaults.Custom; custom != nil {
			var fc timeseries.FieldConfig
			if err := fc.UnmarshalJSONStrict(custom); !noBuildErrors(err) {
				fail("panels[%d].fieldConfig.defaults.custom: grafana schema: %w", i, err)
			}
		}
		title := fmt.Sprint(i)
		if p.Title != nil && *p.Title != "" {
			title = *p.Title
		} else {
			fail("panels[%d]: no title", i)
		}
		if p.Id == nil || ids[*p.Id] {
			fail("panel %q: missing or duplicate id", title)
		} else {
			ids[*p.Id] = true
		}
		if p.Type != "timeseries" {
			fail("panel %q: type %q; want timeseries", title, p.Type)
		}
		if p.Datasource == nil || p.Datasource.Uid == nil || *p.Datasource.Uid != "${datasource}" {
			fail("panel %q does not use the ${datasource} variable", title)
		}
		if len(raw.Panels[i].Targets) == 0 {
			fail("panel %q: no queries", title)
		}
		for j, rt := range raw.Panels[i].Targets {
			var q prometheus.Dataquery
			if err := q.UnmarshalJSONStrict(rt); !noBuildErrors(err) {
				fail("panel %q: targets[%d]: grafana schema (Prometheus query): %w", title, j, err)
				continue
			}
			if q.Datasource == nil || q.Datasource.Uid == nil || *q.Datasource.Uid != "${datasource}" {
				fail("panel %q: query %q does not use the ${datasource} variable", title, q.Expr)
			}
			names, err := metricNames(grafanaVariables.Replace(q.Expr))
			if err != nil {
				fail("panel %q: %w", title, err)
			}
			for _, n := range names {
				if other, ok := panelOf[n]; ok && other != title {
					fail("%s is shown in panels %q and %q; want one panel per counter family", n, other, title)
				}
				panelOf[n] = title
			}
			all = append(all, names...)
		}
	}
	for _, m := range definedMetrics() {
		if _, ok := panelOf[m]; !ok {
			fail("no panel shows %s", m)
		}
	}
	for m := range platformMetrics {
		if _, ok := panelOf[m]; !ok {
			fail("no panel shows %s, which an alert watches", m)
		}
	}
	return all, errors.Join(errs...)
}

// noBuildErrors reports whether err means success: the SDK's strict
// decoder returns an empty cog.BuildErrors as a non-nil error.
func noBuildErrors(err error) bool {
	var be cog.BuildErrors
	return err == nil || errors.As(err, &be) && len(be) == 0
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAlertRules(t *testing.T) {
	content := readFile(t, rulesFile)
	metrics, alerts, err := checkRules(content)
	if err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if err := checkRequiredAlerts(content); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	t.Logf("%d alerts %v over %d metric selectors", len(alerts), alerts, len(metrics))
}

func TestDashboard(t *testing.T) {
	metrics, err := checkDashboard(readFile(t, dashboardFile))
	if err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	t.Logf("%d metric selectors, every counter the plugin defines", len(metrics))
}

// TestMetricNamesComeFromCounters guards the check itself: a name the plugin
// does not define, or a selector that does not name its metric, fails.
func TestMetricNamesComeFromCounters(t *testing.T) {
	for _, n := range counters.Names() {
		if _, err := metricNames("rate(" + counters.Prefix + n + "[5m])"); err != nil {
			t.Errorf("a defined counter was refused: %v", err)
		}
	}
	for expr, wantErr := range map[string]string{
		"rate(mcp_resume_guard_reinits_total[5m])":                       "defines no metric mcp_resume_guard_reinits_total",
		`rate({__name__=~"mcp_resume_guard_reinit_.+"}[5m])`:             "exact name",
		`sum(rate({job="envoy"}[5m]))`:                                   "selects no metric by name",
		"envoy_cluster_upstream_rq_total":                                "defines no metric envoy_cluster_upstream_rq_total",
		"increase(mcp_resume_guard_fail_open_total[5m] > 0":              "unclosed left parenthesis",
		"increase(mcp_resume_guard_fail_open_total[5m]) > 0 and on(job)": "unexpected end of input",
	} {
		_, err := metricNames(expr)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v; want one containing %q", expr, err, wantErr)
		}
	}
}

func TestAlertRulesBrokenVariants(t *testing.T) {
	good := string(readFile(t, rulesFile))
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"typo in a key", "        annotations:\n", "        anotations:\n", "anotations"},
		{"PromQL syntax error", "increase(mcp_resume_guard_fail_open_total[5m]) > 0", "increase(mcp_resume_guard_fail_open_total[5m) > 0", `unexpected ")" in subquery or range`},
		{"unknown function", "increase(mcp_resume_guard_sse_overflow_total[15m])", "increment(mcp_resume_guard_sse_overflow_total[15m])", `unknown function with name "increment"`},
		{"metric the plugin does not define", "mcp_resume_guard_fail_open_total[5m]", "mcp_resume_guard_failed_open_total[5m]", "defines no metric mcp_resume_guard_failed_open_total"},
		{"an Envoy metric the rules do not know", "envoy_wasm_remote_load_fetch_failures[15m]", "envoy_wasm_remote_load_fetch_failure[15m]", "defines no metric envoy_wasm_remote_load_fetch_failure"},
		{"Envoy's own prefix", "mcp_resume_guard_sse_overflow_total[15m]", "envoy_mcp_resume_guard_sse_overflow_total[15m]", "defines no metric envoy_mcp_resume_guard_sse_overflow_total"},
		{"broken template", "{{ $value | humanize }} callbacks failed open", "{{ $value | humanize callbacks failed open", "template"},
		{"bad duration", "        for: 15m\n", "        for: 15 minutes\n", "15 minutes"},
		{"no severity", "          severity: critical\n", "          team: mcp\n", `severity ""`},
		{"unknown severity", "          severity: info\n", "          severity: page\n", `severity "page"`},
		{"no summary", "          summary: >-\n            The guard let requests", "          summry: >-\n            The guard let requests", "no summary annotation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", rulesFile, tc.old)
			}
			_, _, err := checkRules([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatal("the broken variant passed the check")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("failed for another reason than expected (%q):\n%v", tc.wantErr, err)
			}
			t.Logf("rejected: %v", err)
		})
	}
}

func TestRequiredAlertsBrokenVariants(t *testing.T) {
	good := string(readFile(t, rulesFile))
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"fail-open alert missing", "alert: McpResumeGuardFailOpen", "alert: McpResumeGuardFailingOpen", "no alert McpResumeGuardFailOpen"},
		{"reinit burst misses a reason", "+ increase(mcp_resume_guard_reinit_unknown_total[10m])\n", "", "does not watch mcp_resume_guard_reinit_unknown_total"},
		{"absence alert compares values instead", "expr: absent(mcp_resume_guard_fail_open_total)", "expr: mcp_resume_guard_fail_open_total == 0", "McpResumeGuardAbsent does not call absent()"},
		{"load-failure alert misses Istio's conversion", "\n          or increase(istio_agent_wasm_config_conversion_count{result=~\"marshal_failure|fetch_failure|miss_remote_fetch_hint\"}[15m]) > 0", "", "does not watch istio_agent_wasm_config_conversion_count"},
		{"drain race burst ignores the rollout window", "increase(mcp_resume_guard_drain_race_detected_total[10m]) > 10\n          unless increase(mcp_resume_guard_untagged_passthrough_total[1h]) > 0", "increase(mcp_resume_guard_drain_race_detected_total[10m]) > 10", "McpResumeGuardDrainRaceBurst does not watch mcp_resume_guard_untagged_passthrough_total"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", rulesFile, tc.old)
			}
			err := checkRequiredAlerts([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v; want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDashboardBrokenVariants(t *testing.T) {
	good := string(readFile(t, dashboardFile))
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"not JSON", "\"panels\": [", "\"panels\": [,", "invalid character"},
		{"unknown dashboard key", `"graphTooltip": 1,`, `"graphTooltip": 1, "graphToolTip": 1,`, "graphToolTip"},
		{"unknown timeseries option", `"placement": "bottom"`, `"placement": "bottom", "position": "bottom"`, "position"},
		{"unknown query key", `"legendFormat": "{{instance}} fail-open"`, `"legendFormat": "{{instance}} fail-open", "expression": "x"`, "expression"},
		{"PromQL syntax error", "(rate(mcp_resume_guard_fail_open_total[$__rate_interval]))", "(rate(mcp_resume_guard_fail_open_total[$__rate_interval])", "unclosed left parenthesis"},
		{"unknown Grafana variable", "(rate(mcp_resume_guard_fail_open_total[$__rate_interval]))", "(rate(mcp_resume_guard_fail_open_total[$__rate_window]))", "PromQL"},
		{"metric the plugin does not define", "mcp_resume_guard_rewinds_total", "mcp_resume_guard_rewound_total", "defines no metric mcp_resume_guard_rewound_total"},
		{"a counter without a panel", "mcp_resume_guard_cas_conflicts_total", "mcp_resume_guard_fail_open_total", "no panel shows mcp_resume_guard_cas_conflicts_total"},
		{"a load-failure metric without a panel", "rate(envoy_wasm_remote_load_fetch_failures[$__rate_interval])", "rate(istio_agent_wasm_remote_fetch_count[$__rate_interval])", "no panel shows envoy_wasm_remote_load_fetch_failures"},
		{"a counter in two panels", "mcp_resume_guard_cas_conflicts_total", "mcp_resume_guard_events_tagged_total", "want one panel per counter family"},
		{"fixed data source", `"uid": "${datasource}"`, `"uid": "prometheus-prod"`, "does not use the ${datasource} variable"},
		{"not a time series", `"type": "timeseries"`, `"type": "graph"`, `type "graph"`},
		{"no uid", `"uid": "mcp-resume-guard",`, ``, "no uid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", dashboardFile, tc.old)
			}
			_, err := checkDashboard([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatal("the broken variant passed the check")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("failed for another reason than expected (%q):\n%v", tc.wantErr, err)
			}
			t.Logf("rejected: %v", err)
		})
	}
}
