package sse

import (
	"bytes"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// kindMemo is one of the response path's speed tricks (its figure is in
// docs/performance.md#the-tricks-that-stay): while minting, every event with
// an ID needs its ResponseClass, and an MCP stream repeats a few message
// shapes (a run of progress notifications starts with the same bytes up to
// and including its "method"). The rule decides at an object's first
// decisive key, so the bytes up to there decide for every data that starts
// with them; the memo keeps them for the last decision of each side (a
// response or an error; neither) and answers an event that starts with
// them without parsing it. Otherwise it reads a window of the data first:
// the SDKs write the decisive key within it, and gjson then skips the
// window's part of a large "result" rather than all of the prefix.
// Memory: at most two copies of a data prefix.
type kindMemo struct {
	lead [2][]byte           // the bytes that decided; [1]: a response or an error
	kind [2]cursor.EventKind // their ResponseClass
}

// memoWindow is how much of the data the memo reads before the whole of it.
const memoWindow = 128

// responseClass returns ResponseClass(eventType, data, truncated).
func (m *kindMemo) responseClass(eventType, data []byte, truncated bool) cursor.EventKind {
	if len(eventType) != 0 && string(eventType) != "message" {
		return cursor.KindOther
	}
	for i, lead := range m.lead {
		if len(lead) > 0 && bytes.HasPrefix(data, lead) {
			return m.kind[i]
		}
	}
	k, decidedBy := classify(nil, data[:min(len(data), memoWindow)], true, false)
	if decidedBy == 0 {
		k, decidedBy = classify(nil, data, truncated, false)
	}
	k = responseClassOf(k)
	if decidedBy > 0 {
		side := 0
		if k.IsResponse() {
			side = 1
		}
		m.lead[side], m.kind[side] = append(m.lead[side][:0], data[:decidedBy]...), k
	}
	return k
}
