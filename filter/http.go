package main

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// flagDownstreamConnectionTermination is Envoy's DC response flag
// (envoy/stream_info/stream_info.h): the client went away.
const flagDownstreamConnectionTermination = 0x4000

var (
	propRouteName = []string{"xds", "route_name"}
	propFlags     = []string{"response", "flags"}
	reinitHeaders = [][2]string{{"content-type", "application/json"}, {"cache-control", "no-store"}}
)

// httpContext is the state of one HTTP stream. Everything the response path
// needs from the request is kept here during the request-headers callback:
// Envoy makes the request header map unreadable once it returned Continue.
type httpContext struct {
	types.DefaultHttpContext
	plugin *pluginContext

	transport cursor.Transport // TransportNone: not a guarded route, hands off
	// The stream's session is kept as its digest only (cursor.KeyOf), which
	// is all shared data, logs and comparisons need: no copy of the ID.
	hasSession bool // false when the request carries none (yet)
	key        cursor.SessionKey
	isDelete   bool
	localReply bool // this stream's response is our own re-initialization

	// The request's principal, taken in the request callback: a tombstone
	// binds to it, and the record's owner is it (principal.go).
	principalKey cursor.Principal

	// bodyHeld is the copy of the rewriter's held-back bytes taken at the
	// start of a response-body callback, until the chunk has been passed
	// on (nil after): a panic in between forwards it (failOpen).
	bodyHeld []byte
	heldSafe bool // bodyHeld may go in front of the chunk (sse.Rewriter.HeldPrependable)

	// Response stream state, set only for a rewritten SSE response, from
	// the plugin's free lists; a resume takes its tail already in the
	// request callback, to keep the cursor it forwarded (apply).
	rw     *sse.Rewriter
	tail   *cursor.StreamTail
	sawEOS bool
}

// failOpen is deferred by every callback: a panic must never escape into
// the host (it would kill the VM and every stream of the Envoy worker). The
// stream continues untouched and the fault is counted.
func (h *httpContext) failOpen(action *types.Action) {
	if r := recover(); r != nil {
		h.plugin.metrics.failOpen.inc()
		proxywasm.LogError("mcp-resume-guard: internal error; stream passes through untouched")
		h.forwardHeldOnPanic()
		h.transport = cursor.TransportNone
		h.rw = nil
		if action != nil {
			*action = types.ActionContinue
		}
	}
}

// OnHttpRequestHeaders implements types.HttpContext: it reads the route,
// session and cursor, and applies the resume decision.
func (h *httpContext) OnHttpRequestHeaders(int, bool) (action types.Action) {
	action = types.ActionContinue
	defer h.failOpen(&action)
	p := h.plugin
	if !p.started || len(p.cfg.Routes) == 0 {
		return action
	}
	// Guarded or not, from the route name or :path, and the headers of a
	// guarded request (headers.go).
	var req requestHeaders
	t, ok := routeHeaders(p, &req)
	if h.transport = t; ok && t == cursor.TransportNone {
		return action
	}
	if !ok {
		// The host could not hand over the request headers, or handed over
		// memory it was not given (the ABI glue checks it), or a map that
		// does not parse: nothing to judge the request by; it passes
		// untouched and is counted.
		p.metrics.failOpen.inc()
		proxywasm.LogWarn("mcp-resume-guard: cannot read the request headers; request passes unguarded")
		h.transport = cursor.TransportNone
		return action
	}
	method := req.method
	h.setSession(req.session)     // its digest, kept for the response path
	h.setPrincipal(req.principal) // likewise: the record's owner at the end
	h.isDelete = method == "DELETE"
	v := p.guard.Request(&cursor.Request{
		Route: h.transport, Session: h.key, HasSession: h.hasSession, Principal: h.principalKey,
		Cursor: req.lastEventID, Method: method,
		LastEventIDs: req.lastEventIDs, SessionHeaders: req.sessionHeaders, QuerySessions: req.querySessions,
	})
	if v.Ambiguous != cursor.Unambiguous {
		return h.refuseAmbiguous(v.Ambiguous)
	}
	if !v.Judged {
		return action
	}
	if v.ReadErr != nil {
		p.metrics.failOpen.inc()
		proxywasm.LogWarn("mcp-resume-guard: shared data read failed, deciding without watermark: " + v.ReadErr.Error())
	}
	if v.TombstoneErr != nil {
		p.failedWrite(v.TombstoneErr, "cannot tombstone the session")
	}
	return h.apply(&v, req.lastEventID != "")
}

// setSession sets the stream's session: its shared-data key. session may be
// host memory: nothing keeps it.
func (h *httpContext) setSession(session string) {
	h.hasSession = session != ""
	if session != "" {
		h.key = cursor.KeyOf(session)
	}
}

// apply carries out the Guard's verdict on the request; resume reports that
// it carried a cursor.
func (h *httpContext) apply(v *cursor.Verdict, resume bool) types.Action {
	p, d := h.plugin, &v.Decision
	if d.Detected() {
		if d.Reason == cursor.ReasonDrainRace {
			p.metrics.drainRaceDetected.inc()
			if d.FromCursor {
				p.metrics.drainRaceFromCursor.inc()
			}
		}
		h.logDetection(d)
	}
	if d.ResumeAfter != "" {
		// The resumed stream's first event follows this cursor: a drain
		// race on it can then be rewound to it. The stream's tail keeps
		// a copy in its own buffer (the cursor aliases the request
		// header block, or the store's scratch record when rewound).
		h.tail = p.getTail()
		h.tail.Reset(p.nonces.next(), h.transport)
		h.tail.Resume(d.ResumeAfter)
	}
	switch d.Action {
	case cursor.Forward:
		if d.Reason == cursor.ReasonUntagged {
			// untagged_cursor: passthrough; when this stops moving, the
			// rollout window is over.
			p.metrics.untaggedPassthrough.inc()
			h.logDecision(d, true) // a debug line (Envoy's default info level drops it)
		}
		return types.ActionContinue
	case cursor.ForwardCursor:
		if err := proxywasm.ReplaceHttpRequestHeader("last-event-id", d.Cursor); err != nil {
			p.metrics.failOpen.inc()
			return types.ActionContinue
		}
		p.metrics.cursorsStripped.inc()
		if d.Rewound {
			p.metrics.rewinds.inc()
		}
		if !d.Ordinary() {
			h.logDecision(d, true)
		}
		return types.ActionContinue
	}

	// A forced re-initialization.
	h.countReinit(d.Reason)
	h.logDecision(d, resume)
	if v.DropCursor {
		// The legacy transport re-initializes by opening a fresh stream.
		if err := proxywasm.RemoveHttpRequestHeader("last-event-id"); err != nil {
			p.metrics.failOpen.inc()
		}
		return types.ActionContinue
	}
	if err := proxywasm.SendHttpResponse(cursor.ReinitStatus, reinitHeaders, p.reinitAt[d.Reason], -1); err != nil {
		p.metrics.failOpen.inc()
		proxywasm.LogError("mcp-resume-guard: cannot send the re-initialization reply: " + err.Error())
		return types.ActionContinue
	}
	h.localReply = true
	return types.ActionPause
}

// logDecision writes the decision line of a judged request: a refusal at
// info level, a resume (a request with a cursor) that passes at debug.
// Requests without a cursor that pass, and ordinary resumes
// (cursor.Decision.Ordinary), are not logged: they are the everyday
// traffic. The line is built in the plugin's reused buffer: a resume
// allocates nothing for it.
//
//	mcp-resume-guard: decision session=1a2b3c4d decision=rewound resume=true reason=drain_race from=cursor route_transport=http
func (h *httpContext) logDecision(d *cursor.Decision, resume bool) {
	p := h.plugin
	b := append(p.logBuf[:0], "mcp-resume-guard: decision session="...)
	if h.hasSession {
		b = h.key.AppendTag(b)
	} else {
		b = append(b, "none"...)
	}
	b = append(b, " decision="...)
	switch {
	case d.Action == cursor.Reinit:
		b = append(b, "reinit:"...)
		b = append(b, d.Reason.String()...)
	case d.Action == cursor.Forward:
		b = append(b, "forward"...)
	case d.Rewound:
		b = append(b, "rewound"...)
	default:
		b = append(b, "stripped"...)
	}
	b = append(b, " resume="...)
	b = strconv.AppendBool(b, resume)
	b = append(b, " reason="...)
	b = append(b, d.Reason.String()...)
	switch {
	case d.FromCursor:
		b = append(b, " from=cursor"...)
	case d.Tail != nil:
		b = append(b, " from=watermark"...)
	}
	b = append(b, " route_transport="...)
	b = append(b, h.transport.String()...)
	p.logBuf = b[:0]
	if d.Action == cursor.Reinit {
		logInfoBytes(b)
	} else {
		// Resumes that pass are common after a cut: Envoy shows them at
		// debug (--component-log-level wasm:debug), and its default info
		// level writes nothing for them.
		logDebugBytes(b)
	}
}

func (h *httpContext) countReinit(r cursor.Reason) {
	m := &h.plugin.metrics
	switch r {
	case cursor.ReasonCrossTransport:
		m.reinitCrossTransport.inc()
	case cursor.ReasonUntagged:
		m.reinitUntagged.inc()
	case cursor.ReasonDrainRace:
		m.reinitDrainRace.inc()
	case cursor.ReasonTombstoned:
		m.reinitTombstoned.inc()
	case cursor.ReasonUnknown:
		m.reinitUnknown.inc()
	}
}

// logDetection writes the warn line the seed names as the cheapest detector:
// it fires for every drain race and cross-transport cursor, whatever the
// policy does about it.
func (h *httpContext) logDetection(d *cursor.Decision) {
	var b strings.Builder
	b.WriteString("mcp-resume-guard: ")
	switch {
	case d.FromCursor:
		b.WriteString("drain race (from the cursor): resume cursor names a response and no watermark here shows its stream ended cleanly")
	case d.Reason == cursor.ReasonDrainRace:
		b.WriteString("drain race: resume cursor equals the last event of a stream cut before it was acknowledged")
	default:
		b.WriteString("cross-transport cursor: resume cursor was minted by the other transport")
	}
	b.WriteString("; session=")
	b.WriteString(h.sessionTag())
	b.WriteString(" route_transport=")
	b.WriteString(h.transport.String())
	if d.Tail != nil {
		b.WriteString(" event=")
		b.WriteString(strconv.Quote(truncate(d.Tail.LastID, 64)))
	}
	if d.Reason == cursor.ReasonDrainRace {
		b.WriteString(" kind=")
		b.WriteString(d.Kind.String())
		b.WriteString(" from=")
		if d.FromCursor {
			b.WriteString("cursor")
		} else {
			b.WriteString("watermark")
		}
	}
	b.WriteString(" action=")
	switch {
	case d.Action == cursor.Reinit:
		b.WriteString("reinit")
	case d.Rewound:
		b.WriteString("rewind")
	default:
		b.WriteString("forward")
	}
	proxywasm.LogWarn(b.String())
}

// OnHttpResponseHeaders implements types.HttpContext: it learns the session
// of an initialize response, clears deleted sessions, and arms the SSE
// rewriter on event-stream responses.
func (h *httpContext) OnHttpResponseHeaders(_ int, endOfStream bool) (action types.Action) {
	action = types.ActionContinue
	defer h.failOpen(&action)
	if h.transport == cursor.TransportNone || h.localReply {
		// Our own local reply comes back through this callback (Envoy
		// runs it through the encoder chain): leave it alone.
		return action
	}
	p := h.plugin
	v := p.guard.Response(&cursor.Response{
		Route: h.transport, Session: h.key, HasSession: h.hasSession, Delete: h.isDelete,
		Body: !endOfStream, Header: responseHeader,
	})
	p.failedWrite(v.ClearErr, "cannot clear the deleted session")
	switch {
	case v.NoSession:
		h.hasSession = false // the endpoint event names it (observe)
	case v.Session != "":
		h.setSession(v.Session)
	}
	if v.Encoded {
		p.metrics.sseEncodedPassthrough.inc()
	}
	if !v.Rewrite {
		return action
	}
	if err := proxywasm.RemoveHttpResponseHeader("content-length"); err != nil {
		p.metrics.failOpen.inc()
		return action
	}
	h.rw = p.getRewriter(h.transport)
	if h.tail == nil {
		h.tail = p.getTail()
		h.tail.Reset(p.nonces.next(), h.transport)
	} else {
		// A resume's tail, holding the cursor it forwarded (apply): the
		// stream's first event names it as its previous ID.
		h.rw.Resume(h.tail.Last())
	}
	return action
}

// OnHttpResponseBody implements types.HttpContext: it tags every event ID of
// the chunk and, before the chunk leaves, records the stream's tail.
func (h *httpContext) OnHttpResponseBody(size int, eos bool) (action types.Action) {
	action = types.ActionContinue
	defer h.failOpen(&action)
	if eos {
		h.sawEOS = true
	}
	rw := h.rw
	if rw == nil || rw.Overflowed() {
		return action
	}
	p := h.plugin
	// Bytes the rewriter held back from earlier chunks (the start of an id
	// line cut by a chunk boundary): if this chunk cannot be rewritten, they
	// go out in front of it as they came, never lost.
	held := append(p.held[:0], rw.Held()...)
	p.held = held[:0]
	h.bodyHeld, h.heldSafe = held, rw.HeldPrependable()
	if len(held) > 0 {
		faultPoint(faultBodyWithHeld)
	}
	var chunk []byte
	if size > 0 {
		var err error
		if chunk, err = proxywasm.GetHttpResponseBody(0, size); err != nil {
			// The chunk passes as it came; with a gap in what it saw, the
			// rewriter could mistake data for an id line: stop rewriting.
			h.abandon(held, "cannot read the response body: "+err.Error())
			return action
		}
	}
	out, changed := rw.Rewrite(p.scratch[:0], chunk, eos)
	p.scratch = out[:0]
	p.metrics.eventsTagged.add(rw.Tagged())
	if rw.Overflowed() {
		p.metrics.sseOverflow.inc()
		proxywasm.LogWarn("mcp-resume-guard: SSE line longer than max_line_bytes; the rest of this stream passes untagged; session=" + h.sessionTag())
	}
	h.observe(rw.Events())
	if changed {
		if err := proxywasm.ReplaceHttpResponseBody(out); err != nil {
			// The chunk goes out as it came, after what was held back.
			h.abandon(held, "cannot replace the response body: "+err.Error())
		}
	}
	h.bodyHeld = nil // passed on: nothing to put back any more
	return action
}

// abandon stops rewriting the stream after a host call on its body failed:
// the current chunk passes as it came, preceded by the bytes the rewriter
// held back from earlier chunks, and the fault is counted and logged.
func (h *httpContext) abandon(held []byte, why string) {
	p := h.plugin
	p.metrics.failOpen.inc()
	h.rw = nil // OnHttpStreamDone no longer returns it to the pool: it may hold the chunk
	h.bodyHeld = nil
	if len(held) > 0 {
		h.restoreHeld(held, why)
	}
	proxywasm.LogWarn("mcp-resume-guard: " + why + "; the rest of the stream passes untagged; session=" + h.sessionTag())
}

// OnHttpResponseTrailers implements types.HttpContext. Trailers end the
// response stream as end_of_stream does: the stream may be acknowledged.
// Envoy hands the plugin no body buffer in this callback (its response body
// pointer is the last chunk's, already passed on), so bytes the rewriter
// still holds — only ever the id line of an event the upstream left
// unterminated (while minting, held to the end of its event), which an SSE
// client discards at the end of the stream anyway — cannot be added; they
// are counted and logged instead of silently dropped.
func (h *httpContext) OnHttpResponseTrailers(int) (action types.Action) {
	action = types.ActionContinue
	defer h.failOpen(&action)
	h.sawEOS = true
	if h.rw == nil {
		return action
	}
	if n := len(h.rw.Held()); n > 0 {
		h.plugin.metrics.failOpen.inc()
		proxywasm.LogWarn("mcp-resume-guard: the response ended with trailers inside an unterminated event; its held-back id line (" + strconv.Itoa(n) + " bytes) could not be forwarded; session=" + h.sessionTag())
	}
	return action
}

// sessionTag names the stream's session in logs (cursor.SessionKey.Tag).
func (h *httpContext) sessionTag() string {
	if !h.hasSession {
		return "none"
	}
	return h.key.Tag()
}

// observe takes the chunk's events: it learns the legacy session from the
// endpoint event and, when the tail says so, writes it to shared data.
func (h *httpContext) observe(events []sse.Event) {
	if h.transport == cursor.TransportSSE {
		for i := 0; i < len(events) && !h.hasSession; i++ {
			if ev := &events[i]; string(ev.Type) == "endpoint" {
				// The legacy stream's session: the one the upstream
				// created for it, from the first endpoint event that
				// names one (an endpoint that names two learns none).
				h.setSession(cursor.EndpointSession(string(ev.Data)))
			}
		}
	}
	tail := sse.TailEvents(events)
	for i := range tail {
		if ev := &tail[i]; ev.HasID {
			h.tail.Add(ev.ID, ev.Kind())
		}
	}
	p := h.plugin
	seen, err := p.guard.Sent(h.key, h.hasSession, h.tail)
	p.failedWrite(err, "cannot record the stream tail")
	if seen.Bridged {
		p.metrics.bridgedSessions.inc()
		proxywasm.LogInfo("mcp-resume-guard: bridged session: served on both transports here; session=" + h.sessionTag() + " route_transport=" + h.transport.String())
	}
	if seen.SharedAllocator {
		p.metrics.sharedAllocator.inc()
		proxywasm.LogInfo("mcp-resume-guard: shared allocator: the event IDs of both transports look drawn from one sequence; session=" + h.sessionTag() + " route_transport=" + h.transport.String())
	}
}

// OnHttpStreamDone implements types.HttpContext. Envoy calls it from
// proxy_on_log, on clean ends and on resets alike: a stream that reached
// its end (end_of_stream or trailers) with no response flag set at all
// acknowledges its tail.
func (h *httpContext) OnHttpStreamDone() {
	defer h.failOpen(nil)
	if h.rw == nil {
		// Nothing was armed (most streams), or a tail whose response is
		// not rewritten (a resume's, or one whose stream abandon
		// stopped), which release returns with the context.
		h.plugin.release(h)
		return
	}
	p := h.plugin
	t := h.tail
	h.tail = nil
	p.putRewriter(h.rw)
	h.rw = nil
	// The request's principal, taken in the request callback, becomes the
	// record's owner (principal.go).
	flags, err := proxywasm.GetProperty(propFlags)
	flagsRead := err == nil && len(flags) == 8
	var f uint64
	if flagsRead {
		f = binary.LittleEndian.Uint64(flags)
	}
	p.failedWrite(p.guard.StreamEnd(h.key, t, h.sawEOS, flagsRead, f, h.principalKey), "cannot record the end of the stream tail")
	p.putTail(t)
	p.release(h) // not after a panic: its context and tail are left to the GC
}

// responseHeader returns a response header's value, "" when absent or
// unreadable (cursor.Response.Header).
func responseHeader(name string) string {
	v, _ := proxywasm.GetHttpResponseHeader(name)
	return v
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// refuseAmbiguous answers a request that names its cursor or session more
// than once (cursor.Ambiguity) with the refusal.
func (h *httpContext) refuseAmbiguous(a cursor.Ambiguity) types.Action {
	p := h.plugin
	proxywasm.LogWarn("mcp-resume-guard: request refused: more than one " + a.String() + "; session=" + h.sessionTag())
	if err := proxywasm.SendHttpResponse(cursor.AmbiguousStatus, reinitHeaders, a.Body(), -1); err != nil {
		p.metrics.failOpen.inc()
		proxywasm.LogError("mcp-resume-guard: cannot send the refusal of an ambiguous request: " + err.Error())
		return types.ActionContinue
	}
	h.localReply = true
	return types.ActionPause
}
