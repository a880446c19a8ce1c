package cursor

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// fakeShared is shared data with Envoy's semantics (ENVOY-FACTS.md): cas 0
// writes unconditionally, writing a missing key ignores cas, every write gets
// a new non-zero cas, a stale cas fails with ErrCASMismatch. No delete.
type fakeShared struct {
	m       map[string]fakeEntry
	nextCAS uint32
	gets    int
	sets    int
	maxKeys int
}

type fakeEntry struct {
	value []byte
	cas   uint32
}

func newFakeShared() *fakeShared { return &fakeShared{m: map[string]fakeEntry{}} }

func (f *fakeShared) Get(key []byte) ([]byte, uint32, error) {
	f.gets++
	e, ok := f.m[string(key)]
	if !ok {
		return nil, 0, ErrNotFound
	}
	return bytes.Clone(e.value), e.cas, nil
}

func (f *fakeShared) Set(key, value []byte, cas uint32) error {
	f.sets++
	e, ok := f.m[string(key)]
	if ok && cas != 0 && cas != e.cas {
		return ErrCASMismatch
	}
	f.nextCAS++
	if f.nextCAS == 0 {
		f.nextCAS = 1
	}
	f.m[string(key)] = fakeEntry{value: bytes.Clone(value), cas: f.nextCAS}
	f.maxKeys = max(f.maxKeys, len(f.m))
	return nil
}

func TestFakeSharedSemantics(t *testing.T) {
	f := newFakeShared()
	k := []byte("k")
	if _, _, err := f.Get(k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key: %v", err)
	}
	if err := f.Set(k, []byte("a"), 12345); err != nil {
		t.Fatalf("Set of a missing key with a cas: %v", err)
	}
	_, c1, _ := f.Get(k)
	if c1 == 0 {
		t.Fatal("cas 0 after a write")
	}
	if err := f.Set(k, []byte("b"), 0); err != nil {
		t.Fatalf("unconditional Set: %v", err)
	}
	if err := f.Set(k, []byte("c"), c1); !errors.Is(err, ErrCASMismatch) {
		t.Fatalf("stale cas: %v", err)
	}
	v, c2, _ := f.Get(k)
	if string(v) != "b" || c2 == c1 {
		t.Fatalf("after a stale write: %q cas %d (old %d)", v, c2, c1)
	}
	if err := f.Set(k, []byte("d"), c2); err != nil {
		t.Fatalf("current cas: %v", err)
	}
}

func newStore(data SharedData, slots, ttl uint32) *Store {
	return &Store{Data: data, Slots: slots, TTL: ttl}
}

// observeChange is an Update change that records an event on a stream.
func observeChange(stream uint32, last, prev string, now uint32) func(*Record) bool {
	return func(r *Record) bool {
		r.Observe(stream, TransportHTTP, last, prev, KindResponse, now, Policy{})
		return true
	}
}

func TestStoreUpdateCreatesAndLoadFinds(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	if err := s.Update(KeyOf("s-77"), 1000, true, observeChange(1, "e-104", "e-103", 1000)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(KeyOf("s-77"), 1001)
	if err != nil || r == nil {
		t.Fatalf("Load = %v, %v", r, err)
	}
	if r.Session != KeyOf("s-77") || r.Created != 1000 || r.Updated != 1000 {
		t.Errorf("record header %+v", r)
	}
	checkTails(t, "created record", *r, []Tail{{Stream: 1, Transport: TransportHTTP, LastID: "e-104", PrevID: "e-103", LastKind: KindResponse}})
	if len(f.m) != 1 {
		t.Errorf("%d keys written, want 1", len(f.m))
	}
	for k := range f.m {
		if !strings.HasPrefix(k, KeyPrefix) {
			t.Errorf("key %q lacks the prefix %q", k, KeyPrefix)
		}
	}

	// A second Update sees the first one's change.
	if err := s.Update(KeyOf("s-77"), 1002, false, func(r *Record) bool { return r.Ack(1, 1002) }); err != nil {
		t.Fatal(err)
	}
	r, _ = s.Load(KeyOf("s-77"), 1003)
	if r == nil || !r.Tails[0].Acked || r.Updated != 1002 || r.Created != 1000 {
		t.Fatalf("after Ack: %+v", r)
	}

	// Another session is not confused with it.
	if r, _ := s.Load(KeyOf("s-78"), 1003); r != nil {
		t.Errorf("Load of a session never written = %+v", r)
	}
}

func TestStoreUpdateWithoutCreate(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	called := false
	err := s.Update(KeyOf("unknown"), 10, false, func(*Record) bool { called = true; return true })
	if err != nil || called {
		t.Fatalf("Update(create=false) on an unknown session: err %v, change called %v", err, called)
	}
	if f.sets != 0 || len(f.m) != 0 {
		t.Fatalf("Update(create=false) wrote %d times", f.sets)
	}
}

func TestStoreUnchangedIsNotWritten(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	if err := s.Update(KeyOf("s"), 10, true, func(*Record) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if f.sets != 0 {
		t.Fatalf("a change that reported nothing was written (%d sets)", f.sets)
	}
}

// TestStoreAnySessionLength: every session ID the spec allows is tracked,
// whatever its length (issue 12: IDs over 128 bytes used to get nothing),
// and IDs that differ only past their first 128 bytes stay apart.
func TestStoreAnySessionLength(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	for _, n := range []int{1, 36, 128, 129, 202, 1024, 8192} {
		a := strings.Repeat("a", n-1) + "1"
		b := strings.Repeat("a", n-1) + "2"
		if err := s.Update(KeyOf(a), 10, true, observeChange(1, "e-1", "", 10)); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		r, _ := s.Load(KeyOf(a), 10)
		if r == nil || r.Session != KeyOf(a) {
			t.Fatalf("a %d-byte session ID is not tracked", n)
		}
		if r, _ := s.Load(KeyOf(b), 10); r != nil {
			t.Fatalf("%d-byte IDs differing in the last byte share a record", n)
		}
	}
}

// TestStoreKeysCarryTheLayout: max_sessions is part of every key, so a
// configuration that changes it starts a fresh table, never reads another
// layout's slots, and stays within its own bound.
func TestStoreKeysCarryTheLayout(t *testing.T) {
	f := newFakeShared()
	big := newStore(f, 1000, 3600)
	for i := 0; i < 500; i++ {
		big.Update(KeyOf(fmt.Sprint("s-", i)), 10, true, observeChange(1, "e-1", "", 10))
	}
	small := newStore(f, 10, 3600)
	if r, _ := small.Load(KeyOf("s-1"), 10); r != nil {
		t.Fatal("a store with another max_sessions read the old layout's record")
	}
	before := len(f.m)
	for i := 0; i < 500; i++ {
		small.Update(KeyOf(fmt.Sprint("t-", i)), 10, true, observeChange(1, "e-1", "", 10))
	}
	prefix := KeyPrefix + "10/"
	n := 0
	for k := range f.m {
		if strings.HasPrefix(k, prefix) {
			n++
		} else if !strings.HasPrefix(k, KeyPrefix+"1000/") {
			t.Fatalf("key %q outside both layouts", k)
		}
	}
	if n > 10 || len(f.m)-before != n {
		t.Fatalf("the 10-slot layout wrote %d keys (%d new keys in all)", n, len(f.m)-before)
	}
}

func TestStoreDelete(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	s.Update(KeyOf("s-77"), 10, true, observeChange(1, "e-1", "", 10))
	s.Update(KeyOf("s-78"), 10, true, observeChange(2, "e-2", "", 10))
	if err := s.Delete(KeyOf("s-77"), 11); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Load(KeyOf("s-77"), 12); r != nil {
		t.Fatalf("Load after Delete = %+v", r)
	}
	if r, _ := s.Load(KeyOf("s-78"), 12); r == nil {
		t.Fatal("Delete of s-77 lost s-78")
	}
	emptied := 0
	for _, e := range f.m {
		if bytes.Equal(e.value, EmptySlot) {
			emptied++
		}
	}
	if emptied != 1 {
		t.Errorf("%d slots hold EmptySlot, want 1", emptied)
	}
	// Deleting again, or an unknown session, writes nothing.
	sets := f.sets
	s.Delete(KeyOf("s-77"), 13)
	s.Delete(KeyOf("never"), 13)
	if f.sets != sets {
		t.Errorf("Delete of absent sessions wrote %d times", f.sets-sets)
	}
	// The freed slot is reused: a new Update with create recreates it.
	if err := s.Update(KeyOf("s-77"), 14, true, observeChange(3, "e-3", "", 14)); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Load(KeyOf("s-77"), 14)
	if r == nil || r.Created != 14 || len(r.Tails) != 1 || r.Tails[0].Stream != 3 {
		t.Fatalf("recreated record %+v, want a fresh one", r)
	}
}

func TestStoreTombstoneSurvivesUpdates(t *testing.T) {
	s := newStore(newFakeShared(), 100, 3600)
	s.Update(KeyOf("s-77"), 10, true, observeChange(1, "e-104", "e-103", 10))
	if err := s.Tombstone(KeyOf("s-77"), 11); err != nil {
		t.Fatal(err)
	}
	s.Update(KeyOf("s-77"), 12, false, observeChange(2, "e-105", "e-104", 12))
	r, _ := s.Load(KeyOf("s-77"), 13)
	if r == nil || !r.Tombstoned || len(r.Tails) != 2 {
		t.Fatalf("record %+v, want tombstoned with two tails", r)
	}
	if d := Decide(TransportHTTP, "http:e-105", r, Policy{}); d.Reason != ReasonTombstoned {
		t.Errorf("Decide on the stored tombstone = %v", d.Reason)
	}
	if d := Decide(TransportHTTP, "", r, Policy{}); d.Reason != ReasonTombstoned || d.Action != Reinit {
		t.Errorf("a request without a cursor on a tombstoned session: %+v", d)
	}
}

// TestStoreTombstoneWithoutRecord: a session is tombstoned whether or not the
// filter holds its watermarks, and the tombstone never touches the records.
func TestStoreTombstoneWithoutRecord(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	if err := s.Tombstone(KeyOf("s-none"), 10); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Load(KeyOf("s-none"), 10)
	if r == nil || !r.Tombstoned || len(r.Tails) != 0 {
		t.Fatalf("Load = %+v, want a bare tombstoned record", r)
	}
	for k := range f.m {
		if strings.Contains(k, "/s/") {
			t.Fatalf("tombstoning wrote a record slot %q", k)
		}
	}
	// Delete clears it.
	if err := s.Delete(KeyOf("s-none"), 11); err != nil {
		t.Fatal(err)
	}
	if dead, _ := s.Tombstoned(KeyOf("s-none"), 11); dead {
		t.Fatal("tombstone survived Delete")
	}
}

// countingShared counts the bytes Get returns.
type countingShared struct {
	*fakeShared
	bytes, maxValue int
}

func (c *countingShared) Get(key []byte) ([]byte, uint32, error) {
	v, cas, err := c.fakeShared.Get(key)
	c.bytes += len(v)
	c.maxValue = max(c.maxValue, len(v))
	return v, cas, err
}

// TestStoreTombstoneLookupCostIsBounded: asking about a session that was
// never tombstoned costs one shared-data read of at most MaxBucketBytes,
// whatever was written before — a miss on a fresh table, and still one
// bounded read after 3 × max_sessions tombstones (proxy-wasm 0.2.1 cannot
// delete a key, so a table of one key per tombstone fills up for good).
func TestStoreTombstoneLookupCostIsBounded(t *testing.T) {
	const slots = 1000
	c := &countingShared{fakeShared: newFakeShared()}
	s := newStore(c, slots, 3600)
	lookup := func(round string) {
		t.Helper()
		for i := 0; i < 500; i++ {
			c.gets, c.bytes = 0, 0
			dead, err := s.Tombstoned(KeyOf(fmt.Sprint("live-", i)), 10)
			if err != nil || dead {
				t.Fatalf("%s: live-%d: tombstoned %v, %v", round, i, dead, err)
			}
			if c.gets != 1 || c.bytes > MaxBucketBytes {
				t.Fatalf("%s: live-%d: %d reads of %d bytes, want 1 of at most %d", round, i, c.gets, c.bytes, MaxBucketBytes)
			}
		}
	}
	lookup("empty table")
	if c.maxValue != 0 {
		t.Fatalf("lookups on an empty table read %d bytes", c.maxValue)
	}
	for i := 0; i < 3*slots; i++ {
		if err := s.Tombstone(KeyOf(fmt.Sprint("dead-", i)), 10); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > int(s.buckets()) {
		t.Fatalf("%d tombstone keys for %d buckets", n, s.buckets())
	}
	lookup("after 3 × max_sessions tombstones")
	// The newest tombstones are all there; the table holds 2 × max_sessions.
	for i := 3*slots - 100; i < 3*slots; i++ {
		if dead, _ := s.Tombstoned(KeyOf(fmt.Sprint("dead-", i)), 10); !dead {
			t.Fatalf("dead-%d: a recent tombstone was lost", i)
		}
	}
	// A one-slot store has one bucket of eight: tombstones share it.
	one := newStore(newFakeShared(), 1, 3600)
	for _, id := range []string{"x", "y", "z"} {
		one.Tombstone(KeyOf(id), 10)
	}
	for _, id := range []string{"x", "y", "z"} {
		if dead, _ := one.Tombstoned(KeyOf(id), 10); !dead {
			t.Fatalf("%s: tombstone lost in a one-bucket table", id)
		}
	}
}

// TestStoreTombstoneBoundToPrincipal: a tombstone refuses only the principal
// whose request was refused; the owner's own tombstone survives other
// principals' attempts to fill the bucket, and Delete clears them all.
func TestStoreTombstoneBoundToPrincipal(t *testing.T) {
	s := newStore(newFakeShared(), 100, 3600)
	k := KeyOf("s-77")
	owner, other := PrincipalOf("Bearer owner"), PrincipalOf("Bearer mallory")
	s.Update(k, 10, true, owned(owner, observeChange(1, "e-104", "e-103", 10)))
	if err := s.TombstoneAs(k, other, 11); err != nil {
		t.Fatal(err)
	}
	if dead, _ := s.TombstonedAs(k, owner, 12); dead {
		t.Fatal("another principal's tombstone refuses the owner")
	}
	if dead, _ := s.TombstonedAs(k, other, 12); !dead {
		t.Fatal("the refused principal is not refused again")
	}
	r, known, _ := s.LoadAs(k, owner, 12)
	if r == nil || r.Tombstoned || !known {
		t.Fatalf("owner's Load: %+v known=%v, want the live record, not tombstoned", r, known)
	}
	if err := s.TombstoneAs(k, owner, 13); err != nil {
		t.Fatal(err)
	}
	// Many more principals: none of them is recorded, the owner stays dead.
	for i := 0; i < 3*bucketEntries; i++ {
		if err := s.TombstoneAs(k, PrincipalOf(fmt.Sprint("Bearer x-", i)), 14); err != nil {
			t.Fatal(err)
		}
	}
	if dead, _ := s.TombstonedAs(k, owner, 15); !dead {
		t.Fatal("other principals pushed the owner's tombstone out")
	}
	if dead, _ := s.TombstonedAs(k, PrincipalOf("Bearer x-3"), 15); dead {
		t.Fatal("a third principal was recorded")
	}
	r, _, _ = s.LoadAs(k, owner, 15)
	if d := Decide(TransportHTTP, "", r, Policy{}); d.Reason != ReasonTombstoned {
		t.Fatalf("owner after its own re-initialization: %+v", d)
	}
	if err := s.Delete(k, 16); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Principal{owner, other} {
		if dead, _ := s.TombstonedAs(k, p, 16); dead {
			t.Fatal("a tombstone survived Delete")
		}
	}
}

// owned wraps a record change so that it also sets the record's owner, as
// RecordTail does for a stream whose request had principal p.
func owned(p Principal, change func(*Record) bool) func(*Record) bool {
	return func(r *Record) bool {
		change(r)
		r.Owner, r.HasOwner = p, true
		return true
	}
}

// TestStoreKnown: LoadAs knows a session for a principal only from a record
// that principal owns or a tombstone of it for that principal, so a caller
// that writes only for known sessions writes nothing for a made-up session,
// nor for a real one asked about with other credentials.
func TestStoreKnown(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	a, b := PrincipalOf("a"), PrincipalOf("b")
	if _, known, _ := s.LoadAs(KeyOf("made-up"), a, 10); known {
		t.Fatal("a made-up session is known")
	}
	s.Update(KeyOf("unowned"), 10, true, observeChange(1, "e-1", "", 10))
	if _, known, _ := s.LoadAs(KeyOf("unowned"), NoPrincipal, 11); known {
		t.Fatal("a record of an earlier build (no owner) makes its session known")
	}
	s.Update(KeyOf("real"), 10, true, owned(a, observeChange(1, "e-1", "", 10)))
	if _, known, _ := s.LoadAs(KeyOf("real"), a, 11); !known {
		t.Fatal("a session is not known to its owner")
	}
	if _, known, _ := s.LoadAs(KeyOf("real"), b, 11); known {
		t.Fatal("a session is known to another principal")
	}
	s.TombstoneAs(KeyOf("real"), a, 11)
	s.Delete(KeyOf("real"), 12) // the record goes, and its tombstones
	s.TombstoneAs(KeyOf("gone"), a, 12)
	if _, known, _ := s.LoadAs(KeyOf("gone"), a, 13); !known {
		t.Fatal("a session tombstoned for a is not known to a")
	}
	if _, known, _ := s.LoadAs(KeyOf("gone"), b, 13); known {
		t.Fatal("a session tombstoned for a is known to b")
	}
}

// TestEndStreamSetsOwner: the end of a stream whose tail is in the record
// makes the stream's principal the record's owner (acknowledging it when
// asked), the owner survives encoding, and a stream whose tail is not there
// changes nothing.
func TestEndStreamSetsOwner(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 100, 3600)
	owner := PrincipalOf("Bearer owner")
	var tl StreamTail
	tl.Reset(7, TransportHTTP)
	tl.Add([]byte("e-1"), KindResponse)
	if err := s.RecordTail(KeyOf("s"), &tl, Policy{}, 10); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Load(KeyOf("s"), 10); r == nil || r.HasOwner {
		t.Fatalf("record %+v owned before its stream ended", r)
	}
	sets := f.sets
	if err := s.EndStream(KeyOf("s"), 99, true, PrincipalOf("Bearer other"), 11); err != nil || f.sets != sets {
		t.Fatalf("the end of a stream without a tail here wrote (%v)", err)
	}
	if err := s.EndStream(KeyOf("s"), 7, false, owner, 11); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Load(KeyOf("s"), 11)
	if r == nil || !r.HasOwner || r.Owner != owner || r.Tails[0].Acked {
		t.Fatalf("record %+v after a cut stream ended, want owned and unacknowledged", r)
	}
	if _, known, _ := s.LoadAs(KeyOf("s"), owner, 11); !known {
		t.Fatal("the owner does not know its session")
	}
	enc := r.AppendEncode(nil)
	var back Record
	// encodedLen counts the updated time and each stream nonce at their
	// largest varint (5 bytes): exact but for that slack.
	slack := 5 - uvarintLen(uint64(r.Updated))
	for _, tl := range r.Tails {
		slack += 5 - uvarintLen(uint64(tl.Stream))
	}
	if ok, _, err := back.DecodeInto(enc, nil); !ok || err != nil || !back.HasOwner || back.Owner != r.Owner || len(enc)+slack != r.encodedLen() {
		t.Fatalf("owner round trip: %+v %v %v (len %d + slack %d, encodedLen %d)", back, ok, err, len(enc), slack, r.encodedLen())
	}
	sets = f.sets
	if err := s.EndStream(KeyOf("s"), 7, false, owner, 12); err != nil || f.sets != sets {
		t.Fatalf("an end that changes nothing wrote (%v)", err)
	}
	if err := s.EndStream(KeyOf("s"), 7, true, owner, 12); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Load(KeyOf("s"), 12); !r.Tails[0].Acked {
		t.Fatal("EndStream did not acknowledge")
	}
}

func TestStoreTTL(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 1, 60) // one slot: every session competes for it
	s.Update(KeyOf("old"), 1000, true, observeChange(1, "e-1", "", 1000))
	if r, _ := s.Load(KeyOf("old"), 1060); r == nil {
		t.Fatal("record invisible at exactly TTL")
	}
	if r, _ := s.Load(KeyOf("old"), 1061); r != nil {
		t.Fatalf("record older than TTL is visible: %+v", r)
	}
	// An expired record does not come back with create=false...
	called := false
	s.Update(KeyOf("old"), 1061, false, func(*Record) bool { called = true; return true })
	if called {
		t.Error("Update(create=false) saw an expired record")
	}
	// ...and with create=true it starts afresh, not from the stale tails.
	s.Update(KeyOf("old"), 1062, true, func(r *Record) bool {
		if len(r.Tails) != 0 || r.Created != 1062 {
			t.Errorf("Update(create=true) on an expired record got %+v", r)
		}
		return false
	})
	// Its slot is reused by a new session.
	if err := s.Update(KeyOf("new"), 1062, true, observeChange(2, "e-2", "", 1062)); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Load(KeyOf("new"), 1062); r == nil {
		t.Fatal("new session not stored in the expired slot")
	}
	if len(f.m) != 1 {
		t.Fatalf("%d record keys with Slots=1", len(f.m))
	}
	// An expired tombstone is gone too: a session is tombstoned for its TTL.
	s.Tombstone(KeyOf("new"), 1063)
	if dead, _ := s.Tombstoned(KeyOf("new"), 1063+60); !dead {
		t.Fatal("tombstone gone before its TTL")
	}
	if dead, _ := s.Tombstoned(KeyOf("new"), 1063+60+1); dead {
		t.Fatal("tombstone outlived its TTL")
	}
}

func TestStoreCorruptSlotIsFree(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 1, 60)
	f.Set(s.slotKey(nil, tableRecords, 0), []byte("not a record"), 0)
	if r, err := s.Load(KeyOf("s"), 10); r != nil || err != nil {
		t.Fatalf("Load over a corrupt slot = %+v, %v", r, err)
	}
	if err := s.Update(KeyOf("s"), 10, true, observeChange(1, "e-1", "", 10)); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Load(KeyOf("s"), 10); r == nil {
		t.Fatal("corrupt slot was not reused")
	}
}

// TestStoreChoosesSlot: a new session takes a free candidate slot before
// evicting, and evicts the least recently updated occupant.
func TestStoreChoosesSlot(t *testing.T) {
	const slots = 64
	s := newStore(newFakeShared(), slots, 3600)
	// Find three sessions with the same two candidate slots.
	byPair := map[[2]uint32][]string{}
	var trio []string
	for i := 0; trio == nil; i++ {
		name := fmt.Sprint("session-", i)
		a, b := s.candidates(KeyOf(name))
		if a == b {
			t.Fatalf("candidates(%q) = %d, %d: the same slot twice with %d slots", name, a, b, slots)
		}
		k := [2]uint32{min(a, b), max(a, b)}
		byPair[k] = append(byPair[k], name)
		if len(byPair[k]) == 3 {
			trio = byPair[k]
		}
	}
	x, y, z := trio[0], trio[1], trio[2]
	s.Update(KeyOf(x), 100, true, observeChange(1, "x", "", 100))
	s.Update(KeyOf(y), 50, true, observeChange(2, "y", "", 50)) // must take the other, free slot
	if rx, _ := s.Load(KeyOf(x), 100); rx == nil {
		t.Fatal("second session evicted the first although a slot was free")
	}
	if ry, _ := s.Load(KeyOf(y), 100); ry == nil {
		t.Fatal("second session not stored")
	}
	s.Update(KeyOf(z), 101, true, observeChange(3, "z", "", 101)) // evicts y, older than x
	if ry, _ := s.Load(KeyOf(y), 101); ry != nil {
		t.Error("the least recently updated session was not the one evicted")
	}
	if rx, _ := s.Load(KeyOf(x), 101); rx == nil {
		t.Error("the more recently updated session was evicted")
	}
	if rz, _ := s.Load(KeyOf(z), 101); rz == nil {
		t.Error("third session not stored")
	}
}

func TestStoreCandidatesSpread(t *testing.T) {
	s := newStore(nil, 1000, 1)
	used := map[uint32]bool{}
	for i := 0; i < 5000; i++ {
		a, b := s.candidates(KeyOf(fmt.Sprint("s-", i)))
		if a >= 1000 || b >= 1000 {
			t.Fatalf("candidate out of range: %d, %d", a, b)
		}
		used[a], used[b] = true, true
	}
	if len(used) < 990 {
		t.Errorf("5000 sessions use only %d of 1000 slots", len(used))
	}
	one := newStore(nil, 1, 1)
	if a, b := one.candidates(KeyOf("x")); a != 0 || b != 0 {
		t.Errorf("Slots=1: candidates %d, %d", a, b)
	}
	// A zero Slots (a Store built without configuration) acts as one slot
	// instead of dividing by zero inside a host callback.
	f := newFakeShared()
	zero := &Store{Data: f, TTL: 10}
	if err := zero.Update(KeyOf("x"), 1, true, observeChange(1, "e-1", "", 1)); err != nil {
		t.Fatal(err)
	}
	if r, _ := zero.Load(KeyOf("x"), 1); r == nil || len(f.m) != 1 {
		t.Errorf("Slots=0: record %v, %d keys", r, len(f.m))
	}
}

// TestStoreBoundedUnderChurn: shared data never holds more than Slots keys,
// whatever the number of sessions.
func TestStoreBoundedUnderChurn(t *testing.T) {
	const sessions, slots = 100_000, 1000
	f := newFakeShared()
	s := newStore(f, slots, 3600)
	for i := 0; i < sessions; i++ {
		now := uint32(1_000_000 + i/100)
		if err := s.Update(KeyOf(fmt.Sprint("churn-", i)), now, true, observeChange(uint32(i), "e-1", "", now)); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	if f.maxKeys > slots {
		t.Fatalf("shared data held %d keys, more than Slots=%d", f.maxKeys, slots)
	}
	for k := range f.m {
		if !strings.HasPrefix(k, KeyPrefix) {
			t.Fatalf("key %q lacks the prefix", k)
		}
	}
	const last = 1_000_000 + sessions/100
	live := 0
	for i := 0; i < sessions; i++ {
		if r, _ := s.Load(KeyOf(fmt.Sprint("churn-", i)), last); r != nil {
			live++
			if r.Session != KeyOf(fmt.Sprint("churn-", i)) {
				t.Fatalf("Load(churn-%d) returned another session's record", i)
			}
		}
	}
	if live > slots {
		t.Fatalf("%d sessions load, more than Slots=%d", live, slots)
	}
	if r, _ := s.Load(KeyOf(fmt.Sprint("churn-", sessions-1)), last); r == nil {
		t.Fatal("the newest session was evicted")
	}
	if r, _ := s.Load(KeyOf("churn-0"), last); r != nil {
		t.Fatal("the oldest session survived 100,000 newer ones")
	}
	if live < slots/2 {
		t.Errorf("only %d of %d slots hold a live session after churn", live, slots)
	}
	t.Logf("%d sessions through %d slots: %d keys, %d still loadable", sessions, slots, len(f.m), live)
}

// racingShared lets a second worker write between the first worker's read
// and its write, once.
type racingShared struct {
	SharedData
	before func()
}

func (r *racingShared) Set(key, value []byte, cas uint32) error {
	if f := r.before; f != nil {
		r.before = nil
		f()
	}
	return r.SharedData.Set(key, value, cas)
}

// TestStoreConcurrentWriterNoLostUpdate: worker A reads the record, worker B
// writes it first, A's CAS fails and A's retry merges into B's record.
func TestStoreConcurrentWriterNoLostUpdate(t *testing.T) {
	f := newFakeShared()
	seed := newStore(f, 100, 3600)
	if err := seed.Update(KeyOf("s-77"), 10, true, observeChange(1, "e-100", "", 10)); err != nil {
		t.Fatal(err)
	}

	workerB := newStore(f, 100, 3600)
	race := &racingShared{SharedData: f}
	race.before = func() {
		if err := workerB.Update(KeyOf("s-77"), 11, false, observeChange(2, "e-200", "e-199", 11)); err != nil {
			t.Errorf("worker B: %v", err)
		}
	}
	workerA := newStore(race, 100, 3600)
	calls := 0
	err := workerA.Update(KeyOf("s-77"), 12, false, func(r *Record) bool {
		calls++
		r.Observe(3, TransportSSE, "e-300", "e-299", KindResponse, 12, Policy{})
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("change applied %d times, want 2 (first attempt, retry)", calls)
	}
	r, _ := seed.Load(KeyOf("s-77"), 13)
	if r == nil {
		t.Fatal("record lost")
	}
	streams := map[uint32]bool{}
	for _, tl := range r.Tails {
		streams[tl.Stream] = true
	}
	if !streams[1] || !streams[2] || !streams[3] {
		t.Fatalf("lost update: tails %+v, want streams 1, 2 and 3", r.Tails)
	}
	if r.Tails[0].Stream != 3 {
		t.Errorf("newest tail is stream %d, want A's stream 3", r.Tails[0].Stream)
	}
	if n := workerA.TakeConflicts(); n != 1 {
		t.Errorf("TakeConflicts = %d, want 1", n)
	}
	if n := workerA.TakeConflicts(); n != 0 {
		t.Errorf("TakeConflicts did not reset: %d", n)
	}
	if n := workerB.TakeConflicts(); n != 0 {
		t.Errorf("worker B saw %d conflicts, want 0", n)
	}
}

// TestStoreConcurrentDelete: a Delete that loses a race retries.
func TestStoreConcurrentDelete(t *testing.T) {
	f := newFakeShared()
	seed := newStore(f, 100, 3600)
	seed.Update(KeyOf("s-77"), 10, true, observeChange(1, "e-1", "", 10))
	race := &racingShared{SharedData: f}
	race.before = func() { seed.Update(KeyOf("s-77"), 11, false, observeChange(2, "e-2", "", 11)) }
	a := newStore(race, 100, 3600)
	if err := a.Delete(KeyOf("s-77"), 12); err != nil {
		t.Fatal(err)
	}
	if r, _ := seed.Load(KeyOf("s-77"), 12); r != nil {
		t.Fatalf("record survived a Delete that raced an update: %+v", r)
	}
	if n := a.TakeConflicts(); n != 1 {
		t.Errorf("TakeConflicts = %d, want 1", n)
	}
}

// contendedShared changes the value under every conditional write, so every
// CAS fails.
type contendedShared struct {
	*fakeShared
}

func (c contendedShared) Set(key, value []byte, cas uint32) error {
	if cas != 0 {
		if e, ok := c.m[string(key)]; ok {
			c.fakeShared.Set(key, e.value, 0) // another worker rewrites it
		}
	}
	return c.fakeShared.Set(key, value, cas)
}

func TestStoreContentionExhausted(t *testing.T) {
	f := newFakeShared()
	seed := newStore(f, 100, 3600)
	seed.Update(KeyOf("s-77"), 10, true, observeChange(1, "e-1", "", 10))
	before, _, _ := f.Get(seed.slotKey(nil, tableRecords, firstSlot(seed, "s-77", f)))

	s := newStore(contendedShared{f}, 100, 3600)
	calls := 0
	err := s.Update(KeyOf("s-77"), 11, false, func(r *Record) bool { calls++; r.Ack(1, 11); return true })
	if !errors.Is(err, ErrContention) {
		t.Fatalf("Update under endless contention: %v, want ErrContention", err)
	}
	if calls != maxCASAttempts {
		t.Errorf("change applied %d times, want %d", calls, maxCASAttempts)
	}
	if n := s.TakeConflicts(); n != maxCASAttempts {
		t.Errorf("TakeConflicts = %d, want %d", n, maxCASAttempts)
	}
	after, _, _ := f.Get(seed.slotKey(nil, tableRecords, firstSlot(seed, "s-77", f)))
	if !bytes.Equal(before, after) {
		t.Error("a failed Update changed the record")
	}

	if err := s.Delete(KeyOf("s-77"), 12); !errors.Is(err, ErrContention) {
		t.Errorf("Delete under endless contention: %v, want ErrContention", err)
	}
	if r, _ := seed.Load(KeyOf("s-77"), 12); r == nil {
		t.Error("a failed Delete removed the record")
	}
}

// firstSlot returns the slot that holds session.
func firstSlot(s *Store, session string, f *fakeShared) uint32 {
	a, b := s.candidates(KeyOf(session))
	if e, ok := f.m[string(s.slotKey(nil, tableRecords, a))]; ok {
		if r, ok, _ := Decode(e.value); ok && r.Session == KeyOf(session) {
			return a
		}
	}
	return b
}

// failingShared fails every call with a host error.
type failingShared struct{}

var errHost = errors.New("host: internal failure")

func (failingShared) Get([]byte) ([]byte, uint32, error) { return nil, 0, errHost }
func (failingShared) Set([]byte, []byte, uint32) error   { return errHost }

func TestStoreHostErrors(t *testing.T) {
	s := newStore(failingShared{}, 10, 10)
	if _, err := s.Load(KeyOf("s"), 1); !errors.Is(err, errHost) {
		t.Errorf("Load: %v", err)
	}
	if err := s.Update(KeyOf("s"), 1, true, observeChange(1, "e", "", 1)); !errors.Is(err, errHost) {
		t.Errorf("Update: %v", err)
	}
	if err := s.Delete(KeyOf("s"), 1); !errors.Is(err, errHost) {
		t.Errorf("Delete: %v", err)
	}
}

// TestCursorImportsNoSDK: the pure core must build and be tested without the
// proxy-wasm SDK.
func TestCursorImportsNoSDK(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	self := false
	for _, d := range deps {
		if strings.Contains(d, "proxy-wasm") || strings.Contains(d, "proxywasm") {
			t.Errorf("cursor depends on %s", d)
		}
		if strings.HasSuffix(d, "/cursor") {
			self = true
		}
	}
	if !self {
		t.Fatalf("go list -deps did not list the cursor package itself:\n%s", out)
	}
}

// TestStoreSeedAcrossWorkers: the watermark one worker writes while sending
// e-104 is what another worker sees when the client resumes a moment later.
func TestStoreSeedAcrossWorkers(t *testing.T) {
	f := newFakeShared()
	w1, w2 := newStore(f, 10000, 3600), newStore(f, 10000, 3600)
	prev := ""
	for i, id := range []string{"e-100", "e-101", "e-102", "e-103", "e-104"} {
		kind := KindNotification
		if id == "e-104" {
			kind = KindResponse
		}
		if err := w1.Update(KeyOf("s-77"), now+uint32(i), true, func(r *Record) bool {
			r.Observe(1, TransportSSE, id, prev, kind, now+uint32(i), Policy{})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		prev = id
	}
	// The idle timeout cuts the stream: no Ack. The client resumes at the
	// Streamable HTTP endpoint, served by the other worker.
	r, err := w2.Load(KeyOf("s-77"), now+10)
	if err != nil || r == nil {
		t.Fatalf("worker 2 Load = %v, %v", r, err)
	}
	if d := Decide(TransportHTTP, "sse:e-104", r, Policy{}); d.Action != Reinit || d.Reason != ReasonCrossTransport {
		t.Fatalf("resume on http: %+v, want Reinit cross_transport", d)
	}
	if d := Decide(TransportSSE, "sse:e-104", r, Policy{}); d.Action != Reinit || d.Reason != ReasonDrainRace {
		t.Fatalf("resume on sse: %+v, want Reinit drain_race", d)
	}
	// Worker 2 tombstones the session; worker 1 then refuses it too.
	if err := w2.Tombstone(KeyOf("s-77"), now+11); err != nil {
		t.Fatal(err)
	}
	r, _ = w1.Load(KeyOf("s-77"), now+12)
	if d := Decide(TransportHTTP, "http:e-1", r, Policy{}); d.Reason != ReasonTombstoned {
		t.Fatalf("after tombstone: %+v", d)
	}
}

// reusedShared is shared data whose Get answers in one buffer that every Get
// overwrites, as host memory that the ABI glue reuses is: a record Load
// returned must not depend on it.
type reusedShared struct {
	*fakeShared
	buf []byte
}

func (r *reusedShared) Get(key []byte) ([]byte, uint32, error) {
	e, ok := r.m[string(key)]
	if !ok {
		return nil, 0, ErrNotFound
	}
	clear(r.buf[:cap(r.buf)])
	r.buf = append(r.buf[:0], e.value...)
	return r.buf, e.cas, nil
}

// TestStoreLoadOwnsItsRecord: the record Load returns lives in the Store's
// own scratch memory, not in the value shared data returned (which the next
// host call may overwrite), Tombstone after Load leaves it intact, and once
// the scratch buffers exist Load allocates nothing.
func TestStoreLoadOwnsItsRecord(t *testing.T) {
	rs := &reusedShared{fakeShared: newFakeShared(), buf: make([]byte, 0, 1024)}
	s := newStore(rs, 100, 3600)
	a, b := KeyOf("s-a"), KeyOf("s-b")
	for i, k := range []SessionKey{a, b} {
		for j := range MaxTails {
			last := id64("e-", 100*i+j+1)
			if err := s.Update(k, 10, true, observeChange(uint32(j+1), last, last[:len(last)-1]+"x", 10)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, _ := s.Load(a, 11)
	if want == nil || len(want.Tails) != MaxTails {
		t.Fatalf("Load = %+v", want)
	}
	wantCopy := *want
	wantCopy.Tails = append([]Tail(nil), want.Tails...)
	for i := range wantCopy.Tails {
		wantCopy.Tails[i].LastID = strings.Clone(want.Tails[i].LastID)
		wantCopy.Tails[i].PrevID = strings.Clone(want.Tails[i].PrevID)
	}

	got, _ := s.Load(a, 11)
	for k := range rs.m { // other host reads reuse the buffer
		if _, _, err := rs.Get([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Tombstone(b, 11); err != nil {
		t.Fatal(err)
	}
	if !recordsEqual(*got, wantCopy) {
		t.Fatalf("the loaded record changed after other host reads:\n got %+v\nwant %+v", *got, wantCopy)
	}

	if n := testing.AllocsPerRun(100, func() {
		if r, _ := s.Load(a, 11); r == nil {
			t.Fatal("record gone")
		}
	}); n != 0 {
		t.Errorf("Load makes %v heap allocations, want 0", n)
	}
}

// TestIsNotFound: the sentinel itself and a wrapped one are a miss; another
// error with the same text, and no error, are not.
func TestIsNotFound(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{ErrNotFound, true},
		{fmt.Errorf("host: %w", ErrNotFound), true},
		{errors.New(ErrNotFound.Error()), false},
		{ErrCASMismatch, false},
		{nil, false},
	} {
		if got := isNotFound(c.err); got != c.want {
			t.Errorf("isNotFound(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestStoreUpdateReadsOneSlotWhenTheFirstHoldsTheSession: writing a tail of
// a session whose record sits in its first candidate slot reads that slot
// alone; one in its second reads both; either way the record is updated.
func TestStoreUpdateReadsOneSlotWhenTheFirstHoldsTheSession(t *testing.T) {
	f := newFakeShared()
	s := newStore(f, 64, 3600)
	p := Policy{}
	inFirst, inSecond := 0, 0
	for i := range 200 { // 200 sessions in 64 slots: many land in their second
		k := KeyOf(fmt.Sprint("s-", i))
		var tl StreamTail
		tl.Reset(1, TransportHTTP)
		tl.Add([]byte("e-1"), KindResponse)
		if err := s.RecordTail(k, &tl, p, 10); err != nil {
			t.Fatal(err)
		}
		a, _ := s.candidates(k)
		v, _, err := f.Get(s.slotKey(nil, tableRecords, a))
		first := err == nil && func() bool { r, ok, _ := Decode(v); return ok && r.Session == k }()
		tl.Add([]byte("e-2"), KindResponse)
		f.gets = 0
		if err := s.RecordTail(k, &tl, p, 11); err != nil {
			t.Fatal(err)
		}
		reads, want := f.gets, 2
		if first {
			want, inFirst = 1, inFirst+1
		} else {
			inSecond++
		}
		if reads != want {
			t.Fatalf("s-%d (first slot %v): the second tail read %d slots, want %d", i, first, reads, want)
		}
		if rec, _ := s.Load(k, 11); rec == nil || rec.Tails[0].LastID != "e-2" {
			t.Fatalf("s-%d: record after the second tail %+v, want last ID e-2", i, rec)
		}
	}
	if inFirst == 0 || inSecond == 0 {
		t.Fatalf("%d sessions in their first slot, %d in their second: both cases must occur", inFirst, inSecond)
	}
}

// TestSlotKeysReuseTheirBuffer checks the key of a slot and of a bucket as
// slotKey builds them into a reused buffer: the table's prefix, then the
// index in decimal, whatever the key the buffer held before.
func TestSlotKeysReuseTheirBuffer(t *testing.T) {
	s := &Store{Slots: 100000}
	var buf []byte
	for _, c := range []struct {
		t table
		i uint32
	}{{tableRecords, 0}, {tableRecords, 99999}, {tableRecords, 7}, {tableTombstones, 4294967295}, {tableTombstones, 10}, {tableRecords, 100}} {
		buf = s.slotKey(buf, c.t, c.i)
		want := fmt.Sprintf("%s100000/%c/%d", KeyPrefix, c.t, c.i)
		if string(buf) != want {
			t.Fatalf("slotKey(%c, %d) = %q, want %q", c.t, c.i, buf, want)
		}
	}
}
