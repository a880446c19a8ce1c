// Package counters names the counters the plugin defines. It is the single
// source of truth for them: the plugin defines exactly these, and the
// dashboards, alert rules, the trial proxy's admin output and the tests read
// the list from here.
//
// Envoy shows a counter in /stats and /stats/prometheus under Prefix+name
// (the internal "wasmcustom." prefix stripped).
package counters

// Prefix starts every metric the plugin defines.
const Prefix = "mcp_resume_guard_"

// Counter names, without Prefix. They are part of the product's interface.
const (
	EventsTagged         = "events_tagged_total"
	CursorsStripped      = "cursors_stripped_total"
	ReinitCrossTransport = "reinit_cross_transport_total"
	ReinitUntagged       = "reinit_untagged_total"
	ReinitDrainRace      = "reinit_drain_race_total"
	ReinitTombstoned     = "reinit_tombstoned_total"
	ReinitUnknown        = "reinit_unknown_total"
	DrainRaceDetected    = "drain_race_detected_total"
	// DrainRaceFromCursor counts the drain races decided from a minted
	// cursor alone (this replica held no watermark for it); they are also
	// in DrainRaceDetected.
	DrainRaceFromCursor   = "drain_race_from_cursor_total"
	Rewinds               = "rewinds_total"
	FailOpen              = "fail_open_total"
	SSEOverflow           = "sse_overflow_total"
	CASConflicts          = "cas_conflicts_total"
	SSEEncodedPassthrough = "sse_encoded_passthrough_total"
	UntaggedPassthrough   = "untagged_passthrough_total"
	// BridgedSessions counts streams that showed a session served on both
	// transports here (a bridged legacy session: the seed's first
	// condition); SharedAllocator those whose event IDs and the other
	// transport's look drawn from one sequence (its second). Both count in
	// every mode, observe included: docs/operations.md, "Do we need it?".
	BridgedSessions = "bridged_sessions_total"
	SharedAllocator = "shared_allocator_total"
)

// Names returns every counter name the plugin defines (without Prefix),
// in definition order. The slice is new on every call.
func Names() []string {
	return []string{
		EventsTagged, CursorsStripped,
		ReinitCrossTransport, ReinitUntagged, ReinitDrainRace, ReinitTombstoned, ReinitUnknown,
		DrainRaceDetected, DrainRaceFromCursor, Rewinds, FailOpen, SSEOverflow, CASConflicts,
		SSEEncodedPassthrough, UntaggedPassthrough, BridgedSessions, SharedAllocator,
	}
}
