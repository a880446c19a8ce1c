// Package headermap walks a proxy-wasm header map in the ABI's
// serialization in place, without building a [][2]string of new strings
// (about 1.2 µs for 9 headers inside the VM): the way the guard reads a
// request's headers (one proxy_get_header_map_pairs, scanned), which the
// benchmark floor plugin reads them by too. The serialization
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

// Walk walks a serialized header map in place, entry by entry; keys and
// values are views of the map's bytes.
type Walk struct {
	sizes, data []byte // the size words not walked yet; the bytes after the last entry walked
}

// Start starts a walk of pairs; ok is false when pairs cannot hold its own
// count of size words. An empty pairs is an empty map.
func Start(pairs []byte) (w Walk, ok bool) {
	if len(pairs) < 4 {
		return w, len(pairs) == 0
	}
	n := uint64(binary.LittleEndian.Uint32(pairs))
	if n > uint64(len(pairs)-4)/8 {
		return w, false
	}
	return Walk{sizes: pairs[4 : 4+8*n], data: pairs[4+8*n:]}, true
}

// Next returns the next entry; ok is false at the end of the map or at an
// entry that does not fit the map's bytes or lacks its NUL terminators (End
// tells the two apart).
func (w *Walk) Next() (key, value []byte, ok bool) {
	if len(w.sizes) < 8 {
		return nil, nil, false
	}
	kn := uint64(binary.LittleEndian.Uint32(w.sizes))
	vn := uint64(binary.LittleEndian.Uint32(w.sizes[4:]))
	if kn+vn+2 > uint64(len(w.data)) || w.data[kn] != 0 || w.data[kn+1+vn] != 0 {
		return nil, nil, false
	}
	w.sizes = w.sizes[8:]
	key, value = w.data[:kn], w.data[kn+1:kn+1+vn]
	w.data = w.data[kn+vn+2:]
	return key, value, true
}

// End reports, once Next returned false, whether the walk ended exactly at
// the end of the map: every entry walked and no byte left over.
func (w *Walk) End() bool { return len(w.sizes) == 0 && len(w.data) == 0 }
