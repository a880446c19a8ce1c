package cursor

import "encoding/json"

// ReinitCode is the JSON-RPC error code of a forced re-initialization
// (implementation-defined server error range).
const ReinitCode = -32001

// ReinitStatus is the HTTP status of a forced re-initialization: MCP tells a
// client that gets 404 for a request carrying Mcp-Session-Id to start a new
// session with a fresh InitializeRequest.
const ReinitStatus = 404

var reinitMessages = [...]string{
	ReasonUnknown:        "resume cursor is unknown to the proxy; start a new session with initialize",
	ReasonUntagged:       "resume cursor carries no transport tag (minted before mcp-resume-guard or invented); start a new session with initialize",
	ReasonCrossTransport: "resume cursor was minted by the other MCP transport and cannot resume this stream; start a new session with initialize",
	ReasonDrainRace:      "resume cursor points at a response that was sent but never acknowledged; resuming would lose it; start a new session with initialize",
	ReasonTombstoned:     "session was closed by the proxy after an unsafe resume; start a new session with initialize",
}

// ReinitBody returns the JSON body of a forced re-initialization for reason:
//
//	{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"...","data":{"reason":"cross_transport"}}}
//
// The body is built from constants only; nothing the client sent is echoed.
func ReinitBody(reason Reason) []byte {
	msg := "start a new session with initialize"
	if int(reason) < len(reinitMessages) && reinitMessages[reason] != "" {
		msg = reinitMessages[reason]
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"`...)
	b = append(b, msg...)
	b = append(b, `","data":{"reason":"`...)
	b = append(b, reason.String()...)
	return append(b, `"}}}`...)
}

// ReinitReason returns error.data.reason of a re-initialization body
// (ReinitBody's wire name of the reason), or "" when body is not one. For
// logs and tests that read the plugin's replies; the plugin never parses one.
func ReinitReason(body []byte) string {
	var msg struct {
		Error struct {
			Data struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return ""
	}
	return msg.Error.Data.Reason
}
