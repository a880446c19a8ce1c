package monitoring_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
)

// The alerts' expressions are evaluated by Prometheus's own engine over the
// counters of one Envoy scraped every minute for 30 hours (the longest
// window an alert looks back over is 24 hours). Each scenario changes the
// quiet baseline one way; `for:` durations are not simulated.
const (
	scrapeEvery = time.Minute
	history     = 30 * time.Hour
)

// counterRate makes the counter name (without counters.Prefix) grow at
// perSecond between fromAgo and toAgo before the end of the history; it is
// flat elsewhere. With metric set, it is that metric of Envoy or Istio
// instead (full name, with labels), which exists only in the scenarios
// that name it.
type counterRate struct {
	perSecond      float64
	fromAgo, toAgo time.Duration // fromAgo > toAgo
	name           string
	metric         string
	labels         []string // label name, value, ...
}

// series is the name and extra labels of the series r moves.
func (r counterRate) series() (string, []string) {
	if r.metric != "" {
		return r.metric, r.labels
	}
	return counters.Prefix + r.name, nil
}

// floatSample is one scraped value.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }

// sliceSeriesSet is a storage.SeriesSet over a slice.
type sliceSeriesSet struct {
	series []storage.Series
	i      int
}

func (s *sliceSeriesSet) Next() bool                        { s.i++; return s.i <= len(s.series) }
func (s *sliceSeriesSet) At() storage.Series                { return s.series[s.i-1] }
func (s *sliceSeriesSet) Err() error                        { return nil }
func (s *sliceSeriesSet) Warnings() annotations.Annotations { return nil }

// scrapes returns a Queryable holding what one Envoy exports: every counter
// the plugin defines unless guard is false (the plugin is not loaded), and
// the Envoy or Istio metrics rates name. Each starts at 0 and moves only as
// rates say. end is the last scrape's time.
func scrapes(end time.Time, guard bool, rates ...counterRate) storage.Queryable {
	start := end.Add(-history)
	type key struct{ name, labels string }
	var keys []key
	extra := map[key][]string{}
	if guard {
		for _, n := range counters.Names() {
			keys = append(keys, key{name: counters.Prefix + n})
		}
	}
	for _, r := range rates {
		if name, ls := r.series(); r.metric != "" {
			k := key{name, strings.Join(ls, "\x00")}
			if _, ok := extra[k]; !ok {
				keys, extra[k] = append(keys, k), ls
			}
		}
	}
	var all []storage.Series
	for _, k := range keys {
		var samples []chunks.Sample
		v := 0.0
		for t := start; !t.After(end); t = t.Add(scrapeEvery) {
			ago := end.Sub(t)
			for _, r := range rates {
				name, ls := r.series()
				if name == k.name && strings.Join(ls, "\x00") == k.labels && ago < r.fromAgo && ago >= r.toAgo {
					v += r.perSecond * scrapeEvery.Seconds()
				}
			}
			samples = append(samples, floatSample{t: t.UnixMilli(), f: v})
		}
		lset := labels.FromStrings(append([]string{model.MetricNameLabel, k.name, "instance", "envoy-1:9901", "job", "envoy"}, extra[k]...)...)
		all = append(all, storage.NewListSeries(lset, samples))
	}
	return &storage.MockQueryable{MockQuerier: &storage.MockQuerier{
		SelectMockFunction: func(_ bool, _ *storage.SelectHints, matchers ...*labels.Matcher) storage.SeriesSet {
			var match []storage.Series
			for _, s := range all {
				if matchesAll(s.Labels(), matchers) {
					match = append(match, s)
				}
			}
			return &sliceSeriesSet{series: match}
		},
	}}
}

func matchesAll(lset labels.Labels, matchers []*labels.Matcher) bool {
	for _, m := range matchers {
		if !m.Matches(lset.Get(m.Name)) {
			return false
		}
	}
	return true
}

// firing evaluates every alert of the rule file at end over q and returns
// the names of those whose expression returns a result.
func firing(t *testing.T, groups *rulefmt.RuleGroups, q storage.Queryable, end time.Time) []string {
	t.Helper()
	engine := promql.NewEngine(promql.EngineOpts{
		Logger: slog.New(slog.DiscardHandler), MaxSamples: 1_000_000, Timeout: time.Minute,
		LookbackDelta: 5 * time.Minute, Parser: promqlParser,
	})
	var fired []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			qry, err := engine.NewInstantQuery(context.Background(), q, nil, r.Expr, end)
			if err != nil {
				t.Fatalf("alert %s: %v", r.Alert, err)
			}
			res := qry.Exec(context.Background())
			if res.Err != nil {
				t.Fatalf("alert %s: %v", r.Alert, res.Err)
			}
			if v, err := res.Vector(); err != nil {
				t.Fatalf("alert %s: %v", r.Alert, err)
			} else if len(v) > 0 {
				fired = append(fired, r.Alert)
			}
			qry.Close()
		}
	}
	slices.Sort(fired)
	return fired
}

func TestAlertsFireOnTheirCondition(t *testing.T) {
	groups, errs := rulefmt.Parse(readFile(t, rulesFile), false, model.UTF8Validation, promqlParser, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	end := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Normal traffic: events tagged and cursors stripped all the time, a
	// few CAS conflicts.
	normal := []counterRate{
		{name: counters.EventsTagged, perSecond: 100, fromAgo: history, toAgo: 0},
		{name: counters.CursorsStripped, perSecond: 2, fromAgo: history, toAgo: 0},
		{name: counters.CASConflicts, perSecond: 0.5, fromAgo: history, toAgo: 0},
		// Istio's agent fetched the image once, long ago; its conversions
		// succeed; Envoy's remote fetches never failed.
		{metric: "istio_agent_wasm_remote_fetch_count", labels: []string{"result", "success"}, perSecond: 1.0 / 60, fromAgo: 29 * time.Hour, toAgo: 29*time.Hour - time.Minute},
		{metric: "istio_agent_wasm_config_conversion_count", labels: []string{"result", "success"}, perSecond: 1.0 / 600, fromAgo: history, toAgo: 0},
		{metric: "istio_agent_wasm_config_conversion_count", labels: []string{"result", "no_remote_load"}, perSecond: 1.0 / 600, fromAgo: history, toAgo: 0},
		{metric: "envoy_wasm_remote_load_fetch_failures", fromAgo: history, toAgo: 0},
	}
	// rollout: untagged cursors still passing, up to 10 minutes ago.
	rollout := counterRate{name: counters.UntaggedPassthrough, perSecond: 1, fromAgo: history, toAgo: 10 * time.Minute}
	// Failures of the proxy's Wasm loading, 5 minutes ago.
	failed := func(metric string, ls ...string) []counterRate {
		return []counterRate{{metric: metric, labels: ls, perSecond: 1.0 / 60, fromAgo: 6 * time.Minute, toAgo: 5 * time.Minute}}
	}
	cases := []struct {
		name    string
		add     []counterRate
		want    []string
		noGuard bool // the plugin's counters are absent
	}{
		{"normal traffic", nil, nil, false},
		{"a callback failed open", []counterRate{{name: counters.FailOpen, perSecond: 1.0 / 60, fromAgo: 3 * time.Minute, toAgo: 2 * time.Minute}}, []string{"McpResumeGuardFailOpen"}, false},
		{"a failure open an hour ago", []counterRate{{name: counters.FailOpen, perSecond: 1.0 / 60, fromAgo: time.Hour, toAgo: time.Hour - time.Minute}}, nil, false},
		{"a line overflowed", []counterRate{{name: counters.SSEOverflow, perSecond: 1.0 / 60, fromAgo: 5 * time.Minute, toAgo: 4 * time.Minute}}, []string{"McpResumeGuardSSEOverflow"}, false},
		{"compressed SSE", []counterRate{{name: counters.SSEEncodedPassthrough, perSecond: 0.1, fromAgo: 10 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardEncodedSSE"}, false},
		{"CAS conflicts at 10% of events", []counterRate{{name: counters.CASConflicts, perSecond: 10, fromAgo: 30 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardCASConflictsHigh"}, false},
		{"CAS conflicts at 2% of events", []counterRate{{name: counters.CASConflicts, perSecond: 1.5, fromAgo: 30 * time.Minute, toAgo: 0}}, nil, false},
		{"drain race burst", []counterRate{{name: counters.DrainRaceDetected, perSecond: 0.1, fromAgo: 10 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardDrainRaceBurst"}, false},
		{"drain race burst in the rollout window", []counterRate{rollout, {name: counters.DrainRaceDetected, perSecond: 0.1, fromAgo: 10 * time.Minute, toAgo: 0}}, nil, false},
		{"a few drain races", []counterRate{{name: counters.DrainRaceDetected, perSecond: 1.0 / 120, fromAgo: 10 * time.Minute, toAgo: 0}}, nil, false},
		{"re-initialization burst", []counterRate{{name: counters.ReinitCrossTransport, perSecond: 0.05, fromAgo: 10 * time.Minute, toAgo: 0}, {name: counters.ReinitUnknown, perSecond: 0.05, fromAgo: 10 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardReinitBurst"}, false},
		{"untagged re-initializations in the rollout window", []counterRate{rollout, {name: counters.ReinitUntagged, perSecond: 1, fromAgo: history, toAgo: 0}}, nil, false},
		{"rollout window over", []counterRate{{name: counters.UntaggedPassthrough, perSecond: 1, fromAgo: history, toAgo: 25 * time.Hour}}, []string{"McpResumeGuardRolloutWindowOver"}, false},
		{"rollout window still open", []counterRate{{name: counters.UntaggedPassthrough, perSecond: 1, fromAgo: history, toAgo: 20 * time.Hour}}, nil, false},
		{"the guard is not loaded anywhere", nil, []string{"McpResumeGuardAbsent"}, true},
		{"Istio's agent could not pull the image", failed("istio_agent_wasm_remote_fetch_count", "result", "download_failure"), []string{"McpResumeGuardWasmLoadFailed"}, false},
		{"the image's digest does not match", failed("istio_agent_wasm_remote_fetch_count", "result", "checksum_mismatched"), []string{"McpResumeGuardWasmLoadFailed"}, false},
		{"Istio could not convert the Wasm config", failed("istio_agent_wasm_config_conversion_count", "result", "fetch_failure"), []string{"McpResumeGuardWasmLoadFailed"}, false},
		{"Envoy could not fetch remote code", failed("envoy_wasm_remote_load_fetch_failures"), []string{"McpResumeGuardWasmLoadFailed"}, false},
		{"a pull failure and no guard", failed("istio_agent_wasm_remote_fetch_count", "result", "download_failure"), []string{"McpResumeGuardAbsent", "McpResumeGuardWasmLoadFailed"}, true},
		{"a pull failure an hour ago", []counterRate{{metric: "istio_agent_wasm_remote_fetch_count", labels: []string{"result", "download_failure"}, perSecond: 1.0 / 60, fromAgo: time.Hour, toAgo: time.Hour - time.Minute}}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := firing(t, groups, scrapes(end, !tc.noGuard, append(slices.Clone(normal), tc.add...)...), end)
			if !slices.Equal(got, tc.want) {
				t.Errorf("firing %v; want %v", got, tc.want)
			}
		})
	}
}
