package dualstack

import "testing"

func TestNewSessionIDLengths(t *testing.T) {
	for _, n := range []int{0, 18, 42, 43, 44, 202, 1024, 8192} {
		a, b := newSessionID(n), newSessionID(n)
		want := n
		if n < 43 {
			want = 18
		}
		if len(a) != want || len(b) != want {
			t.Fatalf("newSessionID(%d): %d and %d bytes, want %d", n, len(a), len(b), want)
		}
		if a == b {
			t.Fatalf("newSessionID(%d) minted the same ID twice", n)
		}
		for i := 0; i < len(a); i++ {
			if a[i] < 0x21 || a[i] > 0x7e {
				t.Fatalf("newSessionID(%d) byte %d is %#x: not visible ASCII", n, i, a[i])
			}
		}
	}
}
