package cursor

// EventKind classifies an SSE event by the JSON-RPC message it carries. Only
// the kind of a stream's last event is kept; it decides whether a resume
// cursor that equals that event is a drain race worth acting on.
type EventKind uint8

const (
	// KindOther is an event whose data is not a JSON-RPC message (for
	// example the legacy "endpoint" event) or could not be classified.
	KindOther EventKind = iota
	// KindResponse is a JSON-RPC response or error: the tool-call result the
	// seed loses. Batches holding at least one response count as responses.
	KindResponse
	// KindRequest is a server-to-client JSON-RPC request (sampling,
	// elicitation, ping).
	KindRequest
	// KindNotification is a JSON-RPC notification (progress, list changes).
	KindNotification
	// KindPriming is an event with an ID and empty data (MCP 2025-11-25).
	KindPriming
)

var kindNames = [...]string{"other", "response", "request", "notification", "priming"}

// String returns the kind's lower-case name.
func (k EventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}
