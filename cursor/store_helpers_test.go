package cursor

// Conveniences of the tests: the plugin only calls LoadAs, TombstonesOf,
// TombstoneAs and EndStream.

// Load is LoadAs for NoPrincipal, without known.
func (s *Store) Load(k SessionKey, now uint32) (*Record, error) {
	rec, _, err := s.LoadAs(k, NoPrincipal, now)
	return rec, err
}

// TombstonedAs reports whether session k was force-re-initialized for
// principal p less than TTL seconds ago (and not deleted since).
func (s *Store) TombstonedAs(k SessionKey, p Principal, now uint32) (bool, error) {
	t, err := s.TombstonesOf(k)
	return t.LiveFor(p, now), err
}

// Tombstoned is TombstonedAs for NoPrincipal.
func (s *Store) Tombstoned(k SessionKey, now uint32) (bool, error) {
	return s.TombstonedAs(k, NoPrincipal, now)
}

// Tombstone is TombstoneAs for NoPrincipal.
func (s *Store) Tombstone(k SessionKey, now uint32) error {
	return s.TombstoneAs(k, NoPrincipal, now)
}
