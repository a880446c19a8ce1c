// Package sse rewrites a text/event-stream response as it streams through the
// proxy: every SSE "id" field gets the transport's tag prefix, nothing else
// changes, and every dispatched event is reported with its original ID, its
// type, a bounded prefix of its data and the kind of JSON-RPC message it
// carries.
//
//	upstream                      downstream (legacy SSE route)
//	id: e-104                     id: sse:e-104
//	event: message                event: message
//	data: {"jsonrpc":"2.0",...}   data: {"jsonrpc":"2.0",...}
//
// The Rewriter is a pipeline of three stages, one file each; the state that
// crosses chunks is a handful of named fields of Rewriter:
//
//	chunk → scan (scan.go)       → event (event.go, idline.go)     → classify (classify.go)
//	        lines: "\n", "\r\n",   data kept ≤ DataPrefixBytes;      ResponseClass, through
//	        "\r", across chunks;   id line tagged in place, or       the memo (memo.go), for
//	        BOM; a cut line's      held and minted at dispatch       the minted cursor;
//	        name in head           (cursor.AppendMinted)             Classify for Event.Kind
//
// rewrite.go is the entry (Rewrite), rewriter.go the Rewriter, its state
// and API; end.go the end of a stream inside an event; idline.go also the
// overflow of a too long value; eol.go the search for a line's end. Each file
// calls only the stages after it. While minting, scan hands an event of the
// SDKs' usual shape, whole in the chunk, to fastpath.go, which takes it in
// one call with the bytes, events and state the two stages would give.
//
// With minting on (Rewriter.SetMint), the ID also tells what the event was:
// each event's id line is held until the empty line that dispatches the
// event and written just before it, its value replaced by a self-describing
// cursor (cursor.AppendMinted: for a JSON-RPC response, its kind and the
// stream's previous ID; for anything else, prefix+id as above):
//
//	upstream                      downstream (Streamable HTTP route)
//	event: message                event: message
//	id: abc_7                     data: {"jsonrpc":"2.0","id":7,"result":{}}
//	data: {"jsonrpc":"2.0","id":7,"result":{}}
//	                              id: http:~1r5.4.abc_76
//
// The kind is known only from the data, which SDK servers write after the
// id; a client cannot tell the difference, because an EventSource applies an
// event's id field only when the event dispatches ("set the last event ID
// string to the value of the last event ID buffer"): where the line sits
// inside its event is not observable. An event the stream leaves
// unterminated is discarded by WHATWG readers, but the Go SDK's reader
// dispatches it at EOF: its held id line then goes out as a line of its own
// (after ending a partly written last line), minted, so that either reader
// sees what it saw without the rewriter, IDs aside. Events whose id already
// comes last (C#, Rust rmcp) come out as they came, but for the value. Two
// kinds of id line are not lines of their own to the Go SDK's reader, which
// ends lines at '\n' only and keeps a leading BOM: the stream's first line
// after a BOM, and every line from the first one a lone '\r' ends on. Those
// are tagged in place, never held.
//
// Parsing follows the WHATWG HTML "server-sent events" rules: "\n", "\r\n"
// and "\r" end a line, a leading UTF-8 BOM is skipped, one space after the
// colon is dropped, an id value containing NUL is ignored, and an empty line
// dispatches the event. A reference parser applied to the output sees
// cursor.AppendTagged(t, id) wherever the upstream sent an id that is not blank (an empty one, or one of white space only, which on the wire is no cursor, passes untouched) (when
// minting, the minted cursor of that event).
//
// The package is bytes in, bytes out: no host calls, no SDK import, no fmt,
// and no allocation per chunk in steady state. Memory per stream is bounded:
// only id and event type values are buffered, up to the configured maximum
// line length (a stream that needs more passes through untouched for its
// remainder, see Rewriter.Overflowed), plus DataPrefixBytes of the current
// event's data (an endpoint event's up to the maximum line length), plus the
// events reported for one chunk (kept up to a fixed bound between calls).
// Data, comments and other fields are never buffered beyond that prefix.
//
// The only bytes held back are those of id lines: one from its first byte to
// its end, since its value must be seen whole to tell whether it is empty or
// holds NUL (then it passes untouched), and, when minting, the event's id
// line until the event dispatches. A client cannot act on either before
// then, so holding them adds no latency a client can observe.
package sse
