package cursor

import "encoding/binary"

// Tombstones live in their own table, apart from the watermark records, so
// that asking "was this session force-re-initialized?" — which every request
// carrying a session asks — costs a shared-data miss in the common case, not
// a read that returns and decodes a record: a tombstone slot whose key was
// never written answers NOT_FOUND, and the host then copies nothing into the
// guest. A session is tombstoned in the first of its two candidate slots
// that is free; the second is used only when the first one's key exists, so
// a NOT_FOUND on the first ends the lookup.
//
// The wire form of a tombstone is
//
//	'T', 16 bytes session key, uvarint until (unix seconds)
//
// and a freed slot holds EmptySlot.

const tombstoneMarker = 'T'

// appendTombstone appends the wire form of a tombstone of k to dst.
func appendTombstone(dst []byte, k SessionKey, until uint32) []byte {
	dst = append(dst, tombstoneMarker)
	dst = append(dst, k[:]...)
	return binary.AppendUvarint(dst, uint64(until))
}

// decodeTombstone parses a tombstone slot's value; ok is false for a free
// slot or anything malformed.
func decodeTombstone(v []byte) (k SessionKey, until uint32, ok bool) {
	if len(v) < 1+len(k)+1 || v[0] != tombstoneMarker {
		return k, 0, false
	}
	copy(k[:], v[1:])
	u, n := binary.Uvarint(v[1+len(k):])
	if n <= 0 || 1+len(k)+n != len(v) || u > 1<<32-1 {
		return SessionKey{}, 0, false
	}
	return k, uint32(u), true
}

// Tombstoned reports whether session k was force-re-initialized less than
// TTL seconds ago (and not deleted since).
func (s *Store) Tombstoned(k SessionKey, now uint32) (bool, error) {
	until, found, err := s.TombstoneUntil(k)
	return found && until >= now, err
}

// TombstoneUntil returns until when session k is tombstoned, and whether it
// has a tombstone at all (live or expired). It needs no clock, so a caller
// on a hot path reads the time only when a tombstone was found: for a
// session never tombstoned the whole lookup is one shared-data miss.
func (s *Store) TombstoneUntil(k SessionKey) (until uint32, found bool, err error) {
	a, b := s.candidates(k)
	for c, i := range [2]uint32{a, b} {
		_, v, _, err := s.get(c, tableTombstones, i)
		if isNotFound(err) {
			// Never written: the session was not put here, nor in
			// the second slot (used only when this key exists).
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		if tk, u, ok := decodeTombstone(v); ok && tk == k {
			return u, true, nil
		}
	}
	return 0, false, nil
}

// Tombstone records that session k was force-re-initialized: every request
// carrying it is refused for the next TTL seconds, or until Delete. It takes
// a free, expired or already-own slot of the tombstone table, else replaces
// the candidate that expires first: the tombstone table is bounded like the
// records, and is apart from them, so made-up session IDs that get refused
// can never evict a watermark.
func (s *Store) Tombstone(k SessionKey, now uint32) error {
	until := now + s.TTL
	a, b := s.candidates(k)
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		var cand [2]struct {
			key     []byte
			cas     uint32
			missing bool
			ours    bool
			free    bool
			until   uint32
		}
		for c, i := range [2]uint32{a, b} {
			key, v, cas, err := s.get(c, tableTombstones, i)
			cd := &cand[c]
			cd.key, cd.cas = key, cas
			switch {
			case isNotFound(err):
				cd.missing, cd.free = true, true
				continue
			case err != nil:
				return err
			}
			tk, u, ok := decodeTombstone(v)
			cd.until = u
			cd.ours = ok && tk == k
			cd.free = !ok || u < now
		}
		t := 0
		switch {
		case cand[0].ours:
		case cand[1].ours:
			t = 1
		case cand[0].free:
		case cand[1].free:
			t = 1
		case cand[1].until < cand[0].until:
			t = 1
		}
		if cand[t].ours && cand[t].until >= until {
			return nil
		}
		s.buf = appendTombstone(s.buf[:0], k, until)
		if err := s.write(cand[t].key, cand[t].cas, cand[t].missing); err != errRetry {
			return err
		}
	}
	return ErrContention
}
