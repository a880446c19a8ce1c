package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// MetricPrefix starts every metric the plugin defines. Envoy shows them in
// /stats with the internal "wasmcustom." prefix stripped.
const MetricPrefix = "mcp_resume_guard_"

// counter is a proxy-wasm counter that never panics: the SDK panics when the
// host refuses an increment, and a panic must not escape a callback.
type counter uint32

func (c counter) add(n int) {
	if n <= 0 { // Envoy answers BAD_ARGUMENT to an increment ≤ 0
		return
	}
	defer func() { _ = recover() }()
	proxywasm.MetricCounter(c).Increment(uint64(n))
}

func (c counter) inc() { c.add(1) }

// metrics holds every counter of one VM, defined once at plugin start.
type metrics struct {
	eventsTagged          counter
	cursorsStripped       counter
	reinitCrossTransport  counter
	reinitUntagged        counter
	reinitDrainRace       counter
	reinitTombstoned      counter
	reinitUnknown         counter
	drainRaceDetected     counter
	rewinds               counter
	failOpen              counter
	sseOverflow           counter
	casConflicts          counter
	sseEncodedPassthrough counter
	untaggedPassthrough   counter
}

// metricNames pairs each counter with its name; the names are part of the
// product's interface (dashboards, alerts).
func (m *metrics) named() []struct {
	name string
	c    *counter
} {
	return []struct {
		name string
		c    *counter
	}{
		{"events_tagged_total", &m.eventsTagged},
		{"cursors_stripped_total", &m.cursorsStripped},
		{"reinit_cross_transport_total", &m.reinitCrossTransport},
		{"reinit_untagged_total", &m.reinitUntagged},
		{"reinit_drain_race_total", &m.reinitDrainRace},
		{"reinit_tombstoned_total", &m.reinitTombstoned},
		{"reinit_unknown_total", &m.reinitUnknown},
		{"drain_race_detected_total", &m.drainRaceDetected},
		{"rewinds_total", &m.rewinds},
		{"fail_open_total", &m.failOpen},
		{"sse_overflow_total", &m.sseOverflow},
		{"cas_conflicts_total", &m.casConflicts},
		{"sse_encoded_passthrough_total", &m.sseEncodedPassthrough},
		{"untagged_passthrough_total", &m.untaggedPassthrough},
	}
}

// define registers every counter with the host.
func (m *metrics) define() {
	for _, n := range m.named() {
		*n.c = counter(proxywasm.DefineCounterMetric(MetricPrefix + n.name))
	}
}
