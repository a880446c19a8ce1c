package sse

import (
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tidwall/gjson"
)

// Stage 3, classify: the JSON-RPC kind of an event's data. One rule, read
// to two depths: Classify gives the whole kind (Event.Kind, for the
// stream's tail); ResponseClass reads only as far as a minted cursor needs
// (is it a result, an error, or neither), which the rule decides at an
// object's first decisive key.

// Classify returns the kind of JSON-RPC message an SSE event carries, from
// its type and a prefix of its data; truncated reports that the data goes on
// beyond dataPrefix. It never returns cursor.KindPriming: whether an event
// primes the stream depends on its id, which the Rewriter knows.
//
// Only top-level keys count, read in order in one pass with gjson:
//
//   - An event type other than "" or "message" is KindOther.
//   - In an object, the first of "method", "result" and "error" decides
//     whether it is a response: "result" makes it KindResponse, "error"
//     KindError, and "method" a request or a notification: KindRequest when
//     the object also has an "id" (anywhere among its members), else
//     KindNotification. A message with "method" and "result" is not valid
//     JSON-RPC; the first decides, as it does for the Go SDK's reader (a
//     message with "method" is a request there, jsonrpc2.DecodeMessage)
//     and, for "result" first, on the safe side.
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
	k, _ := classify(eventType, dataPrefix, truncated, true)
	return k
}

// ResponseClass is what a minted cursor needs of Classify: KindResponse or
// KindError when Classify returns that kind, else KindOther. It reads an
// object's members only up to its first decisive key ("method", "result"
// or "error"), where the rule of Classify decides whether it is a response.
func ResponseClass(eventType, dataPrefix []byte, truncated bool) cursor.EventKind {
	k, _ := classify(eventType, dataPrefix, truncated, false)
	return responseClassOf(k)
}

// responseClassOf returns k when it is a response kind, else KindOther.
func responseClassOf(k cursor.EventKind) cursor.EventKind {
	if k.IsResponse() {
		return k
	}
	return cursor.KindOther
}

// classify is Classify (whole) or, read only up to an object's first
// decisive key, a kind whose response class is Classify's. decidedBy is
// the length of the prefix of dataPrefix that decided it: any data that
// starts with those bytes gets the same response class (0: no such prefix,
// as for a batch or an object without a decisive key).
func classify(eventType, dataPrefix []byte, truncated, whole bool) (k cursor.EventKind, decidedBy int) {
	if len(eventType) != 0 && string(eventType) != "message" {
		return cursor.KindOther, 0
	}
	// gjson.ParseBytes would copy the prefix into a new string (the results
	// it returns point into their input). The data outlives this call
	// unchanged and no result escapes it, so a zero-copy view is safe.
	s := unsafe.String(unsafe.SliceData(dataPrefix), len(dataPrefix))
	i := skipSpace(s, 0)
	if i == len(s) {
		return cursor.KindOther, 0
	}
	switch s[i] {
	case '{':
		k, at := classifyObject(s[i:], truncated, whole)
		if at > 0 {
			at += i
		}
		return k, at
	case '[':
		return classifyBatch(s[i:], truncated), 0
	}
	return cursor.KindOther, 0
}

// classifyObject classifies one JSON-RPC message, obj starting with '{';
// truncated reports that obj is cut short. Unless whole, a message with
// "method" may come back as KindRequest without the look for an "id" that
// tells it from a notification. decidedBy is as in classify.
func classifyObject(obj string, truncated, whole bool) (k cursor.EventKind, decidedBy int) {
	k, id, decidedBy := readMembers(obj, whole)
	switch {
	case k == cursor.KindRequest && !id:
		return cursor.KindNotification, decidedBy
	case k != cursor.KindOther:
		return k, decidedBy
	case id, truncated:
		return cursor.KindResponse, 0
	}
	return cursor.KindOther, 0
}

// readMembers reads obj's top-level members in order, in one pass with
// gjson's ForEach (which hands over a cut-off object or array value as far
// as it goes, and stops before a cut-off string or a missing value), up to
// the first decisive key: k is KindResponse for "result", KindError for
// "error", KindRequest for "method" (a request or a notification), and
// KindOther when there is none. Past a "method", and only when lookForID,
// it reads on until an "id" shows. id reports an "id" member among those
// read; decidedBy is the length of the prefix of obj that decided k (0
// when none did): up to the decisive value's first byte for an object or
// array, up to and including the byte after it for a string, number or
// literal (the byte that ends a number).
func readMembers(obj string, lookForID bool) (k cursor.EventKind, id bool, decidedBy int) {
	gjson.Parse(obj).ForEach(func(key, v gjson.Result) bool {
		if key.Str == "id" {
			id = true
		} else if k == cursor.KindOther {
			switch key.Str {
			case "result":
				k = cursor.KindResponse
			case "error":
				k = cursor.KindError
			case "method":
				k = cursor.KindRequest
			default:
				return true
			}
			decidedBy = decidingBytes(obj, v)
		}
		return k == cursor.KindOther || k == cursor.KindRequest && lookForID && !id
	})
	return k, id, decidedBy
}

// decidingBytes returns how many bytes of obj decide that the member whose
// value is v was seen: up to v's first byte for an object or array, up to
// and including the byte after it otherwise. v.Raw is a substring of obj
// (gjson slices its input); v.Index is not where v starts when gjson
// skipped bytes that start no value before it.
func decidingBytes(obj string, v gjson.Result) int {
	if len(v.Raw) == 0 {
		return len(obj)
	}
	start := int(uintptr(unsafe.Pointer(unsafe.StringData(v.Raw))) - uintptr(unsafe.Pointer(unsafe.StringData(obj))))
	end := start + 1
	if v.Type != gjson.JSON {
		end = start + len(v.Raw) + 1
	}
	return min(end, len(obj))
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
			k, _ = classifyObject(v.Raw, false, true)
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
