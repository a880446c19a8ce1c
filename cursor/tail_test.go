package cursor

import (
	"bytes"
	"strings"
	"testing"
)

func TestStreamTailDue(t *testing.T) {
	responses := Policy{}
	unknownReinit := Policy{Unknown: UnknownReinit}
	s := newStore(newFakeShared(), 16, 3600)
	write := func(tl *StreamTail, p Policy) {
		t.Helper()
		if err := s.RecordTail(KeyOf("s-1"), tl, p, 10); err != nil {
			t.Fatal(err)
		}
	}

	var tl StreamTail
	tl.Reset(7, TransportHTTP)
	if tl.Due(responses) || tl.Due(unknownReinit) {
		t.Fatal("a tail with no events is due")
	}
	tl.Add([]byte("e-1"), KindNotification)
	if tl.Due(responses) {
		t.Fatal("a notification tail is due with nothing in scope written")
	}
	if !tl.Due(unknownReinit) || !tl.Due(Policy{Scope: ScopeAll}) {
		t.Fatal("a notification tail is not due when unknown cursors re-initialize or every kind is in scope")
	}
	tl.Add([]byte("e-2"), KindResponse)
	if !tl.Due(responses) {
		t.Fatal("a response tail is not due")
	}
	write(&tl, responses)
	if tl.Due(responses) || !tl.Written() {
		t.Fatal("a written tail is still due, or not written")
	}
	r, _ := s.Load(KeyOf("s-1"), 10)
	if r == nil || len(r.Tails) != 1 || r.Tails[0] != (Tail{Stream: 7, Transport: TransportHTTP, LastID: "e-2", PrevID: "e-1", LastKind: KindResponse, PrevKind: KindRequest /* a notification, kept as its class (prevKinds) */}) {
		t.Fatalf("record %+v", r)
	}
	// A notification after a written response must overwrite it, or a
	// resume at the notification would look like a drain race at e-2.
	tl.Add([]byte("e-3"), KindNotification)
	if !tl.Due(responses) {
		t.Fatal("the notification after a written response is not due")
	}
	write(&tl, responses)
	// The written tail still holds the response as its previous event (a
	// resume from it is a drain race): the next event overwrites it too.
	tl.Add([]byte("e-4"), KindNotification)
	if !tl.Due(responses) {
		t.Fatal("the event after a tail holding a response is not due")
	}
	write(&tl, responses)
	tl.Add([]byte("e-5"), KindNotification)
	if tl.Due(responses) {
		t.Fatal("a third notification is due although the written tail is out of scope")
	}
	if err := s.Ack(KeyOf("s-1"), 7, 11); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Load(KeyOf("s-1"), 11); r == nil || !r.Tails[0].Acked || r.Tails[0].LastID != "e-4" {
		t.Fatalf("after ack: %+v", r)
	}
}

// TestTailTooLongWritesNothing: a tail whose last ID is too long to record is
// never due, so it creates no record that would evict another session's.
func TestTailTooLongWritesNothing(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 16, 3600)
	for _, n := range []int{MaxEventIDBytes + 1, 1000, 8192} {
		var tl StreamTail
		tl.Reset(1, TransportHTTP)
		tl.Add(bytes.Repeat([]byte("x"), n), KindResponse)
		for _, p := range []Policy{{}, {Unknown: UnknownReinit}, {Scope: ScopeAll}} {
			if tl.Due(p) {
				t.Fatalf("a %d-byte last ID is due under %+v", n, p)
			}
		}
		// Even written by hand, it changes nothing and creates nothing.
		if err := s.RecordTail(KeyOf("s-1"), &tl, Policy{}, 10); err != nil {
			t.Fatal(err)
		}
	}
	if f.sets != 0 {
		t.Fatalf("%d shared-data writes for tails that record nothing", f.sets)
	}
}

// TestTailResumeSeedsPrevious: the first event of a stream opened by a
// resume has the forwarded cursor as its previous ID, so a drain race on it
// can be rewound.
func TestTailResumeSeedsPrevious(t *testing.T) {
	s := newStore(newFakeShared(), 16, 3600)
	var tl StreamTail
	tl.Reset(2, TransportHTTP)
	tl.Resume("1_4")
	tl.Add([]byte("1_5"), KindResponse)
	if err := s.RecordTail(KeyOf("s-1"), &tl, Policy{}, 10); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Load(KeyOf("s-1"), 10)
	d := Decide(TransportHTTP, "http:1_5", r, Policy{Unacked: UnackedRewind})
	if d.Action != ForwardCursor || !d.Rewound || d.Cursor != "1_4" {
		t.Fatalf("drain race on a resumed stream's first event: %+v, want rewound to 1_4", d)
	}
}

// TestTailPrimingNeverDue: a priming event alone is never a drain race, so
// under unacked_scope: all it is not written either (nothing to protect).
func TestTailPrimingNeverInScope(t *testing.T) {
	for _, p := range []Policy{{}, {Scope: ScopeAll}} {
		if p.InScope(KindPriming) {
			t.Fatalf("priming in scope under %+v", p)
		}
		var tl StreamTail
		tl.Reset(1, TransportHTTP)
		tl.Add([]byte("0_0"), KindPriming)
		if tl.Due(p) {
			t.Fatalf("a priming-only tail is due under %+v", p)
		}
	}
	r := &Record{Tails: []Tail{{Stream: 1, Transport: TransportHTTP, LastID: "0_0", LastKind: KindPriming}}}
	if d := Decide(TransportHTTP, "http:0_0", r, Policy{Scope: ScopeAll}); d.Reason != ReasonNormal || d.Action != ForwardCursor {
		t.Fatalf("resume from an unacked priming event under scope all: %+v", d)
	}
}

func TestDecisionTombstones(t *testing.T) {
	for _, tc := range []struct {
		d    Decision
		want bool
	}{
		{Decision{Action: Reinit, Reason: ReasonCrossTransport}, true},
		{Decision{Action: Reinit, Reason: ReasonDrainRace}, true},
		{Decision{Action: Reinit, Reason: ReasonUntagged}, true},
		{Decision{Action: Reinit, Reason: ReasonTombstoned}, false},
		{Decision{Action: ForwardCursor, Reason: ReasonDrainRace, Rewound: true}, false},
		{Decision{Action: Forward, Reason: ReasonUntagged}, false},
	} {
		if got := tc.d.Tombstones(); got != tc.want {
			t.Errorf("%+v.Tombstones() = %v, want %v", tc.d, got, tc.want)
		}
	}
}

func TestSessionTag(t *testing.T) {
	a, b := SessionTag("s-77"), SessionTag("s-78")
	if a == b || a == "" || len(a) > 8 || SessionTag("s-77") != a {
		t.Fatalf("tags %q %q: want short, stable and distinct", a, b)
	}
	if strings.Contains(a, "s-77") {
		t.Fatal("the tag shows the session ID")
	}
}

// clobberOnCreate lets a second worker create the same fresh slot right after
// the first worker's write: proxy-wasm ignores cas on a missing key, so both
// writes "succeed" and the second replaces the first.
type clobberOnCreate struct {
	*fakeShared
	other func()
	done  bool
}

func (c *clobberOnCreate) Set(key, value []byte, cas uint32) error {
	_, _, missing := c.fakeShared.Get(key)
	err := c.fakeShared.Set(key, value, cas)
	if missing != nil && !c.done {
		c.done = true
		c.other()
	}
	return err
}

func TestCreateRaceMerges(t *testing.T) {
	f := newFakeShared()
	data := &clobberOnCreate{fakeShared: f}
	w1 := newStore(data, 16, 3600)
	w2 := newStore(f, 16, 3600)
	add := func(s *Store, stream uint32, id string) {
		t.Helper()
		var tl StreamTail
		tl.Reset(stream, TransportHTTP)
		tl.Add([]byte(id), KindResponse)
		if err := s.RecordTail(KeyOf("s-1"), &tl, Policy{}, 10); err != nil {
			t.Fatal(err)
		}
	}
	data.other = func() { add(w2, 2, "e-2") } // lands between w1's write and its read-back
	add(w1, 1, "e-1")
	r, _ := w1.Load(KeyOf("s-1"), 10)
	if r == nil || len(r.Tails) != 2 {
		t.Fatalf("record %+v: want both workers' tails", r)
	}
	if w1.TakeConflicts() != 1 {
		t.Fatal("the lost creation was not counted as a conflict")
	}
}
