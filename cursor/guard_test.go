package cursor

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
)

// The Guard's rules, one table per entry point, each row a fact pattern the
// plugin meets and what the Guard must answer, on in-memory shared data with
// Envoy's semantics. The decision table itself is Decide's (decide_test.go);
// these rows cover what the Guard adds around it: what it reads, when it
// writes, and how shared-data failures weaken it.

var (
	owner    = PrincipalOf("Bearer owner")
	stranger = PrincipalOf("Bearer stranger")
)

// guardWorld is a Guard over fresh shared data at time 100, where session
// "known" had a stream served to owner: its tail is the result e-2,
// acknowledged.
func guardWorld(t *testing.T, data SharedData, p Policy) *Guard {
	t.Helper()
	g := &Guard{Policy: p, Store: newStore(data, 64, 3600), Clock: func() uint32 { return 100 }}
	var tl StreamTail
	tl.Reset(7, TransportHTTP)
	tl.Add([]byte("e-1"), KindNotification)
	tl.Add([]byte("e-2"), KindResponse)
	if err := g.Store.RecordTail(KeyOf("known"), &tl, p, 90); err != nil {
		t.Fatal(err)
	}
	if err := g.Store.EndStream(KeyOf("known"), 7, true, owner, 91); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGuardRequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		policy     Policy
		dropCursor bool
		tombstone  string // a session tombstoned for owner before the request
		req        Request
		judged     bool
		action     Action
		reason     Reason
		drop       bool
		ambiguous  Ambiguity
		reads      int  // shared-data reads the request made; -1: not checked
		tombstoned bool // the session is tombstoned for owner afterwards
	}{
		{name: "a DELETE passes unjudged, reading nothing",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "DELETE", Cursor: "http:e-2"},
			action: Forward, reason: ReasonNoCursor, reads: 0},
		{name: "no cursor, no session: nothing to judge",
			req:    Request{Route: TransportHTTP, Method: "POST"},
			action: Forward, reason: ReasonNoCursor, reads: 0},
		{name: "no cursor, a session never tombstoned: one read of its tombstones",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "POST"},
			action: Forward, reason: ReasonNoCursor, reads: 1},
		{name: "no cursor, a session tombstoned for its principal: refused",
			tombstone: "known",
			req:       Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "POST"},
			judged:    true, action: Reinit, reason: ReasonTombstoned, reads: -1, tombstoned: true},
		{name: "no cursor, a session tombstoned for another principal: passes",
			tombstone: "known",
			req:       Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: stranger, Method: "POST"},
			judged:    true, action: Forward, reason: ReasonNoCursor, reads: -1, tombstoned: true},
		{name: "the owner's cross-transport cursor: refused, and the session tombstoned",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "GET", Cursor: "sse:e-2"},
			judged: true, action: Reinit, reason: ReasonCrossTransport, reads: -1, tombstoned: true},
		{name: "a stranger's cross-transport cursor: refused, nothing written",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: stranger, Method: "GET", Cursor: "sse:e-2"},
			judged: true, action: Reinit, reason: ReasonCrossTransport, reads: -1},
		{name: "a made-up session's cross-transport cursor: refused, nothing written",
			req:    Request{Route: TransportHTTP, Session: KeyOf("made-up"), HasSession: true, Principal: owner, Method: "GET", Cursor: "sse:e-2"},
			judged: true, action: Reinit, reason: ReasonCrossTransport, reads: -1},
		{name: "an acknowledged result's cursor: stripped and forwarded",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "GET", Cursor: "http:e-2"},
			judged: true, action: ForwardCursor, reason: ReasonNormal, reads: -1},
		{name: "a cursor without a session (a legacy reconnect): judged by its tag alone",
			req:    Request{Route: TransportSSE, Method: "GET", Cursor: "http:e-2"},
			judged: true, action: Reinit, reason: ReasonCrossTransport, reads: 0},
		{name: "legacy_reinit drop_cursor: a legacy GET's re-initialization drops its cursor",
			dropCursor: true,
			req:        Request{Route: TransportSSE, Method: "GET", Cursor: "http:e-2"},
			judged:     true, action: Reinit, reason: ReasonCrossTransport, drop: true, reads: 0},
		{name: "legacy_reinit drop_cursor: a legacy POST still gets the reply",
			dropCursor: true,
			req:        Request{Route: TransportSSE, Method: "POST", Cursor: "http:e-2"},
			judged:     true, action: Reinit, reason: ReasonCrossTransport, reads: 0},
		{name: "legacy_reinit drop_cursor: a Streamable HTTP GET still gets the reply",
			dropCursor: true,
			req:        Request{Route: TransportHTTP, Method: "GET", Cursor: "sse:e-2"},
			judged:     true, action: Reinit, reason: ReasonCrossTransport, reads: 0},
		{name: "legacy_reinit drop_cursor: a forwarded legacy GET keeps its cursor",
			dropCursor: true,
			req:        Request{Route: TransportSSE, Method: "GET", Cursor: "sse:e-9"},
			judged:     true, action: ForwardCursor, reason: ReasonUnknown, reads: 0},
		{name: "two Last-Event-ID headers: refused before anything is read",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "GET", Cursor: "sse:e-2", LastEventIDs: 2},
			action: Forward, ambiguous: DuplicateLastEventID, reads: 0},
		{name: "two Mcp-Session-Id headers: refused, even on a DELETE",
			req:    Request{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Principal: owner, Method: "DELETE", SessionHeaders: 2},
			action: Forward, ambiguous: DuplicateSessionID, reads: 0},
		{name: "a query that names two sessions: refused",
			req:    Request{Route: TransportSSE, Method: "POST", QuerySessions: true, LastEventIDs: 1, SessionHeaders: 1},
			action: Forward, ambiguous: DuplicateQuerySession, reads: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeShared()
			g := guardWorld(t, f, tc.policy)
			g.LegacyDropCursor = tc.dropCursor
			if tc.tombstone != "" {
				if err := g.Store.TombstoneAs(KeyOf(tc.tombstone), owner, 95); err != nil {
					t.Fatal(err)
				}
			}
			gets, sets := f.gets, f.sets
			v := g.Request(&tc.req)
			if v.Ambiguous != tc.ambiguous {
				t.Fatalf("ambiguous %v, want %v", v.Ambiguous, tc.ambiguous)
			}
			if tc.ambiguous != Unambiguous {
				if v.Judged || f.gets != gets || f.sets != sets {
					t.Fatalf("an ambiguous request was judged (%v) or read shared data (%d reads, %d writes)", v.Judged, f.gets-gets, f.sets-sets)
				}
				return
			}
			if v.Judged != tc.judged || v.Action != tc.action || v.Reason != tc.reason || v.DropCursor != tc.drop {
				t.Fatalf("verdict judged=%v %v %v drop=%v, want judged=%v %v %v drop=%v",
					v.Judged, v.Action, v.Reason, v.DropCursor, tc.judged, tc.action, tc.reason, tc.drop)
			}
			if v.ReadErr != nil || v.TombstoneErr != nil {
				t.Fatalf("errors %v, %v", v.ReadErr, v.TombstoneErr)
			}
			if tc.reads >= 0 && f.gets-gets != tc.reads {
				t.Errorf("%d shared-data reads, want %d", f.gets-gets, tc.reads)
			}
			if tc.tombstone == "" && !tc.tombstoned && f.sets != sets {
				t.Errorf("%d shared-data writes, want none", f.sets-sets)
			}
			if tc.req.HasSession {
				dead, err := g.Store.TombstonedAs(tc.req.Session, owner, 101)
				if err != nil || dead != tc.tombstoned {
					t.Errorf("tombstoned for the owner afterwards: %v (%v), want %v", dead, err, tc.tombstoned)
				}
			}
		})
	}
}

// TestGuardRequestReadFailure pins the shared-data failure policy: a
// request whose watermark cannot be read is judged without it, and never
// refused only because it could not be read (unknown_cursor: reinit then
// forwards), while its cursor's own word still counts.
func TestGuardRequestReadFailure(t *testing.T) {
	g := &Guard{Policy: Policy{Unknown: UnknownReinit}, Store: newStore(failingShared{}, 64, 3600), Clock: func() uint32 { return 100 }}
	for _, tc := range []struct {
		cursor string
		action Action
		reason Reason
	}{
		{"http:e-2", ForwardCursor, ReasonUnknown},
		{"sse:e-2", Reinit, ReasonCrossTransport},
		{"", Forward, ReasonNoCursor},
	} {
		v := g.Request(&Request{Route: TransportHTTP, Session: KeyOf("s"), HasSession: true, Principal: owner, Method: "GET", Cursor: tc.cursor})
		if !errors.Is(v.ReadErr, errHost) {
			t.Errorf("cursor %q: ReadErr %v, want the host's error", tc.cursor, v.ReadErr)
		}
		if !v.Judged || v.Action != tc.action || v.Reason != tc.reason {
			t.Errorf("cursor %q: judged=%v %v %v, want %v %v", tc.cursor, v.Judged, v.Action, v.Reason, tc.action, tc.reason)
		}
		if v.TombstoneErr != nil {
			t.Errorf("cursor %q: a session not known to be served here was tombstoned (%v)", tc.cursor, v.TombstoneErr)
		}
	}
}

func TestGuardResponse(t *testing.T) {
	stream := map[string]string{":status": "200", "content-type": "text/event-stream"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := maps.Clone(m)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		unwind  bool
		resp    Response
		headers map[string]string
		want    StreamVerdict
		asked   []string // the headers read, in order
		cleared bool     // the session's record is gone afterwards
	}{
		{name: "a response without a body reads nothing",
			resp: Response{Route: TransportHTTP}, headers: map[string]string{":status": "202"}},
		{name: "a Streamable HTTP event stream is rewritten",
			resp: Response{Route: TransportHTTP, Body: true}, headers: stream,
			want: StreamVerdict{Rewrite: true}, asked: []string{"content-type", ":status", "mcp-session-id", "content-encoding"}},
		{name: "an initialize answered as a stream files it under the new session",
			resp: Response{Route: TransportHTTP, Body: true}, headers: with(stream, "mcp-session-id", "new"),
			want: StreamVerdict{Rewrite: true, Session: "new"}, asked: []string{"content-type", ":status", "mcp-session-id", "content-encoding"}},
		{name: "a legacy stream's session is only its endpoint event's",
			resp: Response{Route: TransportSSE, Body: true}, headers: with(stream, "mcp-session-id", "claimed"),
			want: StreamVerdict{Rewrite: true, NoSession: true}, asked: []string{"content-type", ":status", "content-encoding"}},
		{name: "content-type in any case and with parameters",
			resp: Response{Route: TransportHTTP, Body: true}, headers: with(stream, "content-type", "Text/Event-Stream; charset=utf-8"),
			want: StreamVerdict{Rewrite: true}, asked: []string{"content-type", ":status", "mcp-session-id", "content-encoding"}},
		{name: "JSON is not rewritten",
			resp: Response{Route: TransportHTTP, Body: true}, headers: with(stream, "content-type", "application/json"),
			asked: []string{"content-type"}},
		{name: "a 304 event stream is not rewritten",
			resp: Response{Route: TransportHTTP, Body: true}, headers: with(stream, ":status", "304"),
			asked: []string{"content-type", ":status"}},
		{name: "unwinding: no stream is rewritten",
			unwind: true, resp: Response{Route: TransportHTTP, Body: true}, headers: stream,
			asked: []string{"content-type", ":status"}},
		{name: "a compressed stream passes, counted",
			resp: Response{Route: TransportHTTP, Body: true}, headers: with(stream, "content-encoding", "gzip"),
			want: StreamVerdict{Encoded: true}, asked: []string{"content-type", ":status", "mcp-session-id", "content-encoding"}},
		{name: "content-encoding identity is no encoding",
			resp: Response{Route: TransportHTTP, Body: true}, headers: with(stream, "content-encoding", "Identity"),
			want: StreamVerdict{Rewrite: true}, asked: []string{"content-type", ":status", "mcp-session-id", "content-encoding"}},
		{name: "a DELETE the upstream accepted clears the session's record",
			resp: Response{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Delete: true}, headers: map[string]string{":status": "204"},
			asked: []string{":status"}, cleared: true},
		{name: "a DELETE the upstream refused keeps it",
			resp: Response{Route: TransportHTTP, Session: KeyOf("known"), HasSession: true, Delete: true}, headers: map[string]string{":status": "405"},
			asked: []string{":status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guardWorld(t, newFakeShared(), Policy{})
			g.Unwind = tc.unwind
			var asked []string
			r := tc.resp
			r.Header = func(name string) string { asked = append(asked, name); return tc.headers[name] }
			v := g.Response(&r)
			if v != tc.want {
				t.Errorf("verdict %+v, want %+v", v, tc.want)
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("headers read %q, want %q", asked, tc.asked)
			}
			rec, err := g.Store.Load(KeyOf("known"), 100)
			if err != nil || (rec == nil) != tc.cleared {
				t.Errorf("record of the session afterwards: %v (%v), want cleared %v", rec, err, tc.cleared)
			}
		})
	}
}

// TestGuardStreamEnd pins the acknowledgement rule: only a stream that
// reached its end with no response flag at all, flags read, acknowledges
// its tail; a stream whose tail was never written records nothing.
func TestGuardStreamEnd(t *testing.T) {
	for _, tc := range []struct {
		name       string
		written    bool
		reachedEnd bool
		flagsRead  bool
		flags      uint64
		acked      bool
	}{
		{"a clean end", true, true, true, 0, true},
		{"a reset after the end", true, true, true, 0x10, false},
		{"flags not read", true, true, false, 0, false},
		{"cut before the end", true, false, true, 0, false},
		{"a tail never written", false, true, true, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeShared()
			g := &Guard{Store: newStore(f, 64, 3600), Clock: func() uint32 { return 100 }}
			var tl StreamTail
			tl.Reset(3, TransportHTTP)
			tl.Add([]byte("e-5"), KindResponse)
			if tc.written {
				if _, err := g.Sent(KeyOf("s"), true, &tl); err != nil || !tl.Written() {
					t.Fatalf("the tail of a result was not written (%v)", err)
				}
			}
			sets := f.sets
			if err := g.StreamEnd(KeyOf("s"), &tl, tc.reachedEnd, tc.flagsRead, tc.flags, owner); err != nil {
				t.Fatal(err)
			}
			rec, _ := g.Store.Load(KeyOf("s"), 100)
			if !tc.written {
				if rec != nil || f.sets != sets {
					t.Fatalf("a stream whose tail was never written recorded %v", rec)
				}
				return
			}
			if rec == nil || len(rec.Tails) != 1 || rec.Tails[0].Acked != tc.acked {
				t.Fatalf("record %+v, want its tail acknowledged=%v", rec, tc.acked)
			}
		})
	}
}

// TestIsEventStream: the media type before any ';', trimmed of white space
// (Unicode's too, as strings.TrimSpace does), in any case.
func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream": true, "Text/Event-Stream; charset=utf-8": true, " text/event-stream ": true,
		"text/event-stream;": true, "": false, "application/json": false, "text/event-streams": false,
		"\u00a0text/event-stream": true, "text/plain; text/event-stream": false,
	} {
		if got := IsEventStream(ct); got != want {
			t.Errorf("IsEventStream(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestAmbiguityBodies: each refusal is a JSON-RPC error naming what was
// repeated; an unambiguous request has none.
func TestAmbiguityBodies(t *testing.T) {
	for a, want := range map[Ambiguity]string{
		DuplicateLastEventID: "last-event-id", DuplicateSessionID: "mcp-session-id", DuplicateQuerySession: "sessionId",
	} {
		var msg struct {
			Error struct {
				Code int
				Data map[string]string
			}
		}
		if err := json.Unmarshal(a.Body(), &msg); err != nil || msg.Error.Code != -32600 {
			t.Errorf("%v: body %s (%v)", a, a.Body(), err)
		}
		if msg.Error.Data["header"] != want && msg.Error.Data["parameter"] != want {
			t.Errorf("%v: body %s does not name %s", a, a.Body(), want)
		}
		if a.String() == "" {
			t.Errorf("%v has no name for the warn line", a)
		}
	}
	if Unambiguous.Body() != nil || Unambiguous.String() != "" {
		t.Error("Unambiguous has a refusal")
	}
}
