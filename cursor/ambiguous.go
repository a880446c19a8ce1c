package cursor

// A request that carries Last-Event-ID or Mcp-Session-Id more than once is
// ambiguous: the guard would judge one value and the upstream might act on
// another. What each side sees in Envoy (source/extensions/common/wasm/context.cc):
//
//   - Context::getHeaderMapValue answers entry[0] of map->get(key), the
//     first value only ("TODO ... This is a potential security issue").
//   - Context::getHeaderMapPairs (headerMapToPairs) iterates the map and
//     hands over every entry, a repeated header as one pair per value: that
//     is how the guard reads a guarded request's headers (headers.go), so it
//     sees the repetition.
//   - Context::replaceHeaderMapValue calls HeaderMapImpl::setCopy, which
//     since Envoy 1.16 removes every entry of the key and adds one
//     (source/common/http/header_map_impl.cc; the old replace-the-first
//     behaviour behind envoy.reloadable_features.http_set_copy_replace_all_headers
//     is gone), so a cursor the guard rewrites reaches the upstream alone.
//   - A request the guard forwards unchanged reaches the upstream with every
//     value (the codecs keep repeated non-inline headers as separate
//     entries), and the upstream picks one of them, not necessarily the
//     first.
//
// The same holds for the session of a legacy message POST, named by the
// query: servers read sessionId or session_id, the first or the last of a
// repeated key (the Python SDK's server: the last session_id). A request on
// a legacy route whose query names its session twice with different values
// is refused the same way.
//
// So the guard refuses such a request on a guarded route with 400 and a
// JSON-RPC error naming the header, before anything is looked up or written:
// nothing reaches the upstream and nothing is tombstoned. Detecting it costs
// nothing beyond the map read the guard makes anyway.

// Ambiguity says which part of a request is named more than once.
type Ambiguity uint8

const (
	// Unambiguous: nothing the guard judges is named twice.
	Unambiguous Ambiguity = iota
	// DuplicateLastEventID: Last-Event-ID more than once.
	DuplicateLastEventID
	// DuplicateSessionID: Mcp-Session-Id more than once.
	DuplicateSessionID
	// DuplicateQuerySession: a legacy request's query names its session
	// more than once with different values (sessionId, session_id).
	DuplicateQuerySession
)

// AmbiguousStatus is the HTTP status of a refused ambiguous request.
const AmbiguousStatus = 400

// ambiguity returns what of r is named more than once: the first of
// Last-Event-ID, Mcp-Session-Id and the query's session.
func (r *Request) ambiguity() Ambiguity {
	switch {
	case r.LastEventIDs > 1:
		return DuplicateLastEventID
	case r.SessionHeaders > 1:
		return DuplicateSessionID
	case r.QuerySessions:
		return DuplicateQuerySession
	}
	return Unambiguous
}

// Bodies of the refusal, built from constants only.
var ambiguousBodies = [...][]byte{
	DuplicateLastEventID:  []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request carries more than one Last-Event-ID header; send exactly one","data":{"reason":"duplicate_header","header":"last-event-id"}}}`),
	DuplicateSessionID:    []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request carries more than one Mcp-Session-Id header; send exactly one","data":{"reason":"duplicate_header","header":"mcp-session-id"}}}`),
	DuplicateQuerySession: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request query names more than one session (sessionId, session_id); send exactly one","data":{"reason":"duplicate_parameter","parameter":"sessionId"}}}`),
}

var ambiguousNames = [...]string{
	DuplicateLastEventID:  "last-event-id header",
	DuplicateSessionID:    "mcp-session-id header",
	DuplicateQuerySession: "session query parameter",
}

// Body returns the JSON-RPC error the refusal answers with (nil for
// Unambiguous).
func (a Ambiguity) Body() []byte {
	if int(a) < len(ambiguousBodies) {
		return ambiguousBodies[a]
	}
	return nil
}

// String names what is repeated, for the warn line ("" for Unambiguous).
func (a Ambiguity) String() string {
	if int(a) < len(ambiguousNames) {
		return ambiguousNames[a]
	}
	return ""
}
