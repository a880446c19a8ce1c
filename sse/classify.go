package sse

import (
	"unsafe"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/jsonscan"
)

// Classify returns the kind of JSON-RPC message an SSE event carries, from
// its type and a prefix of its data; truncated reports that the data goes on
// beyond dataPrefix. It never returns cursor.KindPriming: whether an event
// primes the stream depends on its id, which the Rewriter knows.
//
//   - An event type other than "" or "message" is KindOther.
//   - A JSON object with "result" or "error" is KindResponse; else one with
//     "method" is KindRequest when it also has "id", else KindNotification.
//   - A truncated object in which neither "method" nor "result"/"error" is
//     visible is KindResponse: a large response whose "id" (or whose cut-off
//     "result") is the only key seen must not be mistaken for anything else,
//     since losing a response is the expensive mistake.
//   - A JSON array (a batch) is KindResponse when any visible element is a
//     response, else the kind of its first element.
//   - Anything else is KindOther.
//
// Only top-level keys count. Classify does not allocate (unless a key is
// written with backslash escapes, which are decoded into a new string).
func Classify(eventType, dataPrefix []byte, truncated bool) cursor.EventKind {
	if len(eventType) != 0 && string(eventType) != "message" {
		return cursor.KindOther
	}
	// jsonscan reads strings; the data outlives this call unchanged and no
	// result escapes it, so a zero-copy view is safe.
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

// classifyObject classifies one JSON-RPC message; truncated reports that obj
// is cut short. It reads the top-level keys in one pass, stopping at
// "result" or "error": a message that also has "method" is not valid
// JSON-RPC, and counting it as a response is the safe side.
// A value cut short by the end of obj still counts as present when it is an
// object, array, number or literal, not when it is a string or missing
// (jsonscan's iteration of a prefix).
func classifyObject(obj string, truncated bool) cursor.EventKind {
	var method, id, response bool
	jsonscan.Parse(obj).ForEach(func(key, _ jsonscan.Value) bool {
		switch key.Str {
		case "method":
			method = true
		case "id":
			id = true
		case "result", "error":
			response = true
		}
		return !response
	})
	switch {
	case response:
		return cursor.KindResponse
	case method && id:
		return cursor.KindRequest
	case method:
		return cursor.KindNotification
	case truncated:
		return cursor.KindResponse
	}
	return cursor.KindOther
}

// classifyBatch classifies a JSON-RPC batch. jsonscan hands an element cut
// short by the end of a truncated prefix over as if it were whole; such an
// element (one reaching the end of arr) is classified as truncated.
func classifyBatch(arr string, truncated bool) cursor.EventKind {
	first, seen, response := cursor.KindOther, false, false
	jsonscan.Parse(arr).ForEach(func(_, v jsonscan.Value) bool {
		k := cursor.KindOther
		if v.IsObject() {
			cut := truncated && v.Index+len(v.Raw) >= len(arr)
			k = classifyObject(v.Raw, cut)
		}
		if !seen {
			first, seen = k, true
		}
		response = k == cursor.KindResponse
		return !response
	})
	if response {
		return cursor.KindResponse
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
