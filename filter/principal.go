package main

import (
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// The request's principal is the digest of the configured credential header
// (config.Config.PrincipalHeader, "authorization" by default;
// cursor.NoPrincipal without the header or with principal_header ""). It is
// taken once, in the request-headers callback of every guarded request, from
// the header map that callback scanned anyway (readHeaderMap): that is
// what the guard compares and what the upstream is asked to judge. It serves
//
//   - at the end of a stream whose tail is in shared data (OnHttpStreamDone),
//     as the record's owner, a principal the upstream served the session to
//     (cursor.Store.EndStream, cursor.Record.Owner). It is never read again
//     from the request headers in the log phase: a later filter may have
//     removed or changed the header by then (request_headers_to_remove, a
//     header mutation, jwt_authn), and a record without its owner would let
//     anyone's refusal write a tombstone;
//   - on a request with a cursor (Store.LoadAs) or when the session has a
//     tombstone (Tombstones.Until): a tombstone is written only when the
//     record's owner is the refused request's principal, and binds the
//     session to it, and a request is refused as tombstoned only for the
//     tombstone's principal. A third party who knows a session ID but not
//     its owner's credentials gets its own request refused, and writes
//     nothing.

// setPrincipal makes the digest of v (cursor.NoPrincipal for "") the
// stream's principal. v may be host memory: only its digest is kept.
func (h *httpContext) setPrincipal(v string) {
	h.principalKey = cursor.NoPrincipal
	if v != "" {
		h.principalKey = cursor.PrincipalOf(v)
	}
}
