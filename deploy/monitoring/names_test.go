package monitoring_test

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
)

// reinitReasons are the reason names a forced re-initialization gives, in
// its 404 body and in the logs (cursor.Reason): every reason but the two
// that never refuse.
func reinitReasons() []string {
	var out []string
	for r := cursor.Reason(0); r.String() != "invalid"; r++ {
		if r != cursor.ReasonNoCursor && r != cursor.ReasonNormal {
			out = append(out, r.String())
		}
	}
	return out
}

// TestReasonNames: the dashboard's re-initialization panel and the
// re-initialization alert name each reason as the bodies and logs do, so
// an operator reads one name everywhere (docs/how-it-decides.md, "Reason
// names", maps them to the counters).
func TestReasonNames(t *testing.T) {
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ LegendFormat string }
		}
	}
	if err := json.Unmarshal(readFile(t, dashboardFile), &d); err != nil {
		t.Fatal(err)
	}
	var legends []string
	for _, p := range d.Panels {
		if p.Title == "Forced re-initializations by reason" {
			for _, tg := range p.Targets {
				legends = append(legends, strings.TrimPrefix(tg.LegendFormat, "{{instance}} "))
			}
		}
	}
	slices.Sort(legends)
	want := reinitReasons()
	slices.Sort(want)
	if !slices.Equal(legends, want) {
		t.Errorf("the re-initialization panel's legends are %v; want the reason names %v", legends, want)
	}

	groups, errs := rulefmt.Parse(readFile(t, rulesFile), false, model.UTF8Validation, promqlParser, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	found := false
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert != "McpResumeGuardReinitBurst" {
				continue
			}
			found = true
			for _, reason := range want {
				if !strings.Contains(r.Annotations["summary"], reason) {
					t.Errorf("McpResumeGuardReinitBurst's summary does not name reason %s", reason)
				}
			}
		}
	}
	if !found {
		t.Error("no alert McpResumeGuardReinitBurst")
	}
}
