package main

import (
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// A request that carries Last-Event-ID or Mcp-Session-Id more than once is
// ambiguous: the guard would judge one value and the upstream might act on
// another. What each side sees in Envoy (source/extensions/common/wasm/context.cc):
//
//   - Context::getHeaderMapValue answers entry[0] of map->get(key), the
//     first value only ("TODO ... This is a potential security issue").
//   - Context::getHeaderMapPairs (headerMapToPairs) iterates the map and
//     hands over every entry, a repeated header as one pair per value: that
//     is how the guard reads a guarded request's headers (headers.go), so it
//     sees the repetition.
//   - Context::replaceHeaderMapValue calls HeaderMapImpl::setCopy, which
//     since Envoy 1.16 removes every entry of the key and adds one
//     (source/common/http/header_map_impl.cc; the old replace-the-first
//     behaviour behind envoy.reloadable_features.http_set_copy_replace_all_headers
//     is gone), so a cursor the guard rewrites reaches the upstream alone.
//   - A request the guard forwards unchanged reaches the upstream with every
//     value (the codecs keep repeated non-inline headers as separate
//     entries), and the upstream picks one of them, not necessarily the
//     first.
//
// The same holds for the session of a legacy message POST, named by the
// query: servers read sessionId or session_id, the first or the last of a
// repeated key (the Python SDK's server: the last session_id). A request on
// a legacy route whose query names its session twice with different values
// is refused the same way.
//
// So the guard refuses such a request on a guarded route with 400 and a
// JSON-RPC error naming the header, before anything is looked up or written:
// nothing reaches the upstream and nothing is tombstoned. Detecting it costs
// nothing beyond the map read the guard makes anyway.

// ambiguousStatus is the HTTP status of a refused ambiguous request.
const ambiguousStatus = 400

// Bodies of the refusal, built from constants only.
var (
	duplicateLastEventIDBody  = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request carries more than one Last-Event-ID header; send exactly one","data":{"reason":"duplicate_header","header":"last-event-id"}}}`)
	duplicateSessionIDBody    = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request carries more than one Mcp-Session-Id header; send exactly one","data":{"reason":"duplicate_header","header":"mcp-session-id"}}}`)
	duplicateQuerySessionBody = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request query names more than one session (sessionId, session_id); send exactly one","data":{"reason":"duplicate_parameter","parameter":"sessionId"}}}`)
)

// duplicatedHeader returns the body of the refusal for the first judged
// header (or query session) req carries more than once, or nil.
func duplicatedHeader(req *requestHeaders) (name string, body []byte) {
	if req.lastEventIDs > 1 {
		return "last-event-id header", duplicateLastEventIDBody
	}
	if req.sessionHeaders > 1 {
		return "mcp-session-id header", duplicateSessionIDBody
	}
	if req.querySessions {
		return "session query parameter", duplicateQuerySessionBody
	}
	return "", nil
}

// refuseAmbiguous answers an ambiguous request with 400.
func (h *httpContext) refuseAmbiguous(name string, body []byte) types.Action {
	p := h.plugin
	proxywasm.LogWarn("mcp-resume-guard: request refused: more than one " + name + "; session=" + h.sessionTag())
	if err := proxywasm.SendHttpResponse(ambiguousStatus, reinitHeaders, body, -1); err != nil {
		p.metrics.failOpen.inc()
		proxywasm.LogError("mcp-resume-guard: cannot send the refusal of an ambiguous request: " + err.Error())
		return types.ActionContinue
	}
	h.localReply = true
	return types.ActionPause
}
