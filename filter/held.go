package main

import (
	"strconv"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
)

// The bytes the SSE rewriter holds back (sse.Rewriter.Held) when the filter
// stops feeding it in the middle of a stream. At the end of a stream and on
// overflow the rewriter itself writes out everything it held; only the
// paths that abandon it (a failed body call, a panic) need what is here.

// forwardHeldOnPanic runs in failOpen: when a response-body callback
// panicked before the chunk was passed on, the bytes the rewriter had held
// back from earlier chunks go out in front of the chunk as it came (the
// rewriter's contract: Held() is consumed but not yet written). The copy
// taken at the start of the callback is used, not Held() itself, which the
// interrupted Rewrite may have left half-updated.
func (h *httpContext) forwardHeldOnPanic() {
	held := h.bodyHeld
	if len(held) == 0 {
		return
	}
	h.bodyHeld = nil
	h.restoreHeld(held, "after an internal error")
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
