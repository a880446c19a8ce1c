package main

import "testing"

// TestStreamNoncesNeverZeroNorRepeated: the sequence skips 0 (the zero
// tail's stream) where it wraps, and repeats no nonce within a long run, from
// any start.
func TestStreamNoncesNeverZeroNorRepeated(t *testing.T) {
	step := uint32(nonceStep)
	for _, start := range []uint32{0, 1, -step, -(2 * step), 0xffffffff} {
		n := streamNonces{last: start}
		seen := make(map[uint32]bool, 1<<16)
		for i := range 1 << 16 {
			v := n.next()
			if v == 0 {
				t.Fatalf("start %#x: nonce %d is 0", start, i)
			}
			if seen[v] {
				t.Fatalf("start %#x: nonce %d (%#x) repeats", start, i, v)
			}
			seen[v] = true
		}
	}
	var a, b streamNonces
	a.seed()
	b.seed()
	if a == b {
		t.Errorf("two seeded sequences start at the same point %#x (a chance of 2^-32)", a.last)
	}
}
