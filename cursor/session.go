package cursor

import (
	"encoding/binary"
	"math/bits"
)

// SessionKey is the fixed-size digest under which the filter keeps everything
// about one MCP session: records and tombstones are placed and matched by it,
// never by the session ID itself. So a session ID of any length the spec
// allows (visible ASCII; UUIDs, JWTs, encrypted gateway state of several
// kilobytes) is protected, and shared data holds 16 bytes per session
// whatever the ID's size.
//
// The digest is 128 bits: two live sessions colliding is practically
// impossible (about 2^-64 for 2^32 live sessions). It is not a keyed or
// cryptographic hash: an attacker who wants to collide with a session must
// already know its ID, and with it can act as that session anyway.
type SessionKey [16]byte

// KeyOf returns the digest of session. Every worker VM computes the same key
// for the same ID. The caller computes it once per request: its cost grows
// with the ID (8 bytes per step).
func KeyOf(session string) SessionKey {
	// Two independent 64-bit lanes over little-endian 8-byte words, each a
	// multiply-rotate step, then a splitmix64 finalizer on each lane mixed
	// with the other: fast under Wasm (no 128-bit multiply) and
	// well-distributed for the identifiers servers mint.
	n := uint64(len(session))
	h1 := 0x9E3779B97F4A7C15 ^ n
	h2 := 0xC2B2AE3D27D4EB4F ^ bits.RotateLeft64(n, 32)
	s := session
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h1 = bits.RotateLeft64(h1^w, 31) * 0x87C37B91114253D5
		h2 = bits.RotateLeft64(h2+w, 27)*0x4CF5AD432745937F + h1
		s = s[8:]
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	h1 = bits.RotateLeft64(h1^w, 31) * 0x87C37B91114253D5
	h2 = bits.RotateLeft64(h2+w, 27)*0x4CF5AD432745937F + h1
	a, b := mix64(h1^bits.RotateLeft64(h2, 17)), mix64(h2+h1)
	var k SessionKey
	binary.LittleEndian.PutUint64(k[:8], a)
	binary.LittleEndian.PutUint64(k[8:], b)
	return k
}

// mix64 is the splitmix64 finalizer: every input bit affects every output bit.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// lo and hi are the two halves of k; slot placement uses them.
func (k SessionKey) lo() uint64 {
	return uint64(k[0]) | uint64(k[1])<<8 | uint64(k[2])<<16 | uint64(k[3])<<24 |
		uint64(k[4])<<32 | uint64(k[5])<<40 | uint64(k[6])<<48 | uint64(k[7])<<56
}

func (k SessionKey) hi() uint64 {
	return uint64(k[8]) | uint64(k[9])<<8 | uint64(k[10])<<16 | uint64(k[11])<<24 |
		uint64(k[12])<<32 | uint64(k[13])<<40 | uint64(k[14])<<48 | uint64(k[15])<<56
}

// Tag is how logs name a session instead of printing its ID: the first 32
// bits of its key, as 8 hex digits (zero-padded). It is a short handle, not a secret: a low-entropy
// ID can be found from it.
func (k SessionKey) Tag() string { return string(k.AppendTag(nil)) }

// AppendTag appends k.Tag() to dst.
func (k SessionKey) AppendTag(dst []byte) []byte {
	const hexDigits = "0123456789abcdef"
	v := uint32(k.lo())
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[v>>uint(shift)&0xf])
	}
	return dst
}

// SessionTag is KeyOf(session).Tag().
func SessionTag(session string) string { return KeyOf(session).Tag() }
