package differential

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// scenario is one session's stream, how it reached the guard and where it
// ended.
type scenario struct {
	name      string
	l         layout
	session   string
	principal string
	ids       *ids
	// seed is the untagged cursor of a client that resumes from a
	// pre-guard event ("" for a stream without one): passed through or
	// refused by the untagged_cursor policy.
	seed      string
	events    []event
	cut       int  // the index of the last event the stream delivered
	completed bool // the stream ended cleanly after it
	chunks    [][]byte
	rng       *rand.Rand // chunking of the replays
}

// newScenario builds scenario (a, b) of the corpus: deterministic.
func newScenario(a, b uint64) *scenario {
	rng := rand.New(rand.NewPCG(a, b))
	sc := &scenario{l: layout(rng.IntN(int(layouts))), session: sessionID(rng), rng: rng}
	sc.principal = "Bearer " + fmt.Sprintf("%016x", rng.Uint64())
	sc.ids = newIDs(sc.l, rng)
	if rng.IntN(4) == 0 {
		sc.seed = sc.ids.next()
	}
	if sc.l == python || sc.l == gosdk || sc.l != rust && rng.IntN(2) == 0 {
		sc.events = append(sc.events, event{sc.ids.next(), priming})
	}
	weights := []kind{notification, notification, notification, result, result, result, request, rpcError, batchResult}
	for n := 1 + rng.IntN(6); n > 0; n-- {
		sc.events = append(sc.events, event{sc.ids.next(), weights[rng.IntN(len(weights))]})
	}
	if sc.l == python && rng.IntN(2) == 0 {
		// Replay, then a fresh priming event; or a polling close.
		sc.events = append(sc.events, event{sc.ids.next(), priming})
	}
	sc.cut = rng.IntN(len(sc.events))
	if rng.IntN(5) == 0 {
		sc.cut, sc.completed = len(sc.events)-1, true
	}
	body, ends := sc.l.body(sc.events[:sc.cut+1])
	sc.chunks = chunk(rng, body, ends[:sc.cut+1])
	sc.name = fmt.Sprintf("scenario (%d,%d) %s %s cut@%d/%d completed=%v seed=%q",
		a, b, layoutNames[sc.l], kinds(sc.events), sc.cut, len(sc.events), sc.completed, sc.seed)
	return sc
}

func kinds(evs []event) string {
	s := make([]string, len(evs))
	for i, ev := range evs {
		s[i] = kindNames[ev.kind]
	}
	return "[" + strings.Join(s, " ") + "]"
}

// policies are every combination of the policies that change how a cursor
// is judged.
func policies() []cursor.Policy {
	var ps []cursor.Policy
	for _, u := range []cursor.UnackedPolicy{cursor.UnackedRewind, cursor.UnackedReinit, cursor.UnackedObserve} {
		for _, un := range []cursor.UntaggedPolicy{cursor.UntaggedReinit, cursor.UntaggedPassthrough} {
			for _, mint := range []bool{true, false} {
				for _, sc := range []cursor.Scope{cursor.ScopeResponses, cursor.ScopeAll} {
					ps = append(ps, cursor.Policy{Unacked: u, Untagged: un, Minting: mint, Scope: sc})
				}
			}
		}
	}
	return ps
}

func policyName(p cursor.Policy) string {
	return fmt.Sprintf("unacked=%s untagged=%s mint=%v scope=%s",
		[...]string{"reinit", "rewind", "observe"}[p.Unacked], [...]string{"reinit", "passthrough"}[p.Untagged],
		p.Minting, [...]string{"responses", "all"}[p.Scope])
}

// clone is a copy of r whose shared data can change without changing r's.
func (r *replica) clone() *replica {
	m := r.store.Data.(*memData)
	c := newReplica(r.policy)
	c.nonce = r.nonce + 1_000_000
	c.store.Data = &memData{vals: maps.Clone(m.vals), cas: maps.Clone(m.cas), next: m.next}
	return c
}

// unchanged reports that v forwards the client's cursor as it stands: the
// upstream replays strictly after the event the client holds.
func unchanged(v cursor.Verdict) bool {
	return v.Action == cursor.Forward || v.Action == cursor.ForwardCursor && !v.Rewound
}

// safer reports that v rewinds or refuses.
func safer(v cursor.Verdict) bool { return v.Action == cursor.Reinit || v.Rewound }

// check runs sc under p and returns the properties it breaks.
func (sc *scenario) check(p cursor.Policy) []string {
	var bad []string
	fail := func(format string, args ...any) {
		bad = append(bad, sc.name+" "+policyName(p)+": "+fmt.Sprintf(format, args...))
	}
	a := newReplica(p)
	first := ""
	if sc.seed != "" {
		first = sc.seed
	}
	v := a.request(sc.session, sc.principal, first)
	if v.Action == cursor.Reinit {
		return nil // a refused pre-guard cursor: nothing served
	}
	out := a.serve(v, sc.session, sc.principal, sc.chunks, sc.completed)
	got := downstreamIDs(out)
	if len(got) != sc.cut+1 {
		fail("%d ids went downstream, want %d", len(got), sc.cut+1)
		return bad
	}
	// The stream resumes after the pre-guard cursor, which went upstream as
	// it came: the event before its first.
	before := []string{}
	if sc.seed != "" {
		before = append(before, sc.seed)
	}
	for j := 0; j <= sc.cut; j++ {
		bad = append(bad, sc.resume(a, got[j], sc.events, j, before, sc.completed, p, fail, 1)...)
		before = append(before, sc.events[j].id)
	}
	return bad
}

// resume checks the resume of a client holding cursor cur, the downstream
// ID of events[j] of a stream that replica a served (earlier: the upstream
// IDs before it on that stream, its resume cursor first), on a and on a
// fresh replica. A result the client holds but did not process goes to a
// second round: the upstream's replay of the stream after what a forwarded,
// cut right after that result.
func (sc *scenario) resume(a *replica, cur string, evs []event, j int, earlier []string, clean bool, p cursor.Policy, fail func(string, ...any), round int) []string {
	held := a.clone()
	va := held.request(sc.session, sc.principal, cur)
	vb := newReplica(p).request(sc.session, sc.principal, cur)
	if safer(vb) && unchanged(va) && !clean {
		fail("round %d, cursor %q (%s): the replica with the watermark forwarded it unchanged, the fresh one %s",
			round, cur, kindNames[evs[j].kind], describe(vb))
	}
	if !evs[j].kind.holdsResult() || clean || p.Unacked != cursor.UnackedRewind || !p.Minting {
		return nil
	}
	// Under rewind, every cut result is replayed on both replicas: the
	// forwarded cursor names an event before it, or, when none is known,
	// the resume is refused (rewind's documented fallback).
	for name, v := range map[string]cursor.Verdict{"watermark": va, "fresh": vb} {
		switch {
		case v.Action == cursor.ForwardCursor && v.Rewound && slices.Contains(earlier, v.Cursor):
		case v.Action == cursor.Reinit && len(earlier) == 0:
		default:
			fail("round %d, cursor %q of a result: the %s replica %s, want a rewind to one of %q", round, cur, name, describe(v), earlier)
		}
	}
	if round > 1 || va.Action != cursor.ForwardCursor || sc.l != python {
		return nil
	}
	// The Python SDK replays the events after the cursor it gets, then
	// writes a fresh priming event; the replay is cut after the result.
	from := slices.IndexFunc(evs, func(ev event) bool { return ev.id == va.Cursor }) + 1
	replay := append(slices.Clone(evs[from:]), event{sc.ids.next(), priming})
	k := slices.IndexFunc(replay, func(ev event) bool { return ev.id == evs[j].id })
	if k < 0 {
		fail("round %d: the replay after %q lost the result %q", round, va.Cursor, evs[j].id)
		return nil
	}
	body, ends := sc.l.body(replay[:k+1])
	out := held.serve(va, sc.session, sc.principal, chunk(sc.rng, body, ends), false)
	got := downstreamIDs(out)
	if len(got) != k+1 {
		fail("round %d: %d ids went downstream, want %d", round, len(got), k+1)
		return nil
	}
	again := []string{va.Cursor}
	for _, ev := range replay[:k] {
		again = append(again, ev.id)
	}
	return sc.resume(held, got[k], replay, k, again, false, p, fail, round+1)
}

func describe(v cursor.Verdict) string {
	switch {
	case v.Action == cursor.Reinit:
		return "refused it (" + v.Reason.String() + ")"
	case v.Rewound:
		return fmt.Sprintf("rewound to %q", v.Cursor)
	case v.Action == cursor.Forward:
		return "forwarded it as it came (" + v.Reason.String() + ")"
	}
	return fmt.Sprintf("forwarded %q (%s)", v.Cursor, v.Reason)
}

// corpusSize is the number of scenarios of the fixed corpus; each runs under
// every policy of policies() and resumes from every cursor it delivered.
const corpusSize = 2500

// TestTwoReplicasAgree is the differential property over a fixed corpus:
// the replica that holds the watermark never forwards a cursor unchanged
// where a fresh replica rewinds or refuses, unless the stream ended cleanly
// after the cursor's event; and under rewind (minting) every cut result is
// replayed on both, through a second cut of the Python SDK's replay too.
func TestTwoReplicasAgree(t *testing.T) {
	var bad []string
	cases, layoutsSeen := 0, map[layout]int{}
	for i := range corpusSize {
		sc := newScenario(31, uint64(i))
		layoutsSeen[sc.l]++
		for _, p := range policies() {
			cases++
			bad = append(bad, sc.check(p)...)
		}
	}
	t.Logf("%d scenarios, %d scenario-policy cases, by layout %v", corpusSize, cases, layoutsSeen)
	if len(layoutsSeen) != int(layouts) {
		t.Fatalf("the corpus covers %d layouts of %d", len(layoutsSeen), layouts)
	}
	for i, b := range bad {
		if i == 10 {
			t.Errorf("... and %d more", len(bad)-10)
			break
		}
		t.Error(b)
	}
}

// FuzzTwoReplicas states the same property for any scenario.
func FuzzTwoReplicas(f *testing.F) {
	for i := range uint64(8) {
		f.Add(uint64(31), i)
	}
	f.Fuzz(func(t *testing.T, a, b uint64) {
		sc := newScenario(a, b)
		for _, p := range policies() {
			if bad := sc.check(p); len(bad) > 0 {
				t.Fatal(strings.Join(bad, "\n"))
			}
		}
	})
}
