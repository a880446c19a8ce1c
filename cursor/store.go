package cursor

import (
	"bytes"
	"errors"
	"strconv"
)

// SharedData is the part of proxy-wasm shared data the store needs, with the
// host's semantics: Get returns the value and its CAS token (ErrNotFound for a
// missing key); Set with cas 0 writes unconditionally, a non-zero cas that is
// no longer current fails with ErrCASMismatch.
type SharedData interface {
	Get(key []byte) (value []byte, cas uint32, err error)
	Set(key, value []byte, cas uint32) error
}

// Errors a SharedData implementation returns.
var (
	ErrNotFound    error = notFoundError{}
	ErrCASMismatch       = errors.New("cursor: shared data CAS mismatch")
	// ErrContention is returned when a record could not be updated within
	// the retry budget (maxCASAttempts) because other workers kept changing
	// it.
	ErrContention = errors.New("cursor: watermark record kept changing under concurrent updates; gave up after " +
		strconv.Itoa(maxCASAttempts) + " attempts")
)

// KeyPrefix starts every shared-data key the plugin writes. Istio gives all
// plugins one shared-data namespace, so the prefix keeps them apart. The full
// keys are
//
//	mcp-resume-guard/v2/<max_sessions>/s/<slot>     watermark records
//	mcp-resume-guard/v2/<max_sessions>/b/<bucket>   tombstone buckets (tombstone.go)
//
// The layout version and max_sessions are part of every key: a configuration
// that changes max_sessions (the VM and its shared data stay) starts a fresh
// table of exactly max_sessions slots instead of mapping sessions onto slots
// another layout wrote, and never reads slots beyond its own bound.
const KeyPrefix = "mcp-resume-guard/v2/"

const maxCASAttempts = 16

// Store keeps watermark records in a fixed table of Slots shared-data slots
// and tombstones in ceil(Slots/4) buckets, so shared data never holds more
// than 1.25×Slots keys whatever the session churn. A session may live in two slots of a
// table (two-choice hashing on its SessionKey); a new session takes a free or
// expired one, else evicts the least recently updated of the two. Every
// change is a read-modify-write with compare-and-swap, retried.
//
// A Store is used by one worker VM at a time; it holds scratch buffers and is
// not safe for concurrent use. The records it decodes live in those buffers
// (see Load): decoding a slot allocates nothing once they have grown.
type Store struct {
	Data  SharedData
	Slots uint32 // max_sessions
	TTL   uint32 // session_ttl_seconds

	conflicts int        // CAS mismatches retried since the last TakeConflicts
	prefix    []byte     // KeyPrefix + Slots + "/", the start of every key, built on first use
	buf       []byte     // scratch for encoding records
	keys      [2][]byte  // scratch for the keys of a session's two slots
	bucketKey []byte     // scratch for the key of its tombstone bucket
	recs      [2]decoded // scratch records of a session's two slots
	tombs     Tombstones // scratch of TombstonesOf
}

// decoded is a record decoded into scratch memory the Store reuses: the
// tails' backing array, and the bytes of their IDs, which are views of text.
type decoded struct {
	rec  Record
	text []byte
}

// decodedTextBytes bounds the ID bytes of one record: each tail's last ID and
// its previous ID rebuilt from the shared prefix.
const decodedTextBytes = MaxTails * 2 * MaxEventIDBytes

// table names one of the Store's two slot tables in keys.
type table byte

const (
	tableRecords table = 's'
	// tableTombstones holds tombstone buckets. Earlier builds kept one
	// tombstone per slot under 't'; the buckets have a letter of their own
	// so that two builds sharing one process (a plugin upgrade keeps the
	// VM's shared data) never read each other's values.
	tableTombstones table = 'b'
)

// slot is one candidate slot as read from shared data.
type slot struct {
	key     []byte
	cas     uint32
	rec     *Record // the candidate's scratch record, meaningful when filled
	filled  bool
	missing bool // the key has never been written: a write ignores cas
}

// TakeConflicts returns the number of CAS conflicts since the last call and
// resets it.
func (s *Store) TakeConflicts() int {
	n := s.conflicts
	s.conflicts = 0
	return n
}

// candidates returns the two slot indexes of session k.
func (s *Store) candidates(k SessionKey) (uint32, uint32) {
	n := max(uint64(s.Slots), 1) // a zero Store must not divide by zero
	a := uint32(k.lo() % n)
	b := uint32(k.hi() % n)
	if b == a && n > 1 {
		b = (a + 1) % uint32(n)
	}
	return a, b
}

// slotKey builds the key of slot i of table t in dst, which is nil or a key
// slotKey built before: when dst holds a key of the same table, its prefix
// is kept and only the digits are written again.
func (s *Store) slotKey(dst []byte, t table, i uint32) []byte {
	if s.prefix == nil {
		s.prefix = strconv.AppendUint([]byte(KeyPrefix), uint64(s.Slots), 10)
		s.prefix = append(s.prefix, '/')
	}
	n := len(s.prefix) + 2
	if len(dst) < n || dst[n-2] != byte(t) {
		dst = append(append(dst[:0], s.prefix...), byte(t), '/')
	}
	return appendUint32(dst[:n], i)
}

// appendUint32 appends the decimal form of v to dst, the digits written in
// place (strconv.AppendUint formats into a buffer of its own and copies it:
// this runs on every shared-data read).
func appendUint32(dst []byte, v uint32) []byte {
	n := 1
	for x := v; x >= 10; x /= 10 {
		n++
	}
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst, make([]byte, n)...) // a key buffer's first use
	}
	dst = dst[:l+n]
	for i := l + n - 1; i >= l; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// get reads slot i of table t with its key built in *key (a scratch buffer
// that serves one table: the records' two candidates, the tombstone
// buckets), where the caller finds it, valid until the next read through
// that buffer.
func (s *Store) get(key *[]byte, t table, i uint32) ([]byte, uint32, error) {
	*key = s.slotKey(*key, t, i)
	return s.Data.Get(*key)
}

// read reads record slot i as candidate c, decoding it into the scratch
// record of candidate c (valid until the next decode of that candidate).
func (s *Store) read(c int, i uint32, now uint32) (slot, error) {
	v, cas, err := s.get(&s.keys[c], tableRecords, i)
	sl := slot{key: s.keys[c], rec: s.scratch(c)}
	switch {
	case isNotFound(err):
		sl.missing = true
		return sl, nil
	case err != nil:
		return sl, err
	}
	sl.cas = cas
	ok, derr := s.decode(c, v)
	sl.filled = derr == nil && ok && !sl.rec.Expired(now, s.TTL)
	return sl, nil
}

// decode decodes value v into the scratch record of candidate c, whose
// buffers the caller made (scratch). The IDs are copied into the
// candidate's own buffer first, so they outlive v (host memory may be
// reused by the next host call) until the next decode of c.
func (s *Store) decode(c int, v []byte) (ok bool, err error) {
	d := &s.recs[c]
	ok, d.text, err = d.rec.DecodeInto(v, d.text[:0])
	return
}

// scratch returns the scratch record of candidate c, its buffers made on
// first use.
func (s *Store) scratch(c int) *Record {
	d := &s.recs[c]
	if d.text == nil {
		d.rec.Tails = make([]Tail, 0, MaxTails+1) // +1: Observe appends before it evicts
		d.text = make([]byte, 0, decodedTextBytes)
	}
	return &d.rec
}

// stillOurs reports whether key still holds the value just written from
// s.buf.
func (s *Store) stillOurs(key []byte) bool {
	v, _, err := s.Data.Get(key)
	return err == nil && bytes.Equal(v, s.buf)
}

// LoadAs returns the live record of session k, or nil when there is none. A
// session tombstoned for principal p is returned with Tombstoned set (and no
// tails when it has no record), so that the decision refuses it.
//
// known reports whether the upstream is known to have served the session
// to principal p here: a live record of it whose owner is p (the guard
// writes records only from event streams the upstream served, and records
// the principal of the stream's request: Record.Owner), or a tombstone of
// it for p (written only when that held). The caller tombstones only known
// sessions, so neither a request with a made-up session ID nor one with a
// real session ID and other credentials writes anything to shared data,
// however it is judged: a flood of refused requests cannot evict a record or
// a tombstone, nor fill a session's tombstones before its owner. Knowing
// costs nothing more: the reads are the ones the decision needs anyway.
//
// The record belongs to the Store, and so do its tails and the bytes of
// their IDs: it is valid only until the next call of any method of s, which
// may decode another record into the same memory. A caller that keeps the
// record, a tail or an ID beyond that copies it (strings.Clone). Loading
// allocates nothing once the Store's scratch buffers exist.
func (s *Store) LoadAs(k SessionKey, p Principal, now uint32) (rec *Record, known bool, err error) {
	ts, err := s.TombstonesOf(k)
	if err != nil {
		return nil, false, err
	}
	until, found := ts.Until(p) // found: a tombstone of p, live or expired
	dead := found && until >= now
	a, b := s.candidates(k)
	for c, i := range [2]uint32{a, b} {
		sl, err := s.read(c, i, now)
		if err != nil {
			return nil, false, err
		}
		if sl.filled && sl.rec.Session == k {
			sl.rec.Tombstoned = dead
			return sl.rec, found || sl.rec.HasOwner && sl.rec.Owner == p, nil
		}
	}
	if dead {
		r := s.scratch(0)
		*r = Record{Session: k, Tombstoned: true, Tails: r.Tails[:0]}
		return r, true, nil
	}
	return nil, found, nil
}

// Update applies change to the record of session k and writes it back with
// compare-and-swap, retrying when another worker changed the slot meanwhile.
// change receives the live record (or a fresh one with Session and Created
// set, when create is true and there is none) and reports whether it changed
// anything worth writing. With create false and no live record, Update does
// nothing; a fresh record that change leaves unchanged is never written.
func (s *Store) Update(k SessionKey, now uint32, create bool, change func(*Record) bool) error {
	a, b := s.candidates(k)
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		sa, err := s.read(0, a, now)
		if err != nil {
			return err
		}
		target := &sa
		// A session found in its first slot needs no look at the other:
		// it cannot change the outcome.
		if !sa.filled || sa.rec.Session != k {
			sb, err := s.read(1, b, now)
			if err != nil {
				return err
			}
			switch {
			case sb.filled && sb.rec.Session == k:
				target = &sb
			case !create:
				return nil
			default:
				// A new session: a free or expired slot, else evict the
				// least recently updated occupant.
				if sa.filled && (!sb.filled || sb.rec.Updated < sa.rec.Updated) {
					target = &sb
				}
				*target.rec = Record{Session: k, Created: now, Updated: now, Tails: target.rec.Tails[:0]}
			}
		}
		if !change(target.rec) {
			return nil
		}
		s.buf = target.rec.AppendEncode(s.buf[:0])
		if err := s.write(target.key, target.cas, target.missing); err != errRetry {
			return err
		}
	}
	return ErrContention
}

// notFoundError is ErrNotFound's type: a type of its own, so that
// isNotFound recognises the sentinel itself, which a SharedData returns as
// it is on every miss, by a type assertion, and a wrapped one by errors.Is.
type notFoundError struct{}

func (notFoundError) Error() string { return "cursor: shared data key not found" }

// isNotFound reports whether err is ErrNotFound or wraps it.
func isNotFound(err error) bool {
	_, ok := err.(notFoundError)
	return ok || err != nil && errors.Is(err, ErrNotFound)
}

// errRetry tells a read-modify-write loop that its write lost to another
// worker's and must start over.
var errRetry = errors.New("cursor: retry")

// write stores s.buf under key with cas, and returns errRetry when another
// worker's write won (a CAS conflict, counted).
func (s *Store) write(key []byte, cas uint32, missing bool) error {
	err := s.Data.Set(key, s.buf, cas)
	if errors.Is(err, ErrCASMismatch) {
		s.conflicts++
		return errRetry
	}
	if err == nil && missing && !s.stillOurs(key) {
		// Proxy-wasm 0.2.1 ignores cas when a key does not exist yet, so
		// two workers creating the same slot both "succeed". Read back: if
		// another worker's value replaced ours, merge into it like after a
		// CAS conflict. (A worker that overwrites ours after this check
		// still wins; this narrows the window, it cannot close it.)
		s.conflicts++
		return errRetry
	}
	return err
}

// Delete frees the record and every tombstone of session k (whatever the
// principal), wherever it holds them. It returns ErrContention when other
// workers kept changing a slot through every retry.
func (s *Store) Delete(k SessionKey, now uint32) error {
	a, b := s.candidates(k)
	for _, i := range [2]uint32{a, b} {
		if err := s.free(i, k, now); err != nil {
			return err
		}
	}
	return s.clearTombstones(k, now)
}

// free empties record slot i if it holds session k, retrying on CAS
// conflicts.
func (s *Store) free(i uint32, k SessionKey, now uint32) error {
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		v, cas, err := s.get(&s.keys[0], tableRecords, i)
		key := s.keys[0]
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if !s.holds(v, k, now) {
			return nil
		}
		err = s.Data.Set(key, EmptySlot, cas)
		if !errors.Is(err, ErrCASMismatch) {
			return err
		}
		s.conflicts++
	}
	return ErrContention
}

// holds reports whether value v of a record slot is a live record of k.
func (s *Store) holds(v []byte, k SessionKey, now uint32) bool {
	rec := s.scratch(0)
	ok, err := s.decode(0, v)
	return err == nil && ok && rec.Session == k && !rec.Expired(now, s.TTL)
}
