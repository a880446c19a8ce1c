package cursor

import (
	"strconv"
)

// Self-describing cursors (format version 1).
//
// A response event's tagged ID also says what the event was and which event
// came before it on its stream, so that a replica that never saw the stream
// (another Envoy, a restarted one, one whose watermark was evicted) can still
// tell a drain race from a clean resume and rewind it. Every other event's ID
// stays exactly prefix+id.
//
// Grammar (ABNF; DIGIT and the prefixes as in RFC 5234):
//
//	cursor   = prefix ( minted / plain )
//	prefix   = "sse:" / "http:"
//	plain    = id                                ; id does not start with "~"
//	minted   = "~1" kind idlen "." shared "." id prevrest
//	kind     = "r"                               ; a JSON-RPC result
//	         / "e"                               ; a JSON-RPC error
//	         / "o"                               ; anything else whose id starts with "~"
//	idlen    = number                            ; len(id)
//	shared   = number                            ; len of the prefix prev shares with id
//	prevrest = *OCTET                            ; prev[shared:]
//	number   = "0" / %x31-39 *6DIGIT             ; no leading zero, at most 7 digits
//
// The previous ID is id[:shared] + prevrest; an empty previous ID means the
// event was the first of its stream (there is nothing to rewind to). Lengths
// make the format unambiguous for any upstream bytes: ':' '~' '.' and digits
// inside either ID are read as data, never as markers. "~" followed by a
// digit is the version; an upstream ID that itself starts with "~" is always
// minted (kind "o") so that no plain cursor can be mistaken for a minted one.
//
// Worked example, Streamable HTTP: the upstream sends "abc_7", a tool-call
// result, after "abc_6" on the same stream:
//
//	http:~1r5.4.abc_76
//	     ~1            version 1
//	       r           a result
//	        5.         the ID is 5 bytes: "abc_7"
//	          4.       the previous ID shares its first 4 bytes: "abc_"
//	            abc_7  the ID
//	                 6 the rest of the previous ID: "abc_" + "6" = "abc_6"
//
// A cursor that starts like a minted one but does not parse (a later
// version, a damaged or forged one) is read as a plain cursor: its whole
// text after the prefix is the upstream ID, which is what a client could
// have sent anyway. One that ends inside its ID is read as minted, with the
// ID cut there: a cursor that ends in whitespace loses it on the way back
// (trimmedID). Nothing in a cursor can do more than a plain cursor
// could: at worst a client skips its own result or gets its own request
// refused.

// Version1 is the marker of format version 1, right after the prefix.
const Version1 = "~1"

// maxNumberDigits bounds idlen and shared: IDs are bounded by max_line_bytes
// (at most 1 MiB), far below 10^7.
const maxNumberDigits = 7

// Cursor is a client's Last-Event-ID read back: the transport that minted
// it, the upstream's event ID, and what a minted cursor says about it.
type Cursor struct {
	Transport Transport // TransportNone: no known prefix
	ID        string    // the upstream's event ID (the tag and any minted fields removed)
	// Minted reports a version-1 cursor; Kind and Prev are only known then.
	Minted bool
	// Kind is KindResponse or KindError for a minted response, KindOther
	// otherwise (a plain cursor says nothing about its event).
	Kind EventKind
	// The stream's previous upstream event ID is ID[:prevShared]+prevRest
	// (see Prev); both empty when the event was the stream's first or the
	// cursor does not say.
	prevShared int
	prevRest   string
}

// HasPrev reports whether the cursor names the stream's previous event.
func (c Cursor) HasPrev() bool { return c.prevShared > 0 || c.prevRest != "" }

// Prev returns the stream's previous upstream event ID, "" when the cursor
// does not name one. It allocates only when the previous ID is made of both a
// prefix shared with ID and a rest of its own; call it only when it is used.
func (c Cursor) Prev() string {
	switch {
	case c.prevShared == 0:
		return c.prevRest
	case c.prevRest == "":
		return c.ID[:c.prevShared]
	}
	return c.ID[:c.prevShared] + c.prevRest
}

// kind letters of minted cursors.
const (
	kindLetterResult = 'r'
	kindLetterError  = 'e'
	kindLetterOther  = 'o'
)

// NeedsMint reports whether an event of kind k whose upstream ID is id gets
// the minted form (AppendMinted) rather than the plain prefix+id.
func NeedsMint(id []byte, k EventKind) bool {
	return len(id) > 0 && (k.IsResponse() || id[0] == '~')
}

// AppendMinted appends the tagged ID of an event to dst: the minted form for
// a response or error (with prev, the stream's previous upstream ID, "" if
// none), and for any ID that starts with "~"; prefix+id for everything else.
// id must not be empty (an empty id field resets a client's cursor; the
// rewriter never tags one). It does not look at id's bytes otherwise: ParseCursor on the result
// returns t, id, and (when minted) k and prev, whatever bytes they hold.
func AppendMinted(dst []byte, t Transport, id, prev []byte, k EventKind) []byte {
	dst = append(dst, t.Prefix()...)
	if !NeedsMint(id, k) {
		return append(dst, id...)
	}
	letter := byte(kindLetterOther)
	switch k {
	case KindResponse:
		letter = kindLetterResult
	case KindError:
		letter = kindLetterError
	default:
		prev = nil // an escaped ID: nothing to rewind to is needed
	}
	shared := 0
	for shared < len(id) && shared < len(prev) && id[shared] == prev[shared] {
		shared++
	}
	dst = append(dst, Version1...)
	dst = append(dst, letter)
	dst = strconv.AppendUint(dst, uint64(len(id)), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64(shared), 10)
	dst = append(dst, '.')
	dst = append(dst, id...)
	return append(dst, prev[shared:]...)
}

// ParseCursor reads a client's Last-Event-ID without allocating
// (every string in the result is a substring of c). ok is false when c holds
// a CR, LF or NUL byte, which no cursor this guard minted can contain and
// which must never be forwarded.
func ParseCursor(c string) (cur Cursor, ok bool) {
	for i := range len(c) {
		if b := c[i]; b == 0 || b == '\n' || b == '\r' {
			return Cursor{ID: c}, false
		}
	}
	t, rest := SplitTagged(c)
	cur = Cursor{Transport: t, ID: rest}
	if t == TransportNone || len(rest) < len(Version1) || rest[0] != '~' || rest[:len(Version1)] != Version1 {
		return cur, true
	}
	p := len(Version1)
	if p >= len(rest) {
		return cur, true
	}
	var kind EventKind
	switch rest[p] {
	case kindLetterResult:
		kind = KindResponse
	case kindLetterError:
		kind = KindError
	case kindLetterOther:
		kind = KindOther
	default:
		return cur, true
	}
	p++
	idLen, p, okN := parseNumber(rest, p)
	if !okN {
		return cur, true
	}
	shared, p, okN := parseNumber(rest, p)
	if !okN || shared > idLen || idLen == 0 {
		return cur, true
	}
	if idLen > len(rest)-p {
		// The cursor's end was trimmed on its way back (see trimmedID).
		return trimmedID(cur, rest[p:], kind, shared), true
	}
	id := rest[p : p+idLen]
	prevRest := rest[p+idLen:]
	if kind == KindOther && (shared != 0 || prevRest != "") {
		return cur, true
	}
	cur.ID, cur.Minted, cur.Kind = id, true, kind
	cur.prevShared, cur.prevRest = shared, prevRest
	return cur, true
}

// trimmedID reads a minted cursor whose ID runs past its end: one whose
// last bytes, whitespace, were trimmed on the way back (HTTP trims a header
// value's trailing spaces and tabs, the Go SDK's SSE reader every field
// value's trailing whitespace). id is what is left of the ID; what the
// previous ID shared with it is cut to match. The upstream then receives
// the ID trimmed, as it would had the client sent it itself.
func trimmedID(cur Cursor, id string, kind EventKind, shared int) Cursor {
	if id == "" || kind == KindOther && shared != 0 {
		// Nothing left of the ID, or an escaped ID naming a previous one:
		// damaged, a plain cursor.
		return cur
	}
	cur.ID, cur.Minted, cur.Kind = id, true, kind
	cur.prevShared = min(shared, len(id))
	return cur
}

// parseNumber reads number "." at s[p:], returning the value and the index
// after the dot.
func parseNumber(s string, p int) (n, next int, ok bool) {
	start := p
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		if p-start == maxNumberDigits {
			return 0, 0, false
		}
		n = n*10 + int(s[p]-'0')
		p++
	}
	if p == start || p >= len(s) || s[p] != '.' || s[start] == '0' && p-start > 1 {
		return 0, 0, false
	}
	return n, p + 1, true
}
