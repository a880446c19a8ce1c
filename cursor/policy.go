package cursor

// UntaggedPolicy says what to do with a cursor that carries no transport tag:
// one minted before the filter was deployed, or by a client that invented it.
type UntaggedPolicy uint8

const (
	// UntaggedReinit forces a re-initialization (the default).
	UntaggedReinit UntaggedPolicy = iota
	// UntaggedPassthrough forwards the cursor unchanged; meant for the
	// rollout window, while clients still hold pre-filter cursors.
	UntaggedPassthrough
)

// UnackedPolicy says what to do when a cursor equals the last event of a
// stream that was cut before it was acknowledged (the drain race).
type UnackedPolicy uint8

const (
	// UnackedReinit forces a re-initialization (the zero value; the
	// configuration's default is UnackedRewind, see config.Default).
	UnackedReinit UnackedPolicy = iota
	// UnackedRewind forwards the stream's previous event ID instead, so an
	// upstream that replays strictly after the cursor replays the unacked
	// event again (at-least-once: the tool ran once, the client gets its
	// result; an SDK client ignores a response for a request it already
	// finished). The configuration's default.
	UnackedRewind
	// UnackedObserve forwards the cursor (tag stripped) and only logs.
	UnackedObserve
)

// Scope says which kinds of last event make a drain race worth acting on.
type Scope uint8

const (
	// ScopeResponses acts only when the unacked event is a JSON-RPC
	// response or error (the default: that is the result the seed loses).
	ScopeResponses Scope = iota
	// ScopeAll acts on every kind of event except priming events.
	ScopeAll
)

// ReplayMode declares how the upstream replays after a cursor.
type ReplayMode uint8

const (
	// ReplayExclusive: the upstream replays events strictly after the
	// cursor (every SDK today; the default).
	ReplayExclusive ReplayMode = iota
	// ReplayInclusive: the upstream already replays the cursor's own event;
	// a drain race then needs no action, only the log line.
	ReplayInclusive
)

// UnknownPolicy says what to do with a same-transport cursor for which the
// filter holds no watermark (no record for the session, or no stream tail
// that mentions the cursor).
type UnknownPolicy uint8

const (
	// UnknownForward forwards the cursor with its tag stripped (the default).
	UnknownForward UnknownPolicy = iota
	// UnknownReinit forces a re-initialization, unless the guard mints
	// self-describing cursors (Policy.Minting): the strict mode of a single
	// proxy with stateful cursors.
	UnknownReinit
)

// Policy gathers the configurable parts of the resume decision.
type Policy struct {
	Untagged UntaggedPolicy
	Unacked  UnackedPolicy
	Scope    Scope
	Replay   ReplayMode
	Unknown  UnknownPolicy
	// Minting says that the guard mints self-describing IDs (the
	// configuration's mint_cursors): every response event it serves then
	// carries a minted ID, so a plain cursor no watermark mentions names an
	// event that was not a response, and resuming from it loses no result.
	// UnknownReinit then has nothing left to guard and no longer refuses
	// it: a clean resume that reaches another replica is not refused.
	Minting bool
}

// InScope reports whether an unacknowledged last event of kind k makes a
// drain race under p. A priming event (an ID with empty data, MCP
// 2025-11-25) never does: resuming from it loses nothing, it is the very
// point resumability exists for.
func (p Policy) InScope(k EventKind) bool {
	return k.IsResponse() || p.Scope == ScopeAll && k != KindPriming
}

// prevInScope is InScope for the event before a tail's last, whose kind a
// tail keeps only as a class: KindOther there means nothing is known (a
// resume cursor, a record of an earlier build), never "in scope".
func (p Policy) prevInScope(k EventKind) bool {
	return k != KindOther && p.InScope(k)
}

// cursorInScope reports whether a minted cursor that says its event was of
// kind k makes a drain race under p when no watermark mentions it: a result
// always, an error only under ScopeAll (clients resume after a JSON-RPC
// error, so an error cursor alone is no sign of a lost result).
func (p Policy) cursorInScope(k EventKind) bool {
	return k == KindResponse || k == KindError && p.Scope == ScopeAll
}
