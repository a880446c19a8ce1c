package cursor

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"
)

// TestSessionTagFixedWidth: log lines name a session by 8 hex digits,
// zero-padded, so that tags line up and compare as text.
func TestSessionTagFixedWidth(t *testing.T) {
	padded := 0
	for i := 0; i < 2000; i++ {
		tag := SessionTag("s-" + strconv.Itoa(i))
		if len(tag) != 8 || strings.Trim(tag, "0123456789abcdef") != "" {
			t.Fatalf("SessionTag(s-%d) = %q, want 8 lower-case hex digits", i, tag)
		}
		if tag[0] == '0' {
			padded++
		}
		if got := string(KeyOf("s-" + strconv.Itoa(i)).AppendTag([]byte("x"))); got != "x"+tag {
			t.Fatalf("AppendTag = %q, want x%s", got, tag)
		}
	}
	if padded == 0 {
		t.Fatal("no tag among 2000 starts with 0: the test no longer shows the padding")
	}
}

// TestKeyOfUnchanged pins the session digest: shared-data keys and records
// are found by it, so a build that computed another digest for the same ID
// would lose every watermark of a rolling upgrade, and so would halves
// (lo, hi) read otherwise. IDs of every length from 0 to 64 bytes (each
// tail length of the 8-byte steps, and UUIDs' 36).
func TestKeyOfUnchanged(t *testing.T) {
	const src = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_!~"
	for n, want := range map[int]string{
		0:  "83414b00ae56ff0f086e034cb22ef7ee",
		1:  "107a735f137d3c30312024d0afdc028d",
		7:  "5d8b7b6976b005f561cb726696825965",
		8:  "6daa2efdde6f8bbb14c1f841c2b02bca",
		36: "582f4671d51a0524194073cbe9b54ffe",
	} {
		if k := KeyOf(src[:n]); hex.EncodeToString(k[:]) != want {
			t.Errorf("KeyOf(%q) = %x, want %s", src[:n], k[:], want)
		}
	}
	h := fnv.New64a()
	for n := 0; n <= 64; n++ {
		k := KeyOf(src[:n])
		h.Write(k[:])
		// The halves slots and buckets are chosen by, and a tombstone's
		// fingerprint: the key's two little-endian words.
		if k.lo() != binary.LittleEndian.Uint64(k[:8]) || k.hi() != binary.LittleEndian.Uint64(k[8:]) {
			t.Errorf("KeyOf(%q): lo %#x hi %#x, want the little-endian words of %x", src[:n], k.lo(), k.hi(), k[:])
		}
	}
	if got := h.Sum64(); got != 0x59b487bcfb2bc51d {
		t.Errorf("the digests of the IDs of 0..64 bytes changed: FNV-1a of them %#x, want 0x59b487bcfb2bc51d", got)
	}
}
