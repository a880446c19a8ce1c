// Package headermap walks a proxy-wasm header map in the ABI's
// serialization in place, without building a [][2]string of new strings
// (an allocation per header): the way the guard reads a request's headers
// (one proxy_get_header_map_pairs, scanned). The serialization
// (little-endian), as Envoy's exportPairs writes it:
//
//	count uint32, then count × (key size uint32, value size uint32),
//	then count × (key bytes, 0, value bytes, 0)
//
// An empty map is no bytes at all.
package headermap

import "encoding/binary"

// Serialize is the proxy-wasm serialization of hs, as Envoy writes it.
func Serialize(hs [][2]string) []byte {
	if len(hs) == 0 {
		return nil
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(hs)))
	for _, h := range hs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h[0])))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h[1])))
	}
	for _, h := range hs {
		b = append(append(append(append(b, h[0]...), 0), h[1]...), 0)
	}
	return b
}

// Request is what a request's header map says to the guard: the first
// value of each header it judges by (views of the map's bytes, nil when
// absent) and how many entries the headers that must not repeat have.
type Request struct {
	Path, Method, LastEventID, Session, Principal []byte
	// LastEventIDs and Sessions count the last-event-id and mcp-session-id
	// entries, empty ones too; HasPrincipal reports a principal entry,
	// an empty one too.
	LastEventIDs, Sessions int
	HasPrincipal           bool
}

// ScanRequest walks pairs once, in place, and fills r with the first
// :path, :method, last-event-id, mcp-session-id and principalHeader entry
// (principalHeader "" names none) and the counts of Request. Keys are
// compared exactly: Envoy's maps hold lower-case keys, and principalHeader
// must be lower-case. ok is false when pairs does not parse: a count or
// size that runs past its bytes, an entry without its NUL terminators, or
// bytes beyond the last entry (r is then incomplete). An empty pairs is an
// empty map.
//
// It is one loop over the map that compares each key with the constant
// keys it looks for.
func ScanRequest(pairs []byte, principalHeader string, r *Request) (ok bool) {
	if len(pairs) < 4 {
		return len(pairs) == 0
	}
	n := uint64(binary.LittleEndian.Uint32(pairs))
	if n > uint64(len(pairs)-4)/8 {
		return false
	}
	sizes, data := pairs[4:4+8*n], pairs[4+8*n:]
	for len(sizes) >= 8 {
		kn := uint64(binary.LittleEndian.Uint32(sizes))
		vn := uint64(binary.LittleEndian.Uint32(sizes[4:]))
		if kn+vn+2 > uint64(len(data)) || data[kn] != 0 || data[kn+1+vn] != 0 {
			return false
		}
		key, value := data[:kn], data[kn+1:kn+1+vn]
		sizes, data = sizes[8:], data[kn+vn+2:]
		switch kn {
		case uint64(len(":path")):
			if r.Path == nil && string(key) == ":path" {
				r.Path = value
			}
		case uint64(len(":method")):
			if r.Method == nil && string(key) == ":method" {
				r.Method = value
			}
		case uint64(len("last-event-id")):
			if string(key) == "last-event-id" {
				if r.LastEventIDs == 0 {
					r.LastEventID = value
				}
				r.LastEventIDs++
			}
		case uint64(len("mcp-session-id")):
			if string(key) == "mcp-session-id" {
				if r.Sessions == 0 {
					r.Session = value
				}
				r.Sessions++
			}
		}
		if kn == uint64(len(principalHeader)) && kn > 0 && !r.HasPrincipal && string(key) == principalHeader {
			r.Principal, r.HasPrincipal = value, true
		}
	}
	return len(data) == 0
}
