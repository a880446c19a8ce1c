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
	ErrNotFound    = errors.New("cursor: shared data key not found")
	ErrCASMismatch = errors.New("cursor: shared data CAS mismatch")
	// ErrContention is returned when a record could not be updated within
	// the retry budget because other workers kept changing it.
	ErrContention = errors.New("cursor: watermark record kept changing under concurrent updates; gave up after 16 attempts")
)

// KeyPrefix starts every shared-data key the plugin writes. Istio gives all
// plugins one shared-data namespace, so the prefix keeps them apart.
const KeyPrefix = "mcp-resume-guard/v1/slot/"

const maxCASAttempts = 16

// Store keeps watermark records in a fixed number of shared-data slots, so
// shared data never grows past Slots records whatever the session churn.
// A session may live in two slots (two-choice hashing); a new session takes a
// free or expired one, else evicts the least recently updated of the two.
// Every change is a read-modify-write with compare-and-swap, retried.
//
// A Store is used by one worker VM at a time; it holds scratch buffers and is
// not safe for concurrent use.
type Store struct {
	Data  SharedData
	Slots uint32 // max_sessions
	TTL   uint32 // session_ttl_seconds

	conflicts int       // CAS mismatches retried since the last TakeConflicts
	buf       []byte    // scratch for encoding records
	keys      [2][]byte // scratch for the keys of a session's two slots
}

// slot is one candidate slot as read from shared data.
type slot struct {
	key     []byte
	cas     uint32
	rec     Record
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

// candidates returns the two slot indexes of session.
func (s *Store) candidates(session string) (uint32, uint32) {
	h := fnv64(session)
	n := max(uint64(s.Slots), 1) // a zero Store must not divide by zero
	a := uint32(h % n)
	b := uint32((h >> 32 * 0x9E3779B1) % n)
	if b == a && n > 1 {
		b = (a + 1) % uint32(n)
	}
	return a, b
}

func (s *Store) slotKey(dst []byte, i uint32) []byte {
	dst = append(dst[:0], KeyPrefix...)
	return strconv.AppendUint(dst, uint64(i), 10)
}

// read reads slot i; its key is built in the scratch buffer of candidate c
// (0 or 1), valid until the next read of that candidate.
func (s *Store) read(c int, i uint32, now uint32) (slot, error) {
	s.keys[c] = s.slotKey(s.keys[c], i)
	sl := slot{key: s.keys[c]}
	v, cas, err := s.Data.Get(sl.key)
	switch {
	case errors.Is(err, ErrNotFound):
		sl.missing = true
		return sl, nil
	case err != nil:
		return sl, err
	}
	sl.cas = cas
	rec, ok, derr := Decode(v)
	if derr == nil && ok && !rec.Expired(now, s.TTL) {
		sl.rec, sl.filled = rec, true
	}
	return sl, nil
}

// stillOurs reports whether key still holds the record just written from
// s.buf.
func (s *Store) stillOurs(key []byte) bool {
	v, _, err := s.Data.Get(key)
	return err == nil && bytes.Equal(v, s.buf)
}

// Load returns the live record of session, or nil when there is none.
func (s *Store) Load(session string, now uint32) (*Record, error) {
	if session == "" || len(session) > MaxSessionIDBytes {
		return nil, nil
	}
	a, b := s.candidates(session)
	for c, i := range [2]uint32{a, b} {
		sl, err := s.read(c, i, now)
		if err != nil {
			return nil, err
		}
		if sl.filled && sl.rec.SessionID == session {
			return &sl.rec, nil
		}
	}
	return nil, nil
}

// Update applies change to the record of session and writes it back with
// compare-and-swap, retrying when another worker changed the slot meanwhile.
// change receives the live record (or a fresh one with SessionID and Created
// set, when create is true and there is none) and reports whether it changed
// anything worth writing. With create false and no live record, Update does
// nothing.
func (s *Store) Update(session string, now uint32, create bool, change func(*Record) bool) error {
	if session == "" || len(session) > MaxSessionIDBytes {
		return nil
	}
	a, b := s.candidates(session)
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		sa, err := s.read(0, a, now)
		if err != nil {
			return err
		}
		sb, err := s.read(1, b, now)
		if err != nil {
			return err
		}
		target := &sa
		switch {
		case sa.filled && sa.rec.SessionID == session:
		case sb.filled && sb.rec.SessionID == session:
			target = &sb
		case !create:
			return nil
		default:
			// A new session: a free or expired slot, else evict the
			// least recently updated occupant.
			if sa.filled && (!sb.filled || sb.rec.Updated < sa.rec.Updated) {
				target = &sb
			}
			target.rec = Record{SessionID: session, Created: now, Updated: now}
		}
		if !change(&target.rec) {
			return nil
		}
		s.buf, err = target.rec.AppendEncode(s.buf[:0])
		if err != nil {
			return err
		}
		err = s.Data.Set(target.key, s.buf, target.cas)
		if errors.Is(err, ErrCASMismatch) {
			s.conflicts++
			continue
		}
		if err == nil && target.missing && !s.stillOurs(target.key) {
			// Proxy-wasm 0.2.1 ignores cas when a key does not exist
			// yet, so two workers creating the same slot both
			// "succeed". Read back: if another worker's record replaced
			// ours, merge into it like after a CAS conflict. (A worker
			// that overwrites ours after this check still wins; this
			// narrows the window, it cannot close it.)
			s.conflicts++
			continue
		}
		return err
	}
	return ErrContention
}

// Delete frees the slot of session, if it holds it. It returns ErrContention
// when other workers kept changing the slot through every retry.
func (s *Store) Delete(session string, now uint32) error {
	if session == "" || len(session) > MaxSessionIDBytes {
		return nil
	}
	a, b := s.candidates(session)
	for _, i := range [2]uint32{a, b} {
		if err := s.free(i, session, now); err != nil {
			return err
		}
	}
	return nil
}

// free empties slot i if it holds session, retrying on CAS conflicts.
func (s *Store) free(i uint32, session string, now uint32) error {
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		sl, err := s.read(0, i, now)
		if err != nil || !sl.filled || sl.rec.SessionID != session {
			return err
		}
		err = s.Data.Set(sl.key, EmptySlot, sl.cas)
		if !errors.Is(err, ErrCASMismatch) {
			return err
		}
		s.conflicts++
	}
	return ErrContention
}

// SessionTag is how logs name a session instead of printing its ID: the low
// 32 bits of the same FNV-1a hash that places it in a slot, in hex. It is a
// short handle, not a secret: a low-entropy ID can be found from it.
func SessionTag(session string) string {
	return strconv.FormatUint(fnv64(session)&0xffffffff, 16)
}

// fnv64 is FNV-1a, 64 bit: a hash every worker VM computes identically.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
