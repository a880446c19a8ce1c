package cursor

import "strings"

// The legacy HTTP+SSE transport names a session in a URL's query: the
// message endpoint's (POST /messages?sessionId=…) and the one the stream's
// endpoint event announces. These rules say which session a legacy request
// or stream belongs to.

// LegacyRequestSession returns the session of a request on a legacy (sse)
// route whose Mcp-Session-Id is header ("" when absent) and whose path is
// path: the header's, or else for the message endpoint (any method but
// GET) the one its query names. ambiguous reports that the query names
// more than one (QuerySession), which the Guard refuses. A GET opens a
// stream, whose session is the one its endpoint event names
// (EndpointSession), never one its query claims.
func LegacyRequestSession(method, header, path string) (session string, ambiguous bool) {
	q, ambiguous := QuerySession(path)
	if header == "" && method != "GET" {
		return q, ambiguous
	}
	return header, ambiguous
}

// EndpointSession returns the session a legacy stream's endpoint event
// announces in its data (the message URL), "" when it names none or more
// than one: a stream learns its session from the first endpoint event that
// names exactly one.
func EndpointSession(data string) string {
	if s, ambiguous := QuerySession(data); !ambiguous {
		return s
	}
	return ""
}

// QuerySession returns the session the query of a request path or URL
// names ("/messages?sessionId=abc"), with the sessionId or session_id
// parameter, unescaped as url.QueryUnescape does; "" when it names none.
// ambiguous reports that it names more than one (the parameter repeated, or
// both spellings, with different values): servers disagree on which one
// counts (the Python SDK's, through Starlette's QueryParams, takes the last
// session_id), so the guard must not judge by either. session may be a view
// of pathOrURL.
func QuerySession(pathOrURL string) (session string, ambiguous bool) {
	_, q, ok := strings.Cut(pathOrURL, "?")
	if !ok {
		return "", false
	}
	q, _, _ = strings.Cut(q, "#")
	found := false
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != "sessionId" && k != "session_id" {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			if u, ok := queryUnescape(v); ok {
				v = u
			}
		}
		if found && v != session {
			return "", true
		}
		session, found = v, true
	}
	return session, false
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
