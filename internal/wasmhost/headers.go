package wasmhost

import (
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Header is one header field as the plugin sees it: a lowercase key and its
// value. Pseudo-headers (":method", ":path", ":authority", ":scheme",
// ":status") are ordinary entries that come first.
type Header struct {
	Key, Value string
}

// Headers is an ordered header map in the proxy-wasm model: repeated keys are
// separate entries, keys are lowercase.
type Headers []Header

// Get returns the first value of key (lowercased) and whether it exists,
// like Envoy's proxy_get_header_map_value, which returns only the first
// value of a repeated header.
func (h Headers) Get(key string) (string, bool) {
	for i := range h {
		if h[i].Key == key {
			return h[i].Value, true
		}
	}
	return "", false
}

// Value returns the first value of key, or "".
func (h Headers) Value(key string) string {
	v, _ := h.Get(key)
	return v
}

// Add appends key: value.
func (h *Headers) Add(key, value string) {
	*h = append(*h, Header{Key: lowerASCII(key), Value: value})
}

// Set replaces every value of key by one value at the end of the map, as
// Envoy's HeaderMapImpl::setCopy does (remove(key), then addCopy(key, value):
// source/common/http/header_map_impl.cc, since the replace-the-first-only
// legacy path of envoy.reloadable_features.http_set_copy_replace_all_headers
// was removed).
func (h *Headers) Set(key, value string) {
	key = lowerASCII(key)
	*h = append((*h).without(key), Header{Key: key, Value: value})
}

// Del removes every value of key. Removing an absent key is not an error.
func (h *Headers) Del(key string) {
	*h = (*h).without(lowerASCII(key))
}

// without returns h without the entries of key, reusing h's storage.
func (h Headers) without(key string) Headers {
	out := h[:0]
	for _, e := range h {
		if e.Key != key {
			out = append(out, e)
		}
	}
	return out
}

// Clone returns an independent copy.
func (h Headers) Clone() Headers {
	if h == nil {
		return nil
	}
	return append(Headers(make([]Header, 0, len(h))), h...)
}

// ByteSize is the sum of h's key and value lengths, Envoy's
// HeaderMap::byteSize().
func (h Headers) ByteSize() int {
	n := 0
	for _, e := range h {
		n += len(e.Key) + len(e.Value)
	}
	return n
}

// SerializedSize is the length of h in the proxy-wasm map serialization.
func (h Headers) SerializedSize() int {
	n := 4
	for _, e := range h {
		n += 8 + len(e.Key) + 1 + len(e.Value) + 1
	}
	return n
}

// AppendSerialized appends h in the proxy-wasm map serialization
// (little-endian): u32 pair count; for each pair u32 key length and u32
// value length; then each key and each value followed by a NUL byte.
func (h Headers) AppendSerialized(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h)))
	for _, e := range h {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Key)))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Value)))
	}
	for _, e := range h {
		dst = append(dst, e.Key...)
		dst = append(dst, 0)
		dst = append(dst, e.Value...)
		dst = append(dst, 0)
	}
	return dst
}

// Limits Envoy applies when it reads a serialized map from the plugin
// (proxy-wasm-cpp-host include/proxy-wasm/limits.h: PROXY_WASM_HOST_PAIRS_MAX_BYTES,
// PROXY_WASM_HOST_PAIRS_MAX_COUNT).
const (
	maxPairsBytes = 1 << 20
	maxPairsCount = 1024
)

var errBadPairs = errors.New("wasmhost: malformed serialized header map")

// ParseHeaders decodes the proxy-wasm map serialization. Like Envoy's
// PairsUtil::toPairs it rejects data over 1 MiB or 1,024 pairs. An empty
// input is an empty map.
func ParseHeaders(data []byte) (Headers, error) {
	if len(data) == 0 {
		return Headers{}, nil
	}
	if len(data) > maxPairsBytes || len(data) < 4 {
		return nil, errBadPairs
	}
	n := int(binary.LittleEndian.Uint32(data))
	if n > maxPairsCount || 4+8*n > len(data) {
		return nil, errBadPairs
	}
	out := make(Headers, 0, n)
	sizes := data[4 : 4+8*n]
	body := data[4+8*n:]
	for i := 0; i < n; i++ {
		kl := int(binary.LittleEndian.Uint32(sizes[8*i:]))
		vl := int(binary.LittleEndian.Uint32(sizes[8*i+4:]))
		if kl+1 > len(body) {
			return nil, errBadPairs
		}
		k := string(body[:kl])
		body = body[kl+1:]
		if vl+1 > len(body) {
			return nil, errBadPairs
		}
		v := string(body[:vl])
		body = body[vl+1:]
		out = append(out, Header{Key: k, Value: v})
	}
	return out, nil
}

// RequestHeaders builds the map Envoy hands a filter for r: the
// pseudo-headers :authority, :path, :method, :scheme, then every other header
// with a lowercase key (hop-by-hop headers removed, as Envoy's HTTP/1 codec
// does not pass them on), then x-forwarded-proto, which Envoy's connection
// manager adds before the filters run.
func RequestHeaders(r *http.Request) Headers {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := r.RequestURI
	if !strings.HasPrefix(path, "/") {
		// Absolute-form or missing request target: Envoy's HTTP/1 codec
		// splits it into :authority and :path.
		path = r.URL.RequestURI()
	}
	h := make(Headers, 0, len(r.Header)+5)
	h = append(h,
		Header{":authority", r.Host},
		Header{":path", path},
		Header{":method", r.Method},
		Header{":scheme", scheme},
	)
	for k, vs := range r.Header {
		lk := lowerASCII(k)
		if hopByHop(lk) || lk == "x-forwarded-proto" {
			continue
		}
		for _, v := range vs {
			h = append(h, Header{lk, v})
		}
	}
	h = append(h, Header{"x-forwarded-proto", scheme})
	return h
}

// ResponseHeaders builds the response map for an upstream response: :status
// first, then every header with a lowercase key, hop-by-hop headers removed.
func ResponseHeaders(status int, hdr http.Header) Headers {
	h := make(Headers, 0, len(hdr)+1)
	h = append(h, Header{":status", strconv.Itoa(status)})
	for k, vs := range hdr {
		lk := lowerASCII(k)
		if hopByHop(lk) {
			continue
		}
		for _, v := range vs {
			h = append(h, Header{lk, v})
		}
	}
	return h
}

// ToHTTP copies the regular (non-pseudo) headers into dst.
func (h Headers) ToHTTP(dst http.Header) {
	for _, e := range h {
		if strings.HasPrefix(e.Key, ":") || hopByHop(e.Key) {
			continue
		}
		dst[http.CanonicalHeaderKey(e.Key)] = append(dst[http.CanonicalHeaderKey(e.Key)], e.Value)
	}
}

func hopByHop(k string) bool {
	switch k {
	case "connection", "keep-alive", "proxy-connection", "proxy-authenticate",
		"proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
