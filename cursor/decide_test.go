package cursor

import (
	"strings"
	"testing"
)

// tail builds a stream tail for the decision tests.
func tail(stream uint32, t Transport, last, prev string, kind EventKind, acked bool) Tail {
	return Tail{Stream: stream, Transport: t, LastID: last, PrevID: prev, LastKind: kind, Acked: acked}
}

// rec builds a live record of session "s-77" holding tails, newest first.
func rec(tails ...Tail) *Record {
	return &Record{Session: KeyOf("s-77"), Created: 100, Updated: 200, Tails: tails}
}

// Policies used by the table, named after the option they set.
var (
	defaults    = Policy{}
	passthrough = Policy{Untagged: UntaggedPassthrough}
	unknownRe   = Policy{Unknown: UnknownReinit}
	rewind      = Policy{Unacked: UnackedRewind}
	observe     = Policy{Unacked: UnackedObserve}
	inclusive   = Policy{Replay: ReplayInclusive}
	scopeAll    = Policy{Scope: ScopeAll}
	// lenient sets every option to its least strict value: the rows that
	// re-initialize "always" must still do so under it.
	lenient = Policy{Untagged: UntaggedPassthrough, Unacked: UnackedObserve, Scope: ScopeAll, Replay: ReplayInclusive}
)

// The seed's tail: e-104, a tools/call result, sent on a legacy SSE stream
// that an idle timeout cut before the client drained it.
var seedTail = tail(7, TransportSSE, "e-104", "e-103", KindResponse, false)

// The same drain race on a Streamable HTTP stream.
var raceHTTP = tail(9, TransportHTTP, "e-104", "e-103", KindResponse, false)

type decideCase struct {
	name   string
	route  Transport
	cursor string
	rec    *Record
	policy Policy

	action   Action
	reason   Reason
	cursorTo string // Decision.Cursor
	rewound  bool
	detected bool
	stream   uint32 // Stream of Decision.Tail; 0 means Tail must be nil
	// fromCursor: Decision.FromCursor (a drain race known from the cursor).
	fromCursor bool
}

// decideCases holds every row of the decision table of docs/how-it-decides.md (and of
// Decide's doc comment) and every policy option that changes a row.
var decideCases = []decideCase{
	// Row "no cursor": forward, whatever the record says.
	{name: "no_cursor/no_record", route: TransportHTTP, cursor: "", rec: nil, policy: defaults,
		action: Forward, reason: ReasonNoCursor},
	{name: "no_cursor/unacked_race_tail_present", route: TransportHTTP, cursor: "", rec: rec(raceHTTP), policy: defaults,
		action: Forward, reason: ReasonNoCursor},
	{name: "no_cursor/legacy_route", route: TransportSSE, cursor: "", rec: rec(seedTail), policy: unknownRe,
		action: Forward, reason: ReasonNoCursor},

	// Row "no cursor" comes first: a request without a cursor is never
	// judged, even on a tombstoned session.
	// A tombstoned session is refused on every request, cursor or not (MCP:
	// a terminated session answers 404 to every request with its ID).
	{name: "tombstoned/no_cursor", route: TransportHTTP, cursor: "",
		rec: &Record{Session: KeyOf("s-77"), Tombstoned: true}, policy: defaults,
		action: Reinit, reason: ReasonTombstoned},
	{name: "tombstoned/no_cursor_legacy", route: TransportSSE, cursor: "",
		rec: &Record{Session: KeyOf("s-77"), Tombstoned: true}, policy: lenient,
		action: Reinit, reason: ReasonTombstoned},

	// Row "tombstoned session": re-init again; it beats every row below.
	{name: "tombstoned/beats_normal_cursor", route: TransportHTTP, cursor: "http:e-103",
		rec: &Record{Session: KeyOf("s-77"), Tombstoned: true, Tails: []Tail{raceHTTP}}, policy: defaults,
		action: Reinit, reason: ReasonTombstoned},
	{name: "tombstoned/beats_untagged_passthrough", route: TransportHTTP, cursor: "e-104",
		rec: &Record{Session: KeyOf("s-77"), Tombstoned: true}, policy: lenient,
		action: Reinit, reason: ReasonTombstoned},
	// A cross-transport cursor keeps its own reason (and so its log line
	// and counter) on a tombstoned session too.
	{name: "cross_transport/beats_tombstone", route: TransportHTTP, cursor: "sse:e-104",
		rec: &Record{Session: KeyOf("s-77"), Tombstoned: true, Tails: []Tail{seedTail}}, policy: defaults,
		action: Reinit, reason: ReasonCrossTransport, detected: true},

	// Row "untagged": re-init by default, passthrough for the rollout window.
	{name: "untagged/default_reinit", route: TransportHTTP, cursor: "e-104", rec: nil, policy: defaults,
		action: Reinit, reason: ReasonUntagged},
	{name: "untagged/default_reinit_even_if_a_tail_has_the_id", route: TransportHTTP, cursor: "e-103",
		rec: rec(raceHTTP), policy: defaults,
		action: Reinit, reason: ReasonUntagged},
	{name: "untagged/unknown_prefix", route: TransportSSE, cursor: "ws:e-104", rec: nil, policy: defaults,
		action: Reinit, reason: ReasonUntagged},
	{name: "untagged/prefix_is_case_sensitive", route: TransportSSE, cursor: "SSE:e-104", rec: rec(seedTail), policy: defaults,
		action: Reinit, reason: ReasonUntagged},
	{name: "untagged/passthrough_forwards_unchanged", route: TransportHTTP, cursor: "e-104", rec: rec(raceHTTP), policy: passthrough,
		action: Forward, reason: ReasonUntagged},
	{name: "untagged/passthrough_on_legacy_route", route: TransportSSE, cursor: "e-104", rec: nil, policy: passthrough,
		action: Forward, reason: ReasonUntagged},

	// Row "cross-transport": re-init, always, and always detected.
	{name: "cross_transport/seed_sse_cursor_on_http_route", route: TransportHTTP, cursor: "sse:e-104", rec: rec(seedTail), policy: defaults,
		action: Reinit, reason: ReasonCrossTransport, detected: true},
	{name: "cross_transport/http_cursor_on_sse_route", route: TransportSSE, cursor: "http:e-104", rec: rec(raceHTTP), policy: defaults,
		action: Reinit, reason: ReasonCrossTransport, detected: true},
	{name: "cross_transport/no_record", route: TransportHTTP, cursor: "sse:e-1", rec: nil, policy: defaults,
		action: Reinit, reason: ReasonCrossTransport, detected: true},
	{name: "cross_transport/always_even_when_lenient", route: TransportHTTP, cursor: "sse:e-104", rec: rec(seedTail), policy: lenient,
		action: Reinit, reason: ReasonCrossTransport, detected: true},
	{name: "cross_transport/always_even_with_unknown_reinit_off_and_acked_tail", route: TransportHTTP, cursor: "sse:e-104",
		rec: rec(tail(7, TransportSSE, "e-104", "e-103", KindResponse, true)), policy: rewind,
		action: Reinit, reason: ReasonCrossTransport, detected: true},

	// Row "unknown": same transport, no record or no tail mentions the cursor.
	{name: "unknown/no_record_forward_stripped", route: TransportHTTP, cursor: "http:e-104", rec: nil, policy: defaults,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "e-104"},
	{name: "unknown/record_without_tails", route: TransportSSE, cursor: "sse:e-104", rec: rec(), policy: defaults,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "e-104"},
	{name: "unknown/older_id_than_any_tail", route: TransportHTTP, cursor: "http:e-100", rec: rec(raceHTTP), policy: defaults,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "e-100"},
	{name: "unknown/tail_of_other_transport_with_same_id_does_not_match", route: TransportHTTP, cursor: "http:e-104",
		rec: rec(seedTail), policy: defaults,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "e-104"},
	{name: "unknown/reinit_option", route: TransportHTTP, cursor: "http:e-104", rec: nil, policy: unknownRe,
		action: Reinit, reason: ReasonUnknown},
	{name: "unknown/reinit_option_other_transport_tail", route: TransportHTTP, cursor: "http:e-104", rec: rec(seedTail), policy: unknownRe,
		action: Reinit, reason: ReasonUnknown},
	// A tag with nothing after it was never minted by the filter (empty
	// IDs are not tagged): untagged, and never matched to an absent prev.
	{name: "untagged/tag_without_id", route: TransportHTTP, cursor: "http:",
		rec: rec(tail(9, TransportHTTP, "e-1", "", KindResponse, false)), policy: defaults,
		action: Reinit, reason: ReasonUntagged},
	{name: "unknown/only_one_tag_removed", route: TransportHTTP, cursor: "http:http:e-104", rec: rec(raceHTTP), policy: defaults,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "http:e-104"},

	// Row "drain race": cursor = last ID of an unacked tail, kind in scope.
	{name: "drain_race/default_reinit", route: TransportHTTP, cursor: "http:e-104", rec: rec(raceHTTP), policy: defaults,
		action: Reinit, reason: ReasonDrainRace, detected: true, stream: 9},
	{name: "drain_race/legacy_route_default_reinit", route: TransportSSE, cursor: "sse:e-104", rec: rec(seedTail), policy: defaults,
		action: Reinit, reason: ReasonDrainRace, detected: true, stream: 7},
	{name: "drain_race/rewind_to_prev", route: TransportHTTP, cursor: "http:e-104", rec: rec(raceHTTP), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-103", rewound: true, detected: true, stream: 9},
	{name: "drain_race/rewind_without_prev_reinits", route: TransportHTTP, cursor: "http:e-1",
		rec: rec(tail(3, TransportHTTP, "e-1", "", KindResponse, false)), policy: rewind,
		action: Reinit, reason: ReasonDrainRace, detected: true, stream: 3},
	{name: "drain_race/observe_forwards_stripped", route: TransportHTTP, cursor: "http:e-104", rec: rec(raceHTTP), policy: observe,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-104", detected: true, stream: 9},
	{name: "drain_race/observe_without_prev", route: TransportSSE, cursor: "sse:e-1",
		rec: rec(tail(3, TransportSSE, "e-1", "", KindResponse, false)), policy: observe,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-1", detected: true, stream: 3},
	{name: "drain_race/upstream_replay_inclusive", route: TransportHTTP, cursor: "http:e-104", rec: rec(raceHTTP), policy: inclusive,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-104", detected: true, stream: 9},
	{name: "drain_race/upstream_replay_inclusive_beats_rewind", route: TransportHTTP, cursor: "http:e-104", rec: rec(raceHTTP),
		policy: Policy{Replay: ReplayInclusive, Unacked: UnackedRewind},
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-104", detected: true, stream: 9},
	{name: "drain_race/upstream_replay_inclusive_without_prev", route: TransportHTTP, cursor: "http:e-1",
		rec: rec(tail(3, TransportHTTP, "e-1", "", KindResponse, false)), policy: Policy{Replay: ReplayInclusive, Unacked: UnackedRewind},
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-1", detected: true, stream: 3},
	{name: "drain_race/scope_all_notification", route: TransportHTTP, cursor: "http:e-105",
		rec: rec(tail(4, TransportHTTP, "e-105", "e-104", KindNotification, false)), policy: scopeAll,
		action: Reinit, reason: ReasonDrainRace, detected: true, stream: 4},
	{name: "drain_race/scope_all_request", route: TransportHTTP, cursor: "http:e-105",
		rec: rec(tail(4, TransportHTTP, "e-105", "e-104", KindRequest, false)), policy: scopeAll,
		action: Reinit, reason: ReasonDrainRace, detected: true, stream: 4},
	// A priming event is never in scope: resuming from it loses nothing.
	{name: "normal/scope_all_priming", route: TransportHTTP, cursor: "http:p-0",
		rec: rec(tail(4, TransportHTTP, "p-0", "", KindPriming, false)), policy: Policy{Scope: ScopeAll, Unacked: UnackedRewind},
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "p-0", stream: 4},
	{name: "drain_race/scope_all_other_rewind", route: TransportSSE, cursor: "sse:e-2",
		rec: rec(tail(4, TransportSSE, "e-2", "e-1", KindOther, false)), policy: Policy{Scope: ScopeAll, Unacked: UnackedRewind},
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-1", rewound: true, detected: true, stream: 4},
	{name: "drain_race/newest_matching_tail_wins", route: TransportHTTP, cursor: "http:e-104",
		rec: rec(raceHTTP, tail(2, TransportHTTP, "e-104", "e-50", KindResponse, true)), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-103", rewound: true, detected: true, stream: 9},
	{name: "drain_race/other_transport_tail_ignored", route: TransportHTTP, cursor: "http:e-104",
		rec: rec(seedTail, raceHTTP), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-103", rewound: true, detected: true, stream: 9},

	// Row "normal": anything else, forward with the tag stripped.
	{name: "normal/acked_tail", route: TransportHTTP, cursor: "http:e-104",
		rec: rec(tail(9, TransportHTTP, "e-104", "e-103", KindResponse, true)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-104", stream: 9},
	{name: "normal/acked_tail_scope_all", route: TransportSSE, cursor: "sse:e-104",
		rec: rec(tail(7, TransportSSE, "e-104", "e-103", KindNotification, true)), policy: scopeAll,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-104", stream: 7},
	{name: "normal/cursor_is_prev_of_unacked_tail", route: TransportHTTP, cursor: "http:e-103", rec: rec(raceHTTP), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-103", stream: 9},
	{name: "normal/cursor_is_prev_legacy", route: TransportSSE, cursor: "sse:e-103", rec: rec(seedTail), policy: rewind,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-103", stream: 7},
	{name: "normal/scope_responses_notification_last", route: TransportHTTP, cursor: "http:e-105",
		rec: rec(tail(4, TransportHTTP, "e-105", "e-104", KindNotification, false)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-105", stream: 4},
	{name: "normal/scope_responses_request_last", route: TransportHTTP, cursor: "http:e-105",
		rec: rec(tail(4, TransportHTTP, "e-105", "e-104", KindRequest, false)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-105", stream: 4},
	{name: "normal/scope_responses_priming_last", route: TransportHTTP, cursor: "http:p-0",
		rec: rec(tail(4, TransportHTTP, "p-0", "", KindPriming, false)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "p-0", stream: 4},
	{name: "normal/scope_responses_other_last", route: TransportSSE, cursor: "sse:endpoint-0",
		rec: rec(tail(4, TransportSSE, "endpoint-0", "", KindOther, false)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "endpoint-0", stream: 4},
	{name: "normal/second_tail_matches", route: TransportHTTP, cursor: "http:e-7",
		rec: rec(raceHTTP, tail(2, TransportHTTP, "e-7", "e-6", KindResponse, true)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-7", stream: 2},
	{name: "normal/id_with_colon", route: TransportHTTP, cursor: "http:a:b:c",
		rec: rec(tail(5, TransportHTTP, "a:b:c", "a:b", KindResponse, true)), policy: defaults,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "a:b:c", stream: 5},
	// No CR, LF or NUL ever reaches the forwarded Last-Event-ID: the guard
	// never tags such an ID (SSE ignores an id with NUL), so it did not mint
	// the cursor, even when a tail names it; passthrough does not forward it
	// either.
	{name: "untagged/nul", route: TransportHTTP, cursor: "http:a:b\x00c",
		rec: rec(tail(5, TransportHTTP, "a:b\x00c", "a:b", KindResponse, true)), policy: defaults,
		action: Reinit, reason: ReasonUntagged},
	{name: "untagged/cr_passthrough", route: TransportHTTP, cursor: "http:a\rb", policy: passthrough,
		action: Reinit, reason: ReasonUntagged},
	{name: "untagged/lf_minted", route: TransportHTTP, cursor: "http:~1r1.0.a\nb", policy: rewind,
		action: Reinit, reason: ReasonUntagged},

	// Row "drain race (cursor)": no tail here mentions a minted cursor that
	// says "result". Rewind (the configuration's default) forwards the
	// cursor's previous ID on any replica.
	{name: "cursor_race/rewind_no_record", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindResponse),
		rec: nil, policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "1_6", rewound: true, detected: true, fromCursor: true},
	{name: "cursor_race/rewind_other_tails", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "0_9", KindResponse),
		rec: rec(raceHTTP), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "0_9", rewound: true, detected: true, fromCursor: true},
	{name: "cursor_race/rewind_first_event_reinit", route: TransportHTTP, cursor: minted(TransportHTTP, "1_0", "", KindResponse),
		rec: nil, policy: rewind,
		action: Reinit, reason: ReasonDrainRace, detected: true, fromCursor: true},
	{name: "cursor_race/reinit_policy", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindResponse),
		rec: nil, policy: defaults,
		action: Reinit, reason: ReasonDrainRace, detected: true, fromCursor: true},
	{name: "cursor_race/observe", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindResponse),
		rec: nil, policy: observe,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "1_7", detected: true, fromCursor: true},
	{name: "cursor_race/inclusive", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindResponse),
		rec: nil, policy: Policy{Unacked: UnackedRewind, Replay: ReplayInclusive},
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "1_7", detected: true, fromCursor: true},
	// On a legacy route the cursor rule never re-initializes.
	{name: "cursor_race/legacy_reinit_policy_rewinds", route: TransportSSE, cursor: minted(TransportSSE, "e-104", "e-103", KindResponse),
		rec: nil, policy: defaults,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-103", rewound: true, detected: true, fromCursor: true},
	{name: "cursor_race/legacy_first_event_observes", route: TransportSSE, cursor: minted(TransportSSE, "e-100", "", KindResponse),
		rec: nil, policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-100", detected: true, fromCursor: true},
	// The cross-transport row still comes first for minted cursors.
	{name: "cursor_race/cross_transport_first", route: TransportHTTP, cursor: minted(TransportSSE, "e-104", "e-103", KindResponse),
		rec: nil, policy: rewind,
		action: Reinit, reason: ReasonCrossTransport, detected: true},
	// An error cursor is no drain race by itself (clients resume after a
	// JSON-RPC error) unless unacked_scope is all.
	{name: "cursor_race/error_out_of_scope", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindError),
		rec: nil, policy: rewind,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "1_7"},
	{name: "cursor_race/error_scope_all", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindError),
		rec: nil, policy: Policy{Unacked: UnackedRewind, Scope: ScopeAll},
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "1_6", rewound: true, detected: true, fromCursor: true},
	// The stateful rule keeps catching errors where the watermark is.
	{name: "drain_race/error_tail", route: TransportHTTP, cursor: minted(TransportHTTP, "e-104", "e-103", KindError),
		rec: rec(tail(9, TransportHTTP, "e-104", "e-103", KindError, false)), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-103", rewound: true, detected: true, stream: 9},
	// The watermark sharpens the answer: an acknowledged tail proves a
	// clean end, so the minted cursor is an ordinary resume.
	{name: "cursor_race/acked_tail_is_normal", route: TransportHTTP, cursor: minted(TransportHTTP, "e-104", "e-103", KindResponse),
		rec: rec(tail(9, TransportHTTP, "e-104", "e-103", KindResponse, true)), policy: rewind,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-104", stream: 9},
	// A minted result that is not its unacked tail's last event (the
	// Python SDK's replay writes a priming event after it): the watermark
	// proves no clean end, so the cursor's word stands (issue 31).
	{name: "cursor_race/not_last_unacked_is_race", route: TransportHTTP, cursor: minted(TransportHTTP, "e-103", "e-102", KindResponse),
		rec: rec(raceHTTP), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-102", rewound: true, detected: true, fromCursor: true, stream: 9},
	{name: "cursor_race/not_last_acked_is_normal", route: TransportHTTP, cursor: minted(TransportHTTP, "e-103", "e-102", KindResponse),
		rec: rec(tail(9, TransportHTTP, "e-104", "e-103", KindResponse, true)), policy: rewind,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-103", stream: 9},
	// The same without minting: the tail keeps the class of its previous
	// event, a result, and the record alone shows the race; with no earlier
	// ID known, rewind falls back to a re-initialization.
	{name: "drain_race/prev_result_then_priming", route: TransportHTTP, cursor: "http:e-103",
		rec: rec(Tail{Stream: 9, Transport: TransportHTTP, LastID: "e-104", PrevID: "e-103", LastKind: KindPriming, PrevKind: KindResponse}), policy: rewind,
		action: Reinit, reason: ReasonDrainRace, detected: true, stream: 9},
	{name: "drain_race/prev_result_then_priming_minted", route: TransportHTTP, cursor: minted(TransportHTTP, "e-103", "e-102", KindResponse),
		rec: rec(Tail{Stream: 9, Transport: TransportHTTP, LastID: "e-104", PrevID: "e-103", LastKind: KindPriming, PrevKind: KindResponse}), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-102", rewound: true, detected: true, stream: 9},
	{name: "normal/prev_notification", route: TransportHTTP, cursor: "http:e-103",
		rec: rec(Tail{Stream: 9, Transport: TransportHTTP, LastID: "e-104", PrevID: "e-103", LastKind: KindResponse, PrevKind: KindNotification}), policy: rewind,
		action: ForwardCursor, reason: ReasonNormal, cursorTo: "e-103", stream: 9},
	// A record that could not keep the previous ID (two long IDs) rewinds
	// to the cursor's.
	{name: "drain_race/rewind_prev_from_cursor", route: TransportHTTP, cursor: minted(TransportHTTP, "e-104", "e-103", KindResponse),
		rec: rec(tail(9, TransportHTTP, "e-104", "", KindResponse, false)), policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "e-103", rewound: true, detected: true, stream: 9},
	// A minted notification ID (escaped "~" ID) is a plain unknown cursor.
	{name: "unknown/minted_escape", route: TransportHTTP, cursor: minted(TransportHTTP, "~x", "", KindNotification),
		rec: nil, policy: rewind,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "~x"},
	// A minting guard gives every response a minted ID: a plain cursor it
	// cannot place names no result, so unknown_cursor: reinit leaves it be
	// (a clean resume that reached another replica).
	{name: "unknown/reinit_policy_minting", route: TransportHTTP, cursor: "http:e-7",
		rec: nil, policy: Policy{Unknown: UnknownReinit, Unacked: UnackedRewind, Minting: true},
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "e-7"},
	{name: "unknown/reinit_policy_minting_error", route: TransportHTTP, cursor: minted(TransportHTTP, "1_7", "1_6", KindError),
		rec: rec(raceHTTP), policy: Policy{Unknown: UnknownReinit, Minting: true},
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "1_7"},
	// A damaged minted cursor is a plain one: forwarded as the client sent
	// it (what a client could do anyway), never rewound.
	{name: "unknown/damaged_minted", route: TransportHTTP, cursor: "http:~1r5.6.abc_76",
		rec: nil, policy: rewind,
		action: ForwardCursor, reason: ReasonUnknown, cursorTo: "~1r5.6.abc_76"},
	// A minted cursor of the ID "1_7 " after "1_" comes back trimmed
	// ("~1r4.2.1_7 " as "~1r4.2.1_7"): still a minted result.
	{name: "cursor_race/trimmed_minted", route: TransportHTTP, cursor: "http:~1r4.2.1_7",
		rec: nil, policy: rewind,
		action: ForwardCursor, reason: ReasonDrainRace, cursorTo: "1_", rewound: true, detected: true, fromCursor: true},
}

// minted is the cursor the rewriter mints for an event.
func minted(t Transport, id, prev string, k EventKind) string {
	return string(AppendMinted(nil, t, []byte(id), []byte(prev), k))
}

func TestDecide(t *testing.T) {
	for _, tc := range decideCases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.route, tc.cursor, tc.rec, tc.policy)
			if d.Action != tc.action {
				t.Errorf("Action = %d, want %d", d.Action, tc.action)
			}
			if d.Reason != tc.reason {
				t.Errorf("Reason = %v, want %v", d.Reason, tc.reason)
			}
			if d.Cursor != tc.cursorTo {
				t.Errorf("Cursor = %q, want %q", d.Cursor, tc.cursorTo)
			}
			if d.Rewound != tc.rewound {
				t.Errorf("Rewound = %v, want %v", d.Rewound, tc.rewound)
			}
			if d.Detected() != tc.detected {
				t.Errorf("Detected() = %v, want %v", d.Detected(), tc.detected)
			}
			if d.FromCursor != tc.fromCursor {
				t.Errorf("FromCursor = %v, want %v", d.FromCursor, tc.fromCursor)
			}
			switch {
			case tc.stream == 0 && d.Tail != nil:
				t.Errorf("Tail = %+v, want nil", *d.Tail)
			case tc.stream != 0 && d.Tail == nil:
				t.Errorf("Tail = nil, want stream %d", tc.stream)
			case tc.stream != 0 && d.Tail.Stream != tc.stream:
				t.Errorf("Tail.Stream = %d, want %d", d.Tail.Stream, tc.stream)
			}
			// Invariants that hold on every row.
			if d.Action != ForwardCursor && d.Cursor != "" {
				t.Errorf("Cursor %q set with Action %d", d.Cursor, d.Action)
			}
			if d.Rewound && d.Reason != ReasonDrainRace {
				t.Errorf("Rewound with reason %v", d.Reason)
			}
			if d.FromCursor && d.Reason != ReasonDrainRace {
				t.Errorf("FromCursor with tail %v, reason %v", d.Tail, d.Reason)
			}
			// The cursor rule never re-initializes on a legacy route.
			if d.FromCursor && tc.route == TransportSSE && d.Action == Reinit {
				t.Errorf("cursor rule re-initialized on a legacy route")
			}
		})
	}
}

// TestDecisionOrdinary: only a resume whose cursor is placed and merely
// stripped is ordinary (counted, not logged); a refusal, a detection, a
// rewind, an unknown cursor and a passthrough are never.
func TestDecisionOrdinary(t *testing.T) {
	want := map[string]bool{
		"normal/acked_tail":                       true,
		"normal/cursor_is_prev_of_unacked_tail":   true,
		"normal/second_tail_matches":              true,
		"unknown/no_record_forward_stripped":      false,
		"unknown/reinit_option":                   false,
		"drain_race/rewind_to_prev":               false,
		"drain_race/observe_forwards_stripped":    false,
		"untagged/passthrough_forwards_unchanged": false,
		"untagged/default_reinit":                 false,
		"tombstoned/beats_normal_cursor":          false,
		"no_cursor/unacked_race_tail_present":     false,
	}
	seen := 0
	for _, tc := range decideCases {
		d := Decide(tc.route, tc.cursor, tc.rec, tc.policy)
		if w, ok := want[tc.name]; ok {
			seen++
			if d.Ordinary() != w {
				t.Errorf("%s: Ordinary() = %v, want %v (%+v)", tc.name, d.Ordinary(), w, d)
			}
		}
		// An ordinary decision is a plain strip, nothing else.
		if d.Ordinary() && (d.Action != ForwardCursor || d.Cursor == "" || d.Rewound || d.FromCursor || d.Detected()) {
			t.Errorf("%s: an ordinary decision that is more than a strip: %+v", tc.name, d)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of the %d named rows found in decideCases", seen, len(want))
	}
}

// TestDecideSeed is the incident of the seed, literally: the legacy stream
// was cut after e-104 (a tools/call result) went out unacknowledged, and the
// client resumes on the Streamable HTTP endpoint with the tagged cursor.
func TestDecideSeed(t *testing.T) {
	var r Record
	r.Session = KeyOf("s-77")
	r.Observe(1, TransportSSE, "e-100", "", KindOther, 10, Policy{}) // endpoint event
	for i, id := range []string{"e-101", "e-102", "e-103", "e-104"} {
		prev := r.Tails[0].LastID
		kind := KindNotification
		if id == "e-104" {
			kind = KindResponse
		}
		r.Observe(1, TransportSSE, id, prev, kind, uint32(11+i), Policy{})
	}
	// The idle timeout cut the stream: no Ack.
	cursor := Tagged(TransportSSE, "e-104")
	if cursor != "sse:e-104" {
		t.Fatalf("Tagged = %q, want sse:e-104", cursor)
	}
	d := Decide(TransportHTTP, cursor, &r, Policy{})
	if d.Action != Reinit || d.Reason != ReasonCrossTransport || !d.Detected() {
		t.Fatalf("seed resume: got %+v, want Reinit cross_transport detected", d)
	}
	if got := d.Reason.String(); got != "cross_transport" {
		t.Errorf("Reason.String() = %q, want cross_transport", got)
	}
	// Even the most lenient configuration never forwards it.
	lenient := Policy{Untagged: UntaggedPassthrough, Unacked: UnackedObserve, Scope: ScopeAll, Replay: ReplayInclusive}
	if d := Decide(TransportHTTP, cursor, &r, lenient); d.Action != Reinit {
		t.Errorf("seed resume under lenient policy: got action %d, want Reinit", d.Action)
	}
	// The same cursor on the legacy route is the drain race itself.
	d = Decide(TransportSSE, cursor, &r, Policy{})
	if d.Action != Reinit || d.Reason != ReasonDrainRace {
		t.Errorf("legacy resume at e-104: got %+v, want Reinit drain_race", d)
	}
	d = Decide(TransportSSE, cursor, &r, Policy{Unacked: UnackedRewind})
	if d.Action != ForwardCursor || d.Cursor != "e-103" || !d.Rewound {
		t.Errorf("legacy resume at e-104 with rewind: got %+v, want forward e-103 rewound", d)
	}
	// Had the stream ended cleanly, resuming there would be normal.
	r.Ack(1, 20)
	d = Decide(TransportSSE, cursor, &r, Policy{})
	if d.Action != ForwardCursor || d.Reason != ReasonNormal || d.Cursor != "e-104" {
		t.Errorf("legacy resume after ack: got %+v, want forward e-104 normal", d)
	}
}

// TestDecideTableCoversEveryReason fails when a Reason is added without a
// row in decideCases.
func TestDecideTableCoversEveryReason(t *testing.T) {
	seen := map[Reason]bool{}
	for _, tc := range decideCases {
		seen[tc.reason] = true
	}
	for r := ReasonNoCursor; r <= ReasonTombstoned; r++ {
		if !seen[r] {
			t.Errorf("no decision case has reason %v", r)
		}
	}
	if len(reasonNames) != int(ReasonTombstoned)+1 {
		t.Errorf("reasonNames has %d entries, want %d: a reason was added", len(reasonNames), ReasonTombstoned+1)
	}
}

// TestDecideDoesNotModifyRecord: Decide is a pure function of its inputs.
func TestDecideDoesNotModifyRecord(t *testing.T) {
	for _, tc := range decideCases {
		if tc.rec == nil {
			continue
		}
		before := cloneRecord(tc.rec)
		Decide(tc.route, tc.cursor, tc.rec, tc.policy)
		if !recordsEqual(before, *tc.rec) {
			t.Errorf("%s: Decide changed the record: %+v → %+v", tc.name, before, *tc.rec)
		}
	}
}

func TestReasonString(t *testing.T) {
	want := map[Reason]string{
		ReasonNoCursor:       "no_cursor",
		ReasonNormal:         "normal",
		ReasonUnknown:        "unknown_cursor",
		ReasonUntagged:       "untagged_cursor",
		ReasonCrossTransport: "cross_transport",
		ReasonDrainRace:      "drain_race",
		ReasonTombstoned:     "tombstoned",
		Reason(200):          "invalid",
	}
	for r, s := range want {
		if got := r.String(); got != s {
			t.Errorf("Reason(%d).String() = %q, want %q", r, got, s)
		}
	}
}

func TestPolicyInScope(t *testing.T) {
	for k := KindOther; k <= KindPriming; k++ {
		if got, want := (Policy{}).InScope(k), k == KindResponse; got != want {
			t.Errorf("scope responses, kind %v: InScope = %v, want %v", k, got, want)
		}
		if got, want := (Policy{Scope: ScopeAll}).InScope(k), k != KindPriming; got != want {
			t.Errorf("scope all, kind %v: InScope = %v, want %v", k, got, want)
		}
	}
}

func TestEventKindString(t *testing.T) {
	want := []string{"other", "response", "request", "notification", "priming"}
	for i, s := range want {
		if got := EventKind(i).String(); got != s {
			t.Errorf("EventKind(%d).String() = %q, want %q", i, got, s)
		}
	}
	if got := EventKind(99).String(); got != "invalid" {
		t.Errorf("EventKind(99).String() = %q, want invalid", got)
	}
}

func cloneRecord(r *Record) Record {
	c := *r
	c.Tails = append([]Tail(nil), r.Tails...)
	return c
}

// recordsEqual compares two records, treating nil and empty Tails alike.
func recordsEqual(a, b Record) bool {
	if a.Session != b.Session || a.Tombstoned != b.Tombstoned ||
		a.Created != b.Created || a.Updated != b.Updated || len(a.Tails) != len(b.Tails) {
		return false
	}
	for i := range a.Tails {
		if a.Tails[i] != b.Tails[i] {
			return false
		}
	}
	return true
}

// FuzzDecide checks the invariants of the decision table on arbitrary
// cursors and records: the outcome always follows from the cursor (read by
// ParseCursor) and the record, a forwarded cursor is either the client's
// (untagged) ID or a previous ID that the record or the cursor itself holds,
// and no CR, LF or NUL is ever forwarded. Together: a forged cursor can do
// no more than a plain cursor could.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(2), "sse:e-104", "e-104", "e-103", uint8(1), false, false, uint8(0))
	f.Add(uint8(1), "sse:e-104", "e-104", "e-103", uint8(1), false, false, uint8(1))
	f.Add(uint8(2), "http:e-1", "e-1", "", uint8(4), false, true, uint8(0xff))
	f.Add(uint8(2), "", "", "", uint8(0), true, false, uint8(0))
	f.Add(uint8(1), "e-104", "e-104", "", uint8(1), false, false, uint8(3))
	f.Add(uint8(1), "http:~1r5.4.abc_76", "x", "", uint8(1), false, false, uint8(2))
	f.Add(uint8(0), "sse:~1r5.4.abc_76", "abc_7", "", uint8(1), false, false, uint8(0))
	f.Add(uint8(1), "http:~1e5.4.abc_76", "", "", uint8(5), false, false, uint8(8))
	f.Fuzz(func(t *testing.T, route uint8, cursor, last, prev string, kind uint8, acked, tomb bool, pol uint8) {
		rt := Transport(route%2 + 1)
		p := Policy{
			Untagged: UntaggedPolicy(pol & 1),
			Unacked:  UnackedPolicy(pol >> 1 % 3),
			Scope:    Scope(pol >> 3 & 1),
			Replay:   ReplayMode(pol >> 4 & 1),
			Unknown:  UnknownPolicy(pol >> 5 & 1),
			Minting:  pol>>6&1 == 1,
		}
		k, pk := EventKind(kind%6), EventKind(kind/6%6)
		r := &Record{Session: KeyOf("s"), Tombstoned: tomb, Tails: []Tail{
			{Stream: 1, Transport: TransportSSE, LastID: last, PrevID: prev, LastKind: k, PrevKind: pk, Acked: acked},
			{Stream: 2, Transport: TransportHTTP, LastID: last, PrevID: prev, LastKind: k, PrevKind: pk, Acked: acked},
		}}
		d := Decide(rt, cursor, r, p)
		c, valid := ParseCursor(cursor)
		ct, id := c.Transport, c.ID
		if !valid {
			ct = TransportNone
		}
		want := func(reason Reason) {
			t.Helper()
			if d.Reason != reason {
				t.Fatalf("Decide(%v, %q, tomb=%v) reason %v, want %v", rt, cursor, tomb, d.Reason, reason)
			}
		}
		switch {
		case ct != TransportNone && id != "" && ct != rt:
			want(ReasonCrossTransport)
			if d.Action != Reinit {
				t.Fatalf("cross-transport cursor %q not re-initialized", cursor)
			}
		case tomb:
			// Every request of a tombstoned session, cursor or not.
			want(ReasonTombstoned)
		case cursor == "":
			want(ReasonNoCursor)
		case ct == TransportNone || id == "":
			want(ReasonUntagged)
		}
		switch d.Action {
		case Reinit:
			if d.Cursor != "" || d.Rewound {
				t.Fatalf("Reinit with cursor %q", d.Cursor)
			}
		case Forward:
			if d.Reason != ReasonNoCursor && d.Reason != ReasonUntagged {
				t.Fatalf("Forward with reason %v", d.Reason)
			}
			if d.Reason == ReasonUntagged && !valid {
				t.Fatalf("passed through %q, which holds CR, LF or NUL", cursor)
			}
		case ForwardCursor:
			if ct != rt {
				t.Fatalf("forwarded cursor %q on a %v route", cursor, rt)
			}
			switch {
			case !d.Rewound:
				if d.Cursor != id {
					t.Fatalf("forwarded %q, want the stripped cursor %q", d.Cursor, id)
				}
			case d.FromCursor || d.Tail != nil && (d.Tail.PrevID == "" || d.Tail.LastID != id):
				if !c.Minted || d.Cursor != c.Prev() || d.Cursor == "" {
					t.Fatalf("rewound to %q, not the cursor's previous ID %q", d.Cursor, c.Prev())
				}
			case d.Tail == nil || d.Cursor != d.Tail.PrevID:
				t.Fatalf("rewound to %q, not the tail's previous ID", d.Cursor)
			}
			// (A record's IDs come from the rewriter, which never records
			// such an ID; only the cursor is the client's.)
			if strings.ContainsAny(d.Cursor, "\r\n\x00") && !strings.ContainsAny(last+prev, "\r\n\x00") {
				t.Fatalf("forwarded %q, which holds CR, LF or NUL", d.Cursor)
			}
		default:
			t.Fatalf("unknown action %d", d.Action)
		}
		if d.Tail != nil && d.Tail.Transport != rt {
			t.Fatalf("matched a tail of transport %v on a %v route", d.Tail.Transport, rt)
		}
		// The drain race is exactly: a tagged cursor with an ID, of the
		// route's transport, equal to an event in scope of an unacked tail
		// (responses, or every kind but priming events under unacked_scope:
		// all; of the event before the last, only a kind that is known) —
		// or else a minted cursor that says "result" (or "error" under
		// unacked_scope: all), unless a tail that mentions it was
		// acknowledged: only a record that proves a clean end after the
		// cursor's event may overrule what the cursor says.
		judged := !tomb && id != "" && ct == rt
		mentioned := last == id || prev != "" && prev == id
		inScope := func(k EventKind) bool { return k.IsResponse() || p.Scope == ScopeAll && k != KindPriming }
		eventInScope := inScope(k)
		if last != id {
			eventInScope = pk != KindOther && inScope(pk)
		}
		stateRace := judged && mentioned && !acked && eventInScope
		cursorRace := judged && !stateRace && !(mentioned && acked) && c.Minted &&
			(c.Kind == KindResponse || c.Kind == KindError && p.Scope == ScopeAll)
		if stateRace != (d.Reason == ReasonDrainRace && !d.FromCursor) || cursorRace != d.FromCursor {
			t.Fatalf("Decide(%v, %q) = %+v; drain race expected: state %v, cursor %v", rt, cursor, d, stateRace, cursorRace)
		}
		// The cursor rule never re-initializes on a legacy route.
		if d.FromCursor && rt == TransportSSE && d.Action == Reinit {
			t.Fatalf("cursor rule re-initialized %q on a legacy route", cursor)
		}
		// A minting guard never refuses a cursor only for being unknown.
		if p.Minting && d.Reason == ReasonUnknown && d.Action == Reinit {
			t.Fatalf("minting guard refused the unknown cursor %q", cursor)
		}
	})
}
