package dualstack

import (
	"fmt"
	"log/slog"
	"time"
)

// ReplayMode is the resumption contract of the server.
type ReplayMode int

const (
	// ReplayExclusive replays the events strictly after the cursor
	// (at-most-once): the seed's contract, which loses an event that was sent
	// but not drained when the cursor names it.
	ReplayExclusive ReplayMode = iota
	// ReplayInclusive replays from the cursor itself (at-least-once; the client
	// dedupes by event ID).
	ReplayInclusive
)

// String returns "exclusive" or "inclusive".
func (m ReplayMode) String() string {
	switch m {
	case ReplayExclusive:
		return "exclusive"
	case ReplayInclusive:
		return "inclusive"
	}
	return fmt.Sprintf("ReplayMode(%d)", int(m))
}

// ParseReplayMode parses "exclusive" (or "") and "inclusive".
func ParseReplayMode(s string) (ReplayMode, error) {
	switch s {
	case "", "exclusive":
		return ReplayExclusive, nil
	case "inclusive":
		return ReplayInclusive, nil
	}
	return 0, fmt.Errorf("replay mode %q: want exclusive or inclusive", s)
}

// Options configure a [Server]. The zero value is usable.
type Options struct {
	// FirstEventID is the counter value of the first event ID minted
	// (default 1). 100 reproduces the seed's e-100 … e-105.
	FirstEventID int
	// Replay selects the resumption contract (default ReplayExclusive, the
	// seed's).
	Replay ReplayMode
	// Logger receives one line per HTTP request. Nil discards.
	Logger *slog.Logger
	// SessionIDBytes is the length of the session IDs the server mints
	// (default 18: "s-" and 16 hex digits). Longer IDs are shaped like a JWT
	// (visible ASCII, three dot-separated base64url parts), as servers that
	// use a JWT or encrypted state as session ID mint them. Values too small
	// for that shape (under 43) mean the default.
	SessionIDBytes int
	// NoPriming disables the priming event (an event ID with empty data) that
	// starts every POST /mcp SSE response.
	NoPriming bool
	// PreferJSON answers POST /mcp requests with application/json even when
	// the client also accepts text/event-stream.
	PreferJSON bool
	// HoldPostStreams keeps every POST /mcp SSE response open after the
	// result was written, as the header "X-Dualstack-Hold: 1" does for one
	// request.
	HoldPostStreams bool
	// LegacyResume lets a GET /sse with Last-Event-ID resume a legacy
	// stream, as the seed's migration shim does: the session is the one
	// whose log holds the cursor (IDs are unique across sessions, from the
	// one allocator), the stream starts again with its endpoint event, then
	// replays the session's events after the cursor under Replay. A cursor
	// that names no logged event answers 400. Off, GET /sse always opens a
	// new session and ignores Last-Event-ID.
	LegacyResume bool
	// Layout is how the Streamable HTTP sessions write and resume their
	// streams (default LayoutDefault; [HeaderLayout] on an initialize
	// request chooses per session). In the Python layouts (the official
	// Python SDK's server, src/mcp/server/streamable_http.py, with the
	// example event store and a retry interval):
	//   - events are "id", "event: message", "data" with CRLF line ends;
	//     priming events "id", empty "data", "retry" (RetryMillis);
	//   - event IDs are random UUIDs, session IDs uuid4().hex (unless
	//     SessionIDBytes asks for a JWT-shaped one);
	//   - priming events go only to requests of protocol 2025-11-25 or
	//     later (the initialize request's protocolVersion, else the
	//     MCP-Protocol-Version header, default 2025-03-26);
	//   - a tools/call's POST stream closes right after its priming event
	//     (SEP-1699 polling); the call's events are logged under its
	//     request's stream;
	//   - GET with Last-Event-ID replays the cursor's stream only, strictly
	//     after the cursor (under ReplayExclusive), then writes a fresh
	//     priming event and closes; a cursor the session never sent answers
	//     an empty stream, not 400.
	Layout Layout
	// RetryMillis is the retry field of the Python layouts' priming events
	// (the SDK's retry_interval); 0 writes none, and clients fall back to
	// their own reconnect delay.
	RetryMillis int
	// EventGap is a pause between events that the Python layout
	// (LayoutPython, not LayoutPythonOneChunk) writes one after the other
	// (a replay and its priming event, queued progress and result). The
	// SDK awaits between them, but on loopback back-to-back writes often
	// reach a proxy in one read; a gap of a few milliseconds keeps them in
	// separate body chunks, so tests can tell the two layouts apart.
	EventGap time.Duration
}
