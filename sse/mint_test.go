package sse

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/whatwgsse"
)

// This file holds the oracle of minting (SetMint): an independent
// whole-input model of the expected output, and checkMint, which runs a
// minting Rewriter over a chunking of an input and checks its bytes, its
// events and what a reference client sees in its output.

// heldModel is an id line the model holds until its event dispatches.
type heldModel struct {
	line     []byte // the whole line, its ending included
	val, end int    // offsets of its value and of its ending
}

// id returns the line's value.
func (h *heldModel) id() []byte { return h.line[h.val:h.end] }

// appendTo appends the line to out with its value replaced by tagged
// (nil: as it came) and its line ending as it came.
func (h *heldModel) appendTo(out, tagged []byte) []byte {
	out = append(out, h.line[:h.val]...)
	if tagged == nil {
		out = append(out, h.id()...)
	} else {
		out = append(out, tagged...)
	}
	return append(out, h.line[h.end:]...)
}

// expandMint models a minting Rewriter on a whole input: the last valid
// non-empty id line of each event moves to just before the empty line that
// dispatches it, its value minted with the event's kind and the stream's
// previous ID (prev for the first); an id line overridden by a later
// non-empty one or followed by an empty one goes out tagged prefix+id where
// that later line starts; at the end of the stream, a held line goes out
// tagged prefix+id after the last line, or before an unterminated id line;
// the stream's first line, held, goes out in place, tagged prefix+id, when
// the next starts with a BOM's first byte. The stream's first line, when it
// follows a BOM (which the Go SDK's reader keeps in it), is never held: an
// id line there goes out in place, tagged prefix+id; so does every id line
// from the first line a lone '\r' ends (followed by a byte other than '\n')
// on, that one included, which the Go SDK's reader does not take as a line
// end. A line held before that stays held.
// Overflow is as in expand, except that the held line goes out as it came
// at the start of the overflowing line, or after it for an event line.
func expandMint(in []byte, tr cursor.Transport, maxLine int, prev string) (want []byte, overflowAt, tagged int) {
	overflowAt = -1
	i := 0
	if bytes.HasPrefix(in, []byte("\ufeff")) {
		i = 3
	}
	want = append(want, in[:i]...)
	var (
		pend    *heldModel
		typ     string
		data    []byte
		hasData bool
		id      []byte // the event's ID, if any
	)
	minted := func(k cursor.EventKind) {
		want = pend.appendTo(want, cursor.AppendMinted(nil, tr, pend.id(), []byte(prev), k))
		tagged++
		pend = nil
	}
	plain := func() {
		want = pend.appendTo(want, cursor.AppendMinted(nil, tr, pend.id(), nil, cursor.KindOther))
		tagged++
		pend = nil
	}
	// eosLineStart ends what want ends with, at the end of the stream, so
	// that the held line starts a line for every reader: a line cut by the
	// end (not terminated) gets the held line's own ending ("\r\n" for a
	// lone '\r'), a line ended by a lone '\r' a '\n'.
	eosLineStart := func(want []byte, terminated, loneCR bool) []byte {
		switch eol := pend.line[pend.end:]; {
		case !terminated && string(eol) == "\r":
			return append(want, "\r\n"...)
		case !terminated:
			return append(want, eol...)
		case loneCR:
			return append(want, '\n')
		}
		return want
	}
	afterCR := false   // the last line went out ended by a lone '\r'
	bomLine := i > 0   // the line is the first, after a BOM
	sawLoneCR := false // a line before this one ended with a lone '\r', a byte other than '\n' after it
	eventKind := func() cursor.EventKind {
		return wantMintKind(refEvent{Type: typ, Data: string(bytes.TrimSuffix(data, []byte("\n")))})
	}
	for i < len(in) {
		if afterCR && in[i] != '\n' {
			sawLoneCR = true
		}
		end := bytes.IndexAny(in[i:], "\r\n")
		terminated := end >= 0
		if terminated {
			end += i
		} else {
			end = len(in)
		}
		lineEnd := end
		if terminated {
			lineEnd++
			if in[end] == '\r' && end+1 < len(in) && in[end+1] == '\n' {
				lineEnd++
			}
		}
		line := in[i:end]
		name, value, hasColon := bytes.Cut(line, []byte(":"))
		valueAt := len(name) + 1
		if hasColon && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
			valueAt++
		}
		if hasColon && (string(name) == "id" || string(name) == "event") && len(value) > maxLine {
			if string(name) == "event" && pend != nil {
				want = append(want, in[i:lineEnd]...)
				if lineEnd == len(in) {
					want = eosLineStart(want, terminated, terminated && in[end] == '\r' && lineEnd == end+1)
				}
				plain()
				return append(want, in[lineEnd:]...), i, tagged
			}
			if pend != nil {
				plain()
			}
			return append(want, in[i:]...), i, tagged
		}
		if pend != nil && len(want) == 0 && len(line) > 0 && line[0] == 0xEF {
			// Moved, the held first line would let a BOM lead the stream.
			plain()
		}
		if !terminated {
			// The stream ends inside this line, in an event that the Go
			// SDK's reader dispatches: the held line goes out minted with
			// the kind of that event's data.
			k := func() cursor.EventKind {
				t, d := typ, data
				switch {
				case hasColon && string(name) == "event":
					t = string(value)
				case hasColon && string(name) == "data":
					d = append(bytes.Clone(d), value...)
				}
				return wantMintKind(refEvent{Type: t, Data: string(bytes.TrimSuffix(d, []byte("\n")))})
			}()
			if s := string(line); s == "i" || s == "id" || hasColon && string(name) == "id" {
				idField := hasColon && bytes.IndexByte(value, 0) < 0
				if pend != nil && idField {
					plain() // overridden (or reset) by this line
				} else if pend != nil {
					minted(k)
				}
				if idField && !blankID(value) {
					want = append(want, line[:valueAt]...)
					want = cursor.AppendMinted(want, tr, value, []byte(prev), k)
					tagged++
					return want, overflowAt, tagged
				}
				return append(want, line...), overflowAt, tagged
			}
			want = append(want, line...)
			if pend != nil {
				want = eosLineStart(want, false, false)
				minted(k)
			}
			return want, overflowAt, tagged
		}
		isID := string(name) == "id"
		switch {
		case len(line) == 0:
			if pend != nil {
				d := string(bytes.TrimSuffix(data, []byte("\n")))
				k := wantMintKind(refEvent{HasID: true, Type: typ, Data: d, HasData: hasData})
				want = pend.appendTo(want, cursor.AppendMinted(nil, tr, pend.id(), []byte(prev), k))
				tagged++
				pend = nil
			}
			if id != nil {
				prev = string(id)
			}
			typ, data, hasData, id = "", nil, false, nil
		case isID && blankID(value):
			// Empty, or white space only: no cursor on the wire either way.
			if pend != nil {
				plain()
			}
			id = nil
		case isID && bytes.IndexByte(value, 0) < 0:
			if pend != nil {
				plain()
			}
			if loneEnd := in[end] == '\r' && lineEnd == end+1 && lineEnd < len(in); bomLine || sawLoneCR || loneEnd {
				// Not a line of its own for the Go SDK: tagged in place.
				want = append(want, line[:valueAt]...)
				want = cursor.AppendMinted(want, tr, value, nil, cursor.KindOther)
				want = append(want, in[end:lineEnd]...)
				tagged++
				id = value
				afterCR = in[end] == '\r' && lineEnd == end+1
				bomLine = false
				i = lineEnd
				continue
			}
			pend = &heldModel{line: in[i:lineEnd], val: valueAt, end: end - i}
			id = pend.id()
			i = lineEnd
			afterCR = false
			bomLine = false
			continue
		case string(name) == "event":
			typ = string(value)
		case string(name) == "data" && hasColon:
			data = append(append(data, value...), '\n')
			hasData = true
		case string(name) == "data":
			data = append(data, '\n')
			hasData = true
		}
		want = append(want, in[i:lineEnd]...)
		afterCR = in[end] == '\r' && lineEnd == end+1
		bomLine = false
		i = lineEnd
	}
	if pend != nil {
		// The stream ends after a line, inside an event.
		if afterCR {
			want = append(want, '\n')
		}
		minted(eventKind())
	}
	return want, overflowAt, tagged
}

// mintRewriter returns a minting Rewriter for a stream resumed after prev
// (none if empty).
func mintRewriter(tr cursor.Transport, maxLine int, prev string) *Rewriter {
	r := NewRewriter(tr, maxLine)
	r.SetMint(true)
	if prev != "" {
		r.Resume([]byte(prev))
	}
	return r
}

// checkMint runs a minting Rewriter over chunks and checks, against the
// models, its output bytes, its events (the original IDs and kinds), and
// that a reference client parsing its output sees the input's events with
// every ID minted.
func checkMint(t testing.TB, tr cursor.Transport, maxLine int, prev string, chunks [][]byte) {
	t.Helper()
	in := bytes.Join(chunks, nil)
	out, evs, tagged, overflowed := feed(t, mintRewriter(tr, maxLine, prev), chunks)
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if len(prev) > maxLine {
		prev = "" // Resume ignores it
	}
	if tr == cursor.TransportNone {
		// Nothing is minted, moved or tagged.
		want, _, _ := expand(in, cursor.TransportNone, maxLine)
		if !bytes.Equal(out, want) || tagged != 0 {
			t.Fatalf("chunks %q: TransportNone output %q tagged %d", chunks, out, tagged)
		}
		return
	}
	want, overflowAt, wantTagged := expandMint(in, tr, maxLine, prev)
	if !bytes.Equal(out, want) {
		t.Fatalf("chunks %q:\noutput %q\nwant   %q", chunks, out, want)
	}
	if overflowed != (overflowAt >= 0) {
		t.Fatalf("chunks %q: Overflowed()=%v, want %v", chunks, overflowed, overflowAt >= 0)
	}
	if tagged != wantTagged {
		t.Fatalf("chunks %q: Tagged()=%d, want %d", chunks, tagged, wantTagged)
	}
	parsed := in
	if overflowAt >= 0 {
		parsed = in[:overflowAt]
	}
	if we := wantEvents(parsed, maxLine); !eventsEqual(evs, we) {
		t.Fatalf("chunks %q:\nevents %s\nwant   %s", chunks, dumpEvents(evs), dumpEvents(we))
	}
	if overflowAt >= 0 {
		return
	}
	checkClientView(t, tr, prev, in, out)
	checkNoByteLost(t, tr, in, out)
}

// checkClientView checks that a reference client parsing out sees exactly
// the events of in, with each event's ID minted from its original, its kind
// and the stream's previous ID, and its last event ID following them.
func checkClientView(t testing.TB, tr cursor.Transport, prev string, in, out []byte) {
	t.Helper()
	ref, got := refParse(in), refParse(out)
	if len(got) != len(ref) {
		t.Fatalf("in %q: output %q dispatches %d events, input %d", in, out, len(got), len(ref))
	}
	// The stream's first line, an id line, stays in place when the next
	// starts with a BOM's first byte: if it is its event's last, the event
	// gets prefix+id.
	firstInPlace := false
	if end := bytes.IndexAny(in, "\r\n"); end > 0 && bytes.HasPrefix(in, []byte("id")) {
		next := in[end+1:]
		if in[end] == '\r' {
			next = bytes.TrimPrefix(next, []byte("\n"))
		}
		firstInPlace = len(next) > 0 && next[0] == 0xEF
	}
	// The stream's first line, after a BOM, stays in place, tagged
	// prefix+id; so do id lines from the first line a lone '\r' ends on
	// (events from fromLoneCR on may have theirs in place).
	bomFirst := bytes.HasPrefix(in, []byte("\ufeff"))
	fromLoneCR := len(ref) + 1
	if at := whatwgsse.LoneCR(in); at >= 0 {
		fromLoneCR = len(refParse(in[:at+1]))
	}
	last := "" // the client's last event ID
	for i, w := range ref {
		if w.HasID {
			k := wantMintKind(w)
			inPlace := got[i].ID == string(cursor.AppendMinted(nil, tr, []byte(w.ID), nil, cursor.KindOther))
			if inPlace && (i == 0 && (firstInPlace || bomFirst) || i >= fromLoneCR) {
				// (expandMint has pinned down which, byte by byte.)
				k = cursor.KindOther
			}
			last = string(cursor.AppendMinted(nil, tr, []byte(w.ID), []byte(prev), k))
			c, ok := cursor.ParseCursor(last)
			if !ok || c.Transport != tr || c.ID != w.ID || c.Minted != cursor.NeedsMint([]byte(w.ID), k) ||
				c.Minted && k.IsResponse() && (c.Kind != k || c.Prev() != prev) {
				t.Fatalf("in %q: event %d: cursor %q reads back as %+v", in, i, last, c)
			}
			w.ID, prev = last, w.ID
		} else if strings.Trim(w.LastEventID, " \t") == "" {
			last = w.LastEventID // reset by an empty id field, or a blank one passed untouched
		}
		w.LastEventID = last
		if got[i] != w {
			t.Fatalf("in %q: output %q: event %d = %+v, want %+v", in, out, i, got[i], w)
		}
	}
}

// checkNoByteLost checks that the dispatched events of out are those of in
// with id lines moved and re-valued: with every tagged value read back to
// the original ID, the lines that are not id fields are the same bytes in
// the same order, and the id lines the same lines (their endings aside) in
// some order. (An unterminated last event gets its held id line after its
// last byte, which may be inside a line: expandMint checks those bytes.)
func checkNoByteLost(t testing.TB, tr cursor.Transport, in, out []byte) {
	t.Helper()
	split := func(b []byte, restore bool) (skeleton []byte, ids []string) {
		b = bytes.TrimPrefix(b, []byte("\ufeff"))
		b = b[:dispatchedLen(b)]
		for len(b) > 0 {
			end := bytes.IndexAny(b, "\r\n")
			n := end + 1
			switch {
			case end < 0:
				end, n = len(b), len(b)
			case b[end] == '\r' && end+1 < len(b) && b[end+1] == '\n':
				n++
			}
			line := b[:end]
			name, value, _ := bytes.Cut(line, []byte(":"))
			if string(name) != "id" {
				skeleton = append(skeleton, b[:n]...)
				b = b[n:]
				continue
			}
			if v := bytes.TrimPrefix(value, []byte(" ")); restore && n > end && len(v) > 0 {
				if c, ok := cursor.ParseCursor(string(v)); ok && c.Transport == tr {
					line = append(bytes.Clone(line[:len(line)-len(v)]), c.ID...)
				}
			}
			ids = append(ids, string(line))
			b = b[n:]
		}
		slices.Sort(ids)
		return skeleton, ids
	}
	inSkel, inIDs := split(in, false)
	outSkel, outIDs := split(out, true)
	if !bytes.Equal(inSkel, outSkel) || !slices.Equal(inIDs, outIDs) {
		t.Fatalf("in %q\nout %q:\nother lines %q / %q\nid lines %q / %q", in, out, inSkel, outSkel, inIDs, outIDs)
	}
}

// dispatchedLen returns the length of b's events that an empty line ended.
func dispatchedLen(b []byte) int {
	n, lineStart := 0, true
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\r' && c != '\n' {
			lineStart = false
			continue
		}
		if c == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		if lineStart {
			n = i + 1
		}
		lineStart = true
	}
	return n
}

// checkMintAllSplits checks in while minting under every chunking on both
// transports, and whole on a stream resumed after prev and on
// TransportNone.
func checkMintAllSplits(t *testing.T, in []byte, prev string) {
	t.Helper()
	for _, tr := range []cursor.Transport{cursor.TransportSSE, cursor.TransportHTTP} {
		forEachSplit(in, func(chunks [][]byte) { checkMint(t, tr, 0, "", chunks) })
	}
	checkMint(t, cursor.TransportHTTP, 0, prev, [][]byte{in})
	checkMint(t, cursor.TransportNone, 0, "", [][]byte{in})
}

// TestMintEveryChunking runs every stream case through a minting Rewriter.
func TestMintEveryChunking(t *testing.T) {
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) { checkMintAllSplits(t, []byte(tc.in), "e-99") })
	}
}

// sdkStreams are streams in the layouts MCP SDK servers write (MCP-FACTS).
var sdkStreams = []struct{ name, in string }{
	{"typescript", ": keepalive\n\nid: s1_1_a\ndata: \n\n" +
		"event: message\nid: s1_2_b\ndata: " + notifJSON + "\n\n" +
		"event: message\nid: s1_3_c\ndata: " + respJSON + "\n\n"},
	{"python crlf with retry", "id: 0e2f\r\ndata: \r\nretry: 3000\r\n\r\n: ping - 2026-08-01 00:00:00\r\n\r\n" +
		"id: 1a7c\r\nevent: message\r\ndata: " + notifJSON + "\r\n\r\n" +
		"id: 2b8d\r\nevent: message\r\ndata: " + `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"x"}}` + "\r\nretry: 3000\r\n\r\n"},
	{"go sdk", ": ok\n\nevent: prime\nid: st_0\nretry: 500\ndata: \n\n" +
		"event: message\nid: st_1\ndata: " + reqJSON + "\n\n" +
		"event: message\nid: st_2\ndata: " + `{"jsonrpc":"2.0","id":7}` + "\n\nevent: close\ndata: \n\n"},
	{"mcp-go", "id: 41\nevent: message\ndata: " + notifJSON + "\n\nid: 42\nevent: message\ndata: " + respJSON + "\n\n"},
	{"csharp id after data", "event: prime\ndata: \nid: p-0\n\nevent: message\ndata: " + notifJSON + "\nid: p-1\n\n" +
		"event: message\ndata: " + respJSON + "\nid: p-2\n\n"},
	{"rust rmcp", "data: \nid: 0\n\ndata: " + notifJSON + "\nid: 2/1\n\ndata: " + respJSON + "\nid: 3/1\n\n"},
	{"legacy endpoint then tagged ids", "event: endpoint\ndata: /messages?sessionId=abc\n\n: keepalive\n\n" +
		"id: e-1\nevent: message\ndata: " + respJSON + "\n\ndata: " + notifJSON + "\n\n"},
	{"ids starting with tilde", "id: ~1r5.0.abcde\ndata: " + respJSON + "\n\nid: ~x\ndata: " + notifJSON + "\n\n"},
}

// TestMintSDKLayouts checks minting on the SDKs' layouts under every
// chunking, and that an id line already last in its event stays in place.
func TestMintSDKLayouts(t *testing.T) {
	for _, tc := range sdkStreams {
		t.Run(tc.name, func(t *testing.T) { checkMintAllSplits(t, []byte(tc.in), "s0_9") })
	}
	// Byte for byte: nothing moves when id already ends the event.
	in := sdkStreams[5].in
	out, _, _, _ := feed(t, mintRewriter(cursor.TransportHTTP, 0, ""), [][]byte{[]byte(in)})
	want := "data: \nid: http:0\n\ndata: " + notifJSON + "\nid: http:2/1\n\ndata: " + respJSON + "\nid: http:~1r3.0.3/12/1\n\n"
	if string(out) != want {
		t.Fatalf("rust layout:\noutput %q\nwant   %q", out, want)
	}
}

// TestMintBytes spells out the output of the cases the move has to get
// right, on an SSE route, including streams that overflow (max 8) while an
// id line is held: no byte is lost and the rest passes untouched.
func TestMintBytes(t *testing.T) {
	const res = `{"jsonrpc":"2.0","id":1,"result":{}}`
	const long = "LLLLLLLLL"
	for _, tc := range []struct {
		name, in, want string
		max            int // 0: DefaultMaxLineBytes
	}{
		{"typescript", "event: message\nid: a\ndata: " + res + "\n\n",
			"event: message\ndata: " + res + "\nid: sse:~1r1.0.a\n\n", 0},
		{"previous id shares a prefix", "id: s_1\ndata: x\n\nid: s_2\ndata: " + res + "\n\n",
			"data: x\nid: sse:s_1\n\ndata: " + res + "\nid: sse:~1r3.2.s_21\n\n", 0},
		{"crlf keeps its line ending and no space", "id:a\r\ndata: " + res + "\r\n\r\n",
			"data: " + res + "\r\nid:sse:~1r1.0.a\r\n\r\n", 0},
		{"lone cr: in place", "id: a\rdata: " + res + "\r\r", "id: sse:a\rdata: " + res + "\r\r", 0},
		{"lone cr, then lf: in place", "id: a\rdata: x\n\n", "id: sse:a\rdata: x\n\n", 0},
		{"held before the first lone cr, after it in place", "id: a\ndata: x\rid: b\n\n", "data: x\rid: sse:a\nid: sse:b\n\n", 0},
		{"second id: the first goes out plain where the second was", "id: a\nevent: message\nid: b\ndata: " + res + "\n\n",
			"event: message\nid: sse:a\ndata: " + res + "\nid: sse:~1r1.0.b\n\n", 0},
		{"empty id after a held one: held first, reset in place", "id: a\ndata: " + res + "\nid:\n\n",
			"data: " + res + "\nid: sse:a\nid:\n\n", 0},
		{"id with nul passes in place", "id: a\nid: b\x00\ndata: " + res + "\n\n",
			"id: b\x00\ndata: " + res + "\nid: sse:~1r1.0.a\n\n", 0},
		{"comments, retry, prime and unknown fields stay", "id: a\n: c\nretry: 1\nevent: prime\nfoo: bar\ndata: \n\n",
			": c\nretry: 1\nevent: prime\nfoo: bar\ndata: \nid: sse:a\n\n", 0},
		{"bom: the first line in place", "\ufeffid: a\ndata: " + res + "\n\n", "\ufeffid: sse:a\ndata: " + res + "\n\n", 0},
		{"bom: the next held", "\ufeffid: a\n\nid: b\ndata: " + res + "\n\n", "\ufeffid: sse:a\n\ndata: " + res + "\nid: sse:~1r1.0.ba\n\n", 0},
		{"a line of 'i' and a bom's first byte is no bom line", "id: a\ni\xef\n\n", "i\xef\nid: sse:a\n\n", 0},
		{"first line before a bom stays in place", "id: a\n\ufeff\ndata: " + res + "\n\n",
			"id: sse:a\n\ufeff\ndata: " + res + "\n\n", 0},
		{"... and is the next one's previous", "id: a\n\ufeff\n\nid: b\ndata: " + res + "\n\n",
			"id: sse:a\n\ufeff\n\ndata: " + res + "\nid: sse:~1r1.0.ba\n\n", 0},
		// The Go SDK's reader dispatches an unterminated event at EOF
		// (WHATWG readers discard it): its held id line goes out as a line
		// of its own, minted with the event's kind.
		{"unterminated event at eos", "id: a\ndata: " + res + "\n", "data: " + res + "\nid: sse:~1r1.0.a\n", 0},
		{"unterminated last line at eos (issue 22)", "id: a\nevent: message\ndata: " + res,
			"event: message\ndata: " + res + "\nid: sse:~1r1.0.a\n", 0},
		{"unterminated last line, crlf", "id: a\r\ndata: " + res, "data: " + res + "\r\nid: sse:~1r1.0.a\r\n", 0},
		{"unterminated last line, lone cr id line", "id: a\rdata: " + res, "id: sse:a\rdata: " + res, 0},
		{"last line ended by a lone cr", "id: a\ndata: " + res + "\r", "data: " + res + "\r\nid: sse:~1r1.0.a\n", 0},
		{"unterminated comment", "id: a\ndata: x\n: c", "data: x\n: c\nid: sse:a\n", 0},
		{"unterminated field name", "id: a\ndata: x\nda", "data: x\nda\nid: sse:a\n", 0},
		{"unterminated event type", "id: a\ndata: x\nevent: mess", "data: x\nevent: mess\nid: sse:a\n", 0},
		{"unterminated id line at eos", "id: a\ndata: 1\nid: b", "data: 1\nid: sse:a\nid: sse:b", 0},
		{"unterminated id line of a result", "id: a\ndata: " + res + "\nid: b", "data: " + res + "\nid: sse:a\nid: sse:~1r1.0.b", 0},
		{"unterminated empty id line", "id: a\ndata: " + res + "\nid:", "data: " + res + "\nid: sse:a\nid:", 0},
		{"unterminated id name", "id: a\ndata: " + res + "\nid", "data: " + res + "\nid: sse:~1r1.0.a\nid", 0},
		{"upstream ids shaped like minted cursors", "id: ~1o3.0.abc\ndata: 1\n\nid: ~1r1.0.xy\ndata: 2\n\n",
			"data: 1\nid: sse:~1o10.0.~1o3.0.abc\n\ndata: 2\nid: sse:~1o9.0.~1r1.0.xy\n\n", 0},
		{"many events", "id: 1\ndata: " + res + "\n\nid: 2\ndata: " + res + "\n\nid: 3\n\n",
			"data: " + res + "\nid: sse:~1r1.0.1\n\ndata: " + res + "\nid: sse:~1r1.0.21\n\nid: sse:3\n\n", 0},
		{"long id while one is held", "id: a\ndata: 1\nid: " + long + "\ndata: 2\n\nid: b\n\n",
			"data: 1\nid: sse:a\nid: " + long + "\ndata: 2\n\nid: b\n\n", 8},
		{"long event type while one is held: after its line", "id: a\nevent: " + long + "\ndata: 2\n\nid: b\n\n",
			"event: " + long + "\nid: sse:a\ndata: 2\n\nid: b\n\n", 8},
		{"long event type, crlf", "id: a\r\nevent:" + long + "\r\n\r\nid: b\r\n\r\n",
			"event:" + long + "\r\nid: sse:a\r\n\r\nid: b\r\n\r\n", 8},
		{"long event type at eos", "id: a\nevent: " + long, "event: " + long + "\nid: sse:a\n", 8},
		{"long event type at eos, lone cr", "id: a\nevent: " + long + "\r", "event: " + long + "\r\nid: sse:a\n", 8},
		{"long event type without held id", "id: a\n\nevent: " + long + "\nid: b\n\n",
			"id: sse:a\n\nevent: " + long + "\nid: b\n\n", 8},
		{"long unterminated id", "id: a\ndata: 1\nid: " + long, "data: 1\nid: sse:a\nid: " + long, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maxLine := cmp.Or(tc.max, DefaultMaxLineBytes)
			if want, at, _ := expandMint([]byte(tc.in), cursor.TransportSSE, maxLine, ""); string(want) != tc.want || (at >= 0) != (tc.max > 0) {
				t.Fatalf("model: %q overflow at %d, want %q", want, at, tc.want)
			}
			forEachSplit([]byte(tc.in), func(chunks [][]byte) { checkMint(t, cursor.TransportSSE, maxLine, "", chunks) })
		})
	}
}

// TestEndpointDataWhole checks that a legacy endpoint event's data reaches
// the caller whole up to maxLineBytes, however it is chunked, minting or
// not, and that other events keep DataPrefixBytes.
func TestEndpointDataWhole(t *testing.T) {
	for _, n := range []int{600, 4000} {
		session := bytes.Repeat([]byte("s"), n)
		url := "/messages?sessionId=" + string(session)
		in := []byte("event: endpoint\ndata: " + url + "\n\nid: e-1\ndata: " + url + "\n\n")
		for _, mint := range []bool{false, true} {
			for cut := 0; cut <= len(in); cut += 37 {
				r := NewRewriter(cursor.TransportSSE, 0)
				r.SetMint(mint)
				_, evs, _, _ := feed(t, r, splitAt(in, cut))
				if len(evs) != 2 || string(evs[0].Type) != "endpoint" || string(evs[0].Data) != url || evs[0].Truncated {
					t.Fatalf("n=%d mint=%v cut %d: endpoint event %s", n, mint, cut, dumpEvents(evs))
				}
				if len(evs[1].Data) != DataPrefixBytes || !evs[1].Truncated {
					t.Fatalf("n=%d mint=%v cut %d: message event kept %d bytes", n, mint, cut, len(evs[1].Data))
				}
			}
		}
		// Beyond maxLineBytes it is cut there.
		_, evs, _, _ := run(t, cursor.TransportSSE, 1000, [][]byte{in})
		if len(evs[0].Data) != min(len(url), 1000) || evs[0].Truncated != (len(url) > 1000) {
			t.Fatalf("n=%d, max 1000: endpoint data %d bytes, truncated=%v", n, len(evs[0].Data), evs[0].Truncated)
		}
	}
	// Only the data after the event field is kept whole; the model agrees.
	long := "/messages?sessionId=" + string(bytes.Repeat([]byte("t"), 700))
	for _, in := range []string{
		"data: " + long + "\nevent: endpoint\n\n",
		"event: endpoint\ndata: " + long + "\nevent: message\n\n",
		"data: a\nevent: endpoint\ndata: " + long + "\n\n",
	} {
		forEachSplit([]byte(in), func(chunks [][]byte) { checkStream(t, cursor.TransportSSE, 0, chunks) })
	}
}

// TestMintLongEventHoldsOnlyTheIDLine streams a 1 MiB data event in small
// chunks: the id line is held the whole time, nothing else, and memory stays
// bounded.
func TestMintLongEventHoldsOnlyTheIDLine(t *testing.T) {
	const size = 1 << 20
	head := []byte("event: message\nid: big-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"")
	body := bytes.Repeat([]byte("d"), size)
	tail := []byte("\"}}\n\nid: after\ndata: 1\n\n")
	in := append(append(append([]byte(nil), head...), body...), tail...)
	chunks := chunked(in, 4096)

	r := NewRewriter(cursor.TransportHTTP, 64)
	r.SetMint(true)
	out, grown := streamMeasured(r, chunks, func(i int, dst []byte) {
		if i > 0 && i < len(chunks)-1 {
			if string(r.Held()) != "id: big-1\n" || r.HeldPrependable() {
				t.Fatalf("chunk %d: held %q prependable=%v", i, r.Held(), r.HeldPrependable())
			}
			if len(dst) != len(chunks[i]) {
				t.Fatalf("chunk %d: %d bytes out of %d: data was held", i, len(dst), len(chunks[i]))
			}
		}
	})
	if grown > 64<<10 {
		t.Fatalf("allocated %d bytes while streaming %d", grown, len(in))
	}
	if cap(r.pend)+cap(r.line) > 4096 || cap(r.arena) > 4096 {
		t.Fatalf("held lines grew to %d+%d bytes, the arena to %d", cap(r.pend), cap(r.line), cap(r.arena))
	}
	want, _, _ := expandMint(in, cursor.TransportHTTP, 64, "")
	if !bytes.Equal(out, want) || !bytes.Contains(out, []byte("\"}}\nid: http:~1r5.0.big-1\n\n")) {
		t.Fatal("the 1 MiB event did not come out as modelled")
	}
}

// TestHeldAcrossChunks checks what Held and HeldPrependable report between
// calls, and that Held sent in front of the next chunk when prependable
// gives a client the same events.
func TestHeldAcrossChunks(t *testing.T) {
	for _, tc := range []struct {
		name, first, held string
		prependable       bool
	}{
		{"nothing", "data: 1\n\n", "", true},
		{"id line at a line start", "id: a\ndata: 1\n", "id: a\n", true},
		{"part of an id line", "data: 1\nid: a", "id: a", true},
		{"held id line and part of a second", "id: a\ndata: 1\nid: b", "id: a\nid: b", true},
		{"inside a data line", "id: a\ndata: 1", "id: a\n", false},
		{"after a data line's cr", "id: a\r\ndata: 1\r", "id: a\r\n", false},
		{"after the held line's cr", "data: 1\r\nid: a\r", "id: a\r", false},
		{"held line ended by a lone cr goes out in place", "id: a\rdata: 1\r\n", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRewriter(cursor.TransportSSE, 0)
			r.SetMint(true)
			out, _ := r.Rewrite(nil, []byte(tc.first), false)
			if string(r.Held()) != tc.held || r.HeldPrependable() != tc.prependable {
				t.Fatalf("Held() = %q, HeldPrependable() = %v; want %q, %v", r.Held(), r.HeldPrependable(), tc.held, tc.prependable)
			}
			if !tc.prependable {
				return
			}
			// The caller gives up: Held goes out in front of the rest.
			for _, rest := range []string{"\n", "\n\n", "data: 2\n\n", ": x\n\nid: c\n\n"} {
				abandoned := string(out) + string(r.Held()) + rest
				in := tc.first + rest
				if a, b := refParse([]byte(abandoned)), refParse([]byte(in)); len(a) != len(b) {
					t.Fatalf("rest %q: %q dispatches %d events, the input %d", rest, abandoned, len(a), len(b))
				} else {
					for i := range a {
						a[i].LastEventID, a[i].ID = "", ""
						b[i].LastEventID, b[i].ID = "", ""
						if a[i] != b[i] {
							t.Fatalf("rest %q: event %d %+v, want %+v", rest, i, a[i], b[i])
						}
					}
				}
			}
		})
	}
	// Not minting, the held bytes are always prependable.
	r := NewRewriter(cursor.TransportSSE, 0)
	r.Rewrite(nil, []byte("data: 1\nid: a"), false)
	if string(r.Held()) != "id: a" || !r.HeldPrependable() {
		t.Fatalf("Held() = %q, HeldPrependable() = %v", r.Held(), r.HeldPrependable())
	}
}

// TestResume checks that Resume names the previous ID of the first response,
// that Reset forgets it, and that one too long is ignored.
func TestResume(t *testing.T) {
	in := []byte("id: s_8\ndata: " + respJSON + "\n\n")
	r := NewRewriter(cursor.TransportHTTP, 16)
	r.SetMint(true)
	r.Resume([]byte("s_7"))
	if out, _ := r.Rewrite(nil, in, true); string(out) != "data: "+respJSON+"\nid: http:~1r3.2.s_87\n\n" {
		t.Fatalf("resumed: %q", out)
	}
	r.Reset(cursor.TransportHTTP, 16)
	if out, _ := r.Rewrite(nil, in, true); string(out) != "data: "+respJSON+"\nid: http:~1r3.0.s_8\n\n" {
		t.Fatalf("after Reset: %q", out)
	}
	r.Reset(cursor.TransportHTTP, 16)
	r.Resume(bytes.Repeat([]byte("x"), 17))
	if out, _ := r.Rewrite(nil, in, true); string(out) != "data: "+respJSON+"\nid: http:~1r3.0.s_8\n\n" {
		t.Fatalf("resumed after a too long ID: %q", out)
	}
}

// TestSetMint checks that the setting survives Reset, applies at once only
// to a stream that has not started, and that off is today's in-place tagging.
func TestSetMint(t *testing.T) {
	in := []byte("id: a\ndata: " + respJSON + "\n\n")
	inPlace := "id: sse:a\ndata: " + respJSON + "\n\n"
	minted := "data: " + respJSON + "\nid: sse:~1r1.0.a\n\n"
	r := NewRewriter(cursor.TransportSSE, 0)
	r.SetMint(true)
	if out, _ := r.Rewrite(nil, in, false); string(out) != minted {
		t.Fatalf("minting: %q", out)
	}
	r.SetMint(false) // mid-stream: from the next Reset on
	if out, _ := r.Rewrite(nil, in, false); string(out) != "data: "+respJSON+"\nid: sse:~1r1.1.a\n\n" {
		t.Fatalf("after SetMint(false) mid-stream: %q", out)
	}
	r.Reset(cursor.TransportSSE, 0)
	if out, _ := r.Rewrite(nil, in, false); string(out) != inPlace {
		t.Fatalf("after Reset with minting off: %q", out)
	}
	r.SetMint(true)
	r.Reset(cursor.TransportSSE, 0)
	if out, _ := r.Rewrite(nil, in, false); string(out) != minted {
		t.Fatalf("after Reset with minting on: %q", out)
	}
}

// TestMintDoesNotAllocate is TestRewriteDoesNotAllocate while minting.
func TestMintDoesNotAllocate(t *testing.T) {
	chunks := chunked(mcpStream(2000), 16<<10)
	r := mintRewriter(cursor.TransportSSE, 0, "")
	dst := make([]byte, 0, 64<<10)
	pass := func() {
		r.Reset(cursor.TransportSSE, 0)
		r.Resume([]byte("e-1"))
		for _, c := range chunks {
			dst, _ = r.Rewrite(dst[:0], c, false)
		}
	}
	pass()
	if allocs := testing.AllocsPerRun(5, pass); allocs != 0 {
		t.Fatalf("minting allocates %v times per pass over %d chunks", allocs, len(chunks))
	}
}

// TestMintMCPStream checks typical traffic in chunks of several sizes.
func TestMintMCPStream(t *testing.T) {
	in := mcpStream(300)
	for _, size := range []int{16 << 10, 4096, 1000, 333, 17} {
		checkMint(t, cursor.TransportHTTP, 0, "", chunked(in, size))
	}
}

// TestMintMethodAndResult pins that a minted cursor's kind is the event's
// Kind, one rule for both: in an object with both "method" and "result" or
// "error" (not valid JSON-RPC), the first decides. After "method" it is a
// request or a notification, as the Go SDK reads it: its cursor stays plain
// (the memo, warmed by a notification, must not say otherwise). Before it,
// it is a response, the safe side: minted as one, recorded as one.
func TestMintMethodAndResult(t *testing.T) {
	odd := []string{
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, `{"method":"x","error":{}}`,
		`{"jsonrpc":"2.0","result":{},"method":"x","id":1}`, `{"error":{},"method":"x"}`,
	}
	for i, data := range odd {
		in := "data: " + goNotification + "\nid: e-1\n\ndata: " + data + "\nid: e-2\n\ndata: " + goResult + "\nid: e-3\n\n"
		minted := []string{"id: http:e-2", "id: http:e-2", "id: http:~1r3.2.e-21", "id: http:~1e3.2.e-21"}[i]
		want := strings.NewReplacer("id: e-1", "id: http:e-1", "id: e-2", minted, "id: e-3", "id: http:~1r3.2.e-32").Replace(in)
		wantKind := []cursor.EventKind{cursor.KindRequest, cursor.KindNotification, cursor.KindResponse, cursor.KindError}[i]
		out, evs, _, _ := feed(t, mintRewriter(cursor.TransportHTTP, 0, ""), [][]byte{[]byte(in)})
		if string(out) != want {
			t.Fatalf("output %q\nwant %q", out, want)
		}
		if len(evs) != 3 || evs[1].Kind() != wantKind {
			t.Fatalf("events %s, want the second one %v", dumpEvents(evs), wantKind)
		}
	}
}

// TestNothingHeldAfterEndOrOverflow: once the stream ends, or overflows and
// passes through, the Rewriter holds nothing back: every byte it consumed
// is in its output. The filter relies on it (it forwards no Held() of its
// own at the end of a stream).
func TestNothingHeldAfterEndOrOverflow(t *testing.T) {
	long := "id: " + string(bytes.Repeat([]byte("x"), 200)) + "\n"
	for _, mint := range []bool{false, true} {
		for _, tc := range []struct{ name, first, last string }{
			{"cut id line at the end", "data: a\n\nid: e-", "1"},
			{"held id line of an unterminated event", "id: e-1\ndata: {\"id\":1,\"result\":{}}\n", ""},
			{"id value over the bound", "id: e-1\ndata: a\n", long + "\n"},
		} {
			r := NewRewriter(cursor.TransportHTTP, 64)
			r.SetMint(mint)
			out, _ := r.Rewrite(nil, []byte(tc.first), false)
			out, _ = r.Rewrite(out, []byte(tc.last), tc.last != long+"\n")
			if tc.last == long+"\n" && !r.Overflowed() {
				t.Fatalf("mint=%v %s: the stream did not overflow", mint, tc.name)
			}
			if len(r.Held()) != 0 {
				t.Fatalf("mint=%v %s: %q still held after the stream ended or overflowed", mint, tc.name, r.Held())
			}
			if !r.Overflowed() && len(out) < len(tc.first)+len(tc.last) {
				t.Fatalf("mint=%v %s: %d bytes out of %d in", mint, tc.name, len(out), len(tc.first)+len(tc.last))
			}
		}
	}
}

// blankID is the model's reading of an id value that resets the cursor:
// empty, or spaces and tabs only.
func blankID(v []byte) bool { return len(bytes.Trim(v, " \t")) == 0 }
