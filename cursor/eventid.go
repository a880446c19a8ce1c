package cursor

// Transport is the MCP transport a route serves, and the transport that minted
// an event ID.
type Transport uint8

const (
	// TransportNone means "no known transport": an untagged cursor, or a
	// route the plugin does not guard.
	TransportNone Transport = iota
	// TransportSSE is the legacy HTTP+SSE transport (GET stream + POST messages).
	TransportSSE
	// TransportHTTP is the Streamable HTTP transport.
	TransportHTTP
)

// Tag prefixes of the two transports. The wire format of a tagged event ID is
// the prefix followed by the upstream's ID, byte for byte:
//
//	upstream "e-104" on a legacy route        → "sse:e-104"
//	upstream "1_7" on a Streamable HTTP route → "http:1_7"
const (
	PrefixSSE  = "sse:"
	PrefixHTTP = "http:"
)

// String returns the configuration spelling of t ("sse", "http" or "none").
func (t Transport) String() string {
	switch t {
	case TransportSSE:
		return "sse"
	case TransportHTTP:
		return "http"
	}
	return "none"
}

// Prefix returns the tag prefix of t, or "" for TransportNone.
func (t Transport) Prefix() string {
	switch t {
	case TransportSSE:
		return PrefixSSE
	case TransportHTTP:
		return PrefixHTTP
	}
	return ""
}

// ParseTransport reads a configuration spelling ("sse" or "http").
func ParseTransport(s string) (Transport, bool) {
	switch s {
	case "sse":
		return TransportSSE, true
	case "http":
		return TransportHTTP, true
	}
	return TransportNone, false
}

// AppendTagged appends the tagged form of the upstream event ID id, minted on
// transport t, to dst. Tagging never looks inside id: SplitTagged on the
// result returns t and exactly id, whatever bytes id holds.
func AppendTagged(dst []byte, t Transport, id []byte) []byte {
	dst = append(dst, t.Prefix()...)
	return append(dst, id...)
}

// Tagged returns the tagged form of id (see AppendTagged).
func Tagged(t Transport, id string) string {
	return t.Prefix() + id
}

// SplitTagged splits a cursor received from a client into the transport that
// minted it and the upstream's original ID. A cursor without a known prefix
// returns TransportNone and the cursor unchanged.
//
//	"sse:e-104"     → TransportSSE,  "e-104"
//	"http:sse:x"    → TransportHTTP, "sse:x"  (only one tag is ever removed)
//	"e-104"         → TransportNone, "e-104"
func SplitTagged(cursor string) (Transport, string) {
	// Written to inline (strings.CutPrefix twice does not): every resume
	// parses its cursor.
	switch c := cursor; {
	case len(c) >= len(PrefixSSE) && c[:len(PrefixSSE)] == PrefixSSE:
		return TransportSSE, c[len(PrefixSSE):]
	case len(c) >= len(PrefixHTTP) && c[:len(PrefixHTTP)] == PrefixHTTP:
		return TransportHTTP, c[len(PrefixHTTP):]
	}
	return TransportNone, cursor
}
