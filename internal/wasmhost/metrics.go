package wasmhost

import (
	"sort"
	"sync"
	"sync/atomic"
)

// metric is one plugin metric, shared by every VM that defines its name,
// as Envoy's stat store shares a stat by name.
type metric struct {
	name  string
	kind  uint32
	value atomic.Int64 // counter/gauge value; histogram sum
	count atomic.Int64 // histogram samples
}

type metricStore struct {
	mu     sync.Mutex
	byName map[metricKey]*metric
}

type metricKey struct {
	kind uint32
	name string
}

func (s *metricStore) init() { s.byName = map[metricKey]*metric{} }

func (s *metricStore) define(kind uint32, name string) *metric {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := metricKey{kind, name}
	m, ok := s.byName[k]
	if !ok {
		m = &metric{name: name, kind: kind}
		s.byName[k] = m
	}
	return m
}

// Metrics returns every plugin metric by the name the plugin defined (Envoy's
// /stats shows it as CustomStatNamespace+name, /stats/prometheus as the name
// itself): counters and gauges by value, histograms as <name>.count and
// <name>.sum.
func (h *Host) Metrics() map[string]int64 {
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	out := make(map[string]int64, len(h.metrics.byName))
	for _, m := range h.metrics.byName {
		if m.kind == metricHistogram {
			out[m.name+".count"] = m.count.Load()
			out[m.name+".sum"] = m.value.Load()
			continue
		}
		out[m.name] = m.value.Load()
	}
	return out
}

// Metric returns the value of the counter or gauge name, and whether the
// plugin defined it.
func (h *Host) Metric(name string) (int64, bool) {
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	for _, kind := range []uint32{metricCounter, metricGauge} {
		if m, ok := h.metrics.byName[metricKey{kind, name}]; ok {
			return m.value.Load(), true
		}
	}
	return 0, false
}

// MetricNames returns the sorted names Metrics reports.
func (h *Host) MetricNames() []string {
	m := h.Metrics()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
