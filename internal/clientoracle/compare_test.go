package clientoracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/whatwgsse"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
)

// Each compare function holds one reader to its own rules: what it makes of
// the guard's bytes must equal what it makes of the upstream's, except that
// every event ID it reports, sent back through the guard as a resume
// (resolve), must reach the upstream as the ID the reader reported for the
// upstream's bytes. Each difference is "aspect: detail".

// resolver maps an ID a reader took from the guard's bytes to the
// Last-Event-ID the upstream receives when a client resumes with it.
type resolver func(guardID string) string

// ids holds what an ID comparison needs for one stream.
type ids struct {
	resolve resolver
	// untouched is the part of the upstream's bytes the guard passes
	// through untagged, by design, after an id or event value longer than
	// max_line_bytes (docs/configuration.md): an ID found there may reach
	// the client as the upstream sent it.
	untouched []byte
}

// same reports whether an ID read from the guard's bytes stands for the
// one read from the upstream's: both absent, the guard's resolving to the
// upstream's as HTTP carries it, or, past an overflow, the upstream's own.
func (x ids) same(up, gd string) (bool, string) {
	want := trimOWS(up)
	if gd == up && up != "" && bytes.Contains(x.untouched, []byte(up)) {
		return true, ""
	}
	got := ""
	if trimOWS(gd) != "" {
		got = x.resolve(gd)
	}
	return got == want, fmt.Sprintf("upstream %s, guard %s resumes as %s", clipS(up), clipS(gd), clipS(got))
}

// overflowAt is where the guard stops rewriting in (the rewriter's rule,
// as sse/reference_test.go's expand models it): the start of the first
// line whose id or event value exceeds max_line_bytes, or len(in).
func overflowAt(in []byte) int {
	i := 0
	if bytes.HasPrefix(in, []byte("\ufeff")) {
		i = 3
	}
	for i < len(in) {
		end := bytes.IndexAny(in[i:], "\r\n")
		if end < 0 {
			end = len(in)
		} else {
			end += i
		}
		name, value, ok := bytes.Cut(in[i:end], []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if ok && (string(name) == "id" || string(name) == "event") && len(value) > maxLine {
			return i
		}
		i = end + 1
	}
	return len(in)
}

func compareWHATWG(up, gd []byte, x ids) []string {
	u, g := whatwgsse.Parse(up), whatwgsse.Parse(gd)
	var diffs []string
	um, gm := u.Messages(), g.Messages()
	if len(um) != len(gm) {
		diffs = append(diffs, fmt.Sprintf("events: %d message events from the upstream's bytes, %d from the guard's", len(um), len(gm)))
	}
	for i := range min(len(um), len(gm)) {
		a, b := um[i], gm[i]
		if a.Type != b.Type || a.Data != b.Data {
			diffs = append(diffs, fmt.Sprintf("event: #%d is (%q, %q) from the upstream, (%q, %q) from the guard", i, a.Type, a.Data, b.Type, b.Data))
		}
		if ok, d := x.same(a.LastEventID, b.LastEventID); !ok {
			diffs = append(diffs, fmt.Sprintf("id: event #%d's lastEventId: %s", i, d))
		}
	}
	if !slices.Equal(u.Retries, g.Retries) {
		diffs = append(diffs, fmt.Sprintf("retry: %v from the upstream, %v from the guard", u.Retries, g.Retries))
	}
	if ok, d := x.same(u.LastEventID, g.LastEventID); !ok {
		diffs = append(diffs, "reconnect-id: Last-Event-ID of the reconnect: "+d)
	}
	return diffs
}

func compareTS(u, g tsView, x ids) []string {
	var diffs []string
	if len(u.Events) != len(g.Events) {
		diffs = append(diffs, fmt.Sprintf("events: %d events from the upstream's bytes, %d from the guard's", len(u.Events), len(g.Events)))
	}
	for i := range min(len(u.Events), len(g.Events)) {
		a, b := u.Events[i], g.Events[i]
		if str(a.Event) != str(b.Event) || a.Data != b.Data {
			diffs = append(diffs, fmt.Sprintf("event: #%d is (%s, %q) from the upstream, (%s, %q) from the guard", i, str(a.Event), a.Data, str(b.Event), b.Data))
		}
		if (a.ID == nil) != (b.ID == nil) {
			diffs = append(diffs, fmt.Sprintf("id: event #%d has id %s from the upstream, %s from the guard", i, str(a.ID), str(b.ID)))
		} else if a.ID != nil {
			if ok, d := x.same(*a.ID, *b.ID); !ok {
				diffs = append(diffs, fmt.Sprintf("id: event #%d: %s", i, d))
			}
		}
	}
	if !slices.Equal(u.Retries, g.Retries) {
		diffs = append(diffs, fmt.Sprintf("retry: %v from the upstream, %v from the guard", u.Retries, g.Retries))
	}
	if u.Error != g.Error {
		diffs = append(diffs, fmt.Sprintf("error: %q from the upstream, %q from the guard", u.Error, g.Error))
	}
	return diffs
}

func compareGo(u, g goView, x ids) []string {
	var diffs []string
	if len(u.Messages) != len(g.Messages) {
		diffs = append(diffs, fmt.Sprintf("events: %d messages read from the upstream's bytes, %d from the guard's", len(u.Messages), len(g.Messages)))
	}
	for i := range min(len(u.Messages), len(g.Messages)) {
		if u.Messages[i] != g.Messages[i] {
			diffs = append(diffs, fmt.Sprintf("event: message #%d is %s from the upstream, %s from the guard", i, u.Messages[i], g.Messages[i]))
		}
	}
	if outcome(u.End) != outcome(g.End) {
		diffs = append(diffs, fmt.Sprintf("end: the call ended %q from the upstream's bytes, %q from the guard's", u.End, g.End))
	}
	if ok, d := x.same(u.LastEventID, g.LastEventID); !ok {
		diffs = append(diffs, "reconnect-id: Last-Event-ID of the reconnect: "+d)
	}
	// Without a retry the SDK backs off 1–2 s with jitter; below that the
	// delay is the retry the client read, to the millisecond.
	if (u.Delay < time.Second || g.Delay < time.Second) && u.Delay != g.Delay {
		diffs = append(diffs, fmt.Sprintf("retry: reconnected after %v from the upstream's bytes, %v from the guard's", u.Delay, g.Delay))
	}
	return diffs
}

func str(p *string) string {
	if p == nil {
		return "undefined"
	}
	return strconv.Quote(*p)
}

// clipS quotes s, eliding the middle of a long one.
func clipS(s string) string {
	if len(s) > 120 {
		return strconv.Quote(s[:60]) + fmt.Sprintf("…(%d bytes)…", len(s)-120) + strconv.Quote(s[len(s)-60:])
	}
	return strconv.Quote(s)
}

// outcome is how a Go SDK call ended, without the text of a decode error:
// that quotes the start of the data, which holds a tagged ID when the
// SDK's LF-only lines glued an id field into the data (a bare CR line
// end); the guard must not turn a readable event into an unreadable one or
// back, but the quoted bytes of an unreadable one may differ.
func outcome(end string) string {
	if i := strings.Index(end, "failed to decode event: "); i >= 0 {
		return end[:i+len("failed to decode event")]
	}
	return end
}

// compareKinds checks what the guard's minted IDs say of their events (the
// self-describing cursor), where that is unambiguous: for each event
// WHATWG fires with its own ID and complete JSON data of at most
// sse.DataPrefixBytes, a resume with the guard's ID on a replica that saw
// nothing (elsewhere, under the default rewind) must be rewound (the
// upstream does not receive the event's own ID) exactly when the data is
// a JSON-RPC result: an object whose first of "result"/"error" is
// "result", or that has an "id" and neither those nor "method" (the Go
// SDK's nil result); a batch with such an element. On a legacy route a
// result without a previous ID is only observed, so it is not checked.
func compareKinds(c *Case, up, gd []byte, elsewhere func(k int, id string) string) (diffs []string, checked, results int) {
	if !c.Mint {
		return nil, 0, 0
	}
	um, gm := whatwgsse.Parse(up).Dispatches, whatwgsse.Parse(gd).Dispatches
	if len(um) != len(gm) {
		return nil, 0, 0 // the readers' comparison reports it
	}
	prev := ""
	fromLoneCR := len(um) // the first event whose id line may stay in place, after a lone CR
	if at := whatwgsse.LoneCR(up); at >= 0 {
		fromLoneCR = len(whatwgsse.Parse(up[:at+1]).Dispatches)
	}
	for i := range um {
		a, b := um[i], gm[i]
		before := prev
		prev = a.LastEventID
		if !a.HasData || !a.HasID || !b.HasID || b.ID == a.ID || len(a.Data) > sse.DataPrefixBytes || (a.Type != "" && a.Type != "message") {
			continue
		}
		result, ok := isResult([]byte(a.Data))
		// Rewinding to a previous ID equal to the event's own cannot be seen.
		if !ok || result && (before == "" && c.Transport == "sse" || trimOWS(before) == trimOWS(a.ID)) {
			continue
		}
		if i == 0 && bomFirstID(up) && taggedInPlace(b.ID) {
			// The stream's first line, after a BOM, is never moved, so
			// not minted: the Go SDK's reader keeps the BOM in that line.
			continue
		}
		if i >= fromLoneCR && taggedInPlace(b.ID) {
			// From the stream's first lone CR on, id lines stay in place,
			// tagged: the Go SDK's reader does not end a line there.
			continue
		}
		checked++
		if result {
			results++
		}
		got := elsewhere(i, b.ID)
		if rewound := got != trimOWS(a.ID); rewound != result {
			diffs = append(diffs, fmt.Sprintf("kind: event #%d (%s) is a result: %v, but its cursor %s resumes elsewhere as %s", i, clipS(a.Data), result, clipS(b.ID), clipS(got)))
		}
	}
	return diffs, checked, results
}

// bomFirstID reports whether a stream's first line, after a BOM, is an id
// line.
func bomFirstID(up []byte) bool {
	return bytes.HasPrefix(up, []byte("\ufeffid"))
}

// taggedInPlace reports whether a tagged ID the guard wrote says nothing
// of its event: prefix+id, or an ID escaped as minted of kind other (one
// that starts with '~').
func taggedInPlace(id string) bool {
	c, _ := cursor.ParseCursor(id)
	return !c.Minted || c.Kind == cursor.KindOther
}

// isResult reports whether complete JSON data is a JSON-RPC result (see
// compareKinds); ok is false when it is not JSON.
func isResult(data []byte) (result, ok bool) {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false, false
	}
	one := func(e any) bool {
		obj, ok := e.(map[string]any)
		if !ok {
			return false
		}
		_, res := obj["result"]
		_, fail := obj["error"]
		_, method := obj["method"]
		_, id := obj["id"]
		if res && fail {
			return bytes.Index(data, []byte(`"result"`)) < bytes.Index(data, []byte(`"error"`))
		}
		return res || !fail && !method && id
	}
	if arr, isArr := v.([]any); isArr {
		return slices.ContainsFunc(arr, one), true
	}
	return one(v), true
}
