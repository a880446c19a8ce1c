package sse

import (
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tidwall/gjson"
)

// Stage 3, classify: the JSON-RPC kind of an event's data. The Rewriter
// calls it once for each event it reports; the kind goes to Events (the
// stream's tail) and, while minting, into the event's cursor.

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
		return classifyObject(s[i:], truncated)
	case '[':
		return classifyBatch(s[i:], truncated)
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

// classifyBatch classifies a JSON-RPC batch, arr starting with '['. A
// truncated batch is KindResponse whatever its visible elements are: the
// elements past the prefix are unseen, and any of them may be the result a
// client waits for (a notification with large params before it hides it
// from any prefix). A whole batch is KindResponse when any element is a
// response, else KindError when any is an error, else the kind of its first
// element.
func classifyBatch(arr string, truncated bool) cursor.EventKind {
	if truncated {
		return cursor.KindResponse
	}
	first, seen, errs, response := cursor.KindOther, false, false, false
	gjson.Parse(arr).ForEach(func(_, v gjson.Result) bool {
		k := cursor.KindOther
		if v.IsObject() {
			k = classifyObject(v.Raw, false)
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
