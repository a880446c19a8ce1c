package main

import (
	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
)

// MetricPrefix starts every metric the plugin defines (counters.Prefix).
const MetricPrefix = counters.Prefix

// counter is a proxy-wasm counter. Increments the host refuses are
// ignored: a metric must never fail a stream. (defineCounter and
// incrementCounter are the host calls: metrics_wasip1.go in the plugin,
// metrics_sdk.go through the SDK in native tests.)
type counter uint32

func (c counter) add(n int) {
	if n <= 0 { // Envoy answers BAD_ARGUMENT to an increment ≤ 0
		return
	}
	incrementCounter(uint32(c), int64(n))
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
	drainRaceFromCursor   counter
	rewinds               counter
	failOpen              counter
	sseOverflow           counter
	casConflicts          counter
	sseEncodedPassthrough counter
	untaggedPassthrough   counter
	bridgedSessions       counter
	sharedAllocator       counter
}

// named pairs each counter with its name from package counters, the names'
// single source of truth (a test checks the two lists agree).
func (m *metrics) named() []struct {
	name string
	c    *counter
} {
	return []struct {
		name string
		c    *counter
	}{
		{counters.EventsTagged, &m.eventsTagged},
		{counters.CursorsStripped, &m.cursorsStripped},
		{counters.ReinitCrossTransport, &m.reinitCrossTransport},
		{counters.ReinitUntagged, &m.reinitUntagged},
		{counters.ReinitDrainRace, &m.reinitDrainRace},
		{counters.ReinitTombstoned, &m.reinitTombstoned},
		{counters.ReinitUnknown, &m.reinitUnknown},
		{counters.DrainRaceDetected, &m.drainRaceDetected},
		{counters.DrainRaceFromCursor, &m.drainRaceFromCursor},
		{counters.Rewinds, &m.rewinds},
		{counters.FailOpen, &m.failOpen},
		{counters.SSEOverflow, &m.sseOverflow},
		{counters.CASConflicts, &m.casConflicts},
		{counters.SSEEncodedPassthrough, &m.sseEncodedPassthrough},
		{counters.UntaggedPassthrough, &m.untaggedPassthrough},
		{counters.BridgedSessions, &m.bridgedSessions},
		{counters.SharedAllocator, &m.sharedAllocator},
	}
}

// define registers every counter with the host.
func (m *metrics) define() {
	for _, n := range m.named() {
		*n.c = counter(defineCounter(MetricPrefix + n.name))
	}
}
