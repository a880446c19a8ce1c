package reliability

import (
	"strconv"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// The exchanges of these tests have the shape of make bench's
// (tools/internal/bench/traffic.go), which runs the full-size churn: a
// Streamable HTTP client of the 2025-06-18 protocol at /mcp. They are
// written out here because the bench lives in the tools module, which
// this module does not require.

// sessionID returns the session ID of session number i, shaped like the IDs
// MCP servers mint (a UUID-sized random-looking string).
func sessionID(i int) string {
	h := uint64(i)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	return "s-" + strconv.FormatUint(h, 16) + "-" + strconv.Itoa(i)
}

// clientHeaders are the request headers every exchange carries, then extra.
func clientHeaders(method, session string, extra ...wasmhost.Header) wasmhost.Headers {
	h := wasmhost.Headers{
		{Key: ":authority", Value: "mcp.example.test"}, {Key: ":path", Value: "/mcp"},
		{Key: ":method", Value: method}, {Key: ":scheme", Value: "https"},
	}
	h = append(h, extra...)
	return append(h,
		wasmhost.Header{Key: "mcp-session-id", Value: session},
		wasmhost.Header{Key: "mcp-protocol-version", Value: "2025-06-18"})
}

// postRequest is a Streamable HTTP POST carrying a session and no cursor:
// the common request.
func postRequest(session string) wasmhost.Exchange {
	return wasmhost.Exchange{
		Request: clientHeaders("POST", session,
			wasmhost.Header{Key: "content-type", Value: "application/json"},
			wasmhost.Header{Key: "accept", Value: "application/json, text/event-stream"}),
		Response: wasmhost.Headers{{Key: ":status", Value: "202"}, {Key: "content-length", Value: "0"}},
	}
}

// sseHeaders are the upstream's answer with an event stream.
func sseHeaders() wasmhost.Headers {
	return wasmhost.Headers{
		{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"},
		{Key: "cache-control", Value: "no-cache"},
	}
}

// resumeAt is a Streamable HTTP GET resuming session at the tagged cursor
// (e.g. "http:e-41"), answered with an event stream without a body.
func resumeAt(session, cursor string) wasmhost.Exchange {
	x := wasmhost.Exchange{
		Request:  clientHeaders("GET", session, wasmhost.Header{Key: "accept", Value: "text/event-stream"}),
		Response: sseHeaders(),
	}
	x.Request = append(x.Request, wasmhost.Header{Key: "last-event-id", Value: cursor})
	return x
}

// eventStream is a Streamable HTTP GET of session without a cursor,
// answered with body as an event stream in the given chunks.
func eventStream(session string, body [][]byte) wasmhost.Exchange {
	return wasmhost.Exchange{
		Request:      clientHeaders("GET", session, wasmhost.Header{Key: "accept", Value: "text/event-stream"}),
		Response:     sseHeaders(),
		ResponseBody: body,
	}
}
