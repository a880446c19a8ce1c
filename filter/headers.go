package main

import (
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/headermap"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// Whether a request is guarded is decided from the route name property
// (when an entry names a route) and :path alone (when an entry matches a
// prefix), a single-value read: through an Istio sidecar, where a WasmPlugin
// cannot be scoped to routes, every request of the mesh pays for it, and one
// value costs less than copying the whole map (issue 24, measured both
// orders: unguarded requests ~9 % cheaper, guarded ones ~3 % dearer).
//
// A guarded request's headers are then read in one host call: one copy of
// the whole map (proxy_get_header_map_pairs), scanned in place. Under a Wasm
// runtime every host call that returns data costs a round trip into the
// guest's allocator: single-value reads of :method, Last-Event-ID and
// Mcp-Session-Id plus a duplicate check cost more such calls, and a
// single-value read can never show a repeated header (Envoy's
// getHeaderMapValue answers the first value only), which the map does.
//
// Values read from the host are only valid during the callback that read
// them (the ABI glue reuses the buffers the host fills): everything kept on
// the stream context is copied (the session is kept as its digest only).

// matchRoute returns the transport of the request's route (TransportNone:
// not guarded) from the route name property (when an entry names a route)
// and :path (when an entry matches a prefix). ok is false when the host
// failed to hand over :path for another reason than its absence (it passes,
// and OnHttpRequestHeaders counts it).
func matchRoute(p *pluginContext) (t cursor.Transport, ok bool) {
	var routeName, path string
	if p.matchByName {
		if b, err := proxywasm.GetProperty(propRouteName); err == nil {
			routeName = viewString(b)
		}
	}
	if p.matchByPath {
		var err error
		if path, err = proxywasm.GetHttpRequestHeader(":path"); err != nil && err != types.ErrorStatusNotFound {
			return cursor.TransportNone, false
		}
	}
	return p.cfg.Match(routeName, path), true
}

// needsPath reports whether any route entry matches on a path prefix.
func needsPath(cfg *config.Config) bool {
	for i := range cfg.Routes {
		if cfg.Routes[i].PathPrefix != "" {
			return true
		}
	}
	return false
}

// requestHeaders are the request headers a guarded request is judged by.
// Every field is host memory, valid during the callback only.
type requestHeaders struct {
	method, lastEventID string
	// session is the request's session: Mcp-Session-Id or, on a legacy
	// route, for the message endpoint (any method but GET), the sessionId
	// (or session_id) query parameter. A legacy GET opens a stream, whose
	// session is the one its endpoint event names (OnHttpResponseHeaders).
	session string
	// querySessions reports that the query names the session more than
	// once with different values (legacy routes: ambiguous.go refuses it).
	querySessions bool
	// principal is the first value of the configured principal header
	// (config.Config.PrincipalHeader); hasPrincipal reports whether it is
	// present at all.
	principal    string
	hasPrincipal bool
	// lastEventIDs and sessionHeaders count the Last-Event-ID and
	// Mcp-Session-Id entries, empty ones too (ambiguous.go refuses more
	// than one).
	lastEventIDs, sessionHeaders int
}

// readRequestHeaders reads the headers of a guarded request of transport t
// from the request header map; each field takes the first value of its
// header, as the host's single-value lookup would. ok is false when the host
// cannot return the map or returns one that is malformed.
func readRequestHeaders(t cursor.Transport, principalHeader string) (h requestHeaders, ok bool) {
	pairs, ok := requestHeaderPairs()
	if !ok {
		return h, false
	}
	path, ok := scanRequestHeaders(pairs, principalHeader, &h)
	if !ok {
		return h, false
	}
	if t == cursor.TransportSSE {
		q, ambiguous := querySession(path)
		h.querySessions = ambiguous
		if h.session == "" && h.method != "GET" {
			h.session = q
		}
	}
	return h, true
}

// scanRequestHeaders fills h from pairs, a whole header map in the
// proxy-wasm serialization (internal/headermap), and returns the first :path. Keys are
// compared exactly: Envoy's header maps hold lower-case keys
// (LowerCaseString), and principalHeader is lower-case
// (config.Config.PrincipalHeader). Most keys are skipped on their length
// alone. An empty pairs is an empty map; ok is false when pairs does not
// parse, or holds bytes beyond its last entry (h is then incomplete).
func scanRequestHeaders(pairs []byte, principalHeader string, h *requestHeaders) (path string, ok bool) {
	w, ok := headermap.Start(pairs)
	if !ok {
		return "", false
	}
	pathSeen, methodSeen := false, false
	for {
		key, value, more := w.Next()
		if !more {
			return path, w.End()
		}
		switch len(key) {
		case len(":path"):
			if !pathSeen && string(key) == ":path" {
				path, pathSeen = viewString(value), true
			}
		case len(":method"):
			if !methodSeen && string(key) == ":method" {
				h.method, methodSeen = viewString(value), true
			}
		case len("last-event-id"):
			if string(key) == "last-event-id" {
				if h.lastEventIDs == 0 {
					h.lastEventID = viewString(value)
				}
				h.lastEventIDs++
			}
		case len("mcp-session-id"):
			if string(key) == "mcp-session-id" {
				if h.sessionHeaders == 0 {
					h.session = viewString(value)
				}
				h.sessionHeaders++
			}
		}
		if len(key) == len(principalHeader) && len(key) > 0 && !h.hasPrincipal && string(key) == principalHeader {
			h.principal, h.hasPrincipal = viewString(value), true
		}
	}
}

// viewString views b as a string without copying it (host memory: valid
// during the callback only).
func viewString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// queryUnescape decodes a query parameter value as url.QueryUnescape does
// ('+' is a space, %XX a byte); ok is false for a malformed escape. (The
// plugin does not import net/url: with net/netip it costs the .wasm more
// than the rest of the filter.)
func queryUnescape(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
				return "", false
			}
			b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

// unhex is the value of a hex digit, or -1.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
