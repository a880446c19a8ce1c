// Package sse rewrites a text/event-stream response as it streams through the
// proxy: every SSE "id" field gets the transport's tag prefix inserted at the
// start of its value, nothing else changes, and every dispatched event is
// reported with its original ID, its type, a bounded prefix of its data and
// the kind of JSON-RPC message it carries.
//
//	upstream                      downstream (legacy SSE route)
//	id: e-104                     id: sse:e-104
//	event: message                event: message
//	data: {"jsonrpc":"2.0",...}   data: {"jsonrpc":"2.0",...}
//
// Parsing follows the WHATWG HTML "server-sent events" rules: "\n", "\r\n"
// and "\r" end a line, a leading UTF-8 BOM is skipped, one space after the
// colon is dropped, an id value containing NUL is ignored, and an empty line
// dispatches the event. A reference parser applied to the output sees
// cursor.AppendTagged(t, id) wherever the upstream sent a non-empty id.
//
// The package is bytes in, bytes out: no host calls, no SDK import, no fmt,
// and no allocation per chunk in steady state. Memory per stream is bounded:
// only id and event type values are buffered, up to the configured maximum
// line length (a stream that needs more passes through untouched for its
// remainder, see Rewriter.Overflowed), plus DataPrefixBytes of the current
// event's data, plus the events reported for one chunk (kept up to a fixed
// bound between calls). Data, comments and other fields are never buffered.
// A value whose line lies whole in the chunk is not copied at all: the
// event reports it as a span of the chunk; only the values of an event that
// goes on in the next chunk are copied when the call returns.
//
// The only bytes held back are those of an id line, from its first byte to
// its end: its value must be seen whole to tell whether it is empty or holds
// NUL (then it passes untouched). A client cannot act on a line before its
// end either, so holding it adds no latency a client can observe.
package sse
