package cursor

import (
	"strconv"
	"testing"
)

// viewShared is shared data that returns its values without a copy, as the
// plugin's host buffers do.
type viewShared struct{ f *fakeShared }

func (v viewShared) Get(key []byte) ([]byte, uint32, error) {
	e, ok := v.f.m[string(key)]
	if !ok {
		return nil, 0, ErrNotFound
	}
	return e.value, e.cas, nil
}

func (v viewShared) Set(key, value []byte, cas uint32) error { return v.f.Set(key, value, cas) }

// BenchmarkResume is the guard's work on a resume with a session whose
// record holds the cursor (make bench's resume workload): the store load,
// the decision, and the tail the forwarded stream starts from. (A few
// sessions lose their record to two-choice eviction, as in make bench.)
func BenchmarkResume(b *testing.B) {
	s := &Store{Data: viewShared{newFakeShared()}, Slots: 10000, TTL: 3600}
	const sessions = 1000
	keys := make([]SessionKey, sessions)
	cursors := make([]string, sessions)
	var tail StreamTail
	for i := range keys {
		keys[i] = KeyOf("s-" + strconv.Itoa(i*7919) + "-" + strconv.Itoa(i))
		tail.Reset(uint32(i+1), TransportHTTP)
		id := "e-" + strconv.Itoa(100+10*i)
		tail.Add([]byte(id), KindNotification)
		tail.Add([]byte("e-"+strconv.Itoa(101+10*i)), KindResponse)
		if err := s.RecordTail(keys[i], &tail, Policy{Unacked: UnackedRewind, Minting: true}, 1000); err != nil {
			b.Fatal(err)
		}
		if err := s.EndStream(keys[i], uint32(i+1), true, 7, 1000); err != nil {
			b.Fatal(err)
		}
		cursors[i] = "http:e-" + strconv.Itoa(101+10*i)
	}
	p := Policy{Unacked: UnackedRewind, Minting: true}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % sessions
		rec, _, err := s.LoadAs(keys[j], 7, 1001)
		if err != nil {
			b.Fatal(err)
		}
		d := Decide(TransportHTTP, cursors[j], rec, p)
		if d.Action != ForwardCursor {
			b.Fatalf("decision %+v", d)
		}
		tail.Reset(uint32(i), TransportHTTP)
		tail.Resume(d.Cursor)
	}
}
