package sse

import (
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tidwall/gjson"
)

// Classify returns the kind of JSON-RPC message an SSE event carries, from
// its type and a prefix of its data; truncated reports that the data goes on
// beyond dataPrefix. It never returns cursor.KindPriming: whether an event
// primes the stream depends on its id, which the Rewriter knows.
//
// Only top-level keys count, read in order in one pass with gjson. "result"
// and "error" are decisive: reading stops at the first of them. Without
// one, the members in the prefix are read to its end, since only the end
// tells a notification (no "id") from a request:
//
//   - An event type other than "" or "message" is KindOther.
//   - An object with "result" is KindResponse, one with "error" KindError
//     (whichever comes first decides). Either key decides at once, even
//     after "method": a message with both is not valid JSON-RPC, and
//     counting it as a response is the safe side.
//   - Else an object with "method" is KindRequest when it also has "id", else
//     KindNotification.
//   - Else an object with "id" is KindResponse: the Go SDK encodes a nil
//     result as {"jsonrpc":"2.0","id":7}, with neither "result" nor "error".
//   - Else a truncated object is KindResponse: a large response whose
//     cut-off "id" or "result" is all there is to see must not be mistaken
//     for anything else, since losing a response is the expensive mistake.
//     In a prefix, a member counts as seen once its value starts (an object,
//     array, number or literal) or, for a string, once it is closed.
//   - A JSON array (a batch) cut by the end of the prefix is KindResponse:
//     any element past the prefix may be a result. A whole batch is
//     KindResponse when any element is a KindResponse; else KindError when
//     any is a KindError (the only responses are errors); else the kind of
//     its first element.
//   - Anything else (other JSON values, text, an empty or blank prefix) is
//     KindOther.
//
// Classify does not validate: it is lenient with data that is not JSON, as
// gjson is. It does not allocate, unless a top-level key or string value is
// written with backslash escapes, which gjson unescapes into a new string.
func Classify(eventType, dataPrefix []byte, truncated bool) cursor.EventKind {
	return classify(eventType, dataPrefix, truncated, classifyObject)
}

// classify classifies an event's data prefix as Classify does, its objects
// (top-level or in a batch) by object.
func classify(eventType, dataPrefix []byte, truncated bool, object func(obj string, truncated bool) cursor.EventKind) cursor.EventKind {
	if len(eventType) != 0 && string(eventType) != "message" {
		return cursor.KindOther
	}
	// gjson.ParseBytes would copy the prefix into a new string (the results
	// it returns point into their input). The data outlives this call
	// unchanged and no result escapes it, so a zero-copy view is safe.
	s := unsafe.String(unsafe.SliceData(dataPrefix), len(dataPrefix))
	i := skipSpace(s, 0)
	if i == len(s) {
		return cursor.KindOther
	}
	switch s[i] {
	case '{':
		return object(s[i:], truncated)
	case '[':
		return classifyBatch(s[i:], truncated, object)
	}
	return cursor.KindOther
}

// classifyObject classifies one JSON-RPC message, obj starting with '{';
// truncated reports that obj is cut short. It reads the top-level members
// in one pass with gjson's ForEach (which hands over a cut-off object or
// array value as far as it goes, and stops before a cut-off string or a
// missing value) and stops at "result" or "error".
func classifyObject(obj string, truncated bool) cursor.EventKind {
	var method, id bool
	kind := cursor.KindOther
	gjson.Parse(obj).ForEach(func(key, _ gjson.Result) bool {
		switch key.Str {
		case "result":
			kind = cursor.KindResponse
		case "error":
			kind = cursor.KindError
		case "method":
			method = true
		case "id":
			id = true
		}
		return kind == cursor.KindOther
	})
	switch {
	case kind != cursor.KindOther:
		return kind
	case method && id:
		return cursor.KindRequest
	case method:
		return cursor.KindNotification
	case id, truncated:
		return cursor.KindResponse
	}
	return cursor.KindOther
}

// classifyBatch classifies a JSON-RPC batch, arr starting with '[', its
// object elements by object. A truncated batch is KindResponse whatever its
// visible elements are: the elements past the prefix are unseen, and any of
// them may be the result a client waits for (a notification with large
// params before it hides it from any prefix). A whole batch is KindResponse
// when any element is a response, else KindError when any is an error, else
// the kind of its first element.
func classifyBatch(arr string, truncated bool, object func(obj string, truncated bool) cursor.EventKind) cursor.EventKind {
	if truncated {
		return cursor.KindResponse
	}
	first, seen, errs, response := cursor.KindOther, false, false, false
	gjson.Parse(arr).ForEach(func(_, v gjson.Result) bool {
		k := cursor.KindOther
		if v.IsObject() {
			k = object(v.Raw, false)
		}
		if !seen {
			first, seen = k, true
		}
		errs = errs || k == cursor.KindError
		response = k == cursor.KindResponse
		return !response
	})
	switch {
	case response:
		return cursor.KindResponse
	case errs:
		return cursor.KindError
	}
	return first
}

// skipSpace returns the index of the first non-whitespace byte of s at or
// after i (JSON whitespace).
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// ResponseKind is the kind a minted cursor needs of an SSE event: whether
// its data is a JSON-RPC result (KindResponse), an error (KindError), or
// neither (KindOther), from its type and a prefix of its data as in
// Classify. It reads as little as that takes: the top-level members in
// order, in one pass with gjson, stopping at the first decisive key, which
// in the usual layouts is the first or second:
//
//   - "method" decides not-a-response (KindOther): a notification or a
//     request, whatever follows;
//   - "result" decides KindResponse, "error" KindError.
//
// Without a decisive key, the rules of Classify hold: an object with "id" is
// KindResponse (the Go SDK's nil result {"jsonrpc":"2.0","id":7}), and so
// is a truncated object (losing a response is the expensive mistake); a
// batch is KindResponse when any seen element is, else KindError when any
// is, and a truncated batch is KindResponse; anything else, or an event type
// other than "" or "message", is KindOther.
//
// ResponseKind agrees with Classify (KindResponse and KindError alike,
// every other kind KindOther) on every message but one that is not valid
// JSON-RPC: an object with "method" before "result" or "error", which
// Classify counts as a response and ResponseKind as not one (its cursor
// stays plain, as a request's). The stream tail the stateful rule reads
// still gets Classify's kind. Like Classify, it does not allocate unless a
// key or string value is written with backslash escapes.
func ResponseKind(eventType, dataPrefix []byte, truncated bool) cursor.EventKind {
	// Classify's rule for batches, with elements that are each a result,
	// an error or neither, is exactly ResponseKind's.
	return classify(eventType, dataPrefix, truncated, responseObject)
}

// responseWindow is how much of an object responseObject reads first. The
// SDKs write the decisive key within it ("method" or "result" first, or
// after "jsonrpc" and an "id"); gjson hands over a value cut by the window
// as far as it goes, so a large result costs this much, not the whole prefix.
const responseWindow = 128

// responseObject is ResponseKind of one JSON-RPC message, obj starting with
// '{'; truncated reports that obj is cut short.
func responseObject(obj string, truncated bool) cursor.EventKind {
	k, _ := responseObjectRead(obj, truncated)
	return k
}

// responseObjectRead is responseObject, also returning how many bytes of
// obj gjson read to find the decisive key (0: there was none). It reads the
// members of the first responseWindow bytes, and only when no decisive key
// shows there the whole of obj: a window is a prefix of obj, so the members
// it shows up to a decisive key are obj's own, and the decision is the same.
func responseObjectRead(obj string, truncated bool) (cursor.EventKind, int) {
	if len(obj) > responseWindow {
		if k, read, _ := responseMembers(obj[:responseWindow]); read > 0 {
			return k, read
		}
	}
	return responseWhole(obj, truncated)
}

// responseWhole is responseObjectRead without its window: obj's members read
// in one pass.
func responseWhole(obj string, truncated bool) (cursor.EventKind, int) {
	kind, read, id := responseMembers(obj)
	if read == 0 && (id || truncated) {
		return cursor.KindResponse, 0
	}
	return kind, read
}

// responseMembers reads the members of obj up to the first decisive key:
// its kind, how many bytes of obj decided it (0: no decisive key), and
// whether an "id" came before it (or the end). gjson decides from the bytes
// up to the end of the decisive member's value and, for a number or literal,
// the byte after it (which ends it); any obj that starts with those bytes
// gets the same decision.
func responseMembers(obj string) (kind cursor.EventKind, read int, id bool) {
	gjson.Parse(obj).ForEach(func(key, value gjson.Result) bool {
		switch key.Str {
		case "method":
		case "result":
			kind = cursor.KindResponse
		case "error":
			kind = cursor.KindError
		case "id":
			id = true
			return true
		default:
			return true
		}
		read = len(obj) // when in doubt, the memo asks for all of it
		if end := viewEnd(value.Raw, obj); end >= 0 && end < len(obj) {
			read = end + 1
		}
		return false
	})
	return kind, read, id
}

// kindMemo makes ResponseKind cheaper on a stream whose messages start
// alike (a run of progress notifications, of results): it remembers the
// bytes gjson read to its last decision of each side (not a response; a
// result or an error) and gives an object that starts with them the same
// decision without parsing it. Memory: at most two copies of a data prefix.
type kindMemo struct {
	read [2][]byte // [0]: the last "not a response" decision, [1]: the last response
	kind cursor.EventKind
}

// responseKind is ResponseKind(eventType, dataPrefix, truncated), through
// the memo.
func (m *kindMemo) responseKind(eventType, dataPrefix []byte, truncated bool) cursor.EventKind {
	// A message event that starts as the last one judged not a response (a
	// run of notifications) is decided here, as object would decide it, at
	// the cost of one comparison: no call into classify on most events.
	if r := m.read[0]; len(r) > 0 && len(dataPrefix) >= len(r) && string(dataPrefix[:len(r)]) == string(r) &&
		(len(eventType) == 0 || string(eventType) == "message") {
		return cursor.KindOther
	}
	return classify(eventType, dataPrefix, truncated, m.object)
}

// object is responseObject through the memo.
func (m *kindMemo) object(obj string, truncated bool) cursor.EventKind {
	if r := m.read[0]; len(r) > 0 && len(obj) >= len(r) && obj[:len(r)] == string(r) {
		return cursor.KindOther
	}
	if r := m.read[1]; len(r) > 0 && len(obj) >= len(r) && obj[:len(r)] == string(r) {
		return m.kind
	}
	k, read := responseObjectRead(obj, truncated)
	switch {
	case read == 0:
	case k.IsResponse():
		m.read[1] = append(m.read[1][:0], obj[:read]...)
		m.kind = k
	default:
		m.read[0] = append(m.read[0][:0], obj[:read]...)
	}
	return k
}

// reset empties the memo, keeping its buffers.
func (m *kindMemo) reset() {
	m.read[0], m.read[1] = m.read[0][:0], m.read[1][:0]
}

// viewEnd returns where raw, a value gjson returned as a view of s, ends in
// s, or -1 when raw is empty or not inside s. (Result.Index is where gjson
// began to look for the value, which is earlier when it skipped bytes that
// start no value: gjson is lenient.)
func viewEnd(raw, s string) int {
	if len(raw) == 0 || len(s) == 0 {
		return -1
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(raw))) - uintptr(unsafe.Pointer(unsafe.StringData(s))))
	if off < 0 || off+len(raw) > len(s) {
		return -1
	}
	return off + len(raw)
}
