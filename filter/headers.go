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
// (when an entry names a route) and :path (when an entry matches a prefix),
// read alone: most requests through a sidecar are not MCP, and for them that
// is the only read. A guarded request's headers are then read in one host
// call: one copy of the whole map (proxy_get_header_map_pairs), scanned in
// place once (headermap.ScanRequest). A single-value read can never show a
// repeated header (Envoy's getHeaderMapValue answers the first value only),
// which the map does.
//
// Values read from the host are only valid during the callback that read
// them (the ABI glue reuses the buffers the host fills): everything kept on
// the stream context is copied (the session is kept as its digest only).

// routeHeaders reads what a request's route and headers say: the transport
// of its route (TransportNone: not guarded) and, for a guarded request, its
// headers, into h. ok is false when the host cannot return :path or, for a
// guarded request, the map, or returns a map that is malformed: the request
// passes, and OnHttpRequestHeaders counts it.
func routeHeaders(p *pluginContext, h *requestHeaders) (t cursor.Transport, ok bool) {
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
	if t = p.cfg.Match(routeName, path); t == cursor.TransportNone {
		return t, true
	}
	if path, ok = readHeaderMap(p.cfg.PrincipalHeader, h); !ok {
		return t, false
	}
	if t == cursor.TransportSSE {
		h.addQuerySession(path)
	}
	return t, true
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
	// once with different values (legacy routes: cursor.Guard refuses it).
	querySessions bool
	// principal is the first value of the configured principal header
	// (config.Config.PrincipalHeader); hasPrincipal reports whether it is
	// present at all.
	principal    string
	hasPrincipal bool
	// lastEventIDs and sessionHeaders count the Last-Event-ID and
	// Mcp-Session-Id entries, empty ones too (cursor.Guard refuses more
	// than one).
	lastEventIDs, sessionHeaders int
}

// readHeaderMap reads the request header map (requestHeaderPairs) into h,
// each field the first value of its header, as the host's single-value
// lookup would, and returns the map's first :path. ok is false when the
// host cannot return the map or returns one that is malformed.
func readHeaderMap(principalHeader string, h *requestHeaders) (path string, ok bool) {
	pairs, ok := requestHeaderPairs()
	if !ok {
		return "", false
	}
	return scanRequestHeaders(pairs, principalHeader, h)
}

// addQuerySession completes the headers of a legacy (sse) request from the
// query of its path (cursor.LegacyRequestSession).
func (h *requestHeaders) addQuerySession(path string) {
	h.session, h.querySessions = cursor.LegacyRequestSession(h.method, h.session, path)
}

// scanRequestHeaders fills h from pairs, a whole header map in the
// proxy-wasm serialization, and returns its first :path: one walk of the
// map (headermap.ScanRequest). principalHeader is lower-case
// (config.Config.PrincipalHeader), as Envoy's keys are. An empty pairs is
// an empty map; ok is false when pairs does not parse, or holds bytes
// beyond its last entry (h is then left as it was).
func scanRequestHeaders(pairs []byte, principalHeader string, h *requestHeaders) (path string, ok bool) {
	var r headermap.Request
	if !headermap.ScanRequest(pairs, principalHeader, &r) {
		return "", false
	}
	h.method = viewString(r.Method)
	h.lastEventID, h.lastEventIDs = viewString(r.LastEventID), r.LastEventIDs
	h.session, h.sessionHeaders = viewString(r.Session), r.Sessions
	h.principal, h.hasPrincipal = viewString(r.Principal), r.HasPrincipal
	return viewString(r.Path), true
}

// viewString views b as a string without copying it (host memory: valid
// during the callback only).
func viewString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
