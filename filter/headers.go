package main

import (
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
)

// Request headers are read one value at a time, and only once the request
// is known to be guarded. A single-value read costs one host call (plus one
// re-entry into the guest's allocator when the header is present); reading
// the whole map would cost a copy of every header and a [][2]string built
// from them on every request the sidecar forwards, guarded or not.
//
// Values read from the host are only valid during the callback that read
// them (the ABI glue reuses the buffers the host fills): everything kept on
// the stream context is copied (the session is kept as its digest only).

// requestRoute is what a request's route says about it.
type requestRoute struct {
	transport cursor.Transport // TransportNone: not guarded
	path      string           // :path, when the configuration matched on it ("" otherwise)
	pathRead  bool
}

// matchRoute decides whether the request is guarded from the route name
// property alone (when an entry names a route) and :path alone (when an
// entry matches a prefix): an unguarded request costs one or two host calls.
func matchRoute(cfg *config.Config) requestRoute {
	var r requestRoute
	var routeName string
	if cfg.NeedsRouteName() {
		if b, err := proxywasm.GetProperty(propRouteName); err == nil {
			routeName = unsafe.String(unsafe.SliceData(b), len(b))
		}
	}
	if needsPath(cfg) {
		r.path, _ = proxywasm.GetHttpRequestHeader(":path")
		r.pathRead = true
	}
	r.transport = cfg.Match(routeName, r.path)
	return r
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
type requestHeaders struct {
	method, lastEventID string
	// session is the request's session: Mcp-Session-Id or, on a legacy
	// route, the sessionId (or session_id) query parameter. Like the other
	// fields it is host memory, valid during the callback only.
	session string
	// sessionHeader is the first Mcp-Session-Id value; hasLastEventID and
	// hasSessionHeader report whether the headers are present at all, even
	// empty (ambiguous.go checks them for duplicates).
	sessionHeader                    string
	hasLastEventID, hasSessionHeader bool
}

// readRequestHeaders reads the headers of a guarded request. Like the
// host's single-value lookup, each field takes the first value of its
// header; a header the host cannot return reads as empty.
func readRequestHeaders(r requestRoute) (h requestHeaders) {
	h.method, _ = proxywasm.GetHttpRequestHeader(":method")
	var err error
	h.lastEventID, err = proxywasm.GetHttpRequestHeader("last-event-id")
	h.hasLastEventID = err == nil
	session, err := proxywasm.GetHttpRequestHeader("mcp-session-id")
	h.sessionHeader, h.hasSessionHeader = session, err == nil
	if session == "" && r.transport == cursor.TransportSSE {
		path := r.path
		if !r.pathRead {
			path, _ = proxywasm.GetHttpRequestHeader(":path")
		}
		session = queryParam(path, "sessionId", "session_id")
	}
	h.session = session
	return h
}

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
