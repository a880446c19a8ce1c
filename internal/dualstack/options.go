package dualstack

import (
	"fmt"
	"log/slog"
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
}
