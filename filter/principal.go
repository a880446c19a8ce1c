package main

import (
	"strconv"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
)

// principal returns the request's principal: the digest of the configured
// credential header (config.Config.PrincipalHeader, "authorization" by
// default; cursor.NoPrincipal without the header or with principal_header
// ""). It is read at most once per stream, and only where it is needed, so
// an ordinary request of a session never tombstoned does not read it:
//
//   - at the end of a stream whose tail is in shared data (OnHttpStreamDone:
//     Envoy makes the request headers readable again in the log phase), to
//     make it the record's owner, a principal the upstream served the
//     session to (cursor.Store.EndStream, cursor.Record.Owner);
//   - on a request with a cursor (Store.LoadAs) or when the session has a
//     tombstone (Tombstones.Until): a tombstone is written only when the
//     record's owner is the refused request's principal, and binds the
//     session to it, and a request is refused as tombstoned only for the
//     tombstone's principal. A third party who knows a session ID but not
//     its owner's credentials gets its own request refused, and writes
//     nothing.
func (h *httpContext) principal() cursor.Principal {
	if h.principalRead {
		return h.principalKey
	}
	h.principalRead, h.principalKey = true, cursor.NoPrincipal
	if name := h.plugin.cfg.PrincipalHeader; name != "" {
		if v, err := proxywasm.GetHttpRequestHeader(name); err == nil && v != "" {
			h.principalKey = cursor.PrincipalOf(v)
		}
	}
	return h.principalKey
}

// forwardHeldOnPanic runs in failOpen: when a response-body callback
// panicked before the chunk was passed on, the bytes the rewriter had held
// back from earlier chunks go out in front of the chunk as it came (the
// rewriter's contract: Held() is consumed but not yet written). The copy
// taken at the start of the callback is used, not Held() itself, which the
// interrupted Rewrite may have left half-updated.
func (h *httpContext) forwardHeldOnPanic() {
	if !h.inBody || len(h.bodyHeld) == 0 {
		return
	}
	h.inBody = false
	h.restoreHeld(h.bodyHeld, "after an internal error")
}

// restoreHeld puts the bytes the rewriter held back in front of the current
// chunk, which then passes as it came. A minting rewriter may hold an
// event's id line while it stands inside a later line of that event it has
// partly forwarded (sse.Rewriter.HeldPrependable): put in front of the
// chunk, the id line would cut that line in two and change the event, so it
// is dropped instead, and said so — the event then reaches the client
// without its ID, and a resume from before it replays it.
func (h *httpContext) restoreHeld(held []byte, why string) {
	if !h.heldSafe {
		proxywasm.LogError("mcp-resume-guard: " + why + ", the held-back id line of an event (" + strconv.Itoa(len(held)) + " bytes) cannot be put back without cutting the line it interrupts; that event goes out without its ID; session=" + h.sessionTag())
		return
	}
	if err := proxywasm.PrependHttpResponseBody(held); err != nil {
		proxywasm.LogError("mcp-resume-guard: " + why + ", " + strconv.Itoa(len(held)) + " held-back bytes could not be restored: " + err.Error())
	}
}

// bodyDone ends a response-body callback (deferred before failOpen, so it
// runs after it).
func (h *httpContext) bodyDone() { h.inBody, h.bodyHeld, h.heldSafe = false, nil, false }

// flushHeld makes sure that when the rewriter stops rewriting — the end of
// the stream, or an overflow after which it passes everything through —
// nothing it holds stays behind: whatever Held() still returns is forwarded
// after this chunk's output, in front of anything that follows. (Today's
// rewriter flushes itself in both cases; the filter relies only on the
// Held() contract.)
func flushHeld(rw *sse.Rewriter, out []byte, changed, eos bool) ([]byte, bool) {
	if !eos && !rw.Overflowed() {
		return out, changed
	}
	if held := rw.Held(); len(held) > 0 {
		return append(out, held...), true
	}
	return out, changed
}
