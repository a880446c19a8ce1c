// Package differential holds the property over the guard's two sources of
// truth (issue 31): the cursor a client holds and the watermark a replica
// keeps. A replica that saw a stream and one that saw nothing must agree,
// except where the watermark proves more: knowing more may only make the
// answer sharper, never less safe.
//
// Its tests generate response streams in the real layouts of every official
// server SDK (Python's CRLF events with replay-then-prime, TypeScript's
// event/id/data, Go's <stream>_<n> IDs with "event: prime", C#'s id after
// data, Rust's data then id), split them into chunks at random, serve them
// through the guard's own pieces (sse.Rewriter, cursor.StreamTail,
// cursor.Guard over an in-memory shared data), cut them after any event,
// and resume from every cursor a client could hold, on the replica that
// served the stream and on a fresh one, under each unacked_cursor and
// untagged_cursor policy, with minting on and off.
//
// The package has no product code: the replica it drives is the plugin's
// callback order (filter/http.go) over the same cursor and sse calls.
package differential
