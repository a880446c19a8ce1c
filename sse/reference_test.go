package sse

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/whatwgsse"
)

// This file holds the test oracle: the whole-input WHATWG SSE parser
// (internal/whatwgsse), an independent whole-input model of the expected
// rewrite, and checkStream, which runs a Rewriter over a chunking of an
// input and compares everything it can see against them.

// refEvent is what the reference parser sees at one dispatch (empty line).
type refEvent struct {
	LastEventID string // the EventSource's last event ID after the dispatch
	ID          string // the event's own last valid id field
	HasID       bool   // ... and it is non-empty
	Type        string // event type buffer
	Data        string // data buffer with the final '\n' removed
	HasData     bool   // the data buffer was non-empty: a message event fires
}

// dataPiece is a data field's value as the reference parser appends it to
// the data buffer, and whether the event type was "endpoint" then (which
// sets how much of it a Rewriter keeps).
type dataPiece struct {
	value    string
	endpoint bool
}

// refParse parses a whole stream the way an EventSource does, returning one
// refEvent per dispatch, in order.
func refParse(in []byte) []refEvent {
	evs, _ := refParseLog(in)
	return evs
}

// refParseLog is refParse that also returns, for each dispatch, the data
// fields it appended. The parsing itself is the shared WHATWG model
// (internal/whatwgsse), which the client-reader differential test uses too.
func refParseLog(in []byte) ([]refEvent, [][]dataPiece) {
	var (
		evs  []refEvent
		logs [][]dataPiece
	)
	for _, d := range whatwgsse.Parse(in).Dispatches {
		ev := refEvent{LastEventID: d.LastEventID, ID: d.ID, HasID: d.HasID, Type: d.Type, Data: d.Data, HasData: d.HasData}
		if strings.Trim(ev.ID, " \t") == "" {
			// An ID of white space is as good as none on the wire (the Go
			// SDK's reader trims it, a Last-Event-ID header loses it): the
			// Rewriter leaves it untagged and reports no ID.
			ev.ID, ev.HasID = "", false
		}
		evs = append(evs, ev)
		var pieces []dataPiece
		typ := ""
		for _, f := range d.Fields {
			switch f.Name {
			case "event":
				typ = f.Value
			case "data":
				pieces = append(pieces, dataPiece{f.Value, typ == "endpoint"})
			}
		}
		logs = append(logs, pieces)
	}
	return evs, logs
}

// expand models the rewrite on a whole input: the tag of transport tr goes
// in at the start of the value of every id line whose value is not blank
// (empty, or spaces and tabs only: on the wire no cursor) and free of NUL, the stream's unterminated last line too (the Go SDK's reader
// dispatches it): the prefix, and for a value that starts with '~' the rest
// of its escaped form (inPlaceTag). The first line holding an id or event
// value longer than maxLine overflows the stream: from its start on, the
// input is copied as is and overflowAt is that start (-1 when the stream
// never overflows).
func expand(in []byte, tr cursor.Transport, maxLine int) (want []byte, overflowAt, tagged int) {
	overflowAt = -1
	i := 0
	if bytes.HasPrefix(in, []byte("\ufeff")) {
		i = 3
	}
	want = append(want, in[:i]...)
	for i < len(in) {
		end := bytes.IndexAny(in[i:], "\r\n")
		terminated := end >= 0
		if terminated {
			end += i
		} else {
			end = len(in)
		}
		line := in[i:end]
		name, value, hasColon := bytes.Cut(line, []byte(":"))
		valueAt := i + len(name) + 1
		if hasColon && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
			valueAt++
		}
		if hasColon && (string(name) == "id" || string(name) == "event") && len(value) > maxLine {
			return append(want, in[i:]...), i, tagged
		}
		if hasColon && string(name) == "id" && len(bytes.Trim(value, " \t")) > 0 && bytes.IndexByte(value, 0) < 0 && tr != cursor.TransportNone {
			want = append(want, in[i:valueAt]...)
			want = append(want, inPlaceTag(tr, string(value))...)
			want = append(want, in[valueAt:end]...)
			tagged++
		} else {
			want = append(want, line...)
		}
		i = end
		if terminated {
			n := 1
			if in[end] == '\r' && end+1 < len(in) && in[end+1] == '\n' {
				n = 2
			}
			want = append(want, in[end:end+n]...)
			i += n
		}
	}
	return want, overflowAt, tagged
}

// inPlaceTag is what goes in front of an id value tagged in place: the
// prefix, and for a value that starts with '~' what the cursor format's
// escape (kind "o") puts between the prefix and the ID.
func inPlaceTag(tr cursor.Transport, v string) string {
	if !strings.HasPrefix(v, "~") {
		return tr.Prefix()
	}
	return tr.Prefix() + "~1o" + strconv.Itoa(len(v)) + ".0."
}

// wantEvents is what a Rewriter whose line limit is maxLine must report for
// the reference events of in: those with an id or data, with data cut to
// DataPrefixBytes, or for endpoint events kept up to maxLine (see keptData).
func wantEvents(in []byte, maxLine int) []Event {
	ref, logs := refParseLog(in)
	var evs []Event
	for i, e := range ref {
		if !e.HasID && !e.HasData {
			continue
		}
		ev := Event{HasID: e.HasID, ID: []byte(e.ID), Type: []byte(e.Type)}
		ev.Data, ev.Truncated = keptData(logs[i], e.Type == "endpoint", maxLine)
		evs = append(evs, ev)
	}
	return evs
}

// keptData models the Rewriter's bounded data buffer: each data line (and
// the '\n' after it) is kept while the buffer holds at most the bound of
// its time plus one byte; the data reported at dispatch is then cut to the
// bound of the event's final type.
func keptData(pieces []dataPiece, endpoint bool, maxLine int) (data []byte, truncated bool) {
	limit := func(endpoint bool) int {
		if endpoint {
			return max(maxLine, DataPrefixBytes)
		}
		return DataPrefixBytes
	}
	add := func(b string, endpoint bool) {
		if room := limit(endpoint) + 1 - len(data); len(b) > room {
			b, truncated = b[:max(room, 0)], true
		}
		data = append(data, b...)
	}
	for _, p := range pieces {
		add(p.value, p.endpoint)
		add("\n", p.endpoint)
	}
	if !truncated && len(data) > 0 {
		data = data[:len(data)-1]
	}
	if l := limit(endpoint); len(data) > l {
		data, truncated = data[:l], true
	}
	return data, truncated
}

// wantKind is the kind of a reference event: priming for an ID with empty
// data, else what Classify makes of its type and DataPrefixBytes of data.
func wantKind(e refEvent) cursor.EventKind {
	data := []byte(e.Data)
	truncated := len(data) > DataPrefixBytes
	if truncated {
		data = data[:DataPrefixBytes]
	}
	if e.HasID && len(data) == 0 {
		return cursor.KindPriming
	}
	return Classify([]byte(e.Type), data, truncated)
}

// wantMintKind is the kind a minted cursor of a reference event carries:
// what Classify makes of its type and DataPrefixBytes of data, the event's
// Kind (a priming event's cursor is plain either way).
func wantMintKind(e refEvent) cursor.EventKind {
	data := []byte(e.Data)
	truncated := len(data) > DataPrefixBytes
	if truncated {
		data = data[:DataPrefixBytes]
	}
	return Classify([]byte(e.Type), data, truncated)
}

// run feeds chunks to a fresh Rewriter, the last one with eos, and returns
// the concatenated output, a copy of every reported event, the total of
// Tagged, and whether the stream overflowed. It fails t when a call's
// changed flag does not match its output.
func run(t testing.TB, tr cursor.Transport, maxLine int, chunks [][]byte) (out []byte, evs []Event, tagged int, overflowed bool) {
	t.Helper()
	return feed(t, NewRewriter(tr, maxLine), chunks)
}

// feed is run with a Rewriter set up by the caller.
func feed(t testing.TB, r *Rewriter, chunks [][]byte) (out []byte, evs []Event, tagged int, overflowed bool) {
	t.Helper()
	for i, c := range chunks {
		before := len(out)
		var changed bool
		out, changed = r.Rewrite(out, c, i == len(chunks)-1)
		if got := out[before:]; changed == bytes.Equal(got, c) {
			t.Fatalf("chunk %d %q: changed=%v but output %q", i, c, changed, got)
		}
		for _, e := range r.Events() {
			e.ID = bytes.Clone(e.ID)
			e.Type = bytes.Clone(e.Type)
			e.Data = bytes.Clone(e.Data)
			evs = append(evs, e)
		}
		tagged += r.Tagged()
	}
	return out, evs, tagged, r.Overflowed()
}

// checkStream runs a Rewriter over chunks (their concatenation is the input)
// and checks its output and events against the oracle.
func checkStream(t testing.TB, tr cursor.Transport, maxLine int, chunks [][]byte) {
	t.Helper()
	in := bytes.Join(chunks, nil)
	out, evs, tagged, overflowed := run(t, tr, maxLine, chunks)
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	want, overflowAt, wantTagged := expand(in, tr, maxLine)
	if !bytes.Equal(out, want) {
		t.Fatalf("chunks %q:\noutput %q\nwant   %q", chunks, out, want)
	}
	if overflowed != (overflowAt >= 0) {
		t.Fatalf("chunks %q: Overflowed()=%v, want %v", chunks, overflowed, overflowAt >= 0)
	}
	if tr == cursor.TransportNone {
		wantTagged = 0
	}
	if tagged != wantTagged {
		t.Fatalf("chunks %q: Tagged()=%d, want %d", chunks, tagged, wantTagged)
	}

	// What the rewriter reported equals what a reference parser sees in
	// the input up to the overflow point.
	parsed := in
	if overflowAt >= 0 {
		parsed = in[:overflowAt]
	}
	ref := refParse(parsed)
	if we := wantEvents(parsed, maxLine); !eventsEqual(evs, we) {
		t.Fatalf("chunks %q:\nevents %s\nwant   %s", chunks, dumpEvents(evs), dumpEvents(we))
	}
	if overflowAt >= 0 {
		return
	}

	// A client parsing the output sees the same events, with every id
	// tagged and nothing else changed.
	got := refParse(out)
	if len(got) != len(ref) {
		t.Fatalf("chunks %q: output dispatches %d events, input %d", chunks, len(got), len(ref))
	}
	tag := func(s string) string {
		if strings.Trim(s, " \t") == "" {
			return s // blank: untouched
		}
		if tr == cursor.TransportNone {
			return s
		}
		return string(cursor.AppendMinted(nil, tr, []byte(s), nil, cursor.KindOther))
	}
	for i := range ref {
		w := ref[i]
		w.LastEventID, w.ID = tag(w.LastEventID), tag(w.ID)
		if got[i] != w {
			t.Fatalf("chunks %q: output event %d = %+v, want %+v", chunks, i, got[i], w)
		}
		if tr != cursor.TransportNone && strings.Trim(w.LastEventID, " \t") != "" {
			// The upstream's ID comes back exactly, whatever its shape.
			if c, ok := cursor.ParseCursor(got[i].LastEventID); !ok || c.Transport != tr || c.ID != ref[i].LastEventID || c.Kind != cursor.KindOther {
				t.Fatalf("chunks %q: ParseCursor(%q) = %+v, want %v %q", chunks, got[i].LastEventID, c, tr, ref[i].LastEventID)
			}
		}
	}
}

func eventsEqual(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.HasID != y.HasID || x.Truncated != y.Truncated ||
			!bytes.Equal(x.ID, y.ID) || !bytes.Equal(x.Type, y.Type) || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return true
}

func dumpEvents(evs []Event) string {
	var b strings.Builder
	b.WriteString("[")
	for _, e := range evs {
		b.WriteString("{id=")
		b.WriteString(quote(e.ID))
		if !e.HasID {
			b.WriteString("(none)")
		}
		b.WriteString(" type=" + quote(e.Type) + " data=" + quote(e.Data))
		if e.Truncated {
			b.WriteString("...")
		}
		b.WriteString(" kind=" + e.Kind().String() + "} ")
	}
	b.WriteString("]")
	return b.String()
}

func quote(b []byte) string {
	const max = 60
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", `\n`), "\r", `\r`)
}

// splitAt cuts in at the given offsets (ascending, within in).
func splitAt(in []byte, offsets ...int) [][]byte {
	var chunks [][]byte
	prev := 0
	for _, o := range offsets {
		chunks = append(chunks, in[prev:o])
		prev = o
	}
	return append(chunks, in[prev:])
}

// randomSplit cuts in into chunks of random lengths, some of them empty,
// biased toward short chunks.
func randomSplit(in []byte, rng *rand.Rand) [][]byte {
	var chunks [][]byte
	for len(in) > 0 {
		n := rng.IntN(min(len(in), 1+rng.IntN(32)) + 1)
		chunks = append(chunks, in[:n])
		in = in[n:]
	}
	return append(chunks, nil)
}

// checkAllSplits checks in under every two-chunk split, every three-chunk
// split of short inputs, one byte per chunk, and random splits.
func checkAllSplits(t *testing.T, tr cursor.Transport, maxLine int, in []byte) {
	t.Helper()
	forEachSplit(in, func(chunks [][]byte) { checkStream(t, tr, maxLine, chunks) })
}

// forEachSplit calls check with in whole, under every two-chunk split, every
// three-chunk split of short inputs, one byte per chunk, and random splits.
func forEachSplit(in []byte, check func(chunks [][]byte)) {
	check([][]byte{in})
	for i := 0; i <= len(in); i++ {
		check(splitAt(in, i))
	}
	if len(in) <= 80 {
		for i := 0; i <= len(in); i++ {
			for j := i; j <= len(in); j++ {
				check(splitAt(in, i, j))
			}
		}
	}
	bytewise := make([][]byte, 0, len(in)+1)
	for i := range in {
		bytewise = append(bytewise, in[i:i+1])
	}
	check(append(bytewise, nil))
	rng := rand.New(rand.NewPCG(uint64(len(in)), 7))
	for range 50 {
		check(randomSplit(in, rng))
	}
}
