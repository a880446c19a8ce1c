package cursor

import (
	"encoding/binary"
	"math"
)

// Tombstones live in their own table, apart from the watermark records, in
// buckets: one shared-data key per bucket, each holding up to bucketEntries
// tombstones of the sessions that hash to it. The table has
// ceil(max_sessions/4) buckets, so it holds at least 2 × max_sessions live
// tombstones, and its keys are as bounded as the records'.
//
// Why buckets, not one slot per session: proxy-wasm 0.2.1 has no delete, so
// every key ever written stays. With a slot per session, the first lookup of
// a never-tombstoned session was a shared-data miss only while its slot had
// never been used; after max_sessions tombstones ever written, nearly every
// lookup read and decoded another session's tombstone (77 % after 10,000 in
// 10,000 slots, 99 % after 30,000). A bucket lookup is one shared-data read
// whatever has been written before: a miss while the bucket was never used,
// afterwards at most 1 + 8 × 20 = 161 bytes copied and scanned as fixed-size
// entries (no varint, no allocation). So the cost of "is this session
// terminated?", which every request with a session asks, is bounded by a
// constant that does not grow with the tombstones ever written.
//
// The wire form of a bucket is
//
//	'B', then 0..8 entries of 20 bytes:
//	     8 bytes session fingerprint (the second half of its SessionKey, little-endian)
//	     8 bytes principal (Principal, little-endian)
//	     4 bytes until (unix seconds, little-endian)
//
// The session's bucket is chosen by the first half of its key, and matched
// by the second: two sessions are confused only if all 128 bits collide.
//
// A tombstone binds (session, principal): a request is refused as
// tombstoned only when both match (Tombstones.Until). A session holds at
// most maxPrincipalsPerSession live tombstones: further principals' requests
// are refused but recorded nowhere, so requests with many made-up
// credentials cannot push the owner's tombstone out of its bucket.

const (
	bucketMarker   = 'B'
	bucketEntries  = 8
	tombEntryBytes = 20
	// sessionsPerBucket sets the bucket count: Slots/sessionsPerBucket
	// buckets of bucketEntries entries hold twice Slots tombstones.
	sessionsPerBucket = 4
	// maxPrincipalsPerSession bounds the live tombstones of one session.
	maxPrincipalsPerSession = 2
	// MaxBucketBytes is the largest value a tombstone lookup reads.
	MaxBucketBytes = 1 + bucketEntries*tombEntryBytes
)

// tombEntry is one tombstone of a bucket.
type tombEntry struct {
	session   uint64 // SessionKey.hi()
	principal Principal
	until     uint32
}

// bucket is a decoded tombstone bucket, held by value (no allocation).
type bucket struct {
	n int
	e [bucketEntries]tombEntry
}

// appendBucket appends the wire form of b to dst.
func appendBucket(dst []byte, b *bucket) []byte {
	dst = append(dst, bucketMarker)
	for i := 0; i < b.n; i++ {
		e := &b.e[i]
		dst = binary.LittleEndian.AppendUint64(dst, e.session)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.principal))
		dst = binary.LittleEndian.AppendUint32(dst, e.until)
	}
	return dst
}

// decodeBucket parses a bucket's value into b; ok is false for anything
// malformed (and for the one-slot-per-session tombstones of earlier builds,
// which never shared these keys: see tableTombstones).
func decodeBucket(v []byte, b *bucket) (ok bool) {
	b.n = 0
	if len(v) < 1 || v[0] != bucketMarker || (len(v)-1)%tombEntryBytes != 0 || (len(v)-1)/tombEntryBytes > bucketEntries {
		return false
	}
	for p := v[1:]; len(p) > 0; p = p[tombEntryBytes:] {
		b.e[b.n] = tombEntry{
			session:   binary.LittleEndian.Uint64(p),
			principal: Principal(binary.LittleEndian.Uint64(p[8:])),
			until:     binary.LittleEndian.Uint32(p[16:]),
		}
		b.n++
	}
	return true
}

// buckets is the number of tombstone buckets: ceil(Slots/sessionsPerBucket),
// at least one.
func (s *Store) buckets() uint32 {
	return max((s.Slots+sessionsPerBucket-1)/sessionsPerBucket, 1)
}

// bucketOf returns the bucket of session k.
func (s *Store) bucketOf(k SessionKey) uint32 {
	return uint32(k.lo() % uint64(s.buckets()))
}

// Tombstones are the tombstones of one session, as read by TombstonesOf:
// one entry per principal whose request was refused, live or expired. A nil
// *Tombstones is a session without any.
type Tombstones struct {
	n         int
	principal [bucketEntries]Principal
	until     [bucketEntries]uint32
}

// Any reports whether the session has any tombstone at all (any principal,
// live or expired): the guard wrote one only for a session the upstream had
// answered.
func (t *Tombstones) Any() bool { return t != nil && t.n > 0 }

// Until returns until when the session is tombstoned for principal p, and
// whether it has a tombstone for p at all (live or expired).
func (t *Tombstones) Until(p Principal) (until uint32, found bool) {
	if t == nil {
		return 0, false
	}
	for i := 0; i < t.n; i++ {
		if t.principal[i] == p {
			return t.until[i], true
		}
	}
	return 0, false
}

// LiveFor reports whether the session is tombstoned for principal p at
// time now.
func (t *Tombstones) LiveFor(p Principal, now uint32) bool {
	until, found := t.Until(p)
	return found && until >= now
}

// TombstonesOf reads the tombstones of session k: one shared-data read, a
// miss while k's bucket was never written. It needs no clock and no
// principal, so a caller on the hot path reads the credential header and the
// time only when the session has a tombstone. The result is nil when k has
// none, else the store's scratch memory, valid until the next TombstonesOf.
func (s *Store) TombstonesOf(k SessionKey) (*Tombstones, error) {
	v, _, err := s.get(&s.bucketKey, tableTombstones, s.bucketOf(k))
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(v) < 1 || v[0] != bucketMarker || (len(v)-1)%tombEntryBytes != 0 {
		return nil, nil // malformed: decodeBucket would refuse it too
	}
	fp := k.hi()
	t := &s.tombs
	t.n = 0
	for e := v[1:]; len(e) > 0 && t.n < bucketEntries; e = e[tombEntryBytes:] {
		if binary.LittleEndian.Uint64(e) == fp {
			t.principal[t.n] = Principal(binary.LittleEndian.Uint64(e[8:]))
			t.until[t.n] = binary.LittleEndian.Uint32(e[16:])
			t.n++
		}
	}
	if t.n == 0 {
		return nil, nil
	}
	return t, nil
}

// TombstoneAs records that session k was force-re-initialized for principal
// p: every request of p carrying k is refused for the next TTL seconds, or
// until Delete. The caller writes tombstones only for sessions the upstream
// answered (a record or a tombstone of them exists here: LoadAs's known), so
// made-up session IDs write nothing. In k's bucket it drops expired entries,
// extends p's own entry, takes a free entry, else replaces the entry of
// another session that expires first (the oldest of those); a session that already holds
// maxPrincipalsPerSession live tombstones gets no further one.
func (s *Store) TombstoneAs(k SessionKey, p Principal, now uint32) error {
	until := now + s.TTL
	if until < now {
		until = math.MaxUint32
	}
	fp := k.hi()
	var b bucket
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		v, cas, err := s.get(&s.bucketKey, tableTombstones, s.bucketOf(k))
		key := s.bucketKey
		missing := isNotFound(err)
		if err != nil && !missing {
			return err
		}
		b.n = 0
		if !missing && !decodeBucket(v, &b) {
			b.n = 0 // malformed: start the bucket afresh
		}
		own, same, n := -1, 0, 0
		for i := 0; i < b.n; i++ {
			if b.e[i].until < now {
				continue // expired: dropped
			}
			b.e[n] = b.e[i]
			if b.e[n].session == fp {
				same++
				if b.e[n].principal == p {
					own = n
				}
			}
			n++
		}
		b.n = n
		switch {
		case own >= 0:
			if b.e[own].until >= until {
				return nil
			}
			b.e[own].until = until
		case same >= maxPrincipalsPerSession:
			return nil
		case b.n < bucketEntries:
			b.e[b.n] = tombEntry{session: fp, principal: p, until: until}
			b.n++
		default:
			t := -1
			for i := 0; i < b.n; i++ {
				if b.e[i].session != fp && (t < 0 || b.e[i].until < b.e[t].until) {
					t = i
				}
			}
			if t < 0 {
				return nil // cannot happen: same < maxPrincipalsPerSession < bucketEntries
			}
			// Entries stay in the order they were written, so a tie
			// evicts the oldest.
			copy(b.e[t:b.n], b.e[t+1:b.n])
			b.e[b.n-1] = tombEntry{session: fp, principal: p, until: until}
		}
		s.buf = appendBucket(s.buf[:0], &b)
		if err := s.write(key, cas, missing); err != errRetry {
			return err
		}
	}
	return ErrContention
}

// clearTombstones removes every live tombstone of session k, whatever its
// principal (a DELETE the upstream answered with 2xx ends the session for
// everyone). A bucket without one is not written.
func (s *Store) clearTombstones(k SessionKey, now uint32) error {
	fp := k.hi()
	var b bucket
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		v, cas, err := s.get(&s.bucketKey, tableTombstones, s.bucketOf(k))
		key := s.bucketKey
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if !decodeBucket(v, &b) {
			return nil
		}
		n, live := 0, false
		for i := 0; i < b.n; i++ {
			if b.e[i].session == fp {
				live = live || b.e[i].until >= now
				continue
			}
			b.e[n] = b.e[i]
			n++
		}
		if !live {
			return nil
		}
		b.n = n
		s.buf = appendBucket(s.buf[:0], &b)
		if err := s.write(key, cas, false); err != errRetry {
			return err
		}
	}
	return ErrContention
}
