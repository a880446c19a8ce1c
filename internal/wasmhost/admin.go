package wasmhost

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// CustomStatNamespace is the prefix Envoy gives every metric a Wasm plugin
// defines: proxy_define_metric("x") creates the stat "wasmcustom.x"
// (envoy source/extensions/common/wasm/context.cc defineMetric, with the
// namespace of stats_handler.h). /stats shows that full name;
// /stats/prometheus strips it and, unlike Envoy's own stats, adds no
// "envoy_" prefix (source/server/admin/prometheus_stats.cc metricName).
const CustomStatNamespace = "wasmcustom."

// AdminStat is one entry of the admin output: a plugin metric under its
// Envoy name (CustomStatNamespace + the name the plugin defined) or one of
// the host's own counters (wasmhost.*).
type AdminStat struct {
	// Name is the stat's full name as Envoy's /stats shows it.
	Name string
	// Custom reports a plugin-defined metric (Envoy's custom stat
	// namespace).
	Custom bool
	// Kind is "counter", "gauge" or "histogram".
	Kind string
	// Value is the counter or gauge value, or a histogram's sum.
	Value int64
	// Count is a histogram's number of samples.
	Count int64
}

// used reports whether Envoy's usedonly would show the stat. Envoy marks a
// counter used on its first increment (never by 0: proxy_increment_metric
// refuses it) and a gauge on its first set; the host keeps values only, so
// a gauge set back to 0 counts as unused here.
func (s AdminStat) used() bool {
	if s.Kind == "histogram" {
		return s.Count > 0
	}
	return s.Value != 0
}

// AdminStats returns every plugin metric and host counter, sorted by name.
func (h *Host) AdminStats() []AdminStat {
	h.metrics.mu.Lock()
	out := make([]AdminStat, 0, len(h.metrics.byName)+8)
	for _, m := range h.metrics.byName {
		s := AdminStat{Name: CustomStatNamespace + m.name, Custom: true, Value: m.value.Load()}
		switch m.kind {
		case metricCounter:
			s.Kind = "counter"
		case metricGauge:
			s.Kind = "gauge"
		default:
			s.Kind, s.Count = "histogram", m.count.Load()
		}
		out = append(out, s)
	}
	h.metrics.mu.Unlock()

	st := h.Stats()
	host := func(name string, v int64) {
		out = append(out, AdminStat{Name: "wasmhost." + name, Kind: "counter", Value: v})
	}
	host("streams", st.Streams)
	host("traps", st.Traps)
	host("restarts", st.Restarts)
	host("local_replies", st.LocalReplies)
	host("refused_local_replies", st.RefusedReplies)
	for i := range st.VMRequests {
		p := "vm." + strconv.Itoa(i) + "."
		host(p+"requests", st.VMRequests[i])
		host(p+"traps", st.VMTraps[i])
		out = append(out, AdminStat{Name: "wasmhost." + p + "memory_bytes", Kind: "gauge", Value: int64(st.VMMemoryBytes[i])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// StatsQuery selects stats the way Envoy's admin query parameters do.
type StatsQuery struct {
	// Filter keeps the stats whose full name (as /stats shows it) it
	// matches anywhere (Envoy's filter=: a partial RE2 match). Nil keeps
	// all.
	Filter *regexp.Regexp
	// UsedOnly keeps the stats that were ever incremented or set
	// (usedonly).
	UsedOnly bool
}

// ParseStatsQuery reads filter= and usedonly from an admin request's query.
func ParseStatsQuery(r *http.Request) (StatsQuery, error) {
	var q StatsQuery
	values := r.URL.Query()
	if f := values.Get("filter"); f != "" {
		re, err := regexp.Compile(f)
		if err != nil {
			return q, fmt.Errorf("invalid re2 regex in filter=%q: %v", f, err)
		}
		q.Filter = re
	}
	_, q.UsedOnly = values["usedonly"]
	return q, nil
}

func (q StatsQuery) keep(s AdminStat) bool {
	return (!q.UsedOnly || s.used()) && (q.Filter == nil || q.Filter.MatchString(s.Name))
}

// StatsText renders the stats as Envoy's GET /stats does: one "name: value"
// line per stat, sorted by name, counters and gauges first, histograms after
// them. Plugin metrics carry Envoy's wasmcustom. prefix, as in Envoy. A
// histogram shows "No recorded values" before its first sample, then its
// count and sum (the host keeps no buckets, so Envoy's quantiles are not
// available).
func (h *Host) StatsText(q StatsQuery) string {
	var sb, hist strings.Builder
	for _, s := range h.AdminStats() {
		if !q.keep(s) {
			continue
		}
		switch {
		case s.Kind != "histogram":
			fmt.Fprintf(&sb, "%s: %d\n", s.Name, s.Value)
		case s.Count == 0:
			fmt.Fprintf(&hist, "%s: No recorded values\n", s.Name)
		default:
			fmt.Fprintf(&hist, "%s: count=%d sum=%d\n", s.Name, s.Count, s.Value)
		}
	}
	sb.WriteString(hist.String())
	return sb.String()
}

// PrometheusName returns the metric name Envoy's /stats/prometheus gives the
// stat named name (its full /stats name), and false when Envoy leaves it
// out. A custom (plugin-defined) stat loses its wasmcustom. prefix and gets
// no envoy_ prefix; any other stat is prefixed envoy_. Characters outside
// [a-zA-Z0-9_] become '_'. A custom name that is then empty or starts with a
// digit is not exported. (envoy source/server/admin/prometheus_stats.cc,
// metricName and sanitizeName.) Envoy's default tag extractors do not
// match the plugin's names (none starts with an Envoy scope such as
// cluster. or http., none ends in _rq_<code>), so no part of them becomes a
// label.
func PrometheusName(name string, custom bool) (string, bool) {
	if custom {
		s := sanitizePrometheus(strings.TrimPrefix(name, CustomStatNamespace))
		if s == "" || s[0] >= '0' && s[0] <= '9' {
			return "", false
		}
		return s, true
	}
	return "envoy_" + sanitizePrometheus(name), true
}

func sanitizePrometheus(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// PrometheusText renders the stats as Envoy's GET /stats/prometheus does
// (Prometheus text exposition format 0.0.4): counters, then gauges, then
// histograms, each metric as a "# TYPE <name> <type>" line, its sample with
// an empty label set ("name{} value", Envoy's spelling when a stat has no
// tags) and a blank line. A histogram has only its +Inf bucket, _sum and
// _count (the host keeps no buckets).
func (h *Host) PrometheusText(q StatsQuery) string {
	var sb strings.Builder
	all := h.AdminStats()
	for _, kind := range []string{"counter", "gauge", "histogram"} {
		for _, s := range all {
			if s.Kind != kind || !q.keep(s) {
				continue
			}
			name, ok := PrometheusName(s.Name, s.Custom)
			if !ok {
				continue
			}
			fmt.Fprintf(&sb, "# TYPE %s %s\n", name, kind)
			if kind == "histogram" {
				fmt.Fprintf(&sb, "%s_bucket{le=\"+Inf\"} %d\n%s_sum{} %d\n%s_count{} %d\n", name, s.Count, name, s.Value, name, s.Count)
			} else {
				fmt.Fprintf(&sb, "%s{} %d\n", name, s.Value)
			}
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// AdminHandler serves a subset of Envoy's admin interface:
//
//	GET /stats              StatsText; ?filter=<re2>, ?usedonly, ?format=prometheus
//	GET /stats/prometheus   PrometheusText; ?filter=<re2>, ?usedonly
//	GET /ready              "LIVE", as Envoy answers when the server is ready
//
// An invalid filter is answered 400, as Envoy does.
func AdminHandler(h *Host) http.Handler {
	mux := http.NewServeMux()
	stats := func(prometheus bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			q, err := ParseStatsQuery(r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
			switch format := r.URL.Query().Get("format"); {
			case prometheus || format == "prometheus":
				fmt.Fprint(w, h.PrometheusText(q))
			case format == "" || format == "text":
				fmt.Fprint(w, h.StatsText(q))
			default:
				http.Error(w, "unsupported format="+strconv.Quote(format)+": this admin serves text and prometheus", http.StatusBadRequest)
			}
		}
	}
	mux.HandleFunc("GET /stats", stats(false))
	mux.HandleFunc("GET /stats/prometheus", stats(true))
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		fmt.Fprintln(w, "LIVE")
	})
	return mux
}

// ParseRoutes parses "prefix=name,prefix=name" (the guardproxy -routes
// flag).
func ParseRoutes(s string) ([]Route, error) {
	var out []Route
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		prefix, name, ok := strings.Cut(part, "=")
		if !ok || !strings.HasPrefix(prefix, "/") || name == "" {
			return nil, fmt.Errorf("route %q: want /prefix=route_name", part)
		}
		out = append(out, Route{PathPrefix: prefix, RouteName: name})
	}
	return out, nil
}
