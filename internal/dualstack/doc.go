// Package dualstack is a reference MCP server that serves one logical endpoint
// over both MCP HTTP transports on one port, and that has the bug described in
// the project's seed incident on purpose.
//
// # Transports
//
// Legacy HTTP+SSE (protocol 2024-11-05):
//
//	GET  /sse                      opens the session's event stream; the first
//	                               event is "event: endpoint" (no id) with
//	                               "data: /messages?sessionId=s-…"
//	POST /messages?sessionId=s-…   one JSON-RPC message; 202 Accepted; the
//	                               answer goes out on the session's stream as
//	                               "event: message" with "id: e-N"
//
// Streamable HTTP (protocols 2025-03-26, 2025-06-18, 2025-11-25):
//
//	POST   /mcp   initialize (no Mcp-Session-Id) creates a session and answers
//	              with the Mcp-Session-Id header; other requests need the header.
//	              Requests are answered as text/event-stream when the Accept
//	              header allows it (a priming event, an ID with empty data,
//	              first), as application/json otherwise; notifications and
//	              responses get 202.
//	GET    /mcp   the session's standalone stream; with Last-Event-ID it first
//	              replays the session's events after the cursor.
//	DELETE /mcp   ends the session (204).
//
// # The seed's conditions, reproduced on purpose
//
//   - One event-ID allocator for both listeners: every event of every session
//     and transport gets the next "e-N" of one process-wide counter, starting
//     at [Options.FirstEventID].
//   - Legacy sessions are bridged into the Streamable HTTP session store: the
//     sessionId of a GET /sse stream is a valid Mcp-Session-Id at /mcp.
//   - Resumption replays, per session, every event the server ever sent to that
//     session on either transport whose ID comes strictly after the cursor
//     ([ReplayExclusive]), or from the cursor itself ([ReplayInclusive]).
//     A cursor minted by the legacy listener is therefore "plausible" at /mcp.
//   - An event written to a stream is considered delivered; nothing is re-sent
//     unless a resume asks for it.
//
// A cursor that is not an event of the session answers 400 (as the official Go
// SDK does); an unknown session answers 404.
//
// # Seed arrangement
//
// With FirstEventID 100, a client that opens GET /sse and posts initialize,
// notifications/initialized, tools/list and a tools/call of search_index with
// a progress token sees e-100 (initialize result), e-101 (tools/list result),
// e-102 and e-103 (progress of the call) and e-104 (the call's result). The
// endpoint event carries no ID. [Server.EmitProgress] (or POST
// /debug/progress) then emits e-105, a progress notification for another
// request, which is the first event a resume from e-104 replays.
//
// # Routing of events
//
// A request's progress and response go to the stream of that request: the
// POST /mcp SSE answer, or for a legacy POST the session's default stream.
// The default stream of a session, which also carries notifications that
// belong to no open request ([Server.EmitProgress]), is the legacy GET /sse
// stream while it is open, else the newest open GET /mcp stream. An event
// whose stream is gone is still logged (as carried by [TransportNone]) and
// so only a resume can deliver it. GET /sse opens a new session and ignores
// Last-Event-ID, unless [Options.LegacyResume]: then, as the seed's migration
// shim, it resumes the session whose log holds the cursor (endpoint event
// again, then the replay). Legacy POSTs are run before the 202 is answered,
// so their events are queued in order.
//
// # The Python SDK's layout
//
// With [Options.Layout] LayoutPython or LayoutPythonOneChunk (or the header
// [HeaderLayout] on an initialize request, for one session), /mcp answers
// as the official Python SDK's server does with an event store and a retry
// interval (src/mcp/server/streamable_http.py), under 2025-11-25 polling
// (SEP-1699):
//
//	POST tools/call   id: <uuid>\r\ndata: \r\nretry: <ms>\r\n\r\n      then the stream closes
//	GET + Last-Event-ID: <that id>
//	                  id: <uuid>\r\nevent: message\r\ndata: <progress>\r\n\r\n
//	                  id: <uuid>\r\nevent: message\r\ndata: <result>\r\n\r\n
//	                  id: <uuid>\r\ndata: \r\nretry: <ms>\r\n\r\n      then the stream closes
//
// The GET replays the events of the cursor's stream strictly after the
// cursor (_replay_events) and then writes a fresh priming event, so a
// result is not the last event of its stream: the client's cursor may stay
// at the result while the stream's last event is the priming event. In
// LayoutPython each event is flushed on its own (the SDK awaits every send),
// with [Options.EventGap] between them; in LayoutPythonOneChunk the events
// ready together go out in one body chunk. Requests of protocols before
// 2025-11-25 get no priming event and no polling, as from the SDK.
//
// # Test hooks
//
// [Server.ToolRuns], [Server.Sessions], [Server.Events] and [Server.Stats]
// read the server's state; over HTTP, for a server in another process:
//
//	GET  /debug/stats                 {"search_index_runs":N,"slow_op_runs":N,"sessions":N,"resumes":N,"next_event_id":"e-N","replay":"exclusive"}
//	GET  /debug/sessions              [{"id":"s-…","origin":"sse","events":N,"lastEventId":"e-N","openStreams":N}, …]
//	GET  /debug/events?sessionId=s-…  the session's log: [{"id":"e-N","kind":"response","transport":"sse","data":{…}}, …]
//	POST /debug/progress              {"sessionId":"s-…","progressToken":"other-request","progress":1,"total":2}
//	                                  emits a notifications/progress to the session's default stream; answers {"eventId":"e-N"}
//
// A POST /mcp with the header "X-Dualstack-Hold: 1" ([HeaderHold], or
// [Options.HoldPostStreams] for all) keeps its SSE answer open after the
// result was written, so a client or proxy can cut it after the send. The
// package seedclient plays the seed scenario and its variants against any
// base URL (this server or a proxy in front of it).
package dualstack
