package main

import (
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
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
//
// In the request callback the header is already in hand (readRequestHeaders
// scanned the map for it): requestPrincipal digests it from there.
func (h *httpContext) principal() cursor.Principal {
	if h.principalRead {
		return h.principalKey
	}
	var v string
	if name := h.plugin.cfg.PrincipalHeader; name != "" {
		v, _ = proxywasm.GetHttpRequestHeader(name)
	}
	return h.setPrincipal(v)
}

// requestPrincipal is principal for the request callback, from the headers
// it read.
func (h *httpContext) requestPrincipal(req *requestHeaders) cursor.Principal {
	if h.principalRead {
		return h.principalKey
	}
	return h.setPrincipal(req.principal)
}

// setPrincipal makes the digest of v (cursor.NoPrincipal for "") the
// stream's principal.
func (h *httpContext) setPrincipal(v string) cursor.Principal {
	h.principalRead, h.principalKey = true, cursor.NoPrincipal
	if v != "" {
		h.principalKey = cursor.PrincipalOf(v)
	}
	return h.principalKey
}
