package differential

import (
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
)

// memData is proxy-wasm shared data in memory, with the host's CAS rules
// (ENVOY-FACTS.md): cas 0 writes unconditionally, writing a missing key
// ignores cas, every write gets a new non-zero cas.
type memData struct {
	vals map[string][]byte
	cas  map[string]uint32
	next uint32
}

func newMemData() *memData {
	return &memData{vals: map[string][]byte{}, cas: map[string]uint32{}}
}

func (m *memData) Get(key []byte) ([]byte, uint32, error) {
	v, ok := m.vals[string(key)]
	if !ok {
		return nil, 0, cursor.ErrNotFound
	}
	return v, m.cas[string(key)], nil
}

func (m *memData) Set(key, value []byte, cas uint32) error {
	k := string(key)
	if cur, ok := m.cas[k]; ok && cas != 0 && cas != cur {
		return cursor.ErrCASMismatch
	}
	m.next++
	m.vals[k], m.cas[k] = append([]byte(nil), value...), m.next
	return nil
}

// replica is one Envoy process running the guard: its own shared data, the
// plugin's callbacks in the order Envoy runs them (filter/http.go).
type replica struct {
	guard  cursor.Guard
	store  cursor.Store
	policy cursor.Policy
	nonce  uint32
}

const (
	maxLine = 8192
	now     = 1_764_600_000
	// flagDC is Envoy's response flag of a client that went away.
	flagDC = 0x4000
)

func newReplica(p cursor.Policy) *replica {
	r := &replica{policy: p}
	r.store = cursor.Store{Data: newMemData(), Slots: 64, TTL: 3600}
	r.guard = cursor.Guard{Policy: p, Store: &r.store, Clock: func() uint32 { return now }}
	return r
}

// request is the request-headers callback of a request of session carrying
// cursor (GET /mcp, Streamable HTTP).
func (r *replica) request(session, principal, cur string) cursor.Verdict {
	return r.guard.Request(&cursor.Request{
		Route: cursor.TransportHTTP, Session: cursor.KeyOf(session), HasSession: true,
		Principal: cursor.PrincipalOf(principal), Cursor: cur,
	})
}

// serve runs the response of a request judged v through the replica: the
// rewriter tags the chunks, the tail takes every event with an ID and is
// written before its chunk leaves, and the stream ends cleanly (completed)
// or cut by the client. It returns what went downstream.
func (r *replica) serve(v cursor.Verdict, session, principal string, chunks [][]byte, completed bool) string {
	r.nonce++
	k := cursor.KeyOf(session)
	tail := new(cursor.StreamTail)
	tail.Reset(r.nonce, cursor.TransportHTTP)
	rw := sse.NewRewriter(cursor.TransportHTTP, maxLine)
	rw.SetMint(r.policy.Minting)
	if v.ResumeAfter != "" {
		tail.Resume(v.ResumeAfter)
		rw.Resume(tail.Last())
	}
	var out strings.Builder
	for i, c := range chunks {
		eos := completed && i == len(chunks)-1
		b, _ := rw.Rewrite(nil, c, eos)
		for _, ev := range sse.TailEvents(rw.Events()) {
			if ev.HasID {
				tail.Add(ev.ID, ev.Kind())
			}
		}
		if _, err := r.guard.Sent(k, true, tail); err != nil {
			panic(err)
		}
		out.Write(b)
	}
	var flags uint64
	if !completed {
		flags = flagDC
	}
	if err := r.guard.StreamEnd(k, tail, completed, true, flags, cursor.PrincipalOf(principal)); err != nil {
		panic(err)
	}
	return out.String()
}

// downstreamIDs returns the id of each event of a rewritten stream whose
// events are all well formed and carry one id each, in order.
func downstreamIDs(out string) []string {
	out = strings.ReplaceAll(out, "\r\n", "\n")
	var ids []string
	for _, block := range strings.Split(out, "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "id:"); ok {
				ids = append(ids, strings.TrimPrefix(v, " "))
			}
		}
	}
	return ids
}
