package monitoring_test

import (
	"context"
	"log/slog"
	"slices"
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
// flat elsewhere.
type counterRate struct {
	perSecond      float64
	fromAgo, toAgo time.Duration // fromAgo > toAgo
	name           string
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

// scrapes returns a Queryable holding every counter the plugin defines, as
// one Envoy exports them: each starts at 0 and moves only as rates say.
// end is the last scrape's time.
func scrapes(end time.Time, rates ...counterRate) storage.Queryable {
	start := end.Add(-history)
	var all []storage.Series
	for _, n := range counters.Names() {
		name := counters.Prefix + n
		var samples []chunks.Sample
		v := 0.0
		for t := start; !t.After(end); t = t.Add(scrapeEvery) {
			ago := end.Sub(t)
			for _, r := range rates {
				if r.name == n && ago < r.fromAgo && ago >= r.toAgo {
					v += r.perSecond * scrapeEvery.Seconds()
				}
			}
			samples = append(samples, floatSample{t: t.UnixMilli(), f: v})
		}
		lset := labels.FromStrings(model.MetricNameLabel, name, "instance", "envoy-1:9901", "job", "envoy")
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
	}
	// rollout: untagged cursors still passing, up to 10 minutes ago.
	rollout := counterRate{name: counters.UntaggedPassthrough, perSecond: 1, fromAgo: history, toAgo: 10 * time.Minute}
	cases := []struct {
		name string
		add  []counterRate
		want []string
	}{
		{"normal traffic", nil, nil},
		{"a callback failed open", []counterRate{{name: counters.FailOpen, perSecond: 1.0 / 60, fromAgo: 3 * time.Minute, toAgo: 2 * time.Minute}}, []string{"McpResumeGuardFailOpen"}},
		{"a failure open an hour ago", []counterRate{{name: counters.FailOpen, perSecond: 1.0 / 60, fromAgo: time.Hour, toAgo: time.Hour - time.Minute}}, nil},
		{"a line overflowed", []counterRate{{name: counters.SSEOverflow, perSecond: 1.0 / 60, fromAgo: 5 * time.Minute, toAgo: 4 * time.Minute}}, []string{"McpResumeGuardSSEOverflow"}},
		{"compressed SSE", []counterRate{{name: counters.SSEEncodedPassthrough, perSecond: 0.1, fromAgo: 10 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardEncodedSSE"}},
		{"CAS conflicts at 10% of events", []counterRate{{name: counters.CASConflicts, perSecond: 10, fromAgo: 30 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardCASConflictsHigh"}},
		{"CAS conflicts at 2% of events", []counterRate{{name: counters.CASConflicts, perSecond: 1.5, fromAgo: 30 * time.Minute, toAgo: 0}}, nil},
		{"drain race burst", []counterRate{{name: counters.DrainRaceDetected, perSecond: 0.1, fromAgo: 10 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardDrainRaceBurst"}},
		{"drain race burst in the rollout window", []counterRate{rollout, {name: counters.DrainRaceDetected, perSecond: 0.1, fromAgo: 10 * time.Minute, toAgo: 0}}, nil},
		{"a few drain races", []counterRate{{name: counters.DrainRaceDetected, perSecond: 1.0 / 120, fromAgo: 10 * time.Minute, toAgo: 0}}, nil},
		{"re-initialization burst", []counterRate{{name: counters.ReinitCrossTransport, perSecond: 0.05, fromAgo: 10 * time.Minute, toAgo: 0}, {name: counters.ReinitUnknown, perSecond: 0.05, fromAgo: 10 * time.Minute, toAgo: 0}}, []string{"McpResumeGuardReinitBurst"}},
		{"untagged re-initializations in the rollout window", []counterRate{rollout, {name: counters.ReinitUntagged, perSecond: 1, fromAgo: history, toAgo: 0}}, nil},
		{"rollout window over", []counterRate{{name: counters.UntaggedPassthrough, perSecond: 1, fromAgo: history, toAgo: 25 * time.Hour}}, []string{"McpResumeGuardRolloutWindowOver"}},
		{"rollout window still open", []counterRate{{name: counters.UntaggedPassthrough, perSecond: 1, fromAgo: history, toAgo: 20 * time.Hour}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := firing(t, groups, scrapes(end, append(slices.Clone(normal), tc.add...)...), end)
			if !slices.Equal(got, tc.want) {
				t.Errorf("firing %v; want %v", got, tc.want)
			}
		})
	}
}
