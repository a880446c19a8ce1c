package sse

import (
	"bytes"
	"slices"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
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
// (nil: as it came); next is the byte after it in the output (0: none). A
// lone '\r' ending right before a '\n' becomes '\n'.
func (h *heldModel) appendTo(out, tagged []byte, next byte) []byte {
	out = append(out, h.line[:h.val]...)
	if tagged == nil {
		out = append(out, h.id()...)
	} else {
		out = append(out, tagged...)
	}
	if eol := h.line[h.end:]; string(eol) == "\r" && next == '\n' {
		return append(out, '\n')
	} else {
		return append(out, eol...)
	}
}

// expandMint models a minting Rewriter on a whole input: the last valid
// non-empty id line of each event moves to just before the empty line that
// dispatches it, its value minted with the event's kind and the stream's
// previous ID (prev for the first); an id line overridden by a later
// non-empty one or followed by an empty one goes out tagged prefix+id where
// that later line starts; at the end of the stream, a held line goes out
// tagged prefix+id after the last line, or before an unterminated id line.
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
	)
	plain := func(next byte) {
		want = pend.appendTo(want, cursor.AppendMinted(nil, tr, pend.id(), nil, cursor.KindOther), next)
		tagged++
		pend = nil
	}
	nextByte := func(j int) byte {
		if j < len(in) {
			return in[j]
		}
		return 0
	}
	for i < len(in) {
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
				want = pend.appendTo(want, nil, nextByte(lineEnd))
				return append(want, in[lineEnd:]...), i, tagged
			}
			if pend != nil {
				want = pend.appendTo(want, nil, in[i])
			}
			return append(want, in[i:]...), i, tagged
		}
		if !terminated {
			// The stream ends inside this line.
			if s := string(line); s == "i" || s == "id" || hasColon && string(name) == "id" {
				if pend != nil {
					plain(in[i])
				}
				return append(want, line...), overflowAt, tagged
			}
			want = append(want, line...)
			break
		}
		isID := string(name) == "id"
		switch {
		case len(line) == 0:
			if pend != nil {
				d := string(bytes.TrimSuffix(data, []byte("\n")))
				k := wantKind(refEvent{HasID: true, Type: typ, Data: d, HasData: hasData})
				want = pend.appendTo(want, cursor.AppendMinted(nil, tr, pend.id(), []byte(prev), k), in[i])
				tagged++
				prev = string(pend.id())
				pend = nil
			}
			typ, data, hasData = "", nil, false
		case isID && len(value) == 0:
			if pend != nil {
				plain(in[i])
			}
		case isID && bytes.IndexByte(value, 0) < 0:
			if pend != nil {
				plain(in[i])
			}
			pend = &heldModel{line: in[i:lineEnd], val: valueAt, end: end - i}
			i = lineEnd
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
		i = lineEnd
	}
	if pend != nil {
		plain(0)
	}
	return want, overflowAt, tagged
}

// mintRewriter returns a minting Rewriter for a stream resumed after prev
// (none if empty).
func mintRewriter(tr cursor.Transport, maxLine int, prev string, lastIDOnly bool) *Rewriter {
	r := NewRewriter(tr, maxLine)
	r.SetMint(true)
	r.ClassifyLastIDOnly(lastIDOnly)
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
	out, evs, tagged, overflowed := feed(t, mintRewriter(tr, maxLine, prev, false), chunks)
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if tr == cursor.TransportNone {
		// Nothing is minted, moved or tagged.
		want, _, _ := expand(in, "", maxLine)
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
	last := "" // the client's last event ID
	for i, w := range ref {
		if w.HasID {
			k := wantKind(w)
			last = string(cursor.AppendMinted(nil, tr, []byte(w.ID), []byte(prev), k))
			c, ok := cursor.ParseCursor(last)
			if !ok || c.Transport != tr || c.ID != w.ID || c.Minted != cursor.NeedsMint([]byte(w.ID), k) ||
				c.Minted && k.IsResponse() && (c.Kind != k || c.Prev() != prev) {
				t.Fatalf("in %q: event %d: cursor %q reads back as %+v", in, i, last, c)
			}
			w.ID, prev = last, w.ID
		} else if w.LastEventID == "" {
			last = "" // reset by an empty id field
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

// TestMintEveryChunking runs every stream case through a minting Rewriter
// under every chunking, on both transports, fresh and resumed.
func TestMintEveryChunking(t *testing.T) {
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			for _, tr := range []cursor.Transport{cursor.TransportSSE, cursor.TransportHTTP} {
				forEachSplit(in, func(chunks [][]byte) { checkMint(t, tr, 0, "", chunks) })
			}
			checkMint(t, cursor.TransportHTTP, 0, "e-99", [][]byte{in})
			checkMint(t, cursor.TransportNone, 0, "", [][]byte{in})
		})
	}
}
