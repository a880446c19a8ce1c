package bench

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Traffic shape (issue 5): SSE streams of 90% notifications of about 200
// bytes and 10% JSON-RPC responses of about 2 KB, delivered in 16 KiB
// chunks.
const (
	ChunkBytes        = 16 << 10
	NotificationBytes = 200
	ResponseBytes     = 2048
	ResponseShare     = 0.10
)

// Route configuration the guard runs with in every benchmark: the paths of
// both transports are guarded.
const GuardConfig = `{"routes":[
 {"path_prefix":"/mcp","transport":"http"},
 {"path_prefix":"/sse","transport":"sse"},
 {"path_prefix":"/messages","transport":"sse"}]}`

// DefaultMaxSessions is max_sessions in GuardConfig (the plugin's default).
const DefaultMaxSessions = 10000

// GuardConfigWith returns GuardConfig with max_sessions set.
func GuardConfigWith(maxSessions int) string {
	return strings.TrimSuffix(GuardConfig, "}") + `,"max_sessions":` + strconv.Itoa(maxSessions) + `}`
}

// SSEStream returns about size bytes of MCP Streamable HTTP traffic: events
// with ids e-<first>, e-<first+1>, ..., each a notification (90%) or a
// JSON-RPC response (10%), chosen by a generator seeded with seed.
func SSEStream(size int, first int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]byte, 0, size+ResponseBytes)
	for id := first; len(out) < size; id++ {
		if r.Float64() < ResponseShare {
			out = appendResponse(out, id)
		} else {
			out = appendNotification(out, id)
		}
	}
	return out
}

// appendNotification appends a progress notification event of about
// NotificationBytes bytes.
func appendNotification(b []byte, id int) []byte {
	start := len(b)
	b = append(b, "id: e-"...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok-"...)
	b = strconv.AppendInt(b, int64(id%97), 10)
	b = append(b, "\",\"progress\":"...)
	b = strconv.AppendInt(b, int64(id%100), 10)
	b = append(b, ",\"total\":100,\"message\":\""...)
	b = pad(b, start+NotificationBytes-len("\"}}\n\n"))
	return append(b, "\"}}\n\n"...)
}

// appendResponse appends a tools/call result event of about ResponseBytes
// bytes.
func appendResponse(b []byte, id int) []byte {
	start := len(b)
	b = append(b, "id: e-"...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""...)
	b = pad(b, start+ResponseBytes-len("\"}],\"isError\":false}}\n\n"))
	return append(b, "\"}],\"isError\":false}}\n\n"...)
}

const filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit; "

func pad(b []byte, n int) []byte {
	for len(b) < n {
		k := min(n-len(b), len(filler))
		b = append(b, filler[:k]...)
	}
	return b
}

// Session returns the session ID of session number i, shaped like the IDs
// MCP servers mint (a UUID-sized random-looking string).
func Session(i int) string {
	h := uint64(i)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	s := strconv.FormatUint(h, 16)
	return "s-" + s + "-" + strconv.Itoa(i)
}

// Request is a Streamable HTTP POST carrying a session and no cursor: the
// common request.
func Request(session string) wasmhost.Exchange {
	return wasmhost.Exchange{
		Request: wasmhost.Headers{
			{Key: ":authority", Value: "mcp.example.test"}, {Key: ":path", Value: "/mcp"},
			{Key: ":method", Value: "POST"}, {Key: ":scheme", Value: "https"},
			{Key: "content-type", Value: "application/json"},
			{Key: "accept", Value: "application/json, text/event-stream"},
			{Key: "mcp-session-id", Value: session},
			{Key: "mcp-protocol-version", Value: "2025-06-18"},
			{Key: "user-agent", Value: "bench-client/1.0"},
		},
		Response: wasmhost.Headers{
			{Key: ":status", Value: "202"}, {Key: "content-length", Value: "0"},
		},
	}
}

// Unguarded is an ordinary request on a path no route of GuardConfig
// matches: what every other request through an Istio sidecar looks like to
// the plugin.
func Unguarded(session string) wasmhost.Exchange {
	x := Request(session)
	x.Request[1].Value = "/api/v1/orders" // Request returns fresh headers
	x.Response = wasmhost.Headers{
		{Key: ":status", Value: "200"}, {Key: "content-type", Value: "application/json"},
		{Key: "content-length", Value: "2"},
	}
	return x
}

// Resume is a Streamable HTTP GET resuming session at the tagged cursor
// (e.g. "http:e-41"); the upstream answers with an event stream whose body
// is not part of the measure.
func Resume(session, cursor string) wasmhost.Exchange {
	x := Stream(session, nil)
	x.Request = append(x.Request, wasmhost.Header{Key: "last-event-id", Value: cursor},
		wasmhost.Header{Key: "user-agent", Value: "bench-client/1.0"})
	return x
}

// Stream is a Streamable HTTP GET of session without a cursor, answered with
// body as an event stream in the given chunks.
func Stream(session string, body [][]byte) wasmhost.Exchange {
	return wasmhost.Exchange{
		Request: wasmhost.Headers{
			{Key: ":authority", Value: "mcp.example.test"}, {Key: ":path", Value: "/mcp"},
			{Key: ":method", Value: "GET"}, {Key: ":scheme", Value: "https"},
			{Key: "accept", Value: "text/event-stream"},
			{Key: "mcp-session-id", Value: session},
			{Key: "mcp-protocol-version", Value: "2025-06-18"},
		},
		Response: wasmhost.Headers{
			{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"},
			{Key: "cache-control", Value: "no-cache"},
		},
		ResponseBody: body,
	}
}
