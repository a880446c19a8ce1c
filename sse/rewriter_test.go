package sse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

const (
	respJSON  = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"42"}]}}`
	notifJSON = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3}}`
	reqJSON   = `{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}`
)

// streamCases are the inputs every chunking is checked on. want is the
// output for a legacy SSE route, written out by hand; kinds are the kinds of
// the reported events, in order.
var streamCases = []struct {
	name  string
	in    string
	want  string
	kinds []cursor.EventKind
}{
	{
		name:  "mcp response",
		in:    "id: e-104\nevent: message\ndata: " + respJSON + "\n\n",
		want:  "id: sse:e-104\nevent: message\ndata: " + respJSON + "\n\n",
		kinds: []cursor.EventKind{cursor.KindResponse},
	},
	{
		name:  "no space after colon",
		in:    "id:e-104\ndata:" + notifJSON + "\n\n",
		want:  "id:sse:e-104\ndata:" + notifJSON + "\n\n",
		kinds: []cursor.EventKind{cursor.KindNotification},
	},
	{
		name:  "two spaces after colon keep one in the value",
		in:    "id:  e-1\ndata: " + reqJSON + "\n\n",
		want:  "id: sse: e-1\ndata: " + reqJSON + "\n\n",
		kinds: []cursor.EventKind{cursor.KindRequest},
	},
	{
		name:  "priming event then retry and comment",
		in:    ": keep-alive\nretry: 3000\nid: 1_0\ndata:\n\n",
		want:  ": keep-alive\nretry: 3000\nid: sse:1_0\ndata:\n\n",
		kinds: []cursor.EventKind{cursor.KindPriming},
	},
	{
		name:  "priming event without data line",
		in:    "id: p\n\nid: q\nevent: message\n\n",
		want:  "id: sse:p\n\nid: sse:q\nevent: message\n\n",
		kinds: []cursor.EventKind{cursor.KindPriming, cursor.KindPriming},
	},
	{
		name:  "crlf",
		in:    "id: a\r\ndata: " + respJSON + "\r\n\r\nid: b\r\ndata: " + notifJSON + "\r\n\r\n",
		want:  "id: sse:a\r\ndata: " + respJSON + "\r\n\r\nid: sse:b\r\ndata: " + notifJSON + "\r\n\r\n",
		kinds: []cursor.EventKind{cursor.KindResponse, cursor.KindNotification},
	},
	{
		name:  "cr only",
		in:    "id: a\rdata: " + respJSON + "\r\rid: b\rdata: x\r\r",
		want:  "id: sse:a\rdata: " + respJSON + "\r\rid: sse:b\rdata: x\r\r",
		kinds: []cursor.EventKind{cursor.KindResponse, cursor.KindOther},
	},
	{
		name:  "mixed line endings",
		in:    "id: a\r\ndata: 1\rdata: 2\n\r\nid:b\r\r\nid: c\n\n",
		want:  "id: sse:a\r\ndata: 1\rdata: 2\n\r\nid:sse:b\r\r\nid: sse:c\n\n",
		kinds: []cursor.EventKind{cursor.KindOther, cursor.KindPriming, cursor.KindPriming},
	},
	{
		name:  "bom",
		in:    "\ufeffid: a\ndata: " + respJSON + "\n\n",
		want:  "\ufeffid: sse:a\ndata: " + respJSON + "\n\n",
		kinds: []cursor.EventKind{cursor.KindResponse},
	},
	{
		name:  "second bom is not skipped",
		in:    "\ufeff\ufeffid: a\ndata: x\n\n",
		want:  "\ufeff\ufeffid: a\ndata: x\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		name:  "partial bom is part of the first line",
		in:    "\xef\xbbid: a\n\nid: b\n\n",
		want:  "\xef\xbbid: a\n\nid: sse:b\n\n",
		kinds: []cursor.EventKind{cursor.KindPriming},
	},
	{
		name:  "multi-line data",
		in:    "id: m\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n",
		want:  "id: sse:m\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n",
		kinds: []cursor.EventKind{cursor.KindResponse},
	},
	{
		name:  "long data is truncated for classification only",
		in:    "id: big\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + strings.Repeat("x", 2000) + "\"}}\n\n",
		want:  "id: sse:big\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + strings.Repeat("x", 2000) + "\"}}\n\n",
		kinds: []cursor.EventKind{cursor.KindResponse},
	},
	{
		name:  "data of exactly DataPrefixBytes",
		in:    "data: " + strings.Repeat("y", DataPrefixBytes) + "\n\ndata: " + strings.Repeat("y", DataPrefixBytes+1) + "\n\n",
		want:  "data: " + strings.Repeat("y", DataPrefixBytes) + "\n\ndata: " + strings.Repeat("y", DataPrefixBytes+1) + "\n\n",
		kinds: []cursor.EventKind{cursor.KindOther, cursor.KindOther},
	},
	{
		name:  "no final newline",
		in:    "id: a\ndata: 1\n\nid: b\ndata: 2",
		want:  "id: sse:a\ndata: 1\n\nid: sse:b\ndata: 2",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		// The Go SDK's reader dispatches an unterminated last event, its
		// last line too: that ID is tagged like any other.
		name:  "unterminated id line at the end is tagged",
		in:    "id: a\n\nid: b",
		want:  "id: sse:a\n\nid: sse:b",
		kinds: []cursor.EventKind{cursor.KindPriming},
	},
	{
		name:  "event not ended by an empty line is not dispatched",
		in:    "id: a\ndata: " + respJSON + "\n",
		want:  "id: sse:a\ndata: " + respJSON + "\n",
		kinds: nil,
	},
	{
		name:  "id without value resets",
		in:    "id\n\nid:\n\nid: \n\nid: x\nid:\ndata: 1\n\n",
		want:  "id\n\nid:\n\nid: \n\nid: sse:x\nid:\ndata: 1\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		name:  "last id wins",
		in:    "id: x\nid: y\ndata: 1\n\n",
		want:  "id: sse:x\nid: sse:y\ndata: 1\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		name:  "idx and ID are not id fields",
		in:    "idx: a\nID: b\nId: c\nid : d\ni: e\ni\nidd\nid\x00: f\ndata: 1\n\n",
		want:  "idx: a\nID: b\nId: c\nid : d\ni: e\ni\nidd\nid\x00: f\ndata: 1\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		name:  "nul in id is ignored",
		in:    "id: ok\nid: a\x00b\ndata: 1\n\nid: \x00\n\n",
		want:  "id: sse:ok\nid: a\x00b\ndata: 1\n\nid: \x00\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		name:  "other fields pass byte for byte",
		in:    "event: endpoint\ndata: /messages?sessionId=abc\n\nretry: x\nfoo: bar\ndata : not data\n:\n\n",
		want:  "event: endpoint\ndata: /messages?sessionId=abc\n\nretry: x\nfoo: bar\ndata : not data\n:\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
	{
		name:  "non-message event type",
		in:    "event: ping\nid: 5\ndata: " + respJSON + "\n\nevent:message\nid:6\ndata:" + respJSON + "\n\nevent\ndata: " + respJSON + "\n\n",
		want:  "event: ping\nid: sse:5\ndata: " + respJSON + "\n\nevent:message\nid:sse:6\ndata:" + respJSON + "\n\nevent\ndata: " + respJSON + "\n\n",
		kinds: []cursor.EventKind{cursor.KindOther, cursor.KindResponse, cursor.KindResponse},
	},
	{
		name:  "last event field wins",
		in:    "event: endpoint\nevent: message\nid: 1\ndata: " + respJSON + "\n\nevent: message\nevent\ndata: x\n\n",
		want:  "event: endpoint\nevent: message\nid: sse:1\ndata: " + respJSON + "\n\nevent: message\nevent\ndata: x\n\n",
		kinds: []cursor.EventKind{cursor.KindResponse, cursor.KindOther},
	},
	{
		name:  "id value with colons and spaces",
		in:    "id: sse:a b:c \ndata: [" + respJSON + "," + notifJSON + "]\n\n",
		want:  "id: sse:sse:a b:c \ndata: [" + respJSON + "," + notifJSON + "]\n\n",
		kinds: []cursor.EventKind{cursor.KindResponse},
	},
	{
		name:  "empty lines and comments only",
		in:    "\n\n:a\n\r\n\r",
		want:  "\n\n:a\n\r\n\r",
		kinds: nil,
	},
	{
		name:  "empty stream",
		in:    "",
		want:  "",
		kinds: nil,
	},
	{
		name:  "non-ascii and invalid utf-8 in values",
		in:    "id: é\xff\ndata: \xfe\n\n",
		want:  "id: sse:é\xff\ndata: \xfe\n\n",
		kinds: []cursor.EventKind{cursor.KindOther},
	},
}

func TestRewriteEveryChunking(t *testing.T) {
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			// The hand-written expectation and the oracle agree.
			if want, _, _ := expand(in, cursor.TransportSSE, DefaultMaxLineBytes); string(want) != tc.want {
				t.Fatalf("oracle: expand = %q, want %q", want, tc.want)
			}
			out, evs, _, _ := run(t, cursor.TransportSSE, 0, [][]byte{in})
			if string(out) != tc.want {
				t.Fatalf("output %q, want %q", out, tc.want)
			}
			var kinds []cursor.EventKind
			for _, e := range evs {
				kinds = append(kinds, e.Kind())
			}
			if !equalKinds(kinds, tc.kinds) {
				t.Fatalf("kinds %v, want %v (events %s)", kinds, tc.kinds, dumpEvents(evs))
			}
			for _, tr := range []cursor.Transport{cursor.TransportSSE, cursor.TransportHTTP} {
				checkAllSplits(t, tr, 0, in)
			}
			checkStream(t, cursor.TransportNone, 0, [][]byte{in})
		})
	}
}

func equalKinds(a, b []cursor.EventKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRewriteWholeTable runs all cases as one stream: state carried from
// one event into the next must not leak.
func TestRewriteWholeTable(t *testing.T) {
	var in []byte
	for _, tc := range streamCases {
		if strings.HasPrefix(tc.in, "\ufeff") || !strings.HasSuffix(tc.in, "\n\n") {
			continue
		}
		in = append(in, tc.in...)
	}
	checkAllSplits(t, cursor.TransportHTTP, 0, in)
}

func TestEventFields(t *testing.T) {
	in := "id: e-1\nevent: message\ndata: a\ndata: b\n\n" +
		"event: endpoint\ndata: /messages?sessionId=s-77\n\n" +
		"id: e-2\ndata\n\n"
	r := NewRewriter(cursor.TransportSSE, 0)
	if _, _ = r.Rewrite(nil, []byte(in), true); len(r.Events()) != 3 {
		t.Fatalf("events %s, want 3", dumpEvents(r.Events()))
	}
	want := []Event{
		{ID: []byte("e-1"), HasID: true, Type: []byte("message"), Data: []byte("a\nb")},
		{Type: []byte("endpoint"), Data: []byte("/messages?sessionId=s-77")},
		{ID: []byte("e-2"), HasID: true},
	}
	if !eventsEqual(r.Events(), want) {
		t.Fatalf("events %s\nwant   %s", dumpEvents(r.Events()), dumpEvents(want))
	}
	for i, k := range []cursor.EventKind{cursor.KindOther, cursor.KindOther, cursor.KindPriming} {
		if got := r.Events()[i].Kind(); got != k {
			t.Errorf("event %d: Kind() = %v, want %v", i, got, k)
		}
	}
	if r.Tagged() != 2 {
		t.Fatalf("Tagged() = %d, want 2", r.Tagged())
	}
}

// TestEventsReused checks that Events and Tagged describe the last call only
// and that an append to one event's bytes cannot clobber the next's.
func TestEventsReused(t *testing.T) {
	r := NewRewriter(cursor.TransportSSE, 0)
	r.Rewrite(nil, []byte("id: a\ndata: 1\n\nid: b\ndata: 2\n\n"), false)
	evs := r.Events()
	if len(evs) != 2 || r.Tagged() != 2 {
		t.Fatalf("events %s tagged %d", dumpEvents(evs), r.Tagged())
	}
	_ = append(evs[0].ID, "XXXX"...)
	if string(evs[1].ID) != "b" || string(evs[0].Data) != "1" {
		t.Fatalf("append to an event's ID changed another: %s", dumpEvents(evs))
	}
	r.Rewrite(nil, []byte(": nothing\n"), false)
	if len(r.Events()) != 0 || r.Tagged() != 0 {
		t.Fatalf("after a call without events: %s tagged %d", dumpEvents(r.Events()), r.Tagged())
	}
}

func TestHoldsOnlyIDLines(t *testing.T) {
	r := NewRewriter(cursor.TransportSSE, 0)
	for _, tc := range []struct{ chunk, out string }{
		{"data: {\"a\":", "data: {\"a\":"}, // forwarded at once, mid-line
		{"1}\nevent: mes", "1}\nevent: mes"},
		{"sage\n: comment", "sage\n: comment"},
		{"\nid: e-", "\n"},             // an id line is held until its end
		{"7\r", "id: sse:e-7\r"},       // ... which may be a lone '\r'
		{"\nid", "\n"},                 // the '\n' of "\r\n"; "id" held
		{"x: 1\n", "idx: 1\n"},         // not an id field after all
		{"i", ""},                      // may become an id
		{"\n", "i\n"},                  // field "i"
		{"data: 2\n\n", "data: 2\n\n"}, // dispatch
	} {
		out, changed := r.Rewrite(nil, []byte(tc.chunk), false)
		if string(out) != tc.out {
			t.Fatalf("chunk %q: output %q, want %q", tc.chunk, out, tc.out)
		}
		if changed != (tc.chunk != tc.out) {
			t.Fatalf("chunk %q: changed = %v", tc.chunk, changed)
		}
	}
}

func TestEOSFlushesHeldBytes(t *testing.T) {
	for _, tc := range []struct{ tail, want string }{
		{"i", "i"}, {"id", "id"}, {"id:", "id:"}, {"id: ", "id: "}, {"id: e\x00", "id: e\x00"},
		{"id: e-1", "id: sse:e-1"}, {"id:~1r1.0.a", "id:sse:~1o8.0.~1r1.0.a"},
	} {
		r := NewRewriter(cursor.TransportSSE, 0)
		out, _ := r.Rewrite(nil, []byte("data: 1\n\n"+tc.tail), false)
		out, changed := r.Rewrite(out, nil, true)
		if string(out) != "data: 1\n\n"+tc.want || !changed {
			t.Fatalf("tail %q: output %q changed=%v", tc.tail, out, changed)
		}
	}
}

func TestReset(t *testing.T) {
	r := NewRewriter(cursor.TransportSSE, 8)
	r.Rewrite(nil, []byte("id: "+strings.Repeat("x", 20)+"\n"), false)
	if !r.Overflowed() {
		t.Fatal("not overflowed")
	}
	r.Rewrite(nil, []byte("\ufeffid: half"), false) // mid-line state
	r.Reset(cursor.TransportHTTP, 0)
	if r.Overflowed() {
		t.Fatal("still overflowed after Reset")
	}
	out, _ := r.Rewrite(nil, []byte("\ufeffid: e-1\n\n"), true)
	if string(out) != "\ufeffid: http:e-1\n\n" {
		t.Fatalf("after Reset: %q", out)
	}
	r.Reset(cursor.TransportSSE, 0)
	r.Rewrite(nil, []byte("id: a\ndata: 1\r"), false) // mid-event, after '\r'
	r.Reset(cursor.TransportSSE, 0)
	out, _ = r.Rewrite(nil, []byte("\n\nid: b\n\n"), true)
	if string(out) != "\n\nid: sse:b\n\n" || len(r.Events()) != 1 || string(r.Events()[0].ID) != "b" {
		t.Fatalf("state leaked through Reset: %q %s", out, dumpEvents(r.Events()))
	}
}

func TestChangedFalseWithoutIDs(t *testing.T) {
	r := NewRewriter(cursor.TransportSSE, 0)
	chunk := []byte("event: message\ndata: " + notifJSON + "\n\n")
	dst := []byte("previous")
	out, changed := r.Rewrite(dst, chunk, false)
	if changed || !bytes.Equal(out, append([]byte("previous"), chunk...)) {
		t.Fatalf("changed=%v out=%q", changed, out)
	}
	// An id field with no value is held and released unchanged.
	out, changed = r.Rewrite(nil, []byte("id:\n\n"), false)
	if changed || string(out) != "id:\n\n" {
		t.Fatalf("changed=%v out=%q", changed, out)
	}
}
