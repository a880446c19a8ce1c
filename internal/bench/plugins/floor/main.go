// Command floor is the benchmark floor: a proxy-wasm HTTP filter that makes
// only the host calls mcp-resume-guard cannot do without, and nothing else,
// built exactly like the guard (internal/tools/wasmbuild). The guard divided
// by the floor is what the filter's own work costs beyond the ABI; the floor
// divided by the do-nothing plugin is what the ABI glue and the Go runtime
// cost for those calls.
//
// Per request it reads the request headers a guarded request is judged by
// (:path, :method, last-event-id, mcp-session-id) the way the guard does —
// the whole map in one host call, scanned in place (internal/headermap) —,
// matches :path against the route's prefix (config.PathHasPrefix: a request
// on another route is left alone) and keeps the session's digest
// (cursor.KeyOf, as the guard does: no copy of the ID, no allocation). A request with a session asks shared
// data once for a key that does not exist: the tombstone lookup every
// request of a session needs, with a cursor or without (a terminated
// session is refused on every request, and a tombstone outlives the
// session's record), a miss in the common case. With a cursor (a resume) it
// also reads the session's shared-data value once, decodes it as the
// watermark record it is (cursor.Record.DecodeInto, into reused memory: the
// watermark the decision needs), reads the clock once (a record's expiry;
// wasiclock, one WASI call), parses the cursor (cursor.ParseCursor: its tag,
// a minted cursor's fields, and no CR, LF or NUL forwarded), compares its
// ID with the record's tails (the comparison the decision is made of),
// keeps a copy of the cursor's untagged form (the resumed stream's tail
// needs it) and replaces last-event-id with it: the resume job's floor
// (issue 24; the route match, the parse and the comparison since
// 2026-12-02). It reads the response's content-type,
// unless the response has no body (the guard reads nothing then either). Per
// response body chunk it gets the chunk and sets it back with what the SSE
// job cannot skip done to it (sseJob: its id values tagged, each event with
// an ID classified), and, before the chunk leaves, writes the stream's tail
// to the session's watermark record when the chunk's last event with an ID
// is a response, or overwrites a tail that was (writeTail: one
// read-modify-write with compare-and-swap; since 2026-12-02 — without it
// there is no watermark to resume against); at the end of a stream with a
// body it writes the session's watermark record (one tail, encoded:
// cursor.Record.AppendEncode), so that later resumes find one (the guard
// writes a record there too).
package main

import (
	"bytes"
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/headermap"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasiclock"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

func init() { proxywasm.SetVMContext(&vmContext{}) }

func main() {}

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(uint32) types.PluginContext {
	return &pluginContext{tails: make([]cursor.Tail, 1, cursor.MaxTails)}
}

type pluginContext struct {
	types.DefaultPluginContext
	key    []byte // reused shared-data key buffer
	record []byte // reused encoded record
	tails  []cursor.Tail
	rec    cursor.Record // reused decoded record
	text   []byte        // the decoded record's IDs
	last   []byte        // the cursor kept for the resumed stream
	out    []byte        // a rewritten body chunk (sseJob)
	lines  int           // line ends, header bytes and records seen, so the work is not optimized away
}

func (p *pluginContext) NewHttpContext(uint32) types.HttpContext {
	return &httpContext{plugin: p}
}

type httpContext struct {
	types.DefaultHttpContext
	plugin      *pluginContext
	session     cursor.SessionKey
	hasSession  bool
	tailInScope bool   // the tail last written ended with a response
	lastID      []byte // the stream tail's last event ID (sseJob)
	prevID      []byte // and the one before it
}

// sharedKey returns the shared-data key of session, a view of the reused
// buffer (the host reads it during the call only).
func (p *pluginContext) sharedKey(session *cursor.SessionKey) string {
	return p.keyOf("floor:", session)
}

// keyOf returns prefix+session as a view of the reused key buffer.
func (p *pluginContext) keyOf(prefix string, session *cursor.SessionKey) string {
	p.key = append(append(p.key[:0], prefix...), session[:]...)
	return unsafe.String(unsafe.SliceData(p.key), len(p.key))
}

// requestHeaders returns the first last-event-id and mcp-session-id of the
// request (views of host memory), having found :path and :method too: the
// guard's own scan (headermap.Scan), without a principal header.
func (p *pluginContext) requestHeaders() (last, session []byte, guarded bool) {
	pairs, _ := requestHeaderPairs()
	var r headermap.Request
	headermap.ScanRequest(pairs, "", &r)
	p.lines += len(r.Method) // found, so the scan is not optimized away
	path := unsafe.String(unsafe.SliceData(r.Path), len(r.Path))
	return r.LastEventID, r.Session, config.PathHasPrefix(path, "/mcp")
}

func (h *httpContext) OnHttpRequestHeaders(int, bool) types.Action {
	lastB, sessionB, guarded := h.plugin.requestHeaders()
	if !guarded {
		return types.ActionContinue
	}
	last, session := unsafe.String(unsafe.SliceData(lastB), len(lastB)), unsafe.String(unsafe.SliceData(sessionB), len(sessionB))
	if h.hasSession = session != ""; h.hasSession {
		h.session = cursor.KeyOf(session)
		_, _, _ = proxywasm.GetSharedData(h.plugin.keyOf("floor:tombstone:", &h.session))
	}
	if last == "" {
		return types.ActionContinue
	}
	p := h.plugin
	var tails []cursor.Tail // of the live record, if any
	if v, _, err := proxywasm.GetSharedData(p.sharedKey(&h.session)); err == nil {
		var ok bool
		ok, p.text, _ = p.rec.DecodeInto(v, p.text[:0])
		if ok && !p.rec.Expired(wasiclock.Unix(), 3600) {
			tails = p.rec.Tails
		}
	}
	if c, ok := cursor.ParseCursor(last); ok && c.Transport != cursor.TransportNone {
		// The cursor's ID against the watermark's: the comparison the
		// decision is made of.
		for i := range tails {
			if tails[i].LastID == c.ID {
				p.lines++
				break
			}
		}
		p.last = append(p.last[:0], c.ID...)
		_ = proxywasm.ReplaceHttpRequestHeader("last-event-id", c.ID)
	}
	return types.ActionContinue
}

func (h *httpContext) OnHttpResponseHeaders(_ int, endOfStream bool) types.Action {
	if endOfStream {
		return types.ActionContinue
	}
	_, _ = proxywasm.GetHttpResponseHeader("content-type")
	return types.ActionContinue
}

func (h *httpContext) OnHttpResponseBody(size int, eos bool) types.Action {
	p := h.plugin
	if size > 0 {
		chunk, err := proxywasm.GetHttpResponseBody(0, size)
		if err != nil {
			return types.ActionContinue
		}
		out, last, sawID := h.sseJob(chunk)
		if h.hasSession && sawID && (last.IsResponse() || h.tailInScope) {
			// The watermark before the chunk leaves: the chunk's last
			// event with an ID is a response, or overwrites one that was.
			h.tailInScope = last.IsResponse()
			h.writeTail(last)
		}
		_ = proxywasm.ReplaceHttpResponseBody(out)
	}
	if eos && h.hasSession {
		p.tails[0] = cursor.Tail{Stream: 1, Transport: cursor.TransportHTTP, LastID: "e-1041", PrevID: "e-1040", Acked: true}
		now := wasiclock.Unix()
		r := cursor.Record{Session: h.session, Created: now, Updated: now, Tails: p.tails}
		p.record = r.AppendEncode(p.record[:0])
		_ = proxywasm.SetSharedData(p.sharedKey(&h.session), p.record, 0)
	}
	return types.ActionContinue
}

var (
	idLine   = []byte("id: ")
	dataLine = []byte("data: ")
)

// sseJob is the least an SSE chunk needs done (issue 24): every line found,
// an id line's value given the transport's tag, and each event with an ID
// classified as the kind its cursor needs (sse.ResponseKind on its first
// data line: minting cannot skip it). Lines end at '\n' only, and a line the
// chunk's end cuts passes untouched: a floor, not a reader. The result is
// p.out, reused.
func (h *httpContext) sseJob(chunk []byte) (out []byte, last cursor.EventKind, sawID bool) {
	p := h.plugin
	out = p.out[:0]
	last = cursor.KindOther
	var data, id, lastID, prevID []byte
	hasID := false
	for len(chunk) > 0 {
		e := bytes.IndexByte(chunk, '\n')
		if e < 0 {
			out = append(out, chunk...)
			break
		}
		line := chunk[:e+1]
		chunk = chunk[e+1:]
		switch {
		case e == 0: // an empty line dispatches the event
			if hasID {
				last, lastID, prevID = sse.ResponseKind(nil, data, false), id, lastID
			}
			data, hasID = nil, false
		case bytes.HasPrefix(line, idLine):
			out = append(append(out, "id: http:"...), line[len(idLine):]...)
			id, hasID = line[len(idLine):e], true
			continue
		case data == nil && bytes.HasPrefix(line, dataLine):
			data = line[len(dataLine):e]
		}
		out = append(out, line...)
	}
	if lastID != nil { // the stream tail's two IDs, copied once per chunk
		if prevID != nil {
			h.prevID = append(h.prevID[:0], prevID...)
		} else {
			h.prevID = append(h.prevID[:0], h.lastID...)
		}
		h.lastID = append(h.lastID[:0], lastID...)
	}
	p.out = out
	return out, last, lastID != nil
}

// writeTail writes the stream's tail into the session's watermark record:
// the least correct write, a read-modify-write with compare-and-swap (the
// record's value read, decoded, its tail set, encoded and written back with
// the value's CAS token).
func (h *httpContext) writeTail(kind cursor.EventKind) {
	p, session := h.plugin, &h.session
	key := p.sharedKey(session)
	v, cas, err := proxywasm.GetSharedData(key)
	now := wasiclock.Unix()
	ok := false
	if err == nil {
		ok, p.text, _ = p.rec.DecodeInto(v, p.text[:0])
	}
	if !ok {
		p.rec = cursor.Record{Session: *session, Created: now, Tails: p.rec.Tails[:0]}
	}
	tail := cursor.Tail{Stream: 1, Transport: cursor.TransportHTTP, LastID: unsafe.String(unsafe.SliceData(h.lastID), len(h.lastID)),
		PrevID: unsafe.String(unsafe.SliceData(h.prevID), len(h.prevID)), LastKind: kind}
	if len(p.rec.Tails) == 0 {
		p.rec.Tails = append(p.rec.Tails, tail)
	} else {
		p.rec.Tails[0] = tail
	}
	p.rec.Updated = now
	p.record = p.rec.AppendEncode(p.record[:0])
	_ = proxywasm.SetSharedData(key, p.record, cas)
}
