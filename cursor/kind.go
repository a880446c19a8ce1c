package cursor

// EventKind classifies an SSE event by the JSON-RPC message it carries. Only
// the kind of a stream's last event is kept; it decides whether a resume
// cursor that equals that event is a drain race worth acting on.
type EventKind uint8

const (
	// KindOther is an event whose data is not a JSON-RPC message (for
	// example the legacy "endpoint" event) or could not be classified.
	KindOther EventKind = iota
	// KindResponse is a JSON-RPC response carrying a result (or neither
	// result nor error, as the Go SDK encodes a nil result): the tool-call
	// result the seed loses. Batches holding at least one response count as
	// responses.
	KindResponse
	// KindRequest is a server-to-client JSON-RPC request (sampling,
	// elicitation, ping).
	KindRequest
	// KindNotification is a JSON-RPC notification (progress, list changes).
	KindNotification
	// KindPriming is an event with an ID and empty data (MCP 2025-11-25).
	KindPriming
	// KindError is a JSON-RPC error response. It is a response (in scope of
	// the stateful drain-race rule), but kept apart in minted cursors: the
	// TypeScript client resumes a POST stream after a JSON-RPC error, so a
	// cursor saying "error" is not by itself a drain race.
	KindError
)

// IsResponse reports whether k is a JSON-RPC response: a result or an error.
func (k EventKind) IsResponse() bool { return k == KindResponse || k == KindError }

var kindNames = [...]string{"other", "response", "request", "notification", "priming", "error"}

// String returns the kind's lower-case name.
func (k EventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}
